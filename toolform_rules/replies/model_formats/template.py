"""Reading and rendering calls with a catalogue entry's template: a small interpreter.

:func:`compile_pieces` turns a template into steps, one function per piece: a literal must follow
(after white space), a slot reads what it names, an optional run is skipped when it does not match,
a choice takes its first alternative that matches.  A step returns where it stopped, or ``None``
(:class:`Reading` keeps the furthest failure, for the note).  Every search is a bounded pattern, and
each is remembered (:meth:`Reading.find`): a reply of many unfinished calls is read in linear time.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Callable, NamedTuple, Optional

from ..formats.duplicates import Repeats, may_repeat, reread
from ..formats.values import brackets, group_end
from .catalogue import Either, FormatEntry, Optional_, Piece, Slot, following_literals
from .dict_values import read_dict, write_dict

_WS = re.compile(r"\s*+")
#: white space before a literal, tested one character first (past an ASCII one, Unicode white space too)
_SPACE = frozenset(" \t\r\n\f\v")
_WORDS = {"name": re.compile(r"[A-Za-z_][\w.:\-]{0,255}"), "id": re.compile(r"[\w\-]{1,64}"),
          "word": re.compile(r"[\w\-./]{1,64}"), "key": re.compile(r"[^\s<>=\"'/]{1,256}")}
#: a name that a literal beginning with ":" follows (Kimi's ``name:0``) holds no colon
_NAME_NO_COLON = re.compile(r"[A-Za-z_][\w.\-]{0,255}")
_BETWEEN_CALLS = re.compile(r"\s*+;?\s*+")
_JSON_OPENING = re.compile(r"[{\[\n]")
#: how far past a marker words before its JSON are passed over (a reply of many markers stays linear)
JUNK_CHARS = 256
_BRACKETS = brackets("{[", "}]")
_CDATA, _CDATA_END = "<![CDATA[", "]]>"
_CDATA_CLOSE = re.compile(re.escape(_CDATA_END))
_RAW_DECODE = json.JSONDecoder().raw_decode
#: the first window a JSON value is decoded in (json's error counts the lines before where it stopped)
JSON_WINDOW = 4096
_json = functools.partial(json.dumps, ensure_ascii=False)


class Reading:
    """One reply being read and, for the candidate being matched, what it has read and where it failed."""

    __slots__ = ("text", "entry", "parameter", "searches", "protocol_of", "tools", "limits", "repeats", "failed_at",
                 "expected", "committed", "name", "arguments", "calls", "key", "skipped")

    def __init__(self, text: str, entry: FormatEntry, parameter: tuple[Step, ...],
                 protocol_of: Callable[[str], Any] | None = None, tools: Any = None, limits: Any = None) -> None:
        self.text, self.entry, self.parameter = text, entry, parameter
        self.searches: dict[Any, tuple[int, int]] = {}  # (see :meth:`find`)
        self.protocol_of, self.tools, self.limits = protocol_of, tools, limits
        #: the objects read that hold a key written twice (``None`` until one is found)
        self.repeats: Repeats | None = None
        self.begin()

    def begin(self) -> None:
        """A new candidate (``committed`` once it matches a marker or begins its arguments: then a note)."""
        self.failed_at, self.expected, self.committed = -1, "", False
        self.name: str | None = None
        self.arguments: Any = None
        self.calls: list[tuple[str, Any]] | None = None
        self.key: str | None = None
        self.skipped: list[int] = []

    def find(self, literals: "re.Pattern[str]", start: int) -> int:
        """Where ``literals`` (a pattern of one or more) next stand: a search from a place at or after where the
        last one began, and not past what it found, has its answer (many candidates search the text once)."""
        known = self.searches.get(literals)
        if known is not None and known[0] <= start and (known[1] < 0 or start <= known[1]):
            return known[1]
        found = literals.search(self.text, start)
        self.searches[literals] = (start, -1 if found is None else found.start())
        return self.searches[literals][1]

    def fail(self, at: int, expected: str) -> None:
        if at > self.failed_at:
            self.failed_at, self.expected = at, expected

    def state(self) -> tuple:
        arguments = self.arguments
        return (self.name, arguments, len(arguments) if isinstance(arguments, dict) else 0, self.calls, self.key)

    def restore(self, state: tuple) -> None:
        self.name, arguments, size, self.calls, self.key = state
        if isinstance(arguments, dict):  # the same dict, perhaps with values added since: they go (last first)
            while len(arguments) > size:
                arguments.popitem()
        self.arguments = arguments

    def found(self) -> Repeats:
        """:attr:`repeats`, made when first needed."""
        if self.repeats is None:
            self.repeats = Repeats()
        return self.repeats

    def checked(self, value: Any, text: str, start: int, end: int) -> Any:
        """``value``, JSON read from ``text[start:end]``, read again when it may write a key twice (recorded)."""
        again = reread(text[start:end]) if may_repeat(value, text, start, end) else None
        if again is None:
            return value
        if again[1]:
            self.found().merge(again[1])
        return again[0]


#: a compiled piece: where it stops reading from a place, or ``None`` when it is not there
Step = Callable[[int, Reading], Optional[int]]


def run(steps: tuple[Step, ...], at: int, r: Reading) -> int | None:
    """Where ``steps`` matched from ``at`` end, or ``None`` (``r`` keeps the furthest failure)."""
    for step in steps:
        at = step(at, r)  # type: ignore[assignment]
        if at is None:
            return None
    return at


def compile_pieces(pieces: tuple[Piece, ...]) -> tuple[Step, ...]:
    """``pieces`` as steps (a slot that reads up to a literal knows the literals that may follow it)."""
    steps: list[Step] = []
    for index, piece in enumerate(pieces):
        if isinstance(piece, str):
            steps.append(_blank if piece.isspace() else _literal(piece.lstrip()))
        elif isinstance(piece, Optional_):
            steps.append(_optional(compile_pieces(piece.optional)))
        elif isinstance(piece, Either):
            steps.append(_either(tuple(map(compile_pieces, piece.either))))
        elif piece.slot in _WORDS and not piece.read_with:
            steps.append(_word(piece.slot, following_literals(pieces, index)))
        elif piece.read_with or piece.slot in ("value", "input"):  # the text up to the next literal
            take = _read_with(piece.read_with) if piece.read_with else \
                _take_value if piece.slot == "value" else _take_input
            steps.append(_until(following_literals(pieces, index), take, cdata=take is _take_value))
        else:
            steps.append(_SLOTS[piece.slot])
    return tuple(steps)


def _literal(literal: str) -> Step:
    expected, size = repr(literal), len(literal)
    def step(at: int, r: Reading) -> int | None:
        text = r.text
        if text[at:at + 1] in _SPACE:
            at = _WS.match(text, at).end()  # type: ignore[union-attr]
        if not text.startswith(literal, at):
            r.fail(at, expected)
            return None
        r.committed = True
        return at + size
    return step


def _blank(at: int, r: Reading) -> int:
    return _WS.match(r.text, at).end() if r.text[at:at + 1] in _SPACE else at  # type: ignore[union-attr]


def _optional(steps: tuple[Step, ...]) -> Step:
    def step(at: int, r: Reading) -> int:
        saved = r.state()
        end = run(steps, at, r)
        if end is None:
            r.restore(saved)
            return at
        return end
    return step


def _either(alternatives: tuple[tuple[Step, ...], ...]) -> Step:
    def step(at: int, r: Reading) -> int | None:
        for steps in alternatives:
            saved = r.state()
            end = run(steps, at, r)
            if end is not None:
                return end
            r.restore(saved)
        return None
    return step


def _word(kind: str, following: tuple | None) -> Step:
    """A ``name``, a ``key`` (a closing tag that names it again names the same), an ``id`` or ``word`` (dropped)."""
    pattern = _NAME_NO_COLON if kind == "name" and following and following[0][0][:1] == ":" else _WORDS[kind]
    expected = "a tool name" if kind == "name" else f"a {kind}"
    def step(at: int, r: Reading) -> int | None:
        at = _WS.match(r.text, at).end()  # type: ignore[union-attr]
        found = pattern.match(r.text, at)
        if found is None:
            r.fail(at, expected)
            return None
        if kind == "name":
            r.name = found.group()
        elif kind == "key" and r.key is None:
            r.key = found.group()
        elif kind == "key" and found.group() != r.key:
            r.fail(at, repr(r.key))
            return None
        return found.end()
    return step


def _until(following: tuple | None, take: Callable[[str, Reading], None], cdata: bool = False) -> Step:
    """The text up to the next literal (the end, when it may be missing or none follows), handed to ``take``;
    with ``cdata``, a ``<![CDATA[...]]>`` instead, which may hold that literal (its text is taken as it is)."""
    literals, optional = following if following is not None else ((), True)
    search = re.compile("|".join(map(re.escape, literals))) if literals else None
    expected = " or ".join(map(repr, literals))
    def step(at: int, r: Reading) -> int | None:
        r.committed = True
        if cdata and r.text.startswith(_CDATA, at):
            close = r.find(_CDATA_CLOSE, at + len(_CDATA))
            if close < 0:
                r.fail(len(r.text), repr(_CDATA_END))
                return None
            _put_value(r.text[at + len(_CDATA):close], r)
            return close + len(_CDATA_END)
        end = -1 if search is None else r.find(search, at)
        if end < 0:
            if not optional:
                r.fail(len(r.text), expected)
                return None
            end = len(r.text)
        take(r.text[at:end], r)
        return end
    return step


def _take_value(body: str, r: Reading) -> None:
    if r.entry.value_trim == "newline":  # a line break cut from each end
        body = body[1:] if body[:1] == "\n" else body
        body = body[:-1] if body[-1:] == "\n" else body
    _put_value(body, r)


def _put_value(value: str, r: Reading) -> None:
    """The current parameter's value (a parameter written again keeps the last, and says so)."""
    if r.arguments is None:
        r.arguments = {}
    if r.key in r.arguments:
        r.found().record(r.arguments, (str(r.key),))
    r.arguments[r.key] = value


