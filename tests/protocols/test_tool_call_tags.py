"""tool_call_tags: round trips, tags in strings, missing closing tags, the grammar, the reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_family_cases import (JSON_VALUES, MALFORMED_INPUTS, NASTY_INPUTS, bfcl_calls, fast_calls, grammar_calls,
                               lenient_text, reference_pairs, sample_calls)
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("tool_call_tags")


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip(PROTOCOL, calls)


def test_tags_in_values_round_trip():
    calls = [ToolCall("f", {"a": "</tool_call>", "b": "<tool_call>", "c": "</TOOL_CALL>x"}), ToolCall("g", {})]
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
                          st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4)), max_size=3))
def test_fast_path_and_grammar_agree(raw):
    text = PROTOCOL.render_calls([ToolCall(n, a) for n, a in raw])
    assert_calls(fast_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3), st.booleans())
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls, closed):
    text = "".join("<tool_call>\n" + data.draw(lenient_text({"name": c.name, "arguments": c.arguments}))
                   + ("\n</tool_call>\n" if closed else "\n") for c in calls)
    assert_calls(read_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)
    assert PROTOCOL.parse(text).compliant


AGREE = [
    '<tool_call>\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n</tool_call>\n'
    '<tool_call>\n{"name": "x", "arguments": {"b": 2}}\n</tool_call>',
    '<tool_call>\n{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    'I\'ll call it.\n<tool_call>\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n</tool_call>\nDone.',
    '<TOOL_CALL>{"name": "legal_draft_v3", "arguments": {"value": 1}}</TOOL_CALL>',
    '<tool_call>\n[{"name": "legal_draft_v3", "arguments": {"value": 1}}, {"name": "x", "arguments": {"b": 2}}]'
    '\n</tool_call>',
    "<tool_call>\n{'name': 'Legal_Draft_V3', 'arguments': {'auto_renew': True,},}\n</tool_call>",
    '<tool_call>\n{"name": "legal_draft_v3", "arguments": {"value": 1,}\n</tool_call>',
    "<tool_call>\n</tool_call>",
    '<tool_call>{"name": "legal_draft_v3", "arguments": {"value": 1}}</tool_call><tool_call>{"name": "x", '
    '"arguments": {"b": ',
    '<tool_call>\n{"name": "legal_draft_v3", "parameters": {"value": 1}}\n</tool_call>',
    "No tool is needed here.",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    assert_calls(read_calls(PROTOCOL, text), reference_pairs("tool_call_tags", text), context=text)


def test_divergences_from_the_reference():
    """Divergences, each where the reference finds no call at all:
    - a ``</tool_call>`` inside a JSON string value does not close the tag (the reference cuts the
      JSON there and loses the call; our own rendering escapes it anyway);
    - two opening tags with no closing tag: each call ends where the next tag starts (the brief
      asks for a missing closing tag to be tolerated; the reference tolerates it only at the end);
    - JSON inside a code fence inside the tags, and several objects in one tag pair, are read;
    - a bare call object with no tag at all is read, and noted as not the format."""
    cases = {
        '<tool_call>\n{"name": "f", "arguments": {"a": "</tool_call>"}}\n</tool_call>': [("f", {"a": "</tool_call>"})],
        '<tool_call>{"name": "f", "arguments": {}}<tool_call>{"name": "g", "arguments": {}}': [("f", {}), ("g", {})],
        '<tool_call>\n```json\n{"name": "f", "arguments": {}}\n```\n</tool_call>': [("f", {})],
        '<tool_call>\n{"name": "f", "arguments": {}}\n{"name": "g", "arguments": {}}\n</tool_call>': [("f", {}),
                                                                                                    ("g", {})],
        '{"name": "f", "arguments": {}}': [("f", {})],
    }
    for text, expected in cases.items():
        assert reference_pairs("tool_call_tags", text) == [], text
        assert_calls(read_calls(PROTOCOL, text), expected, context=text)
    assert not PROTOCOL.parse('{"name": "f", "arguments": {}}').compliant


def test_compliance():
    assert PROTOCOL.parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>').compliant
    unclosed = PROTOCOL.parse('<tool_call>\n{"name": "f", "arguments": {}}')
    assert unclosed.compliant and unclosed.notes == ("<tool_call> 1 has no closing tag",)
    assert not PROTOCOL.parse('Sure.\n<tool_call>{"name": "f", "arguments": {}}</tool_call>').compliant
    assert not PROTOCOL.parse("<tool_call>\n</tool_call>").compliant


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('<tool_call>\n{"name": "f", "arguments": {"a": 1 "b": 2}}\n</tool_call>')
    assert extraction.calls == ()
    assert extraction.notes == ("no tagged call could be read: line 2, column 36: expected ',' or '}', found '\"b\"'",)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    assert_total(PROTOCOL, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["<tool_call>", "</tool_call>", "{", "}", '"', "'", "[", "]", ":", ",", "\\", "\n",
                                 '"name"', '"f"', '"arguments"', "1", "```", "x"]), max_size=30))
def test_never_raises_on_tag_like_noise(pieces):
    assert_total(PROTOCOL, "".join(pieces))


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", MALFORMED_INPUTS, ids=range(len(MALFORMED_INPUTS)))
def test_malformed_nasty_inputs_give_no_call_and_say_why(text):
    assert_total(PROTOCOL, text, malformed=True)


def test_instructions():
    assert "<tool_call>" in PROTOCOL.instructions() and "</tool_call>" in PROTOCOL.instructions()
