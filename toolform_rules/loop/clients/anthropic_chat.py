"""The call loop's client for the Anthropic Messages API over the official ``anthropic`` SDK.

The neutral messages (see :mod:`toolform_rules.loop.clients`) become a Messages request: the system messages
are joined into ``system``; an assistant's native calls become ``tool_use`` blocks (after its text, if
any); the results of calls become ``tool_result`` blocks of one user message; consecutive messages of one
role are merged, since the API wants user and assistant turns to alternate.  The answer becomes a
:class:`ChatReply`: the text blocks joined, ``thinking`` blocks (and ``<think>`` in the text) as the
reasoning, ``tool_use`` blocks as native calls with their ``input`` object.

``anthropic`` is imported only when it is needed (an optional extra): this module imports without it.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from . import ChatReply, ClientError, Message, NativeCall, native_call_fields, split_reasoning
from .sdk_calls import SDKChat

PROVIDER = "anthropic"


class AnthropicChat(SDKChat):
    """A :class:`~toolform_rules.loop.clients.ChatClient` over an ``anthropic.Anthropic`` or
    ``anthropic.AsyncAnthropic`` client: ``complete`` and ``acomplete`` ask ``model`` through
    ``messages.create`` with ``max_tokens`` (the API requires it); ``timeout`` (seconds) is each
    request's, and ``params`` (``thinking``, ``tool_choice``, ``stop_sequences``, ``extra_body``, ...) go to
    every call as they are (a parameter the SDK does not take is a :class:`ClientError` when called).

    As with :class:`~toolform_rules.loop.clients.openai_chat.OpenAIChat`: with a sync client ``acomplete``
    runs the call in a worker thread; with an async client ``complete`` raises :class:`ClientError`.

    >>> chat = AnthropicChat(object(), "claude-sonnet-4-5", max_tokens=512)
    >>> chat.provider, chat.model, chat.max_tokens
    ('anthropic', 'claude-sonnet-4-5', 512)
    """

    provider = PROVIDER
    sync_client = "anthropic.Anthropic"

    def __init__(self, client: Any, model: str, *, max_tokens: int = 1024, timeout: float | None = None,
                 **params: Any) -> None:
        super().__init__(client, model, timeout=timeout, **params)
        self.max_tokens = max_tokens

    def request(self, messages: Sequence[Message], tools: Any = None) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``messages`` and ``tools``.

        >>> AnthropicChat(object(), "m", max_tokens=64).request(
        ...     [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
        {'model': 'm', 'max_tokens': 64, 'messages': [{'role': 'user', 'content': 'hi'}], 'system': 'Be brief.'}
        """
        system, written = anthropic_messages(messages)
        arguments: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": written}
        if system:
            arguments["system"] = system
        return self._options(arguments, tools)

    def _create(self) -> Any:
        return getattr(getattr(self.client, "messages", None), "create", None)

    def _reply(self, answer: Mapping[str, Any], latency: float) -> ChatReply:
        return anthropic_reply(answer, latency=latency)


def tool_input(arguments: Any) -> dict[str, Any]:
    """A native call's arguments as the ``input`` object of a ``tool_use`` block: a dict as it is, JSON text
    decoded; text that does not decode to an object (an OpenAI-style call with broken arguments, replayed
    to Anthropic) becomes ``{}``, since the API accepts only an object there; the tool's result, sent
    next, says what went wrong.

    >>> tool_input('{"x": 1}'), tool_input({"y": 2}), tool_input('{"x": '), tool_input("[1]")
    ({'x': 1}, {'y': 2}, {}, {})
    """
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, (str, bytes)):
        try:
            decoded = json.loads(arguments)
        except ValueError:
            return {}
        return decoded if isinstance(decoded, dict) else {}
    return {}


