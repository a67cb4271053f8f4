"""Reading and rendering calls with a catalogue entry's template.

A template is matched piece by piece from a candidate start (a place where its first
literal stands): a literal must follow (after white space), a slot reads what it names, an
optional run is tried and skipped when it does not match, a choice takes its first
alternative that matches.  Every search is ``str.find`` or a bounded regular expression,
and :class:`Finder` remembers each literal's last search, so a reply with many unfinished
calls is still read in linear time.  Rendering walks the same pieces the other way.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Callable

from ..duplicates import Repeats, may_repeat, reread
from ..values import brackets, group_end
from .catalogue import UNTIL_LITERAL, Either, FormatEntry, Optional_, Piece, Slot, following_literals

_WS = re.compile(r"\s*+")
#: the white space a reply holds between pieces, tested one character at a time before the regex is run
_SPACE = frozenset(" \t\r\n\f\v")
_NAME = re.compile(r"[A-Za-z_][\w.:\-]{0,255}")
_NAME_NO_COLON = re.compile(r"[A-Za-z_][\w.\-]{0,255}")
_ID = re.compile(r"[\w\-]{1,64}")
_WORD = re.compile(r"[\w\-./]{1,64}")
_KEY = re.compile(r"[^\s<>=\"'/]{1,256}")
_RAW_DECODE = json.JSONDecoder().raw_decode
#: the first window a JSON value is decoded in: json's error counts the lines before where it stopped, in
#: the text it was given, so a failure in a 1 MB reply would cost a pass over all that precedes it
JSON_WINDOW = 4096


def _DECODE(text: str, at: int) -> tuple[Any, int]:
    """``json``'s ``raw_decode`` of the object or array at ``text[at]``, run on growing windows of the text after
    ``at``: a value that fails inside a window fails there; only one the window's end may have cut is tried on
    a window 16 times wider.  (A bracket closes a value whole, so one read inside a window is the value.)"""
    window = JSON_WINDOW
    while True:
        piece = text[at:at + window]
        try:
            value, end = _RAW_DECODE(piece)
        except json.JSONDecodeError as err:
            # a failure inside the window is the value's own, but for one the window's end may have caused: a
            # failure at that end, or a string that does not close (json says where the string began)
            cut = err.pos >= len(piece) - 1 or err.msg.startswith("Unterminated string")
            if at + window >= len(text) or not cut:
                raise _at(err, at) from None
            window *= 16
            continue
        return value, at + end


def _at(err: json.JSONDecodeError, at: int) -> json.JSONDecodeError:
    """``err`` (on a window of the text from ``at``) placed in the text, without counting its lines again."""
    moved = json.JSONDecodeError.__new__(json.JSONDecodeError)
    Exception.__init__(moved, err.msg)
    moved.msg, moved.pos = err.msg, err.pos + at
    return moved
_BETWEEN_CALLS = re.compile(r"\s*+;?\s*+")
_JSON_OPENING = re.compile(r"[{\[\n]")
#: the slots that read JSON, and what such a value opens with
_JSON_SLOTS = frozenset({"arguments", "call", "calls"})
_JSON_OPENINGS = frozenset("{[")
#: how far past a marker words before its JSON are passed over
JUNK_CHARS = 256
_BRACKETS = brackets("{[", "}]")
_CDATA, _CDATA_END = "<![CDATA[", "]]>"
_NONE: Any = object()
_LINE_START = r"(?m:^)[ \t]*+(?=[A-Za-z_])"


class Finder:
    """``str.find`` of literals in one text, remembering each literal's last answer: a search from a place
    at or after where the last one began, and not past what it found, has the same answer."""

    __slots__ = ("text", "last")

    def __init__(self, text: str) -> None:
        self.text = text
        self.last: dict[Any, tuple] = {}

    def find(self, literal: str, start: int) -> int:
        known = self.last.get(literal)
        if known is not None and known[0] <= start and (known[1] < 0 or start <= known[1]):
            return known[1]
        found = self.text.find(literal, start)
        self.last[literal] = (start, found)
        return found

    def first_of(self, literals: "re.Pattern[str]", start: int) -> tuple[int, str]:
        """Where the first of several literals (a pattern of them, one alternative each, in order) stands from
        ``start``, and which it is (the first of the alternatives there); ``(-1, "")`` when none is there."""
        known = self.last.get(literals)
        if known is not None and known[0] <= start and (known[1] < 0 or start <= known[1]):
            return known[1], known[2]
        found = literals.search(self.text, start)
        answer = (found.start(), found.group()) if found is not None else (-1, "")
        self.last[literals] = (start, *answer)
        return answer


class Capture:
    """What a template match has read so far: the name, the arguments, the calls (for ``calls`` slots and
    protocols read inside), and the furthest place a piece failed with what it expected there."""

    __slots__ = ("name", "arguments", "calls", "key", "skipped")

    def __init__(self) -> None:
        self.name: str | None = None
        self.arguments: Any = None
        self.calls: list[tuple[str, Any]] | None = None
        self.key: str | None = None
        #: where text that is not a call was passed over inside the call (a note says so)
        self.skipped: list[int] = []

    def state(self) -> tuple:
        arguments = self.arguments
        return (self.name, arguments, len(arguments) if isinstance(arguments, dict) else 0, self.calls, self.key)

    def restore(self, state: tuple) -> None:
        self.name, arguments, size, self.calls, self.key = state
        if isinstance(arguments, dict):  # the same dict, perhaps with values added since: they go (last first)
            while len(arguments) > size:
                arguments.popitem()
        self.arguments = arguments


class Context:
    """One reply being read: the text, the entry, the finder, the furthest failure, helpers from the protocol."""

    __slots__ = ("text", "entry", "parameter", "flat_parameter", "finder", "failed_at", "expected", "committed",
                 "read_with", "read_input", "tools", "limits", "fused_from", "repeats")

    def __init__(self, text: str, entry: FormatEntry, parameter: tuple[tuple, ...],
                 flat_parameter: tuple[tuple, ...] | None, read_with: Callable[..., list[tuple[str, Any]]],
                 read_input: Callable[..., Any], tools: Any, limits: Any = None) -> None:
        self.text, self.entry, self.parameter, self.finder = text, entry, parameter, Finder(text)
        self.flat_parameter, self.limits = flat_parameter, limits
        self.failed_at, self.expected = -1, ""
        #: the candidate has matched a marker or begun its arguments: its failure is worth a note
        self.committed = False
        self.read_with, self.read_input, self.tools = read_with, read_input, tools
        #: where a parameter may next be read by one pattern (see :func:`_flat_parameters`): past all that such
        #: a pattern has read, so that none reads a character twice
        self.fused_from = 0
        #: the objects read that hold a key written twice (``None`` until one is found)
        self.repeats: Repeats | None = None

    def fail(self, at: int, expected: str) -> None:
        if at > self.failed_at:
            self.failed_at, self.expected = at, expected

    def found(self) -> Repeats:
        """:attr:`repeats`, made when first needed."""
        if self.repeats is None:
            self.repeats = Repeats()
        return self.repeats

    def checked(self, value: Any, text: str, start: int, end: int) -> Any:
        """``value``, strict JSON read from ``text[start:end]`` — read again, its objects' keys written twice
        recorded, when it may hold one (:func:`~toolform_rules.protocols.duplicates.may_repeat`)."""
        return value if not may_repeat(value, text, start, end) else self.read_again(value, text, start, end)

    def read_again(self, value: Any, text: str, start: int, end: int) -> Any:
        """``value``, strict JSON read from ``text[start:end]``, read again recording its objects' keys written
        twice (when no reader takes it again, ``value`` as it is)."""
        again = reread(text[start:end])
        if again is None:
            return value
        if again[1]:
            self.found().merge(again[1])
        return again[0]

    def parameter_again(self, arguments: dict[str, Any], key: str) -> None:
        """The parameter ``key`` is written again (its last value is kept)."""
        self.found().record(arguments, (key,))


# A template compiled for reading: a tuple of steps, each a tuple whose first item says what it is.  RUN is a
# run of regular steps (see :func:`regular_runs`) matched by one pattern.
LITERAL, BLANK, SLOT, OPTIONAL, EITHER, RUN = range(6)
#: the white space :func:`match` skips before a literal: none, unless the next character is in ``_SPACE``
_SPACE_PATTERN = r"(?:[ \t\r\n\f\v]\s*+)?+"
#: the slots a pattern can read (what they match is a bounded word; nothing else depends on it)
_REGULAR_SLOTS = frozenset({"name", "id", "word", "key"})


def compile_pieces(pieces: tuple[Piece, ...]) -> tuple[tuple, ...]:
    """``pieces`` as steps: a literal (without its leading white space), white space, a slot (with the literals
    that may follow it and the pattern of its text), an optional run, a choice."""
    steps: list[tuple] = []
    for index, piece in enumerate(pieces):
        if isinstance(piece, str):
            steps.append((BLANK,) if piece.isspace() else (LITERAL, piece.lstrip()))
        elif isinstance(piece, Slot):
            following = following_literals(pieces, index)
            pattern = {"id": _ID, "word": _WORD, "key": _KEY}.get(piece.slot) or (
                _NAME_NO_COLON if following is not None and following[0][0][:1] == ":" else _NAME)
            steps.append((SLOT, piece.slot, piece.read_with, following, pattern))
        elif isinstance(piece, Optional_):
            steps.append((OPTIONAL, compile_pieces(piece.optional)))
        else:
            steps.append((EITHER, tuple(compile_pieces(alternative) for alternative in piece.either)))
    return tuple(steps)


def _regular(step: tuple) -> bool:
    """Whether ``step`` (and all inside it) is literals, white space and word slots: what a pattern matches."""
    kind = step[0]
    if kind == SLOT:
        return step[1] in _REGULAR_SLOTS and not step[2]
    if kind == OPTIONAL:
        return all(_regular(inner) for inner in step[1])
    if kind == EITHER:
        return all(_regular(inner) for alternative in step[1] for inner in alternative)
    return kind in (LITERAL, BLANK)


def _pattern(steps: tuple[tuple, ...], slots: list[str]) -> str:
    """The regular expression that matches ``steps`` as :func:`match` does; ``slots`` gets each group's slot.

    Each piece skips white space before it (possessively, as the interpreter does); a word slot is possessive
    (the interpreter takes the longest word and never gives any back); a choice and an optional run are atomic
    groups (the interpreter commits to the first alternative that matches, and to an optional run once it
    matched), so the pattern never backtracks into what it matched: linear, and the interpreter's answer."""
    out = []
    for step in steps:
        kind = step[0]
        if kind == LITERAL:
            out.append(_SPACE_PATTERN + re.escape(step[1]))
        elif kind == BLANK:
            out.append(_SPACE_PATTERN)
        elif kind == SLOT:
            slots.append(step[1])
            word = step[4].pattern
            out.append(r"\s*+(" + word[:-1] + "}+)" if word.endswith("}") else r"\s*+(" + word + ")")
        elif kind == OPTIONAL:
            out.append("(?>(?:" + _pattern(step[1], slots) + ")?)")
        else:
            out.append("(?>" + "|".join(_pattern(alternative, slots) for alternative in step[1]) + ")")
    return "".join(out)


