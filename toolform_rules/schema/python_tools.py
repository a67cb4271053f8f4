"""Tools from Python functions: signatures, type hints and docstrings → tool definitions.

(Being written: see ``read_python`` and ``tool`` below for the interface ``load_tools`` uses.)
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from ..limits import DEFAULT_LIMITS, Limits


@attrs.frozen
class PythonTools:
    """What :func:`read_python` found: ``entries`` as ``(where, tool definition)`` pairs (the definition in
    the bare OpenAI shape ``{"name", "description", "parameters"}``, its parameters JSON Schema 2020-12),
    the functions by tool name, and the source's name (a file path, a module name, ``<object>``)."""

    entries: list[tuple[str, dict[str, Any]]]
    executors: dict[str, Callable[..., Any]]
    source: str


def tool(fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
         description: str | None = None) -> Any:
    """Mark a function as a tool (bare ``@tool`` or ``@tool(name=..., description=...)``)."""
    raise NotImplementedError


def read_python(obj: Any, *, only_decorated: bool | None = None, limits: Limits = DEFAULT_LIMITS) -> PythonTools:
    """The tools of a module object, a dotted module name, a ``.py`` path, a function or a list of functions."""
    raise NotImplementedError
