"""react: round trips, replies as models write them (against the reference), robustness."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markup_family_support import (NASTY, SAMPLE_DOC, assert_round_trip, calls_on, our_calls, reference_calls,
                                   same_calls, toolset_for)

from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import Extraction
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.react import _extraction, _steps, _steps_by_grammar

PROTOCOL = get_protocol("react")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "e": {"type": "boolean"}},
    "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}},
        {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(calls_on(text_values=False, several=False))
def test_round_trip_one_call(case) -> None:
    assert_round_trip("react", *case)


@SETTINGS
@given(calls_on(text_values=False, several=True))
def test_round_trip_several_calls(case) -> None:
    assert_round_trip("react", *case)


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
    assert same_calls(our_calls("react", reply, DOCS), reference_calls("react", reply, DOCS))


def test_divergence_words_after_the_json() -> None:
    """Divergence: an Action Input with words after its JSON (or a Final Answer after it) still gives the
    object, with a note; the reference returns no arguments."""
    for reply in ('Thought: x\nAction: f\nAction Input: {"a": 1} and some trailing words',
                  'Action: f\nAction Input: {"a": 1}\nFinal Answer: done'):
        assert reference_calls("react", reply, DOCS) == [("f", {})]
        assert our_calls("react", reply, DOCS) == [("f", {"a": 1})]
    assert not PROTOCOL.parse('Action: f\nAction Input: {"a": 1} and more').compliant


def test_divergence_fenced_input_and_bold_labels() -> None:
    """Divergence: a code fence around the Action Input and Markdown bold labels are read (the reference
    returns no arguments, or no call)."""
    assert reference_calls("react", 'Action: f\nAction Input: ```json\n{"a": 1}\n```', DOCS) == [("f", {})]
    assert our_calls("react", 'Action: f\nAction Input: ```json\n{"a": 1}\n```', DOCS) == [("f", {"a": 1})]
    assert reference_calls("react", '**Action:** f\n**Action Input:** {"a": 1}', DOCS) == []
    assert our_calls("react", '**Action:** f\n**Action Input:** {"a": 1}', DOCS) == [("f", {"a": 1})]


def test_divergence_bare_inputs() -> None:
    """Divergence: an input that is not an object is the value of a single-parameter tool (LangChain's
    single-input tools); otherwise it is kept under ``_raw`` where validation reports it.  The reference
    drops a bare word and keeps JSON scalars under ``_value``."""
    assert reference_calls("react", "Action: search\nAction Input: weather in Paris", DOCS) == [("search", {})]
    assert our_calls("react", "Action: search\nAction Input: weather in Paris", DOCS) == [
        ("search", {"query": "weather in Paris"})]
    assert our_calls("react", "Action: f\nAction Input: hello", DOCS) == [("f", {"_raw": "hello"})]
    assert reference_calls("react", "Action: f\nAction Input: 5", DOCS) == [("f", {"_value": 5})]
    assert our_calls("react", "Action: f\nAction Input: 5", DOCS) == [("f", {"_raw": 5})]


def test_truncated_json_says_where_it_stopped() -> None:
    extraction = PROTOCOL.parse('Thought: x\nAction: f\nAction Input: {"a": 1, "b": ')
    assert [(c.name, c.arguments) for c in extraction.calls] == [("f", {})]
    assert extraction.notes[0].startswith("line 2, column 1: the Action Input's JSON could not be read: line 3, "
                                          "column 27: expected")


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = PROTOCOL.parse('Thought: x\nAction Input: {"a": 1}')
    assert extraction.calls == ()
    assert extraction.notes == ("the steps could not be read: line 2, column 1: expected action or final or "
                                "observation or thought, found 'Action Input:'",)


def test_compliance() -> None:
    assert PROTOCOL.parse('Thought: x\nAction: f\nAction Input: {"a": 1}').compliant
    assert not PROTOCOL.parse('Sure!\nThought: x\nAction: f\nAction Input: {"a": 1}').compliant
    assert not PROTOCOL.parse("Thought: x\nAction: f\nAction Input: {'a': 1}").compliant


def test_single_parameter_rule_uses_the_toolset() -> None:
    extraction = PROTOCOL.parse("Action: search\nAction Input: cats", toolset_for(DOCS))
    assert extraction.calls[0].arguments == {"query": "cats"}


LINES = ["Thought: x", "Action: f", "Action: g", "Action Input: {\"a\": 1}", "Action Input:", "**Action:** f",
         "Observation: 3", "Final Answer: ok", "prose", "", "  action input: {'b': 2}", "{\"c\": 1}", "Action:"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=10).map("\n".join))
def test_fast_path_and_grammar_agree(text: str) -> None:
    """The label scan reads what the grammar reads, and gives up exactly where the grammar stops."""
    fast = _steps(text)
    try:
        slow = _steps_by_grammar(text)
    except GrammarFailure:
        slow = None
    assert (fast is None) == (slow is None), text
    if fast is not None and slow is not None:
        a, b = _extraction(*fast, text, None), _extraction(*slow, text, None)
        assert a == b, (text, a, b)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert isinstance(PROTOCOL.parse(text), Extraction)


@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
def test_never_raises_on_nasty_text(text: str) -> None:
    assert isinstance(PROTOCOL.parse(text), Extraction)
