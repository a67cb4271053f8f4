"""python_tag: ``<|python_tag|>tool(arg=value)<|eom_id|>`` — Llama 3.x's tool-call marker.

Grammar: ``grammars/python_tag.lark`` (calls of ``grammars/python_values.lark``).  Each
marker starts a segment that runs to ``<|eom_id|>``/``<|eot_id|>``, the next marker or the
end of the reply; a segment holds calls one a line (or ``;``-separated), a bracketed list
of calls, or the JSON object Llama also writes there.  A segment's calls are read by the code
family's fast path (or ``json``), else the segment by the grammar, else by the family's readers
with its recovery step.  Calls without any marker are still read, and the reply is marked as not
keeping to the format.

>>> PROTOCOL.parse('<|python_tag|>f(a=1)\\ng(b="x")<|eom_id|>').calls[1].arguments
{'b': 'x'}
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....grammar import GrammarFailure
from ....limits import Limits
from ....schema.toolset import Toolset
from ..base import Extraction, ProtocolInfo
from .shared import (RECOVERY_SPENT, Budget, CallSyntax, Items, PythonFamily, PythonLists, PythonValues, Reader,
                          call_names, grammar_read, leftover_note, python_call_text)
from ..json_family.json_object import call_from_object

TAG = "<|python_tag|>"
ENDS = ("<|eom_id|>", "<|eot_id|>")


def _object_call(obj: Any) -> CallSyntax | None:
    found = call_from_object(obj)
    return None if found is None else CallSyntax(found[0], list(found[1].items()))


def _json_call(body: str, span: tuple[int, int]) -> CallSyntax | None:
    """The call of a segment that is the JSON object Llama also writes after the marker."""
    try:
        call = _object_call(json.loads(body))
    except (ValueError, RecursionError):
        return None
    if call is not None:
        call.span = span
    return call


def _nothing_else(rest: str, notes: list[str]) -> bool:
    """Whether ``rest`` (around the marked calls) is only white space; else a note quotes it."""
    if rest.strip():
        notes.append(leftover_note(" ".join(rest.split()), "the marked calls"))
    return not rest.strip()


class PythonTagValues(PythonValues):
    """``python_tag.lark`` trees → lists of :class:`CallSyntax` (a JSON object segment becomes its call)."""

    def calls(self, items: Items) -> Items:
        return [item for item in items if isinstance(item, CallSyntax)]

    def call_list(self, items: Items) -> Items:
        return list(items)

    def segment(self, items: Items) -> Items:
        out: list[CallSyntax] = []
        for item in items:
            if isinstance(item, list):
                out.extend(item)
            elif isinstance(item, dict):
                call = _object_call(item)
                if call is None:
                    raise ValueError("the JSON object after the marker names no tool")
                out.append(call)
        return out

    def start(self, items: Items) -> Items:
        return [call for segment in items for call in segment]


class PythonTag(PythonFamily):
    info = ProtocolInfo(
        id="python_tag",
        name="<|python_tag|> call",
        description="Llama 3.x's convention: Python calls after a <|python_tag|> marker, ended by <|eom_id|>.",
        parallel=True,
    )
    #: a segment that is a list of calls (the segment's grammar reads a list only after a marker)
    call_list = PythonLists("python_list_call", PythonValues)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        budget = Budget(limits)
        notes: list[str] = []
        first = text.find(TAG)
        if first < 0:
            found = self.read_candidates(self.reader, text, tools, budget, notes).calls
            if found:
                notes.append("the calls are not after a <|python_tag|> marker")
            return Extraction(self.finish(found, tools, notes), tuple(notes), False)
        compliant = _nothing_else(text[:first], notes)
        calls: list[CallSyntax] = []
        pos = first
        while pos >= 0:
            budget.segments -= 1
            if budget.segments < 0:
                notes.append("stopped reading: too many markers")
                compliant = False
                break
            start = pos + len(TAG)
            pos = text.find(TAG, start)
            stop = pos if pos >= 0 else len(text)
            end = min((i for i in (text.find(e, start, stop) for e in ENDS) if i >= 0), default=stop)
            after = end + len(ENDS[0]) if text.startswith(ENDS, end) else end  # (the end markers are as long)
            compliant = _nothing_else(text[after:stop], notes) and compliant
            found, clean = self._segment(text, start, end, tools, notes, budget)
            compliant = compliant and clean
            calls.extend(found)
        if not calls:
            compliant = False
            if not notes:
                notes.append("the <|python_tag|> marker is followed by no call")
        return Extraction(self.finish(calls, tools, notes), tuple(notes), compliant)

    def _segment(self, text: str, start: int, end: int, tools: Toolset | None, notes: list[str],
                 budget: Budget) -> tuple[list[CallSyntax], bool]:
        """The calls of one segment ``text[start:end]`` (spans in the reply), and whether it holds
        nothing else: its calls read by the fast path, else the segment by the grammar, else its calls by
        the family's readers with the recovery step."""
        segment = text[start:end]
        base = start + len(segment) - len(segment.lstrip())
        stop = base + len(segment.strip())
        body = text[base:stop]
        call = _json_call(body, (base, stop)) if body.startswith("{") else None
        if not body or call is not None:
            return [call] if call is not None else [], True
        mark = len(notes)
        reader = self.call_list if body.startswith("[") else self.reader
        found = self.read_candidates(reader, text, tools, budget, notes, base, stop, note_failures=False,
                                     fast_only=True)
        if found.calls and not found.failures and (not found.rest or any(ch.isalpha() for ch in found.rest)):
            if found.rest:  # calls, then prose (a letter in the leftover's first words)
                notes.append(leftover_note(found.rest, "the marked calls"))
            return found.calls, not found.rest and not any(c.lenient for c in found.calls)
        try:  # what the fast path could not read, or where it stops being calls
            calls = grammar_read(self.info.id, PythonTagValues(), TAG + body, budget)
        except GrammarFailure as err:
            recovered = self._recovered(reader, text, base, stop, tools, budget, notes)
            if recovered:
                del notes[mark:]
                return recovered, False
            if found.calls:
                notes.append(leftover_note(found.rest, "the marked calls"))
                return found.calls, False
            notes.append(f"the calls after the marker at character {start - len(TAG)} could not be read: "
                         f"{err.describe()}")
            return [], False
        del notes[mark:]
        for call in calls:
            call.span = (base, stop)
        return calls, not any(c.lenient for c in calls)

    def _recovered(self, reader: Reader, text: str, base: int, stop: int, tools: Toolset | None, budget: Budget,
                   notes: list[str]) -> list[CallSyntax]:
        """The calls of a segment ``text[base:stop]`` its grammar refused, read again by the family's
        ``reader``, which ends with the recovery step: all of them when they make up the segment, else
        none (and a note if its budget ran out)."""
        said: list[str] = []
        found = self.read_candidates(reader, text, tools, budget, said, base, stop, note_failures=False)
        if found.calls and not found.failures and not found.rest:
            return found.calls
        if RECOVERY_SPENT in said and RECOVERY_SPENT not in notes:
            notes.append(RECOVERY_SPENT)
        return []

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        # a marker inside a string would end the segment early: its "|" is written as an escape
        return "\n".join(TAG + python_call_text(c).replace("<|", "<\\u007c") for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f'{TAG}{names[0] if names else "tool_name"}(argument="text", count=3)'
        return (f"To call a tool, write the marker {TAG} and right after it the call as Python, for example "
                f"{example}. Give arguments as name=value with Python literal values. For several calls, "
                "start each on its own line with the marker.")


PROTOCOL = PythonTag()
