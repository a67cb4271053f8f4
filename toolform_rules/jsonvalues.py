"""JSON value semantics in Python: type names, JSON equality, exact multiples, and what is no JSON value.

Python holds values JSON cannot: a ``str`` with a lone surrogate (``json.loads('"\\ud800"')``
makes one) is not Unicode text, and a ``float`` NaN or infinity (``json.loads`` reads ``NaN``,
``Infinity`` and an overflowing ``1e400`` as such) is no JSON number.  Such a value is of no
JSON type: :func:`is_json_type` says so, :func:`not_json_reason` says why, and
:func:`first_not_json` finds one anywhere inside a value.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable, Iterator

NoneType = type(None)

#: The Python types that are exactly each JSON type, for the fast ``type(v) in ...`` test.
EXACT_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "array": frozenset({list, tuple}),
    "object": frozenset({dict}),
    "null": frozenset({NoneType}),
}


def is_json_type(value: Any, name: str, *, integral_float_is_integer: bool = False) -> bool:
    """Whether ``value`` is of JSON type ``name``; ``bool`` is never a number.

    >>> is_json_type(True, "integer"), is_json_type(2.0, "integer"), is_json_type(2.0, "integer", integral_float_is_integer=True)
    (False, False, True)
    >>> is_json_type(float("nan"), "number"), is_json_type("\\ud800", "string")
    (False, False)
    """
    if name == "string":
        return isinstance(value, str) and is_text(value)
    if name == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return True
        return integral_float_is_integer and isinstance(value, float) and value.is_integer()
    if name == "number":
        if isinstance(value, float):
            return math.isfinite(value)
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "array":
        return isinstance(value, (list, tuple))
    if name == "object":
        return isinstance(value, dict)
    if name == "null":
        return value is None
    return False


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it: ``1 == 1.0``, but ``true != 1``; deep for arrays and objects.

    >>> json_equal([1, {"a": 1.0}], [1.0, {"a": 1}]), json_equal(True, 1), json_equal([True], [1])
    (True, False, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    return a == b


def is_multiple_of(value: int | float, divisor: int | float) -> bool:
    """Whether ``value`` is an integer multiple of ``divisor``, exactly (decimal floats as written).

    >>> is_multiple_of(0.0075, 0.0001), is_multiple_of(1e308, 0.123456789), is_multiple_of(10, 3)
    (True, False, False)
    """
    if isinstance(value, int) and isinstance(divisor, int):
        return value % divisor == 0
    from fractions import Fraction  # (here: a float multipleOf is rare, and fractions costs ~2 ms to import)

    try:
        quotient = Fraction(repr(value)) / Fraction(repr(divisor))
    except (ValueError, OverflowError, ZeroDivisionError):
        return False
    return quotient.denominator == 1


def json_type_of(value: Any) -> str:
    """The JSON Schema type of a JSON value (``integer`` for an int, ``number`` for a float); for anything
    else, its Python type's name.

    >>> [json_type_of(v) for v in (None, True, 1, 1.5, "a", [1], {"a": 1}, {1})]
    ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object', 'set']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for python_type, name in ((int, "integer"), (float, "number"), (str, "string"), (list, "array"),
                              (dict, "object")):
        if isinstance(value, python_type):
            return name
    return type(value).__name__


