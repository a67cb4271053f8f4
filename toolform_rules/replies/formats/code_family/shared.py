"""The code family's shared reader: calls written as code.

``python_call``, ``python_list_call``, ``bfcl_python_list``, ``python_tag`` and ``bracket_call``
write calls in Python's syntax (``grammars/python_values.lark``); ``sql_call``, ``graphql_call``
and ``sexpr_call`` in their own.  Each format's grammar is its specification.  :func:`scan` reads
each candidate of a reply once: by the format's fast path (a hand-written reader of what models
write, which declines anything else at once), else by the grammar (to where :class:`Closer`
matches its brackets), else by the format's recovery step: for Python, :func:`recover_calls`,
the fast path's :class:`PythonReader` with repairs allowed, each noted.  :class:`CodeFamily` makes
what was found an :class:`~.base.Extraction`; :class:`Budget` bounds what a reply may cost.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
import unicodedata
import warnings
from typing import Any, Callable, Dict, Iterable, List, Pattern, Sequence, Tuple, cast

from ....calls import ToolCall
from ....grammar import GrammarFailure, Transformer, parse
from ....limits import DEFAULT_LIMITS, Limits
from ....schema.ir import Tool
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, RawCall
from ..duplicates import keys_twice, where
from ..reading import GrammarBudget, GrammarTooLong, strip_code_fence

#: the :class:`~toolform_rules.limits.Limits` fields a reply's reading spends, as :class:`Budget` holds them
CAPS = ("reply_candidates", "reply_call_heads", "reply_scan_steps", "reply_ast_tokens", "reply_segments",
        "reply_recovery_chars")


@functools.lru_cache(maxsize=32)
def caps(limits: Limits) -> tuple[int, ...]:
    """The values of :data:`CAPS` under ``limits`` — the one place they are read.

    >>> caps(DEFAULT_LIMITS)
    (64, 4096, 32768, 65536, 256, 65536)
    """
    return tuple(getattr(limits, name) for name in CAPS)


class Budget:
    """What reading one reply may still cost: :data:`CAPS` under ``limits``, spent as it is read,
    and the reply's :class:`~.reading.GrammarBudget` for Lark (``grammar``, made when first asked).

    >>> budget = Budget()
    >>> budget.candidates, budget.grammar.left
    (64, 16384)
    """

    __slots__ = ("candidates", "heads", "scan", "ast_tokens", "segments", "recovery", "limits", "allowance")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.candidates, self.heads, self.scan, self.ast_tokens, self.segments, self.recovery = caps(limits)
        self.limits = limits
        self.allowance: GrammarBudget | None = None

    @property
    def grammar(self) -> GrammarBudget:
        if self.allowance is None:
            self.allowance = GrammarBudget.of(self.limits)
        return self.allowance

    def ast(self, text: str) -> bool:
        """Spend what ``ast.parse`` costs on ``text``; ``False`` (nothing spent) past the budget."""
        cost = len(text) - len(text.translate(_SEPARATORS)) + 8  # its tokens: punctuation, quotes, white space
        if cost > self.ast_tokens:
            return False
        self.ast_tokens -= cost
        return True


_SEPARATORS = dict.fromkeys(map(ord, "()[]{},:;=+-.'\" \t\r\n"))

#: the Transformer methods' types (their names — list, dict, tuple — hide the builtins in the class)
Items = List[Any]
Object = Dict[Any, Any]
Pair = Tuple[Any, Any]


class Reject(Exception):
    """A text a reader does not read (a fast path declines; the grammar path fails)."""


class CallSyntax:
    """A call as written: its name, items (``(keyword or None, value)`` in order), the bare words
    read as text (``unit=celsius``), the span it came from, and the notes of its repairs.

    >>> CallSyntax("f", [("a", 1)]).lenient, CallSyntax("f", [("unit", "celsius")], ["celsius"]).lenient
    (False, True)
    """

    __slots__ = ("name", "items", "bare", "span", "notes")

    def __init__(self, name: str, items: list[tuple[str | None, Any]], bare: list[str] | None = None,
                 span: tuple[int, int] | None = None, notes: tuple[str, ...] = ()) -> None:
        self.name, self.items, self.bare, self.span, self.notes = name, items, bare or [], span, notes

    @property
    def lenient(self) -> bool:  # read with a liberty the format does not give (a bare word, a repair)
        return bool(self.bare or self.notes)

    def __repr__(self) -> str:
        return f"CallSyntax({self.name!r}, {self.items!r}, bare={self.bare!r})"


# ---------------------------------------------------------------------------------------------
# values

_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t", "v": "\v", "\n": ""}
#: one escape: a backslash and what it escapes (a code's digits or a name, when they are complete)
_ESCAPE = re.compile(r"\\(?:[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*+\}|.)", re.S)


def _unescape(escape: re.Match[str]) -> str:
    text = escape.group()
    kind = text[1]
    if kind in _SIMPLE_ESCAPES or kind not in "01234567xuUN":
        return _SIMPLE_ESCAPES.get(kind, text)  # an unknown escape keeps its backslash
    if kind not in "xuUN":
        return chr(int(text[1:], 8))
    if len(text) == 2:
        raise Reject(f"a malformed \\{kind} escape")
    if kind == "N":
        try:
            return unicodedata.lookup(text[3:-1])
        except KeyError:
            raise Reject("an unknown character name") from None
    code = int(text[2:], 16)
    if code > 0x10FFFF:
        raise Reject("an escape beyond Unicode")
    return chr(code)


def decode_python_string(token: str) -> str:
    r"""The text of one Python string literal token, as Python reads it: ``r``/``u`` prefixes, any
    quotes, every escape (an unknown one keeps its backslash); a line end is ``\n``.

    >>> decode_python_string(r'"a\tb\x41\N{BULLET}"'), decode_python_string(r"r'\d'"), decode_python_string(r"'\q'")
    ('a\tbA•', '\\d', '\\q')
    """
    if "\\" not in token and "\r" not in token and token[0] == token[-1] != token[1]:
        return token[1:-1]  # the usual case: quotes, and plain text between them
    prefix = len(token) - len(token.lstrip("rRuU"))
    quote = 3 if token.startswith(('"""', "'''"), prefix) else 1
    body = token[prefix + quote:len(token) - quote]
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    if "\\" not in body or "r" in token[:prefix].lower():
        return body
    return _ESCAPE.sub(_unescape, body)


_RADIX = frozenset("xXoObB")


def to_number(text: str) -> int | float:
    """A Python number token as int or float.

    >>> to_number("0x1F"), to_number("1_000"), to_number("007"), to_number("1e-07")
    (31, 1000, 7, 1e-07)
    """
    if text[1:2] in _RADIX and text[0] == "0":
        return int(text, 0)
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def json_number(text: str) -> int | float:
    """A number as JSON, SQL, GraphQL and s-expressions write it (a float with a point or an exponent).

    >>> json_number("007"), json_number("-1.5e3"), json_number("1.")
    (7, -1500.0, 1.0)
    """
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def scalar_literal(value: Any) -> str | None:
    """A string, boolean, null or number as JSON writes it (a number not finite as a string: no
    syntax of the family has a literal for it); ``None`` for other values.

    >>> [scalar_literal(v) for v in ("a b", True, None, 7, 2.5, float("inf"), [1])]
    ['"a b"', 'true', 'null', '7', '2.5', '"inf"', None]
    """
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(float(value)) if math.isfinite(value) else json.dumps(repr(value))
    return None


