"""nl_intent_structured: ``Use TOOL with arg = value, arg = value.`` — one framed sentence per call.

Grammar: ``grammars/nl_intent_structured.lark`` (one sentence).  A sentence starts at the frame's first word
("Use", "Call", "I will use", a list number before it) and runs to the end of its line or to the next frame.
Values are text, typed from the tool's schema (``text_values``); one the frame could not hold as it is (a
comma, a name and ``=`` after it, a period and a space, a line break, spaces at its ends, a leading quote) is
written as a JSON string.  ``No tool is needed.`` is the frame's way of calling nothing.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": "Acme, Ltd", "c": "x, d = y"})])
>>> print(text)
Use f with a = 1, b = Acme, Ltd, c = "x, d = y".
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b': 'Acme, Ltd', 'c': 'x, d = y'}
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import SentenceFormat

_NO_TOOL = re.compile(r"(?i)\s*no tool is needed\.?\s*")


class NlIntentStructured(SentenceFormat):
    info = ProtocolInfo(id="nl_intent_structured", name="Natural-language intent in a fixed sentence frame",
                        description="One sentence per call in the frame 'Use TOOL with arg = value, arg = value.'; "
                                    "values are text.", text_values=True)
    grammar = "nl_intent_structured"
    verbs = ("use", "call")
    frame_prefix = re.compile(r"(?i)(?:\d{1,3}[.)][ \t]*)?(?:I(?:'ll| will| would| am going to| shall)[ \t]+)?\Z")
    argument_head = r"(?P<name>(?>{KEY}))(?>{EQUALS})"
    none_found = "no sentence in the frame 'Use TOOL with arg = value.' was found"

    def plain_key(self, key: str) -> bool:
        return self.terminals.all["KEY"].fullmatch(key) is not None and key[0] != '"'

    def says_no_tool(self, text: str) -> str | None:
        return "the reply says no tool is needed" if _NO_TOOL.fullmatch(text) else None

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer with one sentence per call, in exactly this frame, and nothing else:\n"
                "Use <tool name> with <argument> = <value>, <argument> = <value>.\n"
                "Write values as plain text; put a value in double quotes if it contains a comma followed by "
                "another argument, a period followed by a space, or a line break. If no tool fits, answer "
                "exactly: No tool is needed.")


PROTOCOL = NlIntentStructured()
