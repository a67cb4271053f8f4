"""The JSON family's skeleton: what json_object, json_array, jsonl_call, code_block_json, native,
slot_fill_call, two_step_call and tool_call_tags share (calls as JSON, and something around it).

:class:`JsonFamily`'s ``read`` hands a :class:`Reply` to the format's ``read_reply``, which says where
its JSON stands and what it means.  A value is read on one path (:meth:`Reply.values`): strict JSON
straight from the reply by Python's C decoder (the fast path), else the bracket group found by
:mod:`~toolform_rules.replies.formats.values` and read by the format's grammar (the specification: each
imports ``json_values.lark``, with a rule ``candidate`` for one group) within the reply's budget.
Recovery beyond the grammar is one step, :meth:`Reply.inside`: the values inside a group no reader
took whole or that holds no call, noted by the format that takes them.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Sequence

import attrs

from ....calls import ToolCall
from ....grammar import GrammarFailure
from ....limits import Limits
from ..base import Extraction, Protocol, RawCall
from ..reading import MAX_NOTES, GrammarBudget, strip_code_fence
from ..values import _LEVELS, _MISSING, TOO_DEEP, JsonValues, Repeats, any_of, bracket_groups, brackets, group_end, \
    inner_groups, json_value, lexes, may_repeat, noted, read_grammar, reread

if TYPE_CHECKING:
    from ....schema.toolset import Toolset

#: At most this many values (and as many blocks of a format) are read from one reply.
MAX_CANDIDATES = 1000

_DECODE = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_BRACKETS = brackets("{[", "}]")
lenient_json = json_value  # (the name csv_call reads JSON by)


def _strict(text: str, at: int) -> tuple[Any, int]:
    """Strict JSON at ``at`` of ``text`` (the fast path, in C): the value and where it ends, else ``_MISSING`` and
    where it stops (``-1``: nowhere in the text, as for a value nested too deeply)."""
    try:
        return _DECODE(text, at)
    except StopIteration as failed:  # (no value where one must start)
        return _MISSING, failed.value if isinstance(failed.value, int) else -1
    except (ValueError, RecursionError) as failed:
        return _MISSING, getattr(failed, "pos", -1)


def value_spans(text: str, start: int = 0, end: int | None = None, *, openers: str = "{[",
                limit: int = MAX_CANDIDATES, depth: int | None = None) -> list[tuple[int, int]]:
    """The top-level bracket groups of ``text[start:end]`` that open with one of ``openers``, at most ``limit``
    (:func:`~toolform_rules.replies.formats.values.bracket_groups`; one nested deeper than ``depth`` gives the
    complete groups inside it in its place).

    >>> value_spans('see [1] and {"a": "}"} then [{"b": 2}, '), value_spans('[[[{"a": [1]}]]] [2]', depth=3)
    ([(4, 7), (12, 22), (28, 39)], [(2, 14), (17, 20)])
    """
    groups = bracket_groups(text, start, end, top=openers, depth=depth)  # (found lazily: as many as asked for)
    return list(itertools.islice(((begin, stop) for begin, stop, what in groups if what != TOO_DEEP), limit))


def position(text: str, offset: int) -> tuple[int, int]:
    r"""1-based (line, column) of ``offset`` in ``text``.

    >>> position("ab\ncd", 4)
    (2, 2)
    """
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def relocate(failure: GrammarFailure, text: str, offset: int) -> GrammarFailure:
    r"""``failure`` (on a candidate that starts at ``offset`` of ``text``) with the reply's line and column.

    >>> relocate(GrammarFailure("g", 1, 3, ("a number",), "'x'"), "ab\ncd", 4).describe()
    "line 2, column 4: expected a number, found 'x'"
    """
    line, column = position(text, offset)
    column = column + failure.column - 1 if failure.line == 1 else failure.column
    return GrammarFailure(failure.grammar, line + failure.line - 1, column, failure.expected, failure.found)


class Values(JsonValues):
    """Transformer base of the family's grammars: ``start`` as a list of values, ``candidate`` as its one value."""

    def start(self, items: list) -> list:
        return list(items)

    def candidate(self, items: list) -> Any:
        return items[0]


