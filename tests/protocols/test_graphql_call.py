"""graphql_call: round trips, the fast path against the grammar, model-like replies against the
reference, never raising, where the grammar stopped."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from code_family_support import (BROKEN_GRAPHQL, GRAPHQL_CALLS, NASTY_INPUTS, OUR_TOOLS, PROPERTY, ROUND_TRIP, SAMPLE,
                                 SECOND, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input,
                                 assert_fast_path_reads_as_the_grammar, bfcl_calls, calls_for, damaged, fast_path,
                                 json_value, written)
from hypothesis import given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import grammar_read
from toolform_rules.replies.formats.code_family.graphql_call import GraphqlValues, block_string_value

P = get_protocol("graphql_call")
NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")


def grammar_calls(text: str):
    """The calls of ``text`` as the graphql_call grammar reads them (the slow path)."""
    return grammar_read("graphql_call", GraphqlValues(), text)


def test_registered() -> None:
    assert P.info.id == "graphql_call" and P.info.parallel and not P.info.text_values


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)
    text = P.render_calls(calls)  # the usual case takes the fast path, reading what the grammar reads
    assert_calls(written(fast_path("graphql_call", text)), written(grammar_calls(text)), identical, context=text)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_through_the_grammar(calls: list[ToolCall]) -> None:
    text = P.render_calls(calls)
    found = [(c.name, dict(c.items)) for c in grammar_calls(text)]
    assert_calls(found, [(c.name, dict(c.arguments)) for c in calls], identical, context=text)


def test_the_example() -> None:
    """The reference writes input-object keys as JSON strings ({"contract_id": ...}), which is not
    GraphQL; we write them as GraphQL names.  Otherwise the rendering is the reference's."""
    assert P.example(THE_EXAMPLE) == (
        'mutation { legal_draft_v3(counterparty: "Acme, \\"Ltd\\"", value: 1200.5, term_months: 12, '
        'auto_renew: true, contract_details: {contract_id: "C-1", status: "draft"}) { result } }')
    assert P.render_calls([ToolCall("f", {})]) == "mutation { f { result } }"
    assert_round_trip(P, [THE_EXAMPLE, SECOND], SAMPLE)


def test_keys_that_are_not_names_are_quoted() -> None:
    call = ToolCall("f", {"a": {"x y": 1, "true": 2, "": 3, "ok": {"1a": [None]}}})
    text = P.render_calls([call])
    assert '"x y": 1' in text and '"true": 2' in text and "ok: {" in text
    assert_calls(read_calls(P, text), [("f", dict(call.arguments))], identical, context=text)


