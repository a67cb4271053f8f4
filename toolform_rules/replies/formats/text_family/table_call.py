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
from typing import Any, Iterable

from ....calls import ToolCall
from ....grammar import Token
from ....schema.toolset import Toolset
from .shared import (Calls, Reading, TextProtocol, backslash_escape, backslash_unescape, split_pipes,
                          trim_field, value_text)

SPECIALS = "|"

#: the grammar's terminals (the tests hold them to ``grammars/table_call.lark``); CELL is written so that
#: a run of plain characters is one step (a cell as long as the reply is read in C)
SEPARATOR = r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?(?=[ \t]*(?:\r?\n|$))"
CELL = r"(?:[^|\\ \t\r\n]|\\[^\r\n])(?:[ \t]*+(?:[^|\\ \t\r\n]++|\\[^\r\n]))*+"
_SEPARATOR = re.compile(SEPARATOR)
_CELL = re.compile(CELL)
_MORE_ROWS = re.compile(r"(?:\r?\n[ \t]*\|[^\n]*+)*+")

TOOL_WORDS = ("tool", "function", "tool name", "tool_name", "function name")
ARGUMENT_WORDS = ("argument", "arg", "parameter", "param", "name", "key", "argument name", "parameter name")
VALUE_WORDS = ("value", "argument value", "val")

#: a table as read: its lines, each a row of cells or None for a separator row
Lines = list["list[str] | None"]


def _cells(line: str) -> list[str] | None:
    """The cells of one row, split on unescaped pipes; ``None`` when the row has something the
    grammar's cell terminal does not take (a carriage return, a lone backslash at its end)."""
    parts = split_pipes(line)
    if not parts:
        return None
    if len(parts) > 1 and not parts[0].strip(" \t"):
        parts = parts[1:]  # the leading pipe
    if parts and not parts[-1].strip(" \t") and line.rstrip(" \t").endswith("|"):
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


class _Table(Calls):
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


def _tables(lines: Lines) -> list[tuple[list[str], list[list[str]]]]:
    """Each table's header and rows: a row followed by a separator row is a header (the first row is one)."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    for i, cells in enumerate(lines):
        if cells is not None and i + 1 < len(lines) and lines[i + 1] is None:
            tables.append((cells, []))
        elif cells is not None:
            tables[-1][1].append(cells)
    return tables


def _row(cells: list[str], written: int, columns: tuple[int, int, int], reading: Reading) -> tuple[str, str, str]:
    """A row's tool, argument and value; cells past the table's columns are left out, missing ones read as empty
    (both noted)."""
    if len(cells) > written and any(cells[written:]):  # prose after the row, as a cell
        reading.note(f"table_call: a row has {len(cells)} cells where the table has {written} columns; the cells "
                     "past the last column are left out", breaks_format=True)
    width = max(columns) + 1
    if len(cells) < width:
        reading.note(f"table_call: a row has {len(cells)} cells where {width} are expected; missing cells are "
                     "read as empty")
        cells = cells + [""] * (width - len(cells))
    tool, argument, value = (backslash_unescape(cells[column], SPECIALS) for column in columns)
    return tool, argument, value


class TableCall(TextProtocol):
    info = TextProtocol.about(
        "table_call", "Markdown table call",
        "A Markdown table with the columns tool | argument | value, one row per argument and one table per "
        "call; values are text, typed from the schema.")
    grammar = "table_call"
    what = "table"
    transformer = _Table
    start = r"[ \t]*\|"
    needle = "|"

    def extent(self, text: str, start: int, end: int) -> int:
        """A table runs over the following lines that start with a pipe (found in one match)."""
        stop = _MORE_ROWS.match(text, end).end()  # type: ignore[union-attr]
        if stop > end and text[stop - 1] == "\r":  # the last row's line break is \r\n, or it ends the text
            stop -= 1
        return stop

    def read_fast(self, segment: str, reading: Reading | None = None) -> Lines | None:
        """A table's rows split on unescaped pipes, separators as ``None``; ``None`` for a blank line
        (blank lines separate tables: the grammar reads those) or a row the cell terminal does not take."""
        lines: Lines = []
        rows = segment.split("\n")
        last = len(rows) - 1
        for i, line in enumerate(rows):
            if i < last and line[-1:] == "\r":
                line = line[:-1]
            bare = line.strip(" \t")
            if not bare:
                return None
            if bare[0] in "|:-" and "-" in bare and _SEPARATOR.fullmatch(bare) is not None:
                lines.append(None)
                continue
            cells = _cells(line)
            if cells is None:
                return None
            lines.append(cells)
        if len(lines) < 2 or lines[0] is None or lines[1] is not None:
            return None
        return lines

    def build(self, found: Lines, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        """The calls of one table's lines (header, separator, rows; a row followed by a separator is
        the header of the next table)."""
        calls: list[tuple[str, dict[str, Any]]] = []
        for header, rows in _tables(found):
            columns = _columns(header)
            if columns is None:
                reading.note("table_call: the table has no tool column", breaks_format=True)
                return calls
            current: tuple[str, dict[str, Any]] | None = None
            for cells in rows:
                tool, argument, value = _row(cells, len(header), columns, reading)
                if current is None and not tool:
                    reading.note("table_call: a row names no tool; it is left out")
                    continue
                if current is None or (tool and tool != current[0]) or argument in current[1]:
                    current = (tool if current is None else tool or current[0], {})
                    calls.append(current)
                if argument:
                    current[1][argument] = value
        return calls

    separator = "\n\n"

    def render_call(self, call: ToolCall) -> str:
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
