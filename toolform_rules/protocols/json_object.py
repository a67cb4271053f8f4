"""json_object: ``{"name": "tool", "arguments": {...}}`` — one JSON object per call.

Grammar: ``grammars/json_object.lark`` (JSON as models write it: single quotes, Python
literals, trailing commas).  The object may stand alone, in a code fence or inside prose;
each JSON value that holds calls is read (one call object, or an array of them for
several calls); more than one value is noted, since json_object asks for one.  (Llama 3
engines read ``{…}; {…}`` as several calls; so do we — the reference reads the first.)
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import GrammarFailure
from .values import _MISSING, TOO_DEEP, GrammarBudget, bracket_groups, json_value, loads_lenient, strip_code_fence

GRAMMAR = "json_object"

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


def call_from_object(obj: Any, *, budget: GrammarBudget | None = None) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` of a JSON object that names a tool, else ``None``.

    Reads ``name``/``tool``/``tool_name``/``function`` for the name (``function`` may also
    be an object holding both) and ``arguments``/``parameters``/``args``/``input`` for the
    arguments; arguments written as a JSON string are parsed (strict JSON, the lenient fast
    path, then the grammar within ``budget``, the reply's :class:`GrammarBudget`).  An
    object with a name and no arguments key carries its other keys as the arguments
    (``{"name": "f", "a": 1}``).

    >>> call_from_object({"name": "f", "arguments": '{"a": 1}'}), call_from_object({"name": "f", "a": 1})
    (('f', {'a': 1}), ('f', {'a': 1}))
    """
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict) and "name" in function:
        return call_from_object(function, budget=budget)
    name_key = next((k for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name_key is None:
        return None
    argument_key = next((k for k in ARGUMENT_KEYS if k in obj), None)
    if argument_key is None:
        arguments: Any = {k: v for k, v in obj.items() if k not in (name_key, "id", "type")}
    else:
        arguments = obj[argument_key]
    if isinstance(arguments, str):
        arguments = _arguments_text(arguments, budget) if arguments.strip() else {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {"_raw": arguments}
    return obj[name_key], arguments


def _arguments_text(text: str, budget: GrammarBudget | None) -> Any:
    """Arguments written as a JSON string: strict JSON, the lenient fast path, the grammar; else ``{"_raw": text}``."""
    value = json_value(text)
    if value is not _MISSING:
        return value
    try:
        (GrammarBudget.of(DEFAULT_LIMITS) if budget is None else budget).spend(GRAMMAR, text)
        return loads_lenient(text, GRAMMAR)
    except GrammarFailure:
        return {"_raw": text}


def calls_from_value(value: Any, *, budget: GrammarBudget | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The calls a JSON value holds: one call object, a list of them, or ``{"tool_calls": [...]}``.

    >>> calls_from_value([{"name": "f", "arguments": {}}, {"tool_calls": [{"function": {"name": "g"}}]}])
    [('f', {}), ('g', {})]
    """
    if isinstance(value, list):
        return [call for item in value for call in calls_from_value(item, budget=budget)]
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return calls_from_value(value["tool_calls"], budget=budget)
    found = call_from_object(value, budget=budget)
    return [found] if found is not None else []


class _Groups:
    """The top-level groups of one kind of bracket that a scan from some position finds, each found once.

    ``first_from(position)`` is the first group a scan starting at ``position`` finds.  The
    groups of the last scan are kept: when ``position`` is past its start and not inside one
    of them, the answer is among them (a scan from outside any group finds the same groups);
    only a position inside a group (a retry inside one that did not read) starts a new scan.
    Groups nested deeper than ``depth`` give the complete groups inside them instead.
    """

    __slots__ = ("text", "opener", "closer", "depth", "origin", "found", "index", "scan", "too_deep")

    def __init__(self, text: str, opener: str, closer: str, depth: int) -> None:
        self.text, self.opener, self.closer, self.depth = text, opener, closer, depth
        self.origin = -1
        self.found: list[tuple[int, int]] = []
        self.index = 0
        self.scan: Iterator[tuple[int, int, int]] | None = None
        self.too_deep: list[int] = []

    def _restart(self, position: int) -> None:
        self.origin, self.found, self.index = position, [], 0
        self.scan = bracket_groups(self.text, position, openers=self.opener, closers=self.closer, depth=self.depth)

    def _next(self) -> bool:
        """Find one more group of the current scan; ``False`` when it has none left."""
        for begin, end, what in self.scan or ():
            if what == TOO_DEEP:
                if begin not in self.too_deep:
                    self.too_deep.append(begin)
                continue
            self.found.append((begin, end))
            return True
        self.scan = None
        return False

    def first_from(self, position: int) -> tuple[int, int] | None:
        if position < self.origin or self.origin < 0:
            self._restart(position)
        while True:
            while self.index < len(self.found) and self.found[self.index][1] <= position:
                self.index += 1
            if self.index == len(self.found) and not self._next():
                return None
            begin, end = self.found[self.index]
            if end <= position:
                continue
            if begin >= position:
                return begin, end
            self._restart(position)  # ``position`` is inside this group: scan again from there


def read_json_values(body: str, *, attempts: int = 64, retry_bytes: int = 4096, limits: Limits = DEFAULT_LIMITS,
                     budget: GrammarBudget | None = None
                     ) -> tuple[list[tuple[int, int, list]], GrammarFailure | None, list[int]]:
    """The JSON values of ``body`` that hold calls: ``(start, end, calls)`` each, in order.

    Top-level ``{…}`` and ``[…]`` groups are read in turn; when one cannot be read (a
    malformed prefix such as ``{"name": "f", "parameters": {{"name": "f", ...}}``), the
    next opening brace inside it is tried, up to ``attempts`` times in all, for groups of at
    most ``retry_bytes`` characters.  Each scan of the reply is made once (see
    :class:`_Groups`); a group nested deeper than twice ``limits.max_depth`` is not read as a
    whole, its complete groups are (their start is the third thing returned).  Each group
    is read by strict JSON, then the lenient fast path, then the grammar within ``budget``.
    """
    budget = GrammarBudget.of(limits) if budget is None else budget
    depth = 2 * limits.max_depth
    kinds = (_Groups(body, "{", "}", depth), _Groups(body, "[", "]", depth))
    groups: list[tuple[int, int, list]] = []
    failure: GrammarFailure | None = None
    position = 0
    tries = 0
    while position < len(body) and tries < attempts:
        spans = [s for s in (kind.first_from(position) for kind in kinds) if s is not None]
        if not spans:
            break
        start, end = min(spans)
        tries += 1
        try:
            calls = calls_from_value(_read_value(body[start:end], budget), budget=budget)
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
    return groups, failure, sorted(set(kinds[0].too_deep + kinds[1].too_deep))


def _read_value(text: str, budget: GrammarBudget) -> Any:
    """One bracket group as JSON as models write it: strict JSON, the lenient path, the grammar within ``budget``."""
    value = json_value(text)
    if value is not _MISSING:
        return value
    budget.spend(GRAMMAR, text)
    return loads_lenient(text, GRAMMAR)


class JsonObject(Protocol):
    info = ProtocolInfo(
        id="json_object",
        name="JSON object",
        description='One JSON object naming the tool and its arguments: {"name": ..., "arguments": {...}}.',
        parallel=False,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        body, _ = strip_code_fence(text)
        offset = text.find(body) if body else 0
        groups, failure, too_deep = read_json_values(body, limits=limits)
        notes: list[str] = []
        if too_deep:
            line = text.count("\n", 0, offset + too_deep[0]) + 1
            notes.append(f"the bracket group at line {line} nests deeper than {2 * limits.max_depth} levels (twice "
                         "Limits.max_depth): not read as a whole; the complete groups inside it were read")
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
        compliant = len(groups) == 1 and all(not part.strip() for part in between) and not too_deep
        return Extraction(raw, tuple(notes), compliant)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        objects = [{"name": c.name, "arguments": c.arguments} for c in calls]
        return json.dumps(objects[0] if len(objects) == 1 else objects, ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ('Reply with exactly one JSON object and no other text: '
                '{"name": "<tool name>", "arguments": {"<argument>": <value>, ...}}')


PROTOCOL = JsonObject()
