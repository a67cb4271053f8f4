"""The code family's shared reader: calls written as code.

Five protocols write Python call syntax — ``python_call``, ``python_list_call``,
``bfcl_python_list``, ``python_tag`` and ``bracket_call`` — and share
``grammars/python_values.lark`` (calls and Python literals).  This module holds what they
share:

* :class:`CallSyntax`, a call as written (name, positional and keyword items, bare words);
* :class:`PythonValues`, the transformer of ``python_values.lark`` trees;
* the fast path :func:`fast_calls`, three readers tried in turn, each giving up (``None``)
  on anything outside its subset of the grammar:

  - :func:`json_calls` — one call whose keyword arguments JSON can say: rewritten as a
    JSON object for the C decoder;
  - :func:`quick_calls` — the plain form (keyword or positional literals, ``'...'`` and
    ``"..."`` strings, lists, dicts), one compiled pattern per token;
  - :func:`ast_calls` — ``ast.parse`` (which only parses, never evaluates) and a walk over
    the node types of the grammar's literal subset (``Call``, ``keyword``, ``Constant``,
    ``List``, ``Tuple``, ``Dict``, a sign on a number, dotted ``Name``s);

  and when all give up, the grammar reads the text (property tests check that every
  reader agrees with the grammar wherever it reads);
* locating candidates in a reply in linear time (:func:`call_heads`, :func:`literal_heads`,
  :class:`Closer`), binding positional arguments to the schema's parameter order
  (:func:`bind`), the Python literal writer (:func:`py_literal`), and :func:`guarded`, which
  makes a ``parse`` never raise and bounds what the (slow) grammar may read per reply.

``sql_call``, ``graphql_call`` and ``sexpr_call`` have grammars of their own; they reuse
the candidate location, binding and :class:`PythonFamily`'s note keeping from here.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
import unicodedata
import warnings
from contextvars import ContextVar
from typing import Any, Callable, Dict, Iterable, Iterator, List, Sequence, Tuple

from ..calls import ToolCall
from ..schema.ir import Tool
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, RawCall, internal_error
from ..grammar import GrammarFailure, Transformer, parse

#: how many candidate calls one reply may have read (each costs a parse)
MAX_ATTEMPTS = 64
#: candidates longer than this are not handed to the (slower) grammar
MAX_GRAMMAR_CHARS = 100_000
#: how many candidates may be looked at (name checks are cheap)
MAX_HEADS = 4096


#: the Transformer methods' types (their names — list, dict, tuple — hide the builtins in the class)
Items = List[Any]
Object = Dict[Any, Any]
Pair = Tuple[Any, Any]


class Reject(Exception):
    """A value outside the literal subset (the fast path gives up; the grammar path fails)."""


class CallSyntax:
    """A call as written: its name, its items (``(keyword or None, value)`` in order) and the
    bare words read as text (``unit=celsius``).  ``span`` is set by the locator."""

    __slots__ = ("name", "items", "bare", "span")

    def __init__(self, name: str, items: list[tuple[str | None, Any]], bare: list[str] | None = None,
                 span: tuple[int, int] | None = None) -> None:
        self.name, self.items, self.bare, self.span = name, items, bare or [], span

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CallSyntax) and (self.name, self.items, self.bare) ==
                (other.name, other.items, other.bare))

    def __repr__(self) -> str:
        return f"CallSyntax({self.name!r}, {self.items!r}, bare={self.bare!r})"


# ---------------------------------------------------------------------------------------------
# Python string literals

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

class _Bare(str):
    """A bare word standing for its own text (``unit=celsius``)."""


def _scalar_key(key: Any) -> Any:
    if isinstance(key, (list, dict)):
        raise Reject("a dict key that is a list or a dict")
    return key


class PythonValues(Transformer):
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

    def true(self, _: Items) -> bool:
        return True

    def false(self, _: Items) -> bool:
        return False

    def none(self, _: Items) -> None:
        return None

    def list(self, items: Items) -> Items:
        return list(items)

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


#: characters the grammar may still read for the reply being parsed (set by :func:`guarded`)
_GRAMMAR_BUDGET: ContextVar[list[int] | None] = ContextVar("code_family_grammar_budget", default=None)


def grammar_read(grammar: str, transformer: Transformer, text: str) -> Any:
    """Parse ``text`` with ``grammar`` and transform it (a :class:`GrammarFailure` when it cannot).

    The grammar is the slow path: one candidate may hand it at most
    :data:`MAX_GRAMMAR_CHARS` characters, one reply at most twice that in all.
    """
    budget = _GRAMMAR_BUDGET.get()
    if len(text) > MAX_GRAMMAR_CHARS or (budget is not None and budget[0] < len(text)):
        raise GrammarFailure(grammar, 1, 1, (), f"a candidate of {len(text)} characters (too long to read)")
    if budget is not None:
        budget[0] -= len(text)
    return transform(transformer, parse(grammar, text), grammar)


def guarded(method: Callable[..., Extraction]) -> Callable[..., Extraction]:
    """A protocol's ``parse``: never raises, gives the grammar its budget for the reply."""

    @functools.wraps(method)
    def parse(self: Protocol, text: str, tools: Toolset | None = None) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        token = _GRAMMAR_BUDGET.set([2 * MAX_GRAMMAR_CHARS])
        try:
            return method(self, text, tools)
        except Exception as err:  # never raise for a reply, whatever it holds
            return internal_error(self.info.id, err)
        finally:
            _GRAMMAR_BUDGET.reset(token)

    return parse


