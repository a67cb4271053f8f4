"""Model-native formats: the formats serving engines parse, each one entry of a declarative catalogue.

``rules/native/formats.yaml`` holds the entries (:mod:`.catalogue`); each is a :class:`NativeFormat`,
a protocol like the study's 31, reading and rendering calls with its template (:mod:`.template`).

>>> from toolform_rules.calls import ToolCall
>>> from toolform_rules.replies.formats import get_protocol
>>> hermes = get_protocol("hermes")
>>> text = hermes.render_calls([ToolCall("f", {"a": 1})])
>>> print(text)
<tool_call>
{"name": "f", "arguments": {"a": 1}}
</tool_call>
>>> [(c.name, c.arguments) for c in hermes.parse("Sure." + text).calls]
[('f', {'a': 1})]
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterable, Sequence

from ...calls import ToolCall
from ...limits import Limits
from ...schema.toolset import Toolset
from ..formats.base import Extraction, Protocol, ProtocolInfo, RawCall
from ..formats.duplicates import noted
from ..formats.reading import MAX_NOTES, text_outside
from .catalogue import FormatEntry, Slot, builtin_catalogue, pieces_slots
from .template import Reading, Writing, compile_pieces, first_pattern, read_input, render, run

#: the slots that hold a call's arguments: a call's head is what comes before the first of them
_HOLDING = frozenset({"arguments", "call", "calls", "parameters", "input", "dict"})


def _note(notes: list[str], note: Callable[[], str]) -> None:
    """``note()`` added while there is room (a note that says where costs a pass over the text before it)."""
    if len(notes) < MAX_NOTES:
        notes.append(note())


def _line_column(text: str, at: int) -> str:
    return f"line {text.count(chr(10), 0, at) + 1}, column {at - (text.rfind(chr(10), 0, at) + 1) + 1}"


class NativeFormat(Protocol):
    """A protocol read and written with one catalogue entry's template; ``protocol_of``: the protocols by id,
    for a slot another protocol reads."""

    def __init__(self, entry: FormatEntry, protocol_of: Callable[[str], Protocol] | None) -> None:
        self.entry, self.protocol_of = entry, protocol_of
        self.info = ProtocolInfo(entry.id, entry.name, entry.description, parallel=entry.parallel,
                                 text_values=entry.values == "text")
        self._starts = re.compile(first_pattern(entry.call))
        self._steps, self._parameter = compile_pieces(entry.call), compile_pieces(entry.parameter)
        reads_with = any(getattr(piece, "read_with", "") for piece in entry.call)
        #: a call template is closed by its markers, unless another protocol reads its calls
        self.closes_calls = not reads_with
        #: one template instance writes every call: a ``calls`` slot, or a protocol read inside
        self._one_for_all = reads_with or "calls" in pieces_slots(entry.call)
        #: a call's head: the steps before its first slot that holds arguments (none: a protocol reads them)
        first = next((piece for piece in entry.call if isinstance(piece, Slot) and (
            piece.slot in _HOLDING or piece.read_with)), None)
        self._head = () if first is None or first.read_with else compile_pieces(entry.call[:entry.call.index(first)])
        keys = "|".join(re.escape(k) for k in entry.name_keys) or "[^\"\\\\]{1,256}"
        self._json_name = re.compile(rf'"({keys})"\s*:\s*"([^"\\\n]{{1,256}})"')

    def reasoning_spans(self, text: str) -> list[tuple[int, int]]:
        """Where the model's reasoning stands (the entry's markers): an unclosed block runs to the end, and a
        closing marker with no opening before it ends reasoning that began before the reply."""
        spans: list[tuple[int, int]] = []
        for opening, closing in self.entry.reasoning:
            at, first_open, lone_close = 0, text.find(opening), text.find(closing)
            if lone_close >= 0 and (first_open < 0 or lone_close < first_open):
                at = lone_close + len(closing)
                spans.append((0, at))
            while (start := text.find(opening, at)) >= 0:
                end = text.find(closing, start + len(opening))
                at = len(text) if end < 0 else end + len(closing)
                spans.append((start, at))
        return sorted(spans)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        """Each place the template's first literal stands (outside reasoning) is a candidate, read as a call."""
        reading = Reading(text, self.entry, self._parameter, self.protocol_of, tools, limits)
        reasoning = self.reasoning_spans(text) if self.entry.reasoning else []
        calls: list[RawCall] = []
        notes: list[str] = []
        taken: list[tuple[int, int]] = []
        at = tries = r = 0
        while tries < limits.reply_call_heads and (head := self._starts.search(text, at)) is not None:
            start = head.start()
            while r < len(reasoning) and reasoning[r][1] <= start:
                r += 1
            if r < len(reasoning) and reasoning[r][0] <= start:  # a call written while reasoning is not made
                at = reasoning[r][1]
                continue
            tries += 1
            end = self._read_call(start, reading, calls, notes)
            if end is not None:
                taken.append((start, end))
            at = max(head.end() if end is None else end, start + 1)
        content = text_outside(text, taken + reasoning)
        for marker in self.entry.drop:
            content = content.replace(marker, "")
        content = content.strip()
        return Extraction(tuple(calls), tuple(notes), bool(calls) and not notes and not content, content)

    def _read_call(self, start: int, r: Reading, calls: list[RawCall], notes: list[str]) -> int | None:
        """The calls of the candidate at ``start`` added to ``calls``; where it ends, or ``None`` (noted)."""
        text = r.text
        r.begin()
        end = run(self._steps, start, r)
        if end is None:
            if r.committed and r.failed_at > start:
                _note(notes, lambda: f"a call begun at {_line_column(text, start)} could not be read: "
                                     f"{_line_column(text, r.failed_at)}: expected {r.expected}")
            return None
        found = list(r.calls or [])
        if r.name is None and r.arguments is not None and not found:  # no name: the toolset's one tool, if any
            only = list(r.tools.names()) if r.tools is not None else []
            r.name = only[0] if len(only) == 1 else None
            _note(notes, lambda: f"the call at {_line_column(text, start)} names no tool"
                                 + (f"; read as the only one, {r.name!r}" if r.name is not None else ""))
        if r.name is not None:
            found.append((r.name, r.arguments if r.arguments is not None else {}))
        for name, arguments in found:
            if isinstance(arguments, str):  # an input written as text: the tool's one text parameter
                arguments = read_input(arguments, name, r.tools, r)
            if not isinstance(arguments, dict):
                _note(notes, lambda: f"the arguments of {name!r} at {_line_column(text, start)} are not an object")
                continue
            places = r.repeats.of(arguments) if r.repeats is not None else ()
            if places:
                _note(notes, lambda: noted(name, places))
            calls.append(RawCall(name, arguments, (start, end), places))
        for place in r.skipped:
            _note(notes, lambda: f"text that is not a call was passed over at {_line_column(text, place)}")
        return end

    def call_starts(self, text: str, start: int) -> tuple[int, str, int] | None:
        """For a stream: the first call from ``start`` whose name is written (its start, name, arguments' start)."""
        head = self._starts.search(text, start)
        if head is None or not self._head:
            return None
        r = Reading(text, self.entry, self._parameter)
        end = run(self._head, head.start(), r)
        if end is None or end >= len(text):
            return None
        if r.name is not None:
            return head.start(), r.name, end
        named = self._json_name.search(text, end, min(len(text), end + 4096))
        return (head.start(), named.group(2), end) if named is not None else None

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        calls = list(calls)
        writings = [Writing(self.entry, call, index, calls, self.protocol_of) for index, call in enumerate(calls)]
        if self._one_for_all:
            writings = writings[:1]
        return self.entry.separator.join(render(self.entry.call, writing) for writing in writings)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        from ..formats.code_family.shared import call_names
        names = call_names(tools) if tools is not None else []
        example = self.render_calls([ToolCall(names[0] if names else "tool_name", {"argument": "text"})])
        lead = self.entry.instructions or f"Write each call in {self.entry.name}'s format"
        return f"{lead}, for example:\n{example}"


@functools.cache
def native_formats(protocol_of: Callable[[str], Protocol], reserved: frozenset[str]) -> dict[str, NativeFormat]:
    """Every catalogue format by id and by each alias; ``reserved``: the ids no entry may take (the study's)."""
    out: dict[str, NativeFormat] = {}
    for entry in builtin_catalogue(reserved).formats:
        protocol = NativeFormat(entry, protocol_of)
        for name in (entry.id, *entry.aliases):
            out[name] = protocol
    return out


__all__ = ["NativeFormat", "native_formats"]
