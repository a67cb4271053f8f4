"""json_array: round trips, the fast path against the grammar, model-like replies against the reference."""

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

PROTOCOL = get_protocol("json_array")


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip(PROTOCOL, calls)


def test_round_trip_no_call():
    assert PROTOCOL.render_calls([]) == "[]"
    extraction = PROTOCOL.parse("[]")
    assert extraction.calls == () and extraction.compliant and not extraction.notes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
                          st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4)), max_size=3))
def test_fast_path_and_grammar_agree(raw):
    text = PROTOCOL.render_calls([ToolCall(n, a) for n, a in raw])
    assert_calls(fast_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


def test_grammar_reads_what_the_fast_readers_do_not():
    """A comma after white space: the lenient reader declines it, the grammar reads it (within the budget)."""
    text = "[{'name': 'f', 'arguments': {'a': True, 'b': None, 'c': [1, 2 ,] ,} ,}]"
    assert fast_calls(PROTOCOL, text) is None
    want = [("f", {"a": True, "b": None, "c": [1, 2]})]
    assert_calls(grammar_calls(PROTOCOL, text), want, context=text)
    assert_calls(read_calls(PROTOCOL, text), want, context=text)


AGREE = [
    '[{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 3}}, {"name": "x", "arguments": {}}]',
    'Sure, here you go:\n[{"name": "legal_draft_v3", "arguments": {"value": 1}}]\nHope it helps.',
    '```json\n[{"name": "legal_draft_v3", "arguments": {"value": 1}}]\n```',
    '{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    "[{'name': 'Legal_Draft_V3', 'arguments': {'auto_renew': True, 'x': None,},},]",
    '[{"name": "legal_draft_v3", "arguments": "{\\"value\\": 1}"}]',
    '[{"name": "legal_draft_v3", "parameters": {"value": 1}}]',
    '[{"tool": "legal_draft_v3", "args": {"value": 1}}]',
    '[{"function": {"name": "legal_draft_v3", "arguments": "{\\"value\\": 1}"}}]',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}, {"name": "legal_draft_v3", "arguments": {"a": ',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}] and [{"name": "x", "arguments": {}}]',
    "[1, 2, 3]",
    '[{"name": "legal_draft_v3"}]',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}, 5, {"foo": 1}]',
    'I think [the tool] is: [{"name": "legal_draft_v3", "arguments": {"value": 1}}]',
    '[{"name": "legal_draft_v3", "arguments": {"a": 1e-07, "b": 1200.5, "c": "x\\ny"}}]',
    "",
    "[]",
    "[{\"name\": \"legal_draft_v3\", \"arguments\": {\"a\": 'it\\'s'}}]",
    '[\n  {\n    "name": "LegalDraftV3",\n    "arguments": {"term_months": 12}\n  }\n]',
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    assert_calls(read_calls(PROTOCOL, text), reference_pairs("json_array", text), context=text)


def test_non_object_arguments_are_kept_under_raw():
    """Divergence: arguments that are not an object are kept under ``_raw`` (the reference says
    ``_value``), and ``"arguments": null`` is no arguments (the reference keeps ``{"_value": None}``):
    the shared ``call_from_object`` decides this for the whole JSON family, and validation reports
    ``_raw`` as an unknown argument."""
    assert_calls(read_calls(PROTOCOL, '[{"name": "f", "arguments": [1]}]'), [("f", {"_raw": [1]})])
    assert_calls(read_calls(PROTOCOL, '[{"name": "f", "arguments": null}]'), [("f", {})])


def test_compliance():
    assert PROTOCOL.parse('[{"name": "f", "arguments": {}}]').compliant
    assert PROTOCOL.parse("[{'name': 'f', 'arguments': {},}]").compliant  # the grammar's JSON
    assert PROTOCOL.parse('```json\n[{"name": "f", "arguments": {}}]\n```').compliant
    lone = PROTOCOL.parse('{"name": "f", "arguments": {}}')
    assert not lone.compliant and "without the array brackets" in lone.notes[0]
    assert not PROTOCOL.parse('Here: [{"name": "f", "arguments": {}}]').compliant
    assert not PROTOCOL.parse('[{"name": "f", "arguments": {}}, 3]').compliant


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('Calling it:\n[{"name": "f", "arguments": {"a": 1,, "b": 2}}]')
    assert extraction.calls == ()
    assert extraction.notes == ("the array could not be read: line 2, column 37: expected '}' or a double-quoted "
                                "string or a single-quoted string, found ','",)


def test_truncated_array_keeps_the_complete_calls():
    text = '[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {"b"'
    extraction = PROTOCOL.parse(text)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), [("f", {"a": 1})], context=text)
    assert "line 1, column 68" in extraction.notes[0] and "the end of the text" in extraction.notes[0]


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


def test_instructions_and_example():
    text = PROTOCOL.instructions()
    assert "[" in text and '"arguments"' in text
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5})
    assert PROTOCOL.example(call) == json.dumps([{"name": call.name, "arguments": call.arguments}])


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3))
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls):
    text = data.draw(lenient_reply(calls))
    assert_calls(read_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)
    assert PROTOCOL.parse(text).compliant