# ---------------------------------------------------------------------------------------------
# the fast path: ast.parse and a walk over the literal subset

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
        key = kw.arg if ascii_text else _source_name(text, kw).split("=", 1)[0]
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


def unique_pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A JSON object's pairs as a dict; a repeated key is refused (the slower path notes it)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a repeated key")
    return out


def fast_calls(text: str, shape: str) -> list[CallSyntax] | None:
    """The calls ``text`` holds, read without the grammar; ``None`` when it is outside the subset.

    ``shape``: ``"lines"`` (calls as statements, one a line or ``;``-separated),
    ``"call"`` (exactly one call) or ``"list"`` (a bracketed list of calls).  The quick
    reader (:func:`quick_calls`) takes the plain form; ``ast.parse`` (:func:`ast_calls`) the
    rest of Python's literal syntax.

    >>> fast_calls('f(1, a="x", b=[True, None], c=-2.5)', "call")
    [CallSyntax('f', [(None, 1), ('a', 'x'), ('b', [True, None]), ('c', -2.5)], bare=[])]
    >>> fast_calls('f(a=g(1))', "call") is None
    True
    """
    calls = json_calls(text, shape)
    if calls is not None:
        return calls
    calls = quick_calls(text, shape)
    if calls is not None:
        return calls
    # ast.parse is costly when it fails (a SyntaxError is built); do not ask it about prose
    return ast_calls(text, shape) if _may_be_python(text) else None


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
# the quick reader: the plain form, one compiled pattern per token, JSON's C decoder for
# double-quoted strings (only where JSON and Python agree on the escapes)

def _no_constant(name: str) -> Any:
    raise ValueError(name)


_JSON = json.JSONDecoder(parse_constant=_no_constant)
_WS_PATTERN = re.compile(r"[ \t\r\n]*+")
#: the pattern matches everywhere (maybe empty): typed so, to spare a None test per token
_WS: Any = _WS_PATTERN
_Q_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+")
_Q_KEYWORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*+)[ \t\r\n]*+=(?!=)[ \t\r\n]*+")
_Q_NUMBER = re.compile(r"[+-]?(?:\d++\.?\d*+|\.\d++)(?:[eE][+-]?\d++)?(?![\w.])")
_Q_SINGLE = re.compile(r"'([^'\\\r\n]*+)'")
#: the escapes on which JSON and Python agree (not \/, not a surrogate \u)
_Q_SAME_ESCAPE = re.compile(r"\\[\\\"nrtbf]|\\u(?![dD][89a-fA-F])")
_Q_WORDS: dict[str, Any] = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
_Q_DELIMITERS = frozenset(",)]}: \t\r\n")


