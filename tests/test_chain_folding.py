"""A node's type gate with its numeric bounds or sizes folded into one closure finds what the
plain chain finds: the same findings, in the same order, the same verdict.

``compiler._chain`` folds a :class:`TypeGate` followed by one or two :class:`Bound` or
:class:`Size` records, or by an enum's :class:`Members`, or by an object's required names
(:class:`Present`) and one more check, into one closure (``_gated_bounds``, ``_gated_sizes``,
``_gated_members``, ``_gated_present``); given the
bare checks instead of the records, it runs them one after another.  The records here are
made as the operations make them (a gate that also lets subclasses through its full test,
C operators, reporters that record what they were given), and every kind of value meets
them: of the gate's exact types, of their subclasses, of other types.
"""

from __future__ import annotations

import operator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules.engine.compiler import _chain
from toolform_rules.engine.context import Bound, Members, Present, Size, TypeGate


class Text(str):
    """A subclass: the gate's full test lets it through, its exact-type test does not."""


class Items(list):
    pass


def _reporter(name: str):
    def report(out: list, path: Any, *values: Any) -> bool:
        out.append((name, path, values))
        return True
    return report


def _gate(exact: type) -> TypeGate:
    report = _reporter("type")

    def check(value: Any, path: Any, out: list) -> bool:
        if isinstance(value, exact) and type(value) is not bool:
            return False
        return report(out, path, exact.__name__, type(value).__name__, value)

    return TypeGate(check, frozenset({exact}))


def _size(name: str, too: Any, limit: int, kinds: tuple[type, ...]) -> Size:
    report = _reporter(name)

    def check(value: Any, path: Any, out: list) -> bool:
        if isinstance(value, kinds) and too(len(value), limit):
            return report(out, path, value, limit, len(value))
        return False

    return Size(check, too, limit, report, kinds)


def _bound(name: str, failed: Any, limit: Any) -> Bound:
    report = _reporter(name)

    def check(value: Any, path: Any, out: list) -> bool:
        kind = type(value)
        if (kind is int or kind is float) and failed(value, limit):
            return report(out, path, value, limit)
        return False

    return Bound(check, failed, limit, report, False)


def _both_ways(records: list, value: Any) -> None:
    folded, plain = _chain([(r, i == 0, False) for i, r in enumerate(records)]), \
        _chain([(getattr(r, "check", r), i == 0, False) for i, r in enumerate(records)])
    assert folded.__name__ in ("gate_then_size", "gate_then_sizes", "gate_then_bound", "gate_then_bounds",
                               "gate_then_members", "gate_then_present_then_one")
    assert plain.__name__ in ("gate_then_one", "gate_then_two")
    found_folded: list = []
    found_plain: list = []
    assert folded(value, (None, "x"), found_folded) == plain(value, (None, "x"), found_plain)
    assert found_folded == found_plain


_ANY = st.one_of(st.text(max_size=6), st.text(max_size=6).map(Text), st.lists(st.integers(), max_size=5),
                 st.lists(st.integers(), max_size=5).map(Items), st.lists(st.integers(), max_size=5).map(tuple),
                 st.integers(-5, 5), st.floats(-5, 5), st.booleans(), st.none())


@settings(max_examples=400, deadline=None)
@given(_ANY, st.integers(0, 4), st.integers(0, 4), st.booleans())
def test_a_string_gate_with_its_lengths_folded_finds_what_the_chain_finds(value, low, high, two):
    records = [_gate(str), _size("min_length", operator.lt, low, (str,))]
    if two:
        records.append(_size("max_length", operator.gt, high, (str,)))
    _both_ways(records, value)


@settings(max_examples=400, deadline=None)
@given(_ANY, st.integers(0, 4), st.integers(0, 4), st.booleans())
def test_an_array_gate_with_its_item_counts_folded_finds_what_the_chain_finds(value, low, high, two):
    records = [_gate(list), _size("max_items", operator.gt, high, (list, tuple))]
    if two:
        records.append(_size("min_items", operator.lt, low, (list, tuple)))
    _both_ways(records, value)


