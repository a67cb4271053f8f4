"""json_array: ``[{"name": "tool", "arguments": {...}}, ...]`` — always an array, even for one call.

Grammar: ``grammars/json_array.lark`` (an array, or a lone call object, of JSON as models
write it).  Fast path: the reply (or its code fence) as strict JSON through ``json``; the
grammar reads everything else.  In prose, the first bracket group that holds calls is the
answer; an array that breaks off (a truncated reply) still gives the complete call objects
before the break, with a note saying where it broke.

>>> from toolform_rules.calls import ToolCall
>>> reply = PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {})])
>>> reply
'[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]'
>>> [(c.name, c.arguments) for c in PROTOCOL.parse(reply).calls]
[('f', {'a': 1}), ('g', {})]
>>> PROTOCOL.parse("Sure: [{'name': 'f', 'arguments': {'a': True,},}]").calls[0].arguments
{'a': True}
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import GrammarFailure
from .json_family import (GrammarBudget, Reading, Values, bracket_depth, calls_in, fast_json, guarded,
                          only_whitespace, lenient_json, read_grammar, read_json, report_failure, scan_values,
                          value_spans)
from .values import json_value
from .values import strip_code_fence

GRAMMAR = "json_array"


class JsonArrayValues(Values):
    """A ``json_array.lark`` tree → the array (or lone object) it holds."""

    def start(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = JsonArrayValues()


def read(text: str, budget: GrammarBudget | None = None, *, fast: bool = True) -> Any:
    """The array (or object) ``text`` holds: the fast paths first (unless ``fast=False``: they declined it
    already), else the grammar (:class:`GrammarFailure`)."""
    return read_json(GRAMMAR, text, _TRANSFORMER, budget=budget, fast=fast)


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply in the format, read by the grammar alone (no fast path)."""
    return calls_in(read_grammar(GRAMMAR, text, _TRANSFORMER))[0]


def fast_calls(text: str, *, lenient: bool = False) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a whole reply read by ``json`` alone (or, ``lenient``, by the lenient fast path);
    ``None`` when that path does not read it."""
    value = lenient_json(text) if lenient else fast_json(text)
    return calls_in(value)[0] if isinstance(value, (list, dict)) else None


class JsonArray(Protocol):
    info = ProtocolInfo(
        id="json_array",
        name="JSON array of calls",
        description='A JSON array of call objects, [{"name": ..., "arguments": {...}}, ...], even for a single call.',
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
        if body[:1] in ("[", "{"):
            value = json_value(body)
            if isinstance(value, (list, dict)):
                self._take(reading, value, (offset, offset + len(body)), budget)
                return reading.extraction(empty_ok=isinstance(value, list))
            declined = (0, len(body))
        found = scan_values(body, depth=bracket_depth(limits))
        found.note(reading, offset)
        spans = found.spans
        failures: list[tuple[GrammarFailure, int, bool]] = []
        array_span: tuple[int, int] | None = None
        arrays_ignored = 0
        bare: list[tuple[tuple[int, int], list]] = []
        for start, end in spans:
            candidate = body[start:end]
            try:
                value = read(candidate, budget, fast=(start, end) != declined)
            except GrammarFailure as failure:
                if candidate[0] == "[" and array_span is None:
                    salvaged = self._salvage(reading, body, offset, start, end, failure, budget, found.depth)
                    if salvaged:
                        array_span = (start, end)
                        continue
                failures.append((failure, offset + start, ":" in candidate))
                continue
            calls, other = calls_in(value, budget)
            if isinstance(value, list):
                if not calls and (value or len(spans) > 1):
                    continue  # a bracket in prose ("[1]"), not an array of calls
                if array_span is not None:
                    arrays_ignored += 1
                    continue
                array_span = (start, end)
                reading.add(calls, (offset + start, offset + end))
                if other:
                    reading.note(f"{other} element(s) of the array are not call objects and were skipped")
            elif calls:
                bare.append(((offset + start, offset + end), calls))
        if array_span is None and bare:
            for span, calls in bare:
                reading.add(calls, span)
            reading.note("the call object(s) are not inside a JSON array")
        elif bare:
            reading.note(f"{len(bare)} call object(s) outside the array were ignored")
        if arrays_ignored:
            reading.note(f"{arrays_ignored} further array(s) of calls were ignored; json_array reads the first")
        report_failure(reading, failures, "the array could not be read", "a JSON candidate could not be read")
        if not spans:
            reading.note("the reply holds no JSON array")
        if array_span is None or len(spans) != 1 or not only_whitespace(body, spans):
            reading.compliant = False
        return reading.extraction(empty_ok=True)

    @staticmethod
    def _take(reading: Reading, value: Any, span: tuple[int, int], budget: GrammarBudget) -> None:
        calls, other = calls_in(value, budget)
        reading.add(calls, span)
        if isinstance(value, dict):
            reading.note("a single call object without the array brackets" if calls
                         else "the JSON object names no tool")
        elif other:
            reading.note(f"{other} element(s) of the array are not call objects and were skipped")

    @staticmethod
    def _salvage(reading: Reading, body: str, offset: int, start: int, end: int, failure: GrammarFailure,
                 budget: GrammarBudget, depth: int | None) -> int:
        """The complete call objects of an array that does not parse as a whole (say, cut off)."""
        found = 0
        for s, e in value_spans(body, start + 1, end, openers="{", depth=depth):
            try:
                value = read(body[s:e], budget)
            except GrammarFailure:
                continue
            found += reading.add(calls_in(value, budget)[0], (offset + s, offset + e))
        if found:
            reading.failed(f"the array breaks off or is malformed; read the {found} complete call(s) before that",
                           failure, offset + start)
        return found

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one JSON array and nothing else. Each element is a call object with the tool's "
                'name and its arguments: [{"name": "<tool name>", "arguments": {"<argument>": <value>}}]. '
                "Put every call you make in that one array, even when there is only one, and reply [] when "
                "no tool applies.")


PROTOCOL = JsonArray()