# --- values as calls -------------------------------------------------------------------------

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")

Call = tuple[str, dict[str, Any]]


def call_from_object(obj: Any, *, reply: "Reply | None" = None) -> Call | None:
    """``(name, arguments)`` of a JSON object that names a tool (under one of :data:`NAME_KEYS`; ``function``
    may also be an object holding both), else ``None``.  The arguments are under one of
    :data:`ARGUMENT_KEYS` (JSON text is read: :func:`_arguments`), else the object's other keys.

    >>> call_from_object({"name": "f", "arguments": '{"a": 1}'}), call_from_object({"name": "f", "a": 1})
    (('f', {'a': 1}), ('f', {'a': 1}))
    >>> call_from_object({"function": {"name": "g", "arguments": "{'b': True,}"}})
    ('g', {'b': True})
    """
    around = []  # the objects the call is read from, for the keys they write twice
    while isinstance(obj, dict):  # {"function": {"name": ..., "arguments": ...}} (OpenAI's), however deep
        around.append(obj)
        function = obj.get("function")
        if not (isinstance(function, dict) and "name" in function):
            break
        obj = function
    else:
        return None
    for name_key in NAME_KEYS:  # (loops, not generators: every call passes here)
        if isinstance(obj.get(name_key), str):
            break
    else:
        return None
    for argument_key in ARGUMENT_KEYS:
        if argument_key in obj:
            arguments = obj[argument_key]
            if type(arguments) is not dict:
                arguments = _arguments(arguments, reply)
            break
    else:
        argument_key = ""
        arguments = {k: v for k, v in obj.items() if k not in (name_key, "id", "type")}
    if reply is not None and reply.repeats is not None:  # (reading arguments written as text may have made it)
        reply.repeats.call_object(around, arguments, copied=not argument_key)
    return obj[name_key], arguments


def _arguments(arguments: Any, reply: "Reply | None") -> dict[str, Any]:
    """A call object's arguments as an object: JSON text read, none as ``{}``, what is no object under ``_raw``."""
    if isinstance(arguments, str):
        arguments = _arguments_text(arguments, reply) if arguments.strip() else {}
    return {} if arguments is None else arguments if isinstance(arguments, dict) else {"_raw": arguments}


def _arguments_text(text: str, reply: "Reply | None") -> Any:
    """Arguments written as JSON text: strict JSON, else the grammar (within ``reply``'s budget; its keys written
    twice recorded there), else ``{"_raw": text}``."""
    value = json_value(text)
    if value is not _MISSING:
        return value if reply is None else reply.checked(value, text, 0, len(text))
    try:
        return read_grammar("json_object", text, JsonValues()) if reply is None \
            else reply.grammar_value(text, "json_object")
    except GrammarFailure:
        return {"_raw": text}


def calls_in(value: Any, reply: "Reply | None" = None) -> tuple[list[Call], int]:
    """The calls a JSON value holds (an object, or an array of them) and how many elements were not calls.

    >>> calls_in([{"name": "f", "arguments": {"a": 1}}, 5])
    ([('f', {'a': 1})], 1)
    """
    items = [value] if isinstance(value, dict) else value if isinstance(value, list) else [None]
    calls = []
    for item in items:
        call = call_from_object(item, reply=reply)
        if call is not None:
            calls.append(call)
    return calls, len(items) - len(calls)


#: Keys under which provider responses nest their calls (OpenAI, Anthropic, Gemini, Responses API).
ENVELOPE_KEYS = ("tool_calls", "choices", "message", "delta", "content", "parts", "candidates", "output",
                 "functionCall", "function_call", "tool_use", "calls")
_ENVELOPE = frozenset(ENVELOPE_KEYS)


