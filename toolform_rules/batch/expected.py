"""Grading a reply's calls against the calls that should have been made, BFCL-style.

An expected call is either ``{"name": N, "arguments": {...}}`` (each argument's one right
value) or BFCL's answer-key form ``{N: {argument: [accepted values]}}`` (any listed value
is right; ``""`` in the list means the argument may be left out).  A made call matches an
expected one when it calls the same tool and, after both are normalised as the study
graded them (:func:`~toolform_rules.normalize_call`: numbers from numeric strings, trimmed
and case-folded strings, defaults left out), every argument is equal; an optional argument
may be absent.  Calls match in any order, each expected call to its own made call, and no
call may be left over.  ``expected: []`` means no call is the right answer.
"""

from __future__ import annotations

from typing import Any, Sequence

import attrs

from ..engine.verbs import normalize_call
from ..replies.parse import ParsedCall
from ..schema.names import canonical_name
from ..schema.toolset import Toolset

#: BFCL's mark, in a list of accepted values, for "this argument may be left out"
_MAY_BE_ABSENT = ""


class ExpectedError(ValueError):
    """An ``expected`` value that is not a list of calls."""


@attrs.frozen
class ExpectedCall:
    """One call that should have been made: the tool, each argument's accepted values (normalised), and
    which arguments may be left out."""

    name: str
    accepted: dict[str, tuple[Any, ...]]
    optional: frozenset[str]
    #: the values are a BFCL answer key's (objects in it may be option objects, compared by :func:`fits`)
    answer_key: bool = False

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v[0]!r}" if len(v) == 1 else f"{k} in {list(v)!r}" if v else f"{k} left out"
                          for k, v in self.accepted.items())
        return f"{self.name}({shown})"


def same_value(left: Any, right: Any) -> bool:
    """JSON equality: numbers by value (``1 == 1.0``), but a boolean is never a number.

    >>> same_value(1, 1.0), same_value(True, 1), same_value({"a": [1]}, {"a": [1.0]})
    (True, False, True)
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_value(v, right[k]) for k, v in left.items())
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    return type(left) is type(right) and left == right


def _is_options(value: Any) -> bool:
    """A BFCL option object: an object inside an answer key whose every value is a list of accepted values."""
    return isinstance(value, dict) and bool(value) and all(isinstance(v, list) for v in value.values())


def _same_leaf(made: Any, wanted: Any) -> bool:
    # a value inside an option object is not normalised with its call (the normaliser would read its
    # option lists as values), so text is compared as the normaliser leaves it: trimmed and case-folded
    if isinstance(made, str) and isinstance(wanted, str):
        return made.strip().casefold() == wanted.strip().casefold()
    if isinstance(made, dict) and isinstance(wanted, dict):
        return made.keys() == wanted.keys() and all(_same_leaf(v, wanted[k]) for k, v in made.items())
    if isinstance(made, list) and isinstance(wanted, list):
        return len(made) == len(wanted) and all(map(_same_leaf, made, wanted))
    return same_value(made, wanted)


def fits(made: Any, wanted: Any) -> bool:
    """``made`` is ``wanted``, where ``wanted`` may hold BFCL option objects (each key: accepted values,
    ``""`` for "may be left out").

    >>> fits({"unit": "C", "days": 3}, {"unit": ["c", "celsius"], "days": [3], "hourly": ["", False]})
    True
    >>> fits({"unit": "K"}, {"unit": ["c", "celsius"]})
    False
    """
    if _is_options(wanted):
        if not isinstance(made, dict) or any(key not in wanted for key in made):
            return False
        return all(any(fits(made[key], option) for option in options if option != _MAY_BE_ABSENT)
                   if key in made else (_MAY_BE_ABSENT in options or options == [])
                   for key, options in wanted.items())
    if isinstance(wanted, list) and any(_is_options(item) for item in wanted):
        return isinstance(made, list) and len(made) == len(wanted) and all(map(fits, made, wanted))
    return _same_leaf(made, wanted)


def _normalised(name: str, arguments: dict[str, Any], tools: Toolset) -> tuple[str, dict[str, Any]]:
    tool = tools.get(name)
    if tool is None:
        return canonical_name(name), arguments
    call = normalize_call({"name": name, "arguments": arguments}, tool)
    return tool.name, dict(call.arguments)


def read_expected(expected: Any, tools: Toolset) -> list[ExpectedCall]:
    """The expected calls of a record, normalised against ``tools``; :class:`ExpectedError` if malformed.

    >>> from toolform_rules import sample_toolset
    >>> [c.describe() for c in read_expected([{"legal_draft_v3": {"counterparty": ["Acme"], "value": [5],
    ...                                        "term_months": [12]}}], sample_toolset())]
    ["legal_draft_v3(counterparty='acme', value=5, term_months=12)"]
    """
    if not isinstance(expected, list):
        raise ExpectedError(f'"expected" is a list of calls, not {type(expected).__name__}')
    calls = []
    for index, entry in enumerate(expected):
        if isinstance(entry, dict) and set(entry) == {"name", "arguments"}:
            name, arguments = entry["name"], entry["arguments"]
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise ExpectedError(f'expected call {index}: "name" is a string and "arguments" an object')
            options, answer_key = {key: [value] for key, value in arguments.items()}, False
        elif isinstance(entry, dict) and len(entry) == 1 and isinstance(next(iter(entry.values())), dict):
            (name, options), answer_key = next(iter(entry.items())), True
            if not all(isinstance(values, list) for values in options.values()):
                raise ExpectedError(f"expected call {index} ({name}): each argument's accepted values are a list")
        else:
            raise ExpectedError(f'expected call {index} is neither {{"name", "arguments"}} nor '
                                '{name: {argument: [accepted values]}}')
        calls.append(_expected_call(name, options, tools, answer_key))
    return calls


def _expected_call(name: str, options: dict[str, list[Any]], tools: Toolset, answer_key: bool) -> ExpectedCall:
    """``answer_key``: the values are BFCL's, whose objects may be option objects; else each is the value."""
    tool = tools.get(name)
    required = set(tool.parameters.required) if tool is not None else set()
    optional = {key for key, values in options.items() if _MAY_BE_ABSENT in values or
                (tool is not None and key not in required)}
    accepted: dict[str, list[Any]] = {}
    resolved = canonical_name(name) if tool is None else tool.name
    for key, values in options.items():
        for value in values or [[]]:  # no accepted value at all: BFCL's empty array
            if value == _MAY_BE_ABSENT and key in optional and len(values) > 1:
                continue
            if answer_key and (_is_options(value) or (isinstance(value, list) and any(map(_is_options, value)))):
                accepted.setdefault(key, []).append(value)  # compared by fits(), not normalised
                continue
            resolved, normal = _normalised(name, {key: value}, tools)
            _accept(key, normal, accepted, optional)
    return ExpectedCall(resolved, {k: tuple(v) for k, v in accepted.items()}, frozenset(optional), answer_key)


