"""Chat clients for the call loop: one small protocol, over the SDKs users already have.

The loop speaks to a model through a :class:`ChatClient`: ``complete(messages, tools=...)``
takes the conversation in one provider-neutral shape and returns a :class:`ChatReply`.
Each client turns the neutral messages into its provider's wire format and the provider's
answer back:

* ``OpenAIChat(openai_client, model=...)`` (:mod:`.openai_chat`): OpenAI Chat Completions,
  and any server that speaks it (vLLM, llama.cpp, Ollama), over the ``openai`` SDK;
* ``AnthropicChat(anthropic_client, model=...)`` (:mod:`.anthropic_chat`): the Messages API
  over the ``anthropic`` SDK;
* :class:`StubClient`: scripted replies, and a record of the messages it was sent (tests,
  docs, the demo).

The neutral messages are dicts:

* ``{"role": "system" | "user", "content": str}``;
* ``{"role": "assistant", "content": str, "tool_calls": [NativeCall, ...]}`` (``tool_calls``
  only in native mode: the calls the provider returned as structured data);
* ``{"role": "tool", "tool_call_id": str, "name": str, "content": str}``: a native call's
  result (OpenAI sends it as a ``tool`` message; Anthropic as a ``tool_result`` block of a
  user message, consecutive results in one).

A client never raises anything but :class:`ClientError` (an HTTP error, a timeout, a reply
it cannot read), and the loop turns that into ``stopped="error"``.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import attrs

from ...errors import ToolformRulesError

Message = dict[str, Any]


class ClientError(ToolformRulesError):
    """A model could not be asked or its answer could not be read: ``provider``, the HTTP ``status`` (if
    any) and what happened."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        self.message, self.provider, self.status = message, provider, status
        where = f"{provider}: " if provider else ""
        super().__init__(f"{where}{message}" + (f" (HTTP {status})" if status is not None else ""))


@attrs.frozen
class NativeCall:
    """A tool call the provider returned as structured data: its id (``tool_call_id``/``tool_use_id``), the
    tool's name, and its arguments as the provider gave them (OpenAI: JSON text, which may be invalid;
    Anthropic: an object)."""

    id: str
    name: str
    arguments: Any


@attrs.frozen
class ChatReply:
    """What the model answered: its ``text`` (reasoning apart, in ``reasoning``), the native ``tool_calls``,
    the tokens it cost, how long it took (seconds), why it stopped, and the provider's answer as JSON."""

    text: str = ""
    tool_calls: tuple[NativeCall, ...] = ()
    reasoning: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency: float = 0.0
    finish_reason: str = ""
    raw: Any = None


@runtime_checkable
class ChatClient(Protocol):
    """Anything that can complete a conversation: the loop needs only this.

    ``provider`` says how native calls and results are written (``openai``, ``anthropic``;
    any other value: text protocols only).  ``tools`` (native mode) is the toolset, which
    the client writes in its provider's shape (``to_openai()``, ``to_anthropic()``).
    """

    provider: str

    def complete(self, messages: Sequence[Message], *, tools: Any = None) -> ChatReply:
        """The model's reply to ``messages``."""
        ...


def native_call_fields(call: Any) -> tuple[str, str, Any]:
    """(id, name, arguments) of a structured call: a ``NativeCall``, an OpenAI ``tool_calls`` item
    (``{"id", "type": "function", "function": {"name", "arguments"}}``) or an Anthropic ``tool_use`` block
    (``{"type": "tool_use", "id", "name", "input"}``).

    >>> native_call_fields({"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}})
    ('c1', 'f', '{}')
    >>> native_call_fields({"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}})
    ('t1', 'f', {'a': 1})
    """
    if isinstance(call, Mapping):
        function = call.get("function")
        if isinstance(function, Mapping):
            return str(call.get("id") or ""), str(function.get("name") or ""), function.get("arguments")
        return str(call.get("id") or ""), str(call.get("name") or ""), call.get("input", call.get("arguments"))
    return str(getattr(call, "id", "") or ""), str(getattr(call, "name", "") or ""), getattr(call, "arguments", None)


def split_reasoning(text: str) -> tuple[str, str]:
    """``text`` without its ``<think>…</think>`` blocks (also ``thinking``/``reasoning``; an unclosed one runs to
    the end), trimmed, and what those blocks said.

    >>> split_reasoning("<think>f or g?</think> I'll call f.")
    ("I'll call f.", 'f or g?')
    >>> split_reasoning("Just text.")
    ('Just text.', '')
    """
    from ...replies.parse import remove_reasoning

    said: list[str] = []
    kept, removed = remove_reasoning(text or "", removed_text=said)
    if not removed:
        return text or "", ""
    return kept.strip(), "\n".join(part.strip() for part in said if part.strip())


class StubClient:
    """A scripted model: each ``complete`` returns the next of ``replies`` (a string is a text reply; a
    :class:`ChatReply` is returned as it is; an exception is raised, as a failing provider would) and keeps
    the messages it was sent in ``requests`` (copies, as they were then).

    >>> stub = StubClient(['{"name": "f", "arguments": {}}', "Done."])
    >>> stub.complete([{"role": "user", "content": "hi"}]).text
    '{"name": "f", "arguments": {}}'
    >>> stub.requests[0][0]["content"], stub.complete([]).text
    ('hi', 'Done.')
    """

    def __init__(self, replies: Iterable[str | ChatReply | BaseException], *, provider: str = "stub") -> None:
        self.replies = list(replies)
        self.provider = provider
        self.requests: list[list[Message]] = []
        self.tools: list[Any] = []

    def complete(self, messages: Sequence[Message], *, tools: Any = None) -> ChatReply:
        import copy

        self.requests.append(copy.deepcopy([dict(m) for m in messages]))
        self.tools.append(tools)
        if not self.replies:
            raise ClientError("the stub has no more replies", provider=self.provider)
        started = time.perf_counter()
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, ChatReply):
            return reply
        text, reasoning = split_reasoning(reply)
        return ChatReply(text=text, reasoning=reasoning, latency=time.perf_counter() - started,
                         finish_reason="stop")

    async def acomplete(self, messages: Sequence[Message], *, tools: Any = None) -> ChatReply:
        """:meth:`complete`, for the loop's ``arun``."""
        return self.complete(messages, tools=tools)


def as_mapping(value: Any) -> Mapping[str, Any]:
    """An SDK's response object as plain JSON (``model_dump``), for ``ChatReply.raw`` and the audit."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:  # noqa: BLE001  (a raw record is a convenience, never a failure)
            return {}
    return value if isinstance(value, Mapping) else {}


#: the SDK clients, by name: their modules are imported when the name is first used (they import their SDK
#: only when they call it, so neither SDK is needed to import this package)
_LAZY = {"OpenAIChat": ".openai_chat", "AnthropicChat": ".anthropic_chat"}


def __getattr__(name: str) -> Any:
    """``OpenAIChat`` and ``AnthropicChat``, from their modules (PEP 562)."""
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


__all__ = ["AnthropicChat", "ChatClient", "ChatReply", "ClientError", "Message", "NativeCall", "OpenAIChat",
           "StubClient", "as_mapping", "native_call_fields", "split_reasoning"]
