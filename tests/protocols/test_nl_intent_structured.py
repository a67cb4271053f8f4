"""nl_intent_structured: round trips, the fast path against the grammar, replies as models write them."""

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

PROTOCOL = get_protocol("nl_intent_structured")
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
def test_round_trip_of_any_names_and_strings(arguments) -> None:
    calls = [ToolCall("my.tool-1", arguments), ToolCall("odd name", {"x": "use f. then"})]
    assert_round_trip(PROTOCOL, calls, values=equal_json)  # no toolset: the strings come back as written


AGREE = [
    "Use f with a = 1, b = hello world.",
    "I will use f with a = 1.",
    "use f with a = 1",
    "Use f with a = 1, b = x = y.",
    'Use f with a = 1, c = {"x": 1}.',
    "Use F with a = 1.",
    "Sure. Use f with a = 1. Done.",
    'Use f with a = 1, b = "quoted, with comma".',
    "Use f with a = 1, e = true, g = 1200.5.",
    'Use legal_draft_v3 with counterparty = Beta, value = 3, term_months = 6.',
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    ours = read_calls(PROTOCOL, reply, TOOLSET)
    assert ours, reply  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("nl_intent_structured", reply, DOCS), equal_json, reply)


def test_divergence_value_with_commas() -> None:
    """Divergence: the reference's own example (``counterparty = Acme, "Ltd"``) loses everything after the
    comma there; a comma ends a value only before another ``name =``."""
    reply = 'Use f with a = 1, b = Acme, "Ltd", e = true.'
    assert reference_calls("nl_intent_structured", reply, DOCS) == [("f", {"a": 1, "b": "Acme", "e": True})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1, "b": 'Acme, "Ltd"', "e": True})], equal_json,
                 reply)


def test_divergence_one_sentence_per_line() -> None:
    """Divergence: the reference renders several calls one sentence per line, then reads them as one call
    (g's argument lands in f's); each sentence is a call here."""
    reply = "Use f with a = 1.\nUse g with b = 2."
    assert reference_calls("nl_intent_structured", reply, DOCS) == [("f", {"a": 1, "b": "2"})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1}), ("g", {"b": 2})], equal_json, reply)


def test_divergence_exponent() -> None:
    """Divergence: the reference reads ``1e-07`` as 1.0 (it stops at the "e"); the schema types it 1e-07."""
    reply = "Use f with a = 1, g = 1e-07."
    assert reference_calls("nl_intent_structured", reply, DOCS) == [("f", {"a": 1, "g": 1.0})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1, "g": 1e-07})], equal_json, reply)


def test_divergence_and_between_arguments_and_the_tool_word() -> None:
    """Divergence: "and" joins arguments, and "the f tool" names f; the reference drops the argument after
    "and" (and notes a frame miss for the tool word)."""
    joined, tool_word = "Use f with a = 1 and b = x.", "Use the f tool with a = 1."
    assert reference_calls("nl_intent_structured", joined, DOCS) == [("f", {"a": 1})]
    assert_calls(read_calls(PROTOCOL, joined, TOOLSET), [("f", {"a": 1, "b": "x"})], equal_json, joined)
    assert_calls(read_calls(PROTOCOL, tool_word, TOOLSET), [("f", {"a": 1})], equal_json, tool_word)


def test_divergence_colon_is_not_the_frame() -> None:
    """Divergence: ``a: 1`` is not the frame; the reference returns the call with no arguments, here the
    sentence stops where the frame breaks and says so."""
    assert reference_calls("nl_intent_structured", "Use f with a: 1.", DOCS) == [("f", {})]
    extraction = assert_total(PROTOCOL, "Use f with a: 1.", malformed=True)
    assert extraction.notes == ("the sentence could not be read: line 1, column 13: expected equals, found ': 1'",)


def test_no_tool_is_needed() -> None:
    extraction = PROTOCOL.parse("No tool is needed.")
    assert extraction.calls == () and extraction.compliant
    assert reference_calls("nl_intent_structured", "No tool is needed.", DOCS) == []


def test_compliance() -> None:
    assert PROTOCOL.parse("Use f with a = 1.").compliant
    assert PROTOCOL.parse("Use f with a = 1.\nUse g with b = 2.").compliant
    assert not PROTOCOL.parse("Sure. Use f with a = 1.").compliant
    trailing = PROTOCOL.parse("Use f with a = 1. Done.")
    assert not trailing.compliant and "words after the sentence were ignored: 'Done.'" in trailing.notes[0]


WORDS = ["Use ", "use the ", "I will use ", "2. Use ", "f", "`odd name`", " tool", " with ", "a", "b", '"k y"',
         " = ", "=", "1", "x y", "Acme", ", ", " and ", ",", ".", ". ", "Done", '"q, c = 1"', "3.5", ":", "  "]


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
    """Every nasty reply is answered, those without a sentence in the frame with no calls and a note; as an
    argument's value it is answered too."""
    extraction = assert_total(PROTOCOL, NASTY[name], malformed=name not in HOLD_A_CALL)
    if name in HOLD_A_CALL:
        assert extraction.calls and not extraction.compliant, extraction.notes[:2]
    assert_total(PROTOCOL, "Use f with a = " + NASTY[name])