class _Quick:
    """Reads the plain form of Python calls; :class:`Reject` for anything else."""

    __slots__ = ("text", "n", "bare")

    def __init__(self, text: str) -> None:
        self.text, self.n = text, len(text)
        self.bare: list[str] = []

    def value(self, pos: int, word_ok: bool) -> tuple[Any, int]:
        text = self.text
        c = text[pos] if pos < self.n else ""
        if c == '"':
            if text.startswith('"""', pos):
                raise Reject
            value, end = _JSON.raw_decode(text, pos)
            if "\\" in text[pos:end] and "\\" in _Q_SAME_ESCAPE.sub("", text[pos:end]):
                raise Reject
        elif c == "'":
            m = _Q_SINGLE.match(text, pos)
            if m is None:
                raise Reject
            value, end = m.group(1), m.end()
        elif c == "[":
            value, end = [], _WS.match(text, pos + 1).end()
            while text[end:end + 1] != "]":
                item, end = self.value(end, False)
                value.append(item)
                end = _WS.match(text, end).end()
                if text[end:end + 1] == ",":
                    end = _WS.match(text, end + 1).end()
                elif text[end:end + 1] != "]":
                    raise Reject
            end += 1
        elif c == "{":
            value, end = {}, _WS.match(text, pos + 1).end()
            while text[end:end + 1] != "}":
                key, end = self.value(end, False)
                if isinstance(key, (list, dict)):
                    raise Reject
                end = _WS.match(text, end).end()
                if text[end:end + 1] != ":":
                    raise Reject
                item, end = self.value(_WS.match(text, end + 1).end(), False)
                value[key] = item
                end = _WS.match(text, end).end()
                if text[end:end + 1] == ",":
                    end = _WS.match(text, end + 1).end()
                elif text[end:end + 1] != "}":
                    raise Reject
            end += 1
        else:
            m = _Q_NUMBER.match(text, pos)
            if m is not None:
                token = m.group()
                value = float(token) if ("." in token or "e" in token or "E" in token) else int(token)
                end = m.end()
            else:
                m = _Q_NAME.match(text, pos)
                if m is None:
                    raise Reject
                word, end = m.group(), m.end()
                if word in _Q_WORDS:
                    value = _Q_WORDS[word]
                elif word_ok and "." not in word:
                    self.bare.append(word)
                    value = word
                else:
                    raise Reject
        if end < self.n and text[end] not in _Q_DELIMITERS:
            raise Reject
        return value, end

    def call(self, pos: int) -> tuple[CallSyntax, int]:
        text = self.text
        m = _Q_NAME.match(text, pos)
        if m is None or text[m.end():m.end() + 1] != "(":
            raise Reject
        name = m.group()
        end = _WS.match(text, m.end() + 1).end()
        items: list[tuple[str | None, Any]] = []
        self.bare = []
        while text[end:end + 1] != ")":
            k = _Q_KEYWORD.match(text, end)
            if k is not None:
                key = k.group(1)
                if key in _Q_WORDS:
                    raise Reject
                value, end = self.value(k.end(), True)
            else:
                key = None
                value, end = self.value(end, False)
            items.append((key, value))
            end = _WS.match(text, end).end()
            if text[end:end + 1] == ",":
                end = _WS.match(text, end + 1).end()
            elif text[end:end + 1] != ")":
                raise Reject
        return CallSyntax(name, items, self.bare), end + 1


# the JSON path: one call's keyword arguments rewritten as a JSON object, read by the C decoder
_J_HEAD = re.compile(r"[ \t\r\n]*+([A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+)[ \t]*+\(")
_J_TOKEN = re.compile(r'("(?:[^"\\\r\n]|\\.)*+")|\'([^\'\\\r\n"]*+)\'|(-?\d++(?:\.\d++)?(?:[eE][+-]?\d++)?)(?![\w.])'
                      r"|([A-Za-z_][A-Za-z0-9_]*+)(?:[ \t\r\n]*+(=)(?!=))?")
_J_WORDS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_J_DECODER = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=unique_pairs)


class _NotJson(Exception):
    pass