def regular_runs(steps: tuple[tuple, ...]) -> tuple[tuple, ...]:
    """``steps`` with each run of regular steps that holds a literal replaced by one RUN step: (RUN, its pattern,
    the slot of each group, the steps themselves).  One pattern match instead of a step at a time; when the
    pattern fails the steps are interpreted, for the failure's place and what was expected there."""
    out: list[tuple] = []
    run: list[tuple] = []

    def close_run() -> None:
        if any(step[0] != BLANK for step in run) and any(_has_literal(step) for step in run):
            slots: list[str] = []
            pattern = re.compile(_pattern(tuple(run), slots))
            out.append((RUN, pattern, tuple(slots), tuple(run)))
        else:
            out.extend(run)
        run.clear()

    for step in steps:
        if _regular(step):
            run.append(step)
            continue
        close_run()
        if step[0] == OPTIONAL:
            step = (OPTIONAL, regular_runs(step[1]))
        elif step[0] == EITHER:
            step = (EITHER, tuple(regular_runs(alternative) for alternative in step[1]))
        out.append(step)
    close_run()
    return tuple(out)


def _has_literal(step: tuple) -> bool:
    if step[0] == LITERAL:
        return True
    if step[0] == EITHER:  # (an optional run may be skipped: its literals are not sure to match)
        return all(any(_has_literal(inner) for inner in alternative) for alternative in step[1])
    return False


