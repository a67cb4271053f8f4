"""code_block_json: round trips, the fast path against the grammar, model-like replies against the reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_family_cases import (JSON_VALUES, MALFORMED_INPUTS, NASTY_INPUTS, bfcl_calls, fast_calls, grammar_calls,
                               lenient_text, reference_pairs, sample_calls)
from support.protocol_checks import as_pipeline_reads, assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol

PROTOCOL = get_protocol("code_block_json")


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip(PROTOCOL, calls)


def test_backticks_in_values_round_trip():
    calls = [ToolCall("f", {"a": "```", "b": "x```json\n```", "c": "`"}), ToolCall("g", {"d": "````"})]
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
                          st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4)), min_size=1, max_size=3))
def test_fast_path_and_grammar_agree(raw):
    text = PROTOCOL.render_calls([ToolCall(n, a) for n, a in raw])
    assert_calls(fast_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3))
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls):
    text = "\n".join("```json\n" + data.draw(lenient_text({"name": c.name, "arguments": c.arguments})) + "\n```"
                     for c in calls)
    assert_calls(read_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)
    assert PROTOCOL.parse(text).compliant


AGREE = [
    '```json\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n```',
    'Sure:\n```json\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n```\nDone.',
    '```\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n```',
    '```JSON\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n```',
    '{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    '```json\n[{"name": "legal_draft_v3", "arguments": {"value": 1}}, {"name": "x", "arguments": {"b": 2}}]\n```',
    '```json\n{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    '```python\n{"name": "legal_draft_v3", "arguments": {"value": 1}}\n```',
    '```json\n{"name": "legal_draft_v3", "arguments": {"counterparty": "```"}}\n```',
    '```json {"name": "legal_draft_v3", "arguments": {"value": 1}} ```',
    "```json\n{'name': 'Legal_Draft_V3', 'arguments': {'auto_renew': True,},}\n```",
    '```json\n{"name": "legal_draft_v3", "arguments": {"value": 1,}\n```',
    '```json\n{"foo": 1}\n```\n',
    "I would rather not call a tool.",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    assert_calls(read_calls(PROTOCOL, text), reference_pairs("code_block_json", text), context=text)


def test_every_fence_is_read():
    """Divergence: each fence is read — the rendered form of two calls is two fences, and the
    reference reads only the first of them (so its own render does not round-trip). Several
    objects in one fence are all read too (the reference keeps the first)."""
    two = PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {"b": 2})])
    assert_calls(reference_pairs("code_block_json", two), [("f", {"a": 1})])
    assert_calls(read_calls(PROTOCOL, two), [("f", {"a": 1}), ("g", {"b": 2})])
    lines = '```json\n{"name": "f", "arguments": {}}\n{"name": "g", "arguments": {}}\n```'
    assert_calls(reference_pairs("code_block_json", lines), [("f", {})])
    assert_calls(read_calls(PROTOCOL, lines), [("f", {}), ("g", {})])


def test_compliance():
    assert PROTOCOL.parse('```json\n{"name": "f", "arguments": {}}\n```').compliant
    assert PROTOCOL.parse('```\n{"name": "f", "arguments": {}}\n```').compliant
    bare = PROTOCOL.parse('{"name": "f", "arguments": {}}')
    assert_calls(as_pipeline_reads(PROTOCOL, bare), [("f", {})])
    assert not bare.compliant and "no ```json code fence" in bare.notes[0]
    assert not PROTOCOL.parse('Here:\n```json\n{"name": "f", "arguments": {}}\n```').compliant
    assert not PROTOCOL.parse('```python\n{"name": "f", "arguments": {}}\n```').compliant
    unclosed = PROTOCOL.parse('```json\n{"name": "f", "arguments": {}}')
    assert_calls(as_pipeline_reads(PROTOCOL, unclosed), [("f", {})])
    assert "never closed" in unclosed.notes[0]


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('```json\n{"name": "f",\n "arguments": {"a": [1 2]}}\n```')
    assert extraction.calls == ()
    assert extraction.notes == ("no fenced JSON could be read: line 3, column 24: expected ',' or ']', found '2'",)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    assert_total(PROTOCOL, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='`[]{}"\':,\\ \nab1tTnN.-ej', max_size=60))
def test_never_raises_on_fence_like_noise(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", MALFORMED_INPUTS, ids=range(len(MALFORMED_INPUTS)))
def test_malformed_nasty_inputs_give_no_call_and_say_why(text):
    assert_total(PROTOCOL, text, malformed=True)


def test_instructions():
    assert "```json" in PROTOCOL.instructions()