def native_calls(value: Any, depth: int = 0, reply: "Reply | None" = None) -> list[Call]:
    """The calls of a provider response, wherever its envelope puts them.

    >>> native_calls({"candidates": [{"content": {"parts": [{"functionCall": {"name": "g", "args": {}}}]}}]})
    [('g', {})]
    >>> native_calls({"role": "assistant", "name": "bot", "content": None,
    ...               "tool_calls": [{"type": "function", "function": {"name": "h", "arguments": '{"a": 1}'}}]})
    [('h', {'a': 1})]
    """
    if depth > 12:
        return []
    if isinstance(value, list):
        return [call for item in value[:MAX_CANDIDATES] for call in native_calls(item, depth + 1, reply)]
    if not isinstance(value, dict):
        return []
    if not value.keys().isdisjoint(_ENVELOPE):  # (a call object, the common case, has none of these keys)
        inside = [call for key in ENVELOPE_KEYS if isinstance(value.get(key), (dict, list))
                  for call in native_calls(value[key], depth + 1, reply)]
        if inside:  # an envelope ({"role": "assistant", "name": "bot", "tool_calls": [...]}: the calls, not "bot")
            return inside
    found = None if value.get("type") in ("text", "thinking", "reasoning") else call_from_object(value, reply=reply)
    return [] if found is None else [found]


def call_json(call: ToolCall, *, indent: int | None = None) -> str:
    """``{"name": ..., "arguments": {...}}`` as JSON text (non-ASCII written as is).

    >>> call_json(ToolCall("f", {"a": "é"}))
    '{"name": "f", "arguments": {"a": "é"}}'
    """
    return json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False, indent=indent)


# --- one reply, read -------------------------------------------------------------------------

#: a candidate the grammar would not read either: it runs only if a note says where it stops (:meth:`Reply.failure_of`)
UNREAD = GrammarFailure("json_values", 1, 1, (), "not read")


@attrs.define(repr=False)
class Candidate:
    """One bracket group of a reply: where it stands, its ``value`` (``_MISSING`` when no reader took it: then
    ``failure`` says where the grammar stopped)."""

    begin: int
    end: int
    value: Any
    failure: GrammarFailure | None = None

    @property
    def span(self) -> tuple[int, int]:
        return self.begin, self.end

    def __repr__(self) -> str:
        return f"Candidate({self.begin}, {self.end}, {'failed' if self.failure else type(self.value).__name__})"


