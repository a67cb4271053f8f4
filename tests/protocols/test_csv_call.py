"""csv_call: round trips, model-like replies against the reference, never raising, grammar notes.

csv_call is positional: rendering and reading both need the tool's declared parameter order,
so the round trips pass the toolset to ``render_calls``. Arguments that are not parameters
have no position; generation only uses parameters.
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
from toolform_rules.protocols.csv_call import _row_fast, _row_grammar
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.text_family import MAX_GRAMMAR_CHARS, value_text

P = get_protocol("csv_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "csv_call" and P.info.text_values and P.info.parallel


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
@given(calls=calls_for(SAMPLE))
def test_round_trip_text_level(calls: list[ToolCall]) -> None:
    extraction = P.parse(P.render_calls(calls, SAMPLE), SAMPLE)
    for raw, call in zip(extraction.calls, calls, strict=True):
        assert raw.arguments == {k: value_text(v) for k, v in call.arguments.items()}


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    assert P.example(call, SAMPLE) == ('legal_draft_v3,"Acme, ""Ltd""",1200.5,12,true,'
                                       '"{""contract_id"": ""C-1"", ""status"": ""draft""}"')
    assert_round_trip(P, [call], SAMPLE)


def test_divergence_nested_object_is_not_split_at_its_commas() -> None:
    """Divergence (named in the brief): the reference splits a nested object at its commas — its own
    example ``...,True,{'contract_id': 'C-1', 'status': 'draft'}`` reads back with
    ``contract_details="{'contract_id': 'C-1'"``. We quote the JSON field as RFC 4180 says, and a
    bare ``{...}`` field is read as one JSON value, so neither form splits."""
    call = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    reference_text = ref_example("csv_call", call.name, call.arguments)
    assert reference_text.endswith("{'contract_id': 'C-1', 'status': 'draft'}")
    assert ref_parse("csv_call", reference_text)[0][1]["contract_details"] == "{'contract_id': 'C-1'"
    assert ours(P, reference_text) == [(call.name, call.arguments)]  # the bare form, read as JSON
    assert_round_trip(P, [call], SAMPLE)  # the quoted form


def test_divergence_rfc_4180_quotes() -> None:
    """Divergence: a quoted field is one value (``"Acme, Ltd"``; ``""`` for a quote inside); the
    reference splits it at the comma and keeps the quotes."""
    text = 'legal_draft_v3,"Acme, ""Ltd""",3,4'
    assert ours(P, text)[0][1] == {"counterparty": 'Acme, "Ltd"', "value": 3, "term_months": 4}
    assert ref_parse("csv_call", text)[0][1]["counterparty"] == '"Acme'


def test_divergence_skipped_parameters_keep_their_place() -> None:
    """Divergence: a skipped optional parameter is an empty field, so later values keep their
    positions; the reference leaves no field, and the values shift onto the wrong parameters."""
    call = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 3, "term_months": 4,
                                       "contract_details": {"status": "draft"}})
    assert P.example(call, SAMPLE).startswith("legal_draft_v3,Acme,3,4,,")
    assert_round_trip(P, [call], SAMPLE)
    shifted = ref_parse("csv_call", ref_example("csv_call", call.name, {"value": 3, "term_months": 4}))
    assert shifted[0][1]["counterparty"] == "3"


AGREE = [
    "legal_draft_v3,Acme,3,4",
    "Sure:\n```csv\nlegal_draft_v3,Acme,3,4,true\n```\nDone.",
    "legal_draft_v3, Acme, 3, 4",
    "legal_draft_v3,A,1,2\nlegal_draft_v3,B,3,4",
    "LegalDraftV3,Acme,3,4",
    "legal_draft_v3,,3,4",
    "legal_draft_v3,Acme,1e-07,600,false,{}",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    got, want = ours(P, text), ref_parse("csv_call", text)
    assert len(got) == len(want)
    for (name, args), (ref_name, ref_args) in zip(got, want):
        assert name == ref_name and same(args, ref_args), (got, want)


def test_extra_values_and_no_schema_are_noted() -> None:
    extraction = P.parse("legal_draft_v3,Acme,3,4,true,{},extra", SAMPLE)
    assert extraction.calls[0].arguments["_raw"] == ["extra"] and "extra values" in extraction.notes[0]
    unknown = P.parse("other_tool,a,,b", SAMPLE)
    assert unknown.calls[0].arguments == {"_raw": ["a", None, "b"]} and "cannot be named" in unknown.notes[0]


def test_quoted_line_breaks_span_lines() -> None:
    extraction = P.parse('legal_draft_v3,"a\nb",3,4\nlegal_draft_v3,c,5,6', SAMPLE)
    assert [c.arguments["counterparty"] for c in extraction.calls] == ["a\nb", "c"]
    assert extraction.compliant


def test_prose_and_compliance() -> None:
    assert not P.parse(AGREE[1], SAMPLE).compliant
    assert P.parse(AGREE[0], SAMPLE).compliant


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = P.parse('Row:\nlegal_draft_v3,Acme,3,{"a": [1, }', SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert "line 2, column 33" in note and "expected" in note


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past MAX_GRAMMAR_CHARS only the fast reader runs (the grammar would take seconds); a note says so."""
    text = "legal_draft_v3," + "a," * 30000 + '"'
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


ROW = st.builds(lambda head, rest: head + rest, st.sampled_from(["legal_draft_v3", " f ", "a.b-c"]),
                st.one_of(st.text(alphabet=' \t,"ab\n\r{}[]', max_size=30),
                          st.text(alphabet=" ,{}[]'\":1aTrue", max_size=30)))


@settings(max_examples=500, deadline=None)
@given(segment=st.one_of(ROW, calls_for(SAMPLE, 1).map(lambda calls: P.render_calls(calls, SAMPLE))))
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    fast = _row_fast(segment)
    try:
        slow = _row_grammar(segment)
    except GrammarFailure:
        slow = None
    if fast is not None:
        assert slow == fast, (segment, fast, slow)


def test_instructions_list_the_parameter_order() -> None:
    assert "legal_draft_v3: counterparty, value, term_months, auto_renew, contract_details" in P.instructions(SAMPLE)
    assert "order" in P.instructions(None)
