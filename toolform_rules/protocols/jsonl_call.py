"""jsonl_call: JSON Lines — ``{"name": "tool", "arguments": {...}}``, one call object per line.

Grammar: ``grammars/jsonl_call.lark``.  Fast path: each non-blank line as strict JSON
through ``json``; otherwise every bracket group of the reply is read (strict JSON, the
lenient fast path, then the grammar), so prose between the lines, a pretty-printed object
or two objects on one line still give their calls, with a note that the reply is not one
object per line.  An empty reply is "no call" and keeps to the format.

>>> from toolform_rules.calls import ToolCall
>>> reply = PROTOCOL.render_calls([ToolCall("f", {"a": "x\\ny"}), ToolCall("g", {})])
>>> print(reply)
{"name": "f", "arguments": {"a": "x\\ny"}}
{"name": "g", "arguments": {}}
>>> [(c.name, c.arguments) for c in PROTOCOL.parse(reply).calls]
[('f', {'a': 'x\\ny'}), ('g', {})]
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from .json_family import (_MISSING, MAX_CANDIDATES, GrammarBudget, Reading, Values, bracket_depth, call_json, calls_in,
                          fast_json, guarded, lenient_json, read_candidates, read_grammar, report_failure, scan_values)
from .values import json_value, strip_code_fence

GRAMMAR = "jsonl_call"


class JsonlValues(Values):
    """A ``jsonl_call.lark`` tree → the list of objects (``start``) or one value (``candidate``)."""

    def candidate(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = JsonlValues()


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply in the format, read by the grammar alone."""
    return [call for value in read_grammar(GRAMMAR, text, _TRANSFORMER) for call in calls_in(value)[0]]


def fast_calls(text: str, *, lenient: bool = False) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a whole reply read line by line by ``json`` (or the lenient fast path); ``None`` if it cannot."""
    read = lenient_json if lenient else fast_json
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in text.split("\n"):
        if line.strip():
            value = read(line)
            if not isinstance(value, dict):
                return None
            calls.extend(calls_in(value)[0])
    return calls


class JsonlCall(Protocol):
    info = ProtocolInfo(
        id="jsonl_call",
        name="One JSON call per line",
        description='JSON Lines: each call is one {"name": ..., "arguments": {...}} object on a line of its own.',
        parallel=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return guarded(self.info.id, lambda t: self._parse(t, limits), text)

    def _parse(self, text: str, limits: Limits) -> Extraction:
        reading = Reading(text)
        budget = GrammarBudget.of(limits)
        body, _fenced = strip_code_fence(text)
        offset = text.find(body) if body else 0
        if not body:
            return reading.extraction(empty_ok=True)
        if body[0] == "{" and self._lines(reading, body, offset, budget):
            return reading.extraction()
        found = scan_values(body, depth=bracket_depth(limits))
        found.note(reading, offset)
        spans = found.spans
        values, failures = read_candidates(body, offset, GRAMMAR, _TRANSFORMER, spans=spans, budget=budget)
        read = dict(values)
        previous_end = offset
        layout_notes: list[str] = []
        for start, end in ((offset + s, offset + e) for s, e in spans):
            value = read.get((start, end), _MISSING)
            calls, other = calls_in(value, budget) if value is not _MISSING else ([], 0)
            if isinstance(value, list) and not calls:
                continue  # a bracket in prose ("[1]"), not a call
            reading.add(calls, (start, end))
            number = len(reading.calls)
            if isinstance(value, list):
                reading.note(f"an array of {len(calls)} call(s), not one object per line")
            elif isinstance(value, dict) and not calls:
                reading.note("a JSON object that names no tool was skipped")
            gap = text[previous_end:start]
            if gap.strip():
                reading.compliant = False
            if calls and previous_end != offset and "\n" not in gap:
                layout_notes.append(f"call {number} shares a line with the one before")
            elif calls and "\n" in text[start:end]:
                layout_notes.append(f"call {number} spans several lines")
            previous_end = end
        if text[previous_end:offset + len(body)].strip() or not reading.compliant:
            reading.note("the reply holds text besides the JSON lines")
        for sentence in layout_notes:
            reading.note(sentence)
        report_failure(reading, failures, "no JSON line could be read", "a line could not be read")
        if not spans:
            reading.note("the reply holds no JSON object")
        return reading.extraction()

    @staticmethod
    def _lines(reading: Reading, body: str, offset: int, budget: GrammarBudget) -> bool:
        """The fast paths: every non-blank line is one call object (strict JSON, else the lenient path).

        At most :data:`MAX_CANDIDATES` lines are read (as many as the other paths read); more are noted.
        """
        found: list[tuple[list[tuple[str, dict[str, Any]]], tuple[int, int]]] = []
        position = offset
        more = False
        for line in body.split("\n"):
            if line.strip():
                if len(found) == MAX_CANDIDATES:
                    more = True
                    break
                if line.lstrip()[:1] != "{":
                    return False
                value = json_value(line)
                if not isinstance(value, dict):
                    return False
                call = calls_in(value, budget)[0]
                if not call:
                    return False
                found.append((call, (position, position + len(line))))
            position += len(line) + 1
        for call, span in found:
            reading.add(call, span)
        if more:
            reading.note(f"the reply holds more than {MAX_CANDIDATES} lines; the first {MAX_CANDIDATES} were read")
        return True

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(call_json(c) for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Write each call as one JSON object on a line of its own, and nothing else: "
                '{"name": "<tool name>", "arguments": {"<argument>": <value>}}. '
                "Several calls take several lines; no call at all takes no lines.")


PROTOCOL = JsonlCall()
