"""native: calls as a provider's tool-calling API returns them, written out as JSON.

Grammar: ``grammars/native.lark``.  A native reply's calls arrive in a structured field; what reaches a
text parser is that field as JSON.  Rendered like the reference, one call object per line; read: those,
and the provider envelopes around them (OpenAI ``tool_calls``, a chat completion, Anthropic ``tool_use``,
Gemini ``functionCall``, Responses API ``function_call``) wherever they nest.

>>> reply = '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}'
>>> [(c.name, c.arguments) for c in PROTOCOL.parse(reply).calls]
[('f', {})]
"""

from __future__ import annotations

from typing import Any, Iterable

from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import Call, JsonFamily, Reply, native_calls


class Native(JsonFamily):
    info = ProtocolInfo("native", "Provider-native tool calls",
                        "Calls through the provider's own tool-calling field, read here as the JSON that field holds.")

    def calls_of(self, value: Any, reply: Reply | None = None) -> list[Call]:
        return native_calls(value, reply=reply)

    def read_reply(self, reply: Reply, tools: Toolset | None) -> Reply:
        start, stop, fenced = reply.body()
        if fenced:
            reply.note("the JSON is inside a code fence", breaks_format=False)
        values = reply.values(start, stop)[0]
        for candidate in values:
            if candidate.failure is not None:
                reply.failed(candidate)
            elif not reply.add(native_calls(candidate.value, reply=reply), (candidate.begin, candidate.end)):
                reply.compliant = False
                if isinstance(candidate.value, dict) or len(values) == 1:  # an array in prose goes unsaid
                    reply.note("a JSON value that holds no call was skipped")
        if not reply.blank(start, stop, values):
            reply.note("the reply holds text besides the JSON")
        if not values:
            reply.note("the reply holds no JSON")
        return reply

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Call the tools through the tool-calling interface of the API rather than in your text. "
                'Where calls have to be written out, write each as one JSON object on its own line: '
                '{"name": "<tool name>", "arguments": {"<argument>": <value>}}.')


PROTOCOL = Native()