def _json_token(m: re.Match[str]) -> str:
    double, single, number, word, equals = m.groups()
    if double is not None:
        if "\\" in double and "\\" in _Q_SAME_ESCAPE.sub("", double):
            raise _NotJson
        return double
    if single is not None:
        return '"' + single + '"'
    if number is not None:
        return number
    if equals:
        if word in _J_WORDS:
            raise _NotJson
        return '"' + word + '":'
    json_word = _J_WORDS.get(word)
    if json_word is None:
        raise _NotJson  # a bare word, a positional name: the other readers decide
    return json_word


def json_calls(text: str, shape: str) -> list[CallSyntax] | None:
    """One call ``name(key=value, ...)`` whose values JSON can say (``'...'`` strings without
    escapes, ``True``/``None``, numbers JSON writes), read by rewriting its arguments as a JSON
    object for the C decoder; ``None`` for anything else (the quick reader decides).

    >>> json_calls("f(a='x', b={'k': [1, None]}, c=True)", "call")
    [CallSyntax('f', [('a', 'x'), ('b', {'k': [1, None]}), ('c', True)], bare=[])]
    """
    if shape == "list":
        inner = text.strip()
        if not (inner.startswith("[") and inner.endswith(")]")):
            return None
        base = text.find("[") + 1
        end = text.rfind("]")
    else:
        base, end = 0, len(text)
    head = _J_HEAD.match(text, base)
    if head is None:
        return None
    close = text.rfind(")", 0, end)
    if close < head.end() or text[close + 1:end].strip():
        return None
    try:
        arguments = _J_DECODER.decode("{" + _J_TOKEN.sub(_json_token, text[head.end():close]) + "}")
    except (_NotJson, ValueError, RecursionError):
        return None
    call = CallSyntax(head.group(1), list(arguments.items()))
    call.span = (head.start(1), close + 1) if shape == "list" else (0, len(text))
    return [call]


def quick_call_at(text: str, pos: int, end: int) -> tuple[CallSyntax, int] | None:
    """The plain-form call starting at ``pos`` and ending by ``end`` (span set), or ``None``."""
    try:
        call, stop = _Quick(text).call(pos)
    except (Reject, ValueError, IndexError, RecursionError):
        return None
    if stop > end:
        return None
    call.span = (pos, stop)
    return call, stop


def quick_list_at(text: str, pos: int) -> tuple[list[CallSyntax], int] | None:
    """The plain-form list of calls ``[f(...), g(...)]`` starting at ``pos`` (spans set) and
    where it ends, or ``None``."""
    reader = _Quick(text)
    calls: list[CallSyntax] = []
    try:
        end = _WS.match(text, pos + 1).end()
        while not text.startswith("]", end):
            call, stop = reader.call(end)
            call.span = (end, stop)
            calls.append(call)
            end = _WS.match(text, stop).end()
            if text.startswith(",", end):
                end = _WS.match(text, end + 1).end()
            elif not text.startswith("]", end):
                return None
    except (Reject, ValueError, IndexError, RecursionError):
        return None
    return calls, end + 1


_Q_SEPARATOR: Any = re.compile(r"[ \t\r\n;]*+")  # matches everywhere


def quick_calls(text: str, shape: str) -> list[CallSyntax] | None:
    """The calls of ``text`` in the plain form (``name(key=value, ...)`` with JSON-like
    literals and Python's ``'...'``, ``True``/``None``), spans set; ``None`` otherwise.

    >>> quick_calls("f(a='x', b={'k': [1, -2.5e3, None]}, c=true)", "call")
    [CallSyntax('f', [('a', 'x'), ('b', {'k': [1, -2500.0, None]}), ('c', True)], bare=[])]
    """
    reader = _Quick(text)
    calls: list[CallSyntax] = []
    try:
        pos = _WS.match(text).end()
        if shape == "list":
            if text[pos:pos + 1] != "[":
                return None
            pos = _WS.match(text, pos + 1).end()
            while text[pos:pos + 1] != "]":
                call, end = reader.call(pos)
                call.span = (pos, end)
                calls.append(call)
                pos = _WS.match(text, end).end()
                if text[pos:pos + 1] == ",":
                    pos = _WS.match(text, pos + 1).end()
                elif text[pos:pos + 1] != "]":
                    return None
            pos = _WS.match(text, pos + 1).end()
        else:
            while pos < len(text):
                call, end = reader.call(pos)
                call.span = (pos, end)
                calls.append(call)
                if shape == "call":
                    pos = _WS.match(text, end).end()
                    break
                separator = _Q_SEPARATOR.match(text, end)
                pos = separator.end()
                if pos < len(text) and separator.group().strip(" \t") == "":
                    return None  # two calls on one line without a ";" between them
        if pos != len(text) or not calls and shape != "list":
            return None
    except (Reject, ValueError, IndexError, RecursionError):
        return None
    if len(calls) == 1 and shape != "list":
        calls[0].span = (0, len(text))
    return calls


