"""Keys written twice in a call's JSON: found at next to no cost, and named by where they stand.

``{"value": 5, "value": -1}`` is one object to a JSON parser, the last value kept, silently;
a consumer that keeps the first sees another call.  The readers keep the last too, as JSON
parsers do, and say so: the call's :attr:`~toolform_rules.protocols.base.RawCall.duplicates`
names each key written twice (``parse_reply`` then notes it as a repair, or refuses the
call under ``rule="as_written"``).

Finding them costs a reply almost nothing: every key of a JSON text stands before a colon, so a
value whose objects hold as many keys in all as its text holds colons has no key written twice
(:func:`may_repeat`: one ``str.count`` and a count of the value's keys).  Only a text holding more
colons than keys — a key written twice, or a colon inside a string — is read again, by a decoder
whose ``object_pairs_hook`` records each object that loses a key (:func:`reread`).  The objects are
recorded by identity in a :class:`Repeats`, which keeps them alive while the reply is read; a call's
keys written twice are then found by walking its arguments (:meth:`Repeats.of`).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..engine.report import format_path
from ..jsonvalues import keys_twice
from ..grammar import parse
from .reading import GrammarBudget
from .values import NOT_JSON, JsonValues, _MISSING, read_lenient

_CONTAINERS = (dict, list)


def may_repeat(value: Any, text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``value``, read as JSON from ``text[start:end]``, may hold a key written twice: ``False`` is
    sure, ``True`` wants a look (:func:`reread`).

    Every key stands before a colon of its own, so the text's colons are its keys and the colons inside
    its strings.  A value whose objects hold as many keys as the text holds colons has no key written
    twice; the keys are counted from the top (a call object's, its arguments', the objects' among them),
    and the count stops as soon as it reaches the colons (or the colons less those of URLs, which stand in
    strings).  Else all keys are counted, and the colons inside the value's strings (:func:`_counts`) less
    those the text writes as escapes: a text that writes a key twice holds more colons than its value's
    keys and strings, whatever the strings hold.

    >>> may_repeat({"a": 1}, '{"a": 1}'), may_repeat({"a": 2}, '{"a": 1, "a": 2}')
    (False, True)
    >>> may_repeat({"url": "https://x"}, '{"url": "https://x"}'), may_repeat({"a": ":"}, '{"a": 1, "a": "\\u003a"}')
    (False, True)
    """
    colons = text.count(":", start, len(text) if end is None else end)
    if not colons:
        return False
    if type(value) is dict:
        keys = len(value)
        arguments = value.get("arguments")
        if type(arguments) is dict:
            keys += len(arguments)
            if keys == colons:
                return False
            for item in arguments.values():
                if type(item) is dict:
                    keys += len(item)
        if keys == colons:
            return False
    elif type(value) is list:  # an array of call objects: theirs and their arguments' keys
        keys = 0
        for item in value:
            if type(item) is dict:
                arguments = item.get("arguments")
                keys += len(item) + (len(arguments) if type(arguments) is dict else 0)
        if keys == colons:
            return False
    else:
        return False
    # a colon before "//" stands in a string (a URL's): no key's value starts with a slash
    if keys == colons - text.count("://", start, len(text) if end is None else end):
        return False
    keys, inside = _counts(value, [0, 0])
    if inside:  # a colon written as an escape (\u003a) is one in the value's strings, not in the text: at most
        # as many as the text writes escapes of \u0030 to \u003f (one count; too many only costs a look)
        inside -= text.count("\\u003", start, len(text) if end is None else end)
    return keys + inside != colons


def _counts(value: Any, counts: list[int]) -> list[int]:
    """``counts`` plus the keys of ``value``'s objects and the colons inside its strings (keys' too).

    >>> _counts({"a": "b:c", "d:e": [{"f": 1}]}, [0, 0])
    [3, 2]
    """
    if type(value) is dict:
        counts[0] += len(value)
        for key in value:
            if ":" in key:
                counts[1] += key.count(":")
        items: Iterable[Any] = value.values()
    elif type(value) is list:
        items = value
    else:
        return counts
    for item in items:
        kind = type(item)
        if kind is str:
            if ":" in item:
                counts[1] += item.count(":")
        elif kind is dict or kind is list:
            _counts(item, counts)
    return counts


