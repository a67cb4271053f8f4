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
from .base import Extraction, ProtocolInfo
from .code_family import (CALL_START, Budget, CallSyntax, PythonFamily, PythonValues, call_names, fast_calls, guarded,
                          leftover_note, outside, python_call_text, strip_fence)


class PythonCallValues(PythonValues):
    """``python_call.lark`` trees → lists of :class:`CallSyntax`."""


class PythonCall(PythonFamily):
    info = ProtocolInfo(
        id="python_call",
        name="Python call",
        description="Each call written as Python, tool_name(arg=value, ...), one a line.",
        parallel=True,
    )
    grammar = "python_call"
    transformer = PythonCallValues

    @guarded
    def parse(self, text: str, tools: Toolset | None, budget: Budget) -> Extraction:
        body, offset = strip_fence(text)
        notes: list[str] = []
        whole = self.read_whole(body, budget)
        if whole is not None:
            return Extraction(tuple(self.finish(whole, tools, notes, offset)), tuple(notes), True)
        found = self.prose_calls(body, tools, notes, budget)
        rest = outside(body, [c.span for c in found if c.span])
        if found and rest:
            notes.append(leftover_note(rest))
        calls = self.finish(found, tools, notes, offset)
        compliant = bool(found) and not rest and not any(c.bare for c in found)
        return Extraction(tuple(calls), tuple(notes), compliant)

    def read_whole(self, body: str, budget: Budget | None = None) -> list[CallSyntax] | None:
        """The calls of a body that is nothing but calls (the fast path), with their spans."""
        if not body or not body.endswith((")", ";")) or CALL_START.match(body) is None:
            return None  # prose before or after the calls: each is read on its own
        calls = fast_calls(body, "lines", budget)
        if not calls or any(c.bare for c in calls):
            return None
        return calls

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
