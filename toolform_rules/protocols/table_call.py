r"""table_call: a Markdown table ``| tool | argument | value |`` with one row per argument.

Grammar: ``grammars/table_call.lark``.  Each call is its own table (tables separated by a
blank line); inside a table, a row naming another tool, or repeating an argument, also starts
a new call, and a row with an empty argument cell is a call without arguments.  Columns are
found by their header (``tool``/``function``, ``argument``/``parameter``/``name``,
``value``), else by position.  Cells escape the delimiter as ``\|`` (as GitHub Markdown
does) and write ``\\``, ``\n``, ``\r``, ``\t`` and a space kept at either end as ``\ ``, so
any text round-trips inside one row.  Values are text (``text_values``).

>>> from toolform_rules import ToolCall, sample_toolset
>>> text = PROTOCOL.render_calls([ToolCall("legal_draft_v3", {"counterparty": "A|B", "term_months": 12})])
>>> print(text)
| tool | argument | value |
|---|---|---|
| legal_draft_v3 | counterparty | A\|B |
| legal_draft_v3 | term_months | 12 |
>>> PROTOCOL.parse(text, sample_toolset()).calls[0].arguments
{'counterparty': 'A|B', 'term_months': '12'}
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import GrammarFailure, Token, Transformer, Tree
from .text_family import (GrammarBudget, LineStarts, Reading, backslash_escape, backslash_unescape, grammar_parse,
                          never_raises, scan_lines, terminal_regex, trim_field, value_text, where)

GRAMMAR = "table_call"
SPECIALS = "|"

_SEPARATOR = re.compile(terminal_regex(GRAMMAR, "SEPARATOR"))
#: the grammar's CELL terminal, written so that a run of plain characters is one step (a cell as long
#: as the reply is read in C, not a character at a time); the tests hold it to the grammar's
_CELL = re.compile(r"(?:[^|\\ \t\r\n]|\\[^\r\n])(?:[ \t]*+(?:[^|\\ \t\r\n]++|\\[^\r\n]))*+")
_PART = re.compile(r"(?:[^|\\\r\n]++|\\[^\r\n])*+")
_ROW_START = re.compile(r"[ \t]*\|")
_ROWS = LineStarts(r"[ \t]*\|")
_MORE_ROWS = re.compile(r"(?:\r?\n[ \t]*\|[^\n]*+)*+")

TOOL_WORDS = ("tool", "function", "tool name", "tool_name", "function name")
ARGUMENT_WORDS = ("argument", "arg", "parameter", "param", "name", "key", "argument name", "parameter name")
VALUE_WORDS = ("value", "argument value", "val")

#: a table as read: its lines, each a row of cells or None for a separator row
Lines = list["list[str] | None"]


def _cells_fast(line: str) -> list[str] | None:
    """The cells of one row, split on unescaped pipes; ``None`` when the row has something the
    grammar's cell terminal does not take (a carriage return, a lone backslash at its end)."""
    if "\r" in line:
        return None
    if "\\" not in line:  # no escapes: every pipe splits, every trimmed part is a cell
        parts = line.split("|")
    else:
        parts = []
        pos = 0
        n = len(line)
        while True:
            m = _PART.match(line, pos)
            if m is None:
                return None
            parts.append(m.group())
            pos = m.end()
            if pos >= n:
                break
            if line[pos] != "|":
                return None
            pos += 1
    if len(parts) > 1 and not parts[0].strip(" \t"):
        parts = parts[1:]  # the leading pipe
    if len(parts) > 0 and not parts[-1].strip(" \t") and line.rstrip(" \t").endswith("|"):
        parts = parts[:-1]  # the trailing pipe
    if "\\" not in line:
        return [part.strip(" \t") for part in parts]
    cells = []
    for part in parts:
        cell = trim_field(part)
        if cell and _CELL.fullmatch(cell) is None:
            return None
        cells.append(cell)
    return cells


def _table_fast(segment: str) -> Lines | None:
    lines: Lines = []
    rows = segment.split("\n")
    for i, line in enumerate(rows):
        if i < len(rows) - 1 and line.endswith("\r"):
            line = line[:-1]
        if not line.strip(" \t"):
            return None  # blank lines separate tables: the grammar reads those
        if _SEPARATOR.fullmatch(line.strip(" \t")) is not None:
            lines.append(None)
            continue
        cells = _cells_fast(line)
        if cells is None:
            return None
        lines.append(cells)
    if len(lines) < 2 or lines[0] is None or lines[1] is not None:
        return None
    return lines


class _Table(Transformer):
    def start(self, tables: list) -> list:
        return tables

    def table(self, items: list) -> Lines:
        return [None if isinstance(item, Token) else item for item in items]

    def row(self, tokens: list) -> list[str]:
        cells: list[str] = []
        current: str | None = None
        for i, token in enumerate(tokens):
            if token.type == "CELL":
                current = str(token)
            else:
                if i > 0 or current is not None:
                    cells.append(current if current is not None else "")
                current = None
        if current is not None:
            cells.append(current)
        return cells


