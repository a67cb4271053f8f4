"""slot_fill_call: a JSON skeleton of the call, its placeholders replaced with values.

Grammar: ``grammars/slot_fill_call.lark`` — JSON as models write it, plus the placeholders
a skeleton holds (``<number>``, ``<one of draft | review>``, ``...``), so that a slot the
model left unfilled is recognised: its argument is dropped (validation then reports it
missing, not wrongly typed) and a note names it.  ``instructions(tools)`` writes a skeleton
for each tool.  Rendering is the filled skeleton: the call object, indented by two spaces.
Fast path: strict JSON, then the lenient fast path; the grammar reads the rest (and every
skeleton that still holds a placeholder).

>>> reply = '{"name": "f", "arguments": {"a": 3, "b": <string>, "c": {"d": ..., "e": 1}}}'
>>> extraction = PROTOCOL.parse(reply)
>>> [(c.name, c.arguments) for c in extraction.calls], extraction.notes
([('f', {'a': 3, 'c': {'e': 1}})], ('call 1 left 2 slot(s) unfilled: b (<string>), c.d (...)',))
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.ir import Schema, Tool
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from .json_family import (_MISSING, GrammarBudget, Reading, Values, bracket_depth, calls_in, fast_json, guarded,
                          lenient_json, only_whitespace, read_candidates, read_grammar, report_failure, scan_values)
from .values import json_value, strip_code_fence

GRAMMAR = "slot_fill_call"


class Unfilled(str):
    """A placeholder the model left in the skeleton (its text, e.g. ``<number>``)."""

    __slots__ = ()


class SlotFillValues(Values):
    """A ``slot_fill_call.lark`` tree → values, placeholders as :class:`Unfilled`."""

    def placeholder(self, items: list) -> Unfilled:
        return Unfilled(str(items[0]))

    def candidate(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = SlotFillValues()
#: Quoted strings that are a skeleton's placeholders, not values (noted when a reply keeps one).
TYPE_PLACEHOLDERS = frozenset(f"<{t}>" for t in ("string", "number", "integer", "boolean", "object", "array",
                                                  "value", "any"))


def unfilled(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """``value`` without its :class:`Unfilled` slots (object members and array items dropped), and their paths.

    >>> unfilled({"a": Unfilled("<x>"), "b": [1, Unfilled("...")]})
    ({'b': [1]}, ['a (<x>)', 'b[1] (...)'])
    """
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        left: list[str] = []
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(item, Unfilled):
                left.append(f"{where} ({item})")
                continue
            kept[key], inner = unfilled(item, where)
            left.extend(inner)
        return kept, left
    if isinstance(value, list):
        items: list[Any] = []
        left = []
        for index, item in enumerate(value):
            if isinstance(item, Unfilled):
                left.append(f"{path}[{index}] ({item})")
                continue
            kept_item, inner = unfilled(item, f"{path}[{index}]")
            items.append(kept_item)
            left.extend(inner)
        return items, left
    return value, []


def _quoted_placeholders(value: Any, path: str = "") -> list[str]:
    if isinstance(value, str):
        return [path] if value in TYPE_PLACEHOLDERS else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _quoted_placeholders(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _quoted_placeholders(v, f"{path}[{i}]")]
    return []


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply in the format, read by the grammar alone (unfilled slots dropped)."""
    return [(name, unfilled(arguments)[0]) for value in read_grammar(GRAMMAR, text, _TRANSFORMER)
            for name, arguments in calls_in(value)[0]]