@st.composite
def gql_source(draw: Any, value: Any) -> str:
    """``value`` as a GraphQL literal, one of the ways a model might write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return draw(st.sampled_from([json.dumps(value, ensure_ascii=False), json.dumps(value)]))
    if isinstance(value, list):
        return "[" + draw(st.sampled_from([", ", " ", ",", " , "])).join([draw(gql_source(v)) for v in value]) + "]"
    parts = []
    for k, v in value.items():
        key = k if NAME.fullmatch(k) and k not in ("true", "false", "null") and draw(st.booleans()) else json.dumps(k)
        parts.append(key + draw(st.sampled_from([": ", ":", " : "])) + draw(gql_source(v)))
    return "{" + draw(st.sampled_from([", ", " ", ","])).join(parts) + "}"


@st.composite
def operations(draw: Any) -> tuple[str, list[tuple[str, list[tuple[str, Any]]]]]:
    """An operation as a model might write it, and the calls it holds."""
    fields, expected = [], []
    for _ in range(draw(st.integers(1, 2))):
        name = draw(st.sampled_from(["f", "legal_draft_v3", "math.factorial", "LegalDraftV3", "query", "true"]))
        arguments = draw(st.dictionaries(st.sampled_from(["a", "b", "counterparty", "true", "query", "x_1"]),
                                         json_value(6), max_size=3))
        words = draw(st.dictionaries(st.sampled_from(["status", "unit"]), st.sampled_from(["DRAFT", "celsius"]),
                                     max_size=1))
        parts = [f"{k}: {draw(gql_source(v))}" for k, v in arguments.items()]
        parts += [f"{k}: {v}" for k, v in words.items() if k not in arguments]
        items = list(arguments.items()) + [(k, v) for k, v in words.items() if k not in arguments]
        alias = draw(st.sampled_from(["", "r: ", "out:"]))
        args = ("(" + draw(st.sampled_from([", ", " ", ","])).join(parts) + ")") if parts or draw(st.booleans()) else ""
        selection = draw(st.sampled_from([" { result }", "", " { result { id } }", "{ ok done }"]))
        fields.append(f"{alias}{name}{args}{selection}")
        expected.append((name, items))
    head = draw(st.sampled_from(["mutation ", "mutation Draft ", "query ", "", "subscription S"]))
    return head + "{ " + " ".join(fields) + " }", expected


@PROPERTY
@given(drawn=operations(), junk=st.one_of(st.just(""), st.text(alphabet="'\"\\(){}[],:#$-.eE0 x\n", min_size=1,
                                                               max_size=3)), where=st.integers(min_value=0))
def test_the_fast_path_reads_what_the_grammar_reads(drawn, junk: str, where: int) -> None:
    """The grammar reads every operation a model might write, and so does the fast path (these use none
    of what it leaves to the grammar: block strings, single quotes, comments); damaged, it reads nothing
    the grammar refuses."""
    text, expected = drawn
    if not junk:
        assert_calls(written(grammar_calls(text)), expected, identical, context=text)
    text = damaged(text, junk, where)
    assert_fast_path_reads_as_the_grammar(fast_path("graphql_call", text), grammar_calls, text, must_read=not junk)


def test_block_strings() -> None:
    assert block_string_value('"""\n    Hello,\n      World!\n\n    Yours\n  """') == "Hello,\n  World!\n\nYours"
    assert block_string_value('"""a \\""" b"""') == 'a """ b'
    assert_calls(read_calls(P, 'mutation { f(s: """\n  one\n    two\n""") }'), [("f", {"s": "one\n  two"})], identical)


AGREE = [
    'mutation { legal_draft_v3(counterparty: "a", value: 1) { result } }',
    'mutation { legal_draft_v3(counterparty: "a") }',
    '{ legal_draft_v3(counterparty: "a") }',
    'query { legal_draft_v3(counterparty: "a") { id } }',
    'mutation Draft { legal_draft_v3(counterparty: "a") { result } }',
    'mutation { legal_draft_v3(counterparty: "a") { result } probe_tool(s: "b") { result } }',
    'mutation { legal_draft_v3(counterparty: "a") { result } }\nmutation { probe_tool(s: "b") { result } }',
    'mutation { legal_draft_v3(counterparty: "a", contract_details: {contract_id: "C", status: DRAFT}) { result } }',
    'mutation { probe_tool(s: "\\u00e9\\n") { result } }',
    'mutation { legal_draft_v3(counterparty: "a" value: 1) { result } }',
    'mutation { legal_draft_v3(counterparty: "a", value: 1, ) { result } }',
    'mutation { LegalDraftV3(counterparty: "a") { result } }',
    'mutation { ghost(a: 1) { result } }',
    'mutation { legal_draft_v3(counterparty: "a"',
    'mutation { r: legal_draft_v3(counterparty: "a") { result } }',
    '```graphql\nmutation { legal_draft_v3(counterparty: "a") { result } }\n```',
    'Sure!\nmutation { legal_draft_v3(counterparty: "a") { result } }\nDone.',
    'mutation { legal_draft_v3(counterparty: "a") { result } } # comment',
    'mutation { legal_draft_v3(counterparty: "a", value: -1e3, term_months: 007) { result } }',
    'mutation { probe_tool(s: "x", o: {"k": 1}, a: [1, 2.5, "x", true]) }',
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_agrees(P, text)


DIVERGE = [
    # null is None (the reference keeps the text "null" for an argument, though None inside a list)
    ('mutation { probe_tool(s: "S", o: null) { result } }', [("probe_tool", {"s": "S", "o": None})]),
    # a block string is its text, dedented as the spec says (the reference reads an empty string)
    ('mutation { probe_tool(s: """block\n  string""", b: false) { result } }',
     [("probe_tool", {"s": "block\nstring", "b": False})]),
    # a variable has no value in a reply: no call, and a note says where (the reference keeps "$x")
    ("mutation { legal_draft_v3(counterparty: $x) { result } }", []),
    # a single-quoted string is read as a string (the reference keeps the quotes in the text)
    ("mutation { legal_draft_v3(counterparty: 'a') { result } }", [("legal_draft_v3", {"counterparty": "a"})]),
    # a field with no arguments is a call with none (the reference finds no call)
    ("mutation { legal_draft_v3 { result } }", [("legal_draft_v3", {})]),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(P, text, OUR_TOOLS), expected, identical, context=text)


def test_compliance() -> None:
    assert P.parse('mutation { f(a: 1) { result } }\n\nmutation { g(b: "x") }').compliant
    assert P.parse('```graphql\nmutation { f(a: 1) }\n```').compliant
    assert P.parse('query Q { f(s: """x""", e: RED) { a { b } } }').compliant
    prose = P.parse('Sure!\nmutation { f(a: 1) }\nDone.')
    assert prose.calls and not prose.compliant


@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text)
    assert_total(P, "mutation { f(" + text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str) -> None:
    """A broken operation gives no call and a note why, a flood of operations gives calls (the
    linear tests bound the time); after "mutation { f(a: " no nasty input closes the operation."""
    text = NASTY_INPUTS[name]
    assert_answers_nasty_input(P, text, SAMPLE, broken=name in BROKEN_GRAPHQL, holds_calls=name in GRAPHQL_CALLS)
    assert_answers_nasty_input(P, "mutation { f(a: " + text, broken=True, holds_calls=False)


def test_a_malformed_operation_says_where_the_grammar_stopped() -> None:
    extraction = P.parse('mutation { legal_draft_v3(counterparty: "Acme", value: ) { result } }', SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    assert "line 1, column 56" in extraction.notes[0] and "found ')'" in extraction.notes[0]


def test_instructions() -> None:
    text = P.instructions(SAMPLE)
    assert "mutation { legal_draft_v3(" in text and "{key: value}" in text
