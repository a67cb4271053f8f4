"""Comparing values and calls: one function per meaning of "the same".

* :func:`identical` — what a format that writes typed literals must give back: the same
  Python types all the way down (``True`` is not ``1``, ``3`` is not ``3.0``), the sign of
  zero kept, object keys in the same order unless ``key_order=False``.
* :func:`equal_json` — what a format that writes values as text can give back: equal as
  JSON values (``3 == 3.0``, written ``3`` either way), booleans apart from numbers, object
  keys in any order.
* :func:`equal_up_to_rounding` — the reference's normalised values against ours, whose
  canonical form rounds before its integral test (see test_divergences.py).

NaN is taken as itself everywhere (no JSON reply holds one; a policy expression can make one).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

Compare = Callable[[Any, Any], bool]


def _nan(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def identical(a: Any, b: Any, *, key_order: bool = True) -> bool:
    """Equal with the same types all the way down and the sign of zero kept.

    >>> identical({"a": 1, "b": [True, -0.0]}, {"a": 1, "b": [True, -0.0]})
    True
    >>> identical(3, 3.0), identical(1, True), identical(0.0, -0.0), identical([1], (1,))
    (False, False, False, False)
    >>> identical({"a": 1, "b": 2}, {"b": 2, "a": 1}), identical({"a": 1, "b": 2}, {"b": 2, "a": 1}, key_order=False)
    (False, True)
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return _nan(a, b) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    if isinstance(a, dict):
        if (list(a) != list(b)) if key_order else (a.keys() != b.keys()):
            return False
        return all(identical(a[k], b[k], key_order=key_order) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(identical(x, y, key_order=key_order) for x, y in zip(a, b))
    return bool(a == b)


def equal_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, booleans apart from numbers, keys in any order.

    >>> equal_json({"a": 3, "b": [1.5]}, {"b": [1.5], "a": 3.0}), equal_json(0.0, -0.0)
    (True, True)
    >>> equal_json(1, True), equal_json("1", 1), equal_json(None, "null"), equal_json([1], (1,))
    (False, False, False, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or _nan(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def equal_up_to_rounding(ours: Any, ref: Any, tolerance: float = 1e-9) -> bool:
    """:func:`identical`, except that two numbers of which one is a float may differ by ``tolerance``.

    >>> equal_up_to_rounding({"v": 3}, {"v": 3.0000000001}), equal_up_to_rounding([2.0], [2.5])
    (True, False)
    >>> equal_up_to_rounding(True, 1), equal_up_to_rounding(3, 3)
    (False, True)
    """
    if isinstance(ours, dict) and isinstance(ref, dict):
        return list(ours) == list(ref) and all(equal_up_to_rounding(ours[k], ref[k], tolerance) for k in ours)
    if isinstance(ours, list) and isinstance(ref, list):
        return len(ours) == len(ref) and all(equal_up_to_rounding(a, b, tolerance) for a, b in zip(ours, ref))
    numbers = (int, float)
    if (isinstance(ours, numbers) and isinstance(ref, numbers) and not isinstance(ours, bool)
            and not isinstance(ref, bool) and float in (type(ours), type(ref))):
        return abs(ours - ref) <= tolerance
    return identical(ours, ref)


def same_calls(got: Sequence[tuple[str, Any]], want: Sequence[tuple[str, Any]], values: Compare = identical) -> bool:
    """The same calls in the same order: names equal, arguments the same by ``values``.

    >>> same_calls([("f", {"a": 3})], [("f", {"a": 3.0})]), same_calls([("f", {"a": 3})], [("f", {"a": 3.0})], equal_json)
    (False, True)
    """
    return len(got) == len(want) and all(g[0] == w[0] and values(g[1], w[1]) for g, w in zip(got, want))
