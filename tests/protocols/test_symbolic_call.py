"""symbolic_call: round trips, model-like replies against the reference, never raising, grammar notes.

The symbols type the values themselves (§ text, # whole number, % number, ¿ boolean, ≡ list,
¤ object), so a call reads back with its types even before the schema is consulted; only
``None`` has no symbol (written ``§null``, see text_family_support).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from text_family_support import (NASTY_INPUTS, ROUND_TRIP, SAMPLE, assert_round_trip, bfcl_calls, calls_for, ours,
                                 ref_example, ref_parse, same)

from toolform_rules import ToolCall
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import Extraction
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.text_family import MAX_GRAMMAR_CHARS
from toolform_rules.protocols.symbolic_call import _arguments_fast, _arguments_grammar

P = get_protocol("symbolic_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "symbolic_call" and P.info.text_values and P.info.parallel


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_is_typed_by_the_symbols_alone(drawn) -> None:
    """Without the schema's help: the symbols bring every value back with its type."""
    toolset, calls = drawn
    extraction = P.parse(P.render_calls(calls), toolset)
    for raw, call in zip(extraction.calls, calls, strict=True):
        assert same(raw.arguments, call.arguments)


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    text = P.example(call)
    assert text == ('legal_draft_v3 ★counterparty§Acme, "Ltd" ★value%1200.5 ★term_months#12 ★auto_renew¿true '
                    '★contract_details¤{"contract_id": "C-1", "status": "draft"}')
    assert ref_parse("symbolic_call", text) == ours(P, text)
    assert_round_trip(P, [call], SAMPLE)


AGREE = [
    "legal_draft_v3 ★counterparty§Acme ★value%3 ★term_months#4",
    "Sure!\n```\nlegal_draft_v3 ★counterparty§Acme Ltd ★value#3 ★term_months#4 ★auto_renew¿true\n```\nLet me know.",
    'LegalDraftV3 ★counterparty§Acme ★value%3.5 ★term_months#4 ★contract_details¤{"status": "draft"}',
    "legal_draft_v3 ★counterparty§A ★value#1 ★term_months#2\nlegal_draft_v3 ★counterparty§B ★value#3 ★term_months#4",
    "legal_draft_v3 ★counterparty§Acme ★contract_details¤{'status': 'draft'}",
    "legal_draft_v3★counterparty§Acme★value#3",
    "legal_draft_v3 ★counterparty§ Acme  ★value#3",
    "legal_draft_v3 ★counterparty§A ★term_months#twelve",
    "legal_draft_v3 ★counterparty§A ★auto_renew¿True ★value%1e-07",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    got, want = ours(P, text), ref_parse("symbolic_call", text)
    assert len(got) == len(want)
    for (name, args), (ref_name, ref_args) in zip(got, want):
        assert name == ref_name and same(args, ref_args), (got, want)


def test_divergence_marker_in_text_is_escaped() -> None:
    """Divergence: the reference writes a ★ inside a text value as it is, so the value is cut
    there and the rest read as another argument; we write ``\\★``."""
    call = ToolCall("legal_draft_v3", {"counterparty": "A★q§r", "value": 1, "term_months": 2})
    assert ref_parse("symbolic_call", ref_example("symbolic_call", call.name, call.arguments))[0][1] != {
        "counterparty": "A★q§r", "value": 1, "term_months": 2}
    assert "§A\\★q§r " in P.example(call)
    assert_round_trip(P, [call], SAMPLE)


def test_divergence_marker_inside_json_is_json() -> None:
    """Divergence: a ★ inside a JSON string of an object value is part of the string (the grammar
    reads JSON there); the reference cuts the object at it."""
    text = 'legal_draft_v3 ★counterparty§A ★contract_details¤{"contract_id": "x ★y"}'
    assert ours(P, text)[0][1]["contract_details"] == {"contract_id": "x ★y"}
    assert ref_parse("symbolic_call", text)[0][1]["contract_details"] == '{"contract_id": "x'


def test_divergence_spaces_and_line_breaks_in_text() -> None:
    """Divergence: the reference strips text values and writes line breaks raw (the call breaks);
    we write ``\\ `` and ``\\n`` and keep them."""
    call = ToolCall("legal_draft_v3", {"counterparty": " a\nb ", "value": 1, "term_months": 2})
    assert_round_trip(P, [call], SAMPLE)
    assert ref_parse("symbolic_call", ref_example("symbolic_call", call.name, call.arguments))[0][1].get(
        "counterparty") != " a\nb "


def test_divergence_the_symbol_types_the_value() -> None:
    """Divergence: ``★counterparty#12`` is the whole number 12, as its symbol says (validation then
    reports a number where text is wanted); the reference re-types it from the schema as "12"."""
    text = "legal_draft_v3 ★counterparty#12"
    assert ours(P, text)[0][1]["counterparty"] == 12
    assert ref_parse("symbolic_call", text)[0][1]["counterparty"] == "12"


def test_divergence_only_true_and_false_after_the_boolean_symbol() -> None:
    """Divergence: ``¿yes`` is not a boolean word of the format (true/false, any case); it stays
    the text "yes" for validation to report, where the reference makes it true."""
    text = "legal_draft_v3 ★counterparty§A ★auto_renew¿yes"
    assert ours(P, text)[0][1]["auto_renew"] == "yes"
    assert ref_parse("symbolic_call", text)[0][1]["auto_renew"] is True


def test_text_after_a_list_symbol_that_is_not_json_stays_text() -> None:
    assert ours(P, "legal_draft_v3 ★contract_details¤draft ★value#1")[0][1] == {"contract_details": "draft",
                                                                                 "value": 1}


def test_prose_and_compliance() -> None:
    assert not P.parse(AGREE[1], SAMPLE).compliant
    assert P.parse(AGREE[0], SAMPLE).compliant
    assert [c.arguments for c in P.parse("legal_draft_v3", SAMPLE).calls] == [{}]


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = P.parse("Here:\nlegal_draft_v3 ★counterparty§A ★contract_details¤{\"a\": [1, }", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert "line 2, column 60" in note and "expected" in note


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past MAX_GRAMMAR_CHARS only the fast reader runs (the grammar would take seconds); a note says so."""
    text = "legal_draft_v3 " + "★a§b " * 12000 + "★"
    assert len(text) > MAX_GRAMMAR_CHARS
    extraction = P.parse(text, SAMPLE)
    assert any("characters long" in note for note in extraction.notes), extraction.notes


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    result = P.parse(text, SAMPLE)
    assert isinstance(result, Extraction) and not any("internal error" in n for n in result.notes)


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text: str) -> None:
    result = P.parse(text, SAMPLE)
    assert isinstance(result, Extraction) and not any("internal error" in n for n in result.notes)


SEGMENT = st.builds(lambda name, rest: name + rest, st.sampled_from(["legal_draft_v3 ", "f", "a.b-c "]),
                    st.text(alphabet=" \t★§#%¿≡¤ab1.\\\r[]{}\",'", max_size=30))


@settings(max_examples=500, deadline=None)
@given(segment=st.one_of(SEGMENT, calls_for(SAMPLE, 1).map(lambda calls: P.render_calls(calls))))
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    fast = _arguments_fast(segment)
    try:
        slow = _arguments_grammar(segment)
    except GrammarFailure:
        slow = None
    if fast is not None:
        assert slow is not None and slow[0] == fast[0], (segment, fast, slow)
        assert same([list(a) for a in slow[1]], [list(a) for a in fast[1]]), (segment, fast, slow)


def test_instructions() -> None:
    assert "★" in P.instructions(SAMPLE) and "¤" in P.instructions(SAMPLE)
