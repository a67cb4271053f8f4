"""python_call: ``tool_name(arg=value, ...)`` — calls written as Python, one a line.

Grammar: ``grammars/python_call.lark`` (calls of ``grammars/python_values.lark``).  A
reply made of calls is read whole by the fast path of
:mod:`~toolform_rules.protocols.code_family` (JSON's decoder, a quick reader,
``ast.parse``); otherwise (prose around the calls, names with dashes, a positional value
after a keyword) each ``name(...)`` in the text is read on its own, the grammar reading
what the fast path cannot.
With a toolset, calls in running text count only when they name one of its tools.
Positional values are bound to the tool's parameters in declaration order.

>>> from toolform_rules import sample_toolset
>>> PROTOCOL.parse('legal_draft_v3("Acme", 5, term_months=12)', sample_toolset()).calls[0].arguments
{'counterparty': 'Acme', 'value': 5, 'term_months': 12}
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import ProtocolInfo
from .code_family import CallSyntax, PythonFamily, call_names, plain_calls, python_call_text

#: the most calls a text read directly may hold (more: the full reading, which counts what it may spend)
DIRECT_CALLS = 16


class PythonCall(PythonFamily):
    info = ProtocolInfo(
        id="python_call",
        name="Python call",
        description="Each call written as Python, tool_name(arg=value, ...), one a line.",
        parallel=True,
    )

    def read_alone(self, body: str) -> list[CallSyntax] | None:
        """Plain calls and nothing else (white space or ";" between them), at most :data:`DIRECT_CALLS`:
        :meth:`read` would take the text as calls alone, find them as its candidates, and read them so."""
        if not self.alone(body, 0, len(body)):
            return None
        found = plain_calls(body, "lines")
        return found if found is not None and len(found) <= DIRECT_CALLS else None

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
