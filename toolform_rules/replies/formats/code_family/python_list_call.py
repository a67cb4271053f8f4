"""python_list_call: ``[f(a=1), g(b=2)]`` — every call of the reply in one bracketed list.

Grammar: ``grammars/python_list_call.lark`` (calls of ``grammars/python_values.lark``).
The bracketed lists of calls in the reply are located and each is read (the code family's
fast path, then the grammar, then the family's recovery step: a string holding raw line breaks
or unescaped quotes of its own kind, as LFM2 writes them, and a set literal are read, and noted).
An empty list is a reply that calls nothing.  Calls written without the brackets are
still read, and the reply is marked as not keeping to the format.

>>> PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("g", {"b": "x"})])
'[f(a=1), g(b="x")]'
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....limits import Limits
from ....schema.toolset import Toolset
from ..base import Extraction, ProtocolInfo
from .shared import PythonFamily, PythonLists, PythonValues, Scan, call_names, leftover_note, python_call_text
from ..reading import strip_code_fence

EMPTY_LIST = re.compile(r"\[[ \t\r\n]*+\]")
NO_CALL = "an empty list: the reply calls no tool"


class PythonListValues(PythonValues):
    """``python_list_call.lark`` trees → lists of :class:`~.code_family.CallSyntax`."""


class PythonListCall(PythonFamily):
    info = ProtocolInfo(
        id="python_list_call",
        name="Python list of calls",
        description="All calls in one bracketed list of Python calls: [f(a=1), g(b=2)].",
        parallel=True,
    )
    lists = PythonLists("python_list_call", PythonListValues)

    unlisted = "the calls are not in a bracketed list"

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        body, offset, _ = strip_code_fence(text)
        if EMPTY_LIST.fullmatch(body):
            return Extraction((), (NO_CALL,), True)
        return self.read_lists(self.lists, body, tools, limits, offset)

    def listed(self, found: Scan, notes: list[str]) -> bool:
        if len(found.spans) > 1:
            notes.append(f"the reply holds {len(found.spans)} lists of calls where one was expected; all were read")
        if found.rest:
            notes.append(leftover_note(found.rest, "the list"))
        return len(found.spans) == 1 and not found.rest and super().listed(found, notes)

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
