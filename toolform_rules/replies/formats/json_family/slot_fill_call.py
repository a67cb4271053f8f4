"""slot_fill_call: a JSON skeleton of the call, its placeholders replaced with values.

Grammar: ``grammars/slot_fill_call.lark`` — JSON as models write it, plus the placeholders a
skeleton holds (``<number>``, ``<one of draft | review>``, ``...``): a slot the model left unfilled
is dropped (validation then reports it missing, not wrongly typed) and named in a note.
``instructions(tools)`` writes a skeleton for each tool; rendering is the filled skeleton.

>>> reply = '{"name": "f", "arguments": {"a": 3, "b": <string>, "c": {"d": ..., "e": 1}}}'
>>> extraction = PROTOCOL.parse(reply)
>>> [(c.name, c.arguments) for c in extraction.calls], extraction.notes
([('f', {'a': 3, 'c': {'e': 1}})], ('call 1 left 2 slot(s) unfilled: b (<string>), c.d (...)',))
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.ir import Schema, Tool
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import Call, JsonFamily, Reply, Values, call_json, calls_in


class Unfilled(str):
    """A placeholder the model left in the skeleton (its text, e.g. ``<number>``)."""

    __slots__ = ()


class SlotFillValues(Values):
    """A ``slot_fill_call.lark`` tree → values, placeholders as :class:`Unfilled`."""

    def placeholder(self, items: list) -> Unfilled:
        return Unfilled(str(items[0]))


#: Quoted strings that are a skeleton's placeholders, not values (noted when a reply keeps one).
TYPE_PLACEHOLDERS = frozenset(f"<{t}>" for t in ("string", "number", "integer", "boolean", "object", "array",
                                                  "value", "any"))


def _placeholders(text: str, begin: int = 0, end: int | None = None) -> bool:
    """Whether ``text[begin:end]`` may hold a placeholder (a slot left, or a placeholder's text quoted)."""
    return any(text.find(mark, begin, end) >= 0 for mark in ("<", "...", "…"))


#: How deep the walk below follows a value (a call's arguments nest far less; strict JSON, much more).
_WALK_DEPTH = 256


def unfilled(value: Any, at: str = "", kept_at: str = "", depth: int = 0) -> tuple[Any, list[str], list[str]]:
    """``value`` without its :class:`Unfilled` slots, their paths, and the paths (in what is kept) of its strings
    that are a placeholder's text (``"<number>"``, a value).

    >>> unfilled({"a": Unfilled("<x>"), "b": [Unfilled("..."), "<number>"]})
    ({'b': ['<number>']}, ['a (<x>)', 'b[0] (...)'], ['b[0]'])
    """
    if isinstance(value, str):
        return value, [], [kept_at] if value in TYPE_PLACEHOLDERS else []
    if depth > _WALK_DEPTH or not isinstance(value, (dict, list)):
        return value, [], []
    is_dict = isinstance(value, dict)
    kept: list[tuple[Any, Any]] = []
    left: list[str] = []
    quoted: list[str] = []
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        here = (f"{at}.{key}" if at else str(key)) if is_dict else f"{at}[{key}]"
        if isinstance(item, Unfilled):
            left.append(f"{here} ({item})")
            continue
        there = (f"{kept_at}.{key}" if kept_at else str(key)) if is_dict else f"{kept_at}[{len(kept)}]"
        item, inner_left, inner_quoted = unfilled(item, here, there, depth + 1)
        kept.append((key, item))
        left.extend(inner_left)
        quoted.extend(inner_quoted)
    return (dict(kept) if is_dict else [item for _, item in kept]), left, quoted


class SlotFillCall(JsonFamily):
    info = ProtocolInfo("slot_fill_call", "Filled JSON skeleton",
                        "The model copies the JSON skeleton given for a tool and replaces each placeholder with a "
                        "value.")
    transformer = SlotFillValues()
    unreadable = ("no filled skeleton could be read", "a JSON candidate could not be read")

    def grammar_may_read(self, piece: str) -> bool:
        return _placeholders(piece) or super().grammar_may_read(piece)

    def calls_of(self, value: Any, reply: Reply | None = None) -> list[Call]:
        return [(name, unfilled(arguments)[0]) for name, arguments in calls_in(value, reply)[0]]

    def read_reply(self, reply: Reply, tools: Toolset | None) -> Reply:
        start, stop, _fenced = reply.body()
        values = reply.values(start, stop)[0]
        for candidate in values:
            if candidate.failure is not None:
                reply.failed(candidate)
                continue
            calls = calls_in(candidate.value, reply)[0]
            if isinstance(candidate.value, list):
                if calls:
                    reply.note("an array of calls, not one filled skeleton per call")
            elif not calls:
                reply.note("a JSON object that names no tool was skipped")
            slots = _placeholders(reply.text, candidate.begin, candidate.end)
            for name, arguments in calls:
                filled = self._filled(reply, arguments) if slots else arguments
                reply.calls.append(reply.call(name, filled, candidate.span, arguments))
        if not reply.blank(start, stop, values):
            reply.note("the reply holds text besides the filled skeleton")
        if not values:
            reply.note("the reply holds no JSON object")
        return reply

    @staticmethod
    def _filled(reply: Reply, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` without the slots left unfilled, each noted, as are placeholders kept as values."""
        number = len(reply.calls) + 1
        arguments, left, quoted = unfilled(arguments)
        if left:
            reply.note(f"call {number} left {len(left)} slot(s) unfilled: {', '.join(left[:8])}")
        if quoted:
            reply.note(f"call {number} keeps a placeholder as its value: {', '.join(quoted[:8])}", breaks_format=False)
        return arguments

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(call_json(c, indent=2) for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        text = ("Pick the tool, copy its skeleton below, and replace every <...> placeholder with a real value "
                "written as JSON (text in double quotes). Leave out the lines of optional arguments you do not "
                "use. Answer with the filled skeleton only; for several calls, one filled skeleton per call.")
        skeletons = [skeleton(tool) for tool in tools or () if isinstance(tool, Tool)]
        return text + ("\n\n" + "\n\n".join(skeletons) if skeletons else "")


def _placeholder(schema: Schema | None, indent: str, depth: int = 0) -> str:
    """The skeleton's slot for a value of ``schema``: ``<type>``, a list of choices, or a nested object."""
    if schema is None:
        return "<value>"
    if schema.enum:
        return "<one of " + " | ".join(json.dumps(v, ensure_ascii=False) for v in schema.enum)[:180] + ">"
    types = [t for t in schema.types if t != "null"]
    if types == ["object"] and schema.properties and depth < 3:
        inner = indent + "  "
        lines = [f'{inner}{json.dumps(p.name, ensure_ascii=False)}: {_placeholder(p.schema, inner, depth + 1)}'
                 for p in schema.properties]
        return "{\n" + ",\n".join(lines) + "\n" + indent + "}"
    if types == ["array"]:
        return "[" + _placeholder(schema.items if isinstance(schema.items, Schema) else None, indent, depth + 1) + \
               ", ...]"
    return "<" + (" or ".join(types) if types else "value") + ">"


def skeleton(tool: Tool) -> str:
    """The skeleton of a call to ``tool``: the name filled in, a placeholder for each argument.

    >>> from toolform_rules import sample_tool
    >>> print("\\n".join(skeleton(sample_tool()).splitlines()[:4]))
    {
      "name": "legal_draft_v3",
      "arguments": {
        "counterparty": <string>,
    """
    properties = tool.parameters.properties
    lines = [f'    {json.dumps(p.name, ensure_ascii=False)}: {_placeholder(p.schema, "    ")}' for p in properties]
    arguments = "{\n" + ",\n".join(lines) + "\n  }" if lines else "{}"
    return '{\n  "name": ' + json.dumps(tool.name, ensure_ascii=False) + ',\n  "arguments": ' + arguments + "\n}"


PROTOCOL = SlotFillCall()