def fast_calls(text: str, *, lenient: bool = False) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a whole one-object reply read by ``json`` (or the lenient fast path), else ``None``."""
    value = lenient_json(text) if lenient else fast_json(text)
    return calls_in(value)[0] if isinstance(value, dict) else None


class SlotFillCall(Protocol):
    info = ProtocolInfo(
        id="slot_fill_call",
        name="Filled JSON skeleton",
        description="The model copies the JSON skeleton given for a tool and replaces each placeholder with a value.",
        parallel=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return guarded(self.info.id, lambda t: self._parse(t, limits), text)

    def _parse(self, text: str, limits: Limits) -> Extraction:
        reading = Reading(text)
        budget = GrammarBudget.of(limits)
        body, _fenced = strip_code_fence(text)
        offset = text.find(body) if body else 0
        declined = None  # the span the fast paths have read already, in vain
        if body[:1] == "{":
            value = json_value(body)  # neither path reads a placeholder left unquoted
            if isinstance(value, dict):
                self._take(reading, value, (offset, offset + len(body)), budget, slots="<" in body)
                return reading.extraction()
            if value is _MISSING:
                declined = (0, len(body))
        found = scan_values(body, depth=bracket_depth(limits))
        found.note(reading, offset)
        spans = found.spans
        values, failures = read_candidates(body, offset, GRAMMAR, _TRANSFORMER, spans=spans, budget=budget,
                                           declined=declined)
        for span, value in values:
            slots = any(mark in text[span[0]:span[1]] for mark in ("<", "...", "…"))
            if isinstance(value, list):
                if self._take(reading, value, span, budget, quiet=True, slots=slots):
                    reading.note("an array of calls, not one filled skeleton per call")
            else:
                self._take(reading, value, span, budget, slots=slots)
        if not only_whitespace(body, spans):
            reading.note("the reply holds text besides the filled skeleton")
        report_failure(reading, failures, "no filled skeleton could be read", "a JSON candidate could not be read")
        if not spans:
            reading.note("the reply holds no JSON object")
        return reading.extraction()

    @staticmethod
    def _take(reading: Reading, value: Any, span: tuple[int, int], budget: GrammarBudget, *, quiet: bool = False,
              slots: bool = True) -> int:
        """Add the calls of ``value``; ``slots=False`` when the text cannot hold a placeholder (no ``<``)."""
        calls, _other = calls_in(value, budget)
        if not calls and not quiet:
            reading.note("a JSON object that names no tool was skipped")
        for name, arguments in calls:
            number = len(reading.calls) + 1
            if not slots:
                reading.add([(name, arguments)], span)
                continue
            arguments, left = unfilled(arguments)
            if left:
                reading.note(f"call {number} left {len(left)} slot(s) unfilled: {', '.join(left[:8])}")
            kept = _quoted_placeholders(arguments)
            if kept:
                reading.note(f"call {number} keeps a placeholder as its value: {', '.join(kept[:8])}",
                             breaks_format=False)
            reading.add([(name, arguments)], span)
        return len(calls)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False, indent=2)
                         for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        text = ("Pick the tool, copy its skeleton below, and replace every <...> placeholder with a real value "
                "written as JSON (text in double quotes). Leave out the lines of optional arguments you do not "
                "use. Answer with the filled skeleton only; for several calls, one filled skeleton per call.")
        skeletons = [skeleton(tool) for tool in _tools_of(tools)]
        return text + ("\n\n" + "\n\n".join(skeletons) if skeletons else "")


def _tools_of(tools: Toolset | Iterable[Any] | None) -> list[Tool]:
    if tools is None:
        return []
    return [tool for tool in tools if isinstance(tool, Tool)]


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
    >>> print(skeleton(sample_tool()))
    {
      "name": "legal_draft_v3",
      "arguments": {
        "counterparty": <string>,
        "value": <number>,
        "term_months": <integer>,
        "auto_renew": <boolean>,
        "contract_details": {
          "contract_id": <string>,
          "status": <one of "draft" | "review" | "signed" | "expired">
        }
      }
    }
    """
    properties = tool.parameters.properties
    lines = [f'    {json.dumps(p.name, ensure_ascii=False)}: {_placeholder(p.schema, "    ")}' for p in properties]
    arguments = "{\n" + ",\n".join(lines) + "\n  }" if lines else "{}"
    return '{\n  "name": ' + json.dumps(tool.name, ensure_ascii=False) + ',\n  "arguments": ' + arguments + "\n}"


PROTOCOL = SlotFillCall()