def py_literal(value: Any, top: bool = True) -> str:
    """``value`` as a Python literal that reads back exactly: a top-level string as JSON writes it,
    nested values as ``repr`` does (a string it would escape as JSON does); infinity ``1e999``;
    NaN, which has no literal, the bare word ``nan``.

    >>> print(py_literal('Acme, "Ltd"'), py_literal({"a": [1, True, None], "b": "it's"}))
    "Acme, \\"Ltd\\"" {'a': [1, True, None], 'b': "it's"}
    """
    kind = type(value)
    if kind is str:
        plain = repr(value)  # Python's own form, as the reference nests them; JSON's when repr escapes
        return plain if not top and "\\" not in plain else json.dumps(value, ensure_ascii=False)
    if value is None or kind is bool or kind is int:
        return repr(value)
    if kind is float:
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k, False)}: {py_literal(v, False)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_literal(v, False) for v in value) + "]"
    for base in (str, bool, int, float):  # a subclass: as its base
        if isinstance(value, base):
            return py_literal(base(value), top)
    return py_literal(str(value), top)


def python_call_text(call: ToolCall) -> str:
    """``name(key=value, ...)`` for one call."""
    arguments = ", ".join(f"{key}={py_literal(value)}" for key, value in dict(call.arguments or {}).items())
    return f"{call.name}({arguments})"


# ---------------------------------------------------------------------------------------------
# the grammar path

class Literals(Transformer):
    """The rules the code formats' grammars name alike (``true``, ``false``, ``null``, ``list``,
    ``number``, ``pair``, ``positional``, ``arguments``); each format's transformer extends it."""

    def number(self, items: Items) -> int | float:
        return json_number(str(items[0]))

    def true(self, _: Items) -> bool:
        return True

    def false(self, _: Items) -> bool:
        return False

    def null(self, _: Items) -> None:
        return None

    def list(self, items: Items) -> Items:
        return list(items)

    arguments = list

    def pair(self, items: Items) -> Pair:
        return items[0], items[1]

    def positional(self, items: Items) -> Pair:
        return None, items[0]


class _Bare(str):
    """A bare word standing for its own text (``unit=celsius``)."""


def _scalar_key(key: Any) -> Any:
    if isinstance(key, (list, dict)):
        raise Reject("a dict key that is a list or a dict")
    return key


class PythonValues(Literals):
    """A ``python_values.lark`` tree → Python values and :class:`CallSyntax` objects (tuples as
    lists); each protocol's grammar gets a subclass that reads its ``start`` rule."""

    def string(self, items: Items) -> str:
        return "".join(decode_python_string(str(t)) for t in items)

    def number(self, items: Items) -> int | float:
        return to_number(str(items[0]))

    def neg(self, items: Items) -> int | float:
        return -to_number(str(items[0]))

    def pos(self, items: Items) -> int | float:
        return to_number(str(items[0]))

    def none(self, _: Items) -> None:
        return None

    def tuple(self, items: Items) -> Items:
        return list(items)

    def pair(self, items: Items) -> Pair:
        return _scalar_key(items[0]), items[1]

    def dict(self, pairs: Items) -> Object:
        return dict(pairs)

    def bare(self, items: Items) -> _Bare:
        return items[0] if type(items[0]) is _Bare else _Bare(str(items[0]))

    def keyword(self, items: Items) -> Pair:
        return str(items[0]), items[1]

    def call(self, items: Items) -> CallSyntax:
        arguments = items[1] if len(items) > 1 else []
        bare = [str(v) for _, v in arguments if type(v) is _Bare]
        return CallSyntax(str(items[0]), [(k, str(v) if type(v) is _Bare else v) for k, v in arguments], bare)

    def start(self, items: Items) -> Items:
        return [item for item in items if isinstance(item, CallSyntax)]


def grammar_read(grammar: str, transformer: Transformer, text: str, budget: Budget | None = None,
                 span: tuple[int, int] | None = None) -> Any:
    """``text`` (or ``text[span[0]:span[1]]``) parsed by ``grammar`` and transformed within the
    reply's :class:`~.reading.GrammarBudget`; a :class:`GrammarFailure` when it cannot be.

    >>> grammar_read("python_call", PythonValues(), "f(a=0x1F)")
    [CallSyntax('f', [('a', 31)], bare=[])]
    """
    allowance = budget.grammar if budget is not None else GrammarBudget.of(DEFAULT_LIMITS)
    if span is not None:
        size = span[1] - span[0]
        if size + allowance.run_cost > allowance.left:  # refused before the candidate is copied out
            raise GrammarTooLong(grammar, size, allowance.total, allowance.left, allowance.run_cost)
        text = text[span[0]:span[1]]
    allowance.spend(grammar, text)
    tree = parse(grammar, text)
    try:
        return transformer.transform(tree)
    except RecursionError:
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply") from None
    except Exception as err:  # Lark wraps a callback's error in its VisitError
        orig = getattr(err, "orig_exc", err)
        raise GrammarFailure(grammar, 1, 1, (), str(orig) or type(orig).__name__) from None


# ---------------------------------------------------------------------------------------------
# Python calls read by hand: the fast path, and with repairs allowed, the recovery step

#: what the grammar passes over between tokens (a comment runs to "\n", as the grammar's does)
_G = r"(?:[ \t\f\r\n]++|\\\r?\n|#[^\n]*+)*+"
_GAP: Any = re.compile(_G)  # matches everywhere
#: the grammar's NAME; a call's name and "(", a keyword's name and "=" (group 1: the name)
_N = r"[^\W\d]\w*+(?:[.\-]\w++)*+"
_NAME = re.compile(_N)
_CALL = re.compile(f"({_N}){_G}\\({_G}")
_KEYWORD = re.compile(f"({_N}){_G}=(?!=){_G}")
#: what may follow an item: a "," (group 1) and the gaps around it (matches everywhere)
_SEPARATOR: Any = re.compile(f"{_G}(,?){_G}")
#: a gap before another string (Python joins strings written side by side)
_JOINED = re.compile(_G + r"(?=[rRuU]?['\"])")
#: the grammar's NUMBER (the same alternatives in the same order) and STRING
_NUMBER = re.compile(r"(?:\d(?:_?\d)*+)?+\.\d(?:_?\d)*+(?:[eE][+-]?\d(?:_?\d)*+)?+"
                     r"|\d(?:_?\d)*+\.(?:[eE][+-]?\d(?:_?\d)*+)?+|\d(?:_?\d)*+[eE][+-]?\d(?:_?\d)*+"
                     r"|0[xX](?:_?[0-9a-fA-F])++|0[oO](?:_?[0-7])++|0[bB](?:_?[01])++|\d(?:_?\d)*+")
_STRING = re.compile(r'[rRuU]?+(?:"""(?:[^"\\]++|\\.|"(?!""))*+"""|\'\'\'(?:[^\'\\]++|\\.|\'(?!\'\'))*+\'\'\''
                     r'|"(?:[^"\\\n]++|\\.)*+"|\'(?:[^\'\\\n]++|\\.)*+\')', re.S)
_STRING_OPEN = re.compile(r"[rRuU]?+(?:'''|\"\"\"|'|\")")
_WORD_VALUES: dict[str, Any] = {"True": True, "true": True, "False": False, "false": False, "None": None,
                                "null": None}
