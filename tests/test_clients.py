"""The SDK clients against a real loopback server, through the official ``openai`` and ``anthropic`` SDKs:
what they send (the exact request JSON), what they read back, and that every failure is a ClientError."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from support.wire_server import (AnthropicReply, Delay, HttpError, OpenAIReply, ToolCall, closed_port_url, serve,
                                 text_block, thinking_block, tool_use_block)
from toolform_rules import sample_toolset
from toolform_rules.loop.clients import ChatClient, ClientError, NativeCall
from toolform_rules.loop.clients.anthropic_chat import AnthropicChat
from toolform_rules.loop.clients.openai_chat import OpenAIChat

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

# generous for a loaded 2-core machine, yet a hung test ends; the timeout tests use their own, short one
CLIENT_TIMEOUT = 10.0
SHORT_TIMEOUT = 0.4
QUESTION = [{"role": "user", "content": "Draft a contract with Acme."}]


def openai_chat(base_url: str, *, timeout: float = CLIENT_TIMEOUT, asynchronous: bool = False,
                **params: Any) -> OpenAIChat:
    """An OpenAIChat over the SDK pointed at the loopback server, without retries (a retry would make an
    error test slow and send a second request the script did not plan)."""
    sdk_class = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    sdk_client = sdk_class(base_url=base_url + "/v1", api_key="test", max_retries=0, timeout=timeout)
    return OpenAIChat(sdk_client, "gpt-test", **params)


def anthropic_chat(base_url: str, *, timeout: float = CLIENT_TIMEOUT, asynchronous: bool = False,
                   **params: Any) -> AnthropicChat:
    """An AnthropicChat over the SDK pointed at the loopback server, without retries."""
    sdk_class = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    sdk_client = sdk_class(base_url=base_url, api_key="test", max_retries=0, timeout=timeout)
    return AnthropicChat(sdk_client, "claude-test", **params)


def as_json(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists), to compare with what the server got."""
    return json.loads(json.dumps(value))


# --- the loopback server itself -------------------------------------------------------------------------


def test_the_server_answers_what_the_sdks_own_response_models_accept():
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    calls = (ToolCall("call_1", "f", '{"x": 1}'),)
    completion = ChatCompletion.model_validate(OpenAIReply(None, calls, "tool_calls").render())
    assert completion.choices[0].message.tool_calls[0].function.arguments == '{"x": 1}'
    message = Message.model_validate(AnthropicReply(
        (thinking_block("hm"), text_block("ok"), tool_use_block("toolu_1", "f", {"x": 1})), "tool_use").render())
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    assert message.usage.input_tokens == 13


def test_the_clients_are_chat_clients():
    assert isinstance(OpenAIChat(object(), "m"), ChatClient)
    assert isinstance(AnthropicChat(object(), "m"), ChatClient)
    assert (OpenAIChat.provider, AnthropicChat.provider) == ("openai", "anthropic")


# --- OpenAI Chat Completions ------------------------------------------------------------------------------


def test_openai_text_reply_with_its_tokens_and_what_was_sent():
    with serve([OpenAIReply("Which counterparty?", prompt_tokens=21, completion_tokens=4)]) as server:
        reply = openai_chat(server.base_url).complete(QUESTION)
    assert reply.text == "Which counterparty?" and reply.reasoning == "" and reply.tool_calls == ()
    assert (reply.input_tokens, reply.output_tokens, reply.finish_reason) == (21, 4, "stop")
    assert reply.latency > 0 and reply.raw["id"] == "chatcmpl-test0001"
    (request,) = server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test"
    assert request.body == {"model": "gpt-test", "messages": QUESTION}  # no tools key when none are given


def test_openai_think_blocks_are_kept_apart_from_the_text():
    with serve([OpenAIReply("<think>Acme is the counterparty.</think>\nI'll draft it.")]) as server:
        reply = openai_chat(server.base_url).complete(QUESTION)
    assert (reply.text, reply.reasoning) == ("I'll draft it.", "Acme is the counterparty.")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_openai_compatible_reasoning_field_is_kept_apart(field):
    reply_step = OpenAIReply("Done.", message_extra=((field, "Thought about Acme."),))
    with serve([reply_step]) as server:
        reply = openai_chat(server.base_url).complete(QUESTION)
    assert (reply.text, reply.reasoning) == ("Done.", "Thought about Acme.")
    assert reply.raw["choices"][0]["message"][field] == "Thought about Acme."


