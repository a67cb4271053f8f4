"""Shared value readers and writers: JSON as models write it, and Python literals.

``JsonValues`` turns a ``grammars/json_values.lark`` tree into Python values; protocols
whose grammar imports those rules reuse it (by subclassing or ``merge_transformers``).
``loads_lenient`` is the fast path: strict JSON through the C parser, the grammar only
when that fails — a property test checks that both agree on strict JSON.  ``lenient_json``
(and ``json_value``, strict JSON then it) reads JSON as models write it through the C parser.

``bracket_groups`` (``balanced_spans``) finds bracket groups in untrusted text, quote-aware,
in linear time at C speed (regular expressions without backtracking, ``str.count``,
``itertools.accumulate``; no loop of Python over characters).  ``GrammarBudget`` and
``strip_code_fence`` are :mod:`~toolform_rules.protocols.reading`'s, named here too for the
modules that import them from here.
"""

from __future__ import annotations

import array
import functools
import itertools
import json
import math
import re
from typing import Any, Callable, Iterator

from ..grammar import GrammarFailure, Transformer, parse
from .reading import GrammarBudget, strip_code_fence

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"', "'": "'",
            "0": "\0"}


def unquote(token: str) -> str:
    """The text of a quoted string token (either quote; JSON and Python escapes, ``\\uXXXX`` included).

    >>> unquote('"a\\\\"b"'), unquote("'it\\\\'s'"), unquote('"\\\\u00e9"')
    ('a"b', "it's", 'é')
    """
    body = token[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u" and i + 6 <= len(body):
            try:
                code = int(body[i + 2:i + 6], 16)
            except ValueError:
                out.append(nxt)
                i += 2
                continue
            i += 6
            if 0xD800 <= code < 0xDC00 and body[i:i + 2] == "\\u":  # a surrogate pair
                try:
                    low = int(body[i + 2:i + 6], 16)
                except ValueError:
                    low = 0
                if 0xDC00 <= low < 0xE000:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            out.append(chr(code))
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def number(text: str) -> int | float:
    """A number token as int (when it has no fraction or exponent) or float."""
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


class JsonValues(Transformer):
    """A ``json_values.lark`` tree → Python values (dict, list, str, int, float, bool, None)."""

    def object(self, pairs: list) -> dict:
        return dict(p for p in pairs if p is not None)

    def pair(self, items: list) -> tuple:
        return items[0], items[1]

    def array(self, items: list) -> list:
        return [item for item in items]

    def string(self, items: list) -> str:
        return unquote(str(items[0]))

    def number(self, items: list) -> int | float:
        return number(str(items[0]))

    def true(self, _: list) -> bool:
        return True

    def false(self, _: list) -> bool:
        return False

    def null(self, _: list) -> None:
        return None

    def start(self, items: list) -> Any:
        return items[0]


def loads_lenient(text: str, grammar: str = "json_object", *, max_grammar_bytes: int = 200_000) -> Any:
    """A JSON value as models write it: strict JSON through ``json``, else the grammar.

    Raises :class:`GrammarFailure` when neither reads it.  Text longer than
    ``max_grammar_bytes`` is given to the C parser only.

    >>> loads_lenient("{'a': True, 'b': [1, 2,],}")
    {'a': True, 'b': [1, 2]}
    """
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > max_grammar_bytes:
        raise GrammarFailure(grammar, 1, 1, (), f"text longer than {max_grammar_bytes} characters that is not "
                                                "strict JSON")
    tree = parse(grammar, text)
    try:
        return JsonValues().transform(tree)
    except Exception:  # a value the grammar reads but Python cannot hold (too deep, too long a number)
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply or too large") from None


#: How many bracket levels one regular expression follows: a group nested at most this deep
#: is found by one match; a deeper one is read in pieces (:func:`_group_end`).
_LEVELS = 8
#: What :func:`bracket_groups` yields: a top-level group; a group nested deeper than asked
#: (no reader takes it); a complete group inside that one.
GROUP, TOO_DEEP, INNER = 0, 1, 2


class Brackets:
    """The regular expressions that find the groups of one set of brackets, quote-aware, built once per set.

    Inside a group, a ``"`` starts a string, and so does a ``'`` that does not follow a
    letter or digit (an apostrophe in a word does not); a string ends at its own quote or
    at a newline, and a backslash in it escapes the next character.  Outside a group
    quotes mean nothing.  The alternatives of each pattern start with different characters
    and every repeat is possessive, so no pattern backtracks: a match is linear in what it
    reads.

    ``group[k]`` (``1 <= k <= _LEVELS``): one group nested at most ``k`` levels deep;
    ``tokens``: whole tokens (runs of brackets, strings that end, other text), stopping
    before a string that would run past the end;  ``skeleton``: a run of whole tokens that
    are not brackets (``re.sub`` removes them: the brackets outside strings are left);
    ``to_closer``/``to_opener``: whole tokens up to the next closing/opening bracket;
    ``deltas``/``others``: ``bytes.translate`` arguments that keep a text's brackets only, as
    +1 and -1;  :meth:`step` and :meth:`opener_step`: see there.
    """

    __slots__ = ("openers", "closers", "group", "tokens", "skeleton", "to_closer", "to_opener", "deltas", "others",
                 "_o", "_c", "_levels", "_token", "_nonplain", "_steps")

    def __init__(self, openers: str, closers: str) -> None:
        self.openers, self.closers = openers, closers
        o, c = self._o, self._c = re.escape(openers), re.escape(closers)
        plain = rf"""[^{o}{c}"']++"""
        double = r'"(?:[^"\\\n]++|\\[\s\S])*+'
        # a quote first in every alternative (``re`` then searches for one at C speed), what it follows after it
        single = r"'(?<![^\W_]')(?:[^'\\\n]++|\\[\s\S])*+"
        apostrophe = r"'(?<=[^\W_]')"
        # a string that reaches the end of the text without its quote ends there
        self._nonplain = rf"""{double}["\n]?|{single}['\n]?|{apostrophe}"""
        atom = rf"{plain}|{self._nonplain}"
        levels = [rf"(?:{atom})*+"]  # levels[k]: the inside of a group of at most k + 1 levels
        for _ in range(_LEVELS - 1):
            levels.append(rf"(?:[{o}]{levels[-1]}[{c}]|{atom})*+")
        self._levels = levels
        self.group = _GroupPatterns(o, c, levels)
        self._token = rf"""{plain}|{double}["\n]|{single}['\n]|{apostrophe}"""
        self.tokens = re.compile(rf"""(?:[^"']++|{double}["\n]|{single}['\n]|{apostrophe})*+""")
        self.skeleton = re.compile(rf"(?:{self._token})++")
        self.deltas = bytes.maketrans((openers + closers).encode(), b"\x01" * len(openers) + b"\xff" * len(closers))
        self.others = bytes(i for i in range(256) if chr(i) not in openers + closers)
        self.to_closer = re.compile(rf"""(?:[^{c}"']++|{self._nonplain})*+""")
        self.to_opener = re.compile(rf"""(?:[^{o}"']++|{self._nonplain})*+""")
        self._steps: dict[int, "re.Pattern[str]"] = {}

    def opener_step(self, power: int) -> "re.Pattern[str]":
        """Whole tokens up to and including the ``2 ** power``-th opening bracket (compiled on first use)."""
        pattern = self._steps.get(-1 - power)
        if pattern is None:
            pattern = self._steps[-1 - power] = re.compile(
                rf"""(?:(?:[^{self._o}"']++|{self._nonplain})*+[{self._o}]){{{1 << power}}}""")
        return pattern

    def step(self, power: int) -> "re.Pattern[str]":
        """Whole tokens up to and including the ``2 ** power``-th bracket (compiled on first use)."""
        pattern = self._steps.get(power)
        if pattern is None:
            pattern = self._steps[power] = re.compile(rf"(?:(?:{self._token})*+[{self._o}{self._c}]){{{1 << power}}}")
        return pattern


class _GroupPatterns(dict[int, "re.Pattern[str] | None"]):
    """``Brackets.group``: the pattern of a group of at most ``k`` levels, compiled when first asked for.

    Each costs about a millisecond to compile and a process often needs one of the eight
    (a reply's groups are read with the deepest); ``[0]`` is ``None``, no pattern.
    """

    __slots__ = ("_opener", "_closer", "_levels")

    def __init__(self, opener: str, closer: str, levels: list[str]) -> None:
        super().__init__({0: None})
        self._opener, self._closer, self._levels = opener, closer, levels

    def __missing__(self, k: int) -> "re.Pattern[str]":
        if not 0 < k <= len(self._levels):
            raise KeyError(k)
        pattern = self[k] = re.compile(rf"[{self._opener}]{self._levels[k - 1]}[{self._closer}]")
        return pattern


@functools.cache
def brackets(openers: str, closers: str) -> Brackets:
    """The :class:`Brackets` of ``openers``/``closers`` (compiled on first use, then kept)."""
    return Brackets(openers, closers)


@functools.cache
def _any_of(characters: str) -> "re.Pattern[str]":
    return re.compile(f"[{re.escape(characters)}]")


def group_end(text: str, begin: int, n: int, kind: Brackets, depth: int | None = None) -> tuple[int, bool, bool]:
    """Where the group opening at ``begin`` ends: (end, closed, nested deeper than ``depth``).

    A group of at most ``_LEVELS`` levels (most) is one match of ``kind.group``; any other is
    read by :func:`_group_end`.
    """
    fast = kind.group[_LEVELS if depth is None else max(0, min(_LEVELS, depth))]
    if fast is not None and any(text.find(ch, begin, n) >= 0 for ch in kind.closers):  # else it cannot close
        whole = fast.match(text, begin, n)
        if whole is not None:
            return whole.end(), True, False
    return _group_end(text, begin, n, kind, depth)


def _group_end(text: str, begin: int, n: int, kind: Brackets, depth: int | None) -> tuple[int, bool, bool]:
    """Where the group opening at ``begin`` ends, read in pieces (see :func:`group_end`).

    The group is read in pieces of doubling size, each cut where a token ends.  A piece's
    brackets outside strings are counted (``str.count``; when it has both brackets and quotes,
    after ``re.sub`` removed all else); only when those counts say the depth may reach zero,
    or pass ``depth``, in the piece are its running depths computed (``itertools.accumulate``
    over its brackets as +1/-1).  C speed throughout: a few calls of Python per piece.
    """
    level = 0
    at = begin
    deep = False
    size = 256
    openers, closers = kind.openers, kind.closers
    while at < n:
        limit = min(n, at + size)
        size *= 2
        if limit < n and text.find('"', at, limit) < 0 and text.find("'", at, limit) < 0:
            stop = limit  # no string to cut in two
        else:
            stop = kind.tokens.match(text, at, limit).end()  # type: ignore[union-attr]
        if stop == at:  # a string longer than the piece, or one that never ends
            if limit == n:
                break
            continue
        piece = None
        opens = sum(text.count(ch, at, stop) for ch in openers)
        closes = sum(text.count(ch, at, stop) for ch in closers)
        if (opens or closes) and (text.find('"', at, stop) >= 0 or text.find("'", at, stop) >= 0):
            context = "a" if text[at - 1:at].isalnum() else " "  # what an apostrophe at ``at`` follows
            piece = kind.skeleton.sub("", context + text[at:stop])  # its brackets outside strings, alone
            opens = sum(piece.count(ch) for ch in openers)
            closes = sum(piece.count(ch) for ch in closers)
        if closes >= level or (depth is not None and not deep and level + opens > depth):
            if piece is None:
                piece = text[at:stop]
            deltas = array.array("b", piece.encode("latin-1", "replace").translate(kind.deltas, kind.others))
            running = list(itertools.accumulate(deltas))
            last = running.index(-level) if min(running) <= -level else -1
            if depth is not None and not deep:
                deep = level + max(running[:last + 1] if last >= 0 else running) > depth
            if last >= 0:
                return _after_brackets(text, at, n, kind, last + 1), True, deep
        level += opens - closes
        at = stop
    return n, False, deep


def _after_brackets(text: str, at: int, n: int, kind: Brackets, count: int,
                    step: Callable[[int], "re.Pattern[str]"] | None = None) -> int:
    """The position just after the ``count``-th bracket (``step``: :meth:`Brackets.opener_step` for the
    ``count``-th opener) outside strings from ``at``: a few matches, one per bit of ``count``."""
    step = kind.step if step is None else step
    power = 0
    while count:
        if count & 1:
            at = step(power).match(text, at, n).end()  # type: ignore[union-attr]
        count >>= 1
        power += 1
    return at


def bracket_groups(text: str, start: int = 0, end: int | None = None, *, openers: str = "{[",
                   closers: str = "}]", top: str | None = None,
                   depth: int | None = None) -> Iterator[tuple[int, int, int]]:
    """The bracket groups of ``text[start:end]``, in order, as ``(begin, end, what)``; found lazily.

    A group opens at one of ``top`` (default ``openers``) outside any group; inside it every
    one of ``openers`` opens a level and every one of ``closers`` closes one (of whatever
    kind), quotes respected (see :class:`Brackets`).  ``what`` is :data:`GROUP` for a group
    (one still open at ``end`` ends there: a truncated reply).  With ``depth``, a group that
    nests deeper than ``depth`` levels is :data:`TOO_DEEP` (no reader takes it), followed by
    the complete groups inside it (:data:`INNER`: the outermost ones of at most ``_LEVELS``
    levels, and at most ``depth``), so that a call after a run of stray brackets is found.  Linear
    and at C speed: a group of at most ``_LEVELS`` levels is one regular-expression match,
    any other is read in pieces (:func:`_group_end`), and each group is read once (the
    groups inside a :data:`TOO_DEEP` one once more).

    >>> list(bracket_groups('x {"a": "}"} [1] {"b"'))
    [(2, 12, 0), (13, 16, 0), (17, 21, 0)]
    >>> list(bracket_groups('[[[[{"a": [1]}', depth=3))
    [(0, 14, 1), (4, 14, 2)]
    """
    n = len(text) if end is None else min(end, len(text))
    kind = brackets(openers, closers)
    search = _any_of(openers if top is None else top).search
    at = start
    while at < n:
        found = search(text, at, n)
        if found is None:
            return
        begin = found.start()
        at, closed, deep = group_end(text, begin, n, kind, depth)
        if not deep:
            yield begin, at, GROUP
        else:
            yield begin, at, TOO_DEEP
            if any(text.find(ch, begin, at) >= 0 for ch in closers):  # else nothing inside it is complete
                yield from inner_groups(text, begin + 1, at, kind, max(1, min(_LEVELS, depth or 1)))
        if not closed:
            return


def inner_groups(text: str, start: int, n: int, kind: Brackets, levels: int) -> Iterator[tuple[int, int, int]]:
    """The outermost complete groups of at most ``levels`` levels in ``text[start:n]``.

    From each closing bracket on (found at C speed), only the last ``levels`` openers
    before it can start such a group (an earlier one holds more than ``levels`` levels
    before anything closes), so the openers before those are passed by counting, and each
    of the others costs one try of ``group[levels]``: linear, whatever runs of brackets the
    text holds.

    >>> list(inner_groups('[[[{"a": [1]} [2]', 1, 17, brackets("{[", "}]"), 2))
    [(3, 13, 2), (14, 17, 2)]
    """
    group = kind.group[levels].match  # type: ignore[union-attr]
    to_closer, to_opener = kind.to_closer.match, kind.to_opener.match
    openers = kind.openers
    at = to_opener(text, start, n).end()  # type: ignore[union-attr]
    while at < n:
        closer = to_closer(text, at, n).end()  # type: ignore[union-attr]
        if closer >= n:
            return
        piece = text[at:closer]
        if '"' in piece or "'" in piece:
            piece = kind.skeleton.sub("", ("a" if text[at - 1:at].isalnum() else " ") + piece)
        many = sum(piece.count(ch) for ch in openers) - levels
        if many > 0:  # these cannot: pass them
            at = _after_brackets(text, at, closer, kind, many, kind.opener_step)
            at = to_opener(text, at, closer).end()  # type: ignore[union-attr]
        found = None
        while at < closer and found is None:
            found = group(text, at, n)
            if found is None:
                at = to_opener(text, at + 1, closer).end()  # type: ignore[union-attr]
        if found is None:
            at = closer + 1  # nothing before this closer starts such a group
        else:
            yield at, found.end(), INNER
            at = found.end()
        at = to_opener(text, at, n).end()  # type: ignore[union-attr]


def balanced_spans(text: str, opener: str = "{", closer: str = "}", *, limit: int = 1000) -> list[tuple[int, int]]:
    """The top-level ``opener…closer`` groups of ``text`` (quotes respected), in one linear scan.

    A group still open at the end of the text is returned too, ending there (a truncated
    reply); at most ``limit`` groups.  Only ``opener`` and ``closer`` count as brackets (see
    :func:`bracket_groups`, which does the scanning).

    >>> balanced_spans('x {"a": "}"} y {"b": {}} {"c"')
    [(2, 12), (15, 24), (25, 29)]
    """
    return [(s, e) for s, e, _ in itertools.islice(bracket_groups(text, openers=opener, closers=closer), limit)]


_MISSING: Any = object()


def json_value(text: str) -> Any:
    """``text`` by strict JSON, else by :func:`lenient_json`; ``_MISSING`` when neither reads it.

    A text that strict JSON reads to its very end and then wants more (a value cut off), or
    that holds more after a whole object, array or string, is not rewritten: its tokens up to
    there are strict JSON already, and the lenient path keeps every bracket, so it would stop
    at the same place.

    >>> json_value("{'a': None}"), json_value('[1, 2') is _MISSING
    ({'a': None}, True)
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        if err.pos >= len(text) or (err.msg == "Extra data" and text[:err.pos].rstrip()[-1:] in ('}', ']', '"')):
            return _MISSING
    except (ValueError, RecursionError):
        pass
    return lenient_json(text)


# json_values.lark's tokens as one pattern, alternatives disjoint (no backtracking): a double-
# quoted string, a single-quoted string, a word (true/True/...), SIGNED_NUMBER, a trailing comma
# (after the end of a value, before a closing bracket), and any character no token starts with.
# Punctuation and white space are not matched: they stay as they are.  First, two kinds of run
# of tokens, each one match for what would be many (so the text costs a few calls of Python, not
# one per token): tokens that are strict JSON already, or single-quoted strings that become it by
# changing their quotes (no backslash, no quote of either kind inside); and tokens without strings,
# Python's words among them (they become JSON's by replacing them).
_RUN_PARTS = (r"[ \t\f\r\n{}\[\]:]++|,(?![ \t\f\r\n]*+[}\]])"
              r"|-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][+-]?[0-9]++)?+(?![\w.])")
_LENIENT_TOKEN = re.compile(rf"""
    ((?:"[^"'\\\n]*+"|'[^"'\\\n]*+'|{_RUN_PARTS}|(?:true|false|null)(?![A-Za-z0-9_]))++)
  | ((?:{_RUN_PARTS}|(?:true|false|null|True|False|None)(?![A-Za-z0-9_]))++)
  | ("(?:[^"\\\n]++|\\.)*+")
  | ('(?:[^'\\\n]++|\\.)*+')
  | ([A-Za-z_][A-Za-z0-9_]*+)
  | ([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?<=[\]}}"'\w.]),(?=[ \t\f\r\n]*[}}\]])
  | ([^ \t\f\r\n{{}}\[\],:])
""", re.VERBOSE)
_QUOTES = str.maketrans("'", '"')
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORDS = {"true": " true ", "True": " true ", "false": " false ", "False": " false ", "null": " null ",
          "None": " null "}
_LENIENT_DECODER = json.JSONDecoder(strict=False)


class _NotLenientJson(Exception):
    """A token the grammar has no terminal for."""


def _strict_token(match: "re.Match[str]") -> str:
    """One token of ``json_values.lark`` as strict JSON (read with the grammar's own readers)."""
    run, words, double, single, word, numeral, stray = match.groups()
    if run is not None:
        return run.translate(_QUOTES) if "'" in run else run
    if words is not None:
        return words.replace("True", "true").replace("False", "false").replace("None", "null")
    if double is not None:
        return double if "\\" not in double else json.dumps(unquote(double))
    if single is not None:
        if "\\" in single or '"' in single:
            return json.dumps(unquote(single))
        return f'"{single[1:-1]}"'
    if word is not None:
        strict = _WORDS.get(word)
        if strict is None:
            raise _NotLenientJson
        return strict
    if numeral is not None:
        if _JSON_NUMBER.fullmatch(numeral):
            return f" {numeral} "
        value = number(numeral)
        if isinstance(value, float) and not math.isfinite(value):
            return " Infinity " if value > 0 else " -Infinity "
        return f" {value!r} "
    if stray is not None:
        raise _NotLenientJson
    return ""  # a trailing comma


def lenient_json(text: str) -> Any:
    r"""JSON as models write it (``json_values.lark``) through the C parser, or ``_MISSING``.

    Each token of the grammar is rewritten as strict JSON with the grammar's own readers
    (:func:`~toolform_rules.protocols.values.unquote` for strings in either quote,
    :func:`~toolform_rules.protocols.values.number` for ``1.``, ``+2``, ``007``), Python's
    ``True``/``False``/``None`` become JSON's words, a trailing comma after a value goes,
    and ``json`` checks the structure.  Anything else (a stray word, a quote that never
    closes, a comma after white space) is ``_MISSING``: the grammar then reads it or says
    where it stops.  A property test checks that this path and the grammar agree.

    >>> lenient_json("{'a': True, 'b': [1., +2, None,], 'c': 'it\\'s',}")
    {'a': True, 'b': [1.0, 2, None], 'c': "it's"}
    >>> lenient_json("{'a': yes}") is _MISSING
    True
    """
    value = read_lenient(text)
    return _MISSING if value is NOT_JSON else value


#: What :func:`read_lenient` gives for a text holding a token ``json_values.lark`` has no terminal for.
NOT_JSON: Any = object()


def read_lenient(text: str, decoder: json.JSONDecoder = _LENIENT_DECODER) -> Any:
    """:func:`lenient_json`, telling a text the grammar cannot read either (``NOT_JSON``: it holds a token
    ``json_values.lark`` has no terminal for — a stray word or character, a quote that never closes)
    from one the grammar may read (``_MISSING``: a comma after white space, a bracket out of place).
    ``decoder``: what reads the text once rewritten as strict JSON (one with ``strict=False``).

    >>> read_lenient("{'a': yes}") is NOT_JSON, read_lenient("{'a': 1 ,}") is _MISSING
    (True, True)
    """
    try:
        strict = _LENIENT_TOKEN.sub(_strict_token, text)
    except _NotLenientJson:
        return NOT_JSON
    except ValueError:
        return _MISSING
    try:
        return decoder.decode(strict)
    except (ValueError, RecursionError):
        return _MISSING


__all__ = ["GROUP", "INNER", "TOO_DEEP", "Brackets", "GrammarBudget", "JsonValues", "balanced_spans", "bracket_groups",
           "brackets", "group_end", "inner_groups", "json_value", "lenient_json", "loads_lenient", "NOT_JSON", "number",
           "read_lenient", "strip_code_fence", "unquote"]
