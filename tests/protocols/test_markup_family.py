"""The markup/config/natural-language group: shared helpers, and what all eight protocols promise alike."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markup_family_support import SAMPLE_DOC, texts, toolset_for
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.markup_family.shared import (calls_from_document, fenced_blocks, in_string_after,
                                                     leftover_outside, text_of, xml_text, xml_value)

GROUP = ["xml_call", "xml_generic_call", "function_tags", "react", "toml_call", "yaml_call", "nl_intent",
         "nl_intent_structured"]
TEXT_VALUES = {"xml_call", "xml_generic_call", "function_tags", "nl_intent", "nl_intent_structured"}
ONE = {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12, "auto_renew": True,
       "contract_details": {"contract_id": "C-1", "status": "draft"}}
TWO = {"counterparty": "Beta", "value": 3, "term_months": 6}


@settings(max_examples=200, deadline=None)
@given(texts(30))
def test_xml_text_round_trips(text: str) -> None:
    assert xml_value(xml_text(text)) == text


def test_text_of_is_json_for_everything_but_strings() -> None:
    assert [text_of(v) for v in ("x", 1, 2.5, True, None, [1, {"a": "b"}])] == [
        "x", "1", "2.5", "true", "null", '[1, {"a": "b"}]']


def test_fenced_blocks_and_leftovers() -> None:
    text = "Sure:\n```yaml\na: 1\n```\nand\n```\nb\n"
    assert [(text[s:e], lang) for s, e, lang in fenced_blocks(text)] == [("a: 1\n", "yaml"), ("b\n", "")]
    assert not leftover_outside(" 1. x\n 2) y ", [(4, 5), (10, 11)])
    assert in_string_after('say "a') and not in_string_after('say "a" b')


def test_calls_from_document_shapes() -> None:
    assert calls_from_document({"name": "f", "arguments": '{"a": 1}'}) == [("f", {"a": 1})]
    assert calls_from_document([{"tool": "f", "args": {"a": 1}}, {"x": 1}]) == [("f", {"a": 1})]
    assert calls_from_document({"function": {"name": "f", "parameters": {"a": 1}}}) == [("f", {"a": 1})]
    assert calls_from_document({"name": "f", "arguments": [1]}) == [("f", {"_raw": [1]})]
    assert calls_from_document({"a": 1}) is None


@pytest.mark.parametrize("protocol_id", GROUP)
def test_info(protocol_id: str) -> None:
    info = get_protocol(protocol_id).info
    assert info.id == protocol_id and info.name and info.description and info.parallel
    assert info.text_values == (protocol_id in TEXT_VALUES)


@pytest.mark.parametrize("protocol_id", GROUP)
def test_the_reference_renders_read_back(protocol_id: str) -> None:
    """What the reference renders for one call and for two reads back here as those calls — also where the
    reference cannot read its own rendering (two YAML mappings in a row, two framed sentences, the example
    sentence's ``Acme, "Ltd"``, TOML inline tables written as JSON)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.ir import ToolCall as RefCall
        from toolform.protocols import get_protocol as ref_get_protocol
        reference = ref_get_protocol(protocol_id)
        one = reference.render_calls([RefCall("legal_draft_v3", ONE)])
        two = reference.render_calls([RefCall("legal_draft_v3", ONE), RefCall("legal_draft_v3", TWO)])
    protocol, toolset = get_protocol(protocol_id), toolset_for([SAMPLE_DOC])
    assert_calls(read_calls(protocol, one, toolset), [("legal_draft_v3", ONE)], equal_json, one)
    assert_calls(read_calls(protocol, two, toolset), [("legal_draft_v3", ONE), ("legal_draft_v3", TWO)], equal_json,
                 two)


@pytest.mark.parametrize("protocol_id", GROUP)
def test_instructions_are_our_own_words(protocol_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.protocols import get_protocol as ref_get_protocol
        from toolform.sdk import sample_toolset as ref_sample_toolset
        theirs = ref_get_protocol(protocol_id).instructions(ref_sample_toolset().universe)
    ours = get_protocol(protocol_id).instructions()
    assert ours and ours.strip() != theirs.strip()
    first_lines = {line.strip() for line in theirs.splitlines() if len(line.split()) > 4}
    assert not first_lines & {line.strip() for line in ours.splitlines()}


@pytest.mark.parametrize("protocol_id", GROUP)
def test_example_is_render_calls_of_one(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    call = ToolCall("legal_draft_v3", ONE)
    assert protocol.example(call) == protocol.render_calls([call])


@pytest.mark.parametrize("protocol_id", GROUP)
@pytest.mark.parametrize("text", ["", "   ", "Hello, how can I help?", "```\n```", "\x00\x01"])
def test_replies_without_a_call(protocol_id: str, text: str) -> None:
    assert_total(get_protocol(protocol_id), text, malformed=True)


@pytest.mark.parametrize("protocol_id", GROUP)
@given(st.sampled_from(["f", "My.Tool-2", "x"]))
@settings(max_examples=5, deadline=None)
def test_a_call_without_arguments(protocol_id: str, name: str) -> None:
    assert_round_trip(get_protocol(protocol_id), [ToolCall(name, {})], values=equal_json)
