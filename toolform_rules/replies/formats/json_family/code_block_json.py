"""code_block_json: the call object inside a Markdown code fence tagged ``json``.

Grammar: ``grammars/code_block_json.lark``.  Each fence is found and its JSON read in one forward pass (a
fence inside a JSON string does not close the block).  Several objects (or an array) in one fence are read
too; a reply with no fence gives its bare call objects, noted; a fence never closed is read to the end.

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": "```"})]))
```json
{"name": "f", "arguments": {"a": "\\u0060\\u0060\\u0060"}}
```
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import BlockFormat, call_json

#: the info strings that say the fence holds JSON
JSON_TAGS = ("", "json", "jsonc", "json5")


class CodeBlockJson(BlockFormat):
    info = ProtocolInfo("code_block_json", "JSON in a fenced code block",
                        'The call object {"name": ..., "arguments": {...}} inside a ```json fenced code block.')
    unreadable = ("no fenced JSON could be read", "a fenced block could not be read")
    opening = re.compile(r"```([A-Za-z0-9_+.\-]*)")
    tag, info_tags = "json", JSON_TAGS
    until = re.compile("```")
    block = "code fence {}"
    unclosed = "is never closed"
    missing = "```json code fence"

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        # a backtick only occurs inside JSON strings: written as \u0060, no run of them can close the fence
        return "\n".join("```json\n" + call_json(c).replace("`", "\\u0060") + "\n```" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer with the call as a JSON object inside a Markdown code block marked json, and nothing "
                'else:\n```json\n{"name": "<tool name>", "arguments": {"<argument>": <value>}}\n```\n'
                "For several calls, write one such block per call.")


PROTOCOL = CodeBlockJson()
