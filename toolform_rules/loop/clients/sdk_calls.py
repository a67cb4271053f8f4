"""What the SDK clients share: telling an async SDK client from a sync one, calling it with a clock, and
turning whatever it raises into a :class:`ClientError`.

The official ``openai`` and ``anthropic`` SDKs are generated from one template, so their exceptions have the
same names and meanings: ``APIStatusError`` (an HTTP error, ``status_code``), ``APITimeoutError`` (a
subclass of ``APIConnectionError``), ``APIConnectionError``.  This module never imports either SDK: the
client modules pass theirs in.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import time
from typing import Any, Awaitable, Callable, Mapping, Sequence

from . import ChatReply, ClientError, Message, as_mapping


def is_async_method(method: Any) -> bool:
    """Whether an SDK method is ``async def`` (the SDKs wrap their methods, so look under the wrappers).

    >>> async def create(): ...
    >>> is_async_method(create), is_async_method(len)
    (True, False)
    """
    return inspect.iscoroutinefunction(inspect.unwrap(method))


def sdk_error(error: BaseException, *, sdk: Any, provider: str) -> ClientError:
    """The :class:`ClientError` for what an SDK call raised (``sdk``: the SDK module, or None when it is not
    installed and the client is some look-alike): the HTTP status and the provider's message for an
    HTTP error, "timed out" for a timeout, "could not connect" for a connection failure.

    >>> str(sdk_error(ValueError("bad"), sdk=None, provider="openai"))
    'openai: the call failed: ValueError: bad'
    """
    if isinstance(error, ClientError):
        return error
    status_error = getattr(sdk, "APIStatusError", None)
    timeout_error = getattr(sdk, "APITimeoutError", None)
    connection_error = getattr(sdk, "APIConnectionError", None)
    if status_error is not None and isinstance(error, status_error):
        return ClientError(f"the server refused the request: {_status_message(error)}", provider=provider,
                           status=getattr(error, "status_code", None))
    # a timeout is a connection error to the SDKs; say which, a timeout wants a different remedy
    if timeout_error is not None and isinstance(error, timeout_error):
        return ClientError("the request timed out", provider=provider)
    if connection_error is not None and isinstance(error, connection_error):
        cause = error.__cause__ or error.__context__
        detail = f": {type(cause).__name__}: {cause}" if cause is not None else ""
        return ClientError(f"could not connect to the server{detail}", provider=provider)
    return ClientError(f"the call failed: {type(error).__name__}: {error}", provider=provider)


def _status_message(error: BaseException) -> str:
    """The provider's own words from an HTTP error's body (both providers nest them in ``error.message``),
    else the SDK's message."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(getattr(error, "message", "") or error)


def timed_call(call: Callable[[], Any], *, sdk: Any, provider: str) -> tuple[Any, float]:
    """``call()`` and how long it took (seconds); what it raises comes out as a :class:`ClientError`."""
    started = time.perf_counter()
    try:
        result = call()
    except Exception as error:  # noqa: BLE001  (the loop's contract: a client raises only ClientError)
        raise sdk_error(error, sdk=sdk, provider=provider) from error
    return result, time.perf_counter() - started


async def timed_acall(call: Callable[[], Awaitable[Any]], *, sdk: Any, provider: str) -> tuple[Any, float]:
    """:func:`timed_call` for a coroutine-returning ``call``."""
    started = time.perf_counter()
    try:
        result = await call()
    except Exception as error:  # noqa: BLE001  (as in timed_call)
        raise sdk_error(error, sdk=sdk, provider=provider) from error
    return result, time.perf_counter() - started


class SDKChat:
    """What the SDK clients share: ``complete`` on a sync SDK client, ``acomplete`` on either (a sync one in a
    worker thread), every failure a :class:`ClientError`.  A client says how to build the request
    (``request``), which SDK method sends it (``_create``) and how to read the answer (``_reply``); its SDK
    is the module its ``provider`` names."""

    provider = ""
    #: the SDK's sync client class, named in the error that asks for one
    sync_client = ""

    def __init__(self, client: Any, model: str, *, timeout: float | None = None, **params: Any) -> None:
        self.client = client
        self.model = model
        self.timeout = timeout
        self.params = params

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    def request(self, messages: Sequence[Message], tools: Any = None) -> dict[str, Any]:
        raise NotImplementedError

    def _options(self, arguments: dict[str, Any], tools: Any) -> dict[str, Any]:
        """``arguments`` with the tools (a toolset written in the provider's shape, else as given), the timeout
        and the client's ``params``."""
        if tools is not None:
            export = getattr(tools, f"to_{self.provider}", None)
            arguments["tools"] = export() if export is not None else list(tools)
        if self.timeout is not None:
            arguments["timeout"] = self.timeout
        arguments.update(self.params)
        return arguments

    def _create(self) -> Any:
        """The SDK method that sends a request (``None`` when the client has none)."""
        raise NotImplementedError

    def _sdk(self) -> Any:
        """The SDK's module (its errors are told apart by class), or ``None`` when it is not installed (a
        look-alike client is then told apart by its methods, and its errors reported by their type names)."""
        try:
            return importlib.import_module(self.provider)
        except ImportError:
            return None

    def _reply(self, answer: Mapping[str, Any], latency: float) -> ChatReply:
        raise NotImplementedError

    def _is_async(self) -> bool:
        create = self._create()
        return create is not None and is_async_method(create)

    def complete(self, messages: Sequence[Message], *, tools: Any = None) -> ChatReply:
        """The model's reply to ``messages`` (``tools``: a :class:`~toolform_rules.Toolset` for native calls)."""
        if self._is_async():
            raise ClientError(f"complete() needs a sync client ({self.sync_client}); with its async client use "
                              "acomplete()", provider=self.provider)
        arguments = self.request(messages, tools)
        response, latency = timed_call(lambda: self._create()(**arguments), sdk=self._sdk(), provider=self.provider)
        return self._reply(as_mapping(response), latency)

    async def acomplete(self, messages: Sequence[Message], *, tools: Any = None) -> ChatReply:
        """:meth:`complete` for the loop's ``arun``: awaited on an async client, in a thread on a sync one."""
        if not self._is_async():
            return await asyncio.to_thread(self.complete, messages, tools=tools)
        arguments = self.request(messages, tools)
        response, latency = await timed_acall(lambda: self._create()(**arguments), sdk=self._sdk(),
                                              provider=self.provider)
        return self._reply(as_mapping(response), latency)
