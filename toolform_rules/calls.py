"""A tool call as the API takes it: a name, arguments and an optional call id."""

from __future__ import annotations

import json
from typing import Any, Mapping

import attrs

from .errors import CallError


@attrs.frozen
class ToolCall:
    """One call: ``name(arguments)``.  Never modified by anything in toolform_rules.

    >>> ToolCall.from_mapping({"name": "f", "arguments": '{"a": 1}'})
    ToolCall(name='f', arguments={'a': 1}, call_id=None)
    """

    name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)
    call_id: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "ToolCall":
        """Read a call from a mapping: ``name`` (or ``tool``/``function``) and ``arguments`` (or ``args``/``parameters``/``input``).

        An OpenAI ``tool_calls`` entry (``{"id", "type": "function", "function": {"name",
        "arguments"}}``) and an Anthropic ``tool_use`` block (``{"name", "input"}``) are read too.

        Arguments given as JSON text are parsed; arguments that are not an object are kept
        under the key ``_raw``, where validation reports them as an unknown argument.
        """
        function = data.get("function")
        if isinstance(function, Mapping) and "name" not in data:  # an OpenAI tool_calls entry
            data = {**function, **{k: v for k, v in data.items() if k != "function"}}
        name = _first_present(data, ("name", "tool", "function"), "")
        raw = _first_present(data, ("arguments", "args", "parameters", "input"), None)
        call_id = _first_present(data, ("call_id", "id"), None)
        return cls(name=name if isinstance(name, str) else "", arguments=arguments_of(raw),
                   call_id=call_id if isinstance(call_id, str) else None)

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "arguments"}``, plus ``call_id`` when there is one."""
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.call_id is not None:
            out["call_id"] = self.call_id
        return out


def _first_present(data: Mapping[str, Any], keys: tuple[str, ...], default: Any) -> Any:
    for key in keys:
        if key in data:
            return data[key]
    return default


def arguments_of(raw: Any) -> Any:
    """A call's arguments as an object: JSON text parsed, nothing given as ``{}``, anything else under ``_raw``.

    >>> arguments_of(None), arguments_of('{"a": 1}'), arguments_of("not json"), arguments_of([1])
    ({}, {'a': 1}, {'_raw': 'not json'}, {'_raw': [1]})
    """
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            return {"_raw": raw}
        return parsed if isinstance(parsed, dict) else {"_raw": parsed}
    return {"_raw": raw}


def as_call(call: Any) -> tuple[Any, Any, str | None]:
    """``(name, arguments, call_id)`` of a ToolCall or a mapping; anything else is a :class:`CallError`."""
    if isinstance(call, ToolCall):
        return call.name, call.arguments, call.call_id
    if isinstance(call, Mapping):
        parsed = ToolCall.from_mapping(call)
        return parsed.name, parsed.arguments, parsed.call_id
    raise CallError(f"a call is a ToolCall or a mapping with 'name' and 'arguments', got {type(call).__name__}")
