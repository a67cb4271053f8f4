"""key_value_call: round trips, model-like replies against the reference, never raising, grammar notes.

Values do not span lines: a value that needs a line break (or spaces at its ends, or a
leading double quote, or is empty) is written as a JSON string literal on its one line.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from text_family_support import (NASTY_INPUTS, ROUND_TRIP, SAMPLE, TEXT, assert_round_trip, bfcl_calls, calls_for,
                                 ours, ref_example, ref_parse, same)

from toolform_rules import ToolCall, load_tools
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import Extraction
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.key_value_call import _block_fast, _block_grammar
from toolform_rules.protocols.text_family import MAX_GRAMMAR_CHARS, value_text

P = get_protocol("key_value_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "key_value_call" and P.info.text_values and P.info.parallel


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
    extraction = P.parse(P.render_calls(calls), SAMPLE)
    for raw, call in zip(extraction.calls, calls, strict=True):
        assert raw.arguments == {k: value_text(v) for k, v in call.arguments.items()}


@ROUND_TRIP
@given(value=TEXT)
def test_any_string_round_trips(value: str) -> None:
    toolset = load_tools([{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}])
    assert_round_trip(P, [ToolCall("f", {"a": value})], toolset)


def test_an_argument_named_tool_cannot_be_written() -> None:
    """Not expressible: a line ``tool: x`` opens the next block (any case), so an argument named
    ``tool`` reads as a second call. Left out of generation; no BFCL function has one."""
    extraction = P.parse(P.render_calls([ToolCall("f", {"tool": "x"})]), None)
    assert [c.name for c in extraction.calls] == ["f", "x"]


def test_the_example_matches_the_reference() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    assert P.example(call) == ref_example("key_value_call", call.name, call.arguments)
    assert_round_trip(P, [call], SAMPLE)


AGREE = [
    "TOOL: legal_draft_v3\ncounterparty: Acme\nvalue: 3\nterm_months: 4",
    "Sure:\n```\nTOOL: legal_draft_v3\ncounterparty: Acme\nvalue: 3\nterm_months: 4\n```\nDone.",
    "tool: legal-draft-v3\ncounterparty: Acme\nvalue = 3\nterm_months: 4\n\nThat is all.",
    "TOOL: legal_draft_v3\n  counterparty: Acme\n  value: 3\n  term_months: 4",
    "Tool: LegalDraftV3\n- counterparty: Acme\n- value: 3\n- term_months: 4",
    'TOOL: legal_draft_v3\ncounterparty: "Acme"\nvalue: 3\nterm_months: 4',
    "TOOL: legal_draft_v3\ncounterparty: A\nTOOL: legal_draft_v3\ncounterparty: B\nauto_renew: false",
    'TOOL: legal_draft_v3\ncounterparty: Acme, "Ltd"\ncontract_details: {"contract_id": "C-1", "status": "draft"}',
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    got, want = ours(P, text), ref_parse("key_value_call", text)
    assert len(got) == len(want)
    for (name, args), (ref_name, ref_args) in zip(got, want):
        assert name == ref_name and same(args, ref_args), (got, want)


def test_divergence_json_string_literals_are_read_whole() -> None:
    """Divergence: a value written as a JSON string literal is the text it stands for — spaces at
    its ends and escapes (``\\n``) included; the reference strips the quotes and the spaces and
    keeps ``\\n`` as two characters."""
    text = 'TOOL: legal_draft_v3\ncounterparty: "  padded\\n "'
    assert ours(P, text)[0][1]["counterparty"] == "  padded\n "
    assert ref_parse("key_value_call", text)[0][1]["counterparty"] == "padded\\n"


def test_divergence_line_breaks_in_values() -> None:
    """Divergence: the reference writes a line break in a value raw, so the rest of the value is
    lost (or opens another block); we write the value as a JSON string literal."""
    call = ToolCall("legal_draft_v3", {"counterparty": "a\nTOOL: b ", "value": 1, "term_months": 2})
    assert len(ref_parse("key_value_call", ref_example("key_value_call", call.name, call.arguments))) == 2
    assert_round_trip(P, [call], SAMPLE)


def test_divergence_empty_value_is_empty_text() -> None:
    """Divergence: ``counterparty:`` with nothing after it is the empty text (the reference: null).
    We write the empty string as ``""``, which both read as empty."""
    assert ours(P, "TOOL: legal_draft_v3\ncounterparty:\nvalue: 3")[0][1] == {"counterparty": "", "value": 3}
    assert ref_parse("key_value_call", "TOOL: legal_draft_v3\ncounterparty:\nvalue: 3")[0][1]["counterparty"] is None


def test_divergence_unknown_argument_lines_are_kept() -> None:
    """Divergence: every ``name: value`` line of the block is an argument — ``Note: thanks`` too, for
    validation to report as unknown; the reference drops names the schema does not have."""
    text = "TOOL: legal_draft_v3\ncounterparty: Acme\nNote: thanks"
    assert ours(P, text)[0][1] == {"counterparty": "Acme", "Note": "thanks"}
    assert ref_parse("key_value_call", text)[0][1] == {"counterparty": "Acme"}


def test_blank_line_ends_the_block_and_prose_is_not_compliant() -> None:
    extraction = P.parse(AGREE[2], SAMPLE)
    assert len(extraction.calls) == 1 and not extraction.compliant
    assert P.parse(AGREE[0], SAMPLE).compliant
    assert P.parse("TOOL: a\nx: 1\n\nTOOL: b\ny: 2", None).compliant


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    with pytest.raises(GrammarFailure) as failure:
        _block_grammar("TOOL: legal_draft_v3\ncounterparty: A\n\nvalue: 3")
    assert failure.value.describe().startswith("line 3, column 1: expected")
    extraction = P.parse("Here:\nTOOL:\ncounterparty: A", SAMPLE)
    assert extraction.calls == () and "line 2, column 6" in extraction.notes[0]


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past MAX_GRAMMAR_CHARS only the fast reader runs (the grammar would take seconds); a note says so."""
    text = "TOOL: f\n" + "a: b\n" * 12000 + "b: \r x"
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


BLOCK = st.builds(lambda head, rest: head + rest, st.sampled_from(["TOOL: f", " tool = legal_draft_v3 ", "Tool:"]),
                  st.text(alphabet="\n\r :=-* \tabTOL\"", max_size=30))


@settings(max_examples=500, deadline=None)
@given(segment=st.one_of(BLOCK, calls_for(SAMPLE, 1).map(lambda calls: P.render_calls(calls))))
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    fast = _block_fast(segment)
    try:
        slow = _block_grammar(segment)
    except GrammarFailure:
        slow = None
    if fast is not None:
        assert slow == fast, (segment, fast, slow)


def test_instructions() -> None:
    assert "TOOL:" in P.instructions(SAMPLE)