def _take_input(body: str, r: Reading) -> None:
    r.arguments = read_input(body, r.name, r.tools, r)


def read_input(body: str, name: str | None, tools: Any, r: Reading | None = None) -> Any:
    """Free text as the arguments: a JSON object, or the value of the tool's one text parameter."""
    from ..formats.markup_family.react import read_input as react_input
    twice: list[str] = []
    arguments = react_input(body, name or "", tools, twice=twice)[0]
    if twice and r is not None:  # (kept by the arguments' identity, for the call made of them)
        r.found().calls[id(arguments)] = arguments, tuple(twice)
    return arguments


def _read_with(protocol_id: str) -> Callable[[str, Reading], None]:
    """The calls another protocol reads in the text (``pythonic``: ``python_list_call``'s)."""
    def take(body: str, r: Reading) -> None:
        assert r.protocol_of is not None, "a slot read with another protocol needs protocol_of"
        calls = r.protocol_of(protocol_id).raw_calls(body, r.tools, limits=r.limits)
        for call in calls:
            if call.duplicates:  # (kept by the arguments' identity, for the call made of them)
                r.found().calls[id(call.arguments)] = call.arguments, call.duplicates
        r.calls = (r.calls or []) + [(call.name, call.arguments) for call in calls]
    return take


def _parameters(at: int, r: Reading) -> int:
    """The arguments, each written with the entry's parameter template, for as long as one is there."""
    at = _WS.match(r.text, at).end()  # type: ignore[union-attr]
    r.committed = True
    if r.arguments is None:
        r.arguments = {}
    while True:
        r.key = None
        after = run(r.parameter, at, r)
        if after is None or after == at:
            return at
        at = after


