"""nl_intent: round trips, the fast path against the grammar, replies as models write them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markup_family_support import (NASTY, SAMPLE_DOC, assert_round_trip, calls_on, our_calls, reference_calls,
                                   same_calls, texts)

from toolform_rules.calls import ToolCall
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import Extraction
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.nl_intent import _read, _read_by_grammar

PROTOCOL = get_protocol("nl_intent")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array",
                                                                                   "items": {"type": "string"}},
    "e": {"type": "boolean"}, "g": {"type": "number"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(calls_on(text_values=True, several=False))
def test_round_trip_one_call(case) -> None:
    assert_round_trip("nl_intent", *case)


@SETTINGS
@given(calls_on(text_values=True, several=True))
def test_round_trip_several_calls(case) -> None:
    assert_round_trip("nl_intent", *case)


@SETTINGS
@given(st.dictionaries(texts(8), texts(), max_size=4))
def test_round_trip_of_any_names_and_strings_without_tools(arguments) -> None:
    calls = [ToolCall("my.tool-1", arguments), ToolCall("odd name", {"x": "I will use f. then"})]
    extraction = PROTOCOL.parse(PROTOCOL.render_calls(calls))
    assert [(c.name, c.arguments) for c in extraction.calls] == [(c.name, c.arguments) for c in calls]
    assert extraction.compliant


AGREE = [
    "I will use f with a: 1, b: hello world.",
    "1. I will use f with a: 1.\n2. I will use g with b: 2.",
    "I will use f with a: 1 and b: x.",
    "I would use f with a = 1.",
    "I will use the f tool with a: 1.",
    "Use f with a: 1.",
    "I will call f with a: 1.",
    'I will use f with a: 1, c: {"x": 1}, d: ["p", "q"].',
    'I will use f with a: 1, b: "quoted".',
    "I will use f with a: 1, b: x.y.z.",
    "I will use f.",
    "I will use f with no arguments.",
    "I will use F with a: 1.",
    "Sure! I will use f with a: 1. Then I will use g with b: 2.",
    "I will use f with a: 1, b: time: 5pm.",
    "I will use f with b: x, a: 1",
    "I will use legal_draft_v3 with counterparty: Acme, value: 1200.5, term months: 12.",
    "No tool fits.",
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    assert same_calls(our_calls("nl_intent", reply, DOCS), reference_calls("nl_intent", reply, DOCS))


def test_divergence_the_reference_example() -> None:
    """Divergence: the reference's own example (``counterparty: Acme, "Ltd"``) reads back as ``Acme``; a comma
    ends a value only before the name of one of the tool's parameters."""
    reply = ('I will use legal_draft_v3 with counterparty: Acme, "Ltd", value: 1200.5, term_months: 12, '
             'auto_renew: true, contract_details: {"contract_id":"C-1","status":"draft"}.')
    assert reference_calls("nl_intent", reply, DOCS)[0][1]["counterparty"] == "Acme"
    assert our_calls("nl_intent", reply, DOCS)[0][1] == {
        "counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12, "auto_renew": True,
        "contract_details": {"contract_id": "C-1", "status": "draft"}}


def test_divergence_unknown_names_stay_in_the_value() -> None:
    """Divergence: with the tools known, "Note:" (not a parameter) inside a value is text; the reference
    drops what follows it."""
    reply = "I will use f with b: Acme, Note: fragile, a: 1."
    assert reference_calls("nl_intent", reply, DOCS) == [("f", {"b": "Acme", "a": 1})]
    assert our_calls("nl_intent", reply, DOCS) == [("f", {"b": "Acme, Note: fragile", "a": 1})]
    assert PROTOCOL.parse(reply).calls[0].arguments == {"b": "Acme", "Note": "fragile", "a": "1"}


def test_divergence_line_breaks_and_periods() -> None:
    """Divergence: a value ends at the sentence's final period (a period and a space, or the line's end), so
    a value may hold periods; the reference stops a value at a line break and drops the rest of the reply's
    sentence.  Values the sentence cannot hold are written as JSON strings by the renderer."""
    assert our_calls("nl_intent", "I will use f with a: 1, b: ends with period..", DOCS) == [
        ("f", {"a": 1, "b": "ends with period."})]
    assert reference_calls("nl_intent", "I will use f with a: 1, b: ends with period..", DOCS) == [
        ("f", {"a": 1, "b": "ends with period"})]
    assert our_calls("nl_intent", 'I will use f with a: 1, b: "line\\nbreak".', DOCS) == [
        ("f", {"a": 1, "b": "line\nbreak"})]


def test_divergence_unknown_argument_is_kept() -> None:
    """Divergence: an argument the tool does not have is kept (validation reports it); the reference drops it.

    After a value of a text parameter an unknown name is read as part of that text instead (see above)."""
    assert reference_calls("nl_intent", "I will use f with a: 1, zz: 5.", DOCS) == [("f", {"a": 1})]
    assert our_calls("nl_intent", "I will use f with a: 1, zz: 5.", DOCS) == [("f", {"a": 1, "zz": "5"})]


def test_divergence_other_phrasings() -> None:
    """Divergence: a sentence that does not open with the intent ("The tool f should be called ...") is not
    read; the reference searches any sentence for a tool's name."""
    assert reference_calls("nl_intent", "The tool f should be called with a: 1.", DOCS) == [("f", {"a": 1})]
    assert our_calls("nl_intent", "The tool f should be called with a: 1.", DOCS) == []


def test_divergence_set_to() -> None:
    """Divergence: "a set to 1 and b set to hi" gives both arguments; the reference keeps only the first."""
    reply = "I will use f with a set to 1 and b set to hi."
    assert reference_calls("nl_intent", reply, DOCS) == [("f", {"a": 1})]
    assert our_calls("nl_intent", reply, DOCS) == [("f", {"a": 1, "b": "hi"})]


def test_compliance() -> None:
    assert PROTOCOL.parse("I will use f with a: 1.").compliant
    assert PROTOCOL.parse("1. I will use f with a: 1.\n2. I will use g.").compliant
    assert not PROTOCOL.parse("Sure. I will use f with a: 1.").compliant
    assert PROTOCOL.parse("No tool fits this request.").compliant


def test_malformed_sentence_says_where_it_stopped() -> None:
    extraction = PROTOCOL.parse("Okay.\nI will use f with 12 apples.")
    assert extraction.calls == ()
    assert extraction.notes[0].startswith("the sentence could not be read: line 2, column 19: expected ")
    assert extraction.notes[0].endswith("found '12 apples'")


WORDS = ["I will use ", "Use the ", "1. I'll call ", "f", "`odd name`", " tool", " with ", " with the arguments: ",
         "a", "term months", "b", '"k: y"', ": ", " = ", " set to ", "1", "x y", "Acme", ", ", " and ", "; ", ",",
         ".", ". ", "Done", '"q, c: 1"', "3.5", "10:30", "no arguments", "  "]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=14).map("".join))
def test_fast_path_and_grammar_agree(text: str) -> None:
    """The terminal-by-terminal reading gives what the Lark parser gives, and stops exactly where it stops."""
    text = text.rstrip()
    fast = _read(text)
    try:
        slow = _read_by_grammar(text)
    except GrammarFailure:
        slow = None
    assert fast == slow, (text, fast, slow)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert isinstance(PROTOCOL.parse(text), Extraction)


@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
def test_never_raises_on_nasty_text(text: str) -> None:
    assert isinstance(PROTOCOL.parse(text), Extraction)
    assert isinstance(PROTOCOL.parse("I will use f with a: " + text), Extraction)