# ---------------------------------------------------------------------------------------------
# locating candidates

#: the start of a call: a name (not preceded by a name character) directly followed by "("
CALL_HEAD = re.compile(r"(?<![\w.\-])[^\W\d][\w.\-]*+\(")
#: a reply that starts like a call (the whole-reply fast path is worth trying)
CALL_START = re.compile(r"[^\W\d][\w.\-]*+[ \t]*+\(")
#: a "[" opening a list of calls
LIST_HEAD = re.compile(r"\[[ \t\r\n]*+(?=[^\W\d][\w.\-]*+\()")
#: a complete Python string literal (the prefix is not needed to find its end)
PY_STRING = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*+"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*+\'\'\'|'
                       r'"(?:[^"\\\r\n]|\\.)*+"|\'(?:[^\'\\\r\n]|\\.)*+\'', re.S)
_PY_STOPS = re.compile(r"[()\[\]{}\"']")


class literal_heads:  # noqa: N801  (used like a function: ``for m in literal_heads(...)``)
    """Matches of ``pattern`` at the places where one of ``needles`` occurs, in order.

    ``str.find`` jumps to the literal candidates (a C search), and the pattern is tried only
    there: much faster than a pattern searched at every position of a long reply.  With
    ``lowered`` (``text.lower()``), the needles are looked for case-insensitively.
    :meth:`skip_to` jumps past a candidate that was read, so its inside is not searched.
    """

    __slots__ = ("text", "haystack", "needles", "pattern", "end", "start", "nexts", "fallback")

    def __init__(self, text: str, needles: Sequence[str], pattern: re.Pattern[str], start: int = 0,
                 end: int | None = None, lowered: str | None = None) -> None:
        self.text, self.needles, self.pattern = text, needles, pattern
        self.end = len(text) if end is None else end
        self.start = start
        self.fallback: Iterator[re.Match[str]] | None = None
        if lowered is not None and len(lowered) != len(text):  # lower-casing moved characters ("İ")
            self.fallback = pattern.finditer(text, start, self.end)
        self.haystack = text if lowered is None else lowered
        self.nexts = [-2] * len(needles)

    def __iter__(self) -> "literal_heads":
        return self

    def skip_to(self, pos: int) -> None:
        self.start = max(self.start, pos)

    def __next__(self) -> re.Match[str]:
        if self.fallback is not None:
            for later in self.fallback:
                if later.start() >= self.start:
                    return later
            raise StopIteration
        haystack, end, nexts = self.haystack, self.end, self.nexts
        while True:
            for k, p in enumerate(nexts):
                if -1 < p < self.start or p == -2:
                    nexts[k] = haystack.find(self.needles[k], self.start, end)
            found = [p for p in nexts if p >= 0]
            if not found:
                raise StopIteration
            pos = min(found)
            self.start = pos + 1
            head = self.pattern.match(self.text, pos, end)
            if head is not None:
                return head


