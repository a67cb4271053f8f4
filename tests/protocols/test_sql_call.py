"""sql_call: round trips (values typed from the schema, as the pipeline types them), the fast path
against the grammar, model-like replies against the reference, never raising, where the grammar
stopped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from code_family_support import (BROKEN_SQL, NASTY_INPUTS, OUR_TOOLS, PROPERTY, ROUND_TRIP, SAMPLE, SECOND, SQL_CALLS,
                                 TEXT, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input,
                                 assert_fast_path_reads_as_the_grammar, bfcl_calls, calls_for, damaged, fast_path,
                                 json_scalar, ref_render, written)
from hypothesis import given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import grammar_read
from toolform_rules.replies.formats.code_family.sql_call import SqlValues, sql_literal

P = get_protocol("sql_call")


def grammar_calls(text: str):
    """The calls of ``text`` as the sql_call grammar reads them (the slow path)."""
    return grammar_read("sql_call", SqlValues(), text)


def test_registered() -> None:
    assert P.info.id == "sql_call" and P.info.parallel and P.info.text_values


@ROUND_TRIP
@given(calls=calls_for(SAMPLE, text_values=True))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls(text_values=True))
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)
    text = P.render_calls(calls)  # the usual case takes the fast path, reading what the grammar reads
    assert_calls(written(fast_path("sql_call", text, r"\s*")), written(grammar_calls(text)), identical, context=text)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE, text_values=True))
def test_round_trip_text_level(calls: list[ToolCall]) -> None:
    """Before typing: scalars come back as written, objects and arrays as their JSON text; the
    grammar reads every statement the same way as the fast path."""
    text = P.render_calls(calls)
    want = [(call.name, {k: json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v
                         for k, v in call.arguments.items()}) for call in calls]
    assert_calls([(c.name, c.arguments) for c in P.parse(text).calls], want, identical, context=text)
    assert_calls([(c.name, dict(c.items)) for c in grammar_calls(text)], want, identical, context=text)


def test_the_example_is_the_reference_rendering() -> None:
    assert P.render_calls([THE_EXAMPLE, SECOND]) == ref_render("sql_call", [THE_EXAMPLE, SECOND])
    assert_round_trip(P, [THE_EXAMPLE, SECOND], SAMPLE)


@st.composite
def statements(draw: Any) -> tuple[str, str, list[tuple[str, Any]]]:
    """A statement as a model might write it, and the items it holds."""
    name = draw(st.sampled_from(["f", "legal_draft_v3", "math.factorial", "LegalDraftV3"]))
    values = draw(st.lists(st.one_of(json_scalar(), st.dictionaries(TEXT, json_scalar(), max_size=2)), max_size=4))
    keys = draw(st.lists(st.sampled_from(["a", "b", "counterparty", "value_2", "n"]), min_size=len(values),
                         max_size=len(values), unique=True))
    arrow = draw(st.sampled_from(["=>", " => ", ":=", " := "]))
    parts, items = [], []
    for key, value in zip(keys, values):
        literal = sql_literal(value)
        if literal in ("TRUE", "FALSE", "NULL"):
            literal = draw(st.sampled_from([literal, literal.lower(), literal.title()]))
        parts.append(f"{key}{arrow}{literal}")
        items.append((key, json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value))
    select = draw(st.sampled_from(["SELECT", "select", "Select"]))
    sep = draw(st.sampled_from([", ", ",", ",\n  "]))
    end = draw(st.sampled_from([";", "", " ;", ";\n"]))
    return f"{select} {name}({sep.join(parts)}){end}", name, items


@PROPERTY
@given(drawn=statements(), junk=st.one_of(st.just(""), st.text(alphabet="'\"\\()[],:=>;-+.eE0 xN|E\n", min_size=1,
                                                               max_size=3)), where=st.integers(min_value=0))
def test_the_fast_path_reads_what_the_grammar_reads(drawn, junk: str, where: int) -> None:
    """The fast path reads every plain statement as the grammar does; damaged, nothing the grammar refuses."""
    text, name, items = drawn
    if not junk:
        assert_calls(written(grammar_calls(text)), [(name, items)], identical, context=text)
    text = damaged(text, junk, where)
    assert_fast_path_reads_as_the_grammar(fast_path("sql_call", text, r"\s*"), grammar_calls, text, not junk)


AGREE = [
    "SELECT legal_draft_v3(counterparty => 'a', value => 1);",
    "SELECT legal_draft_v3(counterparty => 'a', value => 1)",
    "select legal_draft_v3(counterparty => 'it''s', value => 1.5);",
    "SELECT legal_draft_v3(counterparty := 'a');",
    "SELECT legal_draft_v3(counterparty => 'a');\nSELECT probe_tool(s => 'b');",
    "SELECT legal_draft_v3(counterparty => 'a'); SELECT probe_tool(s => 'b');",
    "```sql\nSELECT legal_draft_v3(counterparty => 'a');\n```",
    "Sure: SELECT legal_draft_v3(counterparty => 'a'); hope it helps",
    "SELECT legal_draft_v3(counterparty => 'a', "
    "contract_details => '{\"contract_id\": \"C\", \"status\": \"draft\"}');",
    "SELECT legal_draft_v3(counterparty => '{\"contract_id\": \"C\"}');",
    "SELECT probe_tool(s => '[1, 2]', a => '[1, 2]', o => '{\"k\": 1}', i => '12', b => 'true');",
    "SELECT probe_tool(s => 'x', b => true, n => -1.5e3);",
    "SELECT legal_draft_v3(counterparty => 'line1\nline2');",
    "SELECT legal_draft_v3(counterparty => 'a'::text);",
    "SELECT LegalDraftV3(counterparty => 'a');",
    "SELECT legal_draft_v3();",
    "SELECT legal_draft_v3(counterparty => 'a', value => 1,);",
    "SELECT ghost(a => 1);",
    "SELECT legal_draft_v3(counterparty => 'a'",
    "SELECT legal_draft_v3(counterparty => 'a', value => '{bad json');",
    "SELECT legal_draft_v3(counterparty => 'Acme, \"Ltd\"', value => 1200.5, term_months => 12, auto_renew => TRUE, "
    "contract_details => '{\"contract_id\": \"C-1\", \"status\": \"draft\"}');",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_agrees(P, text)


DIVERGE = [
    # positional arguments (PostgreSQL's positional notation) bound to the schema's parameter
    # order (the reference drops them)
    ("SELECT legal_draft_v3('a', 5, 12);", [("legal_draft_v3", {"counterparty": "a", "value": 5, "term_months": 12})]),
    # NULL is None (the reference keeps the text "NULL")
    ("SELECT probe_tool(s => NULL);", [("probe_tool", {"s": None})]),
    # E'...' strings take backslash escapes (the reference keeps the literal's text, E and quotes too)
    ("SELECT legal_draft_v3(counterparty => E'a\\nb');", [("legal_draft_v3", {"counterparty": "a\nb"})]),
    # || concatenates (the reference keeps the first string only)
    ("SELECT legal_draft_v3(counterparty => 'a' || 'b');", [("legal_draft_v3", {"counterparty": "ab"})]),
    # ARRAY[...] is an array (the reference keeps the text up to the first comma, "ARRAY[1")
    ("SELECT probe_tool(a => ARRAY[1, 2]);", [("probe_tool", {"a": [1, 2]})]),
    # SELECT * FROM f(...) and CALL f(...) are calls too (the reference finds none)
    ("SELECT * FROM legal_draft_v3(counterparty => 'a');", [("legal_draft_v3", {"counterparty": "a"})]),
    ("CALL legal_draft_v3(counterparty => 'a');", [("legal_draft_v3", {"counterparty": "a"})]),
    # a quoted argument name is that name (the reference drops the argument)
    ("SELECT legal_draft_v3(\"counterparty\" => 'a');", [("legal_draft_v3", {"counterparty": "a"})]),
    # a schema-qualified name the toolset does not know is read without the schema (the
    # reference finds no call)
    ("SELECT public.legal_draft_v3(counterparty => 'a');", [("legal_draft_v3", {"counterparty": "a"})]),
    # an unquoted [..] is no SQL value: no call, and a note says where (the reference keeps "[1")
    ("SELECT probe_tool(a => [1, 2]);", []),
    # brackets inside a quoted string are text (the reference cuts the string at the first ")")
    ("SELECT probe_tool(s => '[x] (y) {z}');", [("probe_tool", {"s": "[x] (y) {z}"})]),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(P, text, OUR_TOOLS), expected, identical, context=text)


def test_compliance() -> None:
    assert P.parse("SELECT f(a => 'x');\nSELECT g(b => 2);").compliant
    assert P.parse("```sql\nSELECT f(a => 'x');\n```").compliant
    assert P.parse("CALL f(a := E'x\\n', b => ARRAY[1]);").compliant
    prose = P.parse("Sure: SELECT f(a => 'x'); done")
    assert prose.calls and not prose.compliant and "done" in prose.notes[-1]


@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text)
    assert_total(P, "SELECT f(" + text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str) -> None:
    """A broken statement gives no call and a note why, a flood of statements gives calls (the
    linear tests bound the time); after "SELECT f(a => " no nasty input closes the statement."""
    text = NASTY_INPUTS[name]
    assert_answers_nasty_input(P, text, SAMPLE, broken=name in BROKEN_SQL, holds_calls=name in SQL_CALLS)
    assert_answers_nasty_input(P, "SELECT f(a => " + text, broken=True, holds_calls=False)


def test_a_malformed_statement_says_where_the_grammar_stopped() -> None:
    extraction = P.parse("SELECT legal_draft_v3(counterparty => 'Acme' value => 2);", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    assert "line 1, column 46" in extraction.notes[0] and "found 'value'" in extraction.notes[0]
    assert "expected" in extraction.notes[0] and "','" in extraction.notes[0]


def test_instructions() -> None:
    text = P.instructions(SAMPLE)
    assert "SELECT legal_draft_v3(" in text and "JSON" in text and "''" in text
