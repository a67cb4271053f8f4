"""The code family's shared reader: calls written as code.

Eight protocols write calls as code: five in Python's call syntax — ``python_call``,
``python_list_call``, ``bfcl_python_list``, ``python_tag`` and ``bracket_call``, which share
``grammars/python_values.lark`` — and ``sql_call``, ``graphql_call`` and ``sexpr_call`` with
grammars of their own.  Every one reads a reply the same way, and this module holds that
skeleton; a format module holds only what is its own (its grammar and transformer, its fast
reader, where a candidate starts, its renderer and instructions):

* :func:`scan` finds the candidates of a reply in linear time — a :class:`Reader` says where
  one starts (a compiled pattern searched once over the text) — and reads each **once**, by
  the cheapest reader that decides it: the format's fast reader, which needs no bracket
  matching and declines at once what it cannot read; only then are the candidate's brackets
  matched (:class:`Closer`, one pass over the reply for all candidates) and the slow reader
  runs (``ast.parse`` for Python, then the Lark grammar, which also says where a malformed
  candidate stops); what that refuses goes to the format's last resort, if it has one
  (:meth:`Reader.recover`: for Python, :func:`recover_calls` reads a string holding raw line
  breaks or its own quotes unescaped, and a set literal, each call noting what it forgave);
* :class:`CodeFamily` turns what :func:`scan` found into an :class:`~.base.Extraction`: a reply
  that is nothing but calls is the model's calls whatever their names; in running text, with
  a toolset, only names of its tools count (:func:`resolve` — the one place the family
  consults the toolset, also to bind positional values to parameters, :func:`bind`);
* the Python fast reader :func:`plain_arguments` takes the plain form (keyword or positional
  literals JSON can say once ``'...'`` is ``"..."`` and ``True`` is ``true``) by rewriting a
  call's arguments as one JSON array for the C decoder — a fixed number of C passes however
  many values; :func:`ast_calls` (``ast.parse``, which only parses, and a walk over the
  grammar's literal subset) and the grammar read the rest (property tests check that every
  reader agrees with the grammar wherever it reads);
* :class:`Budget`: what reading one reply may cost — how many candidates and heads are looked
  at, how many steps the bracket matcher takes, how many tokens ``ast.parse`` reads, how many
  marked segments are read, how many characters the last resort reads — and the reply's
  :class:`~.reading.GrammarBudget` for Lark.  A
  candidate past the budget is not read, and a note says so.
"""

from __future__ import annotations

import ast
import bisect
import functools
import json
import math
import re
import unicodedata
import warnings
from typing import Any, Callable, Dict, Iterable, List, Pattern, Sequence, Tuple, cast

from ..calls import ToolCall
from ..grammar import GrammarFailure, Transformer, parse
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.ir import Tool
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, RawCall
from .duplicates import keys_twice, where
from .reading import JSON_VALUES, GrammarBudget, GrammarTooLong, strip_code_fence

# ---------------------------------------------------------------------------------------------
# what reading one reply may cost

#: the :class:`~toolform_rules.limits.Limits` fields a reply's reading spends, in the order
#: :class:`Budget` holds them
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
    """What reading one reply may still cost: :data:`CAPS` under the reply's ``limits``, spent as
    it is read, and the reply's :class:`~.reading.GrammarBudget` (``grammar``, made when the
    grammar first runs) for Lark.

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
        """The reply's budget for Lark."""
        if self.allowance is None:
            self.allowance = GrammarBudget.of(self.limits)
        return self.allowance

    def ast(self, text: str) -> bool:
        """Spend what ``ast.parse`` costs on ``text``; ``False`` (nothing spent) when it is past the budget."""
        cost = token_estimate(text) + 8
        if cost > self.ast_tokens:
            return False
        self.ast_tokens -= cost
        return True


#: the characters that separate tokens (each counted once; see token_estimate)
_SEPARATORS = dict.fromkeys(map(ord, "()[]{},:;=+-.'\" \t\r\n"))


def token_estimate(text: str) -> int:
    """An upper estimate of the tokens ``text`` holds, as ``ast.parse`` reads it: its
    punctuation, quotes and white space (a long string literal with none of them is one token,
    and costs little).  One C pass (``str.translate``).

    >>> token_estimate('f(a=[1, 2], b="xyz")'), token_estimate('"' + 'x' * 1000 + '"')
    (12, 2)
    """
    return len(text) - len(text.translate(_SEPARATORS))


#: the Transformer methods' types (their names — list, dict, tuple — hide the builtins in the class)
Items = List[Any]
Object = Dict[Any, Any]
Pair = Tuple[Any, Any]


class Reject(Exception):
    """A value outside the literal subset (a fast reader declines; the grammar path fails)."""


class CallSyntax:
    """A call as written: its name, its items (``(keyword or None, value)`` in order), the bare
    words read as text (``unit=celsius``) and the span of text it came from.  A reader that read
    keywords only, each once, gives them as ``arguments`` (a dict) instead of items.  ``notes``:
    what the last-resort reader (:func:`recover_calls`) took leniently, for the caller.

    >>> CallSyntax("f", [("a", 1)]).lenient, CallSyntax("f", [("unit", "celsius")], ["celsius"]).lenient
    (False, True)
    """

    __slots__ = ("name", "written", "bare", "span", "arguments", "notes")

    def __init__(self, name: str, items: list[tuple[str | None, Any]] | None, bare: list[str] | None = None,
                 span: tuple[int, int] | None = None, arguments: dict[str, Any] | None = None,
                 notes: tuple[str, ...] = ()) -> None:
        self.name, self.written, self.bare, self.span, self.arguments = name, items, bare or [], span, arguments
        self.notes = notes

    @property
    def lenient(self) -> bool:
        """Whether the call was read with a liberty the format does not give: a bare word read as
        text, or what the last-resort reader noted (such a reply does not keep to the format)."""
        return bool(self.bare or self.notes)

    @property
    def items(self) -> list[tuple[str | None, Any]]:
        """``(keyword or None, value)`` in the order written."""
        if self.written is None:
            self.written = list((self.arguments or {}).items())
        return self.written

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CallSyntax) and (self.name, self.items, self.bare) ==
                (other.name, other.items, other.bare))

    def __repr__(self) -> str:
        return f"CallSyntax({self.name!r}, {self.items!r}, bare={self.bare!r})"


# ---------------------------------------------------------------------------------------------
# Python string literals and numbers

_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t", "v": "\v", "\n": ""}
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")


def decode_python_string(token: str) -> str:
    r"""The text of one Python string literal token, as Python reads it.

    Prefixes ``r``/``u``; single, double and triple quotes; the escapes ``\n``, ``\t``,
    ``\xhh``, ``\uXXXX``, ``\UXXXXXXXX``, ``\N{NAME}``, octal, line continuation; an unknown
    escape keeps its backslash.  Line ends inside the literal become ``\n`` (as in a source file).

    >>> decode_python_string(r'"a\tb\x41\N{BULLET}"'), decode_python_string(r"r'\d'"), decode_python_string(r"'\q'")
    ('a\tbA•', '\\d', '\\q')
    """
    i = 0
    raw = False
    while token[i] in "rRuU":
        raw = raw or token[i] in "rR"
        i += 1
    quote = 3 if token.startswith(('"""', "'''"), i) else 1
    body = token[i + quote:len(token) - quote]
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    if raw or "\\" not in body:
        return body
    out: list[str] = []
    j, n = 0, len(body)
    while True:
        k = body.find("\\", j)
        if k < 0:
            out.append(body[j:])
            return "".join(out)
        out.append(body[j:k])
        if k + 1 >= n:
            raise Reject("a string ends with a backslash")
        c = body[k + 1]
        simple = _SIMPLE_ESCAPES.get(c)
        if simple is not None:
            out.append(simple)
            j = k + 2
        elif c in _OCTAL:
            m = k + 2
            while m < n and m < k + 4 and body[m] in _OCTAL:
                m += 1
            out.append(chr(int(body[k + 1:m], 8)))
            j = m
        elif c in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[c]
            digits = body[k + 2:k + 2 + width]
            if len(digits) != width or not all(d in _HEX for d in digits):
                raise Reject(f"a truncated \\{c} escape")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise Reject("an escape beyond Unicode")
            out.append(chr(code))
            j = k + 2 + width
        elif c == "N":
            close = body.find("}", k + 3)
            if body[k + 2:k + 3] != "{" or close < 0:
                raise Reject("a malformed \\N{...} escape")
            try:
                out.append(unicodedata.lookup(body[k + 3:close]))
            except KeyError:
                raise Reject("an unknown character name") from None
            j = close + 1
        else:
            out.append("\\" + c)
            j = k + 2


def to_number(text: str) -> int | float:
    """A Python number token as int or float (``0x1F``, ``1_000``, ``007``, ``1e-07``).

    >>> to_number("0x1F"), to_number("1_000"), to_number("007"), to_number("1e-07")
    (31, 1000, 7, 1e-07)
    """
    if len(text) > 1 and text[0] == "0" and text[1] in "xXoObB":
        return int(text, 0)
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


# ---------------------------------------------------------------------------------------------
# the grammar path

def json_number(text: str) -> int | float:
    """A number as JSON, SQL, GraphQL and s-expressions write it: a float when it has a point or
    an exponent (``-1.5e3``, ``1.``), else an int (``007`` is 7).

    >>> json_number("007"), json_number("-1.5e3"), json_number("1.")
    (7, -1500.0, 1.0)
    """
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


