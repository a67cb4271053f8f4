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
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import Token, Transformer, Tree
from .text_family import (HEAD, GrammarBudget, LineStarts, Read, grammar_parse, line_end, needs_json_quotes,
                          never_raises, read_calls, read_json_quoted, value_text)

GRAMMAR = "key_value_call"

_HEADER_SOURCE = r"[ \t]*(?i:tool)[ \t]*[:=]"
_ENTRY_SOURCE = r"[ \t]*(?>(?:[-*][ \t]+)?)(?P<key>[\w$@.\-]+)[ \t]*[:=]"
_HEADER = re.compile(_HEADER_SOURCE)
_ENTRY = re.compile(_ENTRY_SOURCE)
_HEADER_LINES = LineStarts(_HEADER_SOURCE)
# the argument lines after a header, each shorter than HEAD (so judged whole, as by its head), in one match
_SHORT_ENTRIES = re.compile(rf"(?:\r?\n(?=[^\n]{{0,{HEAD - 1}}}(?:\n|\Z))(?!{_HEADER_SOURCE})"
                            rf"{_ENTRY_SOURCE.replace('(?P<key>', '(?:')}[^\n]*+)*+")

#: a block as read: the tool name and its (key, raw value) lines
Block = tuple[str, list[tuple[str, str]]]


def _block_fast(segment: str) -> Block | None:
    """One block read line by line with the grammar's terminals; ``None`` when a line falls
    outside them (the grammar then reads the block and says where it stopped)."""
    lines = [line[:-1] if line.endswith("\r") else line for line in segment.split("\n")]
    lines[-1] = segment[segment.rfind("\n") + 1:]  # a carriage return ends a line only before a line feed
    first = lines[0]
    m = _HEADER.match(first)
    if m is None or "\r" in first:
        return None
    name = first[m.end():].strip(" \t")
    if not name:
        return None
    entries: list[tuple[str, str]] = []
    for line in lines[1:]:
        if "\r" in line or _HEADER.match(line):
            return None
        e = _ENTRY.match(line)
        if e is None:
            return None
        entries.append((e.group("key"), line[e.end():].strip(" \t")))
    return name, entries


class _Blocks(Transformer):
    def start(self, blocks: list) -> list:
        return blocks

    def block(self, items: list) -> Block:
        name = str(items[1])
        return name, [e for e in items[2:] if isinstance(e, tuple)]

    def entry(self, items: list) -> tuple[str, str]:
        tokens = {t.type: str(t) for t in items if isinstance(t, Token)}
        return tokens["KEY"], tokens.get("VALUE", "")


def _block_grammar(segment: str, budget: GrammarBudget | None = None) -> Block:
    tree = grammar_parse(GRAMMAR, segment, budget)
    blocks = _Blocks().transform(tree) if isinstance(tree, Tree) else []
    return blocks[0] if blocks else ("", [])


def build_call(name: str, entries: list[tuple[str, str]]) -> Read:
    name = name.strip("`*\"' \t") or name
    arguments: dict[str, Any] = {}
    notes: list[str] = []
    for key, raw in entries:
        if key in arguments:
            notes.append(f"{name}: {key} is given more than once; the last value is kept")
        arguments[key] = read_json_quoted(raw)
    return name, arguments, notes, True


def _extent(text: str, start: int, end: int) -> int:
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


class KeyValueCall(Protocol):
    info = ProtocolInfo(
        id="key_value_call",
        name="Key-value block",
        description="A `TOOL: name` line, then one `argument: value` line per argument; values are text, typed "
                    "from the schema.",
        parallel=True,
        text_values=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return never_raises(self.id, self._parse, text, tools, limits)

    def _parse(self, text: str, tools: Toolset | None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        budget = GrammarBudget.of(limits)

        def read_one(segment: str) -> Read:
            found = _block_fast(segment)
            if found is None:
                found = _block_grammar(segment, budget)
            return build_call(*found)

        return read_calls(self.id, text, lambda head: _HEADER.match(head) is not None, read_one, _extent,
                          what="block", candidates=_HEADER_LINES)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self._render(call) for call in calls)

    @staticmethod
    def _render(call: ToolCall) -> str:
        lines = [f"TOOL: {call.name}"]
        for key, value in call.arguments.items():
            text = value_text(value)
            if isinstance(value, str) and needs_json_quotes(text):
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
