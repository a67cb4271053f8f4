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
from typing import Any, Iterable

from ....calls import ToolCall
from ....schema.toolset import Toolset
from .shared import (Calls, NameFirst, Reading, backslash_escape, backslash_unescape, is_name, split_pipes,
                          trim_field, value_text)

SPECIALS = "|="

#: the grammar's terminals (the tests hold them to ``grammars/pipe_call.lark``; NAME is the family's);
#: VALUE is written so that a run of plain characters is one step (a value as long as the reply is read in C)
KEY = r"[^|=\\\s](?:[^|=\\\r\n]*[^|=\\\s])?"
_KEY = re.compile(KEY)
_VALUE = re.compile(r"(?:[^|\\ \t\r\n]|\\[^\r\n])(?:[ \t]*+(?:[^|\\ \t\r\n]++|\\[^\r\n]))*+")

#: one call as read: its name, its fields (key, raw value — ``True`` for a bare flag), and whether a
#: value holds a backslash (an escape to read)
Fields = tuple[str, list[tuple[str, Any]], bool]


def _decode(raw: Any) -> Any:
    return raw if raw is True or "\\" not in raw else backslash_unescape(raw, SPECIALS)


class _Fields(Calls):
    def call(self, items: list) -> Fields:
        fields = [f for f in items[1:] if isinstance(f, tuple)]
        return str(items[0]), fields, any(raw is not True and "\\" in raw for _, raw in fields)

    def flag(self, items: list) -> tuple[str, Any]:
        return str(items[0]), True

    def pair(self, items: list) -> tuple[str, Any]:
        return str(items[0]), str(items[1]) if len(items) > 1 else ""


class PipeCall(NameFirst):
    info = NameFirst.about(
        "pipe_call", "Pipe-delimited call",
        "`tool_name|arg=value|arg=value` on one line per call; values are text, typed from the schema.")
    grammar = "pipe_call"
    transformer = _Fields
    delimiter = "|"

    def read_fast(self, segment: str, reading: Reading | None = None) -> Fields | None:
        """The name and fields of one line, split with the grammar's terminals."""
        plain = "\\" not in segment and "\r" not in segment and "\n" not in segment  # (not plain: an escape)
        parts = segment.split("|") if plain else split_pipes(segment)
        if not parts or not is_name(name := parts[0].strip(" \t")):
            return None
        fields: list[tuple[str, Any]] = []
        for text in parts[1:]:
            key, eq, raw = text.partition("=")
            key = key.strip(" \t")
            if not key and not eq:
                continue  # an empty field
            if not (key.isidentifier() or _KEY.fullmatch(key)):
                return None
            value = raw.strip(" \t") if plain else trim_field(raw)
            if not plain and value and _VALUE.fullmatch(value) is None:
                return None
            fields.append((key, value if eq else True))  # (a bare key: a flag)
        return name, fields, not plain

    def build(self, found: Fields, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        name, fields, escaped = found
        return [(name, reading.collect(name, fields, _decode if escaped else None))]

    def render_call(self, call: ToolCall) -> str:
        return "|".join([call.name, *(f"{key}={backslash_escape(value_text(value), SPECIALS)}"
                                      for key, value in call.arguments.items())])

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one line per call and nothing else: the tool's name, then each argument as "
                "|name=value. Write a nested object or list as JSON. Inside a value, put a backslash before "
                "| and =, and write a backslash as \\\\ and a line break as \\n:\n"
                "tool_name|city=Paris|days=3|tags=[\"a\", \"b\"]")


PROTOCOL = PipeCall()
