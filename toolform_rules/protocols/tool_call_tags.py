"""tool_call_tags: ``<tool_call>{"name": "tool", "arguments": {...}}</tool_call>``, one tag pair per call.

Grammar: ``grammars/tool_call_tags.lark`` (the Hermes, Qwen and Granite convention).  The
module finds each ``<tool_call>`` (any letter case) and its closing tag in one linear,
quote-aware scan — a ``</tool_call>`` inside a JSON string does not close the call — and
reads the content (strict JSON, the lenient fast path, then the grammar's ``body`` rule).
A missing closing tag is tolerated: the call ends where the next ``<tool_call>`` starts,
or at the end of the reply.  A reply without any tag but with a bare call object gives
that call, noted as not the format.

Rendering writes ``</`` inside JSON strings as ``<\\/`` (the same string in JSON), so no
value can close its tag early, whatever reads the reply.

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": "</tool_call>"})]))
<tool_call>
{"name": "f", "arguments": {"a": "<\\/tool_call>"}}
</tool_call>
>>> [(c.name, c.arguments) for c in PROTOCOL.parse('<tool_call>{"name": "f", "arguments": {}}').calls]
[('f', {})]
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import GrammarFailure
from .json_family import (_MISSING, GrammarBudget, Reading, Values, bracket_depth, call_json, calls_in, find_outside,
                          guarded, read_candidates, read_grammar, report_failure, scan_values)
from .values import json_value, strip_code_fence

GRAMMAR = "tool_call_tags"
OPEN = re.compile(r"<tool_call>", re.IGNORECASE)
CLOSE = re.compile(r"</tool_call>", re.IGNORECASE)
EITHER = re.compile(r"</?tool_call>", re.IGNORECASE)


class ToolCallTagValues(Values):
    """A ``tool_call_tags.lark`` tree → blocks (lists of values), a body's values, or one value."""

    def block(self, items: list) -> list:
        return items[1]

    def body(self, items: list) -> list:
        return [item for item in items if not hasattr(item, "type")]  # the fence tokens aside

    def candidate(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = ToolCallTagValues()


def _read_fast(text: str) -> Any:
    """A tag's content as one JSON object or array by the fast paths (a code fence around it allowed)."""
    stripped = text.strip()
    if stripped[:1] == "`":
        stripped = strip_code_fence(stripped)[0]
    if stripped[:1] not in ("{", "["):
        return _MISSING
    value = json_value(stripped)
    return value if isinstance(value, (dict, list)) else _MISSING


def read_body(text: str, budget: GrammarBudget | None = None, *, fast: bool = True) -> list:
    """The values a tag's content holds: one value through the fast paths, else the grammar's ``body``
    (``fast=False``: the fast paths declined it already)."""
    value = _read_fast(text) if fast else _MISSING
    if value is not _MISSING:
        return [value]
    return read_grammar(GRAMMAR, text, _TRANSFORMER, "body", budget=budget)


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply in the format, read by the grammar alone."""
    return [call for values in read_grammar(GRAMMAR, text, _TRANSFORMER) for value in values
            for call in calls_in(value)[0]]


def blocks(text: str, declined: set[tuple[int, int]] | None = None) -> list[tuple[int, int, int, int, bool, Any]]:
    """Each tagged call: (tag start, content start, content end, block end, closed, value).

    ``value`` is the content's JSON when a fast path already read it (``_MISSING`` if not);
    ``declined`` (when given) gets the (content start, content end) of each content the fast
    paths read in vain, so that they do not read it again.

    >>> [b[:5] for b in blocks('<tool_call>{"a": "</tool_call>"}</tool_call><tool_call>{}')]
    [(0, 11, 32, 44, True), (44, 55, 57, 57, False)]
    """
    found: list[tuple[int, int, int, int, bool, Any]] = []
    n = len(text)
    scan_to_end = True
    match = OPEN.search(text)
    while match is not None and len(found) < 1000:
        start, content = match.start(), match.end()
        tag = EITHER.search(text, content)
        value: Any = _MISSING
        tried = (-1, -1)
        if tag is not None:
            value = _read_fast(text[content:tag.start()])
            tried = (content, tag.start())
            if value is _MISSING and scan_to_end:  # the next tag may stand inside a string: look outside
                begin, end = find_outside(text, EITHER, content)
                if begin >= 0:
                    tag = EITHER.match(text, begin)
                else:  # none outside: the call runs to the end, unless its JSON never closes
                    scan_to_end = False  # once only: a second scan to the end would make this quadratic
                    value = _read_fast(text[content:])
                    if value is not _MISSING:
                        tag = None
        if declined is not None and value is _MISSING and tried == (content, n if tag is None else tag.start()):
            declined.add(tried)
        if tag is None:
            found.append((start, content, n, n, False, value))
            break
        closed = tag.group()[1] == "/"
        found.append((start, content, tag.start(), tag.end() if closed else tag.start(), closed, value))
        match = OPEN.search(text, tag.end()) if closed else tag
    return found


class ToolCallTags(Protocol):
    info = ProtocolInfo(
        id="tool_call_tags",
        name="<tool_call> JSON tags",
        description='Each call as a JSON object {"name": ..., "arguments": {...}} between <tool_call> and '
                    '</tool_call> tags.',
        parallel=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return guarded(self.info.id, lambda t: self._parse(t, limits), text)

    def _parse(self, text: str, limits: Limits) -> Extraction:
        reading = Reading(text)
        budget = GrammarBudget.of(limits)
        declined: set[tuple[int, int]] = set()
        found = blocks(text, declined)
        if not found:
            return self._bare(reading, text, limits, budget)
        failures: list[tuple[GrammarFailure, int, bool]] = []
        previous_end = 0
        outside = False
        for number, (start, content, end, block_end, closed, value) in enumerate(found, 1):
            outside = outside or bool(text[previous_end:start].strip())
            previous_end = block_end
            if not closed:
                reading.note(f"<tool_call> {number} has no closing tag", breaks_format=False)
            if not text[content:end].strip():
                reading.note(f"<tool_call> {number} is empty")
                continue
            try:
                values = [value] if value is not _MISSING else read_body(text[content:end], budget,
                                                                         fast=(content, end) not in declined)
            except GrammarFailure as failure:
                failures.append((failure, content, ":" in text[content:end]))
                continue
            for item in values:
                calls, other = calls_in(item, budget)
                reading.add(calls, (start, block_end))
                if other and not calls:
                    reading.note(f"<tool_call> {number} holds JSON that names no tool")
        if outside or text[previous_end:].strip():
            reading.note("the reply holds text outside the <tool_call> tags")
        report_failure(reading, failures, "no tagged call could be read", "a tagged call could not be read")
        return reading.extraction()

    @staticmethod
    def _bare(reading: Reading, text: str, limits: Limits, budget: GrammarBudget) -> Extraction:
        """No tag at all: the call objects standing bare in the reply, noted."""
        spans = scan_values(text, depth=bracket_depth(limits))
        spans.note(reading)
        values, failures = read_candidates(text, 0, GRAMMAR, _TRANSFORMER, spans=spans.spans, budget=budget)
        for span, value in values:
            reading.add(calls_in(value, budget)[0], span)
        reading.note("the reply has no <tool_call> tag" + ("; read the bare JSON instead" if reading.calls else ""))
        report_failure(reading, failures, "no JSON could be read", "a JSON candidate could not be read")
        return reading.extraction()

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        # "</" only occurs inside JSON strings, where "<\/" is the same text
        return "\n".join("<tool_call>\n" + call_json(c).replace("</", "<\\/") + "\n</tool_call>" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Write each call as a JSON object between <tool_call> and </tool_call> tags, and nothing else:\n"
                '<tool_call>\n{"name": "<tool name>", "arguments": {"<argument>": <value>}}\n</tool_call>\n'
                "For several calls, write one tagged object per call.")


PROTOCOL = ToolCallTags()
