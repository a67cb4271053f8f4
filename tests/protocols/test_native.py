"""native: round trips, provider envelopes, the fast path against the grammar, the reference."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_family_cases import (JSON_VALUES, MALFORMED_INPUTS, NASTY_INPUTS, bfcl_calls, fast_calls, grammar_calls,
                               lenient_reply, reference_pairs, sample_calls)
from support.protocol_checks import as_pipeline_reads, assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("native")


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip(PROTOCOL, calls)


def openai(calls):
    return json.dumps({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
        for i, c in enumerate(calls)]}, ensure_ascii=False)


def anthropic(calls):
    return json.dumps({"role": "assistant", "content": [{"type": "text", "text": "Calling."}] + [
        {"type": "tool_use", "id": f"toolu_{i}", "name": c.name, "input": c.arguments}
        for i, c in enumerate(calls)]}, ensure_ascii=False)


def gemini(calls):
    return json.dumps({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": c.name, "args": c.arguments}} for c in calls]}}]}, ensure_ascii=False)


def completion(calls):
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "choices": [
        {"index": 0, "message": json.loads(openai(calls)), "finish_reason": "tool_calls"}]}, ensure_ascii=False)


@pytest.mark.parametrize("envelope", [openai, anthropic, gemini, completion])
@settings(max_examples=100, deadline=None)
@given(calls=bfcl_calls(max_calls=3))
def test_provider_envelopes_give_every_call(envelope, calls):
    text = envelope(calls)
    extraction = PROTOCOL.parse(text)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), [(c.name, c.arguments) for c in calls], context=text)
    assert extraction.compliant


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
                          st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4)), max_size=3),
       st.sampled_from([None, openai, anthropic, gemini]))
def test_fast_path_and_grammar_agree(raw, envelope):
    calls = [ToolCall(n, a) for n, a in raw]
    text = envelope(calls) if envelope else PROTOCOL.render_calls(calls)
    assert_calls(fast_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3))
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls):
    text = data.draw(lenient_reply(calls))
    assert_calls(read_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


AGREE = [
    '{"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "legal_draft_v3", '
    '"arguments": "{\\"value\\": 1}"}}]}',
    '[{"id": "call_1", "type": "function", "function": {"name": "legal_draft_v3", "arguments": "{\\"value\\": 1}"}}]',
    '{"id": "call_1", "type": "function", "function": {"name": "legal_draft_v3", "arguments": "{\\"value\\": 1}"}}',
    '{"type": "tool_use", "id": "toolu_1", "name": "legal_draft_v3", "input": {"value": 1}}',
    '{"content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t", "name": "legal_draft_v3", '
    '"input": {"value": 1}}]}',
    '{"functionCall": {"name": "legal_draft_v3", "args": {"value": 1}}}',
    '{"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", '
    '"function": {"name": "legal_draft_v3", "arguments": "{\\"value\\": 1}"}}]}}]}',
    'Sure: {"name": "legal_draft_v3", "arguments": {"value": 1}}',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}, {"name": "x", "arguments": {"b": 2}}]',
    "{'name': 'Legal_Draft_V3', 'arguments': {'auto_renew': True,},}",
    '{"parts": [{"functionCall": {"name": "legal_draft_v3", "args": {"value": 1}}}]}',
    '{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": '
    '{"name": "legal_draft_v3", "arguments": "{}"}}, {"id": "call_2", "type": "function", "function": '
    '{"name": "x", "arguments": "{}"}}]}',
    "",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    assert_calls(read_calls(PROTOCOL, text), reference_pairs("native", text), context=text)


def test_every_rendered_line_is_read():
    """Divergence: the rendered form of several calls is one object per line (as the reference
    renders it), and every line is read; the reference reads only the first line of its own
    rendering, so its round trip loses calls."""
    text = PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {"b": 2})])
    assert_calls(reference_pairs("native", text), [("f", {"a": 1})])
    assert_calls(read_calls(PROTOCOL, text), [("f", {"a": 1}), ("g", {"b": 2})])


def test_an_envelope_is_not_a_call_named_after_the_speaker():
    text = ('{"role": "assistant", "name": "helper", "content": null, "tool_calls": [{"id": "c", "type": '
            '"function", "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]}')
    assert_calls(read_calls(PROTOCOL, text), [("f", {"a": 1})])


def test_compliance():
    assert PROTOCOL.parse('{"name": "f", "arguments": {}}').compliant
    assert PROTOCOL.parse(openai([ToolCall("f", {})])).compliant
    assert not PROTOCOL.parse('Sure: {"name": "f", "arguments": {}}').compliant
    assert not PROTOCOL.parse('{"role": "assistant", "content": "no call"}').compliant


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('{"tool_calls": [{"function": {"name": "f", "arguments": "{}"}} {"id": 2}]}')
    assert extraction.calls == ()
    assert extraction.notes == ("no JSON could be read: line 1, column 64: expected ',' or ']', found '{'",)


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
    assert "tool-calling" in PROTOCOL.instructions()