class Reply:
    """One reply as a format reads it: the text, its limits, what has been found (``calls``, ``notes``,
    ``compliant`` so far, ``failures``: candidates no reader took) and ``empty_ok`` (no call keeps to the format).

    >>> from toolform_rules.replies.formats import get_protocol
    >>> from toolform_rules.limits import DEFAULT_LIMITS
    >>> reply = Reply('Sure: {"name": "f", "arguments": {}} [1', DEFAULT_LIMITS, get_protocol("json_object"))
    >>> reply.values(0, len(reply.text))[0]
    [Candidate(6, 36, dict), Candidate(37, 39, failed)]
    """

    # (what most replies never change, as class attributes: each attribute set costs time)
    empty_ok = False
    unreadable: tuple[str, str] | None = None
    failures: Sequence[Candidate] = ()
    too_deep: Sequence[int] = ()
    more = False  # more than MAX_CANDIDATES values stood in a stretch
    #: a value has run to the end of the text: every later stretch ends at its first marker (else quadratic)
    runs_to_end = False
    _budget: GrammarBudget | None = None
    repeats: Repeats | None = None  # the objects read that hold a key written twice (once one is found)

    def __init__(self, text: str, limits: Limits, format: "JsonFamily") -> None:
        self.text, self.limits, self.format = text, limits, format
        self.calls: list[RawCall] = []
        self.notes: list[str] = []
        self.compliant = True

    @property
    def budget(self) -> GrammarBudget:
        """The reply's grammar budget (``Limits.reply_grammar_chars``), made when first needed."""
        if self._budget is None:
            self._budget = GrammarBudget.of(self.limits)
        return self._budget

    def body(self) -> tuple[int, int, bool]:
        """Where the reply's body stands, without a Markdown code fence around all of it: (start, stop, fenced)."""
        first = self.text[:1]
        if first != "`" and not first.isspace() or "```" not in self.text:
            return 0, len(self.text), False
        fenced = strip_code_fence(self.text)
        return fenced.start, fenced.start + len(fenced.body), fenced.fenced

    def found(self, repeats: Repeats) -> None:
        """Keep ``repeats``'s objects (keys written twice) in :attr:`repeats`."""
        if self.repeats is None:
            self.repeats = Repeats()
        self.repeats.merge(repeats)

    def checked(self, value: Any, text: str, begin: int, end: int) -> Any:
        """``value``, strict JSON read from ``text[begin:end]`` — read again when it may hold a key written twice
        (:func:`~toolform_rules.replies.formats.values.may_repeat`), those recorded in :attr:`repeats`."""
        again = reread(text[begin:end]) if may_repeat(value, text, begin, end) else None
        if again is None:
            return value
        if again[1]:
            self.found(again[1])
        return again[0]

    def values(self, start: int, stop: int, top: str = "{[", until: "re.Pattern[str] | None" = None
               ) -> tuple[list[Candidate], "re.Match[str] | None"]:
        """The values of ``text[start:stop]`` that open with a bracket of ``top``, each located and read once
        (:meth:`read_at`; at most :data:`MAX_CANDIDATES`), and the ``until`` marker that ended the stretch.

        A marker counts outside values only; when a value never closes, the first marker after its
        start ends it and the stretch (and every later stretch at its first marker: linear time).
        """
        text = self.text
        marker = None if until is None else until.search(text, start, stop)
        if marker is not None and self.runs_to_end:
            return self.values(start, marker.start(), top)[0], marker
        found: list[Candidate] = []
        at, search = start, any_of(top).search
        while (bracket := search(text, at, stop if marker is None else marker.start())) is not None:
            if len(found) >= MAX_CANDIDATES:
                self.more = True
                return found, None
            begin, before = bracket.start(), len(found)
            at, closed = self.read_at(begin, stop, found)
            if marker is not None and marker.start() < at:  # the marker stood inside the value
                if not closed and not self.runs_to_end:  # the value breaks off: the marker ends it and the stretch
                    self.runs_to_end = True
                    return found[:before] + self.values(begin, marker.start(), top)[0], marker
                marker = until.search(text, at, stop)  # type: ignore[union-attr]
        return found, marker

    def read_at(self, begin: int, stop: int, into: list[Candidate]) -> tuple[int, bool]:
        """Read the value at ``begin`` (ending by ``stop``) into ``into``: where it ends, whether it closes.

        Strict JSON straight from the text (unless a value ran to the end: it could read past ``stop``,
        stretch after stretch), else the group found and read by :meth:`read_piece`; a group nested
        deeper than twice ``Limits.max_depth`` gives its complete inner groups (noted by :meth:`extraction`).
        """
        text, depth = self.text, 2 * self.limits.max_depth
        strict: Any = _MISSING
        cut: int | None = None
        if not self.runs_to_end or stop == len(text):
            strict, cut = _strict(text, begin)
            if strict is not _MISSING and cut > stop:
                strict, cut = _MISSING, -1
            # (a value this long nests at most ``depth`` levels, and so does one of as few brackets)
            elif strict is not _MISSING and (cut - begin <= 2 * depth or text.count("{", begin, cut) + text.count(
                    "[", begin, cut) <= depth):
                into.append(Candidate(begin, cut, self.checked(strict, text, begin, cut)))
                return cut, True
        end, closed, deep = group_end(text, begin, stop, _BRACKETS, depth)
        if not deep:
            into.append(Candidate(begin, end, self.checked(strict, text, begin, end)) if strict is not _MISSING
                        and cut == end else self.read_piece(begin, end, cut))
            return end, closed
        self.too_deep = [*self.too_deep, begin]
        if text.find("}", begin, end) >= 0 or text.find("]", begin, end) >= 0:  # else nothing inside is complete
            into.extend(self.read_piece(inner, inner_end, None)
                        for inner, inner_end, _ in inner_groups(text, begin + 1, end, _BRACKETS, min(_LEVELS, depth)))
        return end, closed

    def read_piece(self, begin: int, end: int, cut: int | None) -> Candidate:
        """The group ``text[begin:end]`` read by strict JSON (unless ``cut`` says where it stopped, ``-1``: not at a
        place of the text), else by the format's grammar — not given a group cut off or of prose, where it
        would stop too (:data:`UNREAD`)."""
        piece = self.text[begin:end]
        if cut is None:
            value, cut = _strict(piece, 0)
            if value is not _MISSING and cut == len(piece):
                return Candidate(begin, end, self.checked(value, self.text, begin, end))
            cut = -1 if value is not _MISSING or cut < 0 else cut + begin
        if cut >= end or not self.format.grammar_may_read(piece):
            return Candidate(begin, end, _MISSING, UNREAD)
        try:
            return Candidate(begin, end, self.grammar_value(piece))
        except GrammarFailure as failure:
            return Candidate(begin, end, _MISSING, failure)

    def grammar_value(self, piece: str, grammar: str = "") -> Any:
        """``piece`` read by ``grammar`` (the format's rule ``candidate`` by default) within the reply's budget, its
        keys written twice recorded."""
        repeats = Repeats()
        if grammar:
            value = read_grammar(grammar, piece, JsonValues(repeats), budget=self.budget)
        else:  # (a transformer of the format's own kind, recording)
            transformer = type(self.format.transformer)(repeats)
            value = read_grammar(self.format.grammar, piece, transformer, "candidate", budget=self.budget)
        if repeats:
            self.found(repeats)
        return value

    def failure_of(self, candidate: Candidate) -> GrammarFailure:
        """Where the grammar stops on ``candidate`` (a failed one), in the reply's lines and columns."""
        if candidate.failure is UNREAD:
            try:
                self.grammar_value(self.text[candidate.begin:candidate.end])
                candidate.failure = GrammarFailure(self.format.grammar, 1, 1, (), "a value the fast path did not read")
            except GrammarFailure as stopped:
                candidate.failure = stopped
        return relocate(candidate.failure, self.text, candidate.begin)  # type: ignore[arg-type]

    def inside(self, candidate: Candidate, top: str = "{[") -> list[Candidate]:
        """Recovery beyond the grammar, the family's one step: the values inside ``candidate``, a group no reader
        took whole or whose value holds no call (the format notes what it takes of them)."""
        return self.values(candidate.begin + 1, candidate.end, top)[0]

    def add(self, calls: Sequence[Call], span: tuple[int, int] | None) -> int:
        """Take ``calls``, each with ``span``; how many."""
        for name, arguments in calls:
            self.calls.append(self.call(name, arguments, span))
        return len(calls)

    def call(self, name: str, arguments: dict[str, Any], span: tuple[int, int] | None, written: Any = None
             ) -> RawCall:
        """``name(arguments)`` as a :class:`RawCall`, with the keys it writes twice (noted); ``written``: the
        arguments as read, when ``arguments`` is a copy."""
        places = () if self.repeats is None else self.repeats.of(arguments if written is None else written)
        if places:
            self.note(noted(name, places), breaks_format=False)
        return RawCall(name, arguments, span, places)

    def take(self, value: Any, span: tuple[int, int] | None) -> tuple[int, int]:
        """Take the calls ``value`` holds, each with ``span``: how many, and how many elements were not calls."""
        calls, other = calls_in(value, self)
        return self.add(calls, span), other

    def note(self, sentence: str, *, breaks_format: bool = True) -> None:
        """Say ``sentence`` (the first :data:`MAX_NOTES` are kept); the reply breaks the format unless told."""
        if len(self.notes) < MAX_NOTES:
            self.notes.append(sentence)
        self.compliant = self.compliant and not breaks_format

    def failed(self, candidate: Candidate) -> None:
        """Keep a candidate no reader took (:meth:`extraction` notes the first that matters)."""
        if not self.failures:
            self.failures = []
        self.failures.append(candidate)  # type: ignore[attr-defined]

    def blank(self, start: int, stop: int, values: Iterable[Candidate] = (),
              allowed: "re.Pattern[str] | None" = None) -> bool:
        """Whether ``text[start:stop]`` holds nothing but ``values``, white space and ``allowed`` (a pattern)."""
        text, at = self.text, start
        for candidate in values:
            gap = text[at:candidate.begin]
            if gap and not gap.isspace() and (allowed is None or allowed.sub("", gap).strip()):
                return False
            at = max(at, candidate.end)
        gap = text[at:stop]
        return not gap or gap.isspace() or (allowed is not None and not allowed.sub("", gap).strip())

    def extraction(self) -> Extraction:
        """The result: the calls, the notes (the groups too deep first, the first failure that matters last)."""
        if self.too_deep:
            more = f" (and {len(self.too_deep) - 1} more)" if len(self.too_deep) > 1 else ""
            self.notes.insert(0, f"the bracket group at line {position(self.text, self.too_deep[0])[0]}{more} nests "
                                 f"deeper than {2 * self.limits.max_depth} levels (twice Limits.max_depth): not read "
                                 "as a whole; the complete groups inside it were read")
            self.compliant = False
        if self.more:
            self.note(f"the reply holds more than {MAX_CANDIDATES} JSON values; the first {MAX_CANDIDATES} were read")
        when_none, when_some = self.unreadable or self.format.unreadable
        for candidate in self.failures:
            if not self.calls or (when_some and self.text.find(":", candidate.begin, candidate.end) >= 0):
                self.note(f"{when_none if not self.calls else when_some}: {self.failure_of(candidate).describe()}")
                break
        return Extraction(tuple(self.calls), tuple(self.notes), self.compliant and (bool(self.calls) or self.empty_ok))


