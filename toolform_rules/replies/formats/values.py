"""JSON values as models write them (``grammars/json_values.lark``), read once, and their keys written twice.

Strict JSON is read by Python's ``json`` (the one fast path), anything else by the grammar
(:func:`read_grammar`, within the reply's grammar budget) through :class:`JsonValues`.  A key written
twice keeps its last value, as in JSON, and is recorded as the value is read (:class:`Repeats`), so
that a call names it.  :func:`bracket_groups` finds bracket groups in untrusted text, quote-aware,
linear and at C speed.
"""

from __future__ import annotations

import array
import functools
import itertools
import json
import re
from typing import Any, Iterable, Iterator, Sequence

from ...engine.report import format_path
from ...grammar import GrammarFailure, Transformer, parse
from ...jsonvalues import keys_twice
from ...limits import DEFAULT_LIMITS
from .reading import GrammarBudget

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
    """A ``json_values.lark`` tree → Python values; each object that loses a key written twice recorded in
    ``repeats`` (when given)."""

    repeats: "Repeats | None" = None

    def __init__(self, repeats: "Repeats | None" = None) -> None:
        self.repeats = repeats

    def object(self, pairs: list) -> dict:
        return dict(pairs) if self.repeats is None else self.repeats.pairs(pairs)

    def pair(self, items: list) -> tuple:
        return items[0], items[1]

    def string(self, items: list) -> str:
        return unquote(str(items[0]))

    def number(self, items: list) -> int | float:
        return number(str(items[0]))

    def start(self, items: list) -> Any:
        return items[0]

    array = list  # (Lark calls each with the rule's children)
    true = staticmethod(lambda _: True)
    false = staticmethod(lambda _: False)
    null = staticmethod(lambda _: None)


def read_grammar(grammar: str, text: str, transformer: Transformer, start: str = "start", *,
                 budget: GrammarBudget | None = None) -> Any:
    """``text`` through ``grammar`` (from ``start``) and ``transformer``, within ``budget`` (the reply's; else one
    of the default limits); a :class:`GrammarFailure` otherwise.

    >>> read_grammar("json_object", "{'a': [1,],}", JsonValues())
    {'a': [1]}
    """
    (GrammarBudget.of(DEFAULT_LIMITS) if budget is None else budget).spend(grammar, text)
    tree = parse(grammar, text, start)
    try:
        return transformer.transform(tree)
    except RecursionError:
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply") from None
    except Exception as err:  # a callback failed (Lark wraps it): a number Python cannot hold, say
        raise GrammarFailure(grammar, 1, 1, (), f"a value that cannot be read ({err.__class__.__name__})") from None


_MISSING: Any = object()


def json_value(text: str) -> Any:
    """``text`` read by the fast path, strict JSON; ``_MISSING`` when it is not (the grammar reads the rest).

    >>> json_value('{"a": null}'), json_value("{'a': None}") is _MISSING
    ({'a': None}, True)
    """
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _MISSING


def loads_lenient(text: str, grammar: str = "json_object", *, max_grammar_bytes: int = 200_000) -> Any:
    """A JSON value as models write it: strict JSON, else the grammar (given at most ``max_grammar_bytes``); a
    :class:`GrammarFailure` when neither reads it.

    >>> loads_lenient("{'a': True, 'b': [1, 2,],}")
    {'a': True, 'b': [1, 2]}
    """
    value = json_value(text)
    budget = GrammarBudget(max_grammar_bytes, run_cost=0)
    return value if value is not _MISSING else read_grammar(grammar, text, JsonValues(), budget=budget)


#: ``json_values.lark``'s tokens: white space and punctuation, strings in either quote, words, numbers
_TOKENS = re.compile(r"""(?:[\s{}\[\],:]++|"(?:[^"\\\n]++|\\.)*+"|'(?:[^'\\\n]++|\\.)*+'|true|false|null|True|False
                         |None|[+-]?+(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][+-]?+\d++)?+)*+""", re.VERBOSE)


def lexes(text: str) -> bool:
    """Whether ``text`` is a run of ``json_values.lark``'s tokens (else the grammar would stop in it).

    >>> lexes("{'a': [1., None,],}"), lexes("{think}")
    (True, False)
    """
    return _TOKENS.fullmatch(text) is not None


# --- keys written twice ------------------------------------------------------------------------

def where(path: tuple[str | int, ...], key: str) -> str:
    """Where a key written twice stands in a call's arguments, in words.

    >>> where((), "value"), where(("contract_details",), "status"), where(("items", 0), "id")
    ('"value" in the arguments', '"status" in the arguments at contract_details', '"id" in the arguments at items[0]')
    """
    return f"{json.dumps(key, ensure_ascii=False)} in the arguments" + (f" at {format_path(path)}" if path else "")


