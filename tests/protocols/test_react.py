"""react: round trips, replies as models write them (against the reference), robustness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markup_family_support import (CALL_SETTINGS, NASTY, SAMPLE_DOC, assert_reads_as_the_grammar, calls_on,
                                   reference_calls, toolset_for)
from support.compare import equal_json, identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("react")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "e": {"type": "boolean"}},
    "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}},
        {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]
TOOLSET = toolset_for(DOCS)


# the Action Input is JSON, which gives each value back with its type and keys in order: identical
@CALL_SETTINGS
@given(calls_on(text_values=False, several=False))
def test_round_trip_one_call(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=identical)


@CALL_SETTINGS
@given(calls_on(text_values=False, several=True))
def test_round_trip_several_calls(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=identical)


AGREE = [
    'Thought: I need f.\nAction: f\nAction Input: {"a": 1, "b": "x"}',
    'Thought: I need f.\nAction: f\nAction Input: {"a": 1}\nObservation: 5\nThought: now g\nAction: g\n'
    'Action Input: {"b": 2}',
    "Action: f\nAction Input: {'a': 1, 'e': True}",
    'Action: f\nAction Input: {"a": 1,\n  "b": "multi"\n}\nThought: done',
    'Action: `f`\nAction Input: {"a": 1}',
    'action: f\naction input: {"a": 1}',
    'Action: F\nAction Input: {"a": 1}',
    'Thought: x\nAction: f\nAction Input: {}',
    'Thought: x\n\nAction: f\n\nAction Input: {"a": 1}',
    'Thought: x\nAction: f\nAction Input: {"b": "x"}\nAction: g\nAction Input: {"b": 3}',
    'Thought: x\nAction: f',
    'Thought: x\nAction: f\nAction Input: ',
    'Thought: I should use a tool.\nAction: legal_draft_v3\nAction Input: {"counterparty": "Acme, \\"Ltd\\"", '
    '"value": 1200.5, "term_months": 12, "auto_renew": true, "contract_details": {"contract_id": "C-1", '
    '"status": "draft"}}',
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    ours = read_calls(PROTOCOL, reply, TOOLSET)
    assert ours, reply  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("react", reply, DOCS), equal_json, reply)


def test_divergence_words_after_the_json() -> None:
    """Divergence: an Action Input with words after its JSON (or a Final Answer after it) still gives the
    object, with a note; the reference returns no arguments."""
    for reply in ('Thought: x\nAction: f\nAction Input: {"a": 1} and some trailing words',
                  'Action: f\nAction Input: {"a": 1}\nFinal Answer: done'):
        assert reference_calls("react", reply, DOCS) == [("f", {})]
        assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1})], equal_json, reply)
    assert not PROTOCOL.parse('Action: f\nAction Input: {"a": 1} and more').compliant


def test_divergence_fenced_input_and_bold_labels() -> None:
    """Divergence: a code fence around the Action Input and Markdown bold labels are read (the reference
    returns no arguments, or no call)."""
    fenced, bold = 'Action: f\nAction Input: ```json\n{"a": 1}\n```', '**Action:** f\n**Action Input:** {"a": 1}'
    assert reference_calls("react", fenced, DOCS) == [("f", {})]
    assert_calls(read_calls(PROTOCOL, fenced, TOOLSET), [("f", {"a": 1})], equal_json, fenced)
    assert reference_calls("react", bold, DOCS) == []
    assert_calls(read_calls(PROTOCOL, bold, TOOLSET), [("f", {"a": 1})], equal_json, bold)


def test_divergence_bare_inputs() -> None:
    """Divergence: an input that is not an object is the value of a single-parameter tool (LangChain's
    single-input tools); otherwise it is kept under ``_raw`` where validation reports it.  The reference
    drops a bare word and keeps JSON scalars under ``_value``."""
    words, word, number = ("Action: search\nAction Input: weather in Paris", "Action: f\nAction Input: hello",
                           "Action: f\nAction Input: 5")
    assert reference_calls("react", words, DOCS) == [("search", {})]
    assert_calls(read_calls(PROTOCOL, words, TOOLSET), [("search", {"query": "weather in Paris"})], equal_json, words)
    assert_calls(read_calls(PROTOCOL, word, TOOLSET), [("f", {"_raw": "hello"})], equal_json, word)
    assert reference_calls("react", number, DOCS) == [("f", {"_value": 5})]
    assert_calls(read_calls(PROTOCOL, number, TOOLSET), [("f", {"_raw": 5})], equal_json, number)


def test_truncated_json_says_where_it_stopped() -> None:
    extraction = PROTOCOL.parse('Thought: x\nAction: f\nAction Input: {"a": 1, "b": ')
    assert [(c.name, c.arguments) for c in extraction.calls] == [("f", {})]
    assert extraction.notes[0].startswith("line 2, column 1: the Action Input's JSON could not be read: line 3, "
                                          "column 27: expected")


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = assert_total(PROTOCOL, 'Thought: x\nAction Input: {"a": 1}', malformed=True)
    assert extraction.notes == ("the steps could not be read: line 2, column 1: expected action or final or "
                                "observation or thought, found 'Action Input:'",)


def test_compliance() -> None:
    assert PROTOCOL.parse('Thought: x\nAction: f\nAction Input: {"a": 1}').compliant
    assert not PROTOCOL.parse('Sure!\nThought: x\nAction: f\nAction Input: {"a": 1}').compliant
    assert not PROTOCOL.parse("Thought: x\nAction: f\nAction Input: {'a': 1}").compliant


def test_single_parameter_rule_uses_the_toolset() -> None:
    extraction = PROTOCOL.parse("Action: search\nAction Input: cats", TOOLSET)
    assert extraction.calls[0].arguments == {"query": "cats"}


LINES = ["Thought: x", "Action: f", "Action: g", "Action Input: {\"a\": 1}", "Action Input:", "**Action:** f",
         "Observation: 3", "Final Answer: ok", "prose", "", "  action input: {'b': 2}", "{\"c\": 1}", "Action:"]


@st.composite
def replies(draw) -> str:
    """Labelled steps in any order, or rendered calls after prose or an Observation and before more steps."""
    if draw(st.booleans()):
        return "\n".join(draw(st.lists(st.sampled_from(LINES), max_size=10)))
    calls, _ = draw(calls_on(text_values=False))
    return draw(st.sampled_from(["", "Sure.\n", "Observation: 3\n"])) + PROTOCOL.render_calls(calls) + draw(
        st.sampled_from(["", "\nObservation: done", "\nFinal Answer: ok"]))


@settings(max_examples=300, deadline=None)
@given(replies(), st.integers(1, 80))
def test_the_label_scan_reads_what_the_grammar_reads(text: str, limit: int) -> None:
    """The fast path (one pattern over the labels) gives what the grammar alone gives (``limit``: what the
    grammar may read of a reply)."""
    assert_reads_as_the_grammar(PROTOCOL, text, limit, TOOLSET)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


# "Action:Action:…" is one Action naming a (made-up) tool "Action:Action:…", without an Action Input
HOLD_A_CALL = {"action_labels"}


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """Every nasty reply is answered; those that hold no Action with no calls and a note."""
    extraction = assert_total(PROTOCOL, NASTY[name], malformed=name not in HOLD_A_CALL)
    if name in HOLD_A_CALL:
        assert len(extraction.calls) == 1 and not extraction.compliant, extraction.notes
