"""symbolic_call: round trips, model-like replies against the reference, never raising, grammar notes.

The symbols type the values themselves (§ text, # whole number, % number, ¿ boolean, ≡ list,
¤ object), so a call reads back with its types even before the schema is consulted; only
``None`` has no symbol (written ``§null``, see text_family_support).
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.compare import equal_json, identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls, render
from text_family_support import (ROUND_TRIP, SAMPLE, assert_fast_path_agrees, assert_reads_as_the_reference,
                                 bfcl_calls, calls_for, nasty_cases, ref_example, ref_parse, single_calls)

from toolform_rules import ToolCall
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol

P = get_protocol("symbolic_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "symbolic_call" and P.info.text_values and P.info.parallel


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE, values=equal_json)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset, values=equal_json)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_is_typed_by_the_symbols_alone(drawn) -> None:
    """Without the schema's help: the symbols bring every value back with its type (``3`` is not
    ``3.0``, ``True`` not ``1``), so the raw calls are the calls, identical."""
    toolset, calls = drawn
    text = P.render_calls(calls)
    raw = [(call.name, call.arguments) for call in P.parse(text, toolset).calls]
    assert_calls(raw, [(call.name, call.arguments) for call in calls], functools.partial(identical, key_order=False),
                 context=text)


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    text = P.example(call)
    assert text == ('legal_draft_v3 ★counterparty§Acme, "Ltd" ★value%1200.5 ★term_months#12 ★auto_renew¿true '
                    '★contract_details¤{"contract_id": "C-1", "status": "draft"}')
    assert_reads_as_the_reference(P, text)
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


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
    assert_reads_as_the_reference(P, text)


def test_divergence_marker_in_text_is_escaped() -> None:
    """Divergence: the reference writes a ★ inside a text value as it is, so the value is cut
    there and the rest read as another argument; we write ``\\★``."""
    call = ToolCall("legal_draft_v3", {"counterparty": "A★q§r", "value": 1, "term_months": 2})
    assert ref_parse("symbolic_call", ref_example("symbolic_call", call.name, call.arguments))[0][1] != {
        "counterparty": "A★q§r", "value": 1, "term_months": 2}
    assert "§A\\★q§r " in P.example(call)
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


def test_divergence_marker_inside_json_is_json() -> None:
    """Divergence: a ★ inside a JSON string of an object value is part of the string (the grammar
    reads JSON there); the reference cuts the object at it."""
    text = 'legal_draft_v3 ★counterparty§A ★contract_details¤{"contract_id": "x ★y"}'
    assert read_calls(P, text, SAMPLE)[0][1]["contract_details"] == {"contract_id": "x ★y"}
    assert ref_parse("symbolic_call", text)[0][1]["contract_details"] == '{"contract_id": "x'


def test_divergence_spaces_and_line_breaks_in_text() -> None:
    """Divergence: the reference strips text values and writes line breaks raw (the call breaks);
    we write ``\\ `` and ``\\n`` and keep them."""
    call = ToolCall("legal_draft_v3", {"counterparty": " a\nb ", "value": 1, "term_months": 2})
    assert_round_trip(P, [call], SAMPLE, values=equal_json)
    assert ref_parse("symbolic_call", ref_example("symbolic_call", call.name, call.arguments))[0][1].get(
        "counterparty") != " a\nb "


def test_divergence_the_symbol_types_the_value() -> None:
    """Divergence: ``★counterparty#12`` is the whole number 12, as its symbol says (validation then
    reports a number where text is wanted); the reference re-types it from the schema as "12"."""
    text = "legal_draft_v3 ★counterparty#12"
    assert identical(read_calls(P, text, SAMPLE)[0][1]["counterparty"], 12)
    assert ref_parse("symbolic_call", text)[0][1]["counterparty"] == "12"


def test_divergence_only_true_and_false_after_the_boolean_symbol() -> None:
    """Divergence: ``¿yes`` is not a boolean word of the format (true/false, any case); it stays
    the text "yes" for validation to report, where the reference makes it true."""
    text = "legal_draft_v3 ★counterparty§A ★auto_renew¿yes"
    assert read_calls(P, text, SAMPLE)[0][1]["auto_renew"] == "yes"
    assert ref_parse("symbolic_call", text)[0][1]["auto_renew"] is True


def test_text_after_a_list_symbol_that_is_not_json_stays_text() -> None:
    assert_calls(read_calls(P, "legal_draft_v3 ★contract_details¤draft ★value#1", SAMPLE),
                 [("legal_draft_v3", {"contract_details": "draft", "value": 1})], equal_json)


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
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "legal_draft_v3 " + "★a§b " * 12000 + "★"
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


#: the nasty inputs that hold a call that cannot be read: a list or an object left open
MALFORMED = {"symbolic: list of 100000 [", "symbolic: object nested 30000 deep"}


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize(("text", "malformed"), nasty_cases(MALFORMED))
def test_never_raises_on_nasty_inputs(text: str, malformed: bool) -> None:
    assert_total(P, text, SAMPLE, malformed=malformed)


@ROUND_TRIP
@given(drawn=single_calls())
def test_fast_path_reads_every_rendered_call(drawn) -> None:
    """A call as we write it is the plain form: the fast path reads it, argument for argument as the grammar."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


SEGMENT = st.builds(lambda name, rest: name + rest, st.sampled_from(["legal_draft_v3 ", "f", "a.b-c "]),
                    st.text(alphabet=" \t★§#%¿≡¤ab1.\\\r[]{}\",'", max_size=30))


@settings(max_examples=200, deadline=None)
@given(segment=SEGMENT)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike, JSON values typed alike."""
    fast, _ = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")


@pytest.mark.parametrize(("segment", "fast_reads"), [
    ("legal_draft_v3 ★a§b ★b#1 ★a%1.1 ★b¿", True),
    ('f★a≡[1, "b", [1.1]]★b¤{}', True),
    ("a.b-c ★a§b\\★ ★b≡a, b", True),
    ("f ★a#1 b", True),
    ('legal_draft_v3 ★a¤{"a", ', False),
    ("f ★a§b\r", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of SEGMENT's own alphabet, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_instructions() -> None:
    assert "★" in P.instructions(SAMPLE) and "¤" in P.instructions(SAMPLE)
