"""Model-native formats: the formats serving engines parse, each one entry of a declarative catalogue.

``rules/native/formats.yaml`` holds the entries (see :mod:`.catalogue`); each becomes a
:class:`NativeFormat`, a protocol like the study's 31 (``parse_reply(text, tools,
"hermes")``), reading and rendering calls with its template (:mod:`.template`).  Adding a
format whose slots exist is one entry: no Python.

>>> from toolform_rules.calls import ToolCall
>>> from toolform_rules.protocols import get_protocol
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
from ..base import Extraction, Protocol, ProtocolInfo, RawCall
from ..duplicates import noted
from ..reading import MAX_NOTES, text_outside
from .catalogue import FormatEntry, builtin_catalogue
from .template import Capture, Context, compile_pieces, first_pattern, flat, match, regular_runs, render


def _line_column(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    return f"line {line}, column {at - (text.rfind(chr(10), 0, at) + 1) + 1}"


class NativeFormat(Protocol):
    """A protocol read and written with one catalogue entry's template."""

    def __init__(self, entry: FormatEntry, protocol_of: Callable[[str], Protocol], *, compiled: bool = True) -> None:
        """``compiled``: runs of literals and words matched by one pattern each, and parameters by the flat
        reader where the template allows (the default); ``False`` interprets every step (what the tests hold
        the compiled reading equal to)."""
        self.entry, self.protocol_of = entry, protocol_of
        self.info = ProtocolInfo(entry.id, entry.name, entry.description, parallel=entry.parallel,
                                 text_values=entry.values == "text")
        self._starts = re.compile(first_pattern(entry.call))
        self._compiled = compiled
        self._steps, self._parameter = self._compile(entry.call), self._compile(entry.parameter)
        self._flat_parameter = flat(compile_pieces(entry.parameter)) if entry.parameter and compiled else None
        #: the steps uncompiled, for the note of a candidate that fails (when compiling changed any)
        self._plain_steps, self._plain_parameter = compile_pieces(entry.call), compile_pieces(entry.parameter)
        self._rereads_failures = compiled and (self._steps != self._plain_steps or self._flat_parameter is not None
                                               or self._parameter != self._plain_parameter)
        #: a call template is closed by its markers, unless another protocol reads its calls
        self.closes_calls = not any(getattr(piece, "read_with", "") for piece in entry.call)
        self._reasoning = tuple((opening, closing) for opening, closing in entry.reasoning)

    def _compile(self, pieces: tuple) -> tuple[tuple, ...]:
        steps = compile_pieces(pieces)
        return regular_runs(steps) if self._compiled else steps

    # --- reading -------------------------------------------------------------------------------------------

    def reasoning_spans(self, text: str) -> list[tuple[int, int]]:
        """Where the model's reasoning stands (the entry's markers): an unclosed block runs to the end, and a
        closing marker with no opening before it ends reasoning that began before the reply."""
        spans: list[tuple[int, int]] = []
        for opening, closing in self._reasoning:
            at = 0
            first_open = text.find(opening)
            lone_close = text.find(closing)
            if lone_close >= 0 and (first_open < 0 or lone_close < first_open):
                spans.append((0, lone_close + len(closing)))
                at = lone_close + len(closing)
            while (start := text.find(opening, at)) >= 0:
                end = text.find(closing, start + len(opening))
                end = len(text) if end < 0 else end + len(closing)
                spans.append((start, end))
                at = end
        spans.sort()
        return spans

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        entry = self.entry
        ctx = compiled_ctx = Context(text, entry, self._parameter, self._flat_parameter, self._read_with,
                                     self._read_input, tools, limits)
        reasoning = self.reasoning_spans(text) if self._reasoning else []
        calls: list[RawCall] = []
        notes: list[str] = []
        taken: list[tuple[int, int]] = []
        at = tries = 0
        r = 0
        while tries < limits.reply_call_heads:
            head = self._starts.search(text, at)
            if head is None:
                break
            start = head.start()
            while r < len(reasoning) and reasoning[r][1] <= start:
                r += 1
            if r < len(reasoning) and reasoning[r][0] <= start:  # a call written while reasoning is not made
                at = reasoning[r][1]
                continue
            tries += 1
            cap = Capture()
            ctx = compiled_ctx
            ctx.failed_at, ctx.committed = -1, False
            end = match(self._steps, start, cap, ctx)
            if end is None:
                if len(notes) < MAX_NOTES and self._rereads_failures and ctx.committed:
                    # the note says where the candidate stopped and what the template expected there, as the step
                    # interpreter finds it (a pattern that matched does not say what its optional runs expected at
                    # the place where the candidate stopped; the tests hold both readings to one answer).  Only for a
                    # candidate that committed: one that did not gets no note, compiled or not.
                    ctx = self._interpreting(ctx)
                    match(self._plain_steps, start, Capture(), ctx)
                if len(notes) < MAX_NOTES and ctx.committed and ctx.failed_at > start:
                    notes.append(f"a call begun at {_line_column(text, start)} could not be read: "
                                 f"{_line_column(text, ctx.failed_at)}: expected {ctx.expected}")
                at = max(head.end(), start + 1)
                continue
            found = list(cap.calls or [])
            if cap.name is None and cap.arguments is not None and not found:
                # a call written without its name (Kimi's bare counter "0"): the toolset's one tool, if it has one
                only = list(tools.names()) if tools is not None else []
                if len(only) == 1:
                    cap.name = only[0]
                    if len(notes) < MAX_NOTES:
                        notes.append(f"the call at {_line_column(text, start)} names no tool; read as the only "
                                     f"one, {only[0]!r}")
                elif len(notes) < MAX_NOTES:
                    notes.append(f"the call at {_line_column(text, start)} names no tool")
            if cap.name is not None:
                found.append((cap.name, cap.arguments if cap.arguments is not None else {}))
            for name, arguments in found:
                if isinstance(arguments, str):  # an input written as text: the tool's one text parameter
                    arguments = self._read_input(arguments, name, tools, ctx)
                if isinstance(arguments, dict):
                    if ctx.repeats is None:
                        calls.append(RawCall(name, arguments, (start, end)))
                        continue
                    places = ctx.repeats.of(arguments)
                    if places and len(notes) < MAX_NOTES:
                        notes.append(noted(name, places))
                    calls.append(RawCall(name, arguments, (start, end), places))
                elif len(notes) < MAX_NOTES:
                    notes.append(f"the arguments of {name!r} at {_line_column(text, start)} are not an object")
            for place in cap.skipped:
                if len(notes) < MAX_NOTES:
                    notes.append(f"text that is not a call was passed over at {_line_column(text, place)}")
            taken.append((start, end))
            at = max(end, start + 1)
        content = self._content(text, taken, reasoning)
        compliant = bool(calls) and not notes and not content
        return Extraction(tuple(calls), tuple(notes), compliant, content)

    def _interpreting(self, ctx: Context) -> Context:
        """A context like ``ctx`` for the step interpreter (no flat parameters, no patterns), failure cleared."""
        plain = Context(ctx.text, self.entry, self._plain_parameter, None, ctx.read_with, ctx.read_input, ctx.tools,
                        ctx.limits)
        plain.finder = ctx.finder  # (the same text: what one found, the other may use)
        return plain

    def _content(self, text: str, taken: list[tuple[int, int]], reasoning: list[tuple[int, int]]) -> str:
        """The reply's text outside its calls, its reasoning and the entry's dropped markers, trimmed."""
        content = text_outside(text, taken + reasoning)
        for marker in self.entry.drop:
            content = content.replace(marker, "")
        return content.strip()

    def _read_with(self, protocol_id: str, body: str, tools: Toolset | None, limits: Limits,
                   ctx: Context | None = None) -> list[tuple[str, Any]]:
        calls = self.protocol_of(protocol_id).raw_calls(body, tools, limits=limits)
        for call in calls:
            if call.duplicates and ctx is not None:  # (kept by the arguments' identity, for the call made of them)
                ctx.found().calls[id(call.arguments)] = call.arguments, call.duplicates
        return [(call.name, call.arguments) for call in calls]

    @staticmethod
    def _read_input(body: str, name: str | None, tools: Toolset | None, ctx: Context | None = None) -> Any:
        from ..react import read_input

        twice: list[str] = []
        arguments = read_input(body, name or "", tools, twice=twice)[0]
        if twice and ctx is not None:  # (kept by the arguments' identity, for the call made of them)
            ctx.found().calls[id(arguments)] = arguments, tuple(twice)
        return arguments

    def call_starts(self, text: str, start: int) -> tuple[int, str, int] | None:
        """The first call at or after ``start`` whose name is written: (where it starts, its name, where its
        arguments start); ``None`` when no call has got that far (for a stream, :mod:`toolform_rules.streaming`)."""
        head = self._starts.search(text, start)
        if head is None or not self._head_pieces:
            return None
        cap = Capture()
        ctx = Context(text, self.entry, self._parameter, self._flat_parameter, lambda *_: [], lambda *_: None, None)
        end = match(self._head_pieces, head.start(), cap, ctx)
        if end is None or end >= len(text):
            return None
        if cap.name is not None:
            return head.start(), cap.name, end
        named = self._json_name.search(text, end, min(len(text), end + 4096))
        return (head.start(), named.group(2), end) if named is not None else None

    @functools.cached_property
    def _head_pieces(self) -> tuple:
        """The call template's steps up to its first that holds arguments (what a call's head is)."""
        from .catalogue import Slot

        holding = {"arguments", "call", "calls", "parameters", "input", "dict"}
        for index, piece in enumerate(self.entry.call):
            if isinstance(piece, Slot) and (piece.slot in holding or piece.read_with):
                return () if piece.read_with else self._compile(self.entry.call[:index])
        return ()

    @functools.cached_property
    def _json_name(self) -> "re.Pattern[str]":
        keys = "|".join(re.escape(k) for k in self.entry.name_keys) or "[^\"\\\\]{1,256}"
        return re.compile(rf'"({keys})"\s*:\s*"([^"\\\n]{{1,256}})"')

    # --- writing -------------------------------------------------------------------------------------------

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        entry, calls = self.entry, list(calls)
        if not calls:
            return ""
        if self._one_for_all():
            return render(entry.call, entry, calls[0], 0, calls, protocol_of=self.protocol_of)
        return entry.separator.join(render(entry.call, entry, call, index, calls, protocol_of=self.protocol_of)
                                    for index, call in enumerate(calls))

    @functools.cache
    def _one_for_all(self) -> bool:
        """Whether one template instance writes every call (a ``calls`` slot, or a protocol read inside)."""
        from .catalogue import _pieces_slots

        return any(slot == "calls" for slot, _ in _pieces_slots(self.entry.call)) or any(
            getattr(piece, "read_with", "") for piece in self.entry.call)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        from ..code_family import call_names

        names = call_names(tools) if tools is not None else []
        example = self.render_calls([ToolCall(names[0] if names else "tool_name", {"argument": "text"})])
        lead = self.entry.instructions or f"Write each call in {self.entry.name}'s format"
        return f"{lead}, for example:\n{example}"


@functools.cache
def native_formats(protocol_of: Callable[[str], Protocol], reserved: frozenset[str]) -> dict[str, NativeFormat]:
    """Every catalogue format by id, and again by each alias; ``protocol_of`` gives the protocols a format reads
    with (the registry's ``get_protocol``), ``reserved`` the ids no entry may take (the study's)."""
    out: dict[str, NativeFormat] = {}
    for entry in builtin_catalogue(reserved).formats:
        protocol = NativeFormat(entry, protocol_of)
        for name in (entry.id, *entry.aliases):
            out[name] = protocol
    return out


__all__ = ["NativeFormat", "native_formats"]