class JsonFamily(Protocol):
    """Base class of the JSON-family protocols: a format sets ``info`` and ``transformer`` (of its grammar),
    implements ``read_reply`` (and ``calls_of`` unless its values are call objects or arrays of them);
    ``unreadable``: the note on the first value no reader took, when no call was read and when some were."""

    closes_calls = True
    transformer: ClassVar[JsonValues] = Values()
    unreadable: ClassVar[tuple[str, str]] = ("no JSON could be read", "a JSON candidate could not be read")

    @property
    def grammar(self) -> str:
        """The format's grammar, ``grammars/<protocol id>.lark``."""
        return self.info.id

    def read(self, text: str, tools: "Toolset | None", limits: Limits) -> Extraction:
        return self.read_reply(Reply(text, limits, self), tools).extraction()

    def read_reply(self, reply: Reply, tools: "Toolset | None") -> Reply:
        """Find and read the format's JSON in ``reply``; return the reading to report (``reply``, or another)."""
        raise NotImplementedError

    def calls_of(self, value: Any, reply: Reply | None = None) -> list[Call]:
        """The calls one value of the format holds."""
        return calls_in(value, reply)[0]

    def grammar_may_read(self, piece: str) -> bool:
        """Whether the grammar might read ``piece``: it is a run of ``json_values.lark``'s tokens."""
        return lexes(piece)

    def grammar_calls(self, text: str) -> list[Call]:
        """The calls of a whole reply in the format read by its grammar alone: what the fast path is held to."""
        values = read_grammar(self.grammar, text, self.transformer, budget=GrammarBudget(len(text) + 64))
        return [call for value in values for call in self.calls_of(value)]

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """One call object a line (the format's own rendering where it has one)."""
        return "\n".join(call_json(c) for c in calls)


