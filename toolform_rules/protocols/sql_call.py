"""sql_call: ``SELECT tool(arg => 'value', n => 3);`` — PostgreSQL named-argument calls.

Grammar: ``grammars/sql_call.lark``.  Each ``SELECT name(`` (or ``CALL name(``, ``SELECT *
FROM name(``) in the reply starts a candidate running to its closing parenthesis and an
optional ``;`` (quotes respected, one pass).  A candidate is read by the fast path — one
compiled, non-backtracking pattern per argument for the plain form (``name => 'text'``,
numbers, ``TRUE``/``FALSE``/``NULL``) — and by the grammar when anything else appears.

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

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo
from .code_family import (SCAN_SPENT, UNREAD, Budget, CallSyntax, Closer, Heads, Items, Pair, PythonFamily, Quoting,
                          Reject, call_names, grammar_read, guarded, leftover_note, outside, strip_fence)
from ..grammar import GrammarFailure, Transformer
from .values import unquote

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
_FAST_TAIL: Any = re.compile(r"\s*+;?\s*+")  # matches everywhere
_KEYWORDS = {"true": True, "false": False, "null": None}
_RESERVED = frozenset({"true", "false", "null", "array"})


def decode_e_string(token: str) -> str:
    r"""The text of a PostgreSQL ``E'...'`` string: backslash escapes and ``''``.

    >>> decode_e_string(r"E'a\nb\x41\'c''d'")
    "a\nbA'c'd"
    """
    body = token[2:-1]
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "'" and i + 1 < n and body[i + 1] == "'":
            out.append("'")
            i += 2
            continue
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        simple = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}.get(d)
        if simple is not None:
            out.append(simple)
            i += 2
        elif d in "01234567":
            j = i + 1
            while j < n and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i + 1:j], 8)))
            i = j
        elif d in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[d]
            j = i + 2
            while j < n and j < i + 2 + width and body[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i + 2 or (d != "x" and j != i + 2 + width):
                raise Reject(f"a malformed \\{d} escape")
            code = int(body[i + 2:j], 16)
            if code > 0x10FFFF:
                raise Reject("an escape beyond Unicode")
            out.append(chr(code))
            i = j
        else:
            out.append(d)
            i += 2
    return "".join(out)


def sql_number(text: str) -> int | float:
    """An SQL numeric literal (``007``, ``-1.5e3``, ``1.``, ``+3``)."""
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


class SqlValues(Transformer):
    """A ``sql_call.lark`` tree → a list of :class:`~.code_family.CallSyntax`."""

    def sq_string(self, items: Items) -> str:
        return str(items[0])[1:-1].replace("''", "'")

    def e_string(self, items: Items) -> str:
        return decode_e_string(str(items[0]))

    def dq_string(self, items: Items) -> str:
        return unquote(str(items[0]).replace('""', '\\"'))

    def number(self, items: Items) -> int | float:
        return sql_number(str(items[0]))

    def true(self, _: Items) -> bool:
        return True

    def false(self, _: Items) -> bool:
        return False

    def null(self, _: Items) -> None:
        return None

    def array(self, items: Items) -> Items:
        return list(items)

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

    def named(self, items: Items) -> Pair:
        return items[0], items[1]

    def positional(self, items: Items) -> Pair:
        return None, items[0]

    def arguments(self, items: Items) -> Items:
        return list(items)

    def call(self, items: Items) -> CallSyntax:
        arguments = next((i for i in items[1:] if isinstance(i, list)), [])
        return CallSyntax(str(items[0]), arguments)

    def statement(self, items: Items) -> CallSyntax:
        return items[-1]

    def start(self, items: Items) -> Items:
        return [i for i in items if isinstance(i, CallSyntax)]


def fast_statement_at(text: str, pos: int) -> tuple[CallSyntax, int] | None:
    """One plain ``SELECT name(key => value, ...);`` read from ``pos`` without the grammar,
    and where it ends (its ``;`` and the white space after it included); ``None`` otherwise."""
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
                    value = sql_number(number)
                except ValueError:  # more digits than Python reads into an int: the grammar's note says so
                    return None
            else:
                value = _KEYWORDS[word.lower()]
            items.append((key, value))
            pos = a.end()
            if sep == ")":
                break
    if text.startswith("::", pos) or text.startswith("::", _FAST_TAIL.match(text, pos).end()):
        return None  # a cast after the call: the grammar's
    return CallSyntax(name, items), _FAST_TAIL.match(text, pos).end()


def fast_statement(text: str) -> CallSyntax | None:
    """One plain statement making up all of ``text`` (``None`` otherwise).

    >>> fast_statement("SELECT f(a => 'x', n => -2.5);")
    CallSyntax('f', [('a', 'x'), ('n', -2.5)], bare=[])
    """
    one = fast_statement_at(text, 0)
    return one[0] if one is not None and one[1] == len(text) else None


def fast_statements(text: str) -> list[CallSyntax] | None:
    """The statements making up all of ``text``, each with its span (``None`` unless all are plain)."""
    calls: list[CallSyntax] = []
    pos = 0
    while pos < len(text):
        one = fast_statement_at(text, pos)
        if one is None:
            return None
        one[0].span = (pos, one[1])
        calls.append(one[0])
        pos = one[1]
    return calls or None


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


class SqlCall(PythonFamily):
    info = ProtocolInfo(
        id="sql_call",
        name="SQL call",
        description="A PostgreSQL statement with named arguments: SELECT tool(arg => 'value', n => 3);",
        parallel=True,
        text_values=True,
    )
    grammar = "sql_call"
    transformer = SqlValues

    def read(self, text: str, shape: str = "statement", budget: Budget | None = None) -> list[CallSyntax]:  # type: ignore[override]  # until the code family's reader is the base's read() hook (issue 10)
        call = fast_statement(text)
        if call is not None:
            return [call]
        result = grammar_read(self.grammar, SqlValues(), text, budget)
        return result

    @guarded
    def parse(self, text: str, tools: Toolset | None, budget: Budget) -> Extraction:
        body, offset = strip_fence(text)
        notes: list[str] = []
        whole = fast_statements(body)
        if whole is not None:
            for call in whole:  # the span without the ";" and white space after it
                stop = call.span[1]  # type: ignore[index]
                while stop > call.span[0] and body[stop - 1] in " \t\r\n;":  # type: ignore[index]
                    stop -= 1
                call.span = (call.span[0], stop)  # type: ignore[index]
            return Extraction(tuple(self.finish(whole, tools, notes, offset)), (), True)
        found: list[CallSyntax] = []
        spans: list[tuple[int, int]] = []
        failed = False
        covered = 0
        text = body
        closer = Closer(text, SQL_QUOTING, budget)
        heads = Heads(text, STATEMENT_HEAD)
        for m in heads:
            start = m.start()
            if start < covered:
                continue
            if not budget.candidate():
                notes.append("stopped looking for statements: too many candidates")
                break
            quick = fast_statement_at(text, start)
            if quick is not None:  # the plain form: its end is known without matching brackets
                calls, stop = [quick[0]], len(text[:quick[1]].rstrip())
            else:
                close = closer.close(m.end() - 1)
                if close == UNREAD:  # as for a statement that never closes: what follows may lie inside it
                    notes.append(f"the statement at character {start} could not be read: {SCAN_SPENT}")
                    failed = True
                    break
                if close < 0:
                    stop = len(text)
                else:
                    tail = _END.match(text, close)
                    stop = tail.end() if tail is not None else close
                try:
                    calls = grammar_read(self.grammar, SqlValues(), text, budget, (start, stop))
                except GrammarFailure as err:
                    notes.append(f"the statement at character {start} could not be read: {err.describe()}")
                    failed = True
                    covered = stop
                    heads.skip_to(stop)
                    continue
            for call in calls:
                call.span = (start, stop)
            found.extend(calls)
            spans.append((start, stop))
            covered = stop
            heads.skip_to(stop)
        rest = outside(text, spans) if found else ""
        if rest:
            notes.append(leftover_note(rest, "the statements"))
        compliant = bool(found) and not rest and not failed
        return Extraction(tuple(self.finish(found, tools, notes, offset)), tuple(notes), compliant)

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
