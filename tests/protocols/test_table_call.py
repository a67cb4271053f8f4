"""table_call: round trips, model-like replies against the reference, never raising, grammar notes."""

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

P = get_protocol("table_call")
HEAD = "| tool | argument | value |\n|---|---|---|\n"


def test_registered_and_text_valued() -> None:
    assert P.info.id == "table_call" and P.info.text_values and P.info.parallel


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


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    assert P.example(call) == HEAD + (
        '| legal_draft_v3 | counterparty | Acme, "Ltd" |\n| legal_draft_v3 | value | 1200.5 |\n'
        '| legal_draft_v3 | term_months | 12 |\n| legal_draft_v3 | auto_renew | true |\n'
        '| legal_draft_v3 | contract_details | {"contract_id": "C-1", "status": "draft"} |')
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


AGREE = [
    HEAD + "| legal_draft_v3 | counterparty | Acme |\n| legal_draft_v3 | value | 3 |\n"
    "| legal_draft_v3 | term_months | 4 |",
    "Here is the table:\n\n" + HEAD + "| legal_draft_v3 | counterparty | Acme |\n| legal_draft_v3 | value | 3 |\n\n"
    "Let me know.",
    "| Tool | Argument | Value |\n| :--- | :--- | :--- |\n| LegalDraftV3 | counterparty | Acme Ltd |\n"
    "| LegalDraftV3 | value | 1200.5 |",
    HEAD + '| legal_draft_v3 | contract_details | {"contract_id": "C-1", "status": "draft"} |\n'
    "| legal_draft_v3 | auto_renew | true |",
    "```markdown\n" + HEAD + "| legal_draft_v3 | counterparty | Acme |\n```",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_reads_as_the_reference(P, text)


def test_divergence_each_table_is_a_call() -> None:
    """Divergence: two tables are two calls; the reference merges every row into one call, so a
    second call to the same tool overwrites the first."""
    calls = [ToolCall("legal_draft_v3", {"counterparty": "A", "value": 1}),
             ToolCall("legal_draft_v3", {"counterparty": "B"})]
    assert_round_trip(P, calls, SAMPLE, values=equal_json)
    reference_text = ref_example("table_call", calls[0].name, calls[0].arguments) + "\n" + ref_example(
        "table_call", calls[1].name, calls[1].arguments)
    assert ref_parse("table_call", reference_text) == [("legal_draft_v3", {"counterparty": "B", "value": 1.0})]


def test_divergence_a_repeated_argument_starts_a_new_call() -> None:
    """Divergence: in one table, a row repeating an argument starts another call to the tool; the
    reference keeps the last value only."""
    text = HEAD + "| legal_draft_v3 | counterparty | A |\n| legal_draft_v3 | counterparty | B |"
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": "A"}), ("legal_draft_v3", {"counterparty": "B"})], equal_json)
    assert ref_parse("table_call", text) == [("legal_draft_v3", {"counterparty": "B"})]


def test_divergence_escaped_pipes() -> None:
    """Divergence: ``\\|`` in a cell is a pipe in the value (GitHub Markdown's escape); the reference
    splits the cell there and keeps the backslash."""
    text = HEAD + "| legal_draft_v3 | counterparty | A \\| B |"
    assert_calls(read_calls(P, text, SAMPLE), [("legal_draft_v3", {"counterparty": "A | B"})], equal_json)
    assert ref_parse("table_call", text) == [("legal_draft_v3", {"counterparty": "A \\"})]


def test_divergence_empty_tool_cell_continues_the_call() -> None:
    """Divergence: a row with an empty tool cell continues the call above (a ditto); the reference
    drops the row."""
    text = HEAD + "| legal_draft_v3 | counterparty | A |\n|  | value | 3 |"
    assert_calls(read_calls(P, text, SAMPLE), [("legal_draft_v3", {"counterparty": "A", "value": 3})], equal_json)
    assert ref_parse("table_call", text) == [("legal_draft_v3", {"counterparty": "A"})]


def test_divergence_spaces_and_line_breaks_in_values() -> None:
    """Divergence: a value's line breaks are written ``\\n`` and its end spaces ``\\ ``; the reference
    writes them raw, which breaks the row or is trimmed away."""
    call = ToolCall("legal_draft_v3", {"counterparty": " a\nb ", "value": 1})
    assert "\\ a\\nb\\ " in P.example(call)
    assert_round_trip(P, [call], SAMPLE, values=equal_json)
    assert ref_parse("table_call", ref_example("table_call", call.name, call.arguments)) != [
        ("legal_draft_v3", {"counterparty": " a\nb ", "value": 1})]


def test_a_call_without_arguments() -> None:
    assert_round_trip(P, [ToolCall("legal_draft_v3", {})], SAMPLE, values=equal_json)


def test_header_straight_after_rows_starts_a_new_table() -> None:
    text = HEAD + "| f | a | 1 |\n" + HEAD + "| f | b | 2 |"
    assert [c.arguments for c in P.parse(text, None).calls] == [{"a": "1"}, {"b": "2"}]


def test_columns_found_by_header() -> None:
    text = "| value | function | parameter |\n|---|---|---|\n| 3 | legal_draft_v3 | term_months |"
    assert_calls(read_calls(P, text, SAMPLE), [("legal_draft_v3", {"term_months": 3})], equal_json)


def test_a_table_without_a_tool_column_is_noted() -> None:
    extraction = P.parse("| argument | value |\n|---|---|\n| counterparty | A |", SAMPLE)
    assert extraction.calls == () and "no tool column" in extraction.notes[0] and not extraction.compliant


def test_prose_and_compliance() -> None:
    assert not P.parse(AGREE[1], SAMPLE).compliant
    assert P.parse(AGREE[0], SAMPLE).compliant
    assert P.parse(AGREE[4], SAMPLE).compliant


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = P.parse("The call:\n| tool | argument | value |\n| legal_draft_v3 | counterparty | A |", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert "line 3, column 1" in note and "expected" in note


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "| tool | argument | value |\n|---|---|---|\n" + "| f | a | b |\n" * 5000 + "| f | \\"
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


#: the nasty inputs that hold a table that cannot be read: a row of pipes with no header or separator line
MALFORMED = {"100000 pipes"}


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize(("text", "malformed"), nasty_cases(MALFORMED))
def test_never_raises_on_nasty_inputs(text: str, malformed: bool) -> None:
    assert_total(P, text, SAMPLE, malformed=malformed)


@ROUND_TRIP
@given(drawn=single_calls())
def test_fast_path_reads_every_rendered_table(drawn) -> None:
    """A table as we write it is the plain form: the fast path reads it, cell for cell as the grammar."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


TABLE = st.builds(lambda rest: HEAD + rest, st.text(alphabet="|-: \t\n\rab\\", max_size=30))


@settings(max_examples=200, deadline=None)
@given(segment=TABLE)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike."""
    fast, _ = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")


@pytest.mark.parametrize(("segment", "fast_reads"), [
    (HEAD + "| a | b | a\\|b |", True),
    (HEAD + "|a|b|", True),
    (HEAD + "| a | b \n", False),
    (HEAD + "\n| a |", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of TABLE's own alphabet, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_instructions() -> None:
    assert "| tool | argument | value |" in P.instructions(SAMPLE)
