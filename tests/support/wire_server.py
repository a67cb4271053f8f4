"""A real loopback HTTP server that answers as OpenAI Chat Completions and the Anthropic Messages API do,
from a script, so the clients are tested through the official SDKs over a real socket.

The script is a list of steps, taken in order whatever the endpoint: a reply (:class:`OpenAIReply` on
``POST /v1/chat/completions``, :class:`AnthropicReply` on ``POST /v1/messages``), an :class:`HttpError`
(rendered as the endpoint's provider writes its errors) or a :class:`Delay` before another step (to make a
client time out).  Every request is kept (:class:`Received`: path, headers, parsed JSON body) so a test can
assert exactly what the SDK sent.

The JSON follows each provider's documented response objects (OpenAI's ``chat.completion`` object and
error body ``{"error": {"message", "type", "param", "code"}}``; Anthropic's ``message`` object and error
body ``{"type": "error", "error": {"type", "message"}}``); the tests also check the SDKs' own response
models accept it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, Sequence, Union

import attrs

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@attrs.frozen
class ToolCall:
    """An OpenAI tool call as the server sends it: ``arguments`` is JSON *text*, sent as given (even
    invalid)."""

    id: str
    name: str
    arguments: str


@attrs.frozen
class OpenAIReply:
    """A ``chat.completion``: the assistant's ``content`` (None is sent as ``null``), its tool calls, why it
    stopped, the tokens, and extra fields of the message (``{"reasoning_content": ...}``, as vLLM and
    llama.cpp add)."""

    content: str | None = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    prompt_tokens: int = 11
    completion_tokens: int = 7
    message_extra: tuple[tuple[str, Any], ...] = ()
    model: str = "gpt-test"
    no_choices: bool = False  # a malformed answer: "choices": []

    def render(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content, "refusal": None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in self.tool_calls]
        message.update(dict(self.message_extra))
        choices = [] if self.no_choices else [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": self.finish_reason}]
        return {
            "id": "chatcmpl-test0001",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": self.model,
            "system_fingerprint": "fp_test",
            "choices": choices,
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                      "total_tokens": self.prompt_tokens + self.completion_tokens},
        }


def text_block(text: str) -> dict[str, Any]:
    """An Anthropic ``text`` content block."""
    return {"type": "text", "text": text}


def tool_use_block(id: str, name: str, input: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic ``tool_use`` content block (``input`` is an object)."""
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def thinking_block(thinking: str) -> dict[str, Any]:
    """An Anthropic ``thinking`` content block (extended thinking), with its signature."""
    return {"type": "thinking", "thinking": thinking, "signature": "sig-test"}


@attrs.frozen
class AnthropicReply:
    """A Messages API ``message``: its content blocks, ``stop_reason`` and usage."""

    content: tuple[dict[str, Any], ...] = ()
    stop_reason: str = "end_turn"
    input_tokens: int = 13
    output_tokens: int = 5
    model: str = "claude-test"

    def render(self) -> dict[str, Any]:
        return {
            "id": "msg_test0001",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": list(self.content),
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
        }


# The error ``type`` each provider documents for a status (OpenAI's types are coarser).
_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                       429: "requests", 500: "server_error"}
_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          500: "api_error", 529: "overloaded_error"}


@attrs.frozen
class HttpError:
    """An HTTP error with the provider's error body."""

    status: int
    message: str = "scripted failure"

    def render(self, path: str) -> dict[str, Any]:
        if path == ANTHROPIC_PATH:
            return {"type": "error",
                    "error": {"type": _ANTHROPIC_ERROR_TYPES.get(self.status, "api_error"), "message": self.message},
                    "request_id": "req_test0001"}
        return {"error": {"message": self.message, "type": _OPENAI_ERROR_TYPES.get(self.status, "server_error"),
                          "param": None, "code": None}}


@attrs.frozen
class Delay:
    """Wait ``seconds``, then answer with ``then`` (a client whose timeout is shorter has gone by then)."""

    seconds: float
    then: "Step" = OpenAIReply()


Step = Union[OpenAIReply, AnthropicReply, HttpError, Delay]


@attrs.frozen
class Received:
    """A request the server got: its path, headers (lower-cased names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: Any


@attrs.define
class WireServer:
    """The scripted server's state: the steps still to answer with and the requests received."""

    script: list[Step]
    received: list[Received] = attrs.field(factory=list)
    lock: threading.Lock = attrs.field(factory=threading.Lock)
    base_url: str = ""

    def next_step(self, request: Received) -> Step | None:
        with self.lock:
            self.received.append(request)
            return self.script.pop(0) if self.script else None

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order."""
        return [request.body for request in self.received]


def _handler_for(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request a connection, so no handler thread outlives its answer waiting for another
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # keep the test output quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            request = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            step = server.next_step(request)
            if self.path not in (OPENAI_PATH, ANTHROPIC_PATH):
                self._send(404, HttpError(404, f"no route {self.path}").render(self.path))
                return
            while isinstance(step, Delay):
                time.sleep(step.seconds)
                step = step.then
            if step is None:
                self._send(500, HttpError(500, "the script has no more steps").render(self.path))
            elif isinstance(step, HttpError):
                self._send(step.status, step.render(self.path))
            else:
                self._send(200, step.render())

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and hung up: that is what a Delay is for

    return Handler


@contextmanager
def serve(script: Sequence[Step]) -> Iterator[WireServer]:
    """Serve ``script`` on 127.0.0.1 (an ephemeral port) in a daemon thread; ``base_url`` is
    ``http://127.0.0.1:<port>`` (OpenAI's SDK wants ``base_url + "/v1"``, Anthropic's the base itself)."""
    state = WireServer(list(script))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    httpd.daemon_threads = True
    httpd.block_on_close = False  # a handler still sleeping in a Delay must not hold the test up
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def closed_port_url() -> str:
    """A loopback URL nothing listens on (a port bound, then released), for "connection refused"."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
