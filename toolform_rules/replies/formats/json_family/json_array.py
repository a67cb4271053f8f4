"""json_array: ``[{"name": "tool", "arguments": {...}}, ...]`` — always an array, even for one call.

Grammar: ``grammars/json_array.lark``.  In prose, the first array that holds calls is the answer (``[1]``
is not); call objects standing bare are read when there is no array, noted.  An array that breaks off
gives the complete call objects before the break (the family's recovery), noted with where it broke.

>>> from toolform_rules.calls import ToolCall
>>> PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {})])
'[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]'
>>> PROTOCOL.parse("Sure: [{'name': 'f', 'arguments': {'a': True,},}]").calls[0].arguments
{'a': True}
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import Candidate, JsonFamily, Reply, calls_in


class JsonArray(JsonFamily):
    info = ProtocolInfo("json_array", "JSON array of calls",
                        'A JSON array of call objects, [{"name": ..., "arguments": {...}}, ...], even for a single '
                        'call.')
    unreadable = ("the array could not be read", "a JSON candidate could not be read")

    def read_reply(self, reply: Reply, tools: Toolset | None) -> Reply:
        start, stop, _fenced = reply.body()
        values = reply.values(start, stop)[0]
        reply.empty_ok = True  # "[]": no call, in the format
        array, bare, ignored = self._sort(reply, values)
        whole = len(values) == 1 and reply.blank(start, stop, values)
        if array is None:
            for candidate, calls in bare:
                reply.add(calls, candidate.span)
            if whole and isinstance(values[0].value, dict):
                reply.note("a single call object without the array brackets" if bare
                           else "the JSON object names no tool")
            elif bare:
                reply.note("the call object(s) are not inside a JSON array")
        elif bare:
            reply.note(f"{len(bare)} call object(s) outside the array were ignored")
        if ignored:
            reply.note(f"{ignored} further array(s) of calls were ignored; json_array reads the first")
        if not values:
            reply.note("the reply holds no JSON array")
        if array is None or not whole:
            reply.compliant = False
        return reply

    def _sort(self, reply: Reply, values: list[Candidate]
              ) -> tuple[Candidate | None, list[tuple[Candidate, list]], int]:
        """The array of calls (the first; its calls taken), the call objects standing bare (with their calls)
        and how many more arrays of calls ``values`` hold; a bracket in prose (``[1]``) is none of them."""
        array: Candidate | None = None
        bare: list[tuple[Candidate, list]] = []
        ignored = 0
        for candidate in values:
            value = candidate.value
            if candidate.failure is not None:
                if array is None and reply.text[candidate.begin] == "[" and self._salvage(reply, candidate):
                    array = candidate
                else:
                    reply.failed(candidate)
                continue
            calls, other = calls_in(value, reply)
            if isinstance(value, dict):
                if calls:
                    bare.append((candidate, calls))
            elif not calls and (value or len(values) > 1):
                continue
            elif array is not None:
                ignored += 1
            else:
                array = candidate
                reply.add(calls, candidate.span)
                if other:
                    reply.note(f"{other} element(s) of the array are not call objects and were skipped")
        return array, bare, ignored

    @staticmethod
    def _salvage(reply: Reply, array: Candidate) -> bool:
        """The complete call objects of an array that no reader takes as a whole (say, cut off), noted."""
        found = 0
        for candidate in reply.inside(array, "{"):
            if candidate.failure is None:
                found += reply.add(calls_in(candidate.value, reply)[0], candidate.span)
        if found:
            where = reply.failure_of(array).describe()
            reply.note(f"the array breaks off or is malformed; read the {found} complete call(s) before that: {where}")
        return found > 0

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one JSON array and nothing else. Each element is a call object with the tool's "
                'name and its arguments: [{"name": "<tool name>", "arguments": {"<argument>": <value>}}]. '
                "Put every call you make in that one array, even when there is only one, and reply [] when "
                "no tool applies.")


PROTOCOL = JsonArray()
