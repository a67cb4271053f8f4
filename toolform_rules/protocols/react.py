"""react: ``Thought: …`` / ``Action: tool`` / ``Action Input: {json}`` — the ReAct convention.

Grammar: ``grammars/react.lark`` (the labelled steps).  Each ``Action`` is a call and the
``Action Input`` after it holds the arguments: a JSON object as models write it (single
quotes, Python literals, trailing commas, a code fence around it, words after it).  An input
that is not an object — a bare word, a number, a list — is the value of the tool's only
parameter when it has exactly one (LangChain's single-input tools), else it is kept under
``_raw``.  ``Observation`` and ``Final Answer`` steps are ignored.

Fast path: the labels are found by one regular expression (the grammar's own terminals) in one
pass over the reply, and the JSON by ``json.loads``; the grammar is run when the steps are out of
order, to say where — on a bounded stretch before that point (``Limits.reply_grammar_chars``).

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1})])
>>> print(text)
Thought: I will call f.
Action: f
Action Input: {"a": 1}
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': 1}
>>> PROTOCOL.parse("Action: f\\nAction Input: {'a': True,}\\nObservation: ok").calls[0].arguments
{'a': True}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import GrammarFailure, Transformer, parse
from .markup_family import LineCounter, Stopped, excerpt, grammar_stop_note, never_raises, shifted
from .text_family import GrammarBudget, grammar_chars
from . import json_family
from .json_family import lenient_json
from .values import balanced_spans, loads_lenient, strip_code_fence

_LABEL_SOURCE = r"[ \t]*\*{0,2}(thought|action|action[ \t]+input|observation|final[ \t]+answer)\*{0,2}[ \t]*:\*{0,2}"
_LABEL = re.compile("^" + _LABEL_SOURCE, re.I | re.M)
# a label at the start of a later line (the line break found in C, then the label's first character)
_NEXT_LABEL = re.compile(r"\n(?=(?-i:[ \t*TtAaOoFf]))" + _LABEL_SOURCE, re.I)
_KINDS = {"thought": "THOUGHT", "action": "ACTION", "observation": "OBSERVATION"}
_FENCE_ONLY = re.compile(r"(?:```[\w.+-]*)?(?:```)?")
_NAME_JUNK = "`'\"*_ \t\r\n"


def _kind(word: str) -> str:
    word = word.lower()
    if word in _KINDS:
        return _KINDS[word]
    return "ACTION_INPUT" if word.startswith("action") else "FINAL"


Step = tuple[str, str, int, int]  # kind, content, where the label starts, where the content ends


def _steps(text: str) -> tuple[str, list[Step]] | None:
    """The fast path: the prose before the first label and the labelled steps; ``None`` where the grammar stops."""
    found = _steps_or_stop(text)
    return None if isinstance(found, Stopped) else found


def _labels(text: str) -> Iterator[tuple[int, int, str]]:
    """Each label at the start of a line: where it starts, where it ends, its word."""
    first = _LABEL.match(text)
    if first is not None:
        yield 0, first.end(), first.group(1)
    for found in _NEXT_LABEL.finditer(text):
        yield found.start() + 1, found.end(), found.group(1)


def _resumes(text: str, at: int, label: int, content: int) -> tuple[int, ...]:
    """Where the grammar can start over to stop at the label at ``at`` as it does on the whole reply: where
    the item before it starts (``label``, a step or an Action with its Action Input; -1: there is only
    prose before it), then on the last character of the content before ``at`` (from ``content``; the
    grammar reads it as prose), then at ``at``."""
    tail = content + len(text[content:at].rstrip("\n")) - 1
    return ((label,) if label >= 0 else (0,)) + ((tail,) if tail >= content else ()) + (at,)


def _steps_or_stop(text: str) -> tuple[str, list[Step]] | Stopped:
    """:func:`_steps`, or where the grammar stops (an Action Input that follows no Action) and where it can
    start over to stop the same way (see :func:`_resumes`)."""
    steps: list[Step] = []
    previous = ""
    prose_end = -1
    last_end = 0
    label_start = 0
    kind = ""
    item = -1  # where the grammar's last item (a step; an Action with its Action Input) starts
    for at, label_end, word in _labels(text):
        if prose_end < 0:
            prose_end = at
        else:
            end = at - 1 if at > last_end else at  # the line break before a label is no one's
            steps.append((kind, text[last_end:end], label_start, end))
        kind = _kind(word)
        if kind == "ACTION_INPUT" and previous != "ACTION":
            return Stopped(at, label_end, _resumes(text, at, item, last_end if steps else 0), text[at:label_end])
        if kind != "ACTION_INPUT":
            item = at
        previous = kind
        label_start, last_end = at, label_end
    if prose_end < 0:
        return text, []
    steps.append((kind, text[last_end:], label_start, len(text)))
    return text[:prose_end], steps


class ReactTree(Transformer):
    """A ``react.lark`` tree → the prose before the first label and the steps, as the fast path lists them."""

    def _step(self, items: list) -> list[Step]:
        out: list[Step] = []
        for i, item in enumerate(items):
            if item.type == "CONTENT":
                continue
            content = items[i + 1] if i + 1 < len(items) and items[i + 1].type == "CONTENT" else None
            end = content.end_pos if content is not None else item.end_pos
            out.append((item.type, str(content) if content is not None else "", item.start_pos, end))
        return out

    thought = action = observation = final = _step

    def prose(self, items: list) -> str:
        return str(items[0])

    def start(self, items: list) -> tuple[str, list[Step]]:
        prose = items[0] if items and isinstance(items[0], str) else ""
        steps = [step for item in items if isinstance(item, list) for step in item]
        return prose, steps


def _steps_by_grammar(text: str) -> tuple[str, list[Step]]:
    result: tuple[str, list[Step]] = ReactTree().transform(parse("react", text))
    return result


def _name(content: str) -> str:
    name = content.strip().strip(_NAME_JUNK)
    return name.split("\n", 1)[0].strip().strip(_NAME_JUNK)


def _only_parameter(name: str, tools: Toolset | None) -> str | None:
    if tools is None:
        return None
    tool = tools.get(name)
    if tool is None or len(tool.parameters.properties) != 1:
        return None
    return tool.parameters.properties[0].name


def read_input(content: str, name: str = "", tools: Toolset | None = None, origin: tuple[str, int] | None = None,
               budget: GrammarBudget | None = None, line_of: LineCounter | None = None
               ) -> tuple[dict[str, Any], list[str], bool]:
    """The arguments an Action Input holds, notes on it, and whether it was exactly one JSON object.

    >>> read_input(' {"a": 1}')
    ({'a': 1}, [], True)
    >>> read_input(' {"a": 1} and then some')
    ({'a': 1}, ["words after the Action Input's JSON were ignored: 'and then some'"], False)
    >>> read_input(" Paris")
    ({'_raw': 'Paris'}, ['the Action Input is not a JSON object; it is kept under _raw'], False)
    >>> read_input(' {"a": 1, "b": ')[1]
    ["the Action Input's JSON could not be read: line 1, column 13: expected ... found the end of the text"]

    ``origin`` (the reply and where ``content`` starts in it) places a failure in the reply (``line_of``,
    the reply's :class:`LineCounter`, counting its lines); ``budget`` (the reply's) bounds how much the
    lenient JSON grammar reads.
    """
    body, _ = strip_code_fence(content)
    if not body:
        return {}, [], True
    try:
        return _object_or_value(json.loads(body), [], True, name, tools)
    except (ValueError, RecursionError):
        pass
    failure: GrammarFailure | None = None
    if body[0] == "{":  # an object, perhaps with words after it: read the object alone
        value, end, failure = _leading_object(body, budget)
        if failure is None:
            leftover = body[end:].strip()
            notes = [f"words after the Action Input's JSON were ignored: {excerpt(leftover)}"] if leftover else []
            return _object_or_value(value, notes, False, name, tools)
    elif body[0] == "[":
        try:
            return _object_or_value(_lenient(body, budget), [], False, name, tools)
        except GrammarFailure as err:
            failure = err
        except RecursionError:
            return {}, ["the Action Input's JSON is nested too deeply to read"], False
    else:
        spans = balanced_spans(body, limit=2)
        if spans:
            start, end = spans[0]
            try:
                found = _lenient(body[start:end], budget)
            except (GrammarFailure, RecursionError):
                found = None
            if isinstance(found, dict):
                leftover = (body[:start] + " " + body[end:]).strip()
                notes = [f"words around the Action Input's JSON were ignored: {excerpt(leftover)}"] if leftover else []
                return found, notes, False
    if failure is not None:
        if origin is not None:
            failure = shifted(failure, origin[0], origin[1] + max(content.find(body), 0), line_of=line_of)
        return {}, [f"the Action Input's JSON could not be read: {failure.describe()}"], False
    if body[0] in "\"'-0123456789tfnTFN":
        try:
            return _object_or_value(_lenient(body, budget), [], False, name, tools)
        except (GrammarFailure, RecursionError):
            pass
    return _object_or_value(body, [], False, name, tools)


_RAW_DECODER = json.JSONDecoder()


def _lenient(piece: str, budget: GrammarBudget | None) -> Any:
    """``loads_lenient(piece)``; the grammar reads it only within what is left of ``budget`` (the reply's).

    JSON as models write it that the C-backed reader takes (``lenient_json``, which reads what the
    grammar reads) costs no budget."""
    if budget is None:
        return loads_lenient(piece)
    try:
        return json.loads(piece)
    except (ValueError, RecursionError):
        pass
    value = lenient_json(piece)
    if value is not json_family._MISSING:
        return value
    limit = budget.left
    if len(piece) <= limit:
        budget.left -= len(piece)
    return loads_lenient(piece, max_grammar_bytes=limit)


def _leading_object(body: str, budget: GrammarBudget | None = None) -> tuple[Any, int, GrammarFailure | None]:
    """The JSON object ``body`` starts with, where it ends, or where it could not be read.

    Strict JSON is read by ``json`` (which says where the object ends); an object as models
    write it (single quotes, Python words, trailing commas) by the lenient reader.
    """
    try:
        value, end = _RAW_DECODER.raw_decode(body)
        return value, end, None
    except (ValueError, RecursionError):
        pass
    end = balanced_spans(body, limit=1)[0][1]
    try:
        return _lenient(body[:end], budget), end, None
    except GrammarFailure as failure:
        return None, end, failure
    except RecursionError:
        return None, end, GrammarFailure("json_object", 1, 1, (), "a value nested too deeply")


def _object_or_value(value: Any, notes: list[str], exact: bool, name: str, tools: Toolset | None
                     ) -> tuple[dict[str, Any], list[str], bool]:
    if isinstance(value, dict):
        return value, notes, exact
    only = _only_parameter(name, tools)
    if only is not None:
        return {only: value}, notes, False
    return {"_raw": value}, notes + ["the Action Input is not a JSON object; it is kept under _raw"], False



def _extraction(prose: str, steps: list[Step], text: str, tools: Toolset | None, json_chars: int | None = None
                ) -> Extraction:
    """The calls of the steps; ``json_chars``: how much of the reply the lenient JSON grammar reads in all
    (the grammar's own bound when ``None``)."""
    calls: list[RawCall] = []
    notes: list[str] = []
    clean = True
    budget = GrammarBudget(json_chars) if json_chars is not None else None
    line_of = LineCounter(text)
    for i, (kind, content, start, end) in enumerate(steps):
        if kind != "ACTION":
            continue
        name = _name(content)
        where = "line {}, column {}".format(*line_of(start))
        if not name:
            notes.append(f"{where}: an Action without a tool name was skipped")
            clean = False
            continue
        following = steps[i + 1] if i + 1 < len(steps) else None
        if following is not None and following[0] == "ACTION_INPUT":
            arguments, more, exact = read_input(following[1], name, tools,
                                                (text, following[3] - len(following[1])), budget, line_of)
            notes.extend(f"{where}: {note}" for note in more)
            clean = clean and exact
            end = following[3]
        else:
            arguments = {}
            notes.append(f"{where}: the Action has no Action Input")
            clean = False
        calls.append(RawCall(name, arguments, (start, end)))
    if not calls and not notes:
        notes.append("no Action line was found")
    compliant = bool(calls) and clean and _FENCE_ONLY.fullmatch("".join(prose.split())) is not None
    return Extraction(tuple(calls), tuple(notes), compliant)


class React(Protocol):
    info = ProtocolInfo(
        id="react",
        name="Thought / Action / Action Input",
        description="The ReAct convention: an Action line naming the tool, then an Action Input line with the "
                    "arguments as JSON.",
        parallel=True,
    )

    @never_raises
    def parse(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        found = _steps_or_stop(text)
        if isinstance(found, Stopped):
            return grammar_stop_note(text, found, _steps_by_grammar, limit=grammar_chars(limits), what="the steps")
        return _extraction(found[0], found[1], text, tools, grammar_chars(limits))

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        blocks = []
        for call in calls:
            blocks.append(f"Thought: I will call {call.name}.\nAction: {call.name}\n"
                          f"Action Input: {json.dumps(call.arguments, ensure_ascii=False)}")
        return "\n".join(blocks)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply in the ReAct format: a line starting with 'Thought:' saying briefly what you will do, a line "
                "'Action:' followed by the tool's name, and a line 'Action Input:' followed by the arguments as one "
                "JSON object. Write nothing after the Action Input.\n"
                "Thought: <your reasoning>\nAction: <tool name>\nAction Input: {\"<argument>\": <value>}")


PROTOCOL = React()
