"""json_object: ``{"name": "tool", "arguments": {...}}`` — one JSON object per call.

Grammar: ``grammars/json_object.lark`` (JSON as models write it: single quotes, Python
literals, trailing commas).  The object may stand alone, in a code fence or inside prose;
the first object that names a tool is the call, and further objects are noted.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from .grammar import GrammarFailure
from .values import balanced_spans, loads_lenient, strip_code_fence

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


def call_from_object(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` of a JSON object that names a tool, else ``None``.

    Reads ``name``/``tool``/``function`` for the name (``function`` may also be an object
    holding both) and ``arguments``/``parameters``/``args``/``input`` for the arguments;
    arguments written as a JSON string are parsed.

    >>> call_from_object({"name": "f", "arguments": '{"a": 1}'})
    ('f', {'a': 1})
    """
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict) and "name" in function:
        return call_from_object(function)
    name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None:
        return None
    arguments: Any = next((obj[k] for k in ARGUMENT_KEYS if k in obj), {})
    if isinstance(arguments, str):
        try:
            arguments = loads_lenient(arguments) if arguments.strip() else {}
        except GrammarFailure:
            arguments = {"_raw": arguments}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {"_raw": arguments}
    return name, arguments


class JsonObject(Protocol):
    info = ProtocolInfo(
        id="json_object",
        name="JSON object",
        description='One JSON object naming the tool and its arguments: {"name": ..., "arguments": {...}}.',
        parallel=False,
    )

    def parse(self, text: str, tools: Toolset | None = None) -> Extraction:
        body, fenced = strip_code_fence(text)
        calls: list[RawCall] = []
        notes: list[str] = []
        failure: GrammarFailure | None = None
        offset = text.find(body) if body else 0
        for start, end in balanced_spans(body):
            try:
                obj = loads_lenient(body[start:end])
            except GrammarFailure as err:
                failure = failure or err
                continue
            found = call_from_object(obj)
            if found is None:
                continue
            calls.append(RawCall(found[0], found[1], (offset + start, offset + end)))
        if len(calls) > 1:
            notes.append(f"the reply holds {len(calls)} JSON objects; json_object reads the first")
            calls = calls[:1]
        if not calls and failure is not None:
            notes.append(f"no JSON object could be read: {failure.describe()}")
        compliant = len(calls) == 1 and calls[0].span is not None and body.strip() == body[
            calls[0].span[0] - offset:calls[0].span[1] - offset].strip()
        return Extraction(tuple(calls), tuple(notes), compliant)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ('Reply with exactly one JSON object and no other text: '
                '{"name": "<tool name>", "arguments": {"<argument>": <value>, ...}}')


PROTOCOL = JsonObject()