@settings(max_examples=400, deadline=None)
@given(_ANY, st.integers(-3, 3), st.integers(-3, 3), st.booleans())
def test_a_number_gate_with_its_bounds_folded_finds_what_the_chain_finds(value, low, high, two):
    records = [_gate(int), _bound("minimum", operator.lt, low)]
    if two:
        records.append(_bound("maximum", operator.gt, high))
    _both_ways(records, value)


def test_sizes_are_not_folded_into_a_gate_whose_types_they_do_not_measure():
    """A gate passing integers, then a string length: the length is not about the gate's types,
    so the chain stays plain (and still finds what it should)."""
    records = [_gate(int), _size("min_length", operator.lt, 3, (str,))]
    folded = _chain([(r, i == 0, False) for i, r in enumerate(records)])
    assert folded.__name__ not in ("gate_then_size", "gate_then_sizes")
    out: list = []
    assert folded("ab", (None, "x"), out) and [name for name, _, _ in out] == ["type"]


def _members(members: tuple) -> Members:
    """An enum as the operation makes it: exact strings first, then a looser test (here: any case)."""
    report = _reporter("enum")
    exact = frozenset(m for m in members if type(m) is str)
    lowered = {str(m).lower() for m in members}

    def check(value: Any, path: Any, out: list) -> bool:
        if type(value) is str and value in exact:
            return False
        if isinstance(value, str) and value.lower() in lowered or value in members:
            return False
        return report(out, path, value, list(members))

    return Members(check, exact)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_ANY, st.sampled_from(["draft", "DRAFT", "Draft", "signed", "5"]),
                 st.sampled_from(["draft", "signed"]).map(Text)),
       st.lists(st.one_of(st.sampled_from(["draft", "signed", "5", ""]), st.integers(0, 5)), min_size=1, max_size=4))
def test_a_string_gate_with_its_enum_folded_finds_what_the_chain_finds(value, members):
    _both_ways([_gate(str), _members(tuple(members))], value)


def test_an_enum_is_not_folded_into_a_gate_that_does_not_pass_strings():
    """A gate passing integers, then an enum with string members: a string must still meet the
    gate (and fail it), so the chain stays plain."""
    folded = _chain([(_gate(int), True, False), (_members(("a", 1)), False, False)])
    assert folded.__name__ != "gate_then_members"
    out: list = []
    assert folded("a", (None, "x"), out) and [name for name, _, _ in out] == ["type"]


class Mapping_(dict):
    """A dict subclass: the gate's full test lets it through, its exact-type test does not."""


def _present(names: tuple) -> Present:
    """``required`` as the operation makes it (a key counts whatever its case, as the study's canonical names)."""
    report = _reporter("required")
    wanted = frozenset(names)

    def check(value: Any, path: Any, out: list) -> bool:
        if not isinstance(value, dict) or value.keys() >= wanted:
            return False
        given = {str(k).lower() for k in value}
        failed = False
        for name in names:
            if name not in value and name.lower() not in given:
                failed = report(out, (path, name), name)
        return failed

    return Present(check, wanted)


def _walk(value: Any, path: Any, out: list) -> bool:
    """A stand-in for ``properties``: reports each key that is not a string of letters."""
    failed = False
    if isinstance(value, dict):
        for key in value:
            if not (isinstance(key, str) and key.isalpha()):
                out.append(("walk", path, (key,)))
                failed = True
    return failed


_OBJECTS = st.dictionaries(st.sampled_from(["a", "b", "A", "c", "1"]), st.integers(0, 3), max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_ANY, _OBJECTS, _OBJECTS.map(Mapping_)), st.lists(st.sampled_from(["a", "b", "c"]), max_size=3,
                                                                  unique=True))
def test_an_object_gate_with_its_required_names_folded_finds_what_the_chain_finds(value, names):
    _both_ways([_gate(dict), _present(tuple(names)), _walk], value)


def test_required_names_are_not_folded_into_a_gate_that_does_not_pass_objects():
    """A gate passing lists, then required names: an object must still meet the gate (and fail it)."""
    folded = _chain([(_gate(list), True, False), (_present(("a",)), False, False), (_walk, False, False)])
    assert folded.__name__ != "gate_then_present_then_one"
    out: list = []
    assert folded({"a": 1}, (None, "x"), out) and [name for name, _, _ in out] == ["type"]
