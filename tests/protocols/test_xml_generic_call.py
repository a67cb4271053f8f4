"""xml_generic_call: round trips, replies as models write them (against the reference), robustness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markup_family_support import CALL_SETTINGS, NASTY, SAMPLE_DOC, calls_on, reference_calls, toolset_for
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("xml_generic_call")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array",
                                                                                   "items": {"type": "string"}},
    "e": {"type": "boolean"}, "g": {"type": "number"}, "tool": {"type": "string"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
TOOLSET = toolset_for(DOCS)


def X(text: str) -> str:
    """Replies are written with ‹ › for < > so that the test file reads as text, not markup."""
    return text.replace("‹", "<").replace("›", ">")


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


def test_round_trip_of_names_that_are_not_xml_names() -> None:
    calls = [ToolCall("f", {"b c": "1", "call": "x", "args": "y", "1x": "z", "arg": "w", "tool": "t", "é": "e"})]
    assert_round_trip(PROTOCOL, calls, values=equal_json)  # no toolset: the strings come back as written


AGREE = [
    '‹call›\n  ‹tool›f‹/tool›\n  ‹args›\n    ‹a›1‹/a›\n    ‹b›x y‹/b›\n  ‹/args›\n‹/call›\n'
    '‹call›‹tool›g‹/tool›‹args›‹b›2‹/b›‹/args›‹/call›',
    '‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹c›{"x": 1}‹/c›‹d›["p"]‹/d›‹/args›‹/call›',
    'Text before ‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹/args›‹/call› after',
    '‹call›‹tool›f‹/tool›‹args›‹/args›‹/call›',
    '‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹e›true‹/e›‹g›1e-07‹/g›‹/args›‹/call›',
    '‹calls›‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹/args›‹/call›‹/calls›',
    '```xml\n‹call›\n‹tool›F‹/tool›\n‹args›\n‹a›5‹/a›\n‹/args›\n‹/call›\n```',
    '‹call›\n  ‹tool›legal_draft_v3‹/tool›\n  ‹args›\n    ‹counterparty›Acme, "Ltd"‹/counterparty›\n'
    '    ‹value›1200.5‹/value›\n    ‹term_months›12‹/term_months›\n    ‹auto_renew›true‹/auto_renew›\n'
    '    ‹contract_details›{"contract_id": "C-1", "status": "draft"}‹/contract_details›\n  ‹/args›\n‹/call›',
    '‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹tool›hammer‹/tool›‹/args›‹/call›',
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    text = X(reply)
    ours = read_calls(PROTOCOL, text, TOOLSET)
    assert ours, text  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("xml_generic_call", text, DOCS), equal_json, text)


def test_divergence_entities_are_decoded() -> None:
    """Divergence: ``&amp;`` in a value is ``&``; the reference keeps the entity (its own renderer writes it,
    so its round trip of ``x & y`` fails)."""
    text = X('‹call›‹tool›f‹/tool›‹args›‹b›x &amp; y &lt;z&gt;‹/b›‹/args›‹/call›')
    assert reference_calls("xml_generic_call", text, DOCS) == [("f", {"b": "x &amp; y &lt;z&gt;"})]
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"b": "x & y <z>"})], equal_json, text)


def test_divergence_nested_elements_are_objects_and_lists() -> None:
    """Divergence: elements inside an argument make an object (``<item>`` children a list) whose leaves the
    schema types; the reference keeps the inner XML as one string."""
    text = X('‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹c›‹x›1‹/x›‹y›‹z›q‹/z›‹/y›‹/c›‹d›‹item›p‹/item›‹item›q‹/item›‹/d›'
             '‹/args›‹/call›')
    assert reference_calls("xml_generic_call", text, DOCS)[0][1]["c"] == "<x>1</x><y><z>q</z></y>"
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"a": 1, "c": {"x": "1", "y": {"z": "q"}},
                                                               "d": ["p", "q"]})], equal_json, text)


def test_divergence_repeated_elements_make_a_list() -> None:
    """Divergence: ``<d>p</d><d>q</d>`` is the list ``["p", "q"]`` (the reference keeps the last one)."""
    text = X('‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹c›‹k›p‹/k›‹k›q‹/k›‹/c›‹/args›‹/call›')
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"a": 1, "c": {"k": ["p", "q"]}})], equal_json, text)
    repeated = PROTOCOL.parse(X('‹call›‹tool›f‹/tool›‹args›‹d›p‹/d›‹d›q‹/d›‹/args›‹/call›'))
    assert repeated.calls[0].arguments == {"d": "q"} and "given twice" in repeated.notes[0]


def test_divergence_empty_element_and_tool_attribute() -> None:
    """Divergence: ``<b/>`` is the empty string (the reference drops it) and ``<call tool="f">`` names the
    tool (the reference finds no call)."""
    text = X('‹call tool="f"›‹args›‹a›1‹/a›‹b/›‹/args›‹/call›')
    assert reference_calls("xml_generic_call", text, DOCS) == []
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"a": 1, "b": ""})], equal_json, text)


def test_divergence_missing_closing_tags() -> None:
    """Divergence: a reply cut short still yields its call (the reference finds none), with notes."""
    text = X('‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹b›two')
    assert reference_calls("xml_generic_call", text, DOCS) == []
    extraction = PROTOCOL.parse(text)
    assert [(c.name, c.arguments) for c in extraction.calls] == [("f", {"a": "1", "b": "two"})]
    assert not extraction.compliant
    assert "line 1, column 35: the <b> element is not closed" in extraction.notes


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = assert_total(PROTOCOL, X('‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹/args›‹/call›\n‹/args›'), malformed=True)
    assert extraction.notes[0].startswith("the XML could not be read: line 2, column 1: expected ")
    assert "found '</args>'" in extraction.notes[0]


def test_compliance() -> None:
    assert PROTOCOL.parse(X('‹call›‹tool›f‹/tool›‹args›‹/args›‹/call›')).compliant
    assert not PROTOCOL.parse(X('Sure ‹call›‹tool›f‹/tool›‹args›‹/args›‹/call›')).compliant
    stray = PROTOCOL.parse(X('‹call›‹tool›f‹/tool›‹args›‹a›1‹/a›‹/b›‹/args›‹/call›'))
    assert not stray.compliant and "closes nothing" in stray.notes[0]


FRAGMENTS = ['‹call›', '‹/call›', '‹calls›', '‹/calls›', '‹tool›', '‹/tool›', 'f', '‹args›', '‹/args›', '‹a›',
             '‹/a›', '‹b›', '‹/b›', '‹item›', '‹/item›', '‹c/›', '‹arg name="x y"›', '‹/arg›', '1', ' ', '\n',
             '&amp;', '‹', '‹call tool="g"›', '‹tool›f‹/tool›', '‹args›‹a›1‹/a›‹/args›', '‹CALL›', '‹/Args ›', '‹call/›',
             '‹callx›', '‹tool', '‹/calls', '‹/tool x›', '‹/›', '```xml\n']


@st.composite
def replies(draw) -> str:
    """Rendered calls with prose around them (the fast path's domain), or tags of the format in any order."""
    if draw(st.booleans()):
        return X("".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=14))))
    calls, _ = draw(calls_on(text_values=True))
    return draw(st.sampled_from(["", "Sure:\n", "```xml\n"])) + PROTOCOL.render_calls(calls) + draw(
        st.sampled_from(["", "\nDone.", "\n```", X("‹/call›")]))


@settings(max_examples=300, deadline=None)
@given(replies())
def test_the_fast_path_reads_what_the_grammar_reads(text: str) -> None:
    """The reader of the rendered shape gives what the grammar alone gives, wherever it answers (elsewhere the
    grammar reads the reply)."""
    assert PROTOCOL.parse(text) == PROTOCOL.by_grammar(text), text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """No nasty reply holds a <call> with its <tool>: each is answered with no calls and a note."""
    assert_total(PROTOCOL, NASTY[name], malformed=True)
