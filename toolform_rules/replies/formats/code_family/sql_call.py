"""sql_call: ``SELECT tool(arg => 'value', n => 3);`` — PostgreSQL named-argument calls.

Grammar: ``grammars/sql_call.lark``.  Each ``SELECT name(`` (or ``CALL name(``, ``SELECT *
FROM name(``) in the reply starts a candidate, read by the fast path (one compiled pattern per
argument of the plain form: ``name => 'text'``, numbers, ``TRUE``/``FALSE``/``NULL``), and by
the grammar (to its closing parenthesis and an optional ``;``) when anything else appears.

Objects and arrays are written as JSON text in a string, so values are typed from the
tool's schema after parsing (``text_values``): ``'{"a": 1}'`` becomes an object where the
schema wants one and stays text where it wants a string.

>>> PROTOCOL.parse("SELECT f(a => 'it''s', n => 3, b => TRUE, z => NULL);").calls[0].arguments
{'a': "it's", 'n': 3, 'b': True, 'z': None}
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import (CallSyntax, CodeFamily, Head, Heads, Items, Literals, Quoting, Reader, Reject, call_names,
                          json_number)
from ..values import unquote

#: where a statement starts: SELECT/CALL, an optional "* FROM", the function's name and "("
#: (written to begin with a character class, not a lookbehind: the search then jumps from one
#: "s" or "c" to the next in C)
STATEMENT_HEAD = re.compile(r"[sScC](?<![\w.$][sScC])(?:(?<=[sS])(?i:elect)\s++(?:\*\s*+(?i:from)\s++)?"
                            r"|(?<=[cC])(?i:all)\s++)[^\W\d][\w$]*+(?:\.[^\W\d][\w$]*+)*+\s*+\(")
SQL_STRING = re.compile(r"[eE]'(?:[^'\\]++|\\.|'')*+'|'(?:[^']++|'')*+'|\"(?:[^\"\\]++|\\.|\"\")*+\"", re.S)
#: SQL's strings for the bracket matcher: a quote is escaped by doubling it (and by a
#: backslash in E'...' and "..."); where one cannot be read, none opened further on can, or
#: it holds only quotes
SQL_QUOTING = Quoting(SQL_STRING, "\"'", {"e'": r"[eE]'(?:[^'\\]++|\\.|'')*+", "E'": r"[eE]'(?:[^'\\]++|\\.|'')*+",
                                         "'": r"'(?:[^']++|'')*+", '"': r'"(?:[^"\\]++|\\.|"")*+'},
                      prefixes={"'": "eE"})
_END = re.compile(r"(?:[ \t]*+::[ \t]*+\w++(?:\[\])*+)*+[ \t]*+;?")

# the fast path: the plain form only
_FAST_HEAD = re.compile(r"\s*+(?i:select)\s++([^\W\d][\w$]*+(?:\.[^\W\d][\w$]*+)*+)\s*+\(\s*+")
_FAST_ARG = re.compile(
    r"(?:([^\W\d][\w$]*+)\s*+(?:=>|:=)\s*+)?"
    r"(?:'((?:[^']++|'')*+)'|([+-]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][+-]?\d++)?)(?![\w.])|(?i:(true|false|null))(?!\w))"
    r"\s*+([,)])\s*+")
#: the end of a statement after its ")": its ";" (white space before it too), or nothing
_FAST_TAIL: Any = re.compile(r"(?:\s*+;)?")  # matches everywhere
_CAST = re.compile(r"\s*+::")
_KEYWORDS = {"true": True, "false": False, "null": None}
_RESERVED = frozenset({"true", "false", "null", "array"})


#: one thing an E'...' string's body escapes: a doubled quote, or a backslash and what it escapes
_E_ESCAPE = re.compile(r"''|\\(?:[0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_E_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _e_unescape(escape: re.Match[str]) -> str:
    text = escape.group()
    kind = text[1]  # (of "''", the quote)
    if kind not in "01234567xuU":
        return _E_SIMPLE.get(kind, kind)
    if kind not in "xuU":
        return chr(int(text[1:], 8))
    if len(text) == 2:
        raise Reject(f"a malformed \\{kind} escape")
    code = int(text[2:], 16)
    if code > 0x10FFFF:
        raise Reject("an escape beyond Unicode")
    return chr(code)


def decode_e_string(token: str) -> str:
    r"""The text of a PostgreSQL ``E'...'`` string: backslash escapes and ``''``.

    >>> decode_e_string(r"E'a\nb\x41\'c''d'")
    "a\nbA'c'd"
    """
    return _E_ESCAPE.sub(_e_unescape, token[2:-1])


class SqlValues(Literals):
    """A ``sql_call.lark`` tree → a list of :class:`~.code_family.CallSyntax`."""

    def sq_string(self, items: Items) -> str:
        return str(items[0])[1:-1].replace("''", "'")

    def e_string(self, items: Items) -> str:
        return decode_e_string(str(items[0]))

    def dq_string(self, items: Items) -> str:
        return unquote(str(items[0]).replace('""', '\\"'))

    array = Literals.list

    def cast(self, _: Items) -> None:
        return None

    def cast_value(self, items: Items) -> Any:
        return items[0]

    def concat(self, items: Items) -> str:
        return "".join("" if v is None else v if isinstance(v, str) else json.dumps(v) for v in items)

    def plain_key(self, items: Items) -> str:
        return str(items[0])

    def quoted_key(self, items: Items) -> str:
        return str(items[0])[1:-1].replace('""', '"')

    named = Literals.pair

    def call(self, items: Items) -> CallSyntax:
        arguments = next((i for i in items[1:] if isinstance(i, list)), [])
        return CallSyntax(str(items[0]), arguments)

    def statement(self, items: Items) -> CallSyntax:
        return items[-1]

    def start(self, items: Items) -> Items:
        return [i for i in items if isinstance(i, CallSyntax)]


def fast_statement_at(text: str, pos: int) -> tuple[CallSyntax, int] | None:
    """One plain ``SELECT name(key => value, ...);`` read from ``pos`` without the grammar,
    and where it ends (after its ``;``, if it has one); ``None`` otherwise."""
    m = _FAST_HEAD.match(text, pos)
    if m is None:
        return None
    name = m.group(1)
    pos = m.end()
    items: list[tuple[str | None, Any]] = []
    if text.startswith(")", pos):
        pos += 1
    else:
        while True:
            a = _FAST_ARG.match(text, pos)
            if a is None:
                return None
            key, quoted, number, word, sep = a.groups()
            if key is not None and key.lower() in _RESERVED:
                return None  # the grammar reads TRUE => ... as a value, not a name
            if quoted is not None:
                value: Any = quoted.replace("''", "'") if "''" in quoted else quoted
            elif number is not None:
                try:
                    value = json_number(number)
                except ValueError:  # more digits than Python reads into an int: the grammar's note says so
                    return None
            else:
                value = _KEYWORDS[word.lower()]
            items.append((key, value))
            pos = a.end()
            if sep == ")":
                break
    if _CAST.match(text, pos) is not None:
        return None  # a cast after the call: the grammar's
    return CallSyntax(name, items), _FAST_TAIL.match(text, pos).end()


def sql_literal(value: Any) -> str:
    """``value`` as an SQL literal: strings quoted (``''`` for a quote), objects and arrays as JSON text.

    >>> sql_literal("it's"), sql_literal(True), sql_literal(None), sql_literal({"a": [1]})
    ("'it''s'", 'TRUE', 'NULL', '\\'{"a": [1]}\\'')
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(float(value))
        return "'" + ("NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity") + "'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, tuple):
        value = list(value)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
    return "'" + text.replace("'", "''") + "'"


