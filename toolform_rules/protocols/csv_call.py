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

from ..calls import ToolCall
from ..schema.ir import Tool
from ..schema.toolset import Toolset
from ..limits import DEFAULT_LIMITS, Limits
from .base import Extraction, Protocol, ProtocolInfo
from . import json_family
from ..grammar import Token, Tree
from .json_family import lenient_json, value_spans
from .text_family import (Read, grammar_parse, never_raises, read_calls, resolve_tool, terminal_regex, tool_parameters,
                          value_text)
from .values import JsonValues

GRAMMAR = "csv_call"

_NAME = re.compile(terminal_regex(GRAMMAR, "NAME"))
_FIELD = re.compile(rf"[ \t]*(?:(?P<QUOTED>{terminal_regex(GRAMMAR, 'QUOTED')})|"
                    rf"(?P<BARE>{terminal_regex(GRAMMAR, 'BARE')}))?[ \t]*")
_LEAD = re.compile(r"[ \t]*")
_QUOTED_SPAN = re.compile(r'"(?:[^"]|"")*"')
_REST = re.compile(r"[^,\n]*")
_START = re.compile(r"[ \t]*[A-Za-z_][\w.\-]*[ \t]*(?P<comma>,)?")
_NEEDS_QUOTES = re.compile(r'[,"\r\n]|^[ \t{\[]|[ \t]$')
#: prose after the last value of a row, on its line: the value, one space, a sentence (``601 Done.``)
_TRAILING_PROSE = re.compile(r"(?P<value>\S+) +(?P<prose>[A-Za-z][^\n]{0,200})")
#: a scalar literal as the text-values typing reads it, for the types that cannot hold a space
_SCALAR_LITERAL = {
    "integer": re.compile(r"[-+]?\d{1,400}(?:\.0+)?"),
    "number": re.compile(r"[-+]?(?:\d{1,400}(?:\.\d{0,400})?|\.\d{1,400})(?:[eE][-+]?\d{1,4})?"),
    "boolean": re.compile(r"(?i:true|false|yes|no)"),
}

#: a row as read: the tool name and one field per position (None for an empty field)
Row = tuple[str, list["str | None"]]


def _row_fast(segment: str) -> Row | None:
    """One row split with the grammar's terminals; ``None`` when a field falls outside them (a
    bare JSON field, an unclosed quote) — the grammar then reads the row."""
    m = _NAME.match(segment, _LEAD.match(segment).end())  # type: ignore[union-attr]
    if m is None:
        return None
    pos = _LEAD.match(segment, m.end()).end()  # type: ignore[union-attr]
    n = len(segment)
    fields: list[str | None] = []
    while pos < n:
        if segment[pos] != ",":
            return None
        f = _FIELD.match(segment, pos + 1)
        if f is None:
            return None
        quoted, bare = f.group("QUOTED"), f.group("BARE")
        if quoted is None and bare is None and f.end() < n and segment[f.end()] in "{[":
            found = _json_field(segment, f.end())  # a bare JSON field
            if found is None:
                return None
            value, pos = found
            fields.append(value)
            continue
        fields.append(quoted[1:-1].replace('""', '"') if quoted is not None else bare)
        pos = f.end()
    return m.group(), fields


def _json_field(segment: str, start: int) -> tuple[str, int] | None:
    """A bare ``{...}``/``[...]`` field read as JSON (as models write it) through the JSON family's
    C-backed reader; ``None`` when it is not one value on this line."""
    spans = value_spans(segment, start, limit=1)
    if not spans or spans[0][0] != start:
        return None
    end = spans[0][1]
    piece = segment[start:end]
    if any(c in piece for c in "\r\n\f") or piece[-1] not in "}]":
        return None  # the grammar's JSON takes spaces and tabs only; an unclosed group is the grammar's to report
    value = lenient_json(piece)
    if value is json_family._MISSING:
        return None
    return json.dumps(value, ensure_ascii=False), _LEAD.match(segment, end).end()  # type: ignore[union-attr]


class _Row(JsonValues):
    def start(self, rows: list) -> list:  # type: ignore[override]
        return rows

    def row(self, items: list) -> Row:
        fields: list[str | None] = []
        for item in items[1:]:
            if isinstance(item, Token) and item.type == "COMMA":
                fields.append(None)
            elif isinstance(item, Token) and item.type == "QUOTED":
                fields[-1] = str(item)[1:-1].replace('""', '"')
            else:
                fields[-1] = str(item)
        return str(items[0]), fields

    def json(self, items: list) -> str:
        return json.dumps(items[0], ensure_ascii=False)


def _row_grammar(segment: str) -> Row:
    tree = grammar_parse(GRAMMAR, segment)
    rows = _Row().transform(tree) if isinstance(tree, Tree) else []
    return rows[0] if rows else ("", [])