def call_heads(text: str, start: int = 0, end: int | None = None) -> Iterable[tuple[int, int]]:
    """``(begin, open)`` of each ``name(`` in ``text``: a name (letters, digits, ``_``, inner
    ``.`` and ``-``, not starting with a digit) directly before a ``(``.  Jumps from one ``(``
    to the next and looks back over the name."""
    end = len(text) if end is None else end
    pos = text.find("(", start, end)
    while pos >= 0:
        begin = pos
        while begin > start and (text[begin - 1].isalnum() or text[begin - 1] in "_.-"):
            begin -= 1
        if begin > start and (text[begin - 1].isalnum() or text[begin - 1] in "_.-"):
            begin = -1
        while 0 <= begin < pos and text[begin] in ".-":
            begin += 1
        if 0 <= begin < pos and (text[begin].isalpha() or text[begin] == "_"):
            yield begin, pos
        pos = text.find("(", pos + 1, end)


def match_close(text: str, open_pos: int, string: re.Pattern[str] = PY_STRING,
                stops: re.Pattern[str] = _PY_STOPS) -> int:
    """The index just past the bracket that closes the one at ``open_pos`` (-1 if it never closes).

    Brackets inside string literals do not count; a quote that opens no complete string
    is an apostrophe in prose and is skipped.  One pass from ``open_pos``.

    >>> match_close('f(a=")", b=[1, (2)]) tail', 1)
    20
    """
    return Closer(text, string, stops).close(open_pos)


class Closer:
    """Where each bracket of a text closes, found lazily in one pass over the text.

    The first question about a bracket scans from it to its close (or the end of the
    text) and records every bracket met on the way; questions about those are answered
    from the record.  So however many candidates a reply has, its text is scanned once.
    """

    __slots__ = ("text", "string", "stops", "region", "table")

    def __init__(self, text: str, string: re.Pattern[str] = PY_STRING, stops: re.Pattern[str] = _PY_STOPS) -> None:
        self.text, self.string, self.stops = text, string, stops
        self.region = (0, 0)
        self.table: dict[int, int] = {}

    def close(self, open_pos: int) -> int:
        """Just past the bracket closing the one at ``open_pos``; -1 if it never closes (or
        ``open_pos`` lay inside a string of an earlier scan)."""
        known = self.table.get(open_pos)
        if known is not None:
            return known
        if self.region[0] <= open_pos < self.region[1]:
            return -1
        text, table = self.text, self.table
        stack: list[int] = []
        pos = open_pos
        search, string = self.stops.search, self.string.match
        while True:
            m = search(text, pos)
            if m is None:
                break
            pos = m.start()
            c = text[pos]
            if c in "([{":
                stack.append(pos)
                pos += 1
            elif c in ")]}":
                pos += 1
                if stack:
                    table[stack.pop()] = pos
                    if not stack:
                        break
            else:
                s = string(text, pos)
                pos = s.end() if s is not None else pos + 1
        if stack:
            pos = len(text)
            for unclosed in stack:
                table[unclosed] = -1
        self.region = (open_pos, pos)
        return table.get(open_pos, -1)


def resolve(name: str, tools: Toolset | None) -> tuple[Tool | None, str]:
    """The tool ``name`` stands for, and the name to report: a dotted prefix the toolset does
    not know (``functions.get_weather``) is dropped when the rest names a tool."""
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


def bind(call: CallSyntax, tool: Tool | None, notes: list[str]) -> dict[str, Any]:
    """The call's arguments as a mapping: keywords by name; positional values by the tool's
    parameter order (``_pos0``, ``_pos1``, … when there is no tool, no parameter left or the
    parameter is also given by keyword).  A repeated keyword keeps its last value (noted).

    >>> bind(CallSyntax("f", [(None, "Acme"), ("term_months", 12)]), None, [])
    {'_pos0': 'Acme', 'term_months': 12}
    """
    if all(k is not None for k, _ in call.items):
        arguments: dict[str, Any] = {}
        for key, value in call.items:
            if key in arguments:
                notes.append(f"{call.name}: the argument {key!r} is given twice; the last value is kept")
            arguments[key] = value  # type: ignore[index]
        return arguments
    order = parameter_order(tool)
    named = {k for k, _ in call.items if k is not None}
    arguments = {}
    index = 0
    for key, value in call.items:
        if key is None:
            target = order[index] if index < len(order) else None
            if target is None or target in named or target in arguments:
                target = f"_pos{index}"
                if tool is not None:
                    notes.append(f"{call.name}: positional value {index + 1} has no parameter left to bind to")
            index += 1
            key = target
        elif key in arguments:
            notes.append(f"{call.name}: the argument {key!r} is given twice; the last value is kept")
        arguments[key] = value
    return arguments


