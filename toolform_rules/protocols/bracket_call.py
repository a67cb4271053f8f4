"""bracket_call: Toolformer's inline notation — ``[tool(arg=value)]`` inside running text.

Grammar: ``grammars/bracket_call.lark`` (calls of ``grammars/python_values.lark``, and
Toolformer's optional ``→ result`` part).  Each ``[`` that opens a call is located in the
prose (linear scan) and read: the code family's fast path first, the grammar for what it
cannot read.
Prose around the brackets is the format, not a fault; calls written without brackets are
still read, and the reply is marked as not keeping to the format.

>>> [c.name for c in PROTOCOL.parse('Drafted [legal_draft_v3(counterparty="Acme")] and sent.').calls]
['legal_draft_v3']
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo
from .code_family import (Budget, PythonFamily, PythonValues, call_names, guarded, list_candidates, python_call_text)


class BracketValues(PythonValues):
    """``bracket_call.lark`` trees → lists of :class:`~.code_family.CallSyntax` (a result part is dropped)."""


class BracketCall(PythonFamily):
    info = ProtocolInfo(
        id="bracket_call",
        name="Inline bracketed call",
        description="Toolformer's notation: the call in square brackets inside the sentence, [tool(arg=value)].",
        parallel=True,
    )
    grammar = "bracket_call"
    transformer = BracketValues

    @guarded
    def parse(self, text: str, tools: Toolset | None, budget: Budget) -> Extraction:
        notes: list[str] = []
        lists, _spans, failed = list_candidates(self, text, notes, budget)
        found = [c for group in lists for c in group]
        if lists:
            compliant = not failed and not any(c.bare for c in found)
            return Extraction(tuple(self.finish(found, tools, notes)), tuple(notes), compliant and bool(found))
        found = self.prose_calls(text, tools, notes, budget)
        if found:
            notes.append("the calls are not in square brackets")
        return Extraction(tuple(self.finish(found, tools, notes)), tuple(notes), False)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"[{python_call_text(c)}]" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f'[{names[0] if names else "tool_name"}(argument="text", count=3)]'
        return ("Write your answer as text, and put each tool call where it belongs in the text, inside "
                f"square brackets, for example {example}. Inside the brackets write the call as Python: "
                "the tool's name and its arguments as name=value with Python literal values.")


PROTOCOL = BracketCall()
