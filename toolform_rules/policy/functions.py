"""The functions constraint expressions may call: one plain function each, registered once.

A :class:`Function` says which kinds of value each parameter accepts and which kind it
returns (the load-time checker reads this), how much a call costs (the evaluation
budget reads this) and which parameters must be written as literals (a ``matches``
pattern is compiled when the policy loads, never taken from a model's value).  The
evaluator checks kinds before calling, so each implementation receives what it declares.

Adding a function is this file only: write it, decorate it with :func:`function`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import attrs

from ..errors import EvaluationError
from ..jsonvalues import EXACT_TYPES, json_equal
from . import locations

ANY = frozenset(("null", "boolean", "number", "string", "array", "object"))
BOOLEAN, NUMBER, STRING = frozenset(("boolean",)), frozenset(("number",)), frozenset(("string",))


def kind_of(value: Any) -> str:
    """A value's kind in JSON's words: null, boolean, number, string, array or object.

    >>> kind_of(True), kind_of(3), kind_of("x"), kind_of([1]), kind_of({}), kind_of(None)
    ('boolean', 'number', 'string', 'array', 'object', 'null')
    """
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
    for cls, name in ((bool, "boolean"), (int, "number"), (float, "number"), (str, "string"),
                      (list, "array"), (tuple, "array"), (dict, "object")):
        if isinstance(value, cls):
            return name
    return type(value).__name__


_KINDS = {int: "number", float: "number", str: "string", list: "array", tuple: "array", dict: "object"}


def describe(value: Any, limit: int = 40) -> str:
    """A value as a message shows it: JSON-like, shortened."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    try:
        text = repr(value) if isinstance(value, str) else str(value)
    except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        text = "(an integer too large to show)" if isinstance(value, int) else "(too large to show)"
    return text if len(text) <= limit else text[:limit - 3] + "..."


@attrs.frozen
class Function:
    """One callable of the expression language."""

    name: str
    parameters: tuple[frozenset[str], ...]
    returns: frozenset[str]
    implementation: Callable[..., Any]
    #: cost units of one call, given its arguments (beyond the node's own unit)
    cost: Callable[..., int] | None = None
    #: positions of parameters that must be literal strings, checked by ``prepare`` at load
    literal: tuple[int, ...] = ()
    prepare: Callable[[str], Any] | None = None
    doc: str = ""


FUNCTIONS: dict[str, Function] = {}