def test_openai_native_calls_keep_their_arguments_as_the_text_given_even_invalid():
    calls = (ToolCall("call_1", "legal_draft_v3", '{"counterparty": "Acme", "value": 5}'),
             ToolCall("call_2", "legal_draft_v3", '{"counterparty": "Acme", "value": '))
    with serve([OpenAIReply(None, calls, "tool_calls")]) as server:
        reply = openai_chat(server.base_url).complete(QUESTION, tools=sample_toolset())
    assert reply.text == "" and reply.finish_reason == "tool_calls"
    assert reply.tool_calls == (NativeCall("call_1", "legal_draft_v3", '{"counterparty": "Acme", "value": 5}'),
                                NativeCall("call_2", "legal_draft_v3", '{"counterparty": "Acme", "value": '))


def test_openai_tools_are_sent_in_openais_shape_with_the_params():
    toolset = sample_toolset()
    with serve([OpenAIReply("ok")]) as server:
        openai_chat(server.base_url, temperature=0, max_tokens=64).complete(QUESTION, tools=toolset)
    body = server.bodies[0]
    assert body["tools"] == as_json(toolset.to_openai())
    assert body["tools"][0]["type"] == "function" and body["tools"][0]["function"]["name"] == "legal_draft_v3"
    assert (body["temperature"], body["max_tokens"]) == (0, 64)


