"""key_value_call: round trips, model-like replies against the reference, never raising, grammar notes.

Values do not span lines: a value that needs a line break (or spaces at its ends, or a
leading double quote, or is empty) is written as a JSON string literal on its one line.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls, render
from text_family_support import (ROUND_TRIP, SAMPLE, TEXT, assert_fast_path_agrees, assert_reads_as_the_reference,
                                 bfcl_calls, calls_for, nasty_cases, ref_example, ref_parse, single_calls)

from toolform_rules import ToolCall, load_tools
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats.text_family.shared import value_text

P = get_protocol("key_value_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "key_value_call" and P.info.text_values and P.info.parallel


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
    extraction = P.parse(P.render_calls(calls), SAMPLE)
    for raw, call in zip(extraction.calls, calls, strict=True):
        assert raw.arguments == {k: value_text(v) for k, v in call.arguments.items()}


@ROUND_TRIP
@given(value=TEXT)
def test_any_string_round_trips(value: str) -> None:
    toolset = load_tools([{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}])
    assert_round_trip(P, [ToolCall("f", {"a": value})], toolset, values=equal_json)


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
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


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
    assert_reads_as_the_reference(P, text)


def test_divergence_json_string_literals_are_read_whole() -> None:
    """Divergence: a value written as a JSON string literal is the text it stands for — spaces at
    its ends and escapes (``\\n``) included; the reference strips the quotes and the spaces and
    keeps ``\\n`` as two characters."""
    text = 'TOOL: legal_draft_v3\ncounterparty: "  padded\\n "'
    assert read_calls(P, text, SAMPLE)[0][1]["counterparty"] == "  padded\n "
    assert ref_parse("key_value_call", text)[0][1]["counterparty"] == "padded\\n"


def test_divergence_line_breaks_in_values() -> None:
    """Divergence: the reference writes a line break in a value raw, so the rest of the value is
    lost (or opens another block); we write the value as a JSON string literal."""
    call = ToolCall("legal_draft_v3", {"counterparty": "a\nTOOL: b ", "value": 1, "term_months": 2})
    assert len(ref_parse("key_value_call", ref_example("key_value_call", call.name, call.arguments))) == 2
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


def test_divergence_empty_value_is_empty_text() -> None:
    """Divergence: ``counterparty:`` with nothing after it is the empty text (the reference: null).
    We write the empty string as ``""``, which both read as empty."""
    assert_calls(read_calls(P, "TOOL: legal_draft_v3\ncounterparty:\nvalue: 3", SAMPLE),
                 [("legal_draft_v3", {"counterparty": "", "value": 3})], equal_json)
    assert ref_parse("key_value_call", "TOOL: legal_draft_v3\ncounterparty:\nvalue: 3")[0][1]["counterparty"] is None


def test_divergence_unknown_argument_lines_are_kept() -> None:
    """Divergence: every ``name: value`` line of the block is an argument — ``Note: thanks`` too, for
    validation to report as unknown; the reference drops names the schema does not have."""
    text = "TOOL: legal_draft_v3\ncounterparty: Acme\nNote: thanks"
    assert_calls(read_calls(P, text, SAMPLE), [("legal_draft_v3", {"counterparty": "Acme", "Note": "thanks"})],
                 equal_json)
    assert ref_parse("key_value_call", text)[0][1] == {"counterparty": "Acme"}


def test_blank_line_ends_the_block_and_prose_is_not_compliant() -> None:
    extraction = P.parse(AGREE[2], SAMPLE)
    assert len(extraction.calls) == 1 and not extraction.compliant
    assert P.parse(AGREE[0], SAMPLE).compliant
    assert P.parse("TOOL: a\nx: 1\n\nTOOL: b\ny: 2", None).compliant


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    with pytest.raises(GrammarFailure) as failure:
        P.read_grammar("TOOL: legal_draft_v3\ncounterparty: A\n\nvalue: 3")
    assert failure.value.describe().startswith("line 3, column 1: expected")
    extraction = P.parse("Here:\nTOOL:\ncounterparty: A", SAMPLE)
    assert extraction.calls == () and "line 2, column 6" in extraction.notes[0]


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "TOOL: f\n" + "a: b\n" * 12000 + "b: \r x"
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


#: none of the nasty inputs holds a block that cannot be read (repeated lines are noted, not refused)
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
def test_fast_path_reads_every_rendered_block(drawn) -> None:
    """A block as we write it is the plain form: the fast path reads it, line for line as the grammar."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


BLOCK = st.builds(lambda head, rest: head + rest, st.sampled_from(["TOOL: f", " tool = legal_draft_v3 ", "Tool:"]),
                  st.text(alphabet="\n\r :=-* \tabTOL\"", max_size=30))


@settings(max_examples=200, deadline=None)
@given(segment=BLOCK)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike."""
    fast, _ = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")


@pytest.mark.parametrize(("segment", "fast_reads"), [
    ("TOOL: f\na: b\n- b = a", True),
    (" tool = legal_draft_v3 \n  a: \"b\"", True),
    ("TOOL: f\r\na: b", True),
    ("Tool:\nab: T", False),
    ("TOOL: f\n\na: b", False),
    ("TOOL: f\nab", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of BLOCK's own alphabet, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_instructions() -> None:
    assert "TOOL:" in P.instructions(SAMPLE)
