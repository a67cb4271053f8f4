"""code_block_json: the call object inside a Markdown code fence tagged ``json``.

Grammar: ``grammars/code_block_json.lark``.  The module finds each fence (one linear,
quote-aware scan: a fence inside a JSON string does not close the block), reads its body
(strict JSON, the lenient fast path, then the grammar's ``body`` rule) and takes every call
object in it.  One fence per call is the format; several objects (or an array) in one fence
are read too.  A reply with no fence but a bare call object gives that call, noted; a fence
that never closes is read to the end of the reply.

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": "```"})]))
```json
{"name": "f", "arguments": {"a": "\\u0060\\u0060\\u0060"}}
```
>>> [(c.name, c.arguments) for c in PROTOCOL.parse("Sure:\\n```json\\n{'name': 'f', 'arguments': {}}\\n```").calls]
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
from .values import json_value

GRAMMAR = "code_block_json"
FENCE = re.compile("```")
_INFO = re.compile(r"[A-Za-z0-9_+.\-]*")
JSON_TAGS = ("", "json", "jsonc", "json5")


class CodeBlockValues(Values):
    """A ``code_block_json.lark`` tree → blocks as (info string, values)."""

    def block(self, items: list) -> tuple[str, list]:
        return str(items[0])[3:], items[1]

    def body(self, items: list) -> list:
        return list(items)

    def candidate(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = CodeBlockValues()


def read_body(text: str, budget: GrammarBudget | None = None, *, fast: bool = True) -> list:
    """The values a fence's body holds: one value through the fast paths, else the grammar's ``body``
    (``fast=False``: the fast paths declined it already)."""
    value = _read_fast(text) if fast else _MISSING
    if value is not _MISSING:
        return [value]
    return read_grammar(GRAMMAR, text, _TRANSFORMER, "body", budget=budget)


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply in the format, read by the grammar alone."""
    return [call for _info, values in read_grammar(GRAMMAR, text, _TRANSFORMER)
            for value in values for call in calls_in(value)[0]]


def fences(text: str, declined: set[tuple[int, int]] | None = None) -> list[tuple[int, int, int, int, str, Any]]:
    """Each fenced block: (fence start, body start, body end, block end, info string, value).

    ``value`` is the body's JSON value when a fast path already read it (``_MISSING`` if not);
    ``declined`` (when given) gets the (body start, body end) of each body the fast paths read in
    vain, so that they do not read it again.  A block that never closes runs to the end (its
    body end and block end are ``len(text)``).

    >>> [block[:5] for block in fences('x ```json\\n{"a": "```"}\\n``` y')]
    [(2, 9, 23, 26, 'json')]
    """
    blocks: list[tuple[int, int, int, int, str, Any]] = []
    pos = 0
    n = len(text)
    scan_to_end = True
    while len(blocks) < 1000:
        start = text.find("```", pos)
        if start < 0:
            break
        info = _INFO.match(text, start + 3).group()  # type: ignore[union-attr]
        body = start + 3 + len(info)
        close = text.find("```", body)
        value: Any = _MISSING
        tried = (-1, -1)
        if close >= 0:
            value = _read_fast(text[body:close])
            tried = (body, close)
            if value is _MISSING and scan_to_end:
                # not JSON up to the next fence: that fence may stand inside a string
                outside, _ = find_outside(text, FENCE, body)
                if outside >= 0:
                    close = outside
                else:  # none outside: the block runs to the end, unless its JSON never closes
                    scan_to_end = False  # once only: a second scan to the end would make this quadratic
                    value = _read_fast(text[body:])
                    if value is not _MISSING:
                        close = -1
        if declined is not None and value is _MISSING and tried == (body, close if close >= 0 else n):
            declined.add(tried)
        if close < 0:
            blocks.append((start, body, n, n, info, value))
            break
        blocks.append((start, body, close, close + 3, info, value))
        pos = close + 3
    return blocks


def _read_fast(text: str) -> Any:
    """``text`` (stripped) as one JSON object or array by the fast paths, else ``_MISSING``."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return _MISSING
    value = json_value(stripped)
    return value if isinstance(value, (dict, list)) else _MISSING


class CodeBlockJson(Protocol):
    info = ProtocolInfo(
        id="code_block_json",
        name="JSON in a fenced code block",
        description='The call object {"name": ..., "arguments": {...}} inside a ```json fenced code block.',
        parallel=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return guarded(self.info.id, lambda t: self._parse(t, limits), text)

    def _parse(self, text: str, limits: Limits) -> Extraction:
        reading = Reading(text)
        budget = GrammarBudget.of(limits)
        declined: set[tuple[int, int]] = set()
        blocks = fences(text, declined)
        if not blocks:
            return self._bare(reading, text, limits, budget)
        failures: list[tuple[GrammarFailure, int, bool]] = []
        previous_end = 0
        outside = False
        for start, body, end, block_end, info, value in blocks:
            outside = outside or bool(text[previous_end:start].strip())
            previous_end = block_end
            if block_end == len(text) and end == len(text) and not text.endswith("```"):
                reading.note(f"the code fence at line {text.count(chr(10), 0, start) + 1} is never closed")
            try:
                values = [value] if value is not _MISSING else read_body(text[body:end], budget,
                                                                         fast=(body, end) not in declined)
            except GrammarFailure as failure:
                failures.append((failure, body, ":" in text[body:end]))
                continue
            found = 0
            for item in values:
                calls, other = calls_in(item, budget)
                found += reading.add(calls, (body, end))
                if other and not calls:
                    reading.note("a fenced JSON value that names no tool was skipped")
            if found and info.lower() not in JSON_TAGS:
                reading.note(f"the code fence is tagged {info!r}, not 'json'")
        if not reading.calls:  # fences that pair up wrongly (a fence inside a fence): read the JSON bare
            bare = self._bare(Reading(text), text, limits, budget)
            if bare.calls:
                return bare
        if outside or text[previous_end:].strip():
            reading.note("the reply holds text outside the code fences")
        report_failure(reading, failures, "no fenced JSON could be read", "a fenced block could not be read")
        return reading.extraction()

    @staticmethod
    def _bare(reading: Reading, text: str, limits: Limits, budget: GrammarBudget) -> Extraction:
        """No fence at all: the call objects standing bare in the reply, noted."""
        found = scan_values(text, depth=bracket_depth(limits))
        found.note(reading)
        values, failures = read_candidates(text, 0, GRAMMAR, _TRANSFORMER, spans=found.spans, budget=budget)
        for span, value in values:
            reading.add(calls_in(value, budget)[0], span)
        reading.note("the reply has no ```json code fence" + ("; read the bare JSON instead" if reading.calls else ""))
        report_failure(reading, failures, "no JSON could be read", "a JSON candidate could not be read")
        return reading.extraction()

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        # a backtick only occurs inside JSON strings: written as \u0060, no run of them can close the fence
        return "\n".join("```json\n" + call_json(c).replace("`", "\\u0060") + "\n```" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer with the call as a JSON object inside a Markdown code block marked json, and nothing "
                'else:\n```json\n{"name": "<tool name>", "arguments": {"<argument>": <value>}}\n```\n'
                "For several calls, write one such block per call.")


PROTOCOL = CodeBlockJson()
