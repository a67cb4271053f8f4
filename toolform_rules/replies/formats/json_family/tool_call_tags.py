"""tool_call_tags: ``<tool_call>{"name": "tool", "arguments": {...}}</tool_call>``, one tag pair per call.

Grammar: ``grammars/tool_call_tags.lark`` (Hermes, Qwen, Granite).  Each ``<tool_call>`` (any case) is found
and its JSON read in one forward pass (a ``</tool_call>`` inside a JSON string does not close it).  Tolerated:
a code fence inside the tags, a missing closing tag (the call ends where the next one starts); a reply with
no tag gives its bare call objects, noted.  Rendering writes ``</`` in strings as ``<\\/`` (the same string).

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": "</tool_call>"})]))
<tool_call>
{"name": "f", "arguments": {"a": "<\\/tool_call>"}}
</tool_call>
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import BlockFormat, call_json


class ToolCallTags(BlockFormat):
    info = ProtocolInfo("tool_call_tags", "<tool_call> JSON tags",
                        'Each call as a JSON object {"name": ..., "arguments": {...}} between <tool_call> and '
                        '</tool_call> tags.')
    unreadable = ("no tagged call could be read", "a tagged call could not be read")
    opening = re.compile(r"<tool_call>", re.IGNORECASE)
    until = re.compile(r"</?tool_call>", re.IGNORECASE)
    block = "<tool_call> {}"
    unclosed = "has no closing tag"
    missing = "<tool_call> tag"
    closing_optional = True
    allowed = re.compile(r"```[A-Za-z0-9_+.\-]*")  # a code fence around the JSON

    def closes(self, marker: "re.Match[str]") -> bool:
        return marker.group()[1] == "/"

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        # "</" only occurs inside JSON strings, where "<\/" is the same text
        return "\n".join("<tool_call>\n" + call_json(c).replace("</", "<\\/") + "\n</tool_call>" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Write each call as a JSON object between <tool_call> and </tool_call> tags, and nothing else:\n"
                '<tool_call>\n{"name": "<tool name>", "arguments": {"<argument>": <value>}}\n</tool_call>\n'
                "For several calls, write one tagged object per call.")


PROTOCOL = ToolCallTags()