def _table_grammar(segment: str, budget: GrammarBudget | None = None) -> Lines:
    tree = grammar_parse(GRAMMAR, segment, budget)
    tables = _Table().transform(tree) if isinstance(tree, Tree) else []
    return tables[0] if tables else []


def _columns(header: list[str]) -> tuple[int, int, int] | None:
    """Which cells hold the tool, the argument and the value (by header word, else by position);
    ``None`` for a table of fewer than three columns without a tool column."""
    words = [backslash_unescape(c, SPECIALS).strip().strip("*`_").lower() for c in header]

    def find(options: tuple[str, ...], default: int, taken: tuple[int, ...] = ()) -> int:
        for i, word in enumerate(words):
            if word in options and i not in taken:
                return i
        return default

    tool = find(TOOL_WORDS, -1)
    if tool < 0:
        if len(header) < 3:
            return None
        tool = 0
    value = find(VALUE_WORDS, 2, (tool,))
    argument = find(ARGUMENT_WORDS, 1, (tool, value))
    return tool, argument, value


def build_calls(lines: Lines) -> tuple[list[tuple[str, dict[str, Any]]], list[str], bool]:
    """The calls of one table's lines (header, separator, rows; a row followed by a separator is
    the header of the next table); the flag is false when a table is not in the format."""
    calls: list[tuple[str, dict[str, Any]]] = []
    notes: list[str] = []
    columns = _columns(lines[0] or [])
    if columns is None:
        return [], ["table_call: the table has no tool column"], False
    current: tuple[str, dict[str, Any]] | None = None
    i = 2
    while i < len(lines):
        cells = lines[i]
        if cells is None:  # a separator: the row before it was a header (already taken as a row)
            i += 1
            continue
        if i + 1 < len(lines) and lines[i + 1] is None:  # a header row: a new table
            columns = _columns(cells)
            if columns is None:
                notes.append("table_call: the table has no tool column")
                return calls, notes, False
            current = None
            i += 2
            continue
        i += 1
        width = max(columns) + 1
        if len(cells) < width:
            notes.append(f"table_call: a row has {len(cells)} cells where {width} are expected; missing cells "
                         "are read as empty")
            cells = cells + [""] * (width - len(cells))
        tool = backslash_unescape(cells[columns[0]], SPECIALS)
        argument = backslash_unescape(cells[columns[1]], SPECIALS)
        value = backslash_unescape(cells[columns[2]], SPECIALS)
        if current is None or (tool and tool != current[0]) or argument in current[1]:
            if not tool and current is None:
                notes.append("table_call: a row names no tool; it is left out")
                continue
            current = (tool or current[0] if current is not None else tool, {})
            calls.append(current)
        if argument:
            current[1][argument] = value
    return calls, notes, True


class TableCall(Protocol):
    info = ProtocolInfo(
        id="table_call",
        name="Markdown table call",
        description="A Markdown table with the columns tool | argument | value, one row per argument and one "
                    "table per call; values are text, typed from the schema.",
        parallel=True,
        text_values=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return never_raises(self.id, self._parse, text, tools, limits)

    def _parse(self, text: str, tools: Toolset | None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        budget = GrammarBudget.of(limits)

        def extent(text: str, start: int, end: int) -> int:
            """A table runs over the following lines that start with a pipe (found in one match)."""
            stop = _MORE_ROWS.match(text, end).end()  # type: ignore[union-attr]
            if stop > end and text[stop - 1] == "\r":  # the last row's line break is \r\n, or it ends the text
                stop -= 1
            return stop

        spans, prose, truncated = scan_lines(text, lambda head: _ROW_START.match(head) is not None, extent,
                                             candidates=_ROWS)
        reading = Reading()
        for start, end, line in spans:
            segment = text[start:end]
            lines = _table_fast(segment)
            if lines is None:
                try:
                    lines = _table_grammar(segment, budget)
                except GrammarFailure as failure:
                    reading.note(f"table_call: the table on line {line} could not be read: {where(failure, line)}")
                    continue
            calls, notes, clean = build_calls(lines)
            for sentence in notes:
                reading.note(sentence, breaks_format=not clean)
            for name, arguments in calls:
                reading.calls.append(RawCall(name, arguments, (start, end)))
        if truncated:
            reading.note(f"table_call: only the first {len(reading.calls)} tables are read")
        return reading.extraction(prose)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n\n".join(self._render(call) for call in calls)

    @staticmethod
    def _render(call: ToolCall) -> str:
        name = backslash_escape(call.name, SPECIALS)
        lines = ["| tool | argument | value |", "|---|---|---|"]
        for key, value in call.arguments.items():
            lines.append(f"| {name} | {backslash_escape(key, SPECIALS)} | "
                         f"{backslash_escape(value_text(value), SPECIALS)} |")
        if not call.arguments:
            lines.append(f"| {name} |  |  |")
        return "\n".join(lines)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with a Markdown table and nothing else, with the columns tool, argument and value and one "
                "row per argument. For several calls, write one table per call with a blank line between them. "
                "Write a nested object or list as JSON; inside a cell, write | as \\| and a line break as \\n:\n"
                "| tool | argument | value |\n|---|---|---|\n| tool_name | city | New York |\n"
                "| tool_name | days | 3 |")


PROTOCOL = TableCall()