def test_openai_a_native_call_and_its_result_go_back_as_tool_messages():
    conversation = [
        {"role": "system", "content": "You draft contracts."},
        *QUESTION,
        {"role": "assistant", "content": "",
         "tool_calls": [NativeCall("call_1", "legal_draft_v3", '{"counterparty": "Acme"}'),
                        NativeCall("call_2", "legal_draft_v3", {"counterparty": "Beta", "value": 5})]},
        {"role": "tool", "tool_call_id": "call_1", "name": "legal_draft_v3", "content": "draft 17"},
        {"role": "tool", "tool_call_id": "call_2", "name": "legal_draft_v3", "content": "error: value too low"},
    ]
    with serve([OpenAIReply("Both drafted.")]) as server:
        reply = openai_chat(server.base_url).complete(conversation, tools=sample_toolset())
    assert reply.text == "Both drafted."
    assert server.bodies[0] == {
        "model": "gpt-test",
        "tools": as_json(sample_toolset().to_openai()),
        "messages": [
            {"role": "system", "content": "You draft contracts."},
            {"role": "user", "content": "Draft a contract with Acme."},
            {"role": "assistant", "content": None, "tool_calls": [
                # text arguments go as they are; an object is written as JSON text
                {"id": "call_1", "type": "function",
                 "function": {"name": "legal_draft_v3", "arguments": '{"counterparty": "Acme"}'}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "legal_draft_v3", "arguments": '{"counterparty": "Beta", "value": 5}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "draft 17"},
            {"role": "tool", "tool_call_id": "call_2", "content": "error: value too low"},
        ],
    }


@pytest.mark.parametrize("status", [400, 401, 429, 500])
def test_openai_http_errors_are_client_errors_with_the_status(status):
    with serve([HttpError(status, f"scripted {status}")]) as server:
        with pytest.raises(ClientError) as raised:
            openai_chat(server.base_url).complete(QUESTION)
    assert raised.value.status == status and raised.value.provider == "openai"
    assert f"scripted {status}" in str(raised.value)
    assert len(server.received) == 1  # no retry


def test_openai_timeout_is_a_client_error():
    with serve([Delay(SHORT_TIMEOUT * 5, OpenAIReply("too late"))]) as server:
        with pytest.raises(ClientError, match="timed out") as raised:
            openai_chat(server.base_url, timeout=SHORT_TIMEOUT).complete(QUESTION)
    assert raised.value.status is None  # the client gave up: waiting would have read the reply


def test_openai_connection_refused_is_a_client_error():
    with pytest.raises(ClientError, match="could not connect") as raised:
        openai_chat(closed_port_url()).complete(QUESTION)
    assert raised.value.provider == "openai" and raised.value.status is None


def test_openai_response_without_choices_is_a_client_error():
    with serve([OpenAIReply("x", no_choices=True)]) as server:
        with pytest.raises(ClientError, match="no choices"):
            openai_chat(server.base_url).complete(QUESTION)


def test_openai_async_client_serves_acomplete():
    calls = (ToolCall("call_1", "legal_draft_v3", '{"counterparty": "Acme"}'),)
    with serve([OpenAIReply(None, calls, "tool_calls", prompt_tokens=30, completion_tokens=9),
                HttpError(500)]) as server:
        chat = openai_chat(server.base_url, asynchronous=True)
        reply = asyncio.run(chat.acomplete(QUESTION, tools=sample_toolset()))
        with pytest.raises(ClientError) as raised:
            asyncio.run(chat.acomplete(QUESTION))
    assert reply.tool_calls == (NativeCall("call_1", "legal_draft_v3", '{"counterparty": "Acme"}'),)
    assert (reply.input_tokens, reply.output_tokens) == (30, 9)
    assert raised.value.status == 500
    assert server.bodies[0]["tools"] == as_json(sample_toolset().to_openai())
    assert server.received[0].headers["x-stainless-async"].startswith("async")


def test_openai_async_timeout_and_refusal_are_client_errors():
    with serve([Delay(SHORT_TIMEOUT * 5)]) as server:
        with pytest.raises(ClientError, match="timed out"):
            asyncio.run(openai_chat(server.base_url, timeout=SHORT_TIMEOUT, asynchronous=True).acomplete(QUESTION))
    with pytest.raises(ClientError, match="could not connect"):
        asyncio.run(openai_chat(closed_port_url(), asynchronous=True).acomplete(QUESTION))


def test_openai_sync_client_serves_acomplete_and_async_client_refuses_complete():
    with serve([OpenAIReply("from a thread")]) as server:
        reply = asyncio.run(openai_chat(server.base_url).acomplete(QUESTION))
        with pytest.raises(ClientError, match="acomplete"):
            openai_chat(server.base_url, asynchronous=True).complete(QUESTION)
    assert reply.text == "from a thread"
    assert len(server.received) == 1  # the refused complete() sent nothing


def test_per_client_timeout_overrides_the_sdks():
    with serve([Delay(SHORT_TIMEOUT * 5)]) as server:
        chat = openai_chat(server.base_url, timeout=CLIENT_TIMEOUT)
        chat.timeout = SHORT_TIMEOUT
        with pytest.raises(ClientError, match="timed out"):
            chat.complete(QUESTION)


# --- Anthropic Messages -----------------------------------------------------------------------------------


def test_anthropic_text_reply_with_its_tokens_and_what_was_sent():
    with serve([AnthropicReply((text_block("Which counterparty?"),), input_tokens=25, output_tokens=6)]) as server:
        reply = anthropic_chat(server.base_url, max_tokens=256).complete(
            [{"role": "system", "content": "You draft contracts."}, *QUESTION])
    assert (reply.text, reply.reasoning, reply.tool_calls) == ("Which counterparty?", "", ())
    assert (reply.input_tokens, reply.output_tokens, reply.finish_reason) == (25, 6, "end_turn")
    assert reply.latency > 0 and reply.raw["id"] == "msg_test0001"
    (request,) = server.received
    assert request.path == "/v1/messages" and "anthropic-version" in request.headers
    assert request.body == {"model": "claude-test", "max_tokens": 256, "system": "You draft contracts.",
                            "messages": QUESTION}


def test_anthropic_thinking_blocks_and_think_tags_are_kept_apart():
    blocks = (thinking_block("Acme is the counterparty."), text_block("<think>And the value?</think>Drafting."))
    with serve([AnthropicReply(blocks)]) as server:
        reply = anthropic_chat(server.base_url).complete(QUESTION)
    assert reply.text == "Drafting."
    assert reply.reasoning == "Acme is the counterparty.\nAnd the value?"


def test_anthropic_tool_use_blocks_are_native_calls_with_their_input_object():
    blocks = (text_block("I'll draft both."),
              tool_use_block("toolu_1", "legal_draft_v3", {"counterparty": "Acme", "value": 5}),
              tool_use_block("toolu_2", "legal_draft_v3", {"counterparty": "Beta"}))
    with serve([AnthropicReply(blocks, "tool_use")]) as server:
        reply = anthropic_chat(server.base_url).complete(QUESTION, tools=sample_toolset())
    assert reply.text == "I'll draft both." and reply.finish_reason == "tool_use"
    assert reply.tool_calls == (NativeCall("toolu_1", "legal_draft_v3", {"counterparty": "Acme", "value": 5}),
                                NativeCall("toolu_2", "legal_draft_v3", {"counterparty": "Beta"}))


def test_anthropic_tools_are_sent_in_anthropics_shape():
    toolset = sample_toolset()
    with serve([AnthropicReply((text_block("ok"),))]) as server:
        anthropic_chat(server.base_url, stop_sequences=["END"]).complete(QUESTION, tools=toolset)
    body = server.bodies[0]
    assert body["tools"] == as_json(toolset.to_anthropic())
    assert body["tools"][0]["name"] == "legal_draft_v3" and "input_schema" in body["tools"][0]
    assert body["stop_sequences"] == ["END"]


def test_anthropic_results_go_back_as_tool_result_blocks_of_one_user_message():
    conversation = [
        {"role": "system", "content": "You draft contracts."},
        *QUESTION,
        {"role": "assistant", "content": "I'll draft both.",
         "tool_calls": [NativeCall("toolu_1", "legal_draft_v3", {"counterparty": "Acme"}),
                        NativeCall("toolu_2", "legal_draft_v3", '{"counterparty": "Beta"}'),
                        NativeCall("toolu_3", "legal_draft_v3", '{"counterparty": ')]},
        {"role": "tool", "tool_call_id": "toolu_1", "name": "legal_draft_v3", "content": "draft 17"},
        {"role": "tool", "tool_call_id": "toolu_2", "name": "legal_draft_v3", "content": "draft 18"},
        {"role": "tool", "tool_call_id": "toolu_3", "name": "legal_draft_v3", "content": "error: bad JSON"},
        {"role": "system", "content": "Answer in one line."},
        {"role": "user", "content": "And now?"},
    ]
    with serve([AnthropicReply((text_block("Drafted."),))]) as server:
        reply = anthropic_chat(server.base_url).complete(conversation, tools=sample_toolset())
    assert reply.text == "Drafted."
    assert server.bodies[0] == {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": "You draft contracts.\n\nAnswer in one line.",
        "tools": as_json(sample_toolset().to_anthropic()),
        "messages": [
            {"role": "user", "content": "Draft a contract with Acme."},
            {"role": "assistant", "content": [
                {"type": "text", "text": "I'll draft both."},
                {"type": "tool_use", "id": "toolu_1", "name": "legal_draft_v3", "input": {"counterparty": "Acme"}},
                {"type": "tool_use", "id": "toolu_2", "name": "legal_draft_v3", "input": {"counterparty": "Beta"}},
                # arguments that are not JSON cannot be an input object: {} (the result says what failed)
                {"type": "tool_use", "id": "toolu_3", "name": "legal_draft_v3", "input": {}}]},
            # the results, then the user's next words, in the one user turn the API wants
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "draft 17"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "draft 18"},
                {"type": "tool_result", "tool_use_id": "toolu_3", "content": "error: bad JSON"},
                {"type": "text", "text": "And now?"}]},
        ],
    }


