"""The one cattrs converter: YAML documents become attrs classes here, at the edge.

Unknown keys are refused, and a structuring failure becomes a :class:`RuleFileError`
(or the error class the caller names) with the file, line and field of the bad value.
"""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

from .errors import LocatedError, RuleFileError
from .yamlsource import Located

T = TypeVar("T")

converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)


def _first_leaf(exc: BaseException, doc: Any, trail: list[Any]) -> tuple[BaseException, Any, list[Any]]:
    """Walk a cattrs exception group down to one concrete failure and the data around it."""
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        inner, notes = exc.group_exceptions()
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


def structure(data: Any, cls: type[T], *, error: type[LocatedError] = RuleFileError, source: str = "<string>") -> T:
    """Structure ``data`` into ``cls`` with the one converter; failures name file, line and field.

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
        field = ".".join(str(k) for _, k in trail if k is not None) or None
        line = column = None
        for container, key in reversed(trail):
            if isinstance(container, Located):
                line, column = container.position_of(key)
                break
        if isinstance(leaf, ForbiddenExtraKeysError):
            extra = sorted(map(str, leaf.extra_fields))
            located = _container_at(data, trail)
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