def in_call_object(key: str) -> str:
    """A key written twice in the object that holds a call (its name, its arguments), in words.

    >>> in_call_object("name")
    '"name" in the call object'
    """
    return f"{json.dumps(key, ensure_ascii=False)} in the call object"


def repair(place: str) -> str:
    """What a repair line (and a note) says of a key written twice at ``place`` (:func:`where`'s words).

    >>> repair('"value" in the arguments')
    'duplicate key "value" in the arguments: the last value is used'
    """
    return f"duplicate key {place}: the last value is used"


def noted(name: str, places: Iterable[str]) -> str:
    """The note on a call ``name`` that writes keys twice at ``places``.

    >>> noted("f", ['"a" in the arguments'])
    'f: duplicate key "a" in the arguments: the last value is used'
    """
    return f"{name}: " + "; ".join(map(repair, places))


_CONTAINERS = (dict, list)
_Known = tuple[dict[str, Any], tuple[str, ...]]


class Repeats:
    """The objects of one reply's values that hold a key written twice, with those keys, by identity (kept alive
    here); ``calls``: a call object's own keys written twice, by the identity of the call's arguments.

    >>> repeats = Repeats()
    >>> value = json.JSONDecoder(object_pairs_hook=repeats.pairs).decode('{"a": {"b": 1, "b": 2}, "a2": 3}')
    >>> repeats.of(value)
    ('"b" in the arguments at a',)
    """

    __slots__ = ("objects", "calls", "_holders", "_unindexed")

    def __init__(self) -> None:
        self.objects: dict[int, _Known] = {}
        self.calls: dict[int, _Known] = {}
        self._holders: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}  # held object: (its holder, it)
        self._unindexed: list[dict[str, Any]] = []  # (indexed when first asked: a reader may still be filling one)

    def __bool__(self) -> bool:
        return bool(self.objects) or bool(self.calls)

    def record(self, obj: dict[str, Any], keys: tuple[str, ...]) -> None:
        """``obj`` holds ``keys`` written twice (more of them, if it was recorded before)."""
        known = self.objects.get(id(obj))
        if known is None:
            self._unindexed.append(obj)
        else:
            keys = tuple(dict.fromkeys(known[1] + keys))
        self.objects[id(obj)] = obj, keys

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """An ``object_pairs_hook``: the object as ``json`` makes it, recorded when a key was written twice."""
        obj = dict(pairs)
        if len(obj) < len(pairs):
            self.record(obj, keys_twice(pairs))
        return obj

    def call_object(self, around: Sequence[Any], arguments: dict[str, Any], *, copied: bool = False) -> None:
        """A call was read from the objects ``around`` (the call object, and those passed through to reach it:
        ``{"function": {...}}``): their keys written twice are the call's (in its arguments when ``copied``:
        they are the call object's other keys, ``{"name": "f", "a": 1}``)."""
        found: list[str] = []
        for obj in around:
            known = self.objects.get(id(obj))
            if known is not None and known[0] is obj:
                found.extend(where((), key) if copied and obj is around[-1] and key in arguments
                             else in_call_object(key) for key in known[1])
        if found:
            self.calls[id(arguments)] = arguments, tuple(found)

    def merge(self, other: "Repeats") -> None:
        for obj, keys in other.objects.values():
            self.record(obj, keys)
        self.calls.update(other.calls)

    def of(self, arguments: Any) -> tuple[str, ...]:
        """Where the call whose arguments are ``arguments`` writes keys twice: beside them (the call object's
        keys), then in the objects among them, by their paths."""
        known = self.calls.get(id(arguments))
        found = list(known[1]) if known is not None and known[0] is arguments else []
        for obj in self._unindexed:
            self._holders.update((id(item), (obj, item)) for item in obj.values() if type(item) is dict)
        self._unindexed.clear()
        held = self._holders.get(id(arguments))  # (the call object holding them)
        if held is not None and held[1] is arguments:
            found.extend(in_call_object(key) for key in self.objects[id(held[0])][1] if key in held[0])
        if self.objects:
            self._inside(arguments, (), found, 0)
        return tuple(dict.fromkeys(found))

    def _inside(self, value: Any, path: tuple[str | int, ...], found: list[str], depth: int) -> None:
        if depth > 64:  # (a call's arguments nest far less deep; the walk stays bounded whatever they hold)
            return
        items: Iterable[tuple[Any, Any]] = ()
        if value.__class__ is dict:
            known = self.objects.get(id(value))
            if known is not None and known[0] is value:  # (a key a reader took back since is not the call's)
                found.extend(where(path, key) for key in known[1] if key in value)
            items = value.items()
        elif value.__class__ is list:
            items = enumerate(value)
        for key, item in items:
            if item.__class__ in _CONTAINERS:
                self._inside(item, (*path, key), found, depth + 1)