class Literals(Transformer):
    """The rules every code format's grammar names alike: ``true``, ``false``, ``null``, ``list``
    and a ``number`` as :func:`json_number` reads it.  Each format's transformer extends it."""

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


class _Bare(str):
    """A bare word standing for its own text (``unit=celsius``)."""


def _scalar_key(key: Any) -> Any:
    if isinstance(key, (list, dict)):
        raise Reject("a dict key that is a list or a dict")
    return key


class PythonValues(Literals):
    """A ``python_values.lark`` tree → Python values and :class:`CallSyntax` objects.

    Tuples become lists (JSON has no tuples).  Each protocol's grammar gets a subclass
    that reads its ``start`` rule.
    """

    def string(self, items: Items) -> str:
        if len(items) == 1:
            return decode_python_string(str(items[0]))
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

    def positional(self, items: Items) -> Pair:
        return None, items[0]

    def keyword(self, items: Items) -> Pair:
        return str(items[0]), items[1]

    def arguments(self, items: Items) -> Items:
        return list(items)

    def call(self, items: Items) -> CallSyntax:
        arguments = items[1] if len(items) > 1 else []
        bare = [str(v) for _, v in arguments if type(v) is _Bare]
        if bare:
            arguments = [(k, str(v) if type(v) is _Bare else v) for k, v in arguments]
        return CallSyntax(str(items[0]), arguments, bare)

    def start(self, items: Items) -> Items:
        return [item for item in items if isinstance(item, CallSyntax)]


def transform(transformer: Transformer, tree: Any, grammar: str) -> Any:
    """``transformer.transform(tree)``, any failure in it a :class:`GrammarFailure`."""
    try:
        return transformer.transform(tree)
    except RecursionError:
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply") from None
    except Exception as err:  # Lark wraps a callback's error in its VisitError
        orig = getattr(err, "orig_exc", err)
        raise GrammarFailure(grammar, 1, 1, (), str(orig) or type(orig).__name__) from None


def grammar_read(grammar: str, transformer: Transformer, text: str, budget: Budget | None = None,
                 span: tuple[int, int] | None = None) -> Any:
    """Parse ``text`` (or ``text[span[0]:span[1]]``) with ``grammar`` and transform it (a
    :class:`GrammarFailure` when it cannot).

    The grammar is the slow path: it reads what the fast readers could not, within the reply's
    :class:`~.reading.GrammarBudget` (``budget.grammar``; without a ``budget``, the default
    limits' for this one text).  A candidate past it is not given to the grammar, and the
    failure (:class:`~.reading.GrammarTooLong`) says so.

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
    return transform(transformer, parse(grammar, text), grammar)


# ---------------------------------------------------------------------------------------------
# the slow Python reader: ast.parse and a walk over the literal subset

_JSON_NAMES: dict[str, Any] = {"true": True, "false": False, "null": None}
_SCALARS = (str, int, float, bool)


def _literal(node: ast.AST) -> Any:
    kind = type(node)
    if kind is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if value is None or type(value) in _SCALARS:
            return value
        raise Reject
    if kind is ast.List or kind is ast.Tuple:
        return [_literal(e) for e in node.elts]  # type: ignore[attr-defined]
    if kind is ast.Dict:
        out = {}
        for k, v in zip(node.keys, node.values):  # type: ignore[attr-defined]
            if k is None:
                raise Reject
            out[_scalar_key(_literal(k))] = _literal(v)
        return out
    if kind is ast.UnaryOp:
        operand = node.operand  # type: ignore[attr-defined]
        sign = type(node.op)  # type: ignore[attr-defined]
        if type(operand) is ast.Constant and type(operand.value) in (int, float) and sign in (ast.USub, ast.UAdd):
            number: int | float = operand.value  # type: ignore[assignment]  # tested just above
            return -number if sign is ast.USub else number
        raise Reject
    if kind is ast.Name and node.id in _JSON_NAMES:  # type: ignore[attr-defined]
        return _JSON_NAMES[node.id]  # type: ignore[attr-defined]
    raise Reject


def _dotted(node: ast.AST) -> str:
    if type(node) is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if type(node) is ast.Attribute:
        return _dotted(node.value) + "." + node.attr  # type: ignore[attr-defined]
    raise Reject


def _source_name(text: str, node: ast.AST) -> str:
    """A name as the text spells it (``ast`` NFKC-normalises non-ASCII identifiers)."""
    segment = ast.get_source_segment(text, node)
    if segment is None:
        raise Reject
    return "".join(segment.split())


#: what may stand between a keyword's name and its "=": spaces and line continuations
_KEYWORD_GAP = re.compile(r"\\(?:\r\n|\r|\n)|\s")


def _keyword_name(text: str, node: ast.AST) -> str:
    """A keyword argument's name as the text spells it, without the spaces and line continuations
    (a backslash ending the line) that may stand before its ``=``."""
    segment = ast.get_source_segment(text, node)
    if segment is None:
        raise Reject
    name = _KEYWORD_GAP.sub("", segment.split("=", 1)[0])
    if not name.isidentifier():
        raise Reject
    return name


def _written_whole(node: ast.AST, name: str) -> bool:
    """Whether the dotted ``name`` stands in the text as one word, as the grammar's NAME has it:
    ``ast`` also reads ``math . factorial`` and ``(math).factorial``, which the grammar refuses."""
    return (type(node) is ast.Name or (node.lineno == node.end_lineno  # type: ignore[attr-defined]
            and node.end_col_offset - node.col_offset == len(name)))  # type: ignore[attr-defined]


def _call(node: ast.AST, text: str, ascii_text: bool) -> CallSyntax:
    if type(node) is not ast.Call:
        raise Reject
    func = node.func  # type: ignore[attr-defined]
    if ascii_text:
        name = _dotted(func)
        if not _written_whole(func, name):
            raise Reject
    else:
        name = _source_name(text, func)
        if not all(part.isidentifier() for part in name.split(".")) or name != ast.get_source_segment(text, func):
            raise Reject
    items: list[tuple[str | None, Any]] = [(None, _literal(a)) for a in node.args]  # type: ignore[attr-defined]
    bare: list[str] = []
    for kw in node.keywords:  # type: ignore[attr-defined]
        if kw.arg is None:
            raise Reject
        key = kw.arg if ascii_text else _keyword_name(text, kw)
        value = kw.value
        if type(value) is ast.Name and value.id not in _JSON_NAMES:
            word = value.id if ascii_text else _source_name(text, value)
            bare.append(word)
            items.append((key, word))
        else:
            items.append((key, _literal(value)))
    return CallSyntax(name, items, bare)


_LINES = re.compile(r"[^\r\n]*+(?:\r\n|\r|\n)|[^\r\n]++")


class _Positions:
    """Character offsets of ``ast`` positions (``ast`` counts columns in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = _LINES.findall(text)  # ast's lines: ended by \r\n, \r or \n (not \x85, \u2028, ...)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def char(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        if line.isascii():
            return self.starts[lineno - 1] + col
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: Any) -> tuple[int, int]:
        return (self.char(node.lineno, node.col_offset),
                self.char(node.end_lineno or node.lineno, node.end_col_offset or 0))