def where(path: tuple[str | int, ...], key: str) -> str:
    """Where a key written twice stands, in words: in the arguments (at a nested object's path) — or, with
    ``path`` ``None``-free but empty and the key outside them, see :func:`in_call_object`.

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


class Repeats:
    """The objects of one reply's values that hold a key written twice, by identity, each with those keys.

    An object is kept here while the reply is read, so its identity stays its own.  ``calls``: what a
    reader found of a call beside its arguments (the call object's own keys written twice), by the
    identity of the call's arguments.  Each object and each call is looked at a bounded number of times
    (the objects that hold others are indexed once): linear in the reply, whatever it repeats.

    >>> repeats = Repeats()
    >>> value = json.JSONDecoder(object_pairs_hook=repeats.pairs).decode('{"a": {"b": 1, "b": 2}, "a2": 3}')
    >>> repeats.of(value)
    ('"b" in the arguments at a',)
    """

    __slots__ = ("objects", "calls", "_holders", "_unindexed")

    def __init__(self) -> None:
        self.objects: dict[int, tuple[dict[str, Any], tuple[str, ...]]] = {}
        self.calls: dict[int, tuple[dict[str, Any], tuple[str, ...]]] = {}
        #: the objects the recorded ones hold, by identity: (the one that holds it, it) (see :meth:`_holder`)
        self._holders: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._unindexed: list[dict[str, Any]] = []

    def __bool__(self) -> bool:
        return bool(self.objects) or bool(self.calls)

    def record(self, obj: dict[str, Any], keys: tuple[str, ...]) -> None:
        """``obj`` holds ``keys`` written twice (more of them, if it was recorded before)."""
        known = self.objects.get(id(obj))
        if known is not None:
            keys = tuple(dict.fromkeys(known[1] + keys))
        else:
            self._unindexed.append(obj)
        self.objects[id(obj)] = obj, keys

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """An ``object_pairs_hook``: the object, the last value of a key kept, as ``json`` makes it — and
        recorded when a key was written twice."""
        obj = dict(pairs)
        if len(obj) < len(pairs):
            self.record(obj, keys_twice(pairs))
        return obj

    def call_object(self, around: Sequence[Any], arguments: dict[str, Any], *, copied: bool = False) -> None:
        """A call was read from the objects ``around`` (the call object, and those a reader passed through to
        reach it: ``{"function": {...}}``): their keys written twice are the call's.  ``copied``: the
        arguments are the call object's other keys (``{"name": "f", "a": 1}``), so its keys written twice
        that they hold are in the arguments."""
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
        """Where the call whose arguments are ``arguments`` writes keys twice: what a reader recorded of it
        beside them, the keys of the object that holds them (the call object), then those of the objects
        among the arguments, by their paths."""
        known = self.calls.get(id(arguments))
        found = list(known[1]) if known is not None and known[0] is arguments else []
        holder = self._holder(arguments)
        if holder is not None:
            found.extend(in_call_object(key) for key in self.objects[id(holder)][1] if key in holder)
        if self.objects:
            self._inside(arguments, (), found, 0)
        return tuple(dict.fromkeys(found))

    def _holder(self, value: Any) -> dict[str, Any] | None:
        """The recorded object that holds ``value`` as one of its values, if one does."""
        for obj in self._unindexed:  # (each recorded object is looked into once)
            for item in obj.values():
                if type(item) is dict:
                    self._holders[id(item)] = obj, item
        self._unindexed.clear()
        held = self._holders.get(id(value))
        return held[0] if held is not None and held[1] is value else None

    def _inside(self, value: Any, path: tuple[str | int, ...], found: list[str], depth: int) -> None:
        if depth > 64:  # (a call's arguments nest far less deep; the walk stays bounded whatever they hold)
            return
        if value.__class__ is dict:
            known = self.objects.get(id(value))
            if known is not None and known[0] is value:  # (a key a reader took back since is not the call's)
                found.extend(where(path, key) for key in known[1] if key in value)
            for key, item in value.items():
                if item.__class__ in _CONTAINERS:
                    self._inside(item, (*path, key), found, depth + 1)
        elif value.__class__ is list:
            for index, item in enumerate(value):
                if item.__class__ in _CONTAINERS:
                    self._inside(item, (*path, index), found, depth + 1)


class _Recording(JsonValues):
    """``json_values.lark``'s values, each object that loses a key recorded."""

    def __init__(self, repeats: Repeats) -> None:
        super().__init__()
        self.repeats = repeats

    def object(self, pairs: list) -> dict:
        return self.repeats.pairs([p for p in pairs if p is not None])


def reread(piece: str, budget: GrammarBudget | None = None) -> tuple[Any, Repeats] | None:
    """``piece`` (one JSON value, as models write it) read again, recording its objects' keys written twice:
    the value (equal to the first reading's) and a :class:`Repeats` of them; ``None`` when no reader takes
    it.  Strict JSON first, then the lenient reader in C, then — with a ``budget`` to spend, the reply's —
    ``json_values.lark``.

    >>> value, repeats = reread("{'a': 1, 'a': 2,}")
    >>> value, repeats.of(value)
    ({'a': 2}, ('"a" in the arguments',))
    """
    repeats = Repeats()
    try:
        return json.JSONDecoder(object_pairs_hook=repeats.pairs).decode(piece), repeats
    except (ValueError, RecursionError):
        pass
    value = read_lenient(piece, json.JSONDecoder(object_pairs_hook=repeats.pairs, strict=False))
    if value is not _MISSING and value is not NOT_JSON:
        return value, repeats
    if budget is None:
        return None
    try:
        budget.spend("json_object", piece)
        return _Recording(repeats).transform(parse("json_object", piece)), repeats
    except Exception:  # noqa: BLE001 — not read: a grammar failure, or a value Python cannot hold (read_grammar's)
        return None


def places(arguments: Any, text: str, budget: GrammarBudget | None = None) -> tuple[str, ...]:
    """Where ``arguments``, read as JSON from all of ``text``, write a key twice (:func:`where`'s words):
    for a reader whose arguments are one JSON value, with nothing around them to attribute.

    >>> places({"a": 2}, '{"a": 1, "a": 2}'), places({"a": 1}, '{"a": 1}')
    (('"a" in the arguments',), ())
    """
    if not may_repeat(arguments, text):
        return ()
    again = reread(text, budget)
    return again[1].of(again[0]) if again is not None and again[1] else ()


__all__ = ["Repeats", "in_call_object", "key_count", "keys_twice", "may_repeat", "noted", "places", "repair", "reread",
           "where"]