def may_repeat(value: Any, text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``value``, read as JSON from ``text[start:end]``, may hold a key written twice (``False`` is sure):
    every key stands before a colon of its own, so such a text holds more colons than its value's keys and
    the colons in its strings (all counted only when a call's own keys do not settle it).

    >>> may_repeat({"a": 1}, '{"a": 1}'), may_repeat({"a": 2}, '{"a": 1, "a": 2}')
    (False, True)
    >>> may_repeat({"url": "https://x"}, '{"url": "https://x"}'), may_repeat({"a": ":"}, '{"a": 1, "a": "\\u003a"}')
    (False, True)
    """
    end = len(text) if end is None else end
    colons = text.count(":", start, end)
    if not colons or type(value) not in _CONTAINERS:
        return False
    keys = sum(map(_call_keys, value)) if type(value) is list else _call_keys(value)
    if keys == colons or keys == colons - text.count("://", start, end):
        return False
    keys, inside = _counts(value, [0, 0])
    if inside:  # a colon written as an escape (\u003a) is in the value's strings, not the text's: at most as
        inside -= text.count("\\u003", start, end)  # many as its escapes of \u0030 to \u003f (more: one look)
    return keys + inside != colons


def _call_keys(value: Any) -> int:
    """The keys of a call object, its arguments and the objects among them."""
    if type(value) is not dict:
        return 0
    arguments = value.get("arguments")
    if type(arguments) is not dict:
        return len(value)
    keys = len(value) + len(arguments)
    for item in arguments.values():
        if type(item) is dict:
            keys += len(item)
    return keys


def _counts(value: Any, counts: list[int]) -> list[int]:
    """``counts`` plus the keys of ``value``'s objects and the colons inside its strings (keys' too).

    >>> _counts({"a": "b:c", "d:e": [{"f": 1}]}, [0, 0])
    [3, 2]
    """
    if type(value) is dict:
        counts[0] += len(value)
        for key in value:  # (loops, not generators: every reply's value may pass here)
            if ":" in key:
                counts[1] += key.count(":")
        value = value.values()
    elif type(value) is not list:
        return counts
    for item in value:
        kind = type(item)
        if kind is str:
            if ":" in item:
                counts[1] += item.count(":")
        elif kind is dict or kind is list:
            _counts(item, counts)
    return counts


def reread(piece: str, budget: GrammarBudget | None = None) -> tuple[Any, Repeats] | None:
    """``piece`` (one JSON value) read again, its keys written twice recorded: the value and a :class:`Repeats`;
    ``None`` when no reader takes it (strict JSON, then — with a ``budget``, the reply's — the grammar).

    >>> value, repeats = reread('{"a": 1, "a": 2}')
    >>> value, repeats.of(value)
    ({'a': 2}, ('"a" in the arguments',))
    """
    repeats = Repeats()
    try:
        return json.JSONDecoder(object_pairs_hook=repeats.pairs).decode(piece), repeats
    except (ValueError, RecursionError):
        if budget is None:
            return None
    try:
        return read_grammar("json_object", piece, JsonValues(repeats), budget=budget), repeats
    except GrammarFailure:
        return None


def places(arguments: Any, text: str, budget: GrammarBudget | None = None) -> tuple[str, ...]:
    """Where ``arguments``, read as JSON from all of ``text``, write a key twice (:func:`where`'s words).

    >>> places({"a": 2}, '{"a": 1, "a": 2}'), places({"a": 1}, '{"a": 1}')
    (('"a" in the arguments',), ())
    """
    if not may_repeat(arguments, text):
        return ()
    again = reread(text, budget)
    return again[1].of(again[0]) if again is not None and again[1] else ()


# --- bracket groups ----------------------------------------------------------------------------

#: How many bracket levels a group's regular expression follows (``Brackets.group``)
_LEVELS = 8
#: What :func:`bracket_groups` yields: a top-level group; one nested deeper than asked; a complete group inside it
GROUP, TOO_DEEP, INNER = 0, 1, 2


class Brackets:
    """The regular expressions that find the groups of one set of brackets, built once per set.

    Inside a group a string starts at ``"``, or at ``'`` not after a letter or digit, and ends at its
    quote or a newline (a backslash escapes); outside, quotes mean nothing.  No pattern backtracks.
    ``group[k]``: a group of at most ``k`` levels; ``tokens``: whole tokens (not a string that runs
    past the end); ``skeleton``: whole tokens that are not brackets; ``step``: whole tokens up to and
    including a bracket; ``deltas``/``others``: ``translate`` them to +1 and -1.
    """

    def __init__(self, openers: str, closers: str) -> None:
        self.openers, self.closers = openers, closers
        o, c = re.escape(openers), re.escape(closers)
        double = r'"(?:[^"\\\n]++|\\[\s\S])*+'
        # a quote first in every alternative (``re`` then searches for one at C speed), what it follows after it
        single = r"'(?<![^\W_]')(?:[^'\\\n]++|\\[\s\S])*+"
        apostrophe = r"'(?<=[^\W_]')"
        plain = rf"""[^{o}{c}"']++"""
        # a string that reaches the end of the text without its quote ends there
        atom = self._atom = rf"""{plain}|{double}["\n]?|{single}['\n]?|{apostrophe}"""
        levels = [rf"(?:{atom})*+"]  # levels[k]: the inside of a group of at most k + 1 levels
        for _ in range(_LEVELS - 1):
            levels.append(rf"(?:[{o}]{levels[-1]}[{c}]|{atom})*+")
        self.group = _GroupPatterns(o, c, levels)
        token = rf"""{plain}|{double}["\n]|{single}['\n]|{apostrophe}"""
        self.tokens = re.compile(rf"""(?:[^"']++|{double}["\n]|{single}['\n]|{apostrophe})*+""")
        self.skeleton = re.compile(rf"(?:{token})++")
        self.step = re.compile(rf"(?:{token})*+[{o}{c}]")
        self.deltas = bytes.maketrans((openers + closers).encode(), b"\x01" * len(openers) + b"\xff" * len(closers))
        self.others = bytes(i for i in range(256) if chr(i) not in openers + closers)

    @functools.cache  # noqa: B019 — (the instances are kept for good: :func:`brackets`)
    def inner(self, levels: int) -> "re.Pattern[str]":
        """The whole tokens before the next group of at most ``levels`` levels, and that group (none at the end)."""
        group, o, c = self.group[levels].pattern, re.escape(self.openers), re.escape(self.closers)  # type: ignore
        # (an opener right before ``levels`` more holds too many: passed without a try)
        return re.compile(rf"((?:{self._atom}|[{c}]|[{o}](?=[{o}]{{{levels}}})|(?!{group})[{o}])*+)({group})?")

    def brackets_of(self, text: str, at: int, stop: int) -> str:
        """``text[at:stop]`` (whole tokens) without its strings (without anything but brackets, if it has any)."""
        if text.find('"', at, stop) < 0 and text.find("'", at, stop) < 0:
            return text[at:stop]
        context = "a" if text[at - 1:at].isalnum() else " "  # what an apostrophe at ``at`` follows
        return self.skeleton.sub("", context + text[at:stop])

    def count(self, piece: str, which: str) -> int:
        return sum(piece.count(ch) for ch in which)


class _GroupPatterns(dict[int, "re.Pattern[str] | None"]):
    """``Brackets.group``: the pattern of a group of at most ``k`` levels, compiled when first asked for (each
    costs a millisecond; a process mostly needs one); ``[0]`` is ``None``."""

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
def any_of(characters: str) -> "re.Pattern[str]":
    """A pattern that finds any one of ``characters`` (compiled once)."""
    return re.compile(f"[{re.escape(characters)}]")


def group_end(text: str, begin: int, n: int, kind: Brackets, depth: int | None = None) -> tuple[int, bool, bool]:
    """Where the group opening at ``begin`` ends: (end, closed, nested deeper than ``depth``).  It is read in
    pieces of doubling size (:func:`_pieces`): a piece's brackets outside strings are counted, and only when
    the depth may reach zero (or pass ``depth``) in it are its running depths computed
    (``itertools.accumulate``): a few calls of Python per piece.

    >>> group_end('{"a": "}", "b": [[1]]} x', 0, 24, brackets("{[", "}]"), 1)
    (22, True, True)
    """
    level, deep = 0, False
    for at, stop in _pieces(text, begin, n, kind):
        piece = kind.brackets_of(text, at, stop)
        opens, closes = kind.count(piece, kind.openers), kind.count(piece, kind.closers)
        if closes >= level or (depth is not None and not deep and level + opens > depth):
            running = list(itertools.accumulate(array.array("b", piece.encode("latin-1", "replace").translate(
                kind.deltas, kind.others))))
            last = running.index(-level) if min(running) <= -level else -1
            if depth is not None and not deep:
                deep = level + max(running[:last + 1] if last >= 0 else running) > depth
            if last >= 0:
                return _after_brackets(text, at, n, kind, last + 1), True, deep
        level += opens - closes
    return n, False, deep


def _pieces(text: str, at: int, n: int, kind: Brackets) -> Iterator[tuple[int, int]]:
    """``text[at:n]`` in pieces of doubling size, each cut where a token ends (those without a bracket passed)."""
    size = 256
    while at < n:
        limit = min(n, at + size)
        size *= 2
        no_string = text.find('"', at, limit) < 0 and text.find("'", at, limit) < 0
        stop = limit if limit < n and no_string else kind.tokens.match(text, at, limit).end()  # type: ignore
        if stop == at:  # a string longer than the piece, or one that never ends
            if limit == n:
                return
            continue
        if any(text.find(ch, at, stop) >= 0 for ch in kind.openers + kind.closers):
            yield at, stop
        at = stop


def _after_brackets(text: str, at: int, n: int, kind: Brackets, count: int) -> int:
    """The position just after the ``count``-th bracket outside strings from ``at`` (the matches counted in C)."""
    return next(itertools.islice(kind.step.finditer(text, at, n), count - 1, None)).end()


def bracket_groups(text: str, start: int = 0, end: int | None = None, *, openers: str = "{[",
                   closers: str = "}]", top: str | None = None,
                   depth: int | None = None) -> Iterator[tuple[int, int, int]]:
    """The bracket groups of ``text[start:end]``, in order, as ``(begin, end, what)``; found lazily.

    A group opens at one of ``top`` (default ``openers``) outside any group; inside it every one of
    ``openers`` opens a level and every one of ``closers`` closes one, quotes respected (see
    :class:`Brackets`).  ``what`` is :data:`GROUP` (one still open at ``end`` ends there); with
    ``depth``, a group nested deeper is :data:`TOO_DEEP`, followed by the outermost complete groups
    inside it (:data:`INNER`, at most ``_LEVELS`` and ``depth`` levels).  Linear, at C speed.

    >>> list(bracket_groups('x {"a": "}"} [1] {"b"'))
    [(2, 12, 0), (13, 16, 0), (17, 21, 0)]
    >>> list(bracket_groups('[[[[{"a": [1]}', depth=3))
    [(0, 14, 1), (4, 14, 2)]
    """
    n = len(text) if end is None else min(end, len(text))
    kind = brackets(openers, closers)
    search = any_of(openers if top is None else top).search
    at = start
    while at < n:
        found = search(text, at, n)
        if found is None:
            return
        begin = found.start()
        at, closed, deep = group_end(text, begin, n, kind, depth)
        yield begin, at, TOO_DEEP if deep else GROUP
        if deep and any(text.find(ch, begin, at) >= 0 for ch in closers):  # else nothing inside it is complete
            yield from inner_groups(text, begin + 1, at, kind, max(1, min(_LEVELS, depth or 1)))
        if not closed:
            return


def inner_groups(text: str, start: int, n: int, kind: Brackets, levels: int) -> Iterator[tuple[int, int, int]]:
    """The outermost complete groups of at most ``levels`` levels in ``text[start:n]``: linear, each character
    tried by at most ``levels + 1`` groups (:meth:`Brackets.inner`).

    >>> list(inner_groups('[[[{"a": [1]} [2]', 1, 17, brackets("{[", "}]"), 2))
    [(3, 13, 2), (14, 17, 2)]
    """
    for found in kind.inner(levels).finditer(text, start, n):
        if found.end() > found.end(1):
            yield found.end(1), found.end(), INNER


def balanced_spans(text: str, opener: str = "{", closer: str = "}", *, limit: int = 1000) -> list[tuple[int, int]]:
    """The top-level ``opener…closer`` groups of ``text`` (quotes respected; one still open at the end ends
    there), at most ``limit`` (see :func:`bracket_groups`).

    >>> balanced_spans('x {"a": "}"} y {"b": {}} {"c"')
    [(2, 12), (15, 24), (25, 29)]
    """
    return [(s, e) for s, e, _ in itertools.islice(bracket_groups(text, openers=opener, closers=closer), limit)]


__all__ = ["GROUP", "INNER", "TOO_DEEP", "Brackets", "JsonValues", "Repeats", "any_of", "balanced_spans",
           "bracket_groups", "brackets", "group_end", "in_call_object", "inner_groups", "json_value", "keys_twice",
           "lexes", "loads_lenient", "may_repeat", "noted", "number", "places", "read_grammar", "repair", "reread",
           "unquote", "where"]