def _ast_parse(text: str, mode: str) -> ast.AST | None:
    try:
        if "\\" in text:  # invalid escapes warn; a reply is not our source code
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ast.parse(text, mode=mode)
        return ast.parse(text, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _may_be_python(text: str) -> bool:
    """Whether ``text`` ends like code (a ")" or "]"), not like a sentence."""
    end = text.rstrip()
    return end.endswith((")", "]")) or end.endswith(";")


def ast_calls(text: str, shape: str) -> list[CallSyntax] | None:
    """The calls ``text`` holds, read with ``ast.parse`` and a walk over the literal subset."""
    tree = _ast_parse(text, "exec" if shape == "lines" else "eval")
    if tree is None:
        return None
    ascii_text = text.isascii()
    try:
        if shape == "lines":
            nodes = tree.body  # type: ignore[attr-defined]
            if any(type(n) is not ast.Expr for n in nodes):
                return None
            nodes = [n.value for n in nodes]
        else:
            body = tree.body  # type: ignore[attr-defined]
            if shape == "call":
                nodes = [body]
            elif type(body) is ast.List:
                nodes = body.elts
            else:
                return None
        calls = [_call(node, text, ascii_text) for node in nodes]
        if len(calls) == 1 and shape != "list":
            calls[0].span = (0, len(text))
        elif calls:
            positions = _Positions(text)
            for call, node in zip(calls, nodes):
                call.span = positions.span(node)
        return calls
    except (Reject, RecursionError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# the fast Python reader: a call's arguments rewritten as JSON for the C decoder

#: arguments up to the first parenthesis outside a string (for a ")" inside a string)
_PLAIN_ARGUMENTS = re.compile(r'(?:[^()\'"\\]++|"(?:[^"\\\r\n]++|\\.)*+"|\'[^\'\\\r\n]*+\')*+')
#: an escape Python and JSON read apart ("\/" is JSON's "/"; JSON pairs two surrogates), or one
#: of :data:`_MARK`
_OTHER_ESCAPE = re.compile(r"\\(?:/|u[dD][89a-fA-F]|u007[fF])")
#: what marks a keyword's name as the arguments' JSON object has it: DEL, which no text the reader
#: takes holds (it refuses the character, and an escape of it); ASCII, so the text stays narrow
_MARK = "\x7f"
#: the characters this reader writes as marks while it rewrites a call: a text holding one is
#: left to the next reader (``ast``), which reads it as well, only slower
PLAIN_FORM_MARKS = frozenset("\x01\x02\x03\x04" + _MARK)
#: the words that are values, never keyword names
_VALUE_WORDS = frozenset({"True", "False", "None", "true", "false", "null"})
#: a key opened where no keyword's name and "=" follow (a comma between values, a positional value)
_NO_KEY = re.compile('"\x7f(?![A-Za-z_][A-Za-z0-9_]*+":)')
#: Python's words for JSON's
_WORDS = (("True", "true"), ("False", "false"), ("None", "null"))
#: how far the first ")" may lie for the arguments to be read up to it directly; past it, a pattern
#: that stops at the first parenthesis outside a string finds their end (so a flood of calls that
#: never close costs one pass over the text, not one per call)
_NEAR = 2048


def plain_arguments(args: str) -> dict[str, Any] | list[tuple[str | None, Any]] | None:
    r"""The arguments of a call whose arguments (the text between its parentheses) are ``args``
    in the plain form — keyword values (a dict), or positional ones (a list of items), that JSON
    can say once ``'...'`` is ``"..."`` and ``True``/``None`` are ``true``/``null`` — else
    ``None`` (another reader decides).

    The arguments become JSON for the C decoder (``k=v, ...`` an object, its keys marked by
    :data:`_MARK`) by a fixed number of C passes, none per value: the strings are found by
    splitting at the quotes (``"`` first, then ``'`` in what lies outside), and outside them
    every ``,`` opens a marked key that a keyword's name and ``=`` then fill (or that is taken
    back).  A split that pairs quotes otherwise than Python would (a ``"`` inside ``'...'``)
    leaves a mark where it cannot stand, and the reader declines.

    >>> plain_arguments("name='Acme', n=5, auto_renew=True, details={'k': [1, None, \"it's\"]},")
    {'name': 'Acme', 'n': 5, 'auto_renew': True, 'details': {'k': [1, None, "it's"]}}
    >>> plain_arguments("'Acme', -2.5e3"), plain_arguments("a=f(1)"), plain_arguments("unit=celsius")
    ([(None, 'Acme'), (None, -2500.0)], None, None)
    """
    if "\x01" in args or "\x02" in args or "\x03" in args or "\x04" in args or _MARK in args:
        return None  # PLAIN_FORM_MARKS (five scans in C: faster than one set test)
    escaped = "\\" in args
    if escaped:  # an escaped backslash or quote stands apart while the quotes are paired
        args = args.replace("\\\\", "\x03").replace('\\"', "\x04")
    double = args.split('"')  # outside, "...", outside, ...
    if not len(double) % 2:
        return None
    single = ("\x01".join(double[0::2]) if len(double) > 1 else args).split("'")  # \x01: a "..." string
    if not len(single) % 2:
        return None
    quoted = "".join(single[1::2])  # what '...' strings hold
    if "\x01" in quoted or escaped and ("\\" in quoted or "\x03" in quoted or "\x04" in quoted):
        return None  # a '...' holding a quote or an escape: the slower readers'
    held = "".join(double[1::2]) + quoted  # what all strings hold
    # strings holding none of what is rewritten below are rewritten with the rest (the usual case);
    # else the text outside them is rewritten alone (\x02 standing for a '...' string) and they are put back
    direct = not escaped and not ("," in held or "=" in held or "'" in held or "(" in held or "#" in held
                                  or "True" in held or "False" in held or "None" in held)
    if direct:
        text = args.replace("'", '"') if len(single) > 1 else args
    else:
        text = "\x02".join(single[0::2])
    if "(" in text or "#" in text or escaped and ("\\" in text or "\x03" in text or "\x04" in text):
        return None  # a call or a tuple, a comment, a backslash outside a string
    keywords = text.count("=")
    if keywords:  # every "," opens a key, a name and "=" fill it: ", name=" is ',"\x7fname":'
        text = ("," + text).replace(", ", ",")
        # white space around a name (a call over several lines): a line break, tab or carriage return is looked
        # for alone first, at memchr's speed (most calls hold none), then beside a comma or "="
        if (", " in text or " =" in text or ("\n" in text or "\t" in text or "\r" in text) and (
                ",\n" in text or ",\t" in text or ",\r" in text or "\n=" in text or "\t=" in text or "\r=" in text)):
            text = "=".join(map(str.strip, ",".join(map(str.strip, text.split(","))).split("=")))
        text = _NO_KEY.sub("", text.replace(",", ',"\x7f').replace("=", '":'))[1:]
    words = False
    for word, json_word in _WORDS:
        if word in text:
            text = text.replace(word, json_word)
            words = True
    if not direct:
        if len(single) > 1:
            single[0::2] = text.split("\x02")
            text = '"'.join(single)
        if len(double) > 1:
            double[0::2] = text.split("\x01")
            if escaped:
                strings = "\x01".join(double[1::2])
                if "\\" in strings and _OTHER_ESCAPE.search(strings) is not None:
                    return None
                double[1::2] = strings.replace("\x03", "\\\\").replace("\x04", '\\"').split("\x01")
            text = '"'.join(double)
    text = text.rstrip()
    if text.endswith(","):  # a trailing comma after the last value
        text = text[:-1]
        if not text.strip():
            return None
    text = ("{" + text + "}") if keywords else ("[" + text + "]")
    try:
        value, end = JSON_VALUES.raw_decode(text, 0)
    except (ValueError, StopIteration, RecursionError):
        return None
    if end != len(text):
        return None
    if not keywords:
        return [(None, item) for item in value]
    keys = "".join(value)
    # every key a keyword's (marked), each keyword's at the top, once: no other key, none nested
    if len(value) != keywords or keys.count(_MARK) != keywords:
        return None
    names = keys.split(_MARK)
    del names[0]
    if not _VALUE_WORDS.isdisjoint(names) or words and ("true" in keys or "false" in keys or "null" in keys):
        return None  # True=...; or a name holding True, which was rewritten
    return dict(zip(names, value.values()))


def plain_call_at(text: str, begin: int, open_pos: int, end: int) -> tuple[CallSyntax, int] | None:
    """The plain-form call named by ``text[begin:open_pos]`` whose "(" is at ``open_pos`` and
    that ends by ``end`` (its span set), and where it ends; ``None`` outside the plain form."""
    close = text.find(")", open_pos, end)
    if close < 0:
        return None
    items = plain_arguments(text[open_pos + 1:close]) if close - open_pos <= _NEAR else None
    if items is None:
        if close - open_pos <= _NEAR and "'" not in text[open_pos:close] and '"' not in text[open_pos:close]:
            return None  # no string hides a ")": that was the end, and not the plain form
        stop = _PLAIN_ARGUMENTS.match(text, open_pos + 1, end).end()  # type: ignore[union-attr]  # may be empty
        if (stop == close and close - open_pos <= _NEAR) or not text.startswith(")", stop, end):
            return None
        close = stop
        items = plain_arguments(text[open_pos + 1:close])
        if items is None:
            return None
    if isinstance(items, dict):
        return CallSyntax(text[begin:open_pos], None, None, (begin, close + 1), items), close + 1
    return CallSyntax(text[begin:open_pos], items, None, (begin, close + 1)), close + 1


#: a name as the grammar's NAME has it, directly followed by "("
_CALL_NAME = re.compile(r"[^\W\d]\w*+(?:[.\-]\w++)*+\(")
_SPACE: Any = re.compile(r"[ \t\r\n]*+")  # matches everywhere
_CALL_SEPARATOR: Any = re.compile(r"[ \t\r\n;]*+")  # matches everywhere


def plain_list_at(text: str, pos: int, end: int, tail: Pattern[str] | None = None) -> tuple[list[CallSyntax], int] | None:
    """The plain-form list of calls ``[f(...), g(...)]`` whose "[" is at ``pos`` (spans set) and
    where it ends; ``None`` outside the plain form.  ``tail``: what may follow the calls before
    the "]" (``bracket_call``'s ``→ result``)."""
    calls: list[CallSyntax] = []
    at = _SPACE.match(text, pos + 1, end).end()
    while True:
        if text.startswith("]", at, end):
            return calls, at + 1
        if calls and tail is not None:
            after = tail.match(text, at, end)
            if after is not None:
                at = after.end()
                return (calls, at + 1) if text.startswith("]", at, end) else None
        name = _CALL_NAME.match(text, at, end)
        if name is None:
            return None
        read = plain_call_at(text, at, name.end() - 1, end)
        if read is None:
            return None
        calls.append(read[0])
        at = _SPACE.match(text, read[1], end).end()
        if text.startswith(",", at, end):
            at = _SPACE.match(text, at + 1, end).end()
        elif not text.startswith("]", at, end) and (tail is None or not tail.match(text, at, end)):
            return None


def calls_making_up(text: str, read_at: Callable[[str, int], "tuple[CallSyntax, int] | None"],
                    space: Pattern[str], start: int = 0) -> list[CallSyntax] | None:
    """The calls making up all of ``text`` from ``start``, each read by ``read_at(text, pos)``
    (the call and where it ends, or ``None``) and spanned, ``space`` between them; ``None``
    unless every piece is a call (and there is one).

    >>> calls_making_up("f(a=1) g(b=2)", lambda t, p: plain_call_at(t, p, t.index("(", p), len(t)),
    ...                 re.compile(r" *"))
    [CallSyntax('f', [('a', 1)], bare=[]), CallSyntax('g', [('b', 2)], bare=[])]
    """
    calls: list[CallSyntax] = []
    pos = start
    while pos < len(text):
        one = read_at(text, pos)
        if one is None:
            return None
        one[0].span = (pos, one[1])
        calls.append(one[0])
        pos = space.match(text, one[1]).end()  # type: ignore[union-attr]  # matches everywhere
    return calls or None


def scalar_literal(value: Any) -> str | None:
    """A string, boolean, null or number as JSON writes it (a number not finite as a string,
    which no syntax of the family has a literal for); ``None`` for other values.

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


def plain_calls(text: str, shape: str) -> list[CallSyntax] | None:
    """The calls ``text`` holds in the plain form, spans set; ``None`` outside it.

    ``shape``: ``"lines"`` (calls one a line or ``;``-separated), ``"call"`` (exactly one) or
    ``"list"`` (a bracketed list of calls).

    >>> plain_calls("f(a='x', b={'k': [1, -2.5e3, None]}, c=true)", "call")
    [CallSyntax('f', [('a', 'x'), ('b', {'k': [1, -2500.0, None]}), ('c', True)], bare=[])]
    """
    n = len(text)
    pos = _SPACE.match(text).end()
    if shape == "list":
        if not text.startswith("[", pos):
            return None
        read_list = plain_list_at(text, pos, n)
        if read_list is None or _SPACE.match(text, read_list[1]).end() != n:
            return None
        return read_list[0]
    calls: list[CallSyntax] = []
    while pos < n:
        name = _CALL_NAME.match(text, pos)
        read = plain_call_at(text, pos, name.end() - 1, n) if name is not None else None
        if read is None:
            return None
        calls.append(read[0])
        pos = (_SPACE if shape == "call" else _CALL_SEPARATOR).match(text, read[1]).end()
        if shape == "call":
            break
    if pos != n or not calls:
        return None
    if len(calls) == 1:
        calls[0].span = (0, n)
    return calls


def fast_calls(text: str, shape: str, budget: Budget | None = None) -> list[CallSyntax] | None:
    """The calls of ``text`` as the fast readers read them — the plain reader, else ``ast.parse``
    when ``text`` ends like code (within ``budget``, the reply's) — or ``None`` (the grammar decides).

    >>> fast_calls('f(1, a="x", b=[True, None], c=-2.5)', "call")
    [CallSyntax('f', [(None, 1), ('a', 'x'), ('b', [True, None]), ('c', -2.5)], bare=[])]
    >>> fast_calls('f(a=g(1))', "call") is None
    True
    """
    calls = plain_calls(text, shape)
    if calls is not None:
        return calls
    if not _may_be_python(text) or not (budget if budget is not None else Budget()).ast(text):
        return None
    return ast_calls(text, shape)


# ---------------------------------------------------------------------------------------------
# the last resort: calls that are not quite Python

#: what the grammar passes over between tokens: white space, line continuations, comments
_GAP: Any = re.compile(r"(?:[ \t\f\r\n]++|\\\r?\n|#[^\r\n]*+)*+")  # matches everywhere
#: a name as the grammar's NAME has it
_NAME = re.compile(r"[^\W\d]\w*+(?:[.\-]\w++)*+")
#: a number as the grammar's NUMBER has it (the same alternatives in the same order, possessive)
_NUMBER = re.compile(r"(?:\d(?:_?\d)*+)?+\.\d(?:_?\d)*+(?:[eE][+-]?\d(?:_?\d)*+)?+"
                     r"|\d(?:_?\d)*+\.(?:[eE][+-]?\d(?:_?\d)*+)?+|\d(?:_?\d)*+[eE][+-]?\d(?:_?\d)*+"
                     r"|0[xX](?:_?[0-9a-fA-F])++|0[oO](?:_?[0-7])++|0[bB](?:_?[01])++|\d(?:_?\d)*+")
#: the words that are values
_WORD_VALUES: dict[str, Any] = {"True": True, "true": True, "False": False, "false": False, "None": None,
                                "null": None}
#: a string's opening: an r/u prefix (as the grammar allows one) and its quote
_STRING_OPEN = re.compile(r"[rRuU]?+(?:'''|\"\"\"|'|\")")
#: a triple-quoted string's body up to its closing quotes, as Python reads it
_TRIPLE_BODY = {q: re.compile(rf"(?:[^{q[0]}\\]++|\\.|{q[0]}(?!{q[0]}{q[0]}))*+", re.S) for q in ("'''", '"""')}
#: a one-quote string's body up to the next quote of its kind not escaped, line ends included
_BODY = {q: re.compile(rf"(?:[^{q}\\]++|\\.)*+", re.S) for q in "'\""}
#: a line end in a string's body that no backslash escapes (Python refuses it in a '...' string)
_RAW_BREAK = re.compile(r"(?:[^\\\r\n]++|\\(?:\r\n|.))*+[\r\n]", re.S)
_WS = r"[ \t\f\r\n]*+"
#: what follows the quote ending a string that is a keyword argument's value: the next keyword
#: argument, or the ")" closing the call (whatever follows it: in a list of calls, a call that
#: ends too early leaves the list unread rather than misread); a positional value ends as a
#: tuple's item does (a "," or the ")")
_ARGUMENT_END = re.compile(_WS + r"(?:,(?:" + _WS + r"[^\W\d]\w*+" + _WS + r"=(?!=)|" + _WS + r"\))|\))")
#: what follows the quote ending an item of a list, tuple, set or dict (by its closing bracket),
#: a dict's key, and the first item in braces (a key or a set's item)
_ITEM_END = {close: re.compile(_WS + "[," + re.escape(close) + "]") for close in ")]}"}
_KEY_END = re.compile(_WS + ":")
_FIRST_IN_BRACES = re.compile(_WS + "[,:}]")
#: a string starting after a gap (Python joins adjacent strings)
_NEXT_STRING = re.compile(_WS + r"[rRuU]?+['\"]")

#: the notes on a call the last-resort reader read, by what it took leniently (in this order)
RECOVERY_NOTES = {
    "line breaks": "a string holds raw line breaks (not valid Python); they were read as text",
    "quotes": "a string holds unescaped quotes of its own kind (not valid Python); each was read as text "
              "unless the end of the argument or item follows it",
    "set": "a set literal was read as a list (its items in order of first appearance)",
}
#: the note when the last-resort reader's share of a reply is spent
RECOVERY_SPENT = ("stopped reading calls that are not valid Python: what one reply may cost was spent "
                  "(Limits.reply_recovery_chars)")


class _LastResort:
    """One candidate read by :func:`recover_calls` (its state: the text, how far it may read,
    what was taken leniently)."""

    __slots__ = ("text", "limit", "max_depth", "shape", "tail", "strict", "reach", "taken", "used", "keyword_end",
                 "positional_end")

    def __init__(self, text: str, begin: int, limit: int, max_depth: int, shape: str, tail: Pattern[str] | None,
                 strict: bool) -> None:
        self.text, self.limit, self.max_depth, self.shape, self.tail = text, limit, max_depth, shape, tail
        self.strict = strict
        self.reach = begin  # the furthest character looked at (what the reading costs)
        self.taken: set[str] = set()  # what the current call took leniently
        self.used = False  # whether any call did
        self.keyword_end, self.positional_end = self.ends(_ARGUMENT_END), self.ends(_ITEM_END[")"])

    def gap(self, pos: int) -> int:
        pos = _GAP.match(self.text, pos, self.limit).end()
        if pos > self.reach:
            self.reach = pos
        return pos

    def at(self, pos: int, token: str) -> bool:
        return self.text.startswith(token, pos, self.limit)

    def read(self, begin: int) -> tuple[list[CallSyntax], int]:
        """The calls of the candidate at ``begin`` and where it ends (:class:`Reject` if none)."""
        if self.shape == "call":
            call, end = self.call(begin)
            return [call], end
        if not self.at(begin, "["):
            raise Reject
        calls: list[CallSyntax] = []
        pos = self.gap(begin + 1)
        while True:
            if self.at(pos, "]"):
                return calls, pos + 1
            if calls and self.tail is not None:
                after = self.tail.match(self.text, pos, self.limit)
                if after is not None:
                    pos = after.end()
                    if not self.at(pos, "]"):
                        raise Reject
                    return calls, pos + 1
            call, pos = self.call(pos)
            calls.append(call)
            pos = self.gap(pos)
            if self.at(pos, ","):
                pos = self.gap(pos + 1)
            elif not self.at(pos, "]") and (self.tail is None or self.tail.match(self.text, pos, self.limit) is None):
                raise Reject

    def call(self, begin: int) -> tuple[CallSyntax, int]:
        text = self.text
        name = _NAME.match(text, begin, self.limit)
        if name is None:
            raise Reject
        pos = self.gap(name.end())
        if not self.at(pos, "("):
            raise Reject
        self.taken = set()
        items: list[tuple[str | None, Any]] = []
        bare: list[str] = []
        pos = self.gap(pos + 1)
        while not self.at(pos, ")"):
            key = None
            word = _NAME.match(text, pos, self.limit)
            if word is not None:
                after = self.gap(word.end())
                if self.at(after, "=") and not self.at(after, "=="):
                    key, pos = word.group(), self.gap(after + 1)
            value, pos = self.value(pos, 1, self.positional_end if key is None else self.keyword_end, key is not None)
            if type(value) is _Bare:
                value = str(value)
                bare.append(value)
            items.append((key, value))
            pos = self.gap(pos)
            if self.at(pos, ","):
                pos = self.gap(pos + 1)
            elif not self.at(pos, ")"):
                raise Reject
        notes = tuple(note for what, note in RECOVERY_NOTES.items() if what in self.taken)
        self.used = self.used or bool(notes)
        return CallSyntax(name.group(), items, bare, (begin, pos + 1), notes=notes), pos + 1

    def ends(self, pattern: Pattern[str]) -> Callable[[int], bool]:
        """Whether ``pattern`` (what ends an argument, an item or a key) matches at a position."""
        return lambda pos: pattern.match(self.text, pos, self.limit) is not None

    def value(self, pos: int, depth: int, follow: Callable[[int], bool], keyword: bool = False) -> tuple[Any, int]:
        """The value at ``pos`` (after a gap) and where it ends; ``follow`` says where a string may end."""
        if depth > self.max_depth:
            raise Reject
        text = self.text
        pos = self.gap(pos)
        c = text[pos] if pos < self.limit else ""
        if c == "'" or c == '"' or c and c in "rRuU" and _STRING_OPEN.match(text, pos, self.limit) is not None:
            return self.strings(pos, follow)
        if c == "[":
            return self.sequence(pos + 1, "]", depth)
        if c == "(":
            return self.parenthesised(pos, depth, keyword)
        if c == "{":
            return self.braces(pos, depth)
        if c == "-" or c == "+":
            number = _NUMBER.match(text, self.gap(pos + 1), self.limit)
            if number is None:
                raise Reject
            value = to_number(number.group())
            return (-value if c == "-" else value), number.end()
        number = _NUMBER.match(text, pos, self.limit)
        if number is not None:
            return to_number(number.group()), number.end()
        word = _NAME.match(text, pos, self.limit)
        if word is None:
            raise Reject
        found = word.group()
        if found in _WORD_VALUES:
            return _WORD_VALUES[found], word.end()
        if keyword:
            return _Bare(found), word.end()
        raise Reject

    def strings(self, pos: int, follow: Callable[[int], bool]) -> tuple[str, int]:
        """One string, or several written side by side (Python joins them)."""
        value, pos = self.string(pos, follow)
        while True:
            after = self.gap(pos)
            if _STRING_OPEN.match(self.text, after, self.limit) is None:
                return value, pos
            more, pos = self.string(after, follow)
            value += more

    def string(self, pos: int, follow: Callable[[int], bool]) -> tuple[str, int]:
        """The string literal at ``pos`` and where it ends.  Triple-quoted and in valid Python
        (``strict``): as Python reads it.  Else a raw line end is text, and a quote of its own kind
        ends it only where ``follow`` says an argument (or an item) ends there — or, the first
        such quote with no raw line end before it, where another string follows (as Python reads
        ``'a' 'b'``); each other such quote is text.  Each quote is weighed once, by a look that
        stops at the next quote: linear in the string's length."""
        text, limit = self.text, self.limit
        opening = _STRING_OPEN.match(text, pos, limit)
        if opening is None:
            raise Reject
        token = opening.group()
        quote = token.lstrip("rRuU")
        start = opening.end()
        if len(quote) == 3:
            close = _TRIPLE_BODY[quote].match(text, start, limit).end()  # type: ignore[union-attr]  # matches everywhere
            self.reach = max(self.reach, close)
            if not text.startswith(quote, close, limit):
                raise Reject("an unclosed string")
            return decode_python_string(text[pos:close + 3]), close + 3
        body = _BODY[quote]
        at, skipped = start, False
        while True:
            close = body.match(text, at, limit).end()  # type: ignore[union-attr]  # matches everywhere
            self.reach = max(self.reach, close)
            if close >= limit or text[close] != quote:
                raise Reject("an unclosed string")
            if (self.strict or follow(close + 1) or not skipped and _NEXT_STRING.match(text, close + 1, limit)
                    and _RAW_BREAK.match(text, start, close) is None):
                break
            skipped, at = True, close + 1
        raw = text[start:close]
        if ("\n" in raw or "\r" in raw) and _RAW_BREAK.match(raw) is not None:
            if self.strict:
                raise Reject("a line end in a string")
            self.taken.add("line breaks")
        if skipped:
            self.taken.add("quotes")
        return decode_python_string(token + raw + quote), close + 1

    def sequence(self, pos: int, close: str, depth: int) -> tuple[list[Any], int]:
        """A list's items, from just after its opening bracket to its ``close``."""
        pos = self.gap(pos)
        if self.at(pos, close):
            return [], pos + 1
        first, pos = self.value(pos, depth + 1, self.ends(_ITEM_END[close]))
        return self.rest(pos, close, depth, [first])

    def rest(self, pos: int, close: str, depth: int, out: list[Any]) -> tuple[list[Any], int]:
        """The items after the first (in ``out``) of a list, tuple or set, to its ``close``."""
        follow = self.ends(_ITEM_END[close])
        while True:
            pos = self.gap(pos)
            if self.at(pos, close):
                return out, pos + 1
            if not self.at(pos, ","):
                raise Reject
            pos = self.gap(pos + 1)
            if self.at(pos, close):
                return out, pos + 1
            item, pos = self.value(pos, depth + 1, follow)
            out.append(item)

    def parenthesised(self, pos: int, depth: int, keyword: bool) -> tuple[Any, int]:
        """A tuple (a list), or a value in parentheses (a bare word too, as the grammar has it)."""
        pos = self.gap(pos + 1)
        if self.at(pos, ")"):
            return [], pos + 1
        first, pos = self.value(pos, depth + 1, self.ends(_ITEM_END[")"]), keyword)
        pos = self.gap(pos)
        if self.at(pos, ")"):
            return first, pos + 1
        if type(first) is _Bare:
            raise Reject
        return self.rest(pos, ")", depth, [first])

    def braces(self, pos: int, depth: int) -> tuple[Any, int]:
        """A dict, or a set literal read as a list of its items in order of first appearance."""
        pos = self.gap(pos + 1)
        if self.at(pos, "}"):
            return {}, pos + 1
        first, pos = self.value(pos, depth + 1, self.ends(_FIRST_IN_BRACES))
        pos = self.gap(pos)
        if not self.at(pos, ":"):
            items, pos = self.rest(pos, "}", depth, [first])
            if any(isinstance(item, (list, dict)) for item in items):
                raise Reject("a set holding a list or a dict")  # Python's sets cannot
            self.taken.add("set")
            return list(dict.fromkeys(items)), pos  # equal items once, as in a set
        out: dict[Any, Any] = {}
        key_end, value_end = self.ends(_KEY_END), self.ends(_ITEM_END["}"])
        key = first
        while True:  # at the ":" after a key
            value, pos = self.value(pos + 1, depth + 1, value_end)
            out[_scalar_key(key)] = value
            pos = self.gap(pos)
            if self.at(pos, ","):
                pos = self.gap(pos + 1)
            elif not self.at(pos, "}"):
                raise Reject
            if self.at(pos, "}"):
                return out, pos + 1
            key, pos = self.value(pos, depth + 1, key_end)
            pos = self.gap(pos)
            if not self.at(pos, ":"):
                raise Reject


def recover_calls(text: str, begin: int, end: int, budget: Budget, notes: list[str], shape: str,
                  closed_at: int | None = None, tail: Pattern[str] | None = None
                  ) -> tuple[list[CallSyntax], int] | None:
    r"""The last resort, for a candidate the strict readers (the plain reader, ``ast``, the
    grammar) failed on: its calls as the model meant them, each noting what was taken leniently
    (:data:`RECOVERY_NOTES`), and where the candidate ends; ``None`` when it needs what this
    reader does not forgive (the strict readers' failure stands).

    ``shape``: ``"call"`` (one call at ``begin``) or ``"list"`` (a bracketed list of calls at
    ``begin``, ``tail`` allowed before its "]").  ``closed_at``: where the bracket matcher closed
    the candidate (``None``: never).  What is forgiven:

    * in a candidate that is not valid Python (it never closes, or ``ast.parse`` refuses it), a
      ``'...'`` or ``"..."`` string holding raw line ends (text), or quotes of its own kind: such a
      quote ends the string only where the end of its argument follows it (spaces, then ``,``
      and a keyword's ``name=``, or the ``)`` closing the call; a positional value's, any ``,``),
      or the end of its item in a list, tuple, set or dict (spaces, then ``,`` or the closing
      bracket), or of a key (``:``); else it is text;
    * anywhere, a set literal, read as a list of its items in order of first appearance.

    Valid Python is read as Python reads it.  The reading is one pass that never looks back, each
    quote weighed by a look that stops at the next quote; it reads at most what is left of
    ``budget.recovery`` (:attr:`~toolform_rules.limits.Limits.reply_recovery_chars`) and spends
    what it looked at.

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
    strict = False
    if closed_at is not None:  # brackets that close as Python's do: is it valid Python?
        candidate = text[begin:closed_at]
        if not budget.ast(candidate):
            return None
        strict = _ast_parse(candidate, "eval") is not None
    limit = min(end, begin + budget.recovery)
    reader = _LastResort(text, begin, limit, budget.limits.max_depth, shape, tail, strict)
    read: tuple[list[CallSyntax], int] | None
    try:
        read = reader.read(begin)
    except (Reject, ValueError, OverflowError, RecursionError, MemoryError):
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
#: a "(" that may end a name (a C search for "(", then a look back): right after a name's first
#: character, or one more, or after three or more name characters — the rest is looked at in
#: Python; "9(", "-(" and such are passed over in C
_OPEN_AFTER_NAME = re.compile(r"\((?<=[\w.\-]\()(?:(?<=[^\W\d]\()|(?<=[^\W\d][\w.\-]\()|(?<=[\w.\-]{3}\())")
#: the last character of a window that is not a name character
_NAME_BREAK = re.compile(r"[^\w.\-](?=[\w.\-]*+\Z)")
#: a name as the grammar's NAME has it (after any leading "." and "-") and its "(", from where
#: its run of name characters starts
_NAME_AT = re.compile(r"[.\-]*+([^\W\d]\w*+(?:[.\-]\w++)*+)\(")
#: the same, at the start of a run of name characters and ending a window (at its "(")
_HEAD_END = re.compile(r"(?<![\w.\-])[.\-]*+([^\W\d]\w*+(?:[.\-]\w++)*+)\(\Z")

#: what a head iterator gives: where the candidate begins, its opening bracket, and the name it
#: calls (``None`` when the syntax names none there); ``begin`` is -1 for a place that looked like
#: a head and is none, so that a caller can count what it looked at
Head = Tuple[int, int, "str | None"]


class Heads:
    """The heads of ``pattern``'s matches in ``text[start:end]``, in order (``head`` makes a
    :data:`Head` of a match; by default the match's start, twice): each one C search from where
    the last match began (a pattern's lookarounds do the checking, so nothing is looked at twice
    in Python).  :meth:`skip_to` jumps past a candidate that was read.  ``first``, if given, is
    tried at ``start`` before the search (for a head that a pattern beginning with a literal
    cannot see there, such as a line's first character at the start of the text).

    A pattern should begin with a literal or a character class (not a lookbehind): Python's
    engine then jumps to the places it can match in a C loop, many times faster.

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


class CallHeads:
    """The heads of each ``name(`` in ``text[start:end]``: a name as the grammar's ``NAME`` has it
    (letters, digits, ``_``, inner ``.`` and ``-``, not starting with a digit; leading ``.`` and
    ``-`` not part of it) directly before a ``(``, the whole run of name characters before the
    ``(`` (from ``start`` on) making it up.  Each ``(`` is found by a C search (one that passes
    over every ``(`` with no name character before it, when the first is such); the name by one
    search of the few characters before it (a window doubling in size for a longer run, so a name
    is read once).  A ``(`` after name characters that make no name (``9(``) gives
    ``(-1, open, None)``.

    >>> list(CallHeads("x f(1) .g.h(2) 9k(3) (4) é(5)"))
    [(2, 3, 'f'), (8, 11, 'g.h'), (-1, 17, None), (25, 26, 'é')]
    """

    __slots__ = ("text", "start", "pos", "end")

    def __init__(self, text: str, start: int = 0, end: int | None = None) -> None:
        self.text, self.start, self.pos = text, start, start
        self.end = len(text) if end is None else end

    def __iter__(self) -> "CallHeads":
        return self

    def skip_to(self, pos: int) -> None:
        self.pos = max(self.pos, pos)

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


def match_close(text: str, open_pos: int, quoting: "Quoting | None" = None) -> int:
    """The index just past the bracket that closes the one at ``open_pos`` (-1 if it never closes).

    Brackets inside string literals do not count; a quote that opens no complete string
    is an apostrophe in prose and is skipped.  One pass from ``open_pos``.

    >>> match_close('f(a=")", b=[1, (2)]) tail', 1)
    20
    """
    return Closer(text, quoting or PY_QUOTING).close(open_pos)


class Quoting:
    """How a syntax writes strings, for the bracket matcher.

    ``string`` matches a complete literal at a quote; ``quotes`` are the characters that may
    open one, and ``prefixes`` the letters that may stand right before one of them as part of
    the literal, by quote (SQL's ``E'...'``: ``{"'": "eE"}``); ``bodies`` maps each opening token (quote, or prefix and
    quote) to a pattern matching as far as a literal opened there reads, closed or not.  Each
    string pattern must be such that when a
    literal opened at a quote cannot be read, no literal opened by the same token further on
    within that reach can (the quote there was escaped, or doubled) — or one that can holds
    only quotes.  That lets the matcher skip those quotes instead of reading each to the end
    of the text again (which made ``'\'\'\'...`` quadratic).
    """

    __slots__ = ("string", "stops", "opens", "bodies", "prefixes")

    def __init__(self, string: re.Pattern[str], quotes: str, bodies: dict[str, str],
                 prefixes: dict[str, str] | None = None) -> None:
        self.string, self.prefixes = string, prefixes or {}
        stops = "()\\[\\]{}" + re.escape(quotes)
        # a character class first: the search jumps to the next stop in a C loop
        self.stops = re.compile("[" + stops + "]")
        # opening brackets with nothing but text between them (no close, no quote): one step
        self.opens = re.compile(r"[(\[{](?:[^" + stops + r"]*+[(\[{])*+")
        self.bodies = {token: re.compile(body, re.S) for token, body in bodies.items()}


_OPEN = re.compile(r"[(\[{]")
_CLOSES = re.compile(r"[)\]}]++")

#: Python's quoting (single-line strings escape with a backslash; triple-quoted ones span lines)
PY_QUOTING = Quoting(PY_STRING, "\"'", {"'": r"'(?:[^'\\\r\n]++|\\.)*+", '"': r'"(?:[^"\\\r\n]++|\\.)*+'})

#: what Closer.close answers for a bracket it could not match within the reply's budget
UNREAD = -2
#: the note's words when that happens
SCAN_SPENT = "its brackets were not matched within what one reply may cost (Limits.reply_scan_steps)"


class Closer:
    """Where each bracket of a text closes, found lazily in one pass over the text.

    The first question about a bracket scans from it to its close (or the end of the
    text) and records every bracket met on the way; questions about those are answered
    from the record.  So however many candidates a reply has, its text is scanned once.
    A run of brackets is one step (a C search and a slice of the stack), a string literal
    one step, a quote that opens none one step and never read again; the steps are spent
    from ``budget.scan``, and a bracket whose close was not reached when it ran out is
    :data:`UNREAD`.
    """

    __slots__ = ("text", "quoting", "budget", "region", "table", "unclosed", "dead", "gave_up")

    def __init__(self, text: str, quoting: Quoting = PY_QUOTING, budget: Budget | None = None) -> None:
        self.text, self.quoting = text, quoting
        self.budget = budget if budget is not None else Budget()
        self.region = (0, 0)
        self.table: dict[int, int] = {}
        # per scan that ended with brackets open: their runs' starts and ends, and the answer for them
        self.unclosed: list[tuple[list[int], list[int], int]] = []
        # by quote token: (p, q) where one at p opened no readable string, so none in (p, q) does
        self.dead: dict[str, tuple[int, int]] = {}
        self.gave_up = False

    def close(self, open_pos: int) -> int:
        """Just past the bracket closing the one at ``open_pos``; -1 if it never closes (or
        ``open_pos`` lay inside a string of an earlier scan); :data:`UNREAD` past the budget."""
        known = self.table.get(open_pos)
        if known is not None:
            return known
        for starts, ends, answer in self.unclosed:
            i = bisect.bisect_right(starts, open_pos) - 1
            if i >= 0 and open_pos < ends[i]:
                return answer
        if self.region[0] <= open_pos < self.region[1]:
            return -1
        text = self.text
        if not text.startswith(("(", "[", "{"), open_pos):
            return -1
        if self.gave_up:
            return UNREAD
        budget, table, dead, quoting = self.budget, self.table, self.dead, self.quoting
        search, string, bodies, prefixes = quoting.stops.search, quoting.string.match, quoting.bodies, quoting.prefixes
        opens, closes = quoting.opens.match, _CLOSES.match
        # the open brackets not yet closed, as runs [first, end, positions]: the positions (a
        # range, or a list when text lies between them) are listed when a close first reaches the run
        runs: list[list[Any]] = []
        pos = open_pos
        steps = budget.scan
        while True:
            if steps <= 0:
                self.gave_up = True
                break
            steps -= 1
            m = search(text, pos)
            if m is None:
                break
            start = m.start()
            c = text[start]
            if c in "([{":
                pos = opens(text, start).end()  # type: ignore[union-attr]  # matches at an opener
                runs.append([start, pos, None])
            elif c in ")]}":
                pos = closes(text, start).end()  # type: ignore[union-attr]  # matches at a closer
                at = start  # the next close to pair
                while runs and at < pos:
                    run = runs[-1]
                    opened = run[2]
                    if opened is None:
                        first, end = run[0], run[1]
                        if end - first <= 16:  # short: look at each character
                            opened = [i for i in range(first, end) if text[i] in "([{"]
                        elif (text.count("(", first, end) + text.count("[", first, end)
                              + text.count("{", first, end)) == end - first:
                            opened = range(first, end)  # only brackets: their positions in one object
                        else:
                            opened = [o.start() for o in _OPEN.finditer(text, first, end)]
                            steps -= len(opened) // 16  # listing them is work too
                        run[2] = opened
                    k = len(opened)
                    n = min(pos - at, k)
                    # the run's last n opens close at at, at+1, ...: innermost first
                    table.update(zip(reversed(opened[k - n:]), range(at + 1, at + n + 1)))
                    if type(opened) is list:
                        del opened[k - n:]  # in place: closing a long run one by one stays linear
                    else:
                        opened = run[2] = opened[:k - n]  # a range's slice costs nothing
                    at += n
                    if opened:
                        run[1] = opened[-1] + 1
                    else:
                        runs.pop()
                if not runs:
                    pos = at
                    break
            else:
                token = c
                if start > pos and text[start - 1] in prefixes.get(c, ""):
                    start -= 1
                    token = text[start] + c
                failed = dead.get(token)
                if failed is not None and failed[0] < start < failed[1]:
                    pos = start + 1
                    continue
                closed = string(text, start)
                if closed is not None:
                    pos = closed.end()
                else:
                    body = bodies.get(token)
                    if body is not None:
                        dead[token] = (start, body.match(text, start).end())  # type: ignore[union-attr]
                    pos = start + 1
        budget.scan = steps
        answer = UNREAD if self.gave_up else -1
        if runs:
            self.unclosed.append(([run[0] for run in runs], [run[1] for run in runs], answer))
            if not self.gave_up:
                pos = len(text)
        self.region = (open_pos, pos)
        return table.get(open_pos, answer)


# ---------------------------------------------------------------------------------------------
# binding calls to tools: the one place the family consults the toolset

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


def parameter_order(tool: Tool | None) -> list[str]:
    """The tool's parameter names in declaration order (where positional arguments go)."""
    if tool is None:
        return []
    return [p.name for p in tool.parameters.properties]


def bind(call: CallSyntax, tool: Tool | None, notes: list[str], name: str | None = None) -> dict[str, Any]:
    """The call's arguments as a mapping: keywords by name; positional values by the tool's
    parameter order (``_pos0``, ``_pos1``, … when there is no tool, no parameter left or the
    parameter is also given by keyword).  A repeated keyword keeps its last value (noted, with
    ``name`` or the call's own).

    >>> bind(CallSyntax("f", [(None, "Acme"), ("term_months", 12)]), None, [])
    {'_pos0': 'Acme', 'term_months': 12}
    """
    name = call.name if name is None else name
    order = parameter_order(tool) if any(k is None for k, _ in call.items) else []
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


#: the rest of a word that a bounded slice cut, and a run of white space
_WORD_REST = re.compile(r"\S*+")
_SPACE_RUN = re.compile(r"\s*+")


def outside(text: str, spans: Iterable[tuple[int, int]], between: Pattern[str] = BLANK, start: int = 0,
            end: int | None = None, keep: int = 256) -> str:
    r"""What ``text[start:end]`` holds outside ``spans`` (sorted, disjoint), each run of white space
    one space, its first words only once they pass ``keep`` characters (it is quoted in a note, a
    few dozen characters); empty when each stretch between them is only what ``between`` matches.

    A word ends where a span begins.  The words are split and joined in C, from slices bounded
    by what is still wanted (a megabyte of prose is not split into words), and the text cut at
    the first space from ``keep`` on: the words up to the one that takes the length past it.

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
    words: list[str] = []
    length = -1  # of the words joined by single spaces
    for first, last in gaps:
        pos = first
        while pos < last and length <= keep:
            cut = min(last, pos + keep - length + 1)  # room for what is still wanted, and a space
            piece = text[pos:cut].split()
            if not piece:  # white space only: pass over the rest of it at once
                pos = _SPACE_RUN.match(text, cut, last).end()  # type: ignore[union-attr]  # matches anywhere
                continue
            if cut < last and not text[cut - 1].isspace():  # the slice cut a word: read it whole
                rest = _WORD_REST.match(text, cut, last)
                piece[-1] += rest.group()  # type: ignore[union-attr]  # matches anywhere
                cut = rest.end()  # type: ignore[union-attr]
            words += piece
            length += sum(map(len, piece)) + len(piece)
            pos = cut
        if length > keep:
            break
    joined = " ".join(words)
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
    """How one kind of candidate is found and read: the hooks of :func:`scan`.

    A format subclasses it: :meth:`heads` says where candidates start, :meth:`read_at` is the
    fast reader (the calls of a well-formed candidate and where it ends, found without bracket
    matching; ``None`` for anything else), :meth:`read_slow` reads what it declined (by default
    the grammar, within the reply's budget; a :class:`GrammarFailure` says where it stops).
    :meth:`recover` is the last resort for what the grammar refused (by default none).
    The class attributes say how a candidate that cannot be read is taken.
    """

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

    def heads(self, text: str, start: int, end: int) -> "Heads | CallHeads":
        """Where the candidates of ``text[start:end]`` start."""
        raise NotImplementedError

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        """The fast reader: the calls of the candidate at ``begin`` and where it ends, or ``None``."""
        return None

    def stop_after(self, text: str, close: int, end: int) -> int:
        """Where a candidate whose brackets close at ``close`` ends (a statement's ``;``, say)."""
        return close

    def read_slow(self, text: str, begin: int, stop: int, closed: bool, budget: Budget) -> list[CallSyntax]:
        """The calls of ``text[begin:stop]`` (``closed``: its brackets close there), read by the grammar."""
        return grammar_read(self.grammar, self.transformer(), text, budget, (begin, stop))

    def recover(self, text: str, begin: int, closed_at: int | None, end: int, budget: Budget,
                notes: list[str]) -> tuple[list[CallSyntax], int] | None:
        """The last resort, once :meth:`read_slow` failed on the candidate at ``begin``
        (``closed_at``: where its brackets close, ``None`` if they never do): its calls, each
        noting what was taken leniently, and where it ends; ``None`` (the default: no such reader)
        leaves the failure standing.  ``notes``: the reply's, for a limit reached."""
        return None

    def where(self, begin: int) -> str:
        """The candidate at ``begin``, in a note."""
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


def scan(reader: Reader, text: str, budget: Budget, notes: list[str], tools: Toolset | None = None, *,
         start: int = 0, end: int | None = None, gate: bool = False) -> Scan:
    """The candidates of ``text[start:end]`` (where ``reader.heads`` says), each read once.

    A candidate is read by ``reader.read_at``, which needs no bracket matching; only when that
    declines are its brackets matched (one :class:`Closer` for the whole text: it is scanned
    once, however many candidates ask) and ``reader.read_slow`` reads it; what that refuses
    goes to ``reader.recover``, the last resort.  ``gate``: with
    ``tools``, a candidate whose name no tool has is passed over, unread (prose is full of
    ``word(...)``).  ``budget`` bounds the heads and candidates looked at; past it, a note says so.

    >>> found = scan(PythonCalls(), "Use f(a=1), then g(x=[1, 2]).", Budget(), [])
    >>> [(c.name, c.items) for c in found.calls], found.spans
    ([('f', [('a', 1)]), ('g', [('x', [1, 2])])], [(4, 10), (17, 28)])
    """
    end = len(text) if end is None else end
    found = Scan()
    heads = reader.heads(text, start, end)
    closer: Closer | None = None
    covered = start
    nameless = 0
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
            if len(found.skipped) < 5 and name not in found.skipped:
                found.skipped.append(name)
            continue
        budget.candidates -= 1
        read = reader.read_at(text, begin, open_pos, end)
        if read is None:
            if closer is None:
                closer = Closer(text, reader.quoting, budget)
            close = closer.close(open_pos)
            if close == UNREAD:  # as for a candidate that never closes
                found.failures.append((name, f"{reader.where(begin)} could not be read: {SCAN_SPENT}"))
                if reader.gives_up:
                    break
                continue
            closed = 0 <= close <= end
            stop = reader.stop_after(text, close, end) if closed else end
            try:
                calls = reader.read_slow(text, begin, stop, closed, budget)
            except GrammarFailure as err:
                recovered = reader.recover(text, begin, stop if closed else None, end, budget, notes)
                if recovered is None:
                    found.failures.append((name, f"{reader.where(begin)} could not be read: {err.describe()}"))
                    if reader.gives_up and not closed:
                        break
                    if not reader.look_inside:
                        covered = stop
                        heads.skip_to(stop)
                    continue
                calls, stop = recovered
        else:
            calls, stop = read
        for call in calls:
            if call.span is None:
                call.span = (begin, stop)
        found.calls.extend(calls)
        found.spans.append((begin, stop))
        covered = stop
        heads.skip_to(stop)
    return found


class CodeFamily(Protocol):
    """A protocol of the code family: a reply (without a code fence around it) read by
    :func:`scan` with the format's :attr:`reader`, its calls bound to their tools (:meth:`finish`).

    Where a reply may be nothing but calls (:meth:`alone`), every call in it counts whatever its
    name; once it proves to hold running text, only names of the toolset's tools do (the reader's
    heads that name something).  Compliant: calls, nothing but :attr:`between` around them, no
    candidate that could not be read, no bare word read as text.
    """

    closes_calls = True

    reader: Reader
    #: what may stand between (and around) the calls of a reply that keeps to the format
    between: Pattern[str] = BLANK
    #: the leftover note's words for what was read
    read_what = "the calls"

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        body, offset, _ = strip_code_fence(text)
        budget = Budget(limits)
        notes: list[str] = []
        found = self.read_candidates(self.reader, body, tools, budget, notes)
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
                        start: int = 0, end: int | None = None, *, note_failures: bool = True) -> Scan:
        """:func:`scan` of ``text[start:end]``, then what counts: a reply that proved to hold running
        text keeps only calls to known tools; the names passed over are noted, and (with
        ``note_failures``) the candidates that could not be read."""
        end = len(text) if end is None else end
        alone = self.alone(text, start, end)
        found = scan(reader, text, budget, notes, tools, start=start, end=end, gate=not alone)
        found.rest = outside(text, found.spans, self.between, start, end)
        if not alone or found.rest or found.failures or any(c.lenient for c in found.calls):
            self._in_prose(found, tools, alone, text, start, end)
        if found.failures and note_failures:
            if reader.every_failure:
                notes.extend(note for _, note in found.failures)
            else:
                notes.append(found.failures[0][1])
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
            if len(found.skipped) < 5 and name not in found.skipped:
                found.skipped.append(name)
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
        written; positional values bound to the tool's parameters (:func:`resolve`, :func:`bind`);
        a dotted prefix the toolset does not know dropped."""
        calls = []
        for call in found:
            name, arguments, tool = call.name, call.arguments, None
            twice: tuple[str, ...] = ()
            if arguments is None:
                items = call.items
                arguments = dict(cast("list[tuple[str, Any]]", items))  # a None key is looked for next
                if None in arguments or len(arguments) != len(items):
                    arguments = None  # positional values, or a keyword given twice: bound below
                    twice = tuple(where((), key) for key in keys_twice(item for item in items if item[0] is not None))
            if arguments is None or "." in name:
                tool, name = resolve(name, tools)
                if name != call.name:
                    notes.append(f"read {call.name!r} as the tool {name!r}")
            for word in call.bare:
                notes.append(f"{name}: the bare word {word!r} was read as text")
            for note in call.notes:
                notes.append(f"{name}: {note}")
            if arguments is None:
                arguments = bind(call, tool, notes, name)
            span = call.span
            calls.append(RawCall(name, arguments, (span[0] + offset, span[1] + offset) if span else None, twice))
        return tuple(calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        raise NotImplementedError


def call_names(tools: Toolset | Iterable[Any] | None) -> list[str]:
    """Tool names for an instruction's example (``tool_name`` when none are known)."""
    if tools is None:
        return []
    names = []
    for tool in tools:
        name = getattr(tool, "name", None)
        if isinstance(name, str):
            names.append(name)
    return names


# ---------------------------------------------------------------------------------------------
# the Python-syntax protocols

#: what may stand between (and around) Python calls: white space, ";" and comments
PY_BETWEEN = re.compile(r"(?:[ \t\r\n;]++|#[^\r\n]*+)*+")


class PythonCalls(Reader):
    """Python calls ``name(...)`` in a text: the plain reader, else ``ast.parse``, else
    ``python_call``'s grammar (which reads calls outside any list, bracket or marker), else the
    last resort (:func:`recover_calls`)."""

    quoting = PY_QUOTING

    def heads(self, text: str, start: int, end: int) -> CallHeads:
        return CallHeads(text, start, end)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        read = plain_call_at(text, begin, open_pos, end)
        return None if read is None else ([read[0]], read[1])

    def read_slow(self, text: str, begin: int, stop: int, closed: bool, budget: Budget) -> list[CallSyntax]:
        if not closed:
            raise GrammarFailure(self.grammar, 1, stop - begin + 1, ("')'",), "the end of the text")
        candidate = text[begin:stop]
        calls = ast_calls(candidate, "call") if _may_be_python(candidate) and budget.ast(candidate) else None
        if calls is None:
            calls = grammar_read(self.grammar, PythonValues(), candidate, budget)
        if len(calls) != 1:
            return []
        calls[0].span = (begin, stop)
        return calls

    def recover(self, text: str, begin: int, closed_at: int | None, end: int, budget: Budget,
                notes: list[str]) -> tuple[list[CallSyntax], int] | None:
        return recover_calls(text, begin, end, budget, notes, "call", closed_at)


class PythonLists(Reader):
    """Bracketed lists of Python calls ``[f(...), g(...)]``: the plain reader, else ``ast.parse``,
    else the format's grammar, else the last resort (:func:`recover_calls`).  ``tail``: what may
    follow the calls before the ``]``."""

    quoting = PY_QUOTING
    unit = "bracketed calls"
    every_failure = gives_up = True

    def __init__(self, grammar: str, transformer: Callable[[], Transformer], tail: Pattern[str] | None = None) -> None:
        self.grammar, self.transformer, self.tail = grammar, transformer, tail

    def heads(self, text: str, start: int, end: int) -> Heads:
        return Heads(text, LIST_HEAD, start, end)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        return plain_list_at(text, begin, end, self.tail)

    def read_slow(self, text: str, begin: int, stop: int, closed: bool, budget: Budget) -> list[CallSyntax]:
        candidate = text[begin:stop]
        calls = ast_calls(candidate, "list") if _may_be_python(candidate) and budget.ast(candidate) else None
        if calls is None:
            calls = grammar_read(self.grammar, self.transformer(), candidate, budget)
        for call in calls:
            call.span = (begin + call.span[0], begin + call.span[1]) if call.span else (begin, stop)
        return calls

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

    def read_alone(self, body: str) -> list[CallSyntax] | None:
        """The calls of ``body`` (a reply without its code fence) when it holds them alone in the plain form,
        as :meth:`read` would find and read them; ``None`` when the full reading decides."""
        return None

    def raw_calls(self, text: str, tools: Toolset | None = None, *,
                  limits: Limits = DEFAULT_LIMITS) -> tuple[RawCall, ...]:
        """:meth:`parse`'s calls; a text that :meth:`read_alone` reads is read directly (what a model-native
        format hands a Python protocol is mostly that)."""
        try:
            body, offset, _ = strip_code_fence(text)
            found = self.read_alone(body)
            if found is not None:
                return self.finish(found, tools, [], offset)
        except Exception:  # noqa: BLE001 — (RecursionError too) the full reading, with its own guard, decides
            pass
        return super().raw_calls(text, tools, limits=limits)

    def read_lists(self, lists: PythonLists, body: str, tools: Toolset | None, budget: Budget,
                   notes: list[str]) -> Scan:
        """The bracketed lists of calls in ``body``; their calls' spans are the calls', the scan's
        spans the lists'."""
        found = scan(lists, body, budget, notes, tools)
        found.rest = outside(body, found.spans, self.between)
        notes.extend(note for _, note in found.failures)
        return found


# ---------------------------------------------------------------------------------------------
# writing Python literals

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def py_literal(value: Any, top: bool = True) -> str:
    """``value`` as a Python literal that reads back exactly.

    A top-level string is written with double quotes (JSON escapes are Python escapes);
    nested values as Python's ``repr``, except a string ``repr`` would escape, which is
    written as JSON writes it (the quick reader's form).  Infinity is ``1e999``; NaN has no literal and is
    written as the bare word ``nan`` (it reads back as text).

    >>> print(py_literal('Acme, "Ltd"'), py_literal({"a": [1, True, None], "b": "it's"}))
    "Acme, \\"Ltd\\"" {'a': [1, True, None], 'b': "it's"}
    """
    kind = type(value)
    if kind is str:
        if top:
            return json.dumps(value, ensure_ascii=False)
        plain = repr(value)  # Python's own form, as the reference nests them; JSON's when repr escapes
        return plain if "\\" not in plain else json.dumps(value, ensure_ascii=False)
    if value is None or kind is bool or kind is int:
        return repr(value)
    if kind is float:
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"
        if math.isnan(value):
            return "nan"
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k, False)}: {py_literal(v, False)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_literal(v, False) for v in value) + "]"
    if isinstance(value, str):
        return py_literal(str(value), top)
    if isinstance(value, bool):
        return repr(bool(value))
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        return py_literal(float(value), top)
    return py_literal(str(value), top)


def python_call_text(call: ToolCall) -> str:
    """``name(key=value, ...)`` for one call."""
    arguments = ", ".join(f"{key}={py_literal(value)}" for key, value in dict(call.arguments or {}).items())
    return f"{call.name}({arguments})"


__all__ = ["BLANK", "CALL_START", "CAPS", "LIST_HEAD", "PY_BETWEEN", "PY_QUOTING", "PY_STRING", "RECOVERY_NOTES",
           "RECOVERY_SPENT", "SCAN_SPENT", "UNREAD", "Budget", "CallHeads", "CallSyntax", "Closer", "CodeFamily", "Head",
           "Heads", "Items", "Literals", "Object", "Pair", "PythonCalls", "PythonFamily", "PythonLists", "PythonValues",
           "Quoting", "Reader", "Reject", "Scan", "ast_calls", "bind", "call_names", "caps", "decode_python_string",
           "fast_calls", "grammar_read", "json_number", "leftover_note", "match_close", "outside", "parameter_order",
           "plain_arguments", "plain_call_at", "plain_calls", "plain_list_at", "py_literal", "python_call_text",
           "recover_calls", "resolve", "scan", "to_number", "token_estimate", "transform"]
