"""slot_fill_call: round trips, unfilled slots, skeletons, the fast path against the grammar, the reference."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_family_cases import (JSON_VALUES, MALFORMED_INPUTS, NASTY_INPUTS, bfcl_calls, fast_calls, grammar_calls,
                               lenient_reply, reference_pairs, sample_calls)
from support.bfcl import function_docs
from support.protocol_checks import as_pipeline_reads, assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import load_tools, sample_tool, sample_toolset
from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats.json_family.shared import read_grammar
from toolform_rules.replies.formats.json_family.slot_fill_call import TYPE_PLACEHOLDERS, skeleton

PROTOCOL = get_protocol("slot_fill_call")


def _holds_placeholder_text(value):
    """Whether a string value somewhere in ``value`` is a skeleton's placeholder text (``"<number>"``)."""
    if isinstance(value, str):
        return value in TYPE_PLACEHOLDERS
    if isinstance(value, dict):
        return any(_holds_placeholder_text(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_placeholder_text(item) for item in value)
    return False


def assert_round_trip_noting_placeholders(calls):
    """The shared round trip, where a value that is a placeholder's text (``"<number>"``, quoted: a value,
    not a slot) is kept and noted, compliant still: one such note for each call that holds one, no other."""
    extraction = assert_round_trip(PROTOCOL, calls, notes_allowed=True)
    kept = [f"call {number} keeps a placeholder as its value" for number, call in enumerate(calls, 1)
            if _holds_placeholder_text(call.arguments)]
    assert [note.partition(":")[0] for note in extraction.notes] == kept, (calls, extraction.notes)


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip_noting_placeholders(calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip_noting_placeholders(calls)


def test_placeholder_text_as_a_value_round_trips_noted():
    assert_round_trip_noting_placeholders([ToolCall("f", {"a": "<number>", "b": ["<string>"]}), ToolCall("g", {})])


def test_rendering_is_the_indented_call_object():
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5})
    assert PROTOCOL.example(call) == json.dumps({"name": call.name, "arguments": call.arguments}, indent=2)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
       st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4))
def test_fast_path_and_grammar_agree(name, arguments):
    text = PROTOCOL.render_calls([ToolCall(name, arguments)])
    assert_calls(fast_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=1))
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls):
    text = data.draw(lenient_reply(calls, container="lines"))
    assert_calls(read_calls(PROTOCOL, text), grammar_calls(PROTOCOL, text), context=text)


def _tool(doc):
    """The tool a BFCL function doc describes."""
    return load_tools(doc).tools[0]


@pytest.mark.parametrize("index", range(0, 600, 7))
def test_every_skeleton_is_read_by_the_grammar_with_every_slot_unfilled(index):
    tool = _tool(function_docs()[index])
    text = skeleton(tool)
    extraction = PROTOCOL.parse(text)
    assert [c.name for c in extraction.calls] == [tool.name]
    if tool.parameters.properties:
        assert not extraction.compliant and "unfilled" in extraction.notes[0]
    else:  # nothing to fill: the skeleton is already a complete call
        assert_calls(as_pipeline_reads(PROTOCOL, extraction), [(tool.name, {})], context=text)
        assert extraction.compliant and not extraction.notes, (text, extraction)


def test_unfilled_slots_are_dropped_and_named():
    text = skeleton(sample_tool()).replace("<string>", '"Acme"', 1).replace("<number>", "12.5")
    extraction = PROTOCOL.parse(text)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction),
                 [("legal_draft_v3", {"counterparty": "Acme", "value": 12.5, "contract_details": {}})], context=text)
    assert extraction.notes == ('call 1 left 4 slot(s) unfilled: term_months (<integer>), auto_renew (<boolean>), '
                                'contract_details.contract_id (<string>), contract_details.status (<one of "draft" '
                                '| "review" | "signed" | "expired">)',)


def test_instructions_carry_the_skeletons():
    text = PROTOCOL.instructions(sample_toolset())
    assert skeleton(sample_tool()) in text
    assert "<...>" in PROTOCOL.instructions()


AGREE = [
    '{\n  "name": "legal_draft_v3",\n  "arguments": {\n    "counterparty": "Acme",\n    "value": 1200.5\n  }\n}',
    'Here is the filled template:\n```json\n{\n  "name": "legal_draft_v3",\n  "arguments": {\n    "counterparty": '
    '"Acme",\n    "value": 12,\n  }\n}\n```',
    '[{"name": "legal_draft_v3", "arguments": {"value": 1}}, {"name": "x", "arguments": {"b": 2}}]',
    '{\n  "name": "legal_draft_v3",\n  "arguments": {\n    "counterparty": "Acme",\n    "value": 1200.5',
    "{'name': 'Legal_Draft_V3', 'arguments': {'auto_renew': True,},}",
    "",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    assert_calls(read_calls(PROTOCOL, text), reference_pairs("slot_fill_call", text), context=text)


def test_divergences_from_the_reference():
    """Divergences:
    - several filled skeletons give several calls (the rendered form of two calls); the reference
      reads the first only, so its own rendering loses calls;
    - a slot left unfilled (``<number>``) drops that argument and names it in a note, and the other
      arguments are kept; the reference finds no call at all, so a model that filled all but one
      slot cannot be told from one that wrote nothing;
    - ``...`` left in a slot is an unfilled slot; the reference returns Python's ``Ellipsis`` as the
      value (not a JSON value)."""
    two = PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {"b": 2})])
    assert_calls(reference_pairs("slot_fill_call", two), [("f", {"a": 1})])
    assert_calls(read_calls(PROTOCOL, two), [("f", {"a": 1}), ("g", {"b": 2})])
    partial = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": <number>}}'
    assert reference_pairs("slot_fill_call", partial) == []
    assert_calls(read_calls(PROTOCOL, partial), [("legal_draft_v3", {"counterparty": "Acme"})])
    dots = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": ...}}'
    assert_calls(reference_pairs("slot_fill_call", dots), [("legal_draft_v3", {"counterparty": "Acme", "value": ...})])
    assert_calls(read_calls(PROTOCOL, dots), [("legal_draft_v3", {"counterparty": "Acme"})])


def test_compliance():
    assert PROTOCOL.parse(PROTOCOL.render_calls([ToolCall("f", {"a": 1})])).compliant
    assert PROTOCOL.parse('```json\n{"name": "f", "arguments": {}}\n```').compliant
    assert not PROTOCOL.parse('Done:\n{"name": "f", "arguments": {}}').compliant
    assert not PROTOCOL.parse('{"name": "f", "arguments": {"a": <integer>}}').compliant
    quoted = PROTOCOL.parse('{"name": "f", "arguments": {"a": "<string>"}}')
    assert quoted.compliant and quoted.notes == ("call 1 keeps a placeholder as its value: a",)


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('{\n  "name": "f",\n  "arguments": {\n    "a": <number\n  }\n}')
    assert extraction.calls == ()
    assert extraction.notes[0].startswith("no filled skeleton could be read: line 4, column 10: expected ")
    with pytest.raises(GrammarFailure) as failure:
        read_grammar(PROTOCOL.grammar, '{"a": <number}', PROTOCOL.transformer)
    assert (failure.value.line, failure.value.column) == (1, 7)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    assert_total(PROTOCOL, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='[]{}"\':,\\ \nab1tTnN.-e<>…', max_size=60))
def test_never_raises_on_json_like_noise(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", MALFORMED_INPUTS, ids=range(len(MALFORMED_INPUTS)))
def test_malformed_nasty_inputs_give_no_call_and_say_why(text):
    assert_total(PROTOCOL, text, malformed=True)
