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
* locating candidates in a reply in linear time (:class:`Heads`, :func:`call_heads`,
  :class:`Closer`: compiled patterns searched once over the reply, brackets matched in one
  pass), binding positional arguments to the schema's parameter order (:func:`bind`), the
  Python literal writer (:func:`py_literal`), and :func:`guarded`, which makes a ``parse``
  never raise and gives it the :class:`Budget` of the reply (what reading it may cost, from
  :class:`~toolform_rules.limits.Limits`).

``sql_call``, ``graphql_call`` and ``sexpr_call`` have grammars of their own; they reuse
the candidate location, binding and :class:`PythonFamily`'s note keeping from here.

Linear and bounded: a reply is searched for candidates by compiled patterns (C loops), the
bracket matcher takes runs of brackets in one step and never reads a string twice, and
what is costly per token — ``ast.parse`` and the grammar — is handed at most
:class:`Budget`'s share of each reply (an estimate of its tokens); a candidate past it is
not read, and a note says so.
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
from typing import Any, Callable, Dict, Iterable, Iterator, List, Sequence, Tuple

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.ir import Tool
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, RawCall, internal_error
from ..grammar import GrammarFailure, Transformer, parse

class Budget:
    """What reading one reply may still cost: the caps of :class:`~toolform_rules.limits.Limits`,
    spent as the reply is read (:func:`guarded` makes one per reply and passes it down).

    * ``candidates``: candidate calls read (each costs a parse);
    * ``heads``: places that look like a call (a name check each);
    * ``scan``: steps of the bracket matcher (a run of brackets, or a quote);
    * ``ast_tokens`` / ``grammar_tokens``: the estimated tokens (:func:`token_estimate`)
      ``ast.parse`` and the grammar may still read — both cost per token, the grammar most;
    * ``grammar_chars``: the longest candidate the grammar reads at all;
    * ``segments``: marked segments read (``python_tag``'s ``<|python_tag|>``).

    The caps are the ``Limits`` fields of the same names (``max_candidates``, ...); a
    ``Limits`` without them (older) gives the defaults below.

    >>> Budget().candidates, Budget().grammar_chars
    (64, 100000)
    """

    __slots__ = ("candidates", "heads", "scan", "ast_tokens", "grammar_tokens", "grammar_chars", "segments")

    #: the default caps, for a ``Limits`` that does not name them
    DEFAULTS = {"max_candidates": 64, "max_call_heads": 4096, "max_scan_steps": 32_768,
                "max_ast_tokens": 65_536, "max_grammar_tokens": 16_384, "max_grammar_chars": 100_000,
                "max_segments": 256}

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        def cap(name: str) -> int:
            return int(getattr(limits, name, self.DEFAULTS[name]))

        self.candidates = cap("max_candidates")
        self.heads = cap("max_call_heads")
        self.scan = cap("max_scan_steps")
        self.ast_tokens = cap("max_ast_tokens")
        self.grammar_tokens = cap("max_grammar_tokens")
        self.grammar_chars = cap("max_grammar_chars")
        self.segments = cap("max_segments")

    def candidate(self) -> bool:
        """Spend one candidate; ``False`` when none is left."""
        if self.candidates <= 0:
            return False
        self.candidates -= 1
        return True

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
    """An upper estimate of the tokens ``text`` holds, as ``ast.parse`` and the grammar read it:
    its punctuation, quotes and white space (a long string literal with none of them is one
    token, and costs little).  One C pass (``str.translate``).

    >>> token_estimate('f(a=[1, 2], b="xyz")'), token_estimate('"' + 'x' * 1000 + '"')
    (12, 2)
    """
    return len(text) - len(text.translate(_SEPARATORS))


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


