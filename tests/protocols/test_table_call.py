"""table_call: round trips, model-like replies against the reference, never raising, grammar notes."""

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
from toolform_rules.protocols.table_call import _table_fast, _table_grammar
from toolform_rules.protocols.text_family import MAX_GRAMMAR_CHARS, value_text

P = get_protocol("table_call")
HEAD = "| tool | argument | value |\n|---|---|---|\n"


def test_registered_and_text_valued() -> None:
    assert P.info.id == "table_call" and P.info.text_values and P.info.parallel


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


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    assert P.example(call) == HEAD + (
        '| legal_draft_v3 | counterparty | Acme, "Ltd" |\n| legal_draft_v3 | value | 1200.5 |\n'
        '| legal_draft_v3 | term_months | 12 |\n| legal_draft_v3 | auto_renew | true |\n'
        '| legal_draft_v3 | contract_details | {"contract_id": "C-1", "status": "draft"} |')
    assert_round_trip(P, [call], SAMPLE)


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
    got, want = ours(P, text), ref_parse("table_call", text)
    assert len(got) == len(want)
    for (name, args), (ref_name, ref_args) in zip(got, want):
        assert name == ref_name and same(args, ref_args), (got, want)


def test_divergence_each_table_is_a_call() -> None:
    """Divergence: two tables are two calls; the reference merges every row into one call, so a
    second call to the same tool overwrites the first."""
    calls = [ToolCall("legal_draft_v3", {"counterparty": "A", "value": 1}),
             ToolCall("legal_draft_v3", {"counterparty": "B"})]
    assert_round_trip(P, calls, SAMPLE)
    reference_text = ref_example("table_call", calls[0].name, calls[0].arguments) + "\n" + ref_example(
        "table_call", calls[1].name, calls[1].arguments)
    assert ref_parse("table_call", reference_text) == [("legal_draft_v3", {"counterparty": "B", "value": 1.0})]


def test_divergence_a_repeated_argument_starts_a_new_call() -> None:
    """Divergence: in one table, a row repeating an argument starts another call to the tool; the
    reference keeps the last value only."""
    text = HEAD + "| legal_draft_v3 | counterparty | A |\n| legal_draft_v3 | counterparty | B |"
    assert ours(P, text) == [("legal_draft_v3", {"counterparty": "A"}), ("legal_draft_v3", {"counterparty": "B"})]
    assert ref_parse("table_call", text) == [("legal_draft_v3", {"counterparty": "B"})]


def test_divergence_escaped_pipes() -> None:
    """Divergence: ``\\|`` in a cell is a pipe in the value (GitHub Markdown's escape); the reference
    splits the cell there and keeps the backslash."""
    text = HEAD + "| legal_draft_v3 | counterparty | A \\| B |"
    assert ours(P, text) == [("legal_draft_v3", {"counterparty": "A | B"})]
    assert ref_parse("table_call", text) == [("legal_draft_v3", {"counterparty": "A \\"})]


def test_divergence_empty_tool_cell_continues_the_call() -> None:
    """Divergence: a row with an empty tool cell continues the call above (a ditto); the reference
    drops the row."""
    text = HEAD + "| legal_draft_v3 | counterparty | A |\n|  | value | 3 |"
    assert ours(P, text) == [("legal_draft_v3", {"counterparty": "A", "value": 3})]
    assert ref_parse("table_call", text) == [("legal_draft_v3", {"counterparty": "A"})]


def test_divergence_spaces_and_line_breaks_in_values() -> None:
    """Divergence: a value's line breaks are written ``\\n`` and its end spaces ``\\ ``; the reference
    writes them raw, which breaks the row or is trimmed away."""
    call = ToolCall("legal_draft_v3", {"counterparty": " a\nb ", "value": 1})
    assert "\\ a\\nb\\ " in P.example(call)
    assert_round_trip(P, [call], SAMPLE)
    assert ref_parse("table_call", ref_example("table_call", call.name, call.arguments)) != [
        ("legal_draft_v3", {"counterparty": " a\nb ", "value": 1})]


def test_a_call_without_arguments() -> None:
    assert_round_trip(P, [ToolCall("legal_draft_v3", {})], SAMPLE)


def test_header_straight_after_rows_starts_a_new_table() -> None:
    text = HEAD + "| f | a | 1 |\n" + HEAD + "| f | b | 2 |"
    assert [c.arguments for c in P.parse(text, None).calls] == [{"a": "1"}, {"b": "2"}]


def test_columns_found_by_header() -> None:
    text = "| value | function | parameter |\n|---|---|---|\n| 3 | legal_draft_v3 | term_months |"
    assert ours(P, text) == [("legal_draft_v3", {"term_months": 3})]


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
    """Past MAX_GRAMMAR_CHARS only the fast reader runs (the grammar would take seconds); a note says so."""
    text = "| tool | argument | value |\n|---|---|---|\n" + "| f | a | b |\n" * 5000 + "| f | \\"
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


TABLE = st.builds(lambda rest: HEAD + rest, st.text(alphabet="|-: \t\n\rab\\", max_size=30))


@settings(max_examples=500, deadline=None)
@given(segment=st.one_of(TABLE, calls_for(SAMPLE, 1).map(lambda calls: P.render_calls(calls))))
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    fast = _table_fast(segment)
    try:
        slow = _table_grammar(segment)
    except GrammarFailure:
        slow = None
    if fast is not None:
        assert slow == fast, (segment, fast, slow)


def test_instructions() -> None:
    assert "| tool | argument | value |" in P.instructions(SAMPLE)