def function(name: str, parameters: tuple[frozenset[str], ...], returns: frozenset[str], *,
             cost: Callable[..., int] | None = None, literal: tuple[int, ...] = (),
             prepare: Callable[[str], Any] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``name`` (the one place a function is added)."""
    def register(implementation: Callable[..., Any]) -> Callable[..., Any]:
        if name in FUNCTIONS:
            raise ValueError(f"function {name} registered twice")
        doc = (implementation.__doc__ or "").strip().split("\n")[0]
        FUNCTIONS[name] = Function(name, parameters, returns, implementation, cost, literal, prepare, doc)
        return implementation
    return register


def _text_cost(first: Any, second: Any = None) -> int:
    """One unit per 64 characters read."""
    size = len(first) if isinstance(first, str) else 0
    if isinstance(second, str):
        size += len(second)
    return size >> 6


#: Where :func:`nested_size` stops counting: ten times the default evaluation budget, so that a
#: value this large is refused by its cost before it is walked, and counting it costs a bounded walk.
NESTED_SIZE_LIMIT = 1 << 20

_CONTAINERS = (list, tuple, dict)


def nested_size(value: Any, limit: int = NESTED_SIZE_LIMIT) -> int:
    """How many values a list or object holds at every depth (a flat list: its length; a scalar: 0).

    What a deep comparison may walk: ``limit + 1`` once the count passes ``limit``, so the count
    itself never walks more than ``limit`` values, however large (or shared) the value is.

    >>> nested_size([1, [2, 3], {"a": [4]}]), nested_size("text"), nested_size([[0] * 10] * 10, limit=50)
    (7, 0, 51)
    """
    count = 0
    stack = [value]
    while stack:
        current = stack.pop()
        children = current.values() if isinstance(current, dict) else current if isinstance(current, _CONTAINERS) \
            else ()
        count += len(children)
        if count > limit:
            return limit + 1
        stack.extend(child for child in children if isinstance(child, _CONTAINERS))
    return count


def _search_cost(container: Any, item: Any) -> int:
    """What looking for ``item`` in ``container`` costs: a list's length, or all it holds when the item is
    itself a list or object (each member is then compared deeply); a string's characters."""
    if isinstance(container, (list, tuple)):
        return nested_size(container) if isinstance(item, _CONTAINERS) else len(container)
    return _text_cost(container, item)


STRING_OR_ARRAY = frozenset(("string", "array"))


@function("len", (frozenset(("string", "array", "object")),), NUMBER)
def length(value: Any) -> int:
    """The number of characters of a string, items of a list or keys of an object."""
    return len(value)


@function("lower", (STRING,), STRING, cost=_text_cost)
def lower(value: str) -> str:
    """The string in lower case."""
    return value.lower()


@function("upper", (STRING,), STRING, cost=_text_cost)
def upper(value: str) -> str:
    """The string in upper case."""
    return value.upper()


@function("trim", (STRING,), STRING, cost=_text_cost)
def trim(value: str) -> str:
    """The string without leading and trailing white space."""
    return value.strip()


@function("startswith", (STRING, STRING), BOOLEAN, cost=_text_cost)
def startswith(value: str, prefix: str) -> bool:
    """Whether the string starts with the prefix."""
    return value.startswith(prefix)


@function("endswith", (STRING, STRING), BOOLEAN, cost=_text_cost)
def endswith(value: str, suffix: str) -> bool:
    """Whether the string ends with the suffix."""
    return value.endswith(suffix)


@function("contains", (STRING_OR_ARRAY, ANY), BOOLEAN, cost=_search_cost)
def contains(container: Any, item: Any) -> bool:
    """Whether a string holds a substring, or a list holds an item (``item in container``)."""
    if isinstance(container, str):
        if not isinstance(item, str):
            raise EvaluationError(f"contains() looks for a string in a string, not a {kind_of(item)}", kind="type")
        return item in container
    return any(json_equal(item, member) for member in container)


class LinearPattern:
    """A pattern compiled by RE2, asked only whether it matches somewhere (linear in the subject's length)."""

    def __init__(self, compiled: Any, unanchored: Any) -> None:
        self._compiled = compiled
        # RE2's own matcher, without the Python wrapper's span bookkeeping (five times slower);
        # the wrapper's ``search`` stays the fallback should a release rename the internals.
        raw = getattr(compiled, "_regexp", None)
        self._match = getattr(raw, "Match", None) if unanchored is not None else None
        self._unanchored = unanchored

    def found_in(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``."""
        if self._match is not None:
            encoded = text.encode("utf-8", "surrogatepass")
            return bool(self._match(self._unanchored, encoded, 0, len(encoded))[0] != (-1, -1))
        return self._compiled.search(text) is not None


@functools.lru_cache(maxsize=1024)
def compiled_pattern(pattern: str) -> LinearPattern:
    """A ``matches`` pattern compiled by RE2, whose matching time is linear in the subject.

    RE2 refuses what it cannot match in linear time (back-references, look-around), so
    such a pattern is refused when the policy loads.
    """
    import re2  # google-re2: linear-time matching, whatever the subject

    options = re2.Options()
    options.log_errors = False
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as err:
        reason = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        raise ValueError(f"not a pattern RE2 can match in linear time: {reason}") from None
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    return LinearPattern(compiled, anchor)


@function("matches", (STRING, STRING), BOOLEAN, cost=_text_cost, literal=(1,), prepare=compiled_pattern)
def matches(value: str, pattern: str) -> bool:
    """Whether the pattern (RE2 syntax, unanchored: use ``^…$`` for a whole match) matches the string."""
    try:
        compiled = compiled_pattern(pattern)
    except ValueError as err:  # refused at load; reached only by an expression that was never checked
        raise EvaluationError(f"matches() cannot use the pattern {describe(pattern)}: {err}", kind="value") from None
    return compiled.found_in(value)


@function("path_within", (STRING, STRING), BOOLEAN, cost=lambda p, r: 1 + _text_cost(p, r) * 8)
def path_within(path: str, root: str) -> bool:
    """Whether the path lies at or under the root, resolved lexically (``..``, ``//``, encoded dots refused)."""
    return locations.path_within(path, root)


@function("email_domain", (STRING,), STRING, cost=_text_cost)
def email_domain(address: str) -> str:
    """The lower-cased domain of an e-mail address (after its last ``@``)."""
    return locations.email_domain(address)


@function("url_host", (STRING,), STRING, cost=_text_cost)
def url_host(url: str) -> str:
    """The lower-cased host of a URL (no user, port or brackets)."""
    return locations.url_host(url)


@function("url_scheme", (STRING,), STRING, cost=_text_cost)
def url_scheme(url: str) -> str:
    """The lower-cased scheme of a URL."""
    return locations.url_scheme(url)


@function("is_ip", (STRING,), BOOLEAN, cost=_text_cost)
def is_ip(text: str) -> bool:
    """Whether the text is an IP address as ``ip_is_private`` reads it (so a host name can be told apart)."""
    try:
        locations.ip_is_private(text)
    except EvaluationError:
        return False
    return True


@function("ip_is_private", (STRING,), BOOLEAN, cost=_text_cost)
def ip_is_private(address: str) -> bool:
    """Whether an IP address is not publicly routable (private, loopback, link-local...)."""
    return locations.ip_is_private(address)


# --- the operators' semantics, shared by both evaluators ---------------------------------------

def order(op: str, left: Any, right: Any) -> bool:
    """``<``, ``<=``, ``>``, ``>=`` between two numbers or two strings."""
    left_kind, right_kind = kind_of(left), kind_of(right)
    if left_kind != right_kind or left_kind not in ("number", "string"):
        raise EvaluationError(f"cannot compare {left_kind} {describe(left)} {op} {right_kind} {describe(right)}",
                              kind="type")
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def membership(item: Any, container: Any) -> bool:
    """``item in container``: a list's member, a string's substring, an object's key."""
    kind = kind_of(container)
    if kind == "array":
        return any(json_equal(item, member) for member in container)
    if kind in ("string", "object"):
        if not isinstance(item, str):
            raise EvaluationError(f"'in' looks for a string in a {kind}, not a {kind_of(item)}", kind="type")
        return item in container
    raise EvaluationError(f"'in' needs a list, a string or an object on its right, not {kind} {describe(container)}",
                          kind="type")


def comparison_cost(op: str, left: Any, right: Any) -> int:
    """What a comparison costs beyond its unit: the list ``in`` searches, the lists or objects ``==`` walks
    (at every depth: ``[[...a million...]] == [[...]]`` is one item long, and a million deep).

    >>> comparison_cost("in", 1, [1, 2, 3]), comparison_cost("in", [1], [[1], [2, 3]])
    (3, 5)
    >>> comparison_cost("==", [[0] * 1000], [[0] * 1000]), comparison_cost("==", [1, 2], [[0] * 1000])
    (1001, 2)
    """
    if op in ("in", "not in"):
        if isinstance(right, (list, tuple)):
            return nested_size(right) if isinstance(left, _CONTAINERS) else len(right)
        return len(right) >> 6 if isinstance(right, str) else 0
    if op in ("==", "!=") and isinstance(left, _CONTAINERS) and isinstance(right, _CONTAINERS):
        size = nested_size(left)
        return min(size, nested_size(right, size))  # the count of the larger side stops at the smaller's
    return 0


def compare(op: str, left: Any, right: Any) -> bool:
    """One comparison operator."""
    if op == "==":
        return json_equal(left, right)
    if op == "!=":
        return not json_equal(left, right)
    if op == "in":
        return membership(left, right)
    if op == "not in":
        return not membership(left, right)
    return order(op, left, right)


def arithmetic(op: str, left: Any, right: Any) -> Any:
    """``+`` on two numbers, strings or lists; ``-``, ``*``, ``/`` on two numbers."""
    left_kind, right_kind = kind_of(left), kind_of(right)
    if op == "+" and left_kind == right_kind and left_kind in ("string", "array"):
        return list(left) + list(right) if left_kind == "array" else left + right
    if left_kind != "number" or right_kind != "number":
        raise EvaluationError(f"cannot compute {left_kind} {describe(left)} {op} {right_kind} {describe(right)}",
                              kind="type")
    try:
        return _number_arithmetic(op, left, right)
    except OverflowError:  # a float beside an integer too large for one (1.5 * 10**400, 10**400 / 3)
        raise EvaluationError(f"the result of '{op}' is too large to compute", kind="value") from None


def _number_arithmetic(op: str, left: Any, right: Any) -> Any:
    if op == "-":
        return left - right
    if op == "*":
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > 4096:
            raise EvaluationError("the product is too large to compute", kind="value")
        return left * right
    if op == "+":
        return left + right
    if right == 0:
        raise EvaluationError(f"division by zero: {describe(left)} / 0", kind="value")
    return left / right


def arithmetic_cost(op: str, left: Any, right: Any) -> int:
    """What ``+`` costs beyond its unit: the length of the strings or lists it joins."""
    if op == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
        size = len(left) + len(right)
        return size >> 6 if isinstance(left, str) else size
    return 0


def negate(value: Any) -> Any:
    """Unary minus, on a number."""
    if kind_of(value) != "number":
        raise EvaluationError(f"cannot negate {kind_of(value)} {describe(value)}", kind="type")
    return -value


def truth(value: Any, what: str) -> bool:
    """A value that must be a boolean (``and``, ``or``, ``not``, ``when``, ``check``, quantifier bodies)."""
    if value is True or value is False:
        return value
    raise EvaluationError(f"{what} must be true or false, not {kind_of(value)} {describe(value)}", kind="type")


def member(value: Any, key: str, where: str) -> Any:
    """``value.key``: an object's member."""
    if type(value) is dict or isinstance(value, dict):
        try:
            return value[key]
        except KeyError:
            raise EvaluationError(f"{where}.{key} is missing", kind="missing") from None
    raise EvaluationError(f"{where} is {kind_of(value)} {describe(value)}, not an object with .{key}", kind="type")


def item(value: Any, index: Any, where: str) -> Any:
    """``value[index]``: a list's item (negative counts from the end) or an object's member."""
    kind = kind_of(value)
    if kind == "array" and kind_of(index) == "number" and isinstance(index, int):
        if -len(value) <= index < len(value):
            return value[index]
        raise EvaluationError(f"{where}[{index}] is missing: the list has {len(value)} items", kind="missing")
    if kind == "object" and isinstance(index, str):
        if index in value:
            return value[index]
        raise EvaluationError(f"{where}[{index!r}] is missing", kind="missing")
    raise EvaluationError(f"cannot index {kind} {where} with {kind_of(index)} {describe(index)}", kind="type")


def exact_types(kinds: frozenset[str]) -> frozenset[type]:
    """The Python types whose values are surely of these kinds (a subclass takes the slow, exact check)."""
    return frozenset().union(*(EXACT_TYPES.get(kind, ()) for kind in kinds))


def check_arguments(fn: Function, arguments: list[Any]) -> None:
    """Refuse arguments of kinds the function does not take (before its cost is reckoned or it runs)."""
    if len(arguments) != len(fn.parameters):
        raise EvaluationError(f"{fn.name}() takes {len(fn.parameters)} arguments, not {len(arguments)}", kind="type")
    for position, (value, accepted) in enumerate(zip(arguments, fn.parameters), start=1):
        if kind_of(value) not in accepted:
            wanted = " or ".join(sorted(accepted))
            raise EvaluationError(f"{fn.name}() wants {wanted} as argument {position}, got {kind_of(value)} "
                                  f"{describe(value)}", kind="type")
