r'''csv_call: ``tool_name,value1,value2`` — one row per call, values by POSITION in the schema's order.

Grammar: ``grammars/csv_call.lark``.  The n-th field is the tool's n-th declared parameter,
so reading needs the toolset; without the tool the values cannot be named and are kept, in
order, under ``_raw`` (validation reports that).  Fields are quoted as RFC 4180 says — in
double quotes with ``""`` for a quote — whenever they hold a comma, a quote, a line break,
spaces at an end or start with ``{``/``[``, so a nested value's JSON commas never split it
and any text round-trips.  An empty field skips an optional parameter; ``""`` is the empty
text.  A bare ``{...}``/``[...]`` field is read as JSON (models write nested values so).
Values are text (``text_values``).

>>> from toolform_rules import ToolCall, sample_toolset
>>> call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "term_months": 12,
...                                    "contract_details": {"status": "draft"}})
>>> text = PROTOCOL.render_calls([call], sample_toolset())
>>> print(text)
legal_draft_v3,"Acme, ""Ltd""",,12,,"{""status"": ""draft""}"
>>> PROTOCOL.parse(text, sample_toolset()).calls[0].arguments
{'counterparty': 'Acme, "Ltd"', 'term_months': '12', 'contract_details': '{"status": "draft"}'}
'''

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.ir import Tool
from ....schema.toolset import Toolset
from ..json_family import shared as json_family
from ..json_family.shared import lenient_json, value_spans
from ..reading import tool_of
from .shared import (NAME, Calls, NameFirst, Reading, is_name, quoted_extent, tool_parameters,
                          value_text)
from ..values import JsonValues

#: the grammar's terminals (the tests hold them to ``grammars/csv_call.lark``; NAME is the family's)
QUOTED = r'"(?:[^"]|"")*"'
BARE = r'[^ \t\r\n",{\[](?:[^,\r\n]*[^ \t\r\n,])?'
_HEAD = re.compile(rf"[ \t]*+({NAME})[ \t]*+")
# a field: QUOTED (written so that a run of plain characters is one step) or BARE, and the spaces around it
_FIELD = re.compile(rf'[ \t]*(?:(?P<QUOTED>"(?:[^"]++|"")*")|(?P<BARE>{BARE}))?[ \t]*')
_LEAD = re.compile(r"[ \t]*")
# a row's fields: each a closed quoted stretch (which may hold line breaks) or none, then the rest up to a
# comma or line break
_FIELD_STRETCH = r'[ \t]*+(?:"(?:[^"]++|"")*"[^,\n]*+|(?!")[^,\n]*+)'
_ROW_STRETCHES = re.compile(rf"{_FIELD_STRETCH}(?:,{_FIELD_STRETCH})*+")
_NEEDS_QUOTES = re.compile(r'[,"\r\n]|^[ \t{\[]|[ \t]$')

#: a row as read: the tool name and one field per position (None for an empty field)
Row = tuple[str, list["str | None"]]


def _json_field(segment: str, start: int) -> tuple[str, int] | None:
    """A bare ``{...}``/``[...]`` field read as JSON (as models write it) through the JSON family's
    C-backed reader; ``None`` when it is not one value on this line."""
    end = len(segment.rstrip(" \t"))
    closer = "}" if segment[start] == "{" else "]"
    if segment[end - 1] != closer or (value := lenient_json(segment[start:end])) is json_family._MISSING:
        spans = value_spans(segment, start, limit=1)  # not the last field, or not one value: find its end
        if not spans or spans[0][0] != start:
            return None
        end = spans[0][1]
        value = None
    piece = segment[start:end]
    if any(c in piece for c in "\r\n\f") or piece[-1] not in "}]":
        return None  # the grammar's JSON takes spaces and tabs only; an unclosed group is the grammar's to report
    if value is None:
        value = lenient_json(piece)
        if value is json_family._MISSING:
            return None
    return json.dumps(value, ensure_ascii=False), _LEAD.match(segment, end).end()  # type: ignore[union-attr]


class _Row(Calls, JsonValues):
    def row(self, items: list) -> Row:
        fields: list[str | None] = []
        for item in items[1:]:
            if getattr(item, "type", None) == "COMMA":
                fields.append(None)
            elif getattr(item, "type", None) == "QUOTED":
                fields[-1] = str(item)[1:-1].replace('""', '"')
            else:
                fields[-1] = str(item)
        return str(items[0]), fields

    def json(self, items: list) -> str:
        return json.dumps(items[0], ensure_ascii=False)


