"""jsonl_call: round trips, the fast path against the grammar, model-like replies against the reference."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from json_family_cases import (JSON_VALUES, MALFORMED_INPUTS, NASTY_INPUTS, ONE_LINE, bfcl_calls, fast_calls,
                               grammar_calls, lenient_reply, reference_pairs, sample_calls)
from support.protocol_checks import as_pipeline_reads, assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("jsonl_call")


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip(PROTOCOL, calls)


def test_no_call_is_no_lines():
    assert PROTOCOL.render_calls([]) == ""
    extraction = PROTOCOL.parse("")
    assert extraction.calls == () and extraction.compliant and not extraction.notes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
                          st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4)), max_size=3))
def test_fast_path_and_grammar_agree(raw):
    text = PROTOCOL.render_calls([ToolCall(n, a) for n, a in raw])
    assert_calls(fast_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3))
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls):
    text = data.draw(lenient_reply(calls, container="lines"))
    event("each object on one line" if text.count("\n") == len(calls) - 1 else "an object over several lines")
    assert_calls(read_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3))
def test_lenient_one_line_replies_keep_to_the_format(data, calls):
    text = data.draw(lenient_reply(calls, container="lines", spaces=ONE_LINE))
    extraction = PROTOCOL.parse(text)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), grammar_calls(PROTOCOL, text), context=text)
    assert extraction.compliant and not extraction.notes, (text, extraction)


AGREE = [
    '{"name": "legal_draft_v3", "arguments": {"value": 1}}\n{"name": "x", "arguments": {"b": 2}}',
    'Here:\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\nthen\n{"name": "x", "arguments": {"b": 2}}\ndone',
    '{"name": "legal_draft_v3", "arguments": {\n  "value": 1}}',
    '```json\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n{"name": "x", "arguments": {"b": 2}}\n```',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}, {"name": "x", "arguments": {"b": 2}}]',
    "{'name': 'Legal_Draft_V3', 'arguments': {'auto_renew': True,},}",
    '{"name": "legal_draft_v3", "arguments": {"value": 1}}\n{"name": "x", "arguments": {"b": ',
    '{"name": "legal_draft_v3", "arguments": {"counterparty": "x}y"}}',
    '{"foo": 1}\n{"name": "x", "arguments": {"b": 2}}',
    '{"name": "legal_draft_v3", "arguments": {"value": 1}}\n\n{"name": "x", "arguments": {"b": 2}}\n',
    '{"name": "legal_draft_v3", "parameters": {"value": 1}}',
    "",
    "I cannot help with that.",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    assert_calls(read_calls(PROTOCOL, text), reference_pairs("jsonl_call", text), context=text)


def test_two_objects_on_one_line_are_both_read():
    """Divergence: two call objects on one line are both read (noted, not compliant); the reference
    reads the first only and drops the second call without a word."""
    text = '{"name": "f", "arguments": {"a": 1}} {"name": "g", "arguments": {"b": 2}}'
    assert_calls(reference_pairs("jsonl_call", text), [("f", {"a": 1})])
    extraction = PROTOCOL.parse(text)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), [("f", {"a": 1}), ("g", {"b": 2})])
    assert not extraction.compliant and "call 2 shares a line with the one before" in extraction.notes


def test_compliance():
    assert PROTOCOL.parse('{"name": "f", "arguments": {}}\n{"name": "g", "arguments": {}}').compliant
    assert PROTOCOL.parse("{'name': 'f', 'arguments': {},}").compliant
    assert PROTOCOL.parse('```json\n{"name": "f", "arguments": {}}\n```').compliant
    assert not PROTOCOL.parse('Sure:\n{"name": "f", "arguments": {}}').compliant
    pretty = PROTOCOL.parse('{\n  "name": "f",\n  "arguments": {}\n}')
    assert_calls(as_pipeline_reads(PROTOCOL, pretty), [("f", {})])
    assert not pretty.compliant and "call 1 spans several lines" in pretty.notes
    array = PROTOCOL.parse('[{"name": "f", "arguments": {}}]')
    assert not array.compliant and "not one object per line" in array.notes[0]


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('{"name": "f", "arguments": {"a": 1}}\n{"name": "g", "arguments": {"b": tru}}')
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), [("f", {"a": 1})])
    assert extraction.notes == ("a line could not be read: line 2, column 34: expected '{' or '[' or a double-quoted "
                                "string or false or null or a number or ..., found 't'",)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    assert_total(PROTOCOL, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='[]{}"\':,\\ \nab1tTnN.-e', max_size=60))
def test_never_raises_on_json_like_noise(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", MALFORMED_INPUTS, ids=range(len(MALFORMED_INPUTS)))
def test_malformed_nasty_inputs_give_no_call_and_say_why(text):
    assert_total(PROTOCOL, text, malformed=True)


def test_instructions():
    assert "line" in PROTOCOL.instructions() and '"arguments"' in PROTOCOL.instructions()
