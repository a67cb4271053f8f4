"""The one cattrs converter: YAML documents become attrs classes here, at the edge.

Unknown keys are refused, and a structuring failure becomes a :class:`RuleFileError`
(or the error class the caller names) with the file, line and field of the bad value.
"""

from __future__ import annotations

from typing import Any, Mapping, TypeVar, get_origin

import cattrs
from cattrs.cols import (homogenous_tuple_structure_factory, is_mapping, is_sequence, list_structure_factory,
                         mapping_structure_factory)
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

from .errors import LocatedError, RuleFileError
from .field_checks import FieldValueError
from .yamlsource import Located

T = TypeVar("T")

converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)


def _kind(value: Any) -> str:
    """What a YAML value is, in the words a rule file's author uses."""
    if value is None:
        return "null"
    for cls, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                      (list, "a list"), (tuple, "a list"), (Mapping, "a mapping")):
        if isinstance(value, cls):
            return name
    return type(value).__name__


# Strict scalars: cattrs would otherwise call str()/bool()/int() on anything, so that
# ``halts: "false"`` became True, ``order: "3"`` became 3 and ``id: [a]`` became "['a']".
def _strict(expected: tuple[type, ...], what: str) -> Any:
    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            raise TypeError(f"expected {what}, got {_kind(value)} {value!r}")
        return value

    return hook


converter.register_structure_hook(str, _strict((str,), "a string"))
converter.register_structure_hook(bool, _strict((bool,), "a boolean (true or false)"))
converter.register_structure_hook(int, _strict((int,), "an integer"))
converter.register_structure_hook(float, _strict((int, float), "a number"))


def _homogeneous(cls: Any) -> bool:
    args: tuple[Any, ...] = getattr(cls, "__args__", ())
    return get_origin(cls) is list or (get_origin(cls) is tuple and len(args) == 2 and args[1] is Ellipsis)


@converter.register_structure_hook_factory(lambda cls: is_sequence(cls) and _homogeneous(cls))
def _sequence_hook(cls: Any, conv: cattrs.Converter) -> Any:
    """A list (or tuple) only: a string is not read as a list of its characters."""
    inner = (homogenous_tuple_structure_factory if get_origin(cls) is tuple else list_structure_factory)(cls, conv)

    def structure_sequence(value: Any, target: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {_kind(value)} {value!r}")
        return inner(value, target)

    return structure_sequence


@converter.register_structure_hook_factory(lambda cls: is_mapping(cls) and get_origin(cls) is dict)
def _mapping_hook(cls: Any, conv: cattrs.Converter) -> Any:
    """A mapping only."""
    inner = mapping_structure_factory(cls, conv)

    def structure_mapping(value: Any, target: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping, got {_kind(value)} {value!r}")
        return inner(value, target)

    return structure_mapping


def _first_leaf(exc: BaseException, doc: Any, trail: list[Any]) -> tuple[BaseException, Any, list[Any]]:
    """Walk a cattrs exception group down to one concrete failure and the data around it."""
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        notes, inner = exc.group_exceptions()  # (with notes, without)
        for sub, note in notes:
            name = getattr(note, "name", None)
            index = getattr(note, "index", None)
            key = name if name is not None else index
            child = None
            if isinstance(doc, dict) and key in doc:
                child = doc[key]
            elif isinstance(doc, list) and isinstance(key, int) and key < len(doc):
                child = doc[key]
            return _first_leaf(sub, child if child is not None else doc, trail + [(doc, key)])
        if inner:
            return _first_leaf(inner[0], doc, trail)
    return exc, doc, trail


def structure(data: Any, cls: type[T], *, error: type[LocatedError] = RuleFileError, source: str = "<string>",
              field_prefix: str | None = None) -> T:
    """Structure ``data`` into ``cls`` with the one converter; failures name file, line and field.

    ``field_prefix`` starts the failing field's name (a rule's id: ``my.rule.phase``).

    >>> import attrs
    >>> @attrs.frozen
    ... class Point:
    ...     x: int
    >>> structure({"x": 1}, Point)
    Point(x=1)
    """
    try:
        return converter.structure(data, cls)
    except (ClassValidationError, IterableValidationError, ForbiddenExtraKeysError, ValueError, TypeError) as exc:
        leaf, _, trail = _first_leaf(exc, data, [])
        if isinstance(leaf, FieldValueError):  # a validator's refusal: cattrs did not note the field
            trail = trail + [(_container_at(data, trail), leaf.field)]
        field = ".".join(str(k) for k in [field_prefix, *(k for _, k in trail)] if k is not None) or None
        line = column = None
        for container, key in reversed(trail):
            if isinstance(container, Located):
                line, column = container.position_of(key)
                mark = container.value_mark(key) if isinstance(leaf, FieldValueError) else None
                if mark is not None:  # a validator refused the value: point at the value
                    line, column = mark[0], mark[1]
                break
        if isinstance(leaf, ForbiddenExtraKeysError):
            located = _container_at(data, trail)
            extra = sorted(map(str, leaf.extra_fields))
            if isinstance(located, Located):  # the first one written
                extra.sort(key=lambda k: tuple(n or 0 for n in located.position_of(k)))
            if isinstance(located, Located) and extra:
                line, column = located.position_of(extra[0])
            where = f"{field}." if field else ""
            message = f"unknown key {', '.join(repr(e) for e in extra)}"
            return _raise(error, message, source, line, column, f"{where}{extra[0]}" if extra else field)
        message = _describe(leaf)
        return _raise(error, message, source, line, column, field)


def _container_at(data: Any, trail: list[Any]) -> Any:
    node = data
    for _, key in trail:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
    return node


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"required key {exc.args[0]!r} is missing"
    text = str(exc) or type(exc).__name__
    return text


def _raise(error: type[LocatedError], message: str, source: str, line: Any, column: Any, field: Any) -> Any:
    raise error(message, source=source, line=line, column=column, field=field) from None