def _run(step: tuple, at: int, cap: Capture, ctx: Context) -> int | None:
    """A RUN step: its pattern, its groups into ``cap``; on a failure (or a key that is not the one read
    before) its steps interpreted, which say where and what."""
    found = step[1].match(ctx.text, at)
    if found is not None:
        name, key = cap.name, cap.key
        for index, slot in enumerate(step[2], 1):
            value = found.group(index)
            if value is None:
                continue
            if slot == "name":
                name = value
            elif slot == "key":
                if key is None:
                    key = value
                elif value != key:
                    found = None
                    break
        if found is not None:
            cap.name, cap.key = name, key
            ctx.committed = True  # (a run holds a literal, and it matched)
            return found.end()
    return match(step[3], at, cap, ctx)


def match(steps: tuple[tuple, ...], at: int, cap: Capture, ctx: Context) -> int | None:
    """Where ``steps`` matched from ``at`` end, or ``None`` (``ctx`` keeps the furthest failure)."""
    text = ctx.text
    for step in steps:
        kind = step[0]
        if kind == RUN:
            end = _run(step, at, cap, ctx)
            if end is None:
                return None
            at = end
        elif kind == LITERAL:
            start = _WS.match(text, at).end() if text[at:at + 1] in _SPACE else at  # type: ignore[union-attr]
            literal = step[1]
            if not text.startswith(literal, start):
                ctx.fail(start, repr(literal))
                return None
            at = start + len(literal)
            ctx.committed = True
        elif kind == BLANK:
            if text[at:at + 1] in _SPACE:
                at = _WS.match(text, at).end()  # type: ignore[union-attr]
        elif kind == SLOT:
            end = _slot(step, at, cap, ctx)
            if end is None:
                return None
            at = end
        elif kind == OPTIONAL:
            saved = cap.state()
            end = match(step[1], at, cap, ctx)
            if end is None:
                cap.restore(saved)
            else:
                at = end
        else:
            for alternative in step[1]:
                saved = cap.state()
                end = match(alternative, at, cap, ctx)
                if end is not None:
                    at = end
                    break
                cap.restore(saved)
            else:
                return None
    return at


