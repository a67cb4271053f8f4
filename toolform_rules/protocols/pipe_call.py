r"""pipe_call: ``tool_name|arg=value|arg=value`` — one call per line.

Grammar: ``grammars/pipe_call.lark``.  Values are text (``text_values``), nested values
JSON text.  A value escapes its delimiters with a backslash (``\|``, ``\=``), and writes
``\\``, ``\n``, ``\r``, ``\t`` and a space kept at either end as ``\ ``, so any text
round-trips on one line.  A bare field ``|flag|`` is the boolean ``true`` (the only value
the syntax itself types).

>>> from toolform_rules import ToolCall, sample_toolset
>>> text = PROTOCOL.render_calls([ToolCall("legal_draft_v3", {"counterparty": "A|B = C ", "term_months": 12})])
>>> print(text)
legal_draft_v3|counterparty=A\|B \= C\ |term_months=12
>>> PROTOCOL.parse(text, sample_toolset()).calls[0].arguments
{'counterparty': 'A|B = C ', 'term_months': '12'}
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import Transformer, Tree
from .text_family import (GrammarBudget, LineStarts, Read, backslash_escape, backslash_unescape, grammar_parse,
                          never_raises, read_calls, resolve_tool, terminal_regex, trim_field, value_text)

GRAMMAR = "pipe_call"
SPECIALS = "|="

_NAME = re.compile(terminal_regex(GRAMMAR, "NAME"))
_KEY = re.compile(terminal_regex(GRAMMAR, "KEY"))
#: the grammar's VALUE terminal, written so that a run of plain characters is one step (a value as
#: long as the reply is read in C, not a character at a time); the tests hold it to the grammar's
_VALUE = re.compile(r"(?:[^|\\ \t\r\n]|\\[^\r\n])(?:[ \t]*+(?:[^|\\ \t\r\n]++|\\[^\r\n]))*+")
_FIELD = re.compile(r"(?:[^|\\\r\n]++|\\[^\r\n])*+")
_START = re.compile(r"[ \t]*[A-Za-z_][\w.\-]*[ \t]*(?P<pipe>\|)?")
# the lines ``starts`` may take: a name and a pipe, or a name alone on its line
_CANDIDATES = LineStarts(r"[ \t]*[A-Za-z_][\w.\-]*+[ \t]*+(?:\||\r?(?:\n|\Z))")

#: one field as read: ("pair", key, raw value or None) or ("flag", key, None)
Field = tuple[str, str, "str | None"]


def _fields_fast(segment: str) -> tuple[str, list[Field]] | None:
    """The name and fields of one line, split with the grammar's terminals; ``None`` when
    anything falls outside them (the grammar then reads the line and says where it stopped)."""
    if "\\" not in segment and "\r" not in segment and "\n" not in segment:
        return _fields_split(segment)
    n = len(segment)
    m = _FIELD.match(segment)
    if m is None:
        return None
    name = m.group().strip(" \t")
    if _NAME.fullmatch(name) is None:
        return None
    fields: list[Field] = []
    pos = m.end()
    while pos < n:
        if segment[pos] != "|":
            return None
        m = _FIELD.match(segment, pos + 1)
        if m is None:
            return None
        pos = m.end()
        text = m.group()
        key, eq, raw = text.partition("=")
        key = key.strip(" \t")
        if not eq:
            if not key:
                continue  # an empty field
            if _KEY.fullmatch(key) is None:
                return None
            fields.append(("flag", key, None))
            continue
        if _KEY.fullmatch(key) is None:
            return None
        value = trim_field(raw)
        if value and _VALUE.fullmatch(value) is None:
            return None
        fields.append(("pair", key, value or None))
    return name, fields


def _fields_split(segment: str) -> tuple[str, list[Field]] | None:
    """:func:`_fields_fast` for a line without escapes: every pipe splits a field."""
    name, *parts = segment.split("|")
    name = name.strip(" \t")
    if _NAME.fullmatch(name) is None:
        return None
    fields: list[Field] = []
    for text in parts:
        key, eq, raw = text.partition("=")
        key = key.strip(" \t")
        if not eq:
            if not key:
                continue
            if _KEY.fullmatch(key) is None:
                return None
            fields.append(("flag", key, None))
            continue
        if _KEY.fullmatch(key) is None:
            return None
        value = raw.strip(" \t")
        fields.append(("pair", key, value or None))
    return name, fields


class _Fields(Transformer):
    def start(self, calls: list) -> list:
        return calls

    def call(self, items: list) -> tuple[str, list[Field]]:
        return str(items[0]), [f for f in items[1:] if isinstance(f, tuple)]

    def flag(self, items: list) -> Field:
        return ("flag", str(items[0]), None)

    def pair(self, items: list) -> Field:
        return ("pair", str(items[0]), str(items[1]) if len(items) > 1 else None)


def _fields_grammar(segment: str, budget: GrammarBudget | None = None) -> tuple[str, list[Field]]:
    tree = grammar_parse(GRAMMAR, segment, budget)
    calls = _Fields().transform(tree) if isinstance(tree, Tree) else []
    return calls[0] if calls else ("", [])


def build_call(name: str, fields: list[Field]) -> Read:
    arguments: dict[str, Any] = {}
    notes: list[str] = []
    for kind, key, raw in fields:
        if key in arguments:
            notes.append(f"{name}: {key} is given more than once; the last value is kept")
        arguments[key] = True if kind == "flag" else backslash_unescape(raw or "", SPECIALS)
    return name, arguments, notes, True


class PipeCall(Protocol):
    info = ProtocolInfo(
        id="pipe_call",
        name="Pipe-delimited call",
        description="`tool_name|arg=value|arg=value` on one line per call; values are text, typed from the schema.",
        parallel=True,
        text_values=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return never_raises(self.id, self._parse, text, tools, limits)

    def _parse(self, text: str, tools: Toolset | None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        budget = GrammarBudget.of(limits)

        def starts(head: str) -> bool:
            m = _START.match(head)
            if m is None:
                return False
            if m.group("pipe"):
                return True
            # a name alone on its line: a call without arguments, to a known tool only
            return m.end() == len(head) and resolve_tool(head.strip(), tools) is not None

        def read_one(segment: str) -> Read:
            found = _fields_fast(segment)
            if found is None:
                found = _fields_grammar(segment, budget)
            return build_call(*found)

        return read_calls(self.id, text, starts, read_one, candidates=_CANDIDATES)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self._render(call) for call in calls)

    @staticmethod
    def _render(call: ToolCall) -> str:
        parts = [call.name]
        for key, value in call.arguments.items():
            parts.append(f"{key}={backslash_escape(value_text(value), SPECIALS)}")
        return "|".join(parts)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one line per call and nothing else: the tool's name, then each argument as "
                "|name=value. Write a nested object or list as JSON. Inside a value, put a backslash before "
                "| and =, and write a backslash as \\\\ and a line break as \\n:\n"
                "tool_name|city=Paris|days=3|tags=[\"a\", \"b\"]")


PROTOCOL = PipeCall()
