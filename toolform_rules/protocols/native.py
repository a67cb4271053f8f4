"""native: calls as a provider's tool-calling API returns them, written out as JSON.

Grammar: ``grammars/native.lark``.  The calls of a native reply arrive in a structured
field, not in text; what reaches a text parser is that field as JSON.  Rendered like the
reference: one ``{"name": ..., "arguments": {...}}`` object per line.  Read: those, and
the provider envelopes around them (OpenAI ``tool_calls`` entries with arguments as JSON
text, a whole chat completion, Anthropic ``tool_use`` blocks, Gemini ``functionCall``
parts, Responses API ``function_call`` items) wherever they nest.  Fast path: ``json``
on the whole reply, then on each line; otherwise every bracket group is read (strict JSON,
the lenient fast path, then the grammar).

>>> reply = '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}'
>>> [(c.name, c.arguments) for c in PROTOCOL.parse(reply).calls]
[('f', {})]
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from .json_family import (GrammarBudget, Reading, Values, bracket_depth, call_json, fast_json, guarded, lenient_json,
                          native_calls, only_whitespace, read_candidates, read_grammar, report_failure, scan_values)
from .values import json_value, strip_code_fence

GRAMMAR = "native"


class NativeValues(Values):
    """A ``native.lark`` tree → the list of values (``start``) or one value (``candidate``)."""

    def candidate(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = NativeValues()


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply, read by the grammar alone."""
    return [call for value in read_grammar(GRAMMAR, text, _TRANSFORMER) for call in native_calls(value)]


def fast_calls(text: str, *, lenient: bool = False) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a whole reply read by ``json`` (or the lenient fast path): whole, else line by line."""
    read = lenient_json if lenient else fast_json
    value = read(text)
    if isinstance(value, (dict, list)):
        return native_calls(value)
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in text.split("\n"):
        if line.strip():
            value = read(line)
            if not isinstance(value, (dict, list)):
                return None
            calls.extend(native_calls(value))
    return calls


class Native(Protocol):
    info = ProtocolInfo(
        id="native",
        name="Provider-native tool calls",
        description="Calls through the provider's own tool-calling field, read here as the JSON that field holds.",
        parallel=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return guarded(self.info.id, lambda t: self._parse(t, limits), text)

    def _parse(self, text: str, limits: Limits) -> Extraction:
        reading = Reading(text)
        budget = GrammarBudget.of(limits)
        body, fenced = strip_code_fence(text)
        offset = text.find(body) if body else 0
        if fenced:
            reading.note("the JSON is inside a code fence", breaks_format=False)
        if body[:1] in ("{", "["):
            value = json_value(body)
            if isinstance(value, (dict, list)):
                self._take(reading, value, (offset, offset + len(body)), budget)
                return reading.extraction()
        declined = (0, len(body)) if body[:1] in ("{", "[") else None  # read in vain just now
        found = scan_values(body, depth=bracket_depth(limits))
        found.note(reading, offset)
        spans = found.spans
        values, failures = read_candidates(body, offset, GRAMMAR, _TRANSFORMER, spans=spans, budget=budget,
                                           declined=declined)
        for span, value in values:
            if not self._take(reading, value, span, budget, quiet=isinstance(value, list)):
                reading.compliant = False
        if not only_whitespace(body, spans):
            reading.note("the reply holds text besides the JSON")
        report_failure(reading, failures, "no JSON could be read", "a JSON candidate could not be read")
        if not spans:
            reading.note("the reply holds no JSON")
        return reading.extraction()

    @staticmethod
    def _take(reading: Reading, value: Any, span: tuple[int, int], budget: GrammarBudget, *,
              quiet: bool = False) -> int:
        found = reading.add(native_calls(value, budget=budget), span)
        if not found and not quiet:
            reading.note("a JSON value that holds no call was skipped")
        return found

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(call_json(c) for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Call the tools through the tool-calling interface of the API rather than in your text. "
                'Where calls have to be written out, write each as one JSON object on its own line: '
                '{"name": "<tool name>", "arguments": {"<argument>": <value>}}.')


PROTOCOL = Native()
