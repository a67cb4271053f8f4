"""parse_stream: however a reply is cut into chunks, close() is parse_reply of the whole text, and the calls the
events announce as done are the calls close() holds (issue 11, item 5)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_cases import all_cases, toolset_json
from toolform_rules import ToolCall, get_protocol, load_tools, parse_reply, parse_stream, protocol_ids, sample_toolset

CASES = all_cases()
SAMPLE = ToolCall("legal_draft_v3", {"counterparty": "Acme Holdings", "value": 12000, "term_months": 24,
                                     "auto_renew": True, "contract_details": {"contract_id": "C-1042"}})


def _cuts(draw, text: str) -> list[str]:
    points = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=12))))
    if draw(st.booleans()) and len(text) < 400:  # now and then, one character at a time
        return list(text)
    pieces, at = [], 0
    for point in points + [len(text)]:
        pieces.append(text[at:point])
        at = point
    return pieces


def _streamed(text: str, tools, protocol_id: str, pieces: list[str]):
    stream = parse_stream(tools, protocol_id)
    events = [event for piece in pieces for event in stream.feed(piece)]
    closed = stream.close()
    return events + stream.final_events, closed


def _dump(calls) -> list[str]:
    return sorted(json.dumps(c.to_dict(), sort_keys=True, default=str) for c in calls)


def _check(text: str, tools, protocol_id: str, pieces: list[str]) -> None:
    assert "".join(pieces) == text
    events, closed = _streamed(text, tools, protocol_id, pieces)
    assert closed == parse_reply(text, tools, protocol_id)
    done = [e.call for e in events if e.kind == "call_done"]
    assert _dump(done) == _dump(closed.calls + closed.rejected), (protocol_id, pieces)
    started = [e.number for e in events if e.kind == "call_started"]
    assert started == sorted(set(started)), events  # each call announced once, in order
    # every call done was started; a call started may never be done (its text turned out not to be a call)
    assert {e.number for e in events if e.kind == "call_done"} <= set(started)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_chunking_of_an_engine_reply_closes_as_the_whole_reply(data) -> None:
    case = data.draw(st.sampled_from(CASES))
    text = case["reply"]
    _check(text, load_tools(toolset_json(case)), case["format"], _cuts(data.draw, text))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_chunking_of_a_rendered_call_closes_as_the_whole_reply(data) -> None:
    protocol_id = data.draw(st.sampled_from(protocol_ids("all")))
    text = "Sure.\n" + get_protocol(protocol_id).render_calls([SAMPLE, SAMPLE]) + "\nDone."
    _check(text, sample_toolset(), protocol_id, _cuts(data.draw, text))


@pytest.mark.parametrize("protocol_id", protocol_ids("all"))
def test_every_call_of_a_rendered_reply_is_announced_done_by_the_close(protocol_id: str) -> None:
    text = get_protocol(protocol_id).render_calls([SAMPLE, SAMPLE]) + "\n\nDone."
    stream = parse_stream(sample_toolset(), protocol_id)
    events = [event for character in text for event in stream.feed(character)]
    closed = stream.close()
    done = [e.call for e in events if e.kind == "call_done"]
    assert _dump(done + [e.call for e in stream.final_events if e.kind == "call_done"]) == \
        _dump(closed.calls + closed.rejected), protocol_id



def test_a_native_call_is_announced_by_name_before_its_arguments_are_done() -> None:
    stream = parse_stream(sample_toolset(), "kimi_k2")
    events = stream.feed("<|tool_call_begin|>functions.legal_draft_v3:0<|tool_call_argument_begin|>{\"counterparty\"")
    assert [(e.kind, e.name) for e in events][:1] == [("call_started", "legal_draft_v3")]
    events = stream.feed(': "Acme", "value": 5, "term_months": 12}<|tool_call_end|><|tool_calls_section_end|>')
    assert [e.kind for e in events] == ["arguments", "call_done"]
    assert events[-1].call is not None and events[-1].call.valid


def test_a_closed_stream_takes_no_more_text() -> None:
    stream = parse_stream(sample_toolset(), "json_object")
    stream.close()
    with pytest.raises(ValueError, match="closed"):
        stream.feed("x")


def test_an_unknown_option_is_refused_when_the_stream_is_made() -> None:
    with pytest.raises(TypeError, match="unknown options vaildate"):
        parse_stream(sample_toolset(), "json_object", vaildate=False)
