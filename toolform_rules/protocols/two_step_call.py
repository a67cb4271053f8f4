"""two_step_call: the tool's name on one line, then its arguments as a JSON object on the next.

Grammar: ``grammars/two_step_call.lark``.  The module finds each arguments object (one
linear, quote-aware scan), takes the last line before it that is not blank and not a code
fence as the name line, and reads both: the name by a regular expression that mirrors the
grammar's ``name`` rule (else the grammar, which says where it stops), the arguments by
strict JSON, the lenient fast path, then the grammar.  When a toolset is given and the
line is prose ("I will use legal_draft_v3:"), the tool named in it is taken, noted.

>>> from toolform_rules.calls import ToolCall
>>> print(PROTOCOL.render_calls([ToolCall("f", {"a": 1}), ToolCall("math.factorial", {"n": 5})]))
f
{"a": 1}
math.factorial
{"n": 5}
>>> [(c.name, c.arguments) for c in PROTOCOL.parse("**f**\\n```json\\n{'a': True}\\n```").calls]
[('f', {'a': True})]
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from .. import grammar
from ..grammar import GrammarFailure
from .json_family import (MAX_CANDIDATES, GrammarBudget, Reading, Values, bracket_depth, fast_json, guarded,
                          read_grammar, read_json, report_failure, scan_values)
from .values import strip_code_fence

GRAMMAR = "two_step_call"
_NAME = r"[^\W\d]\w*(?:[.\-]\w+)*"
# The grammar's `name` rule, as one regular expression (a property test keeps them in step).
NAME_LINE = re.compile(rf"[ \t]*(?:`|\*\*?)?[ \t]*({_NAME})[ \t]*(?:\(\))?[ \t]*(?:`|\*\*?)?[ \t]*:?[ \t]*")
_WORD = re.compile(_NAME)


class TwoStepValues(Values):
    """A ``two_step_call.lark`` tree → steps as (name, arguments), a name, or one arguments object."""

    def step(self, items: list) -> tuple[str, dict]:
        return items[0], items[1] if len(items) > 1 else {}

    def name(self, items: list) -> str:
        return str(next(item for item in items if isinstance(item, grammar.Token) and item.type == "NAME"))

    def arguments(self, items: list) -> Any:
        return next(item for item in items if not isinstance(item, grammar.Token))

    def candidate(self, items: list) -> Any:
        return items[0]


_TRANSFORMER = TwoStepValues()


def read_name(line: str, budget: GrammarBudget | None = None) -> str:
    """The tool name a name line holds: the regular expression, else the grammar (:class:`GrammarFailure`)."""
    match = NAME_LINE.fullmatch(line)
    if match is not None:
        return match.group(1)
    return read_grammar(GRAMMAR, line, _TRANSFORMER, "name", budget=budget)


def grammar_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a whole reply in the format, read by the grammar alone."""
    return list(read_grammar(GRAMMAR, text, _TRANSFORMER))


def _name_lines(text: str, start: int, end: int, most: int = 3) -> list[tuple[int, int]]:
    """Spans of the last ``most`` lines of ``text[start:end]`` that are neither blank nor a code fence, nearest first.

    The stretch on the arguments' own line counts, unless it ends with a colon (a label such
    as ``Arguments:``, not a name).
    """
    found: list[tuple[int, int]] = []
    pos = end
    first = True
    while pos > start and len(found) < most:
        line_start = max(text.rfind("\n", start, pos) + 1, start)
        line = text[line_start:pos].strip()
        if line and not line.startswith("```") and not (first and line.endswith(":")):
            found.append((line_start, pos))
        first = False
        pos = line_start - 1
    return found


def _only_fences(text: str) -> bool:
    """Whether ``text`` holds nothing but blank lines and code-fence lines."""
    return all(not line.strip() or line.strip().startswith("```") for line in text.split("\n"))


