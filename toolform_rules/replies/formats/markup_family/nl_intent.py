"""nl_intent: "I will use f with a: 1, b: some text." — the call said in words.

Grammar: ``grammars/nl_intent.lark`` (one sentence).  A sentence starts at an opening ("I will use", "I'll
call", "Let me use", "Use", a list number before it) and runs to the end of its line or to the next opening.
When the tools are known, the arguments are read against the tool's parameters: a name that is none of them
("Note:" inside a value) is part of the value before it, and a name written in words ("term months") is the
parameter it spells.  Values are text, typed from the schema (``text_values``); one the sentence could not
hold as it is (a comma, a name and a colon after it, a period and a space, a line break, spaces at its ends,
a leading quote) is written as a JSON string.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": 'Acme, "Ltd"'})])
>>> print(text)
I will use f with a: 1, b: Acme, "Ltd".
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b': 'Acme, "Ltd"'}
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ....schema.ir import Tool
from ....schema.names import canonical_name
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import Sentence, SentenceFormat, unquoted
from ..reading import tool_of

_BINDER = re.compile(r"(?i)[ \t]*(?::|=)[ \t]*\Z|[ \t]+(?:set|equal)[ \t]+to[ \t]+\Z")
_NO_TOOL = re.compile(r"(?i)\bno (?:tool|function)\b|\bnone of the tools\b")


def name_of(token: str) -> str:
    """The argument name in a NAME token (its binder dropped, a quoted name unquoted).

    >>> name_of("term months: "), name_of("a set to "), name_of('"odd: name" = ')
    ('term months', 'a', 'odd: name')
    """
    if token[-2:] == ": " and token[:1] != '"' and token[-3:-2] not in (" ", "\t"):  # the usual "name: "
        return token[:-2]
    binder = _BINDER.search(token)
    name = token[:binder.start()] if binder else token
    if binder and binder.group(0).strip()[:1] not in (":", "="):
        name = token.split()[0]
    name = name.strip()
    return unquoted(name) if name[:1] == '"' else name


_PARAMETERS: dict[int, tuple[Tool, dict[str, tuple[str, bool]]]] = {}


def _parameters(tool: Tool) -> dict[str, tuple[str, bool]]:
    """The tool's parameters by name and by canonical name: (their name, whether they take free text), kept
    per tool."""
    kept = _PARAMETERS.get(id(tool))
    if kept is not None and kept[0] is tool:
        return kept[1]
    table = {canonical_name(p.name): (p.name, not p.schema.types or "string" in p.schema.types)
             for p in tool.parameters.properties}
    table.update({p.name: table[canonical_name(p.name)] for p in tool.parameters.properties})
    if len(_PARAMETERS) >= 256:
        _PARAMETERS.clear()
    _PARAMETERS[id(tool)] = (tool, table)
    return table


class NlIntent(SentenceFormat):
    info = ProtocolInfo(id="nl_intent", name="Natural-language intent", text_values=True,
                        description="The model says which tool it will use and with what values ('I will use TOOL "
                                    "with arg: value, ...'); values are text, read against the tool's parameters.")
    grammar = "nl_intent"
    verbs = ("use", "call", "invoke", "run", "using", "calling")
    frame_prefix = re.compile(r"(?i)(?:\d{1,3}[.)][ \t]*)?(?:(?:I(?:'ll| will| would| am going to| shall| want to"
                              r"| need to)|let me)[ \t]+)?\Z")
    repeated_opening = True
    opener, binder, numbered = "I will use", ": ", True
    argument_head = r"(?P<name>(?>{NAME}))"
    none_found = "no sentence naming a tool ('I will use TOOL with name: value') was found"

    def key_of(self, token: str) -> str:
        return name_of(token)

    def plain_key(self, key: str) -> bool:
        return (self.terminals.all["NAME"].fullmatch(key + ": ") is not None and key[:1] != '"'
                and name_of(key + ": ") == key)

    def says_no_tool(self, text: str) -> str | None:
        """"No tool fits" (``_NO_TOOL``, searched from the first "no" in any case)."""
        first = min((at for at in (text.find(w) for w in ("no", "No", "nO", "NO")) if at >= 0), default=-1)
        return "the reply says no tool fits" if first >= 0 and _NO_TOOL.search(text, first) else None

    def arguments(self, sentence: str, read: Sentence, tools: Toolset | None
                  ) -> tuple[dict[str, Any], list[str], tuple[str, ...]]:
        """The arguments, read against the tool's parameters when it is known: a name that is none of them,
        after a value of a text parameter, is part of that text ("b: Acme, Note: fragile"); after any other
        value it is an argument of its own (a name the model made up, for validation to report)."""
        tool = tool_of(tools, read[0].strip("`"))
        if tool is None:
            return super().arguments(sentence, read, tools)
        parameters = _parameters(tool)
        values: dict[str, Any] = {}
        notes: list[str] = []
        twice: dict[str, None] = {}
        key, takes_text, start = "", False, 0  # the argument before
        for token, raw, _, end in read[1]:
            name = name_of(token)
            known = parameters.get(name) or parameters.get(canonical_name(name))
            if known is None and takes_text:
                values[key] = unquoted(sentence[start:end])  # the value before runs on
                continue
            key, takes_text, start = (known[0], known[1], end - len(raw)) if known else (name, False, end - len(raw))
            if key in values:
                notes.append(f"argument {key!r} is given twice; the last one counts")
                twice[key] = None
            values[key] = unquoted(raw)
        return values, notes, tuple(twice)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer in plain English: say which tool you will use and give each value it needs as "
                "name: value, for example\n"
                "I will use tool_name with first_argument: some text, second_argument: 3.\n"
                "Use one sentence per call (number them if there are several). Do not write JSON or code, except "
                "that a list or an object may be written as JSON, and a value holding a comma followed by a name "
                "and a colon, or a period followed by a space, goes in double quotes. If no tool fits, say so in "
                "one sentence.")


PROTOCOL = NlIntent()
