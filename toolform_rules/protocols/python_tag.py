"""python_tag: ``<|python_tag|>tool(arg=value)<|eom_id|>`` — Llama 3.x's tool-call marker.

Grammar: ``grammars/python_tag.lark`` (calls of ``grammars/python_values.lark``).  Each
marker starts a segment that runs to ``<|eom_id|>``/``<|eot_id|>``, the next marker or the
end of the reply; a segment holds calls one a line (or ``;``-separated), a bracketed list
of calls, or the JSON object Llama also writes there.  Segments are read with
the code family's fast path (or ``json``) first and the grammar otherwise.  Calls without any marker are
still read, and the reply is marked as not keeping to the format.

>>> PROTOCOL.parse('<|python_tag|>f(a=1)\\ng(b="x")<|eom_id|>').calls[1].arguments
{'b': 'x'}
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo
from .code_family import (Budget, CallSyntax, Items, PythonFamily, PythonValues, call_names, fast_calls, grammar_read,
                          guarded, leftover_note, outside, python_call_text)
from ..grammar import GrammarFailure
from .json_object import call_from_object

TAG = "<|python_tag|>"
ENDS = ("<|eom_id|>", "<|eot_id|>")


def _object_call(obj: Any) -> CallSyntax | None:
    found = call_from_object(obj)
    if found is None:
        return None
    return CallSyntax(found[0], list(found[1].items()))


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
    grammar = "python_tag"
    transformer = PythonTagValues

    @guarded
    def parse(self, text: str, tools: Toolset | None, budget: Budget) -> Extraction:
        notes: list[str] = []
        first = text.find(TAG)
        if first < 0:
            return self._untagged(text, tools, notes, budget)
        compliant = not text[:first].strip()
        if not compliant:
            notes.append(leftover_note(text[:first], "the marked calls"))
        found: list[CallSyntax] = []
        pos = first
        while pos >= 0:
            budget.segments -= 1
            if budget.segments < 0:
                notes.append("stopped reading: too many markers")
                compliant = False
                break
            start = pos + len(TAG)
            following = text.find(TAG, start)
            stop = following if following >= 0 else len(text)
            end = min((i for i in (text.find(e, start, stop) for e in ENDS) if i >= 0), default=stop)
            tail = text[end:stop]
            for marker in ENDS:
                if tail.startswith(marker):
                    tail = tail[len(marker):]
                    break
            if tail.strip():
                compliant = False
                notes.append(leftover_note(tail, "the marked calls"))
            calls, clean = self._segment(text, start, end, tools, notes, budget)
            compliant = compliant and clean
            found.extend(calls)
            pos = following
        if not found:
            compliant = False
            if not notes:
                notes.append("the <|python_tag|> marker is followed by no call")
        return Extraction(tuple(self.finish(found, tools, notes)), tuple(notes), compliant)

    def _segment(self, text: str, start: int, end: int, tools: Toolset | None, notes: list[str],
                 budget: Budget) -> tuple[list[CallSyntax], bool]:
        """The calls of one segment ``text[start:end]`` (spans in the reply), and whether it was
        read as a whole."""
        content = text[start:end]
        lead = len(content) - len(content.lstrip())
        body = content.strip()
        base = start + lead
        if not body:
            return [], True
        calls: list[CallSyntax] | None = None
        if body.startswith("{"):
            try:
                call = _object_call(json.loads(body))
                calls = [call] if call is not None else None
            except (ValueError, RecursionError):
                calls = None
            if calls:
                calls[0].span = (0, len(body))
        if calls is None and body.endswith((")", "]", ";")):  # else prose follows: read call by call
            calls = fast_calls(body, "list" if body.startswith("[") else "lines", budget)
        if calls is None:
            # calls followed by prose, or syntax only the grammar reads: each call on its own
            mark = len(notes)
            found = self.prose_calls(text, tools, notes, budget, start=base, end=end)
            rest = outside(text[base:end], [(c.span[0] - base, c.span[1] - base) for c in found if c.span])
            if found and any(ch.isalpha() for ch in rest):  # calls, then prose: the grammar would not read it
                notes.append(leftover_note(rest, "the marked calls"))
                return found, False
            try:
                calls = grammar_read(self.grammar, self.transformer(), TAG + body, budget)
                del notes[mark:]
            except GrammarFailure as err:
                if found:
                    notes.append(leftover_note(rest, "the marked calls"))
                    return found, False
                where = f"the calls after the marker at character {start - len(TAG)}"
                notes.append(f"{where} could not be read: {err.describe()}")
                return [], False
            for call in calls:
                call.span = (0, len(body))
        for call in calls:
            call.span = (base + call.span[0], base + call.span[1]) if call.span else (base, base + len(body))
        return calls, not any(c.bare for c in calls)

    def _untagged(self, text: str, tools: Toolset | None, notes: list[str], budget: Budget) -> Extraction:
        body = text.strip()
        calls = fast_calls(body, "list" if body.startswith("[") else "lines", budget) if body else None
        if calls:
            base = text.find(body)
            for call in calls:
                call.span = (base + call.span[0], base + call.span[1]) if call.span else None
        else:
            calls = self.prose_calls(text, tools, notes, budget)
        if calls:
            notes.append("the calls are not after a <|python_tag|> marker")
        return Extraction(tuple(self.finish(calls, tools, notes)), tuple(notes), False)

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