def _json_at(text: str, at: int, ctx: Context, what: str) -> tuple[Any, int] | None:
    if at >= len(text) or text[at] not in "{[":
        ctx.fail(at, what)
        return None
    try:
        value, end = _DECODE(text, at)
    except (ValueError, RecursionError) as err:
        ctx.fail(err.pos if isinstance(err, json.JSONDecodeError) else at, f"{what} (the JSON stops being JSON here)")
        return None
    # (:meth:`Context.checked`, inline: every call's JSON passes here)
    return (value if not may_repeat(value, text, at, end) else ctx.read_again(value, text, at, end)), end


def call_of(obj: Any, entry: FormatEntry, ctx: Context | None = None) -> tuple[str, Any] | None:
    """The (name, arguments) a JSON call object holds under the entry's keys; ``None`` if it is none.

    An object whose one key is not a name key and whose value is an object is ``{name: arguments}``
    when the entry has no name keys (Apertus).  ``ctx``: the reply being read, which keeps the keys
    the call object writes twice (:attr:`Context.repeats`).
    """
    if not isinstance(obj, dict):
        return None
    if not entry.name_keys:
        if len(obj) == 1:
            (key, value), = obj.items()
            if isinstance(key, str) and isinstance(value, dict):
                return key, value
        return None
    name = None
    for key in entry.name_keys:
        name = obj.get(key)
        if name.__class__ is str:
            break
    else:
        function = obj.get("function")  # {"type": "function", "function": {...}}
        found = call_of(function, entry, ctx) if isinstance(function, dict) else None
        if found is not None and ctx is not None and ctx.repeats is not None:
            ctx.repeats.call_object((obj,), found[1])
        return found
    arguments: Any = {}
    for key in entry.argument_keys:
        if key in obj:
            arguments = obj[key]
            break
    if isinstance(arguments, str):  # arguments written as a JSON string (Granite 4, OpenAI's wire format)
        try:
            decoded = json.loads(arguments)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            arguments = decoded if ctx is None else ctx.checked(decoded, arguments, 0, len(arguments))
            if ctx is not None and ctx.repeats is not None:  # (the object holds their text, not them)
                ctx.repeats.call_object((obj,), arguments)
    return name, arguments