def anthropic_messages(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The neutral ``messages`` as the Messages API's ``system`` text (system messages joined by a blank
    line) and its alternating ``messages``.

    Every message becomes content blocks first: text (empty text is left out, the API refuses empty text
    blocks), ``tool_use`` blocks for an assistant's native calls, a ``tool_result`` block for each
    ``tool`` message (a user turn).  Consecutive turns of one role are then merged into one message, so
    the results of several calls travel in one user message (before any user text that follows them, as
    the API requires).  A message left with a single text block is sent as a plain string.

    >>> system, sent = anthropic_messages([
    ...     {"role": "system", "content": "Be brief."},
    ...     {"role": "user", "content": "Draft it."},
    ...     {"role": "assistant", "content": "", "tool_calls": [NativeCall("toolu_1", "f", '{"x": 1}')]},
    ...     {"role": "tool", "tool_call_id": "toolu_1", "name": "f", "content": "done"}])
    >>> system, sent[0], sent[1]["content"], sent[2]["content"]  # doctest: +NORMALIZE_WHITESPACE
    ('Be brief.', {'role': 'user', 'content': 'Draft it.'},
     [{'type': 'tool_use', 'id': 'toolu_1', 'name': 'f', 'input': {'x': 1}}],
     [{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': 'done'}])
    """
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content") or ""
        blocks: list[dict[str, Any]] = []
        if role == "system":
            if content:
                system_parts.append(content)
            continue
        if role in ("user", "assistant"):
            if content:
                blocks.append({"type": "text", "text": content})
            for call in (message.get("tool_calls") or ()) if role == "assistant" else ():
                call_id, name, arguments = native_call_fields(call)
                blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": tool_input(arguments)})
            turn_role = role
        elif role == "tool":
            blocks.append({"type": "tool_result", "tool_use_id": str(message.get("tool_call_id", "")),
                           "content": content})
            turn_role = "user"
        else:
            raise ClientError(f"a message with role {role!r} cannot be sent", provider=PROVIDER)
        if turns and turns[-1]["role"] == turn_role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": turn_role, "content": blocks})
    for turn in turns:
        blocks = turn["content"]
        if not blocks:
            turn["content"] = ""  # nothing was said; the API will say whether it minds
        elif len(blocks) == 1 and blocks[0]["type"] == "text":
            turn["content"] = blocks[0]["text"]
    return "\n\n".join(system_parts), turns


def anthropic_reply(response: Mapping[str, Any], *, latency: float = 0.0) -> ChatReply:
    """The :class:`ChatReply` for a Messages API response (as JSON).

    >>> reply = anthropic_reply({"content": [
    ...     {"type": "thinking", "thinking": "f fits", "signature": "s"},
    ...     {"type": "text", "text": "Calling f."},
    ...     {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": 1}}],
    ...     "stop_reason": "tool_use", "usage": {"input_tokens": 20, "output_tokens": 8}})
    >>> reply.text, reply.reasoning, reply.tool_calls[0].arguments, reply.finish_reason
    ('Calling f.', 'f fits', {'x': 1}, 'tool_use')
    """
    content = response.get("content") if isinstance(response, Mapping) else None
    if not isinstance(content, list):
        raise ClientError("the response has no content", provider=PROVIDER)
    try:
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[NativeCall] = []
        for block in content:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind == "thinking":
                thoughts.append((block.get("thinking") or "").strip())
            elif kind == "tool_use":
                calls.append(NativeCall(str(block.get("id") or ""), str(block.get("name") or ""),
                                        dict(block.get("input") or {})))
            # redacted_thinking and server-side blocks carry nothing the loop reads
        # a model may still think in <think> tags inside its text (some proxies and fine-tunes do)
        text, think_reasoning = split_reasoning("".join(texts))
        reasoning = "\n".join(part for part in (*thoughts, think_reasoning) if part)
        usage = response.get("usage") or {}
        return ChatReply(text=text, tool_calls=tuple(calls), reasoning=reasoning,
                         input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                         latency=latency, finish_reason=str(response.get("stop_reason") or ""), raw=response)
    except (AttributeError, TypeError, ValueError) as error:  # a response of an unexpected shape
        raise ClientError(f"the response cannot be read: {error}", provider=PROVIDER) from error


__all__ = ["AnthropicChat", "anthropic_messages", "anthropic_reply", "tool_input"]