class TwoStepCall(Protocol):
    info = ProtocolInfo(
        id="two_step_call",
        name="Name line, then arguments",
        description="The tool's name alone on a line, then its arguments as a JSON object on the next line.",
        parallel=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return guarded(self.info.id, lambda t: self._parse(t, tools, limits), text)

    def _parse(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        reading = Reading(text)
        budget = GrammarBudget.of(limits)
        body, _fenced = strip_code_fence(text)
        offset = text.find(body) if body else 0
        if self._lines(reading, body, offset):
            return reading.extraction()
        found = scan_values(body, openers="{", depth=bracket_depth(limits))
        found.note(reading, offset)
        spans = found.spans
        failures: list[tuple[GrammarFailure, int, bool]] = []
        previous = 0
        line, counted = 1, 0  # the line number at ``counted`` (counted forward, once)
        for start, end in spans:
            lines = _name_lines(body, previous, start)
            if not lines:
                line, counted = line + body.count("\n", counted, start), start
                reading.note(f"the arguments at line {line} have no name line before them")
                previous = end
                continue
            chosen = self._name(reading, body, lines, offset, tools, budget)
            try:
                arguments = read_json(GRAMMAR, body[start:end], _TRANSFORMER, "candidate", (dict,), budget=budget)
            except GrammarFailure as failure:
                failures.append((failure, offset + start, True))
                previous = end
                continue
            if chosen is not None:
                name, (line_start, line_end) = chosen
                reading.add([(name, arguments)], (offset + line_start, offset + end))
                if "\n" not in body[line_end:start]:
                    reading.note(f"call {len(reading.calls)}: the name and the arguments share a line")
                if (line_start, line_end) != lines[0] or not _only_fences(body[previous:line_start]) \
                        or not _only_fences(body[line_end:start]):
                    reading.compliant = False
            previous = end
        tail = body[previous:]
        if not spans:
            self._name_only(reading, body, offset, tools)
        elif not _only_fences(tail):
            reading.compliant = False
        if not reading.compliant and not reading.notes:
            reading.note("the reply holds text besides the name and arguments lines")
        report_failure(reading, failures, "no arguments could be read", "an arguments object could not be read")
        return reading.extraction()

    @staticmethod
    def _lines(reading: Reading, body: str, offset: int) -> bool:
        """The fast path: the reply is name line, strict JSON object line, name line, ... exactly.

        At most :data:`MAX_CANDIDATES` calls are read (as many as the other paths read); more are noted.
        """
        lines = body.split("\n")
        if len(lines) % 2 or not lines[0]:
            return False
        found = []
        position = offset
        for index in range(0, min(len(lines), 2 * MAX_CANDIDATES), 2):
            name_line, arguments_line = lines[index], lines[index + 1]
            match = NAME_LINE.fullmatch(name_line)
            if match is None or arguments_line[:1] != "{":
                return False
            arguments = fast_json(arguments_line)
            if not isinstance(arguments, dict):
                return False
            end = position + len(name_line) + 1 + len(arguments_line)
            found.append(((match.group(1), arguments), (position, end)))
            position = end + 1
        for call, span in found:
            reading.add([call], span)
        if len(lines) > 2 * MAX_CANDIDATES:
            reading.note(f"the reply holds more than {MAX_CANDIDATES} calls; the first {MAX_CANDIDATES} were read")
        return True

    @staticmethod
    def _name(reading: Reading, body: str, lines: list[tuple[int, int]], offset: int, tools: Toolset | None,
              budget: GrammarBudget) -> tuple[str, tuple[int, int]] | None:
        """The tool name for an arguments object, from the name lines before it (nearest first).

        Without a toolset: the nearest line, read as a name.  With one: the nearest line whose
        name is a tool, else a tool named inside one of the lines (noted), else as without.
        """
        names = []
        for line_start, line_end in lines:
            match = NAME_LINE.fullmatch(body, line_start, line_end)
            names.append(match.group(1) if match else None)
        if tools is not None:
            for name, span in zip(names, lines):
                if name is not None and tools.get(name) is not None:
                    if span != lines[0]:
                        reading.note(f"the tool name {name!r} is not on the line just before its arguments")
                    return name, span
            tried: set[str] = set()  # a word the toolset does not know, once (a long line repeats its words)
            for span in lines:
                line = body[span[0]:span[1]]
                for candidate in [line.strip().strip("`*:").strip()] + _WORD.findall(line)[::-1]:
                    if candidate in tried:
                        continue
                    tried.add(candidate)
                    if candidate and tools.get(candidate) is not None:
                        reading.note(f"the name line {line.strip()[:60]!r} is not a bare name; read the tool "
                                     f"{candidate[:60]!r} from it")
                        return candidate, span
        if names[0] is not None:
            return names[0], lines[0]
        line = body[lines[0][0]:lines[0][1]]
        try:  # the grammar has the last word (and says where the line stops being a name)
            return read_grammar(GRAMMAR, line, _TRANSFORMER, "name", budget=budget), lines[0]
        except GrammarFailure as failure:
            reading.failed(f"the name line {line.strip()[:60]!r} could not be read", failure, offset + lines[0][0])
            return None

    def _name_only(self, reading: Reading, body: str, offset: int, tools: Toolset | None) -> None:
        """A reply with no arguments object: one name line alone is a call without arguments (noted)."""
        stripped = body.strip()
        if not stripped or "\n" in stripped:
            reading.note("the reply holds no arguments object")
            return
        match = NAME_LINE.fullmatch(stripped)
        name = match.group(1) if match else None
        if name is None and tools is not None and tools.get(stripped) is not None:
            name = stripped
        if name is None:
            reading.note("the reply holds no arguments object")
            return
        reading.add([(name, {})], (offset, offset + len(body)))
        reading.note("a name line with no arguments line after it: read as a call without arguments")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"{c.name}\n{json.dumps(c.arguments, ensure_ascii=False)}" for c in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer in two lines and nothing else: on the first, only the name of the tool; on the second, "
                'its arguments as one JSON object, such as {"<argument>": <value>}. '
                "For several calls, repeat the two lines for each call.")


PROTOCOL = TwoStepCall()
