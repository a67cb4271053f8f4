"""two_step_call: the tool's name on one line, then its arguments as a JSON object on the next.

Grammar: ``grammars/two_step_call.lark``.  Each arguments object is read as the family reads JSON;
the last line before it that is not blank nor a code fence is its name line, read by
:data:`NAME_LINE` (the grammar's ``name`` rule as one regular expression, held to it by a property
test), else by the grammar, which says where it stops.  With a toolset, a tool named in a prose
line ("I will use legal_draft_v3:") is taken, noted.

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("math.factorial", {"n": 5})]))
f
{"a": 1}
math.factorial
{"n": 5}
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Iterable, Iterator, Sequence

from .... import grammar
from ....calls import ToolCall
from ....grammar import GrammarFailure
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import Call, Candidate, JsonFamily, Reply, Values, read_grammar, relocate
from ..reading import MAX_NOTES, tool_of

_NAME = r"[^\W\d]\w*(?:[.\-]\w+)*"
#: the grammar's ``name`` rule, as one regular expression
NAME_LINE = re.compile(rf"[ \t]*(?:`|\*\*?)?[ \t]*({_NAME})[ \t]*(?:\(\))?[ \t]*(?:`|\*\*?)?[ \t]*:?[ \t]*")
_WORD = re.compile(_NAME)
#: lines that are blank or a code fence (``fullmatch`` a stretch: it holds nothing else)
_FENCE_LINES = re.compile(r"(?:[^\S\n]*+(?:```[^\n]*+)?+\n)*+[^\S\n]*+(?:```[^\n]*+)?+")

Span = tuple[int, int]


class TwoStepValues(Values):
    """A ``two_step_call.lark`` tree → steps as (name, arguments), a name, or one arguments object."""

    def step(self, items: list) -> tuple[str, dict]:
        return items[0], items[1] if len(items) > 1 else {}

    def name(self, items: list) -> str:
        return str(next(item for item in items if isinstance(item, grammar.Token) and item.type == "NAME"))

    def arguments(self, items: list) -> Any:
        return next(item for item in items if not isinstance(item, grammar.Token))


def _name_lines(text: str, start: int, end: int) -> Iterator[Span]:
    """The spans of the lines of ``text[start:end]`` that are neither blank nor a code fence, nearest first (the
    stretch before ``end`` on its line counts unless it ends with a colon: a label, ``Arguments:``)."""
    first = True
    while end > start:
        line_start = text.rfind("\n", start, end) + 1 or start
        line = text[line_start:end].strip()
        if line and not line.startswith("```") and not (first and line[-1] == ":"):
            yield line_start, end
        first = False
        end = line_start - 1


def _tool_in(reply: Reply, lines: list[Span], tools: Toolset) -> tuple[str, Span] | None:
    """A tool of ``tools`` that the name line of ``lines`` after the first names, else one a line names inside it
    (noted either way)."""
    text = reply.text
    for span in lines[1:]:
        further = NAME_LINE.fullmatch(text, *span)
        if further is not None and tool_of(tools, further.group(1)) is not None:
            reply.note(f"the tool name {further.group(1)!r} is not on the line just before its arguments")
            return further.group(1), span
    tried: set[str] = set()  # a word the toolset does not know, once (a long line repeats its words)
    for span in lines:
        line = text[span[0]:span[1]]
        for word in [line.strip().strip("`*:").strip()] + _WORD.findall(line)[::-1]:
            if word not in tried and tool_of(tools, word) is not None:
                reply.note(f"the name line {line.strip()[:60]!r} is not a bare name; read the tool {word[:60]!r} "
                           "from it")
                return word, span
            tried.add(word)
    return None


class TwoStepCall(JsonFamily):
    info = ProtocolInfo("two_step_call", "Name line, then arguments",
                        "The tool's name alone on a line, then its arguments as a JSON object on the next line.")
    transformer = TwoStepValues()
    unreadable = ("no arguments could be read", "an arguments object could not be read")

    def calls_of(self, value: Any, reply: Reply | None = None) -> list[Call]:
        return [value]  # the grammar's step: (name, arguments)

    def read_reply(self, reply: Reply, tools: Toolset | None) -> Reply:
        start, stop, _fenced = reply.body()
        values = reply.values(start, stop, "{")[0]
        previous = start
        for candidate in values:
            self._step(reply, previous, candidate, tools)
            previous = candidate.end
        if not values:
            self._name_only(reply, start, stop, tools)
        elif not _FENCE_LINES.fullmatch(reply.text, previous, stop):
            reply.compliant = False
        if not reply.compliant and not reply.notes:
            reply.note("the reply holds text besides the name and arguments lines")
        return reply

    def _step(self, reply: Reply, previous: int, candidate: Candidate, tools: Toolset | None) -> None:
        """The call of the arguments ``candidate`` and the name line before it (after ``previous``), if any."""
        text = reply.text
        nearest = next(_name_lines(text, previous, candidate.begin), None)
        if nearest is None:  # (its line counted only while a note is kept: linear, however many)
            line = text.count("\n", 0, candidate.begin) + 1 if len(reply.notes) < MAX_NOTES else 0
            reply.note(f"the arguments at line {line} have no name line before them")
        elif candidate.failure is not None:  # (not a call, whatever the line before it says)
            reply.failed(candidate)
        elif (chosen := self._name(reply, previous, candidate.begin, nearest, tools)) is not None:
            name, (line_start, line_end) = chosen
            reply.calls.append(reply.call(name, candidate.value, (line_start, candidate.end)))
            if text.find("\n", line_end, candidate.begin) < 0:
                reply.note(f"call {len(reply.calls)}: the name and the arguments share a line")
            if (line_start, line_end) != nearest or not _FENCE_LINES.fullmatch(text, previous, line_start) \
                    or not _FENCE_LINES.fullmatch(text, line_end, candidate.begin):
                reply.compliant = False

    def _name(self, reply: Reply, start: int, end: int, nearest: Span, tools: Toolset | None
              ) -> tuple[str, Span] | None:
        """The tool name for the arguments at ``end``: the ``nearest`` line's; with a toolset, unless it names a
        tool, a tool one of the last three lines names (:func:`_tool_in`); else the grammar's reading."""
        match = NAME_LINE.fullmatch(reply.text, *nearest)
        name = None if match is None else match.group(1)
        if name is not None and (tools is None or tool_of(tools, name) is not None):
            return name, nearest
        found = None if tools is None else _tool_in(reply, list(itertools.islice(_name_lines(reply.text, start, end),
                                                                                  3)), tools)
        if found is not None or name is not None:
            return found or (name, nearest)  # type: ignore[return-value]
        line = reply.text[nearest[0]:nearest[1]]
        try:  # the grammar has the last word (and says where the line stops being a name)
            return read_grammar(self.grammar, line, self.transformer, "name", budget=reply.budget), nearest
        except GrammarFailure as failure:
            where = relocate(failure, reply.text, nearest[0]).describe()
            reply.note(f"the name line {line.strip()[:60]!r} could not be read: {where}")
            return None

    @staticmethod
    def _name_only(reply: Reply, start: int, stop: int, tools: Toolset | None) -> None:
        """A reply with no arguments object: one name line alone is a call without arguments (noted)."""
        stripped = reply.text[start:stop].strip()
        match = NAME_LINE.fullmatch(stripped) if stripped and "\n" not in stripped else None
        known = "\n" not in stripped and tool_of(tools, stripped) is not None
        name = match.group(1) if match else stripped if known else None
        if name is None:
            reply.note("the reply holds no arguments object")
            return
        reply.add([(name, {})], (start, stop))
        reply.note("a name line with no arguments line after it: read as a call without arguments")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{c.name}\n{json.dumps(c.arguments, ensure_ascii=False)}" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer in two lines and nothing else: on the first, only the name of the tool; on the second, "
                'its arguments as one JSON object, such as {"<argument>": <value>}. '
                "For several calls, repeat the two lines for each call.")


PROTOCOL = TwoStepCall()