_PREFIXES, _NUMBER_STARTS = frozenset("rRuU"), frozenset("0123456789.")
#: what may follow a value directly (so no string is joined to it)
_AFTER_VALUE = frozenset(",)]}:")
#: for repaired strings: a body up to the next quote of its kind not escaped (line ends included),
#: a triple-quoted body as Python reads it, a line end no backslash escapes
_BODY = {q: re.compile(rf"(?:[^{q}\\]++|\\.)*+", re.S) for q in "'\""}
_TRIPLE_BODY = {q: re.compile(rf"(?:[^{q[0]}\\]++|\\.|{q[0]}(?!{q[0]}{q[0]}))*+", re.S) for q in ("'''", '"""')}
_RAW_BREAK = re.compile(r"(?:[^\\\r\n]++|\\(?:\r\n|.))*+[\r\n]", re.S)
_WS = r"[ \t\f\r\n]*+"
#: what follows the quote ending a repaired string: for a keyword's value, the next keyword or the
#: ")" closing the call (in a list of calls, a call that ends too early leaves the list unread
#: rather than misread); for an item (a positional value's too), a "," or the closing bracket; for
#: a dict's key, its ":"; for the first item in braces, any of them
_ARGUMENT_END = re.compile(_WS + r"(?:,(?:" + _WS + r"[^\W\d]\w*+" + _WS + r"=(?!=)|" + _WS + r"\))|\))")
_ITEM_END = {close: re.compile(_WS + "[," + re.escape(close) + "]") for close in ")]}"}
_KEY_END, _FIRST_IN_BRACES = re.compile(_WS + ":"), re.compile(_WS + "[,:}]")
_NEXT_STRING = re.compile(_WS + r"[rRuU]?+['\"]")
#: how deep the fast path reads (deeper values are the grammar's)
FAST_DEPTH = 100

#: the recovery step's repairs, each with the note on a call that needed it (in this order)
RECOVERY_NOTES = {
    "line breaks": "a string holds raw line breaks (not valid Python); they were read as text",
    "quotes": "a string holds unescaped quotes of its own kind (not valid Python); each was read as text "
              "unless the end of the argument or item follows it",
    "set": "a set literal was read as a list (its items in order of first appearance)",
}
#: the note when the recovery step's share of a reply is spent
RECOVERY_SPENT = ("stopped reading calls that are not valid Python: what one reply may cost was spent "
                  "(Limits.reply_recovery_chars)")


class PythonReader:
    """Python calls read by hand as ``grammars/python_values.lark`` reads them: one pass that never
    looks back, each value dispatched on its first character, in ``text`` up to ``limit``, at most
    ``max_depth`` deep; ``tail``: what may end a list (``bracket_call``'s ``→ result``).  A method
    reads from where a token starts to just past what it read.  ``allowed``: the repairs
    (:data:`RECOVERY_NOTES`) it may make — none for the fast path, which declines (:class:`Reject`)
    what the grammar does not read.

    >>> PythonReader("f(1, a='x', b=[True, None], c={'k': -2.5})", 42).read(0, "call")[0]
    [CallSyntax('f', [(None, 1), ('a', 'x'), ('b', [True, None]), ('c', {'k': -2.5})], bare=[])]
    """

    __slots__ = ("text", "limit", "max_depth", "tail", "allowed", "loose", "taken", "used", "reach")

    def __init__(self, text: str, limit: int, max_depth: int = FAST_DEPTH, tail: Pattern[str] | None = None,
                 allowed: frozenset[str] = frozenset()) -> None:
        self.text, self.limit, self.max_depth, self.tail, self.allowed = text, limit, max_depth, tail, allowed
        self.loose = "quotes" in allowed  # strings weighed quote by quote
        self.taken: set[str] = set()  # the repairs the current call needed
        self.used = False  # whether any call needed one
        self.reach = 0  # the furthest character looked at (what the reading costs)

    def gap(self, pos: int) -> int:
        return _GAP.match(self.text, pos, self.limit).end()  # type: ignore[no-any-return]

    def at(self, pos: int, token: str) -> bool:
        return self.text.startswith(token, pos, self.limit)

    def separator(self, pos: int, close: str, tail: Pattern[str] | None = None) -> int:
        """Past the "," after an item; :class:`Reject` unless one stands there, or ``close`` (or ``tail``)
        follows."""
        found = _SEPARATOR.match(self.text, pos, self.limit)
        pos = found.end()
        self.reach = max(self.reach, pos)
        if not (found.group(1) or self.at(pos, close) or tail is not None and tail.match(self.text, pos, self.limit)):
            raise Reject
        return pos  # type: ignore[no-any-return]

    def repair(self, what: str) -> None:
        if what not in self.allowed:
            raise Reject(what)
        self.taken.add(what)

    def read(self, begin: int, shape: str) -> tuple[list[CallSyntax], int]:
        """The calls at ``begin`` — one (``shape`` ``"call"``) or a bracketed list — and where they end."""
        if shape == "call":
            call, end = self.call(begin)
            return [call], end
        if not self.at(begin, "["):
            raise Reject
        calls: list[CallSyntax] = []
        pos = self.gap(begin + 1)
        while not self.at(pos, "]"):
            tail = self.tail.match(self.text, pos, self.limit) if calls and self.tail is not None else None
            if tail is not None:
                if not self.at(tail.end(), "]"):
                    raise Reject
                return calls, tail.end() + 1
            call, pos = self.call(pos)
            calls.append(call)
            pos = self.separator(pos, "]", self.tail)
        return calls, pos + 1

    def call(self, begin: int) -> tuple[CallSyntax, int]:
        name = _CALL.match(self.text, begin, self.limit)  # ("True(" too: where a call stands, the grammar's NAME)
        if name is None:
            raise Reject
        self.taken = set()
        items: list[tuple[str | None, Any]] = []
        bare: list[str] = []
        pos = name.end()
        while not self.at(pos, ")"):
            keyword = _KEYWORD.match(self.text, pos, self.limit)
            if keyword is None or keyword.group(1) in _WORD_VALUES:
                key, (value, pos) = None, self.value(pos, 0, _ITEM_END[")"])
            else:
                key, (value, pos) = keyword.group(1), self.value(keyword.end(), 0, _ARGUMENT_END, True)
                if type(value) is _Bare:
                    value = str(value)
                    bare.append(value)
            items.append((key, value))
            pos = self.separator(pos, ")")
        notes = tuple(note for what, note in RECOVERY_NOTES.items() if what in self.taken)
        self.used = self.used or bool(notes)
        return CallSyntax(name.group(1), items, bare, (begin, pos + 1), notes), pos + 1

    def value(self, pos: int, depth: int, end: Pattern[str], keyword: bool = False) -> tuple[Any, int]:
        """The value at ``pos`` inside ``depth`` brackets and where it ends; ``end``: where a repaired
        string may end; ``keyword``: whether a bare word may stand there."""
        text = self.text
        if pos > self.reach:
            self.reach = pos
        c = text[pos] if pos < self.limit else ""
        if c == '"' or c == "'" or c in _PREFIXES and _STRING_OPEN.match(text, pos, self.limit) is not None:
            return self.strings(pos, end)
        container = _CONTAINERS.get(c)
        if container is not None:
            if depth >= self.max_depth:
                raise Reject("a value nested too deeply")
            return container(self, pos, depth + 1, keyword)
        if c == "-" or c == "+":
            number = _NUMBER.match(text, self.gap(pos + 1), self.limit)
            if number is None:
                raise Reject
            return (-1 if c == "-" else 1) * to_number(number.group()), number.end()
        number = _NUMBER.match(text, pos, self.limit) if c in _NUMBER_STARTS else None
        if number is not None:
            return to_number(number.group()), number.end()
        word = _NAME.match(text, pos, self.limit)
        if word is None or not keyword and word.group() not in _WORD_VALUES:
            raise Reject
        found = word.group()
        return _WORD_VALUES[found] if found in _WORD_VALUES else _Bare(found), word.end()

    def strings(self, pos: int, end: Pattern[str]) -> tuple[str, int]:
        """One string, or several written side by side (Python joins them)."""
        value, pos = self.loose_string(pos, end) if self.loose else self.string(pos)
        if self.text[pos:pos + 1] in _AFTER_VALUE:
            return value, pos
        joined = _JOINED.match(self.text, pos, self.limit)
        if joined is None:
            return value, pos
        more, pos = self.strings(joined.end(), end)  # (strings side by side are few)
        return value + more, pos

    def string(self, pos: int) -> tuple[str, int]:
        token = _STRING.match(self.text, pos, self.limit)
        if token is None:
            raise Reject("an unclosed string")
        return decode_python_string(token.group()), token.end()

    def loose_string(self, pos: int, end: Pattern[str]) -> tuple[str, int]:
        """A string read with repairs: triple-quoted, as Python reads it; else a raw line end is text, and
        a quote of its own kind ends it only where ``end`` follows — or, the first such quote with no
        raw line end before it, where another string follows (``'a' 'b'``); each other such quote is
        text.  Each quote is weighed by a look that stops at the next: linear in the string's length."""
        text, limit = self.text, self.limit
        token = _STRING_OPEN.match(text, pos, limit).group()  # type: ignore[union-attr]  # at a string
        quote, start = token.lstrip("rRuU"), pos + len(token)
        if len(quote) == 3:
            close = _TRIPLE_BODY[quote].match(text, start, limit).end()  # type: ignore[union-attr]
            self.reach = max(self.reach, close)
            if not text.startswith(quote, close, limit):
                raise Reject("an unclosed string")
            return decode_python_string(text[pos:close + 3]), close + 3
        at, skipped = start, False
        while True:
            close = _BODY[quote].match(text, at, limit).end()  # type: ignore[union-attr]  # matches everywhere
            self.reach = max(self.reach, close)
            if close >= limit or text[close] != quote:
                raise Reject("an unclosed string")
            if (end.match(text, close + 1, limit) or not skipped and _NEXT_STRING.match(text, close + 1, limit)
                    and _RAW_BREAK.match(text, start, close) is None):
                break
            skipped, at = True, close + 1
        raw = text[start:close]
        if ("\n" in raw or "\r" in raw) and _RAW_BREAK.match(raw) is not None:
            self.repair("line breaks")
        if skipped:
            self.repair("quotes")
        return decode_python_string(token + raw + quote), close + 1

    def listed(self, pos: int, depth: int, keyword: bool) -> tuple[list[Any], int]:
        return self.items(self.gap(pos + 1), "]", depth, [])

    def items(self, pos: int, close: str, depth: int, out: list[Any]) -> tuple[list[Any], int]:
        """The items of a list, tuple or set up to ``close``: from the first, or (``out`` holding the
        first) from the "," after it."""
        end = _ITEM_END[close]
        if not out:
            if self.at(pos, close):
                return out, pos + 1
            item, pos = self.value(pos, depth, end)
            out.append(item)
        while True:
            pos = self.separator(pos, close)
            if self.at(pos, close):
                return out, pos + 1
            item, pos = self.value(pos, depth, end)
            out.append(item)

    def parenthesised(self, pos: int, depth: int, keyword: bool) -> tuple[Any, int]:
        """A tuple (a list), or a value in parentheses (a bare word too, as the grammar has it)."""
        pos = self.gap(pos + 1)
        if self.at(pos, ")"):
            return [], pos + 1
        first, pos = self.value(pos, depth, _ITEM_END[")"], keyword)
        pos = self.gap(pos)
        if self.at(pos, ")"):
            return first, pos + 1
        if type(first) is _Bare:
            raise Reject
        return self.items(pos, ")", depth, [first])

    def braces(self, pos: int, depth: int, keyword: bool) -> tuple[Any, int]:
        """A dict; or, repaired, a set literal read as a list of its items in order of first appearance."""
        pos = self.gap(pos + 1)
        if self.at(pos, "}"):
            return {}, pos + 1
        key, pos = self.value(pos, depth, _FIRST_IN_BRACES)
        pos = self.gap(pos)
        if not self.at(pos, ":"):
            self.repair("set")
            items, pos = self.items(pos, "}", depth, [key])
            if any(isinstance(item, (list, dict)) for item in items):
                raise Reject("a set holding a list or a dict")  # Python's sets cannot
            return list(dict.fromkeys(items)), pos  # equal items once, as in a set
        out: dict[Any, Any] = {}
        while True:  # at the ":" after a key
            out[_scalar_key(key)], pos = self.value(self.gap(pos + 1), depth, _ITEM_END["}"])
            pos = self.separator(pos, "}")
            if self.at(pos, "}"):
                return out, pos + 1
            key, pos = self.value(pos, depth, _KEY_END)
            pos = self.gap(pos)
            if not self.at(pos, ":"):
                raise Reject


