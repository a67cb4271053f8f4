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

import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....limits import Limits
from ....schema.toolset import Toolset
from ..base import Extraction, ProtocolInfo
from .shared import PythonFamily, PythonLists, PythonValues, call_names, python_call_text

#: Toolformer's result part after the calls, up to the "]": "→ 0.29", "-> done"
RESULT = re.compile(r"[ \t\r\n]*+(?:→|->)[^\]]*+")


class BracketValues(PythonValues):
    """``bracket_call.lark`` trees → lists of :class:`~.code_family.CallSyntax` (a result part is dropped)."""


class BracketCall(PythonFamily):
    info = ProtocolInfo(
        id="bracket_call",
        name="Inline bracketed call",
        description="Toolformer's notation: the call in square brackets inside the sentence, [tool(arg=value)].",
        parallel=True,
    )
    lists = PythonLists("bracket_call", BracketValues, RESULT)

    unlisted = "the calls are not in square brackets"

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        return self.read_lists(self.lists, text, tools, limits)  # (prose around the brackets is the format)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"[{python_call_text(c)}]" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f'[{names[0] if names else "tool_name"}(argument="text", count=3)]'
        return ("Write your answer as text, and put each tool call where it belongs in the text, inside "
                f"square brackets, for example {example}. Inside the brackets write the call as Python: "
                "the tool's name and its arguments as name=value with Python literal values.")


PROTOCOL = BracketCall()
