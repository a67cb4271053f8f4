"""nl_intent: round trips, the fast path against the grammar, replies as models write them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markup_family_support import (CALL_SETTINGS, NASTY, SAMPLE_DOC, assert_sentence_reads_as_the_grammar, calls_on,
                                   reference_calls, sentences, texts, toolset_for)
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("nl_intent")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array",
                                                                                   "items": {"type": "string"}},
    "e": {"type": "boolean"}, "g": {"type": "number"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
TOOLSET = toolset_for(DOCS)


@CALL_SETTINGS
@given(calls_on(text_values=True, several=False))
def test_round_trip_one_call(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=equal_json)


@CALL_SETTINGS
@given(calls_on(text_values=True, several=True))
def test_round_trip_several_calls(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=equal_json)


@CALL_SETTINGS
@given(st.dictionaries(texts(8), texts(), max_size=4))
def test_round_trip_of_any_names_and_strings_without_tools(arguments) -> None:
    calls = [ToolCall("my.tool-1", arguments), ToolCall("odd name", {"x": "I will use f. then"})]
    assert_round_trip(PROTOCOL, calls, values=equal_json)  # no toolset: the strings come back as written


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
    ours = read_calls(PROTOCOL, reply, TOOLSET)
    assert ours or reply == "No tool fits.", reply  # agreeing on no call proves something only where none is meant
    assert_calls(ours, reference_calls("nl_intent", reply, DOCS), equal_json, reply)


def test_divergence_the_reference_example() -> None:
    """Divergence: the reference's own example (``counterparty: Acme, "Ltd"``) reads back as ``Acme``; a comma
    ends a value only before the name of one of the tool's parameters."""
    reply = ('I will use legal_draft_v3 with counterparty: Acme, "Ltd", value: 1200.5, term_months: 12, '
             'auto_renew: true, contract_details: {"contract_id":"C-1","status":"draft"}.')
    assert reference_calls("nl_intent", reply, DOCS)[0][1]["counterparty"] == "Acme"
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("legal_draft_v3", {
        "counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12, "auto_renew": True,
        "contract_details": {"contract_id": "C-1", "status": "draft"}})], equal_json, reply)


def test_divergence_unknown_names_stay_in_the_value() -> None:
    """Divergence: with the tools known, "Note:" (not a parameter) inside a value is text; the reference
    drops what follows it."""
    reply = "I will use f with b: Acme, Note: fragile, a: 1."
    assert reference_calls("nl_intent", reply, DOCS) == [("f", {"b": "Acme", "a": 1})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"b": "Acme, Note: fragile", "a": 1})], equal_json, reply)
    assert PROTOCOL.parse(reply).calls[0].arguments == {"b": "Acme", "Note": "fragile", "a": "1"}


def test_divergence_line_breaks_and_periods() -> None:
    """Divergence: a value ends at the sentence's final period (a period and a space, or the line's end), so
    a value may hold periods; the reference stops a value at a line break and drops the rest of the reply's
    sentence.  Values the sentence cannot hold are written as JSON strings by the renderer."""
    periods, quoted = "I will use f with a: 1, b: ends with period..", 'I will use f with a: 1, b: "line\\nbreak".'
    assert_calls(read_calls(PROTOCOL, periods, TOOLSET), [("f", {"a": 1, "b": "ends with period."})], equal_json,
                 periods)
    assert reference_calls("nl_intent", periods, DOCS) == [("f", {"a": 1, "b": "ends with period"})]
    assert_calls(read_calls(PROTOCOL, quoted, TOOLSET), [("f", {"a": 1, "b": "line\nbreak"})], equal_json, quoted)


def test_divergence_unknown_argument_is_kept() -> None:
    """Divergence: an argument the tool does not have is kept (validation reports it); the reference drops it.

    After a value of a text parameter an unknown name is read as part of that text instead (see above)."""
    reply = "I will use f with a: 1, zz: 5."
    assert reference_calls("nl_intent", reply, DOCS) == [("f", {"a": 1})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1, "zz": "5"})], equal_json, reply)


def test_divergence_other_phrasings() -> None:
    """Divergence: a sentence that does not open with the intent ("The tool f should be called ...") is not
    read; the reference searches any sentence for a tool's name."""
    reply = "The tool f should be called with a: 1."
    assert reference_calls("nl_intent", reply, DOCS) == [("f", {"a": 1})]
    assert assert_total(PROTOCOL, reply, TOOLSET).calls == ()


def test_divergence_set_to() -> None:
    """Divergence: "a set to 1 and b set to hi" gives both arguments; the reference keeps only the first."""
    reply = "I will use f with a set to 1 and b set to hi."
    assert reference_calls("nl_intent", reply, DOCS) == [("f", {"a": 1})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1, "b": "hi"})], equal_json, reply)


def test_compliance() -> None:
    assert PROTOCOL.parse("I will use f with a: 1.").compliant
    assert PROTOCOL.parse("1. I will use f with a: 1.\n2. I will use g.").compliant
    assert not PROTOCOL.parse("Sure. I will use f with a: 1.").compliant
    assert PROTOCOL.parse("No tool fits this request.").compliant


def test_malformed_sentence_says_where_it_stopped() -> None:
    extraction = assert_total(PROTOCOL, "Okay.\nI will use f with 12 apples.", malformed=True)
    assert extraction.notes[0].startswith("the sentence could not be read: line 2, column 19: expected ")
    assert extraction.notes[0].endswith("found '12 apples'")


WORDS = ["I will use ", "Use the ", "1. I'll call ", "f", "`odd name`", " tool", " with ", " with the arguments: ",
         "a", "term months", "b", '"k: y"', ": ", " = ", " set to ", "1", "x y", "Acme", ", ", " and ", "; ", ",",
         ".", ". ", "Done", '"q, c: 1"', "3.5", "10:30", "no arguments", "  "]


@settings(max_examples=300, deadline=None)
@given(sentences(PROTOCOL, WORDS))
def test_the_fast_path_reads_what_the_grammar_reads(text: str) -> None:
    """The terminal-by-terminal reading gives what the Lark parser gives, and stops exactly where it stops."""
    assert_sentence_reads_as_the_grammar(PROTOCOL, text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


# "Use f with Use f with …" is sentence after sentence using f (each with words after it, noted)
HOLD_A_CALL = {"use_f_with"}


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """Every nasty reply is answered, those without a sentence using a tool with no calls and a note; as an
    argument's value it is answered too."""
    extraction = assert_total(PROTOCOL, NASTY[name], malformed=name not in HOLD_A_CALL)
    if name in HOLD_A_CALL:
        assert extraction.calls and not extraction.compliant, extraction.notes[:2]
    assert_total(PROTOCOL, "I will use f with a: " + NASTY[name])