def grammar_read(grammar: str, transformer: Transformer, text: str, budget: Budget | None = None,
                 span: tuple[int, int] | None = None) -> Any:
    """Parse ``text`` (or ``text[span[0]:span[1]]``) with ``grammar`` and transform it (a
    :class:`GrammarFailure` when it cannot).

    The grammar is the slow path (its cost grows with the tokens read): a candidate longer
    than ``budget.grammar_chars``, or with more estimated tokens than the reply has left in
    ``budget.grammar_tokens``, is not handed to it, and the failure says so.  Without a
    ``budget``, the default caps for this one text.
    """
    budget = budget if budget is not None else Budget()
    size = len(text) if span is None else span[1] - span[0]
    if size > budget.grammar_chars:
        raise GrammarFailure(grammar, 1, 1, (), f"a candidate of {size} characters (too long to read)")
    if span is not None:
        text = text[span[0]:span[1]]
    cost = token_estimate(text) + 32  # and a parser run's own cost
    if cost > budget.grammar_tokens:
        raise GrammarFailure(grammar, 1, 1, (), f"a candidate of about {cost} tokens (past what one reply may have "
                                                "the grammar read)")
    budget.grammar_tokens -= cost
    return transform(transformer, parse(grammar, text), grammar)


def guarded(method: Callable[..., Extraction]) -> Callable[..., Extraction]:
    """A protocol's ``parse``: never raises; hands ``method`` the reply's :class:`Budget`
    (from ``limits=``) as its third argument."""

    @functools.wraps(method)
    def parse(self: Protocol, text: str, tools: Toolset | None = None, *,
              limits: Limits = DEFAULT_LIMITS) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        try:
            return method(self, text, tools, Budget(limits))
        except Exception as err:  # never raise for a reply, whatever it holds
            return internal_error(self.info.id, err)

    delattr(parse, "__wrapped__")  # its signature is the wrapper's: (text, tools=None, *, limits=...)
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