class BlockValues(Values):
    """Transformer of a block format's grammar (``start: block*``, ``block: OPEN body CLOSE``): the values of
    its blocks, in order (code-fence tokens in a body aside)."""

    def start(self, blocks: list) -> list:
        return [value for values in blocks for value in values]

    def block(self, items: list) -> list:
        return items[1]

    def body(self, items: list) -> list:
        return [item for item in items if not hasattr(item, "type")]


class BlockFormat(JsonFamily):
    """A JSON-family format whose calls stand in blocks: an ``opening`` marker (its group 1, if any, an info
    string: ``tag`` the one asked for, ``info_tags`` all that keep to the format), JSON, an ``until`` marker
    (with ``closing_optional``, the next opening one too: :meth:`closes` tells them apart); the words of its
    notes (``block``, ``unclosed``, ``missing``); ``allowed``: other text a block may hold.  A reply whose
    blocks give no call gives the call objects standing bare in it, noted."""

    transformer = BlockValues()
    opening: ClassVar["re.Pattern[str]"]
    tag: ClassVar[str] = ""
    info_tags: ClassVar[tuple[str, ...]] = ("",)
    until: ClassVar["re.Pattern[str]"]
    block: ClassVar[str]
    unclosed: ClassVar[str]
    missing: ClassVar[str]
    closing_optional: ClassVar[bool] = False
    allowed: ClassVar["re.Pattern[str] | None"] = None

    def closes(self, marker: "re.Match[str]") -> bool:
        """Whether ``marker`` (a match of ``until``) closes its block, rather than opening the next."""
        return True

    def read_reply(self, reply: Reply, tools: "Toolset | None") -> Reply:
        opening = self.opening.search(reply.text)
        previous = number = 0
        outside = False
        while opening is not None and number < MAX_CANDIDATES:
            number += 1
            outside = outside or not reply.blank(previous, opening.start())
            previous, marker, closed = self.read_block(reply, number, opening)
            # (the next block opens after a closing marker, or at an opening one)
            opening = None if marker is None else self.opening.search(reply.text, previous) if closed else marker
        if not reply.calls:
            again = Reply(reply.text, reply.limits, self)
            again._budget = reply._budget  # (the same grammar budget)
            bare = self.read_bare(again, number)
            if bare.calls or not number:
                return bare
        if outside or not reply.blank(previous, len(reply.text)):
            reply.note(f"the reply holds text outside the {self.missing}s")
        return reply

    def read_block(self, reply: Reply, number: int, opening: "re.Match[str]"
                   ) -> tuple[int, "re.Match[str] | None", bool]:
        """Read block ``number``, which ``opening`` opens, noting what it lacks or holds besides its JSON: where
        it ends, the marker that ended it, and whether that marker closes it."""
        text, body = reply.text, opening.end()
        values, marker = reply.values(body, len(text), "{[", self.until)
        end = len(text) if marker is None else marker.start()
        closed = marker is not None and (not self.closing_optional or self.closes(marker))
        after = marker.end() if closed else end  # type: ignore[union-attr]
        found = skipped = 0
        for candidate in values:
            if candidate.failure is not None:
                reply.failed(candidate)
                continue
            calls, other = reply.take(candidate.value, (opening.start(), after))
            found, skipped = found + calls, skipped + bool(other and not calls)
        block, info = self.block.format(number), opening.group(1) if opening.lastindex else ""
        if skipped:
            reply.note(f"{block} holds JSON that names no tool")
        if not closed:
            reply.note(f"{block} {self.unclosed}", breaks_format=not self.closing_optional)
        if not values and reply.blank(body, end):
            reply.note(f"{block} is empty")
        elif not reply.blank(body, end, values, self.allowed):
            reply.note(f"{block} holds text besides the JSON")
        if found and info.lower() not in self.info_tags:
            reply.note(f"{block} is tagged {info!r}, not {self.tag!r}")
        return after, marker, closed

    def read_bare(self, reply: Reply, blocks: int) -> Reply:
        """The call objects standing bare in a reply whose ``blocks`` (how many) gave no call, noted."""
        reply.unreadable = JsonFamily.unreadable
        for candidate in reply.values(0, len(reply.text))[0]:
            if candidate.failure is not None:
                reply.failed(candidate)
            else:
                reply.take(candidate.value, candidate.span)
        bare = "; read the bare JSON instead" if reply.calls else ""
        reply.note(f"no {self.missing} of the reply holds a call{bare}" if blocks
                   else f"the reply has no {self.missing}{bare}")
        return reply


__all__ = ["ARGUMENT_KEYS", "ENVELOPE_KEYS", "MAX_CANDIDATES", "MAX_NOTES", "NAME_KEYS", "BlockFormat", "BlockValues",
           "Call", "Candidate", "JsonFamily", "Reply", "Values", "call_from_object", "call_json", "calls_in",
           "lenient_json", "native_calls", "position", "read_grammar", "relocate", "value_spans"]