def _accept(key: str, normal: dict[str, Any], accepted: dict[str, list[Any]], optional: set[str]) -> None:
    """Add one accepted value of ``key``, ``normal`` as the normaliser left ``{key: value}``."""
    if not normal:  # a default or an empty value: normalised away, as absent
        optional.add(key)
        accepted.setdefault(key, [])
    for normal_key, normal_value in normal.items():
        accepted.setdefault(normal_key, []).append(normal_value)
        if normal_key != key and key in optional:
            optional.add(normal_key)


def _mismatch(expected: ExpectedCall, call: ParsedCall) -> str:
    """Why ``call`` is not ``expected`` (``""``: it is)."""
    if call.resolved_name != expected.name:
        return f"calls {call.resolved_name or call.name}, not {expected.name}"
    made = call.normalized_arguments or {}
    equal = fits if expected.answer_key else same_value
    for key, values in expected.accepted.items():
        if key not in made:
            if key not in expected.optional:
                return f"{key} is missing"
            continue
        if values and not any(equal(made[key], value) for value in values):
            wanted = repr(values[0]) if len(values) == 1 else f"one of {list(values)!r}"
            return f"{key} is {made[key]!r}, expected {wanted}"
        if not values:
            return f"{key} is {made[key]!r}, expected it left out"
    extra = [key for key in made if key not in expected.accepted]
    return f"{', '.join(extra)} not expected" if extra else ""


def match_calls(expected: Sequence[ExpectedCall], calls: Sequence[ParsedCall]) -> list[str]:
    """Why the made ``calls`` are not the ``expected`` ones, one line per problem (``[]``: they match).

    Each expected call is paired with its own made call (any order; augmenting paths find a
    pairing whenever one exists).
    """
    if len(calls) != len(expected):
        return [f"{len(calls)} call{'s' * (len(calls) != 1)} made, {len(expected)} expected"]
    fits = [[not _mismatch(want, call) for call in calls] for want in expected]
    owner: list[int | None] = [None] * len(calls)

    def assign(want: int, seen: set[int]) -> bool:
        for made, fit in enumerate(fits[want]):
            if fit and made not in seen:
                seen.add(made)
                holder = owner[made]
                if holder is None or assign(holder, seen):
                    owner[made] = want
                    return True
        return False

    unmatched = [want for want in range(len(expected)) if not assign(want, set())]
    problems = []
    free = [made for made, holder in enumerate(owner) if holder is None]
    for want in unmatched:
        same_tool = [made for made in free if calls[made].resolved_name == expected[want].name]
        if same_tool:
            problems.append(f"{expected[want].describe()}: call {same_tool[0]} "
                            f"{_mismatch(expected[want], calls[same_tool[0]])}")
        else:
            problems.append(f"{expected[want].describe()}: no call to {expected[want].name}")
    return problems
