"""python_call: ``tool_name(arg=value, ...)`` — calls written as Python, one a line.

Grammar: ``grammars/python_call.lark`` (calls of ``grammars/python_values.lark``).  Each
``name(...)`` in the reply is read by the code family's fast path, a hand-written reader of
the grammar's calls, and by the grammar where it declines; what the grammar refuses goes to
the family's recovery step (a string holding raw line breaks or unescaped quotes of its own
kind, a set literal: read, and noted).  With a toolset, calls in running text count only when
they name one of its tools.  Positional values are bound to the tool's parameters in order.

>>> from toolform_rules import sample_toolset
>>> PROTOCOL.parse('legal_draft_v3("Acme", 5, term_months=12)', sample_toolset()).calls[0].arguments
{'counterparty': 'Acme', 'value': 5, 'term_months': 12}
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import PythonFamily, call_names, python_call_text


class PythonCall(PythonFamily):
    info = ProtocolInfo(
        id="python_call",
        name="Python call",
        description="Each call written as Python, tool_name(arg=value, ...), one a line.",
        parallel=True,
    )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(python_call_text(c) for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f'{names[0] if names else "tool_name"}(argument="text", count=3)'
        return ("Reply with the call written as Python and nothing else: the tool's name, then its "
                f"arguments as keyword arguments in parentheses, for example {example}. Write values as "
                "Python literals: quoted strings, numbers, True/False/None, lists and dicts. For several "
                "calls, write each on its own line.")


PROTOCOL = PythonCall()