def fast_calls(text: str, shape: str, budget: Budget | None = None) -> list[CallSyntax] | None:
    """The calls ``text`` holds, read without the grammar; ``None`` when it is outside the subset.

    ``shape``: ``"lines"`` (calls as statements, one a line or ``;``-separated),
    ``"call"`` (exactly one call) or ``"list"`` (a bracketed list of calls).  The quick
    reader (:func:`quick_calls`) takes the plain form; ``ast.parse`` (:func:`ast_calls`) the
    rest of Python's literal syntax, when ``budget`` (the reply's; else the default caps)
    still covers ``text``'s tokens.

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
    # ast.parse is costly when it fails (a SyntaxError is built); do not ask it about prose,
    # and not about more tokens than the reply has left for it (it costs about 2 µs a token)
    if not _may_be_python(text) or not (budget if budget is not None else Budget()).ast(text):
        return None
    return ast_calls(text, shape)


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
#: a run of what JSON reads as it is (punctuation, white space, numbers, strings without a
#: backslash) is one match, so a long list costs one call of ``_json_token``, not one an item
_J_TOKEN = re.compile(r'((?:[ \t\r\n,:\[\]{}]++|-?\d++(?:\.\d++)?(?:[eE][+-]?\d++)?(?![\w.])|"[^"\\\r\n]*+")++)'
                      r'|("(?:[^"\\\r\n]++|\\.)*+")|\'([^\'\\\r\n"]*+)\''
                      r"|([A-Za-z_][A-Za-z0-9_]*+)(?:[ \t\r\n]*+(=)(?!=))?")
_J_WORDS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_J_DECODER = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=unique_pairs)


class _NotJson(Exception):
    pass


def _json_token(m: re.Match[str]) -> str:
    plain, double, single, word, equals = m.groups()
    if plain is not None:
        return plain
    if double is not None:
        if "\\" in double and "\\" in _Q_SAME_ESCAPE.sub("", double):
            raise _NotJson
        return double
    if single is not None:
        return '"' + single + '"'
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
PY_STRING = re.compile(r'"""(?:[^"\\]++|\\.|"(?!""))*+"""|\'\'\'(?:[^\'\\]++|\\.|\'(?!\'\'))*+\'\'\'|'
                       r'"(?:[^"\\\r\n]++|\\.)*+"|\'(?:[^\'\\\r\n]++|\\.)*+\'', re.S)
#: a "(" that may end a name (a C search for "(", then a look back): right after a name's first
#: character, or one more, or after three or more name characters — the rest is looked at in
#: Python; "9(", "-(" and such are passed over in C
_OPEN_AFTER_NAME = re.compile(r"\((?<=[\w.\-]\()(?:(?<=[^\W\d]\()|(?<=[^\W\d][\w.\-]\()|(?<=[\w.\-]{3}\())")
#: the last character of a window that is not a name character
_NAME_BREAK = re.compile(r"[^\w.\-](?=[\w.\-]*+\Z)")
#: a name (after any leading "." and "-") and its "(", from where its run of name characters starts
_NAME_AT = re.compile(r"[.\-]*+([^\W\d][\w.\-]*+)\(")


class Heads:
    """The matches of ``pattern`` in ``text[start:end]``, in order: each one C search from
    where the last match began (a pattern's lookarounds do the checking, so nothing is looked
    at twice in Python).  :meth:`skip_to` jumps past a candidate that was read.  ``first``,
    if given, is tried at ``start`` before the search (for a head that a pattern beginning with
    a literal cannot see there, such as a line's first character at the start of the text).

    A pattern should begin with a literal or a character class (not a lookbehind): Python's
    engine then jumps to the places it can match in a C loop, many times faster.
    """

    __slots__ = ("text", "pattern", "pos", "end", "first")

    def __init__(self, text: str, pattern: re.Pattern[str], start: int = 0, end: int | None = None,
                 first: re.Pattern[str] | None = None) -> None:
        self.text, self.pattern, self.pos, self.first = text, pattern, start, first
        self.end = len(text) if end is None else end

    def __iter__(self) -> "Heads":
        return self

    def skip_to(self, pos: int) -> None:
        self.pos = max(self.pos, pos)

    def __next__(self) -> re.Match[str]:
        if self.first is not None:
            m = self.first.match(self.text, self.pos, self.end)
            self.first = None
            if m is not None:
                self.pos = m.start() + 1
                return m
        m = self.pattern.search(self.text, self.pos, self.end)
        if m is None:
            raise StopIteration
        self.pos = m.start() + 1
        return m


def call_heads(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """``(begin, open)`` of each ``name(`` in ``text[start:end]``: a name (letters, digits, ``_``,
    inner ``.`` and ``-``, not starting with a digit; leading ``.`` and ``-`` not part of it)
    directly before a ``(``, the whole run of name characters before the ``(`` (from ``start``
    on) making it up.  A C search finds each ``(`` that follows a name character; the run's
    start is found by a C search back over windows doubling in size (so a name is read once).
    A ``(`` after name characters that make no name (``9(``) gives ``(-1, open)``, so that a
    caller can count what it looked at.

    >>> list(call_heads("x f(1) .g.h(2) 9k(3) (4) é(5)"))
    [(2, 3), (8, 11), (-1, 17), (25, 26)]
    """
    end = len(text) if end is None else end
    search, back, name_at = _OPEN_AFTER_NAME.search, _NAME_BREAK.search, _NAME_AT.match
    pos = start
    while True:
        m = search(text, pos, end)
        if m is None:
            return
        open_pos = pos = m.start()
        pos += 1
        if open_pos <= start:
            continue  # the name character before it lies before ``start``
        width = 16
        while True:
            low = max(start, open_pos - width)
            cut = back(text, low, open_pos)
            if cut is not None:
                run = cut.start() + 1
                break
            if low == start:
                run = start
                break
            width *= 2
        head = name_at(text, run, open_pos + 1)
        yield (head.start(1) if head is not None else -1), open_pos


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
SCAN_SPENT = "its brackets were not matched within what one reply may cost (Limits.max_scan_steps)"


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

    def read(self, text: str, shape: str, budget: Budget | None = None) -> list[CallSyntax]:  # type: ignore[override]  # until the code family's reader is the base's read() hook (issue 10)
        """The calls in one candidate: the fast path, else the grammar (may raise GrammarFailure)."""
        calls = fast_calls(text, shape, budget)
        if calls is not None:
            return calls
        result = grammar_read(self.grammar, self.transformer(), text, budget)
        return result if isinstance(result, list) else [result]

    def read_call(self, text: str, budget: Budget | None = None) -> list[CallSyntax]:
        """One bare call ``name(...)`` (the fast path, then ``python_call``'s grammar, which reads
        calls outside any list, bracket or marker)."""
        calls = fast_calls(text, "call", budget)
        if calls is not None:
            return calls
        result = grammar_read("python_call", PythonValues(), text, budget)
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

    def prose_calls(self, text: str, tools: Toolset | None, notes: list[str], budget: Budget, *, start: int = 0,
                    end: int | None = None) -> list[CallSyntax]:
        """Bare calls ``name(...)`` in ``text[start:end]``, running text (each with its span).

        A candidate must read completely as a call; with a toolset, only names of its tools
        count (prose is full of ``word(...)``).  A call nested in another candidate is found
        when the outer one is not a call (``print(f(a=1))``).  Linear: the heads are found by
        one search over the text, the brackets matched in one pass, each candidate read once;
        ``budget`` bounds how many heads and candidates are looked at.
        """
        end = len(text) if end is None else end
        closer = Closer(text, PY_QUOTING, budget)
        found: list[CallSyntax] = []
        covered = -1
        failure: str | None = None
        skipped: list[str] = []
        nameless = 0
        for begin, open_pos in call_heads(text, start, end):
            if budget.heads <= 0 or budget.candidates <= 0:
                notes.append("stopped looking for calls: too many candidates")
                break
            if begin < 0:  # "12(": cheap to pass over, yet not free
                nameless += 1
                if nameless % 4 == 0:
                    budget.heads -= 1
                continue
            budget.heads -= 1
            if begin < covered:
                continue
            name = text[begin:open_pos].strip(".-")
            if tools is not None and resolve(name, tools)[0] is None:
                if len(skipped) < 5 and name not in skipped:
                    skipped.append(name)
                continue
            budget.candidates -= 1
            quick = quick_call_at(text, begin, end)
            if quick is not None:  # the plain form needs no bracket matching
                found.append(quick[0])
                covered = quick[1]
                continue
            close = closer.close(open_pos)
            if close == UNREAD:  # as for a call that never closes: the calls after it are still looked for
                failure = failure or f"the call at character {begin} could not be read: {SCAN_SPENT}"
                continue
            stop = close if 0 <= close <= end else end
            candidate = text[begin:stop]
            try:
                calls = self.read_call(candidate, budget) if close >= 0 else None
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


def list_candidates(protocol: PythonFamily, body: str, notes: list[str], budget: Budget,
                    shape: str = "list") -> tuple[list[list[CallSyntax]], list[tuple[int, int]], bool]:
    """The bracketed lists of calls in ``body``: the calls of each list read, their spans, and
    whether some bracketed candidate could not be read (its note added)."""
    lists: list[list[CallSyntax]] = []
    spans: list[tuple[int, int]] = []
    failed = False
    covered = -1
    closer = Closer(body, PY_QUOTING, budget)
    heads = Heads(body, LIST_HEAD)
    for m in heads:
        start = m.start()
        if start < covered:
            continue
        if budget.candidates <= 0:
            notes.append("stopped looking for calls: too many candidates")
            break
        budget.candidates -= 1
        quick = quick_list_at(body, start) if shape == "list" else None
        if quick is not None and quick[0]:
            lists.append(quick[0])
            spans.append((start, quick[1]))
            covered = quick[1]
            heads.skip_to(covered)
            continue
        close = closer.close(start)
        if close == UNREAD:  # as for a list that never closes: what follows may lie inside it
            notes.append(f"the bracketed calls at character {start} could not be read: {SCAN_SPENT}")
            failed = True
            break
        stop = close if close >= 0 else len(body)
        candidate = body[start:stop]
        try:
            calls = protocol.read(candidate, shape, budget)
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
        heads.skip_to(covered)
    return lists, spans, failed


__all__ = ["CALL_HEAD", "CALL_START", "LIST_HEAD", "PY_QUOTING", "PY_STRING", "SCAN_SPENT", "UNREAD", "Budget",
           "CallSyntax", "Closer", "Heads", "Items", "Object", "Pair", "PythonFamily", "PythonValues", "Quoting",
           "Reject",
           "ast_calls", "bind", "call_heads", "call_names", "decode_python_string", "fast_calls", "grammar_read",
           "guarded", "json_calls", "leftover_note", "list_candidates", "match_close", "outside", "parameter_order",
           "py_literal", "python_call_text", "quick_call_at", "quick_calls", "quick_list_at", "resolve", "strip_fence",
           "to_number", "token_estimate", "transform", "unique_pairs"]