def _slot(step: tuple, at: int, cap: Capture, ctx: Context) -> int | None:
    _, kind, read_with, following, pattern = step
    text, entry = ctx.text, ctx.entry
    if kind in UNTIL_LITERAL or read_with:
        ctx.committed = True
        cdata = kind == "value" and text.startswith(_CDATA, at)
        if cdata:  # <![CDATA[...]]>: the value may hold the closing tag
            close = ctx.finder.find(_CDATA_END, at + len(_CDATA))
            if close < 0:
                ctx.fail(len(text), repr(_CDATA_END))
                return None
            if cap.arguments is None:
                cap.arguments = {}
            if cap.key in cap.arguments:
                ctx.parameter_again(cap.arguments, str(cap.key))
            cap.arguments[cap.key] = text[at + len(_CDATA):close]
            return close + len(_CDATA_END)
        if following is None:
            end = len(text)
        else:
            literals = following[0]
            if len(literals) == 1:
                end = ctx.finder.find(literals[0], at)
            else:
                end = ctx.finder.first_of(_first_of(literals), at)[0]
            if end < 0:
                if not following[1]:
                    ctx.fail(len(text), " or ".join(map(repr, following[0])))
                    return None
                end = len(text)
        body = text[at:end]
        if read_with:
            cap.calls = (cap.calls or []) + ctx.read_with(read_with, body, ctx.tools, ctx.limits, ctx)
        elif kind == "value":
            if entry.value_trim == "newline":
                body = body[1:] if body[:1] == "\n" else body
                body = body[:-1] if body[-1:] == "\n" else body
            if cap.arguments is None:
                cap.arguments = {}
            if cap.key in cap.arguments:
                ctx.parameter_again(cap.arguments, str(cap.key))
            cap.arguments[cap.key] = body
        else:  # input
            cap.arguments = ctx.read_input(body, cap.name, ctx.tools, ctx)
        return end
    at = _WS.match(text, at).end()  # type: ignore[union-attr]
    if kind == "name" or kind == "id" or kind == "word" or kind == "key":
        found = pattern.match(text, at)
        if found is None:
            ctx.fail(at, f"a {'tool name' if kind == 'name' else kind}")
            return None
        if kind == "name":
            cap.name = found.group()
        elif kind == "key":
            if cap.key is None:
                cap.key = found.group()
            elif found.group() != cap.key:  # a closing tag naming its key again
                ctx.fail(at, repr(cap.key))
                return None
        return found.end()
    if kind not in _JSON_SLOTS or text[at:at + 1] in _JSON_OPENINGS:
        # what follows reads arguments: a failure from here on is worth a note.  JSON arguments begin with their
        # bracket: a line of prose whose first word a bare name template took (Functionary) is no broken call
        ctx.committed = True
    if kind == "arguments":
        read = _json_at(text, at, ctx, "a JSON object")
        if read is None:
            return None
        if not isinstance(read[0], dict):
            ctx.fail(at, "a JSON object")
            return None
        cap.arguments = read[0]
        return read[1]
    if kind == "call" or kind == "calls":
        return _calls(kind, at, cap, ctx)
    if kind == "parameters":
        cap.arguments = {} if cap.arguments is None else cap.arguments
        if ctx.flat_parameter is not None:
            return _flat_parameters(ctx.flat_parameter, at, cap, ctx)
        while True:
            cap.key = None
            after = match(ctx.parameter, at, cap, ctx)
            if after is None or after == at:
                return at
            at = after
    if kind == "dict":
        from .dict_values import read_dict

        as_dict = read_dict(text, at, entry.quotes)
        if isinstance(as_dict, str):
            ctx.fail(at, as_dict)
            return None
        cap.arguments, after = as_dict
        return after
    ctx.fail(at, kind)  # (the catalogue refuses unknown slots)
    return None


