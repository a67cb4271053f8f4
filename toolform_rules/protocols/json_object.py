"""json_object: ``{"name": "tool", "arguments": {...}}`` — one JSON object per call.

Grammar: ``grammars/json_object.lark`` (JSON as models write it: single quotes, Python
literals, trailing commas).  The object may stand alone, in a code fence or inside prose;
each JSON value that holds calls is read (one call object, or an array of them for
several calls); more than one value is noted, since json_object asks for one.  (Llama 3
engines read ``{…}; {…}`` as several calls; so do we — the reference reads the first.)
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import GrammarFailure
from .values import balanced_spans, loads_lenient, strip_code_fence

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


def call_from_object(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` of a JSON object that names a tool, else ``None``.

    Reads ``name``/``tool``/``tool_name``/``function`` for the name (``function`` may also
    be an object holding both) and ``arguments``/``parameters``/``args``/``input`` for the
    arguments; arguments written as a JSON string are parsed.  An object with a name and
    no arguments key carries its other keys as the arguments (``{"name": "f", "a": 1}``).

    >>> call_from_object({"name": "f", "arguments": '{"a": 1}'}), call_from_object({"name": "f", "a": 1})
    (('f', {'a': 1}), ('f', {'a': 1}))
    """
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict) and "name" in function:
        return call_from_object(function)
    name_key = next((k for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name_key is None:
        return None
    argument_key = next((k for k in ARGUMENT_KEYS if k in obj), None)
    if argument_key is None:
        arguments: Any = {k: v for k, v in obj.items() if k not in (name_key, "id", "type")}
    else:
        arguments = obj[argument_key]
    if isinstance(arguments, str):
        try:
            arguments = loads_lenient(arguments) if arguments.strip() else {}
        except GrammarFailure:
            arguments = {"_raw": arguments}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {"_raw": arguments}
    return obj[name_key], arguments


def calls_from_value(value: Any) -> list[tuple[str, dict[str, Any]]]:
    """The calls a JSON value holds: one call object, a list of them, or ``{"tool_calls": [...]}``.

    >>> calls_from_value([{"name": "f", "arguments": {}}, {"tool_calls": [{"function": {"name": "g"}}]}])
    [('f', {}), ('g', {})]
    """
    if isinstance(value, list):
        return [call for item in value for call in calls_from_value(item)]
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return calls_from_value(value["tool_calls"])
    found = call_from_object(value)
    return [found] if found is not None else []


def read_json_values(body: str, *, attempts: int = 64,
                     retry_bytes: int = 4096) -> tuple[list[tuple[int, int, list]], GrammarFailure | None]:
    """The JSON values of ``body`` that hold calls: ``(start, end, calls)`` each, in order.

    Top-level ``{…}`` and ``[…]`` groups are read in turn; when one cannot be read (a
    malformed prefix such as ``{"name": "f", "parameters": {{"name": "f", ...}}``), the
    next opening brace inside it is tried, up to ``attempts`` times in all, for groups of at
    most ``retry_bytes`` characters.
    """
    groups: list[tuple[int, int, list]] = []
    failure: GrammarFailure | None = None
    position = 0
    tries = 0
    while position < len(body) and tries < attempts:
        spans = [s for s in (balanced_spans(body[position:], "{", "}", limit=1)
                             + balanced_spans(body[position:], "[", "]", limit=1)) if s]
        if not spans:
            break
        start, end = min(spans)
        start, end = start + position, end + position
        tries += 1
        try:
            calls = calls_from_value(loads_lenient(body[start:end]))
        except GrammarFailure as err:
            failure = failure or err
            if end - start > retry_bytes:  # too long to read again from inside
                position = end
                continue
            position = start + 1  # retry from the next brace inside the unreadable group
            continue
        if calls:
            groups.append((start, end, calls))
            position = end
        else:
            position = start + 1
    return groups, failure


class JsonObject(Protocol):
    info = ProtocolInfo(
        id="json_object",
        name="JSON object",
        description='One JSON object naming the tool and its arguments: {"name": ..., "arguments": {...}}.',
        parallel=False,
    )

    def parse(self, text: str, tools: Toolset | None = None) -> Extraction:
        body, _ = strip_code_fence(text)
        offset = text.find(body) if body else 0
        groups, failure = read_json_values(body)
        notes: list[str] = []
        if not groups:
            if failure is not None:
                notes.append(f"no JSON object could be read: {failure.describe()}")
            return Extraction((), tuple(notes), False)
        if len(groups) > 1:
            notes.append(f"the reply holds {len(groups)} JSON values one after another; all are read "
                         "(json_object asks for one; json_array is the protocol for several calls)")
        raw = tuple(RawCall(name, arguments, (offset + start, offset + end))
                    for start, end, calls in groups for name, arguments in calls)
        between = [body[:groups[0][0]], body[groups[-1][1]:]]
        between += [body[a[1]:b[0]] for a, b in zip(groups, groups[1:])]
        compliant = len(groups) == 1 and all(not part.strip() for part in between)
        return Extraction(raw, tuple(notes), compliant)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        objects = [{"name": c.name, "arguments": c.arguments} for c in calls]
        return json.dumps(objects[0] if len(objects) == 1 else objects, ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ('Reply with exactly one JSON object and no other text: '
                '{"name": "<tool name>", "arguments": {"<argument>": <value>, ...}}')


PROTOCOL = JsonObject()