def _statement_head(m: re.Match[str]) -> Head:
    return m.start(), m.end() - 1, None


class SqlStatements(Reader):
    """``SELECT name(`` (``CALL name(``, ``SELECT * FROM name(``) starts a statement, read by
    :func:`fast_statement_at`, else (to its closing parenthesis, an optional cast and ``;``) by the grammar."""

    grammar = "sql_call"
    transformer = SqlValues
    quoting = SQL_QUOTING
    unit, units = "statement", "statements"
    look_inside = False
    every_failure = gives_up = True

    def heads(self, text: str, start: int, end: int) -> Heads:
        return Heads(text, STATEMENT_HEAD, start, end, head=_statement_head)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        one = fast_statement_at(text, begin)
        return None if one is None or one[1] > end else ([one[0]], one[1])

    def stop_after(self, text: str, close: int, end: int) -> int:
        tail = _END.match(text, close, end)
        return tail.end() if tail is not None else close


class SqlCall(CodeFamily):
    info = ProtocolInfo(
        id="sql_call",
        name="SQL call",
        description="A PostgreSQL statement with named arguments: SELECT tool(arg => 'value', n => 3);",
        parallel=True,
        text_values=True,
    )
    reader = SqlStatements()
    read_what = "the statements"

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self.statement(c) for c in calls)

    @staticmethod
    def statement(call: ToolCall) -> str:
        arguments = ", ".join(f"{key} => {sql_literal(value)}" for key, value in dict(call.arguments or {}).items())
        return f"SELECT {call.name}({arguments});"

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f"SELECT {names[0] if names else 'tool_name'}(argument => 'text', count => 3);"
        return ("Reply with the call as one SQL statement and nothing else, using named arguments, for "
                f"example {example} Quote text in single quotes (write '' for a quote inside), write "
                "numbers as they are and TRUE, FALSE or NULL as keywords, and give objects and lists as "
                "JSON text in single quotes. For several calls, write one statement per line.")


PROTOCOL = SqlCall()