def flat(steps: tuple[tuple, ...]) -> tuple | None:
    """A parameter template of regular steps (see :func:`regular_runs`) around one key and one value that its
    closing literal (or one of several) follows, compiled for :func:`_flat_parameters`: (the pattern up to the
    value, the index of its key's group, the closing literals, the pattern after them, the indexes of that
    pattern's key groups; the pattern of the whole parameter, its value's group, its later key groups); else
    ``None``."""
    values = [index for index, step in enumerate(steps) if step[0] == SLOT and step[1] == "value"]
    if len(values) != 1 or values[0] + 1 >= len(steps):
        return None
    head, close, tail = steps[:values[0]], steps[values[0] + 1], steps[values[0] + 2:]
    if close[0] == LITERAL:
        closes: tuple[str, ...] = (close[1],)
    elif close[0] == EITHER and all(len(alternative) == 1 and alternative[0][0] == LITERAL
                                    for alternative in close[1]):
        closes = tuple(alternative[0][1] for alternative in close[1])
    else:
        return None
    if not all(_regular(step) for step in head + tail):
        return None
    head_slots: list[str] = []
    tail_slots: list[str] = []
    head_pattern = re.compile(_pattern(head, head_slots))
    tail_pattern = re.compile(_pattern(tail, tail_slots)) if tail else None
    if head_slots.count("key") != 1 or "name" in head_slots + tail_slots:
        return None
    tail_keys = tuple(index for index, slot in enumerate(tail_slots, 1) if slot == "key")
    # the whole parameter in one pattern: the value runs to the first place where a closing literal stands
    # (possessively: it never gives back), the first of them listed that stands there closes it; a CDATA value
    # is left to the steps above (it may hold a closing literal)
    firsts = "".join(sorted({re.escape(close[0]) for close in closes}))
    closing = "|".join(map(re.escape, closes))
    value = rf"(?!{re.escape(_CDATA)})((?:[^{firsts}]++|(?!{closing})[{firsts}])*+)(?>{closing})"
    fused = re.compile(head_pattern.pattern + value + (tail_pattern.pattern if tail_pattern is not None else ""))
    value_group = len(head_slots) + 1
    return (head_pattern, head_slots.index("key") + 1, closes, tail_pattern, tail_keys, fused, value_group,
            tuple(value_group + index for index in tail_keys))


