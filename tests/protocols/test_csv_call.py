"""csv_call: round trips, model-like replies against the reference, never raising, grammar notes.

csv_call is positional: rendering and reading both need the tool's declared parameter order,
so the round trips pass the toolset to ``render_calls``. Arguments that are not parameters
have no position; generation only uses parameters.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls, render
from text_family_support import (ROUND_TRIP, SAMPLE, assert_fast_path_agrees, assert_reads_as_the_reference,
                                 bfcl_calls, calls_for, nasty_cases, ref_example, ref_parse, single_calls)

from toolform_rules import ToolCall
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.text_family.shared import value_text

P = get_protocol("csv_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "csv_call" and P.info.text_values and P.info.parallel


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
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


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
    assert_calls(read_calls(P, reference_text, SAMPLE), [(call.name, call.arguments)], equal_json)  # bare: JSON
    assert_round_trip(P, [call], SAMPLE, values=equal_json)  # the quoted form


def test_divergence_rfc_4180_quotes() -> None:
    """Divergence: a quoted field is one value (``"Acme, Ltd"``; ``""`` for a quote inside); the
    reference splits it at the comma and keeps the quotes."""
    text = 'legal_draft_v3,"Acme, ""Ltd""",3,4'
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 3, "term_months": 4})], equal_json)
    assert ref_parse("csv_call", text)[0][1]["counterparty"] == '"Acme'


def test_divergence_skipped_parameters_keep_their_place() -> None:
    """Divergence: a skipped optional parameter is an empty field, so later values keep their
    positions; the reference leaves no field, and the values shift onto the wrong parameters."""
    call = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 3, "term_months": 4,
                                       "contract_details": {"status": "draft"}})
    assert P.example(call, SAMPLE).startswith("legal_draft_v3,Acme,3,4,,")
    assert_round_trip(P, [call], SAMPLE, values=equal_json)
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
    assert_reads_as_the_reference(P, text)


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
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "legal_draft_v3," + "a," * 30000 + '"'
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


#: none of the nasty inputs holds a row that cannot be read (its quotes pair up; extra values are noted)
MALFORMED: set[str] = set()


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize(("text", "malformed"), nasty_cases(MALFORMED))
def test_never_raises_on_nasty_inputs(text: str, malformed: bool) -> None:
    assert_total(P, text, SAMPLE, malformed=malformed)


@ROUND_TRIP
@given(drawn=single_calls())
def test_fast_path_reads_every_rendered_row(drawn) -> None:
    """A row as we write it is the plain form: the fast path reads it, field for field as the grammar."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


ROW = st.builds(lambda head, rest: head + rest, st.sampled_from(["legal_draft_v3", " f ", "a.b-c"]),
                st.one_of(st.text(alphabet=' \t,"ab\n\r{}[]', max_size=30),
                          st.text(alphabet=" ,{}[]'\":1aTrue", max_size=30)))


@settings(max_examples=200, deadline=None)
@given(segment=ROW)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike."""
    fast, _ = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")


@pytest.mark.parametrize(("segment", "fast_reads"), [
    ('legal_draft_v3,a,"b,""a""",,', True),
    (" f ,{\"a\": 1},[1, 'a']", False),  # single quotes: the grammar's, not strict JSON's
    ('legal_draft_v3,a"b', True),
    ('a.b-c,"a', False),
    ("legal_draft_v3,{a", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of ROW's own alphabets, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_instructions_list_the_parameter_order() -> None:
    assert "legal_draft_v3: counterparty, value, term_months, auto_renew, contract_details" in P.instructions(SAMPLE)
    assert "order" in P.instructions(None)