def shared_type(members: tuple[Any, ...]) -> str:
    """The JSON type an untyped enum's members share (``None`` aside): boolean, integer, number, else string.

    >>> shared_type((1, 2)), shared_type((1, 2.5)), shared_type((True,)), shared_type(("a", 1))
    ('integer', 'number', 'boolean', 'string')
    """
    values = [m for m in members if m is not None]
    if values and all(isinstance(m, bool) for m in values):
        return "boolean"
    if values and all(isinstance(m, int) and not isinstance(m, bool) for m in values):
        return "integer"
    if values and all(isinstance(m, (int, float)) and not isinstance(m, bool) for m in values):
        return "number"
    return "string"


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text: no lone surrogate, so it can be written as UTF-8.

    >>> is_text("Zürich"), is_text("😀"), is_text("\\ud800")
    (True, True, False)
    """
    if value.isascii():  # (a flag CPython keeps on the string: the common case costs no scan)
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: why a value of these Python types may be no JSON value
NOT_TEXT = "not valid Unicode text"
NOT_FINITE = "not a finite number"


def not_json_reason(value: Any) -> str | None:
    """Why the scalar ``value`` is no JSON value (:data:`NOT_TEXT`, :data:`NOT_FINITE`), or ``None``.

    >>> not_json_reason(float("inf")), not_json_reason("\\udfff"), not_json_reason(1e308)
    ('not a finite number', 'not valid Unicode text', None)
    """
    if isinstance(value, str):
        return None if is_text(value) else NOT_TEXT
    if isinstance(value, float) and not math.isfinite(value):
        return NOT_FINITE
    return None


def first_not_json(value: Any) -> tuple[tuple[Any, ...], Any, str] | None:
    """The first value inside ``value`` (itself included) that is no JSON value: its path (keys and
    indexes from ``value``), the value and why; ``None`` when every one is.  Object keys are looked
    at too (a key is text): a bad key's path ends at the key.

    >>> first_not_json({"a": [1, {"b": float("nan")}]})
    (('a', 1, 'b'), nan, 'not a finite number')
    >>> first_not_json({"ok": "fine"}) is None
    True
    """
    for path, item in _walk(value, ()):
        reason = not_json_reason(item)
        if reason is not None:
            return path, item, reason
    return None


def _walk(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every scalar inside ``value`` (keys included) with its path, depth first, in order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), key
            yield from _walk(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))
    else:
        yield path, value


#: a UTF-16 surrogate standing alone in text (a pair would have been one code point)
_SURROGATE = re.compile("[\ud800-\udfff]")


def strict_json(value: Any, **options: Any) -> str:
    """``value`` as strict JSON text (RFC 8259) that encodes to UTF-8: what every writer of results,
    records and command output here writes.  ``options`` go to :func:`json.dumps`.

    What is no JSON value is written as text that says what it was: a NaN or an infinity as
    its name in a string, an integer too long for Python to write as a string naming its size;
    a lone surrogate in a string (or key) as its ``\\u`` escape, so the text stays valid UTF-8.

    >>> strict_json({"x": float("nan"), "y": [float("-inf"), 1.5], "z": "a\\ud800"})
    '{"x": "NaN", "y": ["-Infinity", 1.5], "z": "a\\\\ud800"}'
    >>> strict_json({"k": "Zürich"}, ensure_ascii=False)
    '{"k": "Zürich"}'
    """
    try:
        text = json.dumps(value, allow_nan=False, **options)
    except ValueError:  # a NaN, an infinity, or an integer past Python's digit limit, somewhere inside
        text = json.dumps(as_writable(value), allow_nan=False, **options)
    return text if text.isascii() else _SURROGATE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def as_writable(value: Any) -> Any:
    """``value`` with every non-finite float and every integer too long for Python to write as text
    (``sys.set_int_max_str_digits``) replaced by a string naming it.

    >>> as_writable([float("inf"), 10 ** 5000, "x"])
    ['Infinity', '<an integer of about 5,000 digits>', 'x']
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError:  # longer than Python writes (sys.set_int_max_str_digits)
            return f"<an integer of about {int(value.bit_length() * 0.30103):,} digits>"
        return value
    if isinstance(value, dict):
        return {key: as_writable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_writable(item) for item in value]
    return value


def loads_noting_duplicates(text: str) -> tuple[Any, list[tuple[str, str]]]:
    """``json.loads(text)``, and each key written twice in one object with the path of that object
    (``""`` for the top one).  The value is what JSON readers make of it: the last one wins.

    >>> loads_noting_duplicates('{"name": "f", "arguments": {"v": 5, "v": -1}}')
    ({'name': 'f', 'arguments': {'v': -1}}, [('arguments', 'v')])
    """
    repeated: dict[int, tuple[str, ...]] = {}

    def noting(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        made = dict(pairs)
        if len(made) < len(pairs):
            repeated[id(made)] = keys_twice(pairs)
        return made

    doc = json.loads(text, object_pairs_hook=noting)
    if not repeated:
        return doc, []
    found = []
    for path, item in _containers(doc, ""):
        for key in repeated.get(id(item), ()):
            found.append((path, key))
    return doc, found


def keys_twice(pairs: Iterable[tuple[Any, Any]]) -> tuple[str, ...]:
    """The keys written more than once among ``pairs``, each once, in the order they repeat.

    >>> keys_twice([("a", 1), ("b", 2), ("a", 3), ("b", 4), ("a", 5)])
    ('a', 'b')
    """
    seen: set[Any] = set()
    twice: dict[str, None] = {}
    for key, _ in pairs:
        if key in seen:
            twice[str(key)] = None
        seen.add(key)
    return tuple(twice)


def _containers(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every object and array inside ``value`` (itself included) with its path (``a.b[0]``)."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _containers(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        yield path, value
        for index, item in enumerate(value):
            yield from _containers(item, f"{path}[{index}]")