def _flat_parameters(compiled: tuple, at: int, cap: Capture, ctx: Context) -> int:
    """The parameters written one after another from ``at`` with a flat template; where they end.  (What
    :func:`match` does for each: one pattern for the whole parameter; where it fails, a pattern up to the value,
    a search for its closing literal and one more pattern.  A parameter is most of a text-valued call.)

    The one pattern reads a value to its end: it is tried only past all that it has read in this reply
    (``ctx.fused_from``), and not again once it failed where a parameter began, so that a reply of many
    candidates is read in linear time (the searches of the steps are :class:`Finder`'s)."""
    head, key_group, closes, tail, tail_keys, fused, value_group, fused_tail_keys = compiled
    text, arguments, trim = ctx.text, cap.arguments, ctx.entry.value_trim == "newline"
    find = ctx.finder.find
    single, close = len(closes) == 1, closes[0]
    closes_pattern = _first_of(closes)
    # a closing tag that names the key once (<key>value</key>): read with the key and the value, no loop
    one_tail = fused_tail_keys[0] if len(fused_tail_keys) == 1 else None
    while True:
        if at >= ctx.fused_from:
            whole = fused.match(text, at)
            if whole is None:
                agree = False
            elif one_tail is not None:
                key, body, tail_key = whole.group(key_group, value_group, one_tail)
                agree = tail_key is None or tail_key == key
            else:
                key, body = whole.group(key_group, value_group)
                agree = not fused_tail_keys or all(whole.group(index) in (None, key) for index in fused_tail_keys)
            if agree:
                if trim:
                    body = body[1:] if body[:1] == "\n" else body
                    body = body[:-1] if body[-1:] == "\n" else body
                if key in arguments:
                    ctx.parameter_again(arguments, key)
                arguments[key] = body
                ctx.committed = True
                at = ctx.fused_from = whole.end()
                continue
        opened = head.match(text, at)
        if opened is None:
            ctx.fail(at, "a parameter")
            return at
        if at >= ctx.fused_from:  # the pattern failed after a parameter began: it may have read to the end
            ctx.fused_from = len(text) + 1
        key, pos = opened.group(key_group), opened.end()
        ctx.committed = True
        if text.startswith(_CDATA, pos):  # <![CDATA[...]]>: the value may hold the closing literal
            end = find(_CDATA_END, pos + len(_CDATA))
            after = end + len(_CDATA_END)
            close = None if end < 0 else next((c for c in closes if text.startswith(c, after)), None)
            if close is None:
                ctx.fail(len(text) if end < 0 else after, " or ".join(map(repr, closes)))
                return at
            if key in arguments:
                ctx.parameter_again(arguments, key)
            arguments[key] = text[pos + len(_CDATA):end]
            pos = after + len(close)
        else:
            if single:
                end = find(close, pos)
            else:
                end, close = ctx.finder.first_of(closes_pattern, pos)
            if end < 0:
                ctx.fail(len(text), " or ".join(map(repr, closes)))
                return at
            body = text[pos:end]
            if trim:
                body = body[1:] if body[:1] == "\n" else body
                body = body[:-1] if body[-1:] == "\n" else body
            if key in arguments:
                ctx.parameter_again(arguments, key)
            arguments[key] = body
            pos = end + len(close)
        if tail is not None:
            closed = tail.match(text, pos)
            if closed is None or tail_keys and any(closed.group(index) not in (None, key) for index in tail_keys):
                ctx.fail(pos, "the end of the parameter" if closed is None else repr(key))
                del arguments[key]
                return at
            pos = closed.end()
        at = pos


@functools.cache
def _first_of(literals: tuple[str, ...]) -> "re.Pattern[str]":
    """A pattern finding the first of ``literals`` (at one place, the first of them listed that is there)."""
    return re.compile("|".join(map(re.escape, literals)))