def _dict(at: int, r: Reading) -> int | None:
    """Gemma's ``{key:<escape>text<escape>,...}`` (:mod:`.dict_values`)."""
    at = _WS.match(r.text, at).end()  # type: ignore[union-attr]
    r.committed = True
    read = read_dict(r.text, at, r.entry.quotes)
    if isinstance(read, str):
        r.fail(at, read)
        return None
    r.arguments, end = read
    return end


def _json_at(at: int, r: Reading, what: str, one: bool = True) -> tuple[Any, int, int] | None:
    """The JSON object or array after white space (with ``one`` false, after a few words too, looked for within
    ``JUNK_CHARS``), where it starts and ends.  Only a bracket commits (a line of prose whose first word a bare
    name template took, as Functionary's, is no broken call)."""
    at = _WS.match(r.text, at).end()  # type: ignore[union-attr]
    if r.text[at:at + 1] in ("{", "["):
        r.committed = True
    elif not one:  # a few words on the marker's line ("[TOOL_CALLS] junk [{...}]"): passed over, noted
        opening = _JSON_OPENING.search(r.text, at, min(len(r.text), at + JUNK_CHARS))
        if opening is not None and opening.group() != "\n":
            r.skipped.append(at)
            at = opening.start()
    if r.text[at:at + 1] not in ("{", "["):
        r.fail(at, what)
        return None
    try:
        value, end = _decode(r.text, at)
    except (ValueError, RecursionError) as err:
        r.fail(err.pos if isinstance(err, _NotJson) else at, f"{what} (the JSON stops being JSON here)")
        return None
    return r.checked(value, r.text, at, end), at, end


