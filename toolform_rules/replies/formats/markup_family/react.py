"""react: ``Thought: …`` / ``Action: tool`` / ``Action Input: {json}`` — the ReAct convention.

Grammar: ``grammars/react.lark`` (the labelled steps).  Each ``Action`` is a call and the ``Action Input``
after it holds the arguments: a JSON object as models write it (single quotes, Python literals, trailing
commas, a code fence around it, words after it: :func:`read_input`).  An input that is not an object is the
value of the tool's only parameter when it has exactly one (LangChain's single-input tools), else it is kept
under ``_raw``.  ``Observation`` and ``Final Answer`` steps are ignored.  The labels are found by one pattern
of the grammar's terminals (the fast path); the grammar runs where the steps are out of order, to say where.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1})])
>>> print(text)
Thought: I will call f.
Action: f
Action Input: {"a": 1}
>>> PROTOCOL.parse("Action: f\\nAction Input: {'a': True,}\\nObservation: ok").calls[0].arguments
{'a': True}
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Callable, Iterable, Sequence

from ....calls import ToolCall
from ....grammar import GrammarFailure, Transformer, parse
from ....limits import DEFAULT_LIMITS, Limits
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, ProtocolInfo, RawCall
from ..duplicates import noted, places
from .shared import (LineCounter, Stopped, excerpt, grammar_stop_note, lenient_value, only_fences,
                            shifted)
from ..reading import GrammarBudget, strip_code_fence, tool_of
from ..values import balanced_spans

# a label at a line's start, its kind by group: Thought, Action Input, Action, Observation, Final Answer
_LABEL_SOURCE = (r"[ \t]*\*{0,2}(?:(thought)|(action[ \t]+input)|(action)|(observation)|(final[ \t]+answer))\*{0,2}"
                 r"[ \t]*:\*{0,2}")
_LABEL = re.compile(_LABEL_SOURCE, re.I)
# a label at the start of a later line (the line break found in C, then the label's first character)
_NEXT_LABEL = re.compile(r"\n(?=(?-i:[ \t*TtAaOoFf]))" + _LABEL_SOURCE, re.I)
_KINDS = ("", "THOUGHT", "ACTION_INPUT", "ACTION", "OBSERVATION", "FINAL")
_NAME_JUNK = "`'\"*_ \t\r\n"
_DECODER = json.JSONDecoder()

Step = tuple[str, str, int, int]  # kind, content, where the label starts, where the content ends


def _resumes(text: str, at: int, label: int, content: int) -> tuple[int, ...]:
    """Where the grammar can start over to stop at the label at ``at`` as it does on the whole reply: where
    the item before it starts (``label``, a step or an Action with its Action Input; -1: there is only
    prose before it), then on the last character of the content before ``at`` (from ``content``; the
    grammar reads it as prose), then at ``at``."""
    tail = content + len(text[content:at].rstrip("\n")) - 1
    return ((label,) if label >= 0 else (0,)) + ((tail,) if tail >= content else ()) + (at,)


def _steps_or_stop(text: str) -> tuple[str, list[Step]] | Stopped:
    """The fast path: the prose before the first label and the labelled steps (an Action's and an Action
    Input's content; the other steps' is not needed) — or where the grammar stops (an Action Input that
    follows no Action) and where it can start over to stop the same way (see :func:`_resumes`)."""
    steps: list[Step] = []
    prose_end = -1
    last_end = label_start = 0
    kind = ""
    item = -1  # where the grammar's last item (a step; an Action with its Action Input) starts
    first = _LABEL.match(text)
    for found in itertools.chain((first,) if first is not None else (), _NEXT_LABEL.finditer(text)):
        at, label_end, word = found.start() + (found is not first), found.end(), _KINDS[found.lastindex]  # type: ignore
        if prose_end < 0:
            prose_end = at
        else:
            end = at - 1 if at > last_end else at  # the line break before a label is no one's
            steps.append((kind, text[last_end:end] if kind[:6] == "ACTION" else "", label_start, end))
        if word == "ACTION_INPUT":
            if kind != "ACTION":
                return Stopped(at, label_end, _resumes(text, at, item, last_end if steps else 0), text[at:label_end])
        else:
            item = at
        kind, label_start, last_end = word, at, label_end
    if prose_end < 0:
        return text, []
    steps.append((kind, text[last_end:] if kind[:6] == "ACTION" else "", label_start, len(text)))
    return text[:prose_end], steps


class ReactTree(Transformer):
    """A ``react.lark`` tree → the prose before the first label and the steps, as the fast path lists them."""

    def _step(self, items: list) -> list[Step]:
        out: list[Step] = []
        for label, content in zip(items, items[1:] + [None]):
            if label.type != "CONTENT":
                content = content if content is not None and content.type == "CONTENT" else None
                kept = str(content) if content is not None and label.type[:6] == "ACTION" else ""
                out.append((label.type, kept, label.start_pos, (content or label).end_pos))
        return out

    thought = action = observation = final = _step

    def prose(self, items: list) -> str:
        return str(items[0])

    def start(self, items: list) -> tuple[str, list[Step]]:
        prose = items[0] if items and isinstance(items[0], str) else ""
        return prose, [step for item in items if isinstance(item, list) for step in item]


def _steps_by_grammar(text: str) -> tuple[str, list[Step]]:
    return ReactTree().transform(parse("react", text))  # type: ignore[no-any-return]


def _name(content: str) -> str:
    name = content.strip().strip(_NAME_JUNK)
    return name.split("\n", 1)[0].strip().strip(_NAME_JUNK)


def read_input(content: str, name: str = "", tools: Toolset | None = None, budget: GrammarBudget | None = None,
               place: Callable[[GrammarFailure, int], GrammarFailure] | None = None, twice: list[str] | None = None
               ) -> tuple[dict[str, Any], list[str], bool]:
    """The arguments an Action Input holds, notes on it, and whether it was exactly one JSON object (``twice``
    gets where the object writes a key twice; its last value is read).

    >>> read_input(' {"a": 1}')
    ({'a': 1}, [], True)
    >>> read_input(' {"a": 1} and then some')
    ({'a': 1}, ["words after the Action Input's JSON were ignored: 'and then some'"], False)
    >>> read_input(" Paris")
    ({'_raw': 'Paris'}, ['the Action Input is not a JSON object; it is kept under _raw'], False)
    >>> read_input(' {"a": 1, "b": ')[1]
    ["the Action Input's JSON could not be read: line 1, column 13: expected ... found the end of the text"]

    The JSON as models write it: the repairs beyond the grammar.  ``budget`` (the reply's) bounds what the
    lenient JSON grammar reads; ``place`` moves a failure at an offset of ``content`` into the reply.
    """
    body = strip_code_fence(content).body if "`" in content else content.strip()
    if not body:
        return {}, [], True
    budget = budget if budget is not None else GrammarBudget(200_000)
    reader = _object_input if body[0] == "{" else _list_input if body[0] == "[" else _other_input
    read = reader(body, budget, twice)
    if isinstance(read, GrammarFailure):
        failure = place(read, max(content.find(body), 0)) if place is not None else read
        return {}, [f"the Action Input's JSON could not be read: {failure.describe()}"], False
    return _object_or_value(*read, name, tools)


_Read = tuple[Any, list[str], bool]  # a value, notes on it, whether it was exactly one JSON object


def _object_input(body: str, budget: GrammarBudget, twice: list[str] | None) -> _Read | GrammarFailure:
    """An input that starts with an object: the object alone (strict JSON by ``json``, which says where it ends;
    else by the lenient reader), words after it noted."""
    try:
        value, end = _DECODER.raw_decode(body)
        strict = True
    except (ValueError, RecursionError):
        end, strict = balanced_spans(body, limit=1)[0][1], False
        try:
            value = lenient_value(body[:end], budget)
        except GrammarFailure as failure:
            return failure
        except RecursionError:
            return GrammarFailure("json_object", 1, 1, (), "a value nested too deeply")
    if twice is not None and type(value) is dict:
        twice.extend(places(value, body[:end], budget))
    leftover = body[end:].strip()
    notes = [f"words after the Action Input's JSON were ignored: {excerpt(leftover)}"] if leftover else []
    return value, notes, strict and not leftover


def _list_input(body: str, budget: GrammarBudget, twice: list[str] | None) -> _Read | GrammarFailure:
    try:
        return lenient_value(body, budget), [], False
    except GrammarFailure as failure:
        return failure
    except RecursionError:
        return {}, ["the Action Input's JSON is nested too deeply to read"], False


def _other_input(body: str, budget: GrammarBudget, twice: list[str] | None) -> _Read:
    """Any other input: a JSON scalar, an object among words, a value as models write it, or the text."""
    try:
        return json.loads(body), [], False
    except (ValueError, RecursionError):
        pass
    spans = balanced_spans(body, limit=2)
    inside = _lenient_or_none(body[spans[0][0]:spans[0][1]], budget) if spans else None
    if isinstance(inside, dict):
        start, end = spans[0]
        if twice is not None:
            twice.extend(places(inside, body[start:end], budget))
        leftover = (body[:start] + " " + body[end:]).strip()
        notes = [f"words around the Action Input's JSON were ignored: {excerpt(leftover)}"] if leftover else []
        return inside, notes, False
    value = _lenient_or_none(body, budget) if body[0] in "\"'-0123456789tfnTFN" else _NONE
    return (body if value is _NONE else value), [], False


_NONE: Any = object()


def _lenient_or_none(text: str, budget: GrammarBudget) -> Any:
    try:
        return lenient_value(text, budget)
    except (GrammarFailure, RecursionError):
        return _NONE


def _object_or_value(value: Any, notes: list[str], exact: bool, name: str, tools: Toolset | None
                     ) -> tuple[dict[str, Any], list[str], bool]:
    """An object as the arguments; any other value as the value of the tool's only parameter (LangChain's
    single-input tools), when it has exactly one, else kept under ``_raw``."""
    if isinstance(value, dict):
        return value, notes, exact
    tool = tool_of(tools, name)
    if tool is not None and len(tool.parameters.properties) == 1:
        return {tool.parameters.properties[0].name: value}, notes, False
    return {"_raw": value}, notes + ["the Action Input is not a JSON object; it is kept under _raw"], False


def _extraction(prose: str, steps: list[Step], text: str, tools: Toolset | None, budget: GrammarBudget | None = None
                ) -> Extraction:
    """The calls of the steps; ``budget``: what the lenient JSON grammar may read of the reply."""
    calls: list[RawCall] = []
    notes: list[str] = []
    clean = True
    line_of = LineCounter(text)
    for i, (kind, content, start, end) in enumerate(steps):
        if kind != "ACTION":
            continue
        name = _name(content)
        following = steps[i + 1] if i + 1 < len(steps) else None
        twice: list[str] = []
        if name and following is not None and following[0] == "ACTION_INPUT":
            origin = following[3] - len(following[1])
            arguments, more, exact = read_input(following[1], name, tools, budget, lambda failure, at: shifted(
                failure, text, origin + at, line_of), twice)
            clean = clean and exact
            end = following[3]
        else:
            arguments, more, clean = {}, ["the Action has no Action Input"], False
            if not name:
                notes.append("line %d, column %d: an Action without a tool name was skipped" % line_of(start))
                continue
        if more:
            where = "line %d, column %d: " % line_of(start)
            notes += [where + note for note in more]
        if twice:
            notes.append(noted(name, twice))
        calls.append(RawCall(name, arguments, (start, end), tuple(twice)))
    if not calls and not notes:
        notes.append("no Action line was found")
    return Extraction(tuple(calls), tuple(notes), bool(calls) and clean and only_fences(prose))


class React(Protocol):
    info = ProtocolInfo(id="react", name="Thought / Action / Action Input",
                        description="The ReAct convention: an Action line naming the tool, then an Action Input line "
                                    "with the arguments as JSON.")

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        found = _steps_or_stop(text)
        if isinstance(found, Stopped):
            return grammar_stop_note(text, found, _steps_by_grammar, limit=limits.reply_grammar_chars,
                                     what="the steps")
        return _extraction(found[0], found[1], text, tools, GrammarBudget(limits.reply_grammar_chars))

    def by_grammar(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        """What the steps grammar alone reads of ``text``: the specification the label scan is held to."""
        try:
            prose, steps = _steps_by_grammar(text)
        except GrammarFailure as failure:
            return Extraction((), (f"the steps could not be read: {failure.describe()}",), False)
        return _extraction(prose, steps, text, tools, GrammarBudget(limits.reply_grammar_chars))

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"Thought: I will call {call.name}.\nAction: {call.name}\n"
                         f"Action Input: {json.dumps(call.arguments, ensure_ascii=False)}" for call in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply in the ReAct format: a line starting with 'Thought:' saying briefly what you will do, a line "
                "'Action:' followed by the tool's name, and a line 'Action Input:' followed by the arguments as one "
                "JSON object. Write nothing after the Action Input.\n"
                "Thought: <your reasoning>\nAction: <tool name>\nAction Input: {\"<argument>\": <value>}")


PROTOCOL = React()