def test_anthropic_consecutive_turns_of_one_role_are_merged():
    conversation = [{"role": "user", "content": "One."}, {"role": "user", "content": "Two."},
                    {"role": "assistant", "content": "Three."}, {"role": "assistant", "content": "Four."}]
    with serve([AnthropicReply((text_block("ok"),))]) as server:
        anthropic_chat(server.base_url).complete(conversation)
    assert server.bodies[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Three."}, {"type": "text", "text": "Four."}]}]


@pytest.mark.parametrize("status", [400, 401, 429, 500, 529])
def test_anthropic_http_errors_are_client_errors_with_the_status(status):
    with serve([HttpError(status, f"scripted {status}")]) as server:
        with pytest.raises(ClientError) as raised:
            anthropic_chat(server.base_url).complete(QUESTION)
    assert raised.value.status == status and raised.value.provider == "anthropic"
    assert f"scripted {status}" in str(raised.value)
    assert len(server.received) == 1


def test_anthropic_timeout_is_a_client_error():
    with serve([Delay(SHORT_TIMEOUT * 5, AnthropicReply((text_block("too late"),)))]) as server:
        with pytest.raises(ClientError, match="timed out") as raised:
            anthropic_chat(server.base_url, timeout=SHORT_TIMEOUT).complete(QUESTION)
    assert raised.value.provider == "anthropic"


def test_anthropic_connection_refused_is_a_client_error():
    with pytest.raises(ClientError, match="could not connect"):
        anthropic_chat(closed_port_url()).complete(QUESTION)


def test_anthropic_async_client_serves_acomplete():
    blocks = (thinking_block("Acme."), tool_use_block("toolu_1", "legal_draft_v3", {"counterparty": "Acme"}))
    with serve([AnthropicReply(blocks, "tool_use", input_tokens=40, output_tokens=12), HttpError(429)]) as server:
        chat = anthropic_chat(server.base_url, asynchronous=True)
        reply = asyncio.run(chat.acomplete(QUESTION, tools=sample_toolset()))
        with pytest.raises(ClientError) as raised:
            asyncio.run(chat.acomplete(QUESTION))
        with pytest.raises(ClientError, match="acomplete"):
            chat.complete(QUESTION)
    assert reply.tool_calls == (NativeCall("toolu_1", "legal_draft_v3", {"counterparty": "Acme"}),)
    assert (reply.reasoning, reply.input_tokens, reply.output_tokens) == ("Acme.", 40, 12)
    assert raised.value.status == 429
    assert len(server.received) == 2


def test_anthropic_async_timeout_and_sync_client_acomplete():
    # two servers, not one script of two steps: on a loaded machine the timed-out request may never reach the
    # server, and the second would then be answered with the first's delay
    with serve([Delay(SHORT_TIMEOUT * 5, AnthropicReply((text_block("too late"),)))]) as server:
        with pytest.raises(ClientError, match="timed out"):
            asyncio.run(anthropic_chat(server.base_url, timeout=SHORT_TIMEOUT, asynchronous=True)
                        .acomplete(QUESTION))
    with serve([AnthropicReply((text_block("from a thread"),))]) as server:
        reply = asyncio.run(anthropic_chat(server.base_url).acomplete(QUESTION))
    assert reply.text == "from a thread"


# --- without the SDKs -------------------------------------------------------------------------------------


class _FailingCompletions:
    """A look-alike SDK resource whose ``create`` fails as no SDK documents."""

    def create(self, **arguments: Any) -> Any:
        raise RuntimeError("socket on fire")


class _LookAlikeClient:
    def __init__(self) -> None:
        self.chat = type("Chat", (), {"completions": _FailingCompletions()})()
        self.messages = _FailingCompletions()


def test_without_the_sdks_installed_a_failure_is_still_a_client_error(monkeypatch):
    # None in sys.modules makes "import openai" fail, as on an install without the extras
    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ClientError, match="RuntimeError: socket on fire"):
        OpenAIChat(_LookAlikeClient(), "m").complete(QUESTION)
    with pytest.raises(ClientError, match="RuntimeError: socket on fire"):
        AnthropicChat(_LookAlikeClient(), "m").complete(QUESTION)


def test_an_unknown_role_is_a_client_error_before_anything_is_sent():
    with serve([]) as server:
        with pytest.raises(ClientError, match="role 'robot'"):
            openai_chat(server.base_url).complete([{"role": "robot", "content": "beep"}])
        with pytest.raises(ClientError, match="role 'robot'"):
            anthropic_chat(server.base_url).complete([{"role": "robot", "content": "beep"}])
    assert server.received == []
