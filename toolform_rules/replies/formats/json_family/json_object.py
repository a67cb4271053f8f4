"""json_object: ``{"name": "tool", "arguments": {...}}`` — one JSON object per call.

Grammar: ``grammars/json_object.lark``.  The object may stand alone, in a code fence or inside prose;
each JSON value that holds calls is read (a call object, an array of them, or ``{"tool_calls": [...]}``),
more than one noted (Llama 3 engines read ``{…}; {…}`` as several calls; so do we — the reference reads
the first).  A value that holds no call, or that no reader takes, is looked into (the family's recovery,
``{"thought": "...", "call": {"name": ...}}``), within a bounded number of tries.

>>> [(c.name, c.arguments) for c in PROTOCOL.parse('Sure. {"name": "f", "arguments": {"a": 1}} Done.').calls]
[('f', {'a': 1})]
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import ARGUMENT_KEYS, NAME_KEYS, Call, Candidate, JsonFamily, Reply, call_from_object

#: How many values one reply may have read, looking into those that hold no call.
ATTEMPTS = 64
#: The longest value looked into when it holds no call (a longer one is passed whole).
RETRY_CHARS = 4096


def calls_from_value(value: Any, *, reply: Reply | None = None) -> list[Call]:
    """The calls a JSON value holds: one call object, a list of them, or ``{"tool_calls": [...]}``.

    >>> calls_from_value([{"name": "f", "arguments": {}}, {"tool_calls": [{"function": {"name": "g"}}]}])
    [('f', {}), ('g', {})]
    """
    if isinstance(value, list):
        return [call for item in value for call in calls_from_value(item, reply=reply)]
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return calls_from_value(value["tool_calls"], reply=reply)
    found = call_from_object(value, reply=reply)
    return [found] if found is not None else []


class JsonObject(JsonFamily):
    info = ProtocolInfo("json_object", "JSON object",
                        'One JSON object naming the tool and its arguments: {"name": ..., "arguments": {...}}.',
                        parallel=False)
    unreadable = ("no JSON object could be read", "")

    def read_reply(self, reply: Reply, tools: Toolset | None) -> Reply:
        start, stop, _fenced = reply.body()
        values = reply.values(start, stop)[0]
        taken: list[Candidate] = []
        self._take(reply, values, taken, [ATTEMPTS])
        if not values:
            reply.note("the reply holds no JSON object")
        elif len(taken) > 1:
            reply.note(f"the reply holds {len(taken)} JSON values one after another; all are read "
                       "(json_object asks for one; json_array is the protocol for several calls)")
        elif not reply.blank(start, stop, taken):
            reply.compliant = False
        return reply

    def _take(self, reply: Reply, values: list[Candidate], taken: list[Candidate], tries: list[int]) -> None:
        """The calls of ``values``; one that holds none is looked into while ``tries`` (one count, shared) last."""
        for candidate in values:
            if tries[0] <= 0:
                return
            tries[0] -= 1
            if candidate.failure is not None:
                reply.failed(candidate)
            elif reply.add(calls_from_value(candidate.value, reply=reply), candidate.span):
                taken.append(candidate)
                continue
            if candidate.end - candidate.begin <= RETRY_CHARS:
                self._take(reply, reply.inside(candidate), taken, tries)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        objects = [{"name": c.name, "arguments": c.arguments} for c in calls]
        return json.dumps(objects[0] if len(objects) == 1 else objects, ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ('Reply with exactly one JSON object and no other text: '
                '{"name": "<tool name>", "arguments": {"<argument>": <value>, ...}}')


PROTOCOL = JsonObject()

__all__ = ["ARGUMENT_KEYS", "NAME_KEYS", "PROTOCOL", "JsonObject", "call_from_object", "calls_from_value"]