def _calls(kind: str, at: int, cap: Capture, ctx: Context) -> int | None:
    text, entry = ctx.text, ctx.entry
    if kind == "calls" and at < len(text) and text[at] not in "{[":
        # a few words before the JSON on its line ("[TOOL_CALLS] junk [{...}]"): passed over, noted (looked for
        # within JUNK_CHARS only, so that a reply of many markers and no JSON stays linear)
        opening = _JSON_OPENING.search(text, at, min(len(text), at + JUNK_CHARS))
        if opening is not None and opening.group() != "\n":
            cap.skipped.append(at)
            at = opening.start()
    read = _json_at(text, at, ctx, "a JSON call object" if kind == "call" else "JSON call objects")
    if read is None:
        return None
    value, end = read
    if kind == "call" and call_of(value, entry) is None:  # (objects after the first are read as for calls)
        ctx.fail(at, "a JSON object naming a tool")
        return None
    calls: list[tuple[str, Any]] = []
    pending: Any = value
    while True:
        if pending is not _NONE:
            for item in pending if isinstance(pending, list) else [pending]:
                found = call_of(item, entry, ctx)
                if found is None:
                    ctx.fail(at, "JSON objects naming a tool")
                    return None
                calls.append(found)
        more = _BETWEEN_CALLS.match(text, end).end()  # type: ignore[union-attr]
        if more >= len(text) or text[more] != "{":
            break
        try:
            pending, next_end = _DECODE(text, more)
        except (ValueError, RecursionError):
            # a line between calls that is not JSON (JSON-lines formats): passed over, noted, when it closes there
            line_end = text.find("\n", more)
            stop, closed, _ = group_end(text, more, len(text) if line_end < 0 else line_end, _BRACKETS)
            if not closed:
                break
            cap.skipped.append(more)
            pending, end = _NONE, stop
            continue
        if call_of(pending, entry) is None:
            break
        pending = ctx.checked(pending, text, more, next_end)
        end = next_end
    cap.calls = (cap.calls or []) + calls
    return end


def first_pattern(pieces: tuple[Piece, ...]) -> str:
    """A regular expression (literals and one look-behind only) matching where ``pieces`` may start."""
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
        return _LINE_START
    if head.slot in ("arguments", "call", "calls"):
        return r"[{\[]"
    return ""


# --- rendering --------------------------------------------------------------------------------------------


def render(pieces: tuple[Piece, ...], entry: FormatEntry, call: Any, index: int, calls: list[Any],
           key: str = "", value: Any = None, protocol_of: Callable[[str], Any] | None = None) -> str:
    """``pieces`` written for ``call`` (the ``index``-th of ``calls``); ``key``/``value`` in a parameter;
    ``protocol_of``: the protocols by id (for a slot another protocol reads)."""
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
        elif isinstance(piece, Optional_):
            if piece.render:
                out.append(render(piece.optional, entry, call, index, calls, key, value, protocol_of))
        elif isinstance(piece, Either):
            out.append(render(piece.either[0], entry, call, index, calls, key, value, protocol_of))
        else:
            out.append(_render_slot(piece, entry, call, index, calls, key, value, protocol_of))
    return "".join(out)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _render_slot(piece: Slot, entry: FormatEntry, call: Any, index: int, calls: list[Any], key: str,
                 value: Any, protocol_of: Callable[[str], Any] | None) -> str:
    kind = piece.slot
    arguments = dict(call.arguments or {})
    if piece.read_with:
        assert protocol_of is not None, "a slot read with another protocol needs protocol_of"
        return protocol_of(piece.read_with).render_calls(calls)
    if kind == "name":
        return call.name
    if kind == "id":
        return piece.text or str(index)
    if kind == "word":
        return piece.text
    if kind == "arguments":
        return _json(arguments)
    if kind == "call":
        return _json(_call_object(entry, call))
    if kind == "calls":
        objects = [_call_object(entry, c) for c in calls]
        return piece.between.join(map(_json, objects)) if piece.between else _json(objects)
    if kind == "parameters":
        return "".join(render(entry.parameter, entry, call, index, calls, k, v, protocol_of)
                       for k, v in arguments.items())
    if kind == "key":
        return key
    if kind == "value":
        return value if isinstance(value, str) else _json(value)
    if kind == "input":
        only = list(arguments.values())
        return only[0] if len(only) == 1 and isinstance(only[0], str) else _json(arguments)
    if kind == "dict":
        from .dict_values import write_dict

        return write_dict(arguments, entry.quotes[0])
    return ""


def _call_object(entry: FormatEntry, call: Any) -> dict[str, Any]:
    if not entry.name_keys:
        return {call.name: dict(call.arguments or {})}
    return {entry.name_keys[0]: call.name, entry.argument_keys[0]: dict(call.arguments or {})}
