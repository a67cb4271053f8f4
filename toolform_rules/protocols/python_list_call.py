"""python_list_call: ``[f(a=1), g(b=2)]`` — every call of the reply in one bracketed list.

Grammar: ``grammars/python_list_call.lark`` (calls of ``grammars/python_values.lark``).
A reply that is one list is read whole by the code family's fast path; otherwise the
bracketed lists of calls in it are located and each is read (fast path, then grammar).
An empty list is a reply that calls nothing.  Calls written without the brackets are
still read, and the reply is marked as not keeping to the format.

>>> PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {"b": "x"})])
'[f(a=1), g(b="x")]'
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo
from .code_family import (Budget, PythonFamily, PythonValues, call_names, fast_calls, guarded, leftover_note,
                          list_candidates, outside, python_call_text, strip_fence)


class PythonListValues(PythonValues):
    """``python_list_call.lark`` trees → lists of :class:`~.code_family.CallSyntax`."""


class PythonListCall(PythonFamily):
    info = ProtocolInfo(
        id="python_list_call",
        name="Python list of calls",
        description="All calls in one bracketed list of Python calls: [f(a=1), g(b=2)].",
        parallel=True,
    )
    grammar = "python_list_call"
    transformer = PythonListValues

    @guarded
    def parse(self, text: str, tools: Toolset | None, budget: Budget) -> Extraction:
        body, offset = strip_fence(text)
        notes: list[str] = []
        whole = fast_calls(body, "list", budget) if body.startswith("[") else None
        if whole is not None and not any(c.bare for c in whole):
            if not whole:
                notes.append("an empty list: the reply calls no tool")
            return Extraction(tuple(self.finish(whole, tools, notes, offset)), tuple(notes), True)
        lists, spans, failed = list_candidates(self, body, notes, budget)
        if lists:
            if len(lists) > 1:
                notes.append(f"the reply holds {len(lists)} lists of calls where one was expected; all were read")
            rest = outside(body, spans)
            if rest:
                notes.append(leftover_note(rest, "the list"))
            found = [c for group in lists for c in group]
            compliant = len(lists) == 1 and not rest and not failed and not any(c.bare for c in found)
            if not found and compliant:
                notes.append("an empty list: the reply calls no tool")
            return Extraction(tuple(self.finish(found, tools, notes, offset)), tuple(notes), compliant)
        found = self.prose_calls(body, tools, notes, budget)
        if found:
            notes.append("the calls are not in a bracketed list")
        return Extraction(tuple(self.finish(found, tools, notes, offset)), tuple(notes), False)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "[" + ", ".join(python_call_text(c) for c in calls) + "]"

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools) or ["tool_name", "other_tool"]
        second = names[1] if len(names) > 1 else names[0]
        return ("Reply with one Python list of calls and nothing else, for example "
                f'[{names[0]}(argument="text", count=3), {second}(flag=True)]. Give every argument as '
                "name=value with a Python literal value. One call is a list of one; if no tool is needed, "
                "reply with [].")


PROTOCOL = PythonListCall()