class _NotJson(ValueError):
    """Where the JSON at a place stops being JSON (``json``'s own error would count the lines before it)."""
    def __init__(self, pos: int) -> None:
        self.pos = pos


def _decode(text: str, at: int) -> tuple[Any, int]:
    """``json``'s ``raw_decode`` of the object or array at ``text[at]``, on growing windows of the text after ``at``
    (a bracket closes a value whole: one read inside a window is the value).  A failure is the value's own
    unless the window's end may have cut it (a failure there, or a string that does not close, which json
    places where the string began): then a window 16 times wider is tried."""
    window = JSON_WINDOW
    while True:
        piece = text[at:at + window]
        try:
            value, end = _RAW_DECODE(piece)
            return value, at + end
        except json.JSONDecodeError as err:
            cut = err.pos >= len(piece) - 1 or err.msg.startswith("Unterminated string")
            if at + window >= len(text) or not cut:
                raise _NotJson(err.pos + at) from None
            window *= 16


def _arguments(at: int, r: Reading) -> int | None:
    read = _json_at(at, r, "a JSON object")
    if read is not None and not isinstance(read[0], dict):
        r.fail(read[1], "a JSON object")
        return None
    if read is not None:
        r.arguments = read[0]
    return None if read is None else read[2]


def _call_objects(one: bool) -> Step:
    """A ``call`` (a JSON call object) or ``calls`` (an array of them, or objects one after another, perhaps
    after a few words, passed over and noted); more objects right after are calls too."""
    what, naming = ("a JSON call object", "a JSON object naming a tool") if one else \
        ("JSON call objects", "JSON objects naming a tool")
    def step(at: int, r: Reading) -> int | None:
        read = _json_at(at, r, what, one)
        if read is None:
            return None
        value, at, end = read
        calls = []
        for item in value if isinstance(value, list) and not one else [value]:
            found = call_of(item, r.entry, r)
            if found is None:
                r.fail(at, naming)
                return None
            calls.append(found)
        end = _more_call_objects(end, calls, r)
        r.calls = (r.calls or []) + calls
        return end
    return step


def _more_call_objects(end: int, calls: list[tuple[str, Any]], r: Reading) -> int:
    """The call objects right after ``end`` (white space or ';' between, or a line of JSON lines that is not
    JSON, passed over and noted) added to ``calls``; where they end."""
    text = r.text
    while True:
        more = _BETWEEN_CALLS.match(text, end).end()  # type: ignore[union-attr]
        if not text.startswith("{", more):
            return end
        try:
            value, after = _decode(text, more)
        except (ValueError, RecursionError):
            line_end = text.find("\n", more)
            stop, closed, _ = group_end(text, more, len(text) if line_end < 0 else line_end, _BRACKETS)
            if not closed:
                return end
            r.skipped.append(more)
            end = stop
            continue
        if call_of(value, r.entry) is None:
            return end
        calls.append(call_of(r.checked(value, text, more, after), r.entry, r))  # type: ignore[arg-type]
        end = after