def outside(text: str, spans: Iterable[tuple[int, int]], ignorable: str = " \t\r\n;") -> str:
    """What ``text`` holds outside ``spans`` (sorted, disjoint); empty when that is only
    ``ignorable`` characters.

    >>> outside("f(); x g()", [(0, 3), (7, 10)]), outside("f(); g()", [(0, 3), (5, 8)])
    ('; x', '')
    """
    parts = []
    pos = 0
    for start, end in spans:
        parts.append(text[pos:start])
        pos = max(pos, end)
    parts.append(text[pos:])
    rest = "".join(parts)
    return rest.strip() if rest.strip(ignorable) else ""


def leftover_note(rest: str, what: str = "the calls") -> str:
    shown = " ".join(rest.split())
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"text outside {what} was ignored: {shown!r}"


def strip_fence(text: str) -> tuple[str, int]:
    """``text`` without one Markdown code fence around all of it, and where that body starts."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        inner = stripped[3:-3]
        newline = inner.find("\n")
        if newline >= 0:
            first = inner[:newline].strip()
            if not first or first.replace("-", "").replace("+", "").isalnum():
                inner = inner[newline + 1:]
        body = inner.strip()
    else:
        body = stripped
    return body, (text.find(body) if body else 0)


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


# ---------------------------------------------------------------------------------------------
# the protocols' shared machinery

class PythonFamily(Protocol):
    """What the Python-syntax protocols share: reading one candidate (fast path, then the
    grammar), finding bare calls in prose, binding them to tools, keeping notes."""

    grammar = "python_call"
    transformer: Callable[[], Transformer] = PythonValues

    def read(self, text: str, shape: str, grammar: str | None = None) -> list[CallSyntax]:
        """The calls in one candidate: the fast path, else the grammar (may raise GrammarFailure)."""
        calls = fast_calls(text, shape)
        if calls is not None:
            return calls
        name = grammar or self.grammar
        result = grammar_read(name, self.transformer(), text)
        return result if isinstance(result, list) else [result]

    def read_call(self, text: str) -> list[CallSyntax]:
        """One bare call ``name(...)`` (the fast path, then ``python_call``'s grammar, which reads
        calls outside any list, bracket or marker)."""
        calls = fast_calls(text, "call")
        if calls is not None:
            return calls
        result = grammar_read("python_call", PythonValues(), text)
        return result if isinstance(result, list) else [result]

    def finish(self, found: list[CallSyntax], tools: Toolset | None, notes: list[str],
               offset: int = 0) -> list[RawCall]:
        """Bind the found calls to their tools: :class:`RawCall` objects, spans shifted by ``offset``."""
        calls = []
        for call in found:
            tool, name = resolve(call.name, tools)
            if name != call.name:
                notes.append(f"read {call.name!r} as the tool {name!r}")
                call = CallSyntax(name, call.items, call.bare, call.span)
            for word in call.bare:
                notes.append(f"{call.name}: the bare word {word!r} was read as text")
            span = (call.span[0] + offset, call.span[1] + offset) if call.span else None
            calls.append(RawCall(call.name, bind(call, tool, notes), span))
        return calls

    def prose_calls(self, text: str, tools: Toolset | None, notes: list[str], *, start: int = 0,
                    end: int | None = None, budget: list[int] | None = None) -> list[CallSyntax]:
        """Bare calls ``name(...)`` in running text (each with its span).

        A candidate must read completely as a call; with a toolset, only names of its tools
        count (prose is full of ``word(...)``).  A call nested in another candidate is found
        when the outer one is not a call (``print(f(a=1))``).  Linear: each candidate is read
        once, and at most :data:`MAX_ATTEMPTS` of them.
        """
        end = len(text) if end is None else end
        budget = budget if budget is not None else [MAX_ATTEMPTS]
        closer = Closer(text)
        found: list[CallSyntax] = []
        covered = -1
        failure: str | None = None
        skipped: list[str] = []
        heads = 0
        for begin, open_pos in call_heads(text, start, end):
            heads += 1
            if heads > MAX_HEADS or budget[0] <= 0:
                notes.append("stopped looking for calls: too many candidates")
                break
            if begin < covered:
                continue
            name = text[begin:open_pos].strip(".-")
            if tools is not None and resolve(name, tools)[0] is None:
                if len(skipped) < 5 and name not in skipped:
                    skipped.append(name)
                continue
            budget[0] -= 1
            quick = quick_call_at(text, begin, end)
            if quick is not None:  # the plain form needs no bracket matching
                found.append(quick[0])
                covered = quick[1]
                continue
            close = closer.close(open_pos)
            stop = close if 0 <= close <= end else end
            candidate = text[begin:stop]
            try:
                calls = self.read_call(candidate) if close >= 0 else None
                if calls is None:
                    raise GrammarFailure("python_call", 1, len(candidate) + 1, ("')'",), "the end of the text")
            except GrammarFailure as err:
                if failure is None:
                    failure = f"the call at character {begin} could not be read: {err.describe()}"
                continue
            if len(calls) != 1:
                continue
            calls[0].span = (begin, stop)
            found.append(calls[0])
            covered = stop
        if failure:
            notes.append(failure)
        if not found and skipped:
            notes.append("no call to a known tool; ignored: " + ", ".join(f"{s}(...)" for s in skipped))
        return found

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


def render_lines(calls: Sequence[ToolCall], one: Callable[[ToolCall], str]) -> str:
    return "\n".join(one(c) for c in calls)


def list_candidates(protocol: PythonFamily, body: str, notes: list[str], shape: str = "list",
                    budget: list[int] | None = None) -> tuple[list[list[CallSyntax]], list[tuple[int, int]], bool]:
    """The bracketed lists of calls in ``body``: the calls of each list read, their spans, and
    whether some bracketed candidate could not be read (its note added)."""
    budget = budget if budget is not None else [MAX_ATTEMPTS]
    lists: list[list[CallSyntax]] = []
    spans: list[tuple[int, int]] = []
    failed = False
    covered = -1
    closer = Closer(body)
    heads = literal_heads(body, "[", LIST_HEAD)
    for m in heads:
        start = m.start()
        if start < covered:
            continue
        if budget[0] <= 0:
            notes.append("stopped looking for calls: too many candidates")
            break
        budget[0] -= 1
        quick = quick_list_at(body, start) if shape == "list" else None
        if quick is not None and quick[0]:
            lists.append(quick[0])
            spans.append((start, quick[1]))
            covered = quick[1]
            heads.skip_to(covered)
            continue
        close = closer.close(start)
        stop = close if close >= 0 else len(body)
        candidate = body[start:stop]
        try:
            calls = protocol.read(candidate, shape)
        except GrammarFailure as err:
            where = "" if start == 0 else f" at character {start}"
            notes.append(f"the bracketed calls{where} could not be read: {err.describe()}")
            failed = True
            if close < 0:
                break
            continue
        for call in calls:
            call.span = (start + call.span[0], start + call.span[1]) if call.span else (start, stop)
        lists.append(calls)
        spans.append((start, stop))
        covered = stop
    return lists, spans, failed


__all__ = ["CALL_HEAD", "CALL_START", "LIST_HEAD", "MAX_ATTEMPTS", "PY_STRING", "CallSyntax", "Closer", "Items",
           "Object", "Pair", "PythonFamily", "PythonValues", "Reject", "ast_calls", "bind", "call_heads", "call_names",
           "decode_python_string", "fast_calls", "grammar_read", "guarded", "json_calls", "leftover_note",
           "list_candidates", "literal_heads", "match_close", "outside", "parameter_order", "py_literal", "python_call_text",
           "quick_call_at", "quick_calls", "quick_list_at", "resolve", "strip_fence", "to_number", "transform",
           "unique_pairs"]