#: the readers of the values that open with a bracket, by that bracket
_CONTAINERS: dict[str, Callable[[PythonReader, int, int, bool], tuple[Any, int]]] = {
    "[": PythonReader.listed, "(": PythonReader.parenthesised, "{": PythonReader.braces}
#: what the readers raise on a text they cannot read
_UNREADABLE = (Reject, ValueError, OverflowError, RecursionError, MemoryError)


def read_python(text: str, begin: int, end: int, shape: str, tail: Pattern[str] | None = None
                ) -> tuple[list[CallSyntax], int] | None:
    """The fast path: the calls at ``begin`` (``shape``: ``"call"`` or ``"list"``) read by
    :class:`PythonReader` in ``text[:end]``, and where they end; ``None`` where it declines.

    >>> read_python("Use f(a='x', n=[1, 2]) now.", 4, 27, "call")
    ([CallSyntax('f', [('a', 'x'), ('n', [1, 2])], bare=[])], 22)
    """
    try:
        return PythonReader(text, end, tail=tail).read(begin, shape)
    except _UNREADABLE:
        return None


def _valid_python(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes warn; a reply is not our source code
            ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def recover_calls(text: str, begin: int, end: int, budget: Budget, notes: list[str], shape: str,
                  closed_at: int | None = None, tail: Pattern[str] | None = None
                  ) -> tuple[list[CallSyntax], int] | None:
    r"""The recovery step, for a candidate the fast path and the grammar refused: its calls read by
    :class:`PythonReader` with repairs (each noted), and where it ends; ``None`` when it needs none,
    or one not allowed.  A set literal is repaired anywhere; raw line breaks and a string's own
    quotes unescaped (such a quote ends the string only where its argument or item ends) only in a
    candidate that is not valid Python (it never closes: ``closed_at`` is ``None``, or ``ast.parse``
    refuses it).  It reads at most ``budget.recovery`` characters, and spends what it looked at.

    >>> text = "[exec(command='cat > f.py << EOF\nprint(1)\nEOF'), bash(command='sed -n '3,4p' f.py')]"
    >>> calls, end = recover_calls(text, 0, len(text), Budget(), [], "list")
    >>> [call.items for call in calls], end == len(text)
    ([[('command', 'cat > f.py << EOF\nprint(1)\nEOF')], [('command', "sed -n '3,4p' f.py")]], True)
    >>> recover_calls("f(a='x' + 'y')", 0, 14, Budget(), [], "call", 14) is None  # valid Python, not a literal
    True
    """
    if budget.recovery <= 0:
        if RECOVERY_SPENT not in notes:
            notes.append(RECOVERY_SPENT)
        return None
    allowed = frozenset(RECOVERY_NOTES)
    if closed_at is not None:  # brackets that close as Python's do: is it valid Python?
        candidate = text[begin:closed_at]
        if not budget.ast(candidate):
            return None
        if _valid_python(candidate):
            allowed = frozenset({"set"})
    limit = min(end, begin + budget.recovery)
    reader = PythonReader(text, limit, budget.limits.max_depth, tail, allowed)
    reader.reach = begin
    read: tuple[list[CallSyntax], int] | None
    try:
        read = reader.read(begin, shape)
    except _UNREADABLE:
        read = None
    budget.recovery -= max(1, reader.reach - begin, read[1] - begin if read is not None else 0)
    if read is None or not reader.used:
        if reader.reach >= limit > begin and limit < end and RECOVERY_SPENT not in notes:
            notes.append(RECOVERY_SPENT)
        return None
    return read


# ---------------------------------------------------------------------------------------------
# locating candidates

#: a reply that starts like a call (so it may be nothing but calls)
CALL_START = re.compile(r"[^\W\d][\w.\-]*+[ \t]*+\(")
#: a "[" opening a list of calls
LIST_HEAD = re.compile(r"\[[ \t\r\n]*+(?=[^\W\d][\w.\-]*+\()")
#: a complete Python string literal (the prefix is not needed to find its end)
PY_STRING = re.compile(r'"""(?:[^"\\]++|\\.|"(?!""))*+"""|\'\'\'(?:[^\'\\]++|\\.|\'(?!\'\'))*+\'\'\'|'
                       r'"(?:[^"\\\r\n]++|\\.)*+"|\'(?:[^\'\\\r\n]++|\\.)*+\'', re.S)
#: a "(" that may end a name, found by a C search and a look back: after a name's first character,
#: or one more, or three or more name characters ("9(", "-(" and such are passed over in C)
_OPEN_AFTER_NAME = re.compile(r"\((?<=[\w.\-]\()(?:(?<=[^\W\d]\()|(?<=[^\W\d][\w.\-]\()|(?<=[\w.\-]{3}\())")
#: the last character of a window that is not a name character
_NAME_BREAK = re.compile(r"[^\w.\-](?=[\w.\-]*+\Z)")
#: a NAME (after any leading "." and "-") and its "(", from where its run of name characters
#: starts; the same, ending a window
_NAME_AT = re.compile(r"[.\-]*+([^\W\d]\w*+(?:[.\-]\w++)*+)\(")
_HEAD_END = re.compile(r"(?<![\w.\-])[.\-]*+([^\W\d]\w*+(?:[.\-]\w++)*+)\(\Z")

#: what a head iterator gives: where the candidate begins, its opening bracket, and the name it
#: calls (``None`` when the syntax names none there); ``begin`` is -1 for a place that looked like
#: a head and is none, so that a caller can count what it looked at
Head = Tuple[int, int, "str | None"]


class Heads:
    """The heads of ``pattern``'s matches in ``text[start:end]`` (``head`` makes a :data:`Head` of a
    match; by default its start, twice), each one C search (a pattern should begin with a literal or
    a class: the search then jumps in C); ``first`` is tried at ``start`` first.

    >>> [h for h in Heads("a [f(1)] [g(2)]", LIST_HEAD)]
    [(2, 2, None), (9, 9, None)]
    """

    __slots__ = ("text", "pattern", "pos", "end", "first", "head")

    def __init__(self, text: str, pattern: Pattern[str], start: int = 0, end: int | None = None,
                 first: Pattern[str] | None = None, head: Callable[[re.Match[str]], Head] | None = None) -> None:
        self.text, self.pattern, self.pos, self.first = text, pattern, start, first
        self.end = len(text) if end is None else end
        self.head = head

    def __iter__(self) -> "Heads":
        return self

    def skip_to(self, pos: int) -> None:
        self.pos = max(self.pos, pos)

    def __next__(self) -> Head:
        m = None
        if self.first is not None:
            m = self.first.match(self.text, self.pos, self.end)
            self.first = None
        if m is None:
            m = self.pattern.search(self.text, self.pos, self.end)
            if m is None:
                raise StopIteration
        self.pos = m.start() + 1
        return self.head(m) if self.head is not None else (m.start(), m.start(), None)


class CallHeads(Heads):
    """The heads of each ``name(`` in ``text[start:end]``, the whole run of name characters before a
    ``(`` making a NAME (leading ``.`` and ``-`` aside): each ``(`` found by a C search, the name by a
    search of a window before it, doubling for a longer run; ``9(`` gives ``(-1, open, None)``.

    >>> list(CallHeads("x f(1) .g.h(2) 9k(3) (4) é(5)"))
    [(2, 3, 'f'), (8, 11, 'g.h'), (-1, 17, None), (25, 26, 'é')]
    """

    __slots__ = ("start",)

    def __init__(self, text: str, start: int = 0, end: int | None = None) -> None:
        super().__init__(text, _OPEN_AFTER_NAME, start, end)
        self.start = start

    def __next__(self) -> Head:
        text, start = self.text, self.start
        open_pos = text.find("(", self.pos, self.end)
        if open_pos < 0:
            raise StopIteration
        before = text[open_pos - 1] if open_pos > start else " "
        if not (before.isalnum() or before in "_.-"):  # no name there: on to the next "(" after one, in C
            after_name = _OPEN_AFTER_NAME.search(text, open_pos + 1, self.end)
            if after_name is None:
                self.pos = self.end
                raise StopIteration
            open_pos = after_name.start()
        self.pos = open_pos + 1
        width = 16
        while True:
            low = max(start, open_pos - width)
            head = _HEAD_END.search(text, low, open_pos + 1)
            if head is None and low == start:  # a run from ``start`` on (whatever stands before it)
                head = _NAME_AT.match(text, start, open_pos + 1)
            if head is not None:
                return head.start(1), open_pos, head.group(1)
            if low == start or _NAME_BREAK.search(text, low, open_pos) is not None:
                return -1, open_pos, None  # the run starts in the window and makes no name
            width *= 2


class Quoting:
    """How a syntax writes strings, for the bracket matcher: ``string`` matches a literal, opened by
    one of ``quotes`` (a prefix in ``prefixes`` before it is part of it: SQL's ``E'``); ``bodies``
    (by opening) match as far as a literal reads, closed or not — where one cannot be read, none
    opened alike within that reach can (or it holds only quotes), so those quotes are not read again.
    """

    __slots__ = ("string", "stops", "bodies", "prefixes")

    def __init__(self, string: re.Pattern[str], quotes: str, bodies: dict[str, str],
                 prefixes: dict[str, str] | None = None) -> None:
        self.string, self.prefixes = string, prefixes or {}
        self.stops = re.compile("[()\\[\\]{}" + re.escape(quotes) + "]")  # a class: the search jumps in C
        self.bodies = {token: re.compile(body, re.S) for token, body in bodies.items()}


#: Python's quoting (single-line strings escape with a backslash; triple-quoted ones span lines)
PY_QUOTING = Quoting(PY_STRING, "\"'", {"'": r"'(?:[^'\\\r\n]++|\\.)*+", '"': r'"(?:[^"\\\r\n]++|\\.)*+'})

#: what Closer.close answers for a bracket it could not match within the reply's budget, and the note's words
UNREAD = -2
SCAN_SPENT = "its brackets were not matched within what one reply may cost (Limits.reply_scan_steps)"


class Closer:
    """Where each bracket of a text closes: the first question about a bracket scans from it to its
    close, recording every bracket met on the way, so the text is scanned once however many
    candidates ask.  A bracket, a string and a quote that opens none are a step each, from
    ``budget.scan``; a bracket whose close the scan did not reach within it is :data:`UNREAD`.

    >>> Closer('f(a=")", b=[1, (2)]) tail').close(1)
    20
    """

    __slots__ = ("text", "quoting", "budget", "region", "table", "dead", "gave_up")

    def __init__(self, text: str, quoting: Quoting = PY_QUOTING, budget: Budget | None = None) -> None:
        self.text, self.quoting = text, quoting
        self.budget = budget if budget is not None else Budget()
        self.region = (0, 0)  # what the scans read: a bracket in it that they did not meet lies in a string
        self.table: dict[int, int] = {}
        # by quote token: (p, q) where one at p opened no readable string, so none in (p, q) does
        self.dead: dict[str, tuple[int, int]] = {}
        self.gave_up = False

    def close(self, open_pos: int) -> int:
        """Just past the bracket closing the one at ``open_pos``; -1 if it never closes (or
        ``open_pos`` lay inside a string of an earlier scan); :data:`UNREAD` past the budget."""
        known = self.table.get(open_pos)
        if known is not None:
            return known
        if self.region[0] <= open_pos < self.region[1] or not self.text.startswith(("(", "[", "{"), open_pos):
            return -1
        if self.gave_up:
            return UNREAD
        text, search, table = self.text, self.quoting.stops.search, self.table
        opened: list[int] = []
        pos, steps = open_pos, self.budget.scan
        while True:
            if steps <= 0:
                self.gave_up = True
                break
            steps -= 1
            m = search(text, pos)
            if m is None:
                break
            start = m.start()
            if text[start] in "([{":
                opened.append(start)
            elif text[start] in ")]}":
                table[opened.pop()] = start + 1
                if not opened:
                    pos = start + 1
                    break
            else:
                pos = self.past_quote(start, pos)
                continue
            pos = start + 1
        self.budget.scan = steps
        answer = UNREAD if self.gave_up else -1
        table.update(dict.fromkeys(opened, answer))
        self.region = (open_pos, len(text) if opened and not self.gave_up else pos)
        return table.get(open_pos, answer)

    def past_quote(self, start: int, pos: int) -> int:
        """Where the scan goes on after the quote at ``start``: past the string it opens, or past the
        quote alone (an apostrophe; noted, so that no quote it makes unreadable is read again)."""
        text, c = self.text, self.text[start]
        token = c
        if start > pos and text[start - 1] in self.quoting.prefixes.get(c, ""):
            start -= 1
            token = text[start] + c
        failed = self.dead.get(token)
        if failed is not None and failed[0] < start < failed[1]:
            return start + 1
        closed = self.quoting.string.match(text, start)
        if closed is not None:
            return closed.end()
        body = self.quoting.bodies.get(token)
        if body is not None:
            self.dead[token] = (start, body.match(text, start).end())  # type: ignore[union-attr]
        return start + 1



# ---------------------------------------------------------------------------------------------
# binding calls to tools, and the text around them

def resolve(name: str, tools: Toolset | None) -> tuple[Tool | None, str]:
    """The tool ``name`` stands for, and the name to report: a dotted prefix the toolset does
    not know (``functions.get_weather``) is dropped when the rest names a tool.

    >>> from toolform_rules import sample_toolset
    >>> resolve("functions.legal_draft_v3", sample_toolset())[1], resolve("ghost", sample_toolset())
    ('legal_draft_v3', (None, 'ghost'))
    """
    if tools is None:
        return None, name
    tool = tools.get(name)
    if tool is not None:
        return tool, name
    rest = name
    while "." in rest:
        rest = rest.split(".", 1)[1]
        tool = tools.get(rest)
        if tool is not None:
            return tool, rest
    return None, name


def bind(call: CallSyntax, tool: Tool | None, notes: list[str], name: str | None = None) -> dict[str, Any]:
    """The call's arguments as a mapping: keywords by name; positional values by the tool's
    parameter order (``_pos0``, ``_pos1``, … when there is no tool, no parameter left or the
    parameter is also given by keyword).  A repeated keyword keeps its last value (noted, with
    ``name`` or the call's own).

    >>> bind(CallSyntax("f", [(None, "Acme"), ("term_months", 12)]), None, [])
    {'_pos0': 'Acme', 'term_months': 12}
    """
    name = call.name if name is None else name
    positional = any(k is None for k, _ in call.items)
    order = [p.name for p in tool.parameters.properties] if tool is not None and positional else []
    named = {k for k, _ in call.items if k is not None}
    arguments: dict[str, Any] = {}
    index = 0
    for key, value in call.items:
        if key is None:
            target = order[index] if index < len(order) else None
            if target is None or target in named or target in arguments:
                target = f"_pos{index}"
                if tool is not None:
                    notes.append(f"{name}: positional value {index + 1} has no parameter left to bind to")
            index += 1
            key = target
        elif key in arguments:
            notes.append(f"{name}: the argument {key!r} is given twice; the last value is kept")
        arguments[key] = value
    return arguments


#: what may stand between (and around) the calls of a reply that keeps to the format
BLANK = re.compile(r"[ \t\r\n;]*+")
_WORD = re.compile(r"\S++")
def outside(text: str, spans: Iterable[tuple[int, int]], between: Pattern[str] = BLANK, start: int = 0,
            end: int | None = None, keep: int = 256) -> str:
    r"""What ``text[start:end]`` holds outside ``spans`` (sorted, disjoint), each run of white space
    one space, only its words up to the one passing ``keep`` characters (it is quoted in a note);
    empty when each stretch between them is only what ``between`` matches.  A word ends where a
    span begins.

    >>> outside("f(); x\n  g()", [(0, 3), (9, 12)]), outside("f(); g()", [(0, 3), (5, 8)])
    ('; x', '')
    >>> outside("f() " + "word " * 1000, [(0, 3)], keep=12)
    'word word word'
    """
    end = len(text) if end is None else end
    gaps = []
    pos = start
    for first, last in spans:
        if first > pos:
            gaps.append((pos, first))
        pos = max(pos, last)
    if pos < end:
        gaps.append((pos, end))
    if all(between.fullmatch(text, first, last) for first, last in gaps):
        return ""
    joined = ""
    for word in (word.group() for first, last in gaps for word in _WORD.finditer(text, first, last)):
        joined = f"{joined} {word}" if joined else word
        if len(joined) > keep:  # (a megabyte of prose is not split into words)
            break
    stop = joined.find(" ", keep)
    return joined if stop < 0 else joined[:stop]


def leftover_note(rest: str, what: str = "the calls") -> str:
    """The note for text a reply holds besides its calls (as :func:`outside` gives it; shortened).

    >>> leftover_note("Sure, here:")
    "text outside the calls was ignored: 'Sure, here:'"
    """
    return f"text outside {what} was ignored: {rest if len(rest) <= 60 else rest[:57] + '...'!r}"


# ---------------------------------------------------------------------------------------------
# the reading skeleton

class Reader:
    """How one kind of candidate is found and read: the hooks of :func:`scan`.  :meth:`heads` says
    where candidates start; :meth:`read_at` is the fast path (``None`` for what it declines);
    :meth:`read_slow` the grammar, :meth:`recover` the recovery step (by default none).  The class
    attributes say how a candidate that cannot be read is taken."""

    #: the grammar a candidate is read with at last, and its transformer
    grammar = "python_call"
    transformer: Callable[[], Transformer] = PythonValues
    #: how the syntax writes strings (for the bracket matcher)
    quoting: "Quoting"
    #: the notes' words: "the {unit} at character N could not be read", "stopped looking for {units}"
    unit, units = "call", "calls"
    #: after a candidate that cannot be read, look for candidates inside it (prose in parentheses
    #: may hold a call); else go on after it
    look_inside = True
    #: note every candidate that cannot be read (else only the first)
    every_failure = False
    #: stop at a candidate that never closes or whose brackets were not matched within the budget
    #: (what follows may lie inside it)
    gives_up = False

    def heads(self, text: str, start: int, end: int) -> Heads:
        raise NotImplementedError

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        """The calls of the candidate at ``begin`` and where it ends, found without bracket matching."""
        return None

    def stop_after(self, text: str, close: int, end: int) -> int:
        """Where a candidate whose brackets close at ``close`` ends (a statement's ``;``, say)."""
        return close

    def read_slow(self, text: str, begin: int, stop: int, closed: bool, budget: Budget) -> list[CallSyntax]:
        """The calls of ``text[begin:stop]`` (``closed``: its brackets close there), read by the grammar."""
        return grammar_read(self.grammar, self.transformer(), text, budget, (begin, stop))

    def recover(self, text: str, begin: int, closed_at: int | None, end: int, budget: Budget,
                notes: list[str]) -> tuple[list[CallSyntax], int] | None:
        """Once :meth:`read_slow` failed on the candidate at ``begin`` (``closed_at``: where its brackets
        close, if they do): its calls repaired, and where it ends; ``None`` leaves the failure standing."""
        return None

    def where(self, begin: int) -> str:
        return f"the {self.unit} at character {begin}"


class Scan:
    """What :func:`scan` found: the calls (spans set), the candidates' spans, the candidates that
    could not be read (``(name, note)``), the names passed over, and the text left outside."""

    __slots__ = ("calls", "spans", "failures", "skipped", "rest")

    def __init__(self) -> None:
        self.calls: list[CallSyntax] = []
        self.spans: list[tuple[int, int]] = []
        self.failures: list[tuple[str | None, str]] = []
        self.skipped: list[str] = []
        self.rest = ""

    def skip(self, name: str) -> None:
        """Note a name passed over (the first five, once each)."""
        if len(self.skipped) < 5 and name not in self.skipped:
            self.skipped.append(name)


class _Candidate:
    """A candidate's reading past the fast path: the bracket matcher (one for the whole text), the
    grammar, the recovery step.  ``halt``: the last failure ends the scan."""

    __slots__ = ("reader", "text", "end", "budget", "notes", "fast_only", "closer", "halt")

    def __init__(self, reader: Reader, text: str, end: int, budget: Budget, notes: list[str], fast_only: bool) -> None:
        self.reader, self.text, self.end, self.budget, self.notes = reader, text, end, budget, notes
        self.fast_only = fast_only
        self.closer: Closer | None = None
        self.halt = False

    def read(self, begin: int, open_pos: int) -> tuple[list[CallSyntax] | None, int, str]:
        """The calls of the candidate at ``begin`` and where it ends; or ``None``, where to go on from
        (-1: the next head) and why it could not be read."""
        reader, text = self.reader, self.text
        read = reader.read_at(text, begin, open_pos, self.end)
        if read is not None:
            return read[0], read[1], ""
        if self.closer is None:
            self.closer = Closer(text, reader.quoting, self.budget)
        close = self.closer.close(open_pos)
        if close == UNREAD:  # as for a candidate that never closes
            self.halt = reader.gives_up
            return None, -1, SCAN_SPENT
        closed = 0 <= close <= self.end
        stop = reader.stop_after(text, close, self.end) if closed else self.end
        why = "the fast path declined it"
        if not self.fast_only:
            try:
                return reader.read_slow(text, begin, stop, closed, self.budget), stop, ""
            except GrammarFailure as err:
                why = err.describe()
            recovered = reader.recover(text, begin, stop if closed else None, self.end, self.budget, self.notes)
            if recovered is not None:
                return recovered[0], recovered[1], ""
        self.halt = reader.gives_up and not closed
        return None, -1 if reader.look_inside else stop, why


def scan(reader: Reader, text: str, budget: Budget, notes: list[str], tools: Toolset | None = None, *,
         start: int = 0, end: int | None = None, gate: bool = False, fast_only: bool = False) -> Scan:
    """The candidates of ``text[start:end]`` (where ``reader.heads`` says), each read once: by the
    fast path, else (``fast_only``: not) by the grammar, else by the recovery step.  ``gate``: with
    ``tools``, a candidate whose name no tool has is passed over, unread (prose is full of
    ``word(...)``).  ``budget`` bounds the heads and candidates looked at; past it a note says so.

    >>> found = scan(PythonCalls(), "Use f(a=1), then g(x=[1, 2]).", Budget(), [])
    >>> [(c.name, c.items) for c in found.calls], found.spans
    ([('f', [('a', 1)]), ('g', [('x', [1, 2])])], [(4, 10), (17, 28)])
    """
    end = len(text) if end is None else end
    found = Scan()
    heads = reader.heads(text, start, end)
    candidate = _Candidate(reader, text, end, budget, notes, fast_only)
    covered, nameless = start, 0
    for begin, open_pos, name in heads:
        if budget.heads <= 0 or budget.candidates <= 0:
            notes.append(f"stopped looking for {reader.units}: too many candidates (Limits.reply_candidates)")
            break
        if begin < 0:  # "12(": cheap to pass over, yet not free
            nameless += 1
            if nameless % 4 == 0:
                budget.heads -= 1
            continue
        if begin < covered:
            continue
        budget.heads -= 1
        if gate and tools is not None and name is not None and resolve(name, tools)[0] is None:
            found.skip(name)
            continue
        budget.candidates -= 1
        calls, stop, why = candidate.read(begin, open_pos)
        if calls is None:
            found.failures.append((name, f"{reader.where(begin)} could not be read: {why}"))
            if candidate.halt:
                break
            if stop >= 0:
                covered = stop
                heads.skip_to(stop)
            continue
        for call in calls:
            call.span = call.span or (begin, stop)
        found.calls.extend(calls)
        found.spans.append((begin, stop))
        covered = stop
        heads.skip_to(stop)
    return found


class CodeFamily(Protocol):
    """A protocol of the code family: a reply (without a code fence around it) read by :func:`scan`
    with the format's :attr:`reader`, its calls bound to their tools (:meth:`finish`).

    Where a reply may be nothing but calls (:meth:`alone`), every call in it counts whatever its
    name; once it proves to hold running text, only names of the toolset's tools do.  Compliant:
    calls, nothing but :attr:`between` around them, no candidate unread, no bare word read as text.
    """

    closes_calls = True

    reader: Reader
    #: what may stand between (and around) the calls of a reply that keeps to the format
    between: Pattern[str] = BLANK
    #: the leftover note's words for what was read
    read_what = "the calls"

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        body, offset, _ = strip_code_fence(text)
        notes: list[str] = []
        found = self.read_candidates(self.reader, body, tools, Budget(limits), notes)
        if found.calls and found.rest:
            notes.append(leftover_note(found.rest, self.read_what))
        compliant = bool(found.calls) and not found.rest and not found.failures and not any(c.lenient for c in found.calls)
        return Extraction(self.finish(found.calls, tools, notes, offset), tuple(notes), compliant)

    def alone(self, text: str, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` may be nothing but calls (its first and last characters say)."""
        return False

    def keeps(self, call: CallSyntax, tools: Toolset | None) -> bool:
        """Whether a call read in running text is kept (``sexpr_call`` drops a remark in parentheses)."""
        return True

    def read_candidates(self, reader: Reader, text: str, tools: Toolset | None, budget: Budget, notes: list[str],
                        start: int = 0, end: int | None = None, *, note_failures: bool = True,
                        fast_only: bool = False) -> Scan:
        """:func:`scan` of ``text[start:end]``, then what counts: a reply that proved to hold running
        text keeps only calls to known tools; the names passed over are noted, and (with
        ``note_failures``) the candidates that could not be read."""
        end = len(text) if end is None else end
        alone = self.alone(text, start, end)
        found = scan(reader, text, budget, notes, tools, start=start, end=end, gate=not alone, fast_only=fast_only)
        found.rest = outside(text, found.spans, self.between, start, end)
        if not alone or found.rest or found.failures or any(c.lenient for c in found.calls):
            self._in_prose(found, tools, alone, text, start, end)
        if found.failures and note_failures:
            notes.extend(note for _, note in found.failures[:None if reader.every_failure else 1])
        if not found.calls and found.skipped:
            notes.append("no call to a known tool; ignored: " + ", ".join(self.shown(name) for name in found.skipped))
        return found

    def _in_prose(self, found: Scan, tools: Toolset | None, read_ungated: bool, text: str, start: int,
                  end: int) -> None:
        """Keep what counts in running text: calls :meth:`keeps` keeps and, when the candidates were
        read ungated, only calls to known tools (and only their failures)."""
        def known(name: str | None) -> bool:
            if not read_ungated or tools is None or name is None or resolve(name, tools)[0] is not None:
                return True
            found.skip(name)
            return False

        kept = [c for c in found.calls if known(c.name) and self.keeps(c, tools)]
        if len(kept) != len(found.calls):
            found.calls = kept
            found.spans = [c.span for c in kept if c.span is not None]
            found.rest = outside(text, found.spans, self.between, start, end)
        if read_ungated:
            found.failures = [f for f in found.failures if known(f[0])]

    def shown(self, name: str) -> str:
        """A name passed over, as the note shows it."""
        return f"{name}(...)"

    def finish(self, found: Sequence[CallSyntax], tools: Toolset | None, notes: list[str],
               offset: int = 0) -> tuple[RawCall, ...]:
        """The found calls as :class:`RawCall` objects, spans shifted by ``offset``: keywords as
        written; positional values bound to the tool's parameters (:func:`bind`); a dotted prefix the
        toolset does not know dropped (:func:`resolve`)."""
        calls = []
        for call in found:
            name, tool = call.name, None
            keywords = dict(cast("list[tuple[str, Any]]", call.items))
            unbound = None in keywords or len(keywords) != len(call.items)  # positional values, or a keyword twice
            twice: tuple[str, ...] = ()
            if unbound:
                twice = tuple(where((), key) for key in keys_twice(item for item in call.items if item[0] is not None))
            if unbound or "." in name:
                tool, name = resolve(name, tools)
                if name != call.name:
                    notes.append(f"read {call.name!r} as the tool {name!r}")
            notes.extend(f"{name}: the bare word {word!r} was read as text" for word in call.bare)
            notes.extend(f"{name}: {note}" for note in call.notes)
            arguments = bind(call, tool, notes, name) if unbound else keywords
            span = call.span
            calls.append(RawCall(name, arguments, (span[0] + offset, span[1] + offset) if span else None, twice))
        return tuple(calls)



def call_names(tools: Toolset | Iterable[Any] | None) -> list[str]:
    """Tool names for an instruction's example (``tool_name`` when none are known)."""
    return [tool.name for tool in tools or () if isinstance(getattr(tool, "name", None), str)]


# ---------------------------------------------------------------------------------------------
# the Python-syntax protocols

#: what may stand between (and around) Python calls: white space, ";" and comments
PY_BETWEEN = re.compile(r"(?:[ \t\r\n;]++|#[^\r\n]*+)*+")


class PythonCalls(Reader):
    """Python calls ``name(...)`` in a text: the fast path (:func:`read_python`), else
    ``python_call``'s grammar, else the recovery step (:func:`recover_calls`)."""

    quoting = PY_QUOTING

    def heads(self, text: str, start: int, end: int) -> CallHeads:
        return CallHeads(text, start, end)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        return read_python(text, begin, end, "call")

    def read_slow(self, text: str, begin: int, stop: int, closed: bool, budget: Budget) -> list[CallSyntax]:
        if not closed:
            raise GrammarFailure(self.grammar, 1, stop - begin + 1, ("')'",), "the end of the text")
        calls = grammar_read(self.grammar, PythonValues(), text, budget, (begin, stop))
        return calls if len(calls) == 1 else []

    def recover(self, text: str, begin: int, closed_at: int | None, end: int, budget: Budget,
                notes: list[str]) -> tuple[list[CallSyntax], int] | None:
        return recover_calls(text, begin, end, budget, notes, "call", closed_at)


class PythonLists(Reader):
    """Bracketed lists of Python calls ``[f(...), g(...)]``: the fast path (:func:`read_python`), else
    the format's grammar, else the recovery step.  ``tail``: what may follow the calls before the ``]``."""

    quoting = PY_QUOTING
    unit = "bracketed calls"
    every_failure = gives_up = True

    def __init__(self, grammar: str, transformer: Callable[[], Transformer], tail: Pattern[str] | None = None) -> None:
        self.grammar, self.transformer, self.tail = grammar, transformer, tail

    def heads(self, text: str, start: int, end: int) -> Heads:
        return Heads(text, LIST_HEAD, start, end)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        return read_python(text, begin, end, "list", self.tail)

    def recover(self, text: str, begin: int, closed_at: int | None, end: int, budget: Budget,
                notes: list[str]) -> tuple[list[CallSyntax], int] | None:
        return recover_calls(text, begin, end, budget, notes, "list", closed_at, self.tail)

    def where(self, begin: int) -> str:
        return "the bracketed calls" if begin == 0 else f"the bracketed calls at character {begin}"


class PythonFamily(CodeFamily):
    """The Python-syntax protocols: calls read by :class:`PythonCalls`; a reply that starts like
    a call and ends like one may be nothing but calls."""

    reader: Reader = PythonCalls()
    between = PY_BETWEEN

    def alone(self, text: str, start: int, end: int) -> bool:
        return text.endswith((")", ";"), start, end) and CALL_START.match(text, start, end) is not None

    #: for a protocol whose calls stand in bracketed lists: the note on calls found outside any
    unlisted = ""

    def listed(self, found: Scan, notes: list[str]) -> bool:
        """Whether the lists ``found`` keep to the format (noting what does not)."""
        return bool(found.calls) and not found.failures and not any(c.lenient for c in found.calls)

    def read_lists(self, lists: PythonLists, body: str, tools: Toolset | None, limits: Limits,
                   offset: int = 0) -> Extraction:
        """A reply whose calls stand in bracketed lists: the lists' calls; where there are none, its
        calls outside any list (:attr:`unlisted`)."""
        budget = Budget(limits)
        notes: list[str] = []
        found = scan(lists, body, budget, notes, tools)
        found.rest = outside(body, found.spans, self.between)
        notes.extend(note for _, note in found.failures)
        keeps = bool(found.spans) and self.listed(found, notes)
        if not found.spans:
            found = self.read_candidates(self.reader, body, tools, budget, notes)
            if found.calls:
                notes.append(self.unlisted)
        return Extraction(self.finish(found.calls, tools, notes, offset), tuple(notes), keeps)


__all__ = ["BLANK", "CALL_START", "CAPS", "FAST_DEPTH", "LIST_HEAD", "PY_BETWEEN", "PY_QUOTING", "PY_STRING",
           "RECOVERY_NOTES", "RECOVERY_SPENT", "SCAN_SPENT", "UNREAD", "Budget", "CallHeads", "CallSyntax", "Closer",
           "CodeFamily", "Head", "Heads", "Items", "Literals", "Object", "Pair", "PythonCalls", "PythonFamily",
           "PythonLists", "PythonReader", "PythonValues", "Quoting", "Reader", "Reject", "Scan", "bind", "call_names",
           "caps", "decode_python_string", "grammar_read", "json_number", "leftover_note", "outside",
           "py_literal", "python_call_text", "read_python", "recover_calls", "resolve", "scalar_literal", "scan",
           "to_number"]