def call_of(obj: Any, entry: FormatEntry, r: Reading | None = None) -> tuple[str, Any] | None:
    """The (name, arguments) a JSON call object holds under the entry's keys; ``None`` if it is none.  With
    no name keys (Apertus) it is ``{name: arguments}``; ``{"function": {...}}`` is the call inside."""
    if not isinstance(obj, dict):
        return None
    if not entry.name_keys:
        key, value = next(iter(obj.items())) if len(obj) == 1 else (None, None)
        return (key, value) if isinstance(key, str) and isinstance(value, dict) else None
    name = next((obj[key] for key in entry.name_keys if obj.get(key).__class__ is str), None)
    if name is None:  # {"type": "function", "function": {...}}: the call inside
        found = call_of(obj.get("function"), entry, r)
        if found is not None and r is not None and r.repeats is not None:
            r.repeats.call_object((obj,), found[1])
        return found
    arguments: Any = next((obj[key] for key in entry.argument_keys if key in obj), {})
    if isinstance(arguments, str):  # arguments written as a JSON string (Granite 4, OpenAI's wire format)
        try:
            decoded = json.loads(arguments)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            arguments = decoded if r is None else r.checked(decoded, arguments, 0, len(arguments))
            if r is not None and r.repeats is not None:  # (the object holds their text, not them)
                r.repeats.call_object((obj,), arguments)
    return name, arguments


_SLOTS: dict[str, Step] = {"arguments": _arguments, "call": _call_objects(True), "calls": _call_objects(False),
                           "parameters": _parameters, "dict": _dict}


def first_pattern(pieces: tuple[Piece, ...]) -> str:
    """A regular expression (literals and one look-ahead only) matching where ``pieces`` may start."""
    if not pieces:
        return ""
    head, rest = pieces[0], pieces[1:]
    if isinstance(head, str):
        return re.escape(head.lstrip()) if not head.isspace() else first_pattern(rest)
    if isinstance(head, Optional_):
        return "|".join(p for p in (first_pattern(head.optional), first_pattern(rest)) if p)
    if isinstance(head, Either):
        return "|".join(first_pattern(alternative + rest) for alternative in head.either)
    if head.read_with:  # another protocol reads the reply: from its start
        return r"\A"
    if head.slot == "name":  # a name written first stands at a line's start (Functionary)
        return r"(?m:^)[ \t]*+(?=[A-Za-z_])"
    return r"[{\[]" if head.slot in ("arguments", "call", "calls") else ""


class Writing(NamedTuple):
    """What the renderer writes: the ``number``-th of ``calls`` (a parameter: its ``key`` and ``value``)."""

    entry: FormatEntry
    call: Any
    number: int
    calls: list[Any]
    protocol_of: Callable[[str], Any] | None = None
    key: str = ""
    value: Any = None

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.call.arguments or {})


def render(pieces: tuple[Piece, ...], w: Writing) -> str:
    """``pieces`` written: literals, optional runs unless ``render: false``, a choice's first alternative."""
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
        elif isinstance(piece, Optional_):
            out.append(render(piece.optional, w) if piece.render else "")
        elif isinstance(piece, Either):
            out.append(render(piece.either[0], w))
        elif piece.read_with:
            assert w.protocol_of is not None, "a slot read with another protocol needs protocol_of"
            out.append(w.protocol_of(piece.read_with).render_calls(w.calls))
        else:
            out.append(_WRITERS[piece.slot](piece, w))
    return "".join(out)


def _call_object(entry: FormatEntry, call: Any) -> dict[str, Any]:
    arguments = dict(call.arguments or {})
    return {entry.name_keys[0]: call.name, entry.argument_keys[0]: arguments} if entry.name_keys else \
        {call.name: arguments}


def _write_calls(piece: Slot, w: Writing) -> str:
    objects = [_call_object(w.entry, call) for call in w.calls]
    return piece.between.join(map(_json, objects)) if piece.between else _json(objects)


def _write_input(piece: Slot, w: Writing) -> str:
    only = list(w.arguments.values())
    return only[0] if len(only) == 1 and isinstance(only[0], str) else _json(w.arguments)


_WRITERS: dict[str, Callable[[Slot, Writing], str]] = {
    "name": lambda piece, w: w.call.name,
    "id": lambda piece, w: piece.text or str(w.number),
    "word": lambda piece, w: piece.text,
    "arguments": lambda piece, w: _json(w.arguments),
    "call": lambda piece, w: _json(_call_object(w.entry, w.call)),
    "calls": _write_calls,
    "parameters": lambda piece, w: "".join(render(w.entry.parameter, w._replace(key=key, value=value))
                                           for key, value in w.arguments.items()),
    "key": lambda piece, w: w.key,
    "value": lambda piece, w: w.value if isinstance(w.value, str) else _json(w.value),
    "input": _write_input,
    "dict": lambda piece, w: write_dict(w.arguments, w.entry.quotes[0]),
}