def build_call(name: str, fields: list[str | None], tools: Toolset | None) -> Read:
    tool = resolve_tool(name, tools)
    names = tool_parameters(tool)
    arguments: dict[str, Any] = {}
    notes: list[str] = []
    if tool is None:
        if any(f is not None for f in fields):
            arguments["_raw"] = [f for f in fields]
            notes.append(f"{name}: without the tool's schema the {len(fields)} values cannot be named; they are "
                         "kept in order under _raw")
        return name, arguments, notes, True
    last = max((i for i, f in enumerate(fields) if f is not None), default=-1)
    for position, value in enumerate(fields):
        if position < len(names):
            if value is not None:
                if position == last:
                    value, prose = _without_trailing_prose(value, tool.parameters.property(names[position]))
                    if prose:
                        notes.append(f"{name}: {names[position]}: the text after the value ({prose!r}) is prose, "
                                     "not part of it")
                arguments[names[position]] = value
        elif value is not None:
            arguments.setdefault("_raw", []).append(value)
    if len(fields) > len(names) and "_raw" in arguments:
        notes.append(f"{name}: {len(fields)} values for {len(names)} parameters; the extra values are kept under "
                     "_raw")
    return name, arguments, notes, True


def _without_trailing_prose(value: str, schema: Any) -> tuple[str, str]:
    """A row's last value and the prose a model wrote after it on the same line (``601 Done.``).

    Only where the schema's type ends the value: an integer, number or boolean cannot hold a
    space, so ``601 Done.`` is ``601`` followed by prose.  A string may hold anything, so it is
    kept whole.

    >>> from toolform_rules import Schema
    >>> _without_trailing_prose("601 Done.", Schema(types=("integer",)))
    ('601', 'Done.')
    >>> _without_trailing_prose("Acme Done.", Schema(types=("string",)))
    ('Acme Done.', '')
    """
    if schema is None or not schema.types or "string" in schema.types:
        return value, ""
    found = _TRAILING_PROSE.fullmatch(value)
    if found is None:
        return value, ""
    literal = found.group("value")
    if any(t in _SCALAR_LITERAL and _SCALAR_LITERAL[t].fullmatch(literal) for t in schema.types):
        return literal, found.group("prose")
    return value, ""


def _extent(text: str, start: int, end: int) -> int:
    """A row may run past its line inside a quoted field; a quote left open ends it at its line."""
    if '"' not in text[start:end]:
        return end
    pos = start
    n = len(text)
    while True:
        pos = _LEAD.match(text, pos).end()  # type: ignore[union-attr]
        if pos < n and text[pos] == '"':
            q = _QUOTED_SPAN.match(text, pos)
            if q is None:
                return end
            pos = q.end()
        pos = _REST.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n or text[pos] == "\n":
            return pos - 1 if pos > start and text[pos - 1] == "\r" else pos
        pos += 1


def quote_field(text: str) -> str:
    '''A field as RFC 4180 writes it: bare when it can be, else double-quoted with ``""``.

    >>> quote_field("Acme"), quote_field('a, "b"'), quote_field(""), quote_field(" x")
    ('Acme', '"a, ""b"""', '""', '" x"')
    '''
    if text and _NEEDS_QUOTES.search(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


class CsvCall(Protocol):
    info = ProtocolInfo(
        id="csv_call",
        name="Positional CSV call",
        description="`tool_name,value1,value2`: one CSV row per call, values in the order the schema declares "
                    "the parameters; values are text, typed from the schema.",
        parallel=True,
        text_values=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return never_raises(self.id, self._parse, text, tools)

    def _parse(self, text: str, tools: Toolset | None) -> Extraction:
        def starts(head: str) -> bool:
            m = _START.match(head)
            if m is None:
                return False
            if m.group("comma"):
                # "Sure, here is the call." is prose: a name no tool answers to, then a space after
                # its comma (a row is written without one); a row of an unknown tool still reads
                return not (head[m.end():m.end() + 1] == " " and resolve_tool(head[:m.end() - 1].strip(), tools)
                            is None and tools is not None)
            return m.end() == len(head) and resolve_tool(head.strip(), tools) is not None

        def read_one(segment: str) -> Read:
            found = _row_fast(segment)
            if found is None:
                found = _row_grammar(segment)
            return build_call(found[0], found[1], tools)

        return read_calls(self.id, text, starts, read_one, _extent, what="row")

    def render_calls(self, calls: Sequence[ToolCall], tools: Toolset | None = None) -> str:
        """One row per call.  The positions come from ``tools`` when given; without it, from
        the order of each call's arguments (which must then be the schema's order, with every
        parameter before the last one present)."""
        return "\n".join(self._render(call, tools) for call in calls)

    def example(self, call: ToolCall, tools: Toolset | None = None) -> str:
        return self.render_calls([call], tools)

    @staticmethod
    def _render(call: ToolCall, tools: Toolset | None) -> str:
        tool = resolve_tool(call.name, tools)
        order = tool_parameters(tool) if tool is not None else list(call.arguments)
        extra = [k for k in call.arguments if k not in order]
        fields = [call.name]
        present = [i for i, name in enumerate(order) if name in call.arguments]
        last = present[-1] if present else -1
        for name in order[:last + 1]:
            fields.append(quote_field(value_text(call.arguments[name])) if name in call.arguments else "")
        for name in extra:  # not a parameter: no position to put it in; written after the rest
            fields.append(quote_field(value_text(call.arguments[name])))
        return ",".join(fields)

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