def quote_field(text: str) -> str:
    '''A field as RFC 4180 writes it: bare when it can be, else double-quoted with ``""``.

    >>> quote_field("Acme"), quote_field('a, "b"'), quote_field(""), quote_field(" x")
    ('Acme', '"a, ""b"""', '""', '" x"')
    '''
    if text and _NEEDS_QUOTES.search(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


class CsvCall(NameFirst):
    info = NameFirst.about(
        "csv_call", "Positional CSV call",
        "`tool_name,value1,value2`: one CSV row per call, values in the order the schema declares the "
        "parameters; values are text, typed from the schema.")
    grammar = "csv_call"
    what = "row"
    transformer = _Row
    delimiter = ","

    def starts(self, head: str, tools: Toolset | None) -> bool:
        # "Sure, here is the call." is prose: a name no tool answers to, then a space after its comma (a
        # row is written without one); a row of an unknown tool still reads
        at = head.find(",")
        if at >= 0 and head[at + 1:at + 2] == " " and tools is not None and is_name(name := head[:at].strip(" \t")):
            return tool_of(tools, name) is not None
        return super().starts(head, tools)

    def extent(self, text: str, start: int, end: int) -> int:
        """A row may run past its line inside a quoted field; a quote left open ends it at its line."""
        return quoted_extent(_ROW_STRETCHES, text, start, end) if '"' in text[start:end] else end

    def read_fast(self, segment: str, reading: Reading | None = None) -> Row | None:
        """One row split with the grammar's terminals; ``None`` when a field falls outside them (a
        bare JSON field that is not one value, an unclosed quote) — the grammar then reads the row."""
        m = _HEAD.match(segment)
        if m is None:
            return None
        pos = m.end()
        n = len(segment)
        fields: list[str | None] = []
        field = _FIELD.match
        while pos < n:
            if segment[pos] != ",":
                return None
            f = field(segment, pos + 1)
            quoted, bare = f.group("QUOTED"), f.group("BARE")  # type: ignore[union-attr]
            pos = f.end()  # type: ignore[union-attr]
            if bare is not None:
                fields.append(bare)
            elif quoted is not None:
                fields.append(quoted[1:-1].replace('""', '"'))
            elif pos < n and segment[pos] in "{[":
                found = _json_field(segment, pos)  # a bare JSON field
                if found is None:
                    return None
                value, pos = found
                fields.append(value)
            else:
                fields.append(None)
        return m.group(1), fields

    def build(self, found: Row, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        name, fields = found
        tool = reading.tool(name)
        if tool is None:
            if not any(f is not None for f in fields):
                return [(name, {})]
            reading.note(f"{name}: without the tool's schema the {len(fields)} values cannot be named; they "
                         "are kept in order under _raw")
            return [(name, {"_raw": list(fields)})]
        names = tool_parameters(tool)
        last = max((i for i, f in enumerate(fields) if f is not None), default=-1)
        arguments: dict[str, Any] = {}
        for position, value in enumerate(fields):
            if value is not None and position < len(names):
                key = names[position]
                arguments[key] = reading.without_prose(name, key, value) if position == last else value
            elif value is not None:
                arguments.setdefault("_raw", []).append(value)
        if "_raw" in arguments:
            reading.note(f"{name}: {len(fields)} values for {len(names)} parameters; the extra values are kept "
                         "under _raw")
        return [(name, arguments)]

    def render_calls(self, calls: Sequence[ToolCall], tools: Toolset | None = None) -> str:
        """One row per call.  The positions come from ``tools`` when given; without it, from
        the order of each call's arguments (which must then be the schema's order, with every
        parameter before the last one present)."""
        return "\n".join(self._render(call, tools) for call in calls)

    def example(self, call: ToolCall, tools: Toolset | None = None) -> str:
        return self.render_calls([call], tools)

    @staticmethod
    def _render(call: ToolCall, tools: Toolset | None) -> str:
        tool = tool_of(tools, call.name)
        order = tool_parameters(tool) if tool is not None else list(call.arguments)
        last = max((i for i, name in enumerate(order) if name in call.arguments), default=-1)
        # a value that is not a parameter has no position: written after the rest
        names = [*order[:last + 1], *(k for k in call.arguments if k not in order)]
        return ",".join([call.name] + [quote_field(value_text(call.arguments[name])) if name in call.arguments else ""
                                       for name in names])

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        text = ("Reply with one comma-separated line per call and nothing else: the tool's name, then the "
                "argument values in the order the parameters are listed, without their names. Leave a field "
                "empty to skip an optional parameter. Put a value in double quotes if it holds a comma, a quote "
                "or a line break, doubling any quote inside; write a nested object or list as JSON in quotes:\n"
                "tool_name,New York,3,\"[\"\"a\"\", \"\"b\"\"]\"")
        orders = [f"{tool.name}: {', '.join(tool_parameters(tool))}" for tool in (tools or ())
                  if isinstance(tool, Tool) and tool_parameters(tool)]
        if orders:
            text += "\nThe parameters, in order:\n" + "\n".join(orders)
        return text


PROTOCOL = CsvCall()
