"""The JSON family's one pass: a well-formed call, with prose, reasoning or a code fence around it, is read
by the fast readers alone; prose brackets cost no grammar; fences with any info string are stripped."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_family_cases import FAST_ONLY, fast_calls, sample_calls
from support.protocol_checks import as_pipeline_reads, read_calls
from toolform_rules import ToolCall, get_protocol, sample_toolset

PROTOCOLS = ["json_object", "json_array", "jsonl_call", "code_block_json", "native", "slot_fill_call",
             "two_step_call", "tool_call_tags"]
CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme Holdings", "value": 12000, "term_months": 24,
                                   "auto_renew": True, "contract_details": {"contract_id": "C-1042"}})
WRAPS = {
    "prose around": "Sure — I'll draft that contract for you now.\n{}\nLet me know if anything should change.",
    "reasoning first": "<think>The user wants a contract drafted.</think>\n{}",
    "a code fence": "```json\n{}\n```",
    "prose brackets": "I {{think}} this [one] fits (see {{below}}).\n{}\nDone [ok].",
}


@pytest.mark.parametrize("wrap", WRAPS)
@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_call_among_prose_is_read_without_the_grammar(protocol_id: str, wrap: str) -> None:
    protocol = get_protocol(protocol_id)
    text = WRAPS[wrap].format(protocol.render_calls([CALL]))
    want = [(CALL.name, CALL.arguments)]
    assert fast_calls(protocol, text) == want, protocol.parse(text, limits=FAST_ONLY)
    assert read_calls(protocol, text, sample_toolset()) == want


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PROTOCOLS), sample_calls(max_calls=3), st.sampled_from(list(WRAPS)))
def test_well_formed_calls_never_need_the_grammar(protocol_id: str, calls: list[ToolCall], wrap: str) -> None:
    """What the fast readers give alone is what the whole parse gives."""
    protocol = get_protocol(protocol_id)
    text = WRAPS[wrap].format(protocol.render_calls(calls))
    fast = fast_calls(protocol, text)
    assert fast is not None, protocol.parse(text, limits=FAST_ONLY).notes
    assert fast == as_pipeline_reads(protocol, protocol.parse(text))


@pytest.mark.parametrize("info", ["json", "JSON", "tool-code", "c++", "json5", ""])
def test_a_code_fence_with_any_info_string_is_stripped(info: str) -> None:
    """One fence around the whole reply goes, whatever its language tag (``reading.strip_code_fence``)."""
    array = get_protocol("json_array").render_calls([CALL])
    extraction = get_protocol("json_array").parse(f"```{info}\n{array}\n```")
    assert [c.name for c in extraction.calls] == [CALL.name]
    assert extraction.compliant and not extraction.notes
    lines = get_protocol("jsonl_call").parse(f"```{info}\n{get_protocol('jsonl_call').render_calls([CALL, CALL])}\n```")
    assert len(lines.calls) == 2 and lines.compliant
    native = get_protocol("native").parse(f"```{info}\n{get_protocol('native').render_calls([CALL])}\n```")
    assert native.compliant and native.notes == ("the JSON is inside a code fence",)


def test_json_object_looks_inside_a_value_that_holds_no_call() -> None:
    protocol = get_protocol("json_object")
    text = '{"thought": "drafting", "call": {"name": "f", "arguments": {"a": 1}}}'
    assert read_calls(protocol, text) == [("f", {"a": 1})]
    assert not protocol.parse(text).compliant
    broken = '{"name": "f", "parameters": {{"name": "f", "arguments": {"a": 1}}}'
    assert read_calls(protocol, broken) == [("f", {"a": 1})]


def test_prose_braces_alone_give_a_note_that_says_where_they_stop_being_json() -> None:
    """A bracket group of prose is not handed to the grammar to be read, only to say where it stops, when a
    note needs it."""
    extraction = get_protocol("native").parse("I {think} so.")
    assert extraction.calls == ()
    assert extraction.notes[-1] == "no JSON could be read: line 1, column 4: expected '}' or a double-quoted string " \
                                   "or a single-quoted string, found 't'"
