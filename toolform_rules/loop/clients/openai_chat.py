"""The call loop's client for OpenAI Chat Completions over the official ``openai`` SDK, and for every
server that speaks it (vLLM, llama.cpp's server, Ollama, LM Studio: point the SDK's ``base_url`` at
them).

The neutral messages (see :mod:`toolform_rules.loop.clients`) become Chat Completions messages: an
assistant's native calls become ``tool_calls`` (``{"id", "type": "function", "function": {"name",
"arguments": <JSON text>}}``), a call's result a ``{"role": "tool", "tool_call_id", "content"}`` message.
The answer becomes a :class:`ChatReply`, the reasoning apart: ``<think>`` blocks in the content and the
``reasoning_content`` (or ``reasoning``) field that vLLM and llama.cpp add to the message.

``openai`` is imported only when it is needed (an optional extra): this module imports without it.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from . import ChatReply, ClientError, Message, NativeCall, native_call_fields, split_reasoning
from .sdk_calls import SDKChat

PROVIDER = "openai"

# the message fields OpenAI-compatible servers put a reasoning model's thoughts in (vLLM and llama.cpp:
# reasoning_content; newer vLLM, OpenRouter and Ollama's compatible API: reasoning)
REASONING_FIELDS = ("reasoning_content", "reasoning")


class OpenAIChat(SDKChat):
    """A :class:`~toolform_rules.loop.clients.ChatClient` over an ``openai.OpenAI`` or ``openai.AsyncOpenAI``
    client: ``complete`` and ``acomplete`` ask ``model`` through Chat Completions; ``timeout`` (seconds) is
    each request's, and ``params`` (``temperature``, ``max_tokens``, ``tool_choice``, ...) go to every
    ``chat.completions.create`` as they are.

    With a sync client, ``acomplete`` runs the call in a worker thread (the event loop is not blocked).
    With an async client, ``complete`` raises :class:`ClientError`: it cannot run the client's coroutine
    safely from code that may already be inside an event loop; use ``acomplete`` (or give a sync client).

    >>> chat = OpenAIChat(object(), "qwen3-8b", timeout=30, temperature=0)
    >>> chat.provider, chat.model, chat.params
    ('openai', 'qwen3-8b', {'temperature': 0})
    """

    provider = PROVIDER
    sync_client = "openai.OpenAI"

    def request(self, messages: Sequence[Message], tools: Any = None) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``messages`` and ``tools``.

        >>> OpenAIChat(object(), "m").request([{"role": "user", "content": "hi"}])
        {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}
        """
        arguments: dict[str, Any] = {"model": self.model, "messages": openai_messages(messages)}
        return self._options(arguments, tools)

    def _create(self) -> Any:
        return getattr(getattr(getattr(self.client, "chat", None), "completions", None), "create", None)

    def _reply(self, answer: Mapping[str, Any], latency: float) -> ChatReply:
        return openai_reply(answer, latency=latency)


def openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The neutral ``messages`` as Chat Completions messages.

    A native call's arguments are sent as JSON text: a dict is dumped, text (as the provider gave it, even
    invalid) is sent as it is.  A tool result's ``name`` is not sent (the ``tool`` message has no such
    field; ``tool_call_id`` ties it to its call).

    >>> calls = [NativeCall("call_1", "f", {"x": 1})]
    >>> openai_messages([{"role": "assistant", "content": "", "tool_calls": calls},
    ...                  {"role": "tool", "tool_call_id": "call_1", "name": "f", "content": "ok"}])
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'assistant', 'content': None,
      'tool_calls': [{'id': 'call_1', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"x": 1}'}}]},
     {'role': 'tool', 'tool_call_id': 'call_1', 'content': 'ok'}]
    """
    written: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content") or ""
        if role in ("system", "user"):
            written.append({"role": role, "content": content})
        elif role == "assistant":
            calls = message.get("tool_calls") or ()
            if not calls:
                written.append({"role": "assistant", "content": content})
                continue
            tool_calls = []
            for call in calls:
                call_id, name, arguments = native_call_fields(call)
                text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
                tool_calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": text}})
            # with tool calls and nothing said, OpenAI's own replies carry content null: send it back the same
            written.append({"role": "assistant", "content": content or None, "tool_calls": tool_calls})
        elif role == "tool":
            written.append({"role": "tool", "tool_call_id": str(message.get("tool_call_id", "")),
                            "content": content})
        else:
            raise ClientError(f"a message with role {role!r} cannot be sent", provider=PROVIDER)
    return written


def openai_reply(response: Mapping[str, Any], *, latency: float = 0.0) -> ChatReply:
    """The :class:`ChatReply` for a Chat Completions response (as JSON): the first choice's text, its
    reasoning (``<think>`` blocks and a ``reasoning_content``/``reasoning`` field), its tool calls with
    their arguments as the JSON text given, the tokens, the finish reason.

    >>> reply = openai_reply({"choices": [{"finish_reason": "tool_calls", "message": {
    ...     "content": "<think>f fits</think>", "tool_calls": [
    ...         {"id": "call_1", "function": {"name": "f", "arguments": '{"x": 1'}}]}}],
    ...     "usage": {"prompt_tokens": 9, "completion_tokens": 4}})
    >>> reply.text, reply.reasoning, reply.tool_calls[0].arguments, reply.output_tokens
    ('', 'f fits', '{"x": 1', 4)
    """
    choices = response.get("choices") if isinstance(response, Mapping) else None
    if not choices or not isinstance(choices[0], Mapping):
        raise ClientError("the response has no choices", provider=PROVIDER)
    choice = choices[0]
    try:
        message = choice.get("message") or {}
        text, think_reasoning = split_reasoning(message.get("content") or "")
        field_reasoning = next((message[field] for field in REASONING_FIELDS
                                if isinstance(message.get(field), str) and message[field].strip()), "")
        reasoning = "\n".join(part for part in (field_reasoning.strip(), think_reasoning) if part)
        calls = tuple(_native_call(call) for call in message.get("tool_calls") or ())
        usage = response.get("usage") or {}
        return ChatReply(text=text, tool_calls=calls, reasoning=reasoning,
                         input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                         latency=latency, finish_reason=str(choice.get("finish_reason") or ""), raw=response)
    except (AttributeError, TypeError, ValueError) as error:  # a response of an unexpected shape
        raise ClientError(f"the response cannot be read: {error}", provider=PROVIDER) from error


def _native_call(call: Mapping[str, Any]) -> NativeCall:
    """One of a message's ``tool_calls``, its arguments as the JSON text given."""
    function = call.get("function") or {}
    return NativeCall(str(call.get("id") or ""), str(function.get("name") or ""), function.get("arguments") or "")


__all__ = ["OpenAIChat", "openai_messages", "openai_reply"]
