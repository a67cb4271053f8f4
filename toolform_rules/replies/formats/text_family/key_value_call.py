r"""key_value_call: a ``TOOL: name`` line, then one ``argument: value`` line each — a block per call.

Grammar: ``grammars/key_value_call.lark``.  A value is the rest of its line, spaces around
it aside; nested values are JSON text.  A value that could not stand bare — empty, with
spaces or tabs at an end, holding a line break, or starting with a double quote — is written
as a JSON string literal and read back as the text it stands for, so every string
round-trips and each argument stays on one line.  Values are text (``text_values``).
An argument named ``tool`` cannot be written: its line would open the next block.

>>> from toolform_rules import ToolCall, sample_toolset
>>> text = PROTOCOL.render_calls([ToolCall("legal_draft_v3", {"counterparty": " Acme\nLtd", "term_months": 12,
...                                                          "contract_details": {"status": "draft"}})])
>>> print(text)
TOOL: legal_draft_v3
counterparty: " Acme\nLtd"
term_months: 12
contract_details: {"status": "draft"}
>>> PROTOCOL.parse(text, sample_toolset()).calls[0].arguments
{'counterparty': ' Acme\nLtd', 'term_months': '12', 'contract_details': '{"status": "draft"}'}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from ....calls import ToolCall
from ....grammar import Token
from ....schema.toolset import Toolset
from .shared import HEAD, Calls, Reading, TextProtocol, line_end, value_text

_HEADER_SOURCE = r"[ \t]*(?i:tool)[ \t]*[:=]"
_ENTRY_SOURCE = r"[ \t]*(?>(?:[-*][ \t]+)?)(?P<key>[\w$@.\-]+)[ \t]*[:=]"
_HEADER = re.compile(_HEADER_SOURCE)
_ENTRY = re.compile(_ENTRY_SOURCE)
_ENTRY_NO_GROUP = _ENTRY_SOURCE.replace("(?P<key>", "(?:")
# the argument lines after a header, each shorter than HEAD (so judged whole, as by its head), in one match
_SHORT_ENTRIES = re.compile(rf"(?:\r?\n(?=[^\n]{{0,{HEAD - 1}}}(?:\n|\Z))(?!{_HEADER_SOURCE})"
                            rf"{_ENTRY_NO_GROUP}[^\n]*+)*+")

# a block in the plain form: its header line, then argument lines (no header among them)
_BLOCK = re.compile(rf"{_HEADER_SOURCE}(?P<name>[^\n]*)(?:\n(?!{_HEADER_SOURCE}){_ENTRY_NO_GROUP}[^\n]*)*+")
_ENTRY_LINES = re.compile(rf"\n{_ENTRY_SOURCE.replace('(?P<key>', '(')}([^\n]*)")

#: a block as read: the tool name and its (key, raw value) lines
Block = tuple[str, list[tuple[str, str]]]


class _Blocks(Calls):
    def block(self, items: list) -> Block:
        return str(items[1]), [e for e in items[2:] if isinstance(e, tuple)]

    def entry(self, items: list) -> tuple[str, str]:
        tokens = {t.type: str(t) for t in items if isinstance(t, Token)}
        return tokens["KEY"], tokens.get("VALUE", "")


def _needs_quotes(text: str) -> bool:
    """A value that cannot stand bare on its line: empty, spaced at an end, holding a line break, or
    starting with a double quote."""
    return not text or text[0] in ' \t"' or text[-1] in " \t" or "\n" in text or "\r" in text


def _unquoted(raw: str) -> str:
    """A bare value as written, or the string a JSON string literal stands for (``"a" and "b"`` is bare)."""
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return raw
        return value if isinstance(value, str) else raw
    return raw


class KeyValueCall(TextProtocol):
    info = TextProtocol.about(
        "key_value_call", "Key-value block",
        "A `TOOL: name` line, then one `argument: value` line per argument; values are text, typed from the "
        "schema.")
    grammar = "key_value_call"
    what = "block"
    transformer = _Blocks
    start = _HEADER_SOURCE
    needle, fold_case = "tool", True

    def extent(self, text: str, start: int, end: int) -> int:
        """A block runs over the argument lines after its header, to a blank line, a header or a
        line that is not ``name: value`` (each line judged by its first HEAD characters)."""
        stop = end
        n = len(text)
        while stop < n:
            run = _SHORT_ENTRIES.match(text, stop)
            if run is not None and run.end() > stop:  # short argument lines, in C
                stop = run.end()
                if text[stop - 1] == "\r" and (stop == n or text[stop] == "\n"):
                    stop -= 1
            nxt = text.find("\n", stop)
            if nxt < 0:
                break
            begin = nxt + 1
            finish = line_end(text, begin)
            head = text[begin:min(finish, begin + HEAD)]
            if _ENTRY.match(head) is None or _HEADER.match(head) is not None:
                break
            stop = finish
        return stop

    def read_fast(self, segment: str, reading: Reading | None = None) -> Block | None:
        """One block read with the grammar's terminals: its header and argument lines in one match each."""
        if "\r" in segment:  # a carriage return ends a line only before a line feed
            segment = segment.replace("\r\n", "\n")
            if "\r" in segment:
                return None
        m = _BLOCK.fullmatch(segment)
        if m is None:
            return None
        name = m.group("name").strip(" \t")
        if not name:
            return None
        return name, [(key, value.strip(" \t")) for key, value in _ENTRY_LINES.findall(segment, m.end("name"))]

    def build(self, found: Block, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        name, entries = found
        name = name.strip("`*\"' \t") or name
        return [(name, reading.collect(name, entries, _unquoted))]

    def render_call(self, call: ToolCall) -> str:
        lines = [f"TOOL: {call.name}"]
        for key, value in call.arguments.items():
            text = value_text(value)
            if isinstance(value, str) and _needs_quotes(text):
                text = json.dumps(text, ensure_ascii=False)
            lines.append(f"{key}: {text}")
        return "\n".join(lines)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with a block for each call and nothing else: a line TOOL: followed by the tool's name, "
                "then one line per argument with its name, a colon and its value. Keep every value on its line: "
                "write a nested object or list as JSON, and put text that has line breaks or spaces at its ends "
                "in double quotes as a JSON string.\n"
                "TOOL: tool_name\ncity: New York\ndays: 3")


PROTOCOL = KeyValueCall()
