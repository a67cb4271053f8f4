"""jsonl_call: JSON Lines — ``{"name": "tool", "arguments": {...}}``, one call object per line.

Grammar: ``grammars/jsonl_call.lark``.  Every JSON value of the reply is read, so prose between the lines,
a pretty-printed object or two objects on one line still give their calls, noted.  An empty reply is "no
call" and keeps to the format.

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": "x\\ny"}), ToolCall("g", {})]))
{"name": "f", "arguments": {"a": "x\\ny"}}
{"name": "g", "arguments": {}}
"""

from __future__ import annotations

from typing import Any, Iterable

from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import Candidate, JsonFamily, Reply


class JsonlCall(JsonFamily):
    info = ProtocolInfo("jsonl_call", "One JSON call per line",
                        'JSON Lines: each call is one {"name": ..., "arguments": {...}} object on a line of its own.')
    unreadable = ("no JSON line could be read", "a line could not be read")

    def read_reply(self, reply: Reply, tools: Toolset | None) -> Reply:
        text = reply.text
        start, stop, _fenced = reply.body()
        if reply.blank(start, stop):
            reply.empty_ok = True  # no lines: no call
            return reply
        values = reply.values(start, stop)[0]
        previous = start
        layout: list[str] = []
        for candidate in values:
            calls = self._line(reply, candidate)
            if calls is None:
                continue  # a bracket in prose ("[1]"), not a call
            if not reply.blank(previous, candidate.begin):
                reply.compliant = False
            if calls and previous != start and text.find("\n", previous, candidate.begin) < 0:
                layout.append(f"call {len(reply.calls)} shares a line with the one before")
            elif calls and text.find("\n", candidate.begin, candidate.end) >= 0:
                layout.append(f"call {len(reply.calls)} spans several lines")
            previous = candidate.end
        if not reply.blank(previous, stop) or not reply.compliant:
            reply.note("the reply holds text besides the JSON lines")
        for sentence in layout:
            reply.note(sentence)
        if not values:
            reply.note("the reply holds no JSON object")
        return reply

    @staticmethod
    def _line(reply: Reply, candidate: Candidate) -> int | None:
        """How many calls one value gives (``None``: an array without any, not a line), noted where it is not
        one call object."""
        if candidate.failure is not None:
            reply.failed(candidate)
            return 0
        calls = reply.take(candidate.value, candidate.span)[0]
        if isinstance(candidate.value, list):
            if not calls:
                return None
            reply.note(f"an array of {calls} call(s), not one object per line")
        elif not calls:
            reply.note("a JSON object that names no tool was skipped")
        return calls

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Write each call as one JSON object on a line of its own, and nothing else: "
                '{"name": "<tool name>", "arguments": {"<argument>": <value>}}. '
                "Several calls take several lines; no call at all takes no lines.")


PROTOCOL = JsonlCall()
