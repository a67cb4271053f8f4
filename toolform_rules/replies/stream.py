"""Reading a reply while it streams in: events as its calls appear, then the same result as ``parse_reply``.

``parse_stream(tools, protocol)`` returns a :class:`ReplyStream`.  ``feed(chunk)`` takes the
next piece of the reply and returns what it revealed — a call started (with its name), its
argument text as it arrives, a call complete (graded and validated, as ``parse_reply``
grades it) — and ``close()`` returns the :class:`~toolform_rules.replies.parse.ParsedReply` of the
whole text, equal to ``parse_reply(whole_text, ...)`` with the same options, however the
reply was cut into chunks.

A feed does little: it keeps the chunk, and the depth of brackets and the closing tag of the
text's first element as they arrive (in time proportional to the chunk).  It reads the text
not yet settled once more at the moment a call may have closed — that closing tag, or the
brackets back to balance — so that the call is announced then, while the looks so far have read
at most ``LOOK_BUDGET`` times the text fed; and otherwise when the chunk holds a character that
can end a call (a closing bracket, tag or line) and that text has grown by a quarter since the
last look.  So the text is read a bounded number of times in all, whatever it holds and however
it is cut: feeding a reply one character at a time costs a small multiple of one
``parse_reply`` (``bench/stream.py``).

A call is announced as done once text follows it that it did not take — in a format whose
calls a marker closes (JSON, tags, Python calls: ``Protocol.closes_calls``) — else once the
next call begins; what only the end of the reply completes is announced by ``close()``, in
``final_events``, and so are calls only ``lenient_fallback`` finds.  A model-native format
also announces a call as soon as its name is written, and then its argument text as it arrives.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import attrs

from ..limits import DEFAULT_LIMITS, Limits
from .formats import get_protocol
from .formats.base import RawCall
from .parse import ParsedCall, ParsedReply, _extract, _grade, parse_reply, remove_reasoning
from ..schema.loaders import load_tools
from ..schema.toolset import Toolset

#: what may end a call in any protocol: a closing bracket, the end of a tag, the end of a line
_ENDS_A_CALL = frozenset("}])>\n")
#: what may end a model-native format's call head (its name): markers and line ends too
_ENDS_A_HEAD = frozenset("}])>\n:|\"=")
#: the share by which the unsettled text must have grown before it is read again
GROWTH = 4
#: how much unsettled text waits for a look unless a call may have closed: read sooner, a call is mostly half
#: written (a slow look that finds nothing), and looks at sizes growing by a quarter from one character
#: would be twenty per call
FIRST_LOOK = 256
#: the looks at the moment a call may have closed may read, in all, this many times the text fed
LOOK_BUDGET = 3
#: an element's opening tag (its name ends at a space, a ``>`` or a ``=``), the first one a stream meets
_OPENING_TAG = re.compile(r"<([A-Za-z_][\w:.\-]{0,63})[\s>=]")
_LONGEST_TAG = 68
#: brackets, by how they change the depth a call's closing brings back to zero: a JSON object, a list of calls
#: (its calls are read when it closes), a Python call's parentheses
_BRACKETS = {"{": 1, "[": 1, "(": 1, "}": -1, "]": -1, ")": -1}
_BRACKET_SET = frozenset(_BRACKETS)
#: the characters that may open or close a call, which a feed keeps track of
_MARKS = frozenset("{}[]()<>")
#: the characters a feed of one must look at (the others, most of a reply, only go on a call's arguments)
_NOTABLE = _MARKS | _ENDS_A_CALL | _ENDS_A_HEAD
#: the options of ``parse_reply`` a stream takes
_PARSE_OPTIONS = frozenset({"rule", "validate", "lenient_fallback", "profile", "rules", "policy"})


class StreamEvent(NamedTuple):
    """What a chunk revealed: ``call_started`` (``name``), ``arguments`` (``text``: the call's argument text
    that arrived, raw), ``call_done`` (``call``: the call graded and validated). ``number``: the call's number
    in the reply, from 0.  (A named tuple: a stream fed a character at a time makes one per character.)"""

    kind: str
    number: int
    name: str = ""
    text: str = ""
    call: ParsedCall | None = None


_ARGUMENTS = "arguments"
#: a call read in the unsettled text, and its span
_Span = tuple[RawCall, tuple[int, int]]
#: a :class:`StreamEvent` from all five fields — ``_new_tuple(StreamEvent, fields)`` — made without the named
#: tuple's argument handling (a Python function): a stream fed a character at a time makes one per character
_new_tuple = tuple.__new__


class ReplyStream:
    """One reply being read as it arrives; see :func:`parse_stream`."""

    def __init__(self, tools: Any, protocol_id: str, *, limits: Limits = DEFAULT_LIMITS, **options: Any) -> None:
        unknown = sorted(set(options) - _PARSE_OPTIONS)
        if unknown:
            raise TypeError(f"parse_stream() got unknown options {', '.join(unknown)}; it takes those of "
                            f"parse_reply: {', '.join(sorted(_PARSE_OPTIONS))}")
        self._toolset = tools if isinstance(tools, Toolset) else load_tools(tools, limits=limits)
        self._protocol_id, self._protocol = protocol_id, get_protocol(protocol_id)
        self._limits, self._options = limits, options
        # a look reads unfinished text: the grammars, there to word a note or read what the fast readers
        # cannot, would run on every unfinished call; what only they read is announced by close()
        self._look_limits = attrs.evolve(limits, reply_grammar_chars=0)
        self._chunks: list[str] = []  # the text from ``_settled`` on, as fed
        self._settled_text: list[str] = []  # the text before ``_settled``
        self._size = 0
        self._settled = 0  # the text before it holds no call still to be announced
        self._looked = 0  # how much unsettled text the last look read
        self._sought = 0  # how much unsettled text the last search for a call's head read
        self._done: list[ParsedCall] = []  # the calls announced as done, in order
        self._head: tuple[int, int, int] | None = None  # the call announced as started: (start, index, sent up to)
        self._starts = getattr(self._protocol, "call_starts", None)
        self._closed = False
        #: the last look found a call that closed at the end of the text: the next chunk says whether it is done
        self._ends_a_call = False
        self._taking_in = -1  # where the call starts that the last look found ending where the text did
        # what says a call may just have closed, kept as the text arrives (each feed costs its chunk, never the text):
        self._depth = 0  # the unsettled text's opening brackets less its closing ones
        self._first_tag: str | None = None  # the closing tag of its first element ("</tool_call>"), once seen
        self._closing: tuple[str, int] | None = None  # ("brace" or "tag", how many characters followed it)
        self._last_open = -_LONGEST_TAG - 1  # how much text had been fed when a "<" last came
        self._read = 0  # how much text all the looks have read

    # --- the text -------------------------------------------------------------------------------------------

    def _unsettled(self) -> str:
        """The text not yet settled (joined only when read: a feed only keeps its chunk)."""
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def _settle(self, length: int) -> None:
        """The first ``length`` characters of the unsettled text hold no call still to be announced."""
        region = self._unsettled()
        self._settled_text.append(region[:length])
        rest = region[length:]
        self._chunks = [rest]
        self._settled += length
        self._depth, self._first_tag, self._closing = 0, None, None
        self._track(rest)

    # --- feeding -------------------------------------------------------------------------------------------

    def feed(self, chunk: str) -> list[StreamEvent]:
        """Take the next piece of the reply; the events it revealed (often none).

        >>> from toolform_rules import sample_toolset
        >>> stream = parse_stream(sample_toolset(), "hermes")
        >>> [e.kind for e in stream.feed('<tool_call>{"name": "legal_draft_v3", ')]
        ['call_started', 'arguments']
        >>> [(e.kind, e.call.valid if e.call else None) for e in stream.feed('"arguments": {}}</tool_call>\\n')]
        [('arguments', None), ('call_done', False)]
        >>> len(stream.close().calls), stream.final_events
        (1, [])
        """
        if chunk.__class__ is not str or self._closed:
            if self._closed:
                raise ValueError("the stream is closed")
            chunk = bytes(chunk).decode("utf-8", errors="replace") if isinstance(chunk, (bytes, bytearray)) \
                else str(chunk)
        self._chunks.append(chunk)
        self._size += len(chunk)
        head = self._head  # the announced call's argument text goes on: this chunk is the next of it
        events = [_new_tuple(StreamEvent, (_ARGUMENTS, head[1], "", chunk, None))] if head is not None else []
        # a feed of one character is the common case and the costly one: a character that can neither end nor
        # name a call (a letter, a digit, a space) is one set test
        if len(chunk) == 1 and chunk not in _NOTABLE and not self._ends_a_call:
            return events
        if not _MARKS.isdisjoint(chunk):
            self._track(chunk)
        if self._ends_a_call or (not _ENDS_A_CALL.isdisjoint(chunk) and self._worth_a_look(chunk)):
            events += self._look()
        if head is None and self._head is None and self._starts is not None and not _ENDS_A_HEAD.isdisjoint(chunk) \
                and self._size - self._settled >= self._sought + max(1, self._sought // GROWTH):
            events += self._announce()
        return events

    def _track(self, chunk: str) -> None:
        """Keep what says a call may have closed up to date with ``chunk`` (in time proportional to it)."""
        if not _BRACKET_SET.isdisjoint(chunk):
            depth = self._depth
            for index, char in enumerate(chunk):  # where the brackets first come to balance, if they do
                step = _BRACKETS.get(char)
                if step is not None:
                    depth += step
                    if depth == 0 and step < 0 and self._closing is None:
                        self._closing = ("brace", len(chunk) - 1 - index)
            self._depth = depth
        if "<" in chunk:
            self._last_open = self._size
        if ">" not in chunk:
            return
        if self._first_tag is None:
            if self._size - self._last_open > _LONGEST_TAG:  # no tag began near here
                return
            recent = self._recent(len(chunk) + _LONGEST_TAG)
            found = _OPENING_TAG.search(recent)
            if found is None:
                return
            self._first_tag = "</" + found.group(1) + ">"
            recent = recent[found.end():]
        else:
            recent = self._recent(len(chunk) + len(self._first_tag))
        end = recent.rfind(self._first_tag)
        if end >= 0 and end + len(self._first_tag) > len(recent) - len(chunk):  # (it ends in this chunk)
            self._closing = ("tag", len(recent) - end - len(self._first_tag))

    def _recent(self, size: int) -> str:
        """The last ``size`` characters of the unsettled text (from the last chunks: the text is not joined)."""
        pieces, length = [], 0
        for piece in reversed(self._chunks):
            pieces.append(piece)
            length += len(piece)
            if length >= size:
                break
        return "".join(reversed(pieces))[-size:]

    def _worth_a_look(self, chunk: str) -> bool:
        """Whether to read the unsettled text again, now that a character that can end a call arrived.

        At once when a call may just have closed — a closing tag ended the element the text's first
        tag opened, or (outside such an element) its braces came to balance — so that the call is
        announced then, and read while it is the only text unsettled (the cheap look); a call that
        closed with the chunk's last character is looked at with the next chunk, when it no longer
        ends where the text does.  As long as all the looks so far have read at most
        ``LOOK_BUDGET`` times the text fed: a reply of many braces or tags in prose stays linear.
        Else once the text has grown by a quarter since the last look (and to ``FIRST_LOOK``; inside an
        element whose closing tag has not come, once it has doubled, and to four times that) — when
        its brackets balance (a look inside an unclosed object or list costs several times one at a
        closed one, and finds no call a marker closes) or it has doubled (brackets in prose must not
        stop the looks for good).
        """
        unsettled = self._size - self._settled
        if self._first_tag is not None:  # inside an element: its closing tag will say; else once it has doubled
            grown = unsettled >= max(2 * self._looked, 4 * FIRST_LOOK)
        else:
            grown = unsettled >= max(self._looked + self._looked // GROWTH, FIRST_LOOK)
        closing, self._closing = self._closing, None
        if closing is not None and self._read + unsettled <= LOOK_BUDGET * self._size:
            kind, after = closing
            if kind == "tag":
                return True
            if self._first_tag is None:  # (inside an element, its closing tag says when the call is done)
                if after:
                    return True
                self._ends_a_call = True
        return grown and (self._depth <= 0 or unsettled >= 2 * self._looked)

    def _announce(self) -> list[StreamEvent]:
        """A model-native call whose name is written: announced, with its argument text so far."""
        text = self._unsettled()
        self._sought = len(text)
        found = self._starts(text, 0)  # type: ignore[misc]
        if found is None:
            return []
        start, name, arguments_at = found
        self._head = (start, len(self._done), arguments_at)
        return [StreamEvent("call_started", len(self._done), name=name),
                StreamEvent("arguments", len(self._done), text=text[arguments_at:])]

    def _look(self) -> list[StreamEvent]:
        """Read the unsettled text once more; announce the calls in it that are complete."""
        region = self._unsettled()
        self._looked = len(region)
        self._read += len(region)
        masked = remove_reasoning(region, blank=True)[0]
        extraction = _extract(self._protocol, masked, self._toolset, self._look_limits)
        spans = self._complete(region, [(raw, raw.span) for raw in extraction.calls if raw.span is not None])
        if not spans:
            return []
        events: list[StreamEvent] = []
        for raw, _ in spans:
            call = self._grade(raw)
            events += self._started_and_done(len(self._done), raw.name, call)
            self._done.append(call)
            self._head = None
        self._settle(max(span[1] for _, span in spans))
        self._looked = self._sought = 0
        return events

    def _complete(self, region: str, spans: list[_Span]) -> list[_Span]:
        """The calls read in ``region`` that are complete: all, in a format whose calls a marker closes, when text
        follows the last; else those before the last, which may go on in the next chunk (done when the next
        call begins).  A call that ends where the text does is taking in what arrives, not closed — unless the
        text ends with the closing tag of the element it began with — and is looked at once more, with the next
        chunk."""
        if not spans:
            self._ends_a_call, self._taking_in = False, -1
            return []
        (last_start, last_end), closes = spans[-1][1], self._protocol.closes_calls
        closed_at_end = (closes and last_end == len(region) and self._first_tag is not None
                         and region.endswith(self._first_tag))
        at_end = closes and last_end == len(region) and not closed_at_end
        self._ends_a_call = at_end and last_start != self._taking_in
        self._taking_in = last_start if at_end else -1
        if closes and (last_end < len(region) or closed_at_end):
            return spans
        return [(raw, span) for raw, span in spans if span[1] <= last_start]

    def _started_and_done(self, number: int, name: str, call: ParsedCall) -> list[StreamEvent]:
        """A call done, announced as started first unless it was (by its name, before its arguments)."""
        done = StreamEvent("call_done", number, name=name, call=call)
        return [done] if self._head is not None and self._head[1] == number else \
            [StreamEvent("call_started", number, name=name), done]

    def _grade(self, raw: RawCall) -> ParsedCall:
        options = self._options
        return _grade(raw, self._toolset, rule=options.get("rule", "main"), text_values=self._protocol.info.text_values,
                      lenient="", validate=options.get("validate", True), profile=options.get("profile", "sdk"),
                      rules=options.get("rules"), limits=self._limits, policy=options.get("policy"))

    def close(self) -> ParsedReply:
        """The whole reply, read: ``parse_reply`` of everything fed, with the stream's options.

        The calls the events had not announced as done by then (a call that only the end of the reply
        closes, in a format whose calls no marker closes) are announced in :attr:`final_events`
        (accepted calls, then refused ones).
        """
        self._closed = True
        text = "".join(self._settled_text + self._chunks)
        reply = parse_reply(text, self._toolset, self._protocol_id, limits=self._limits, **self._options)
        unannounced = list(reply.calls) + list(reply.rejected)
        for call in self._done:  # (equal calls are equal dicts: one announced call takes one of them)
            for index, other in enumerate(unannounced):
                if _same_call(call, other):
                    del unannounced[index]
                    break
        events = [event for number, call in enumerate(unannounced, start=len(self._done))
                  for event in self._started_and_done(number, call.name, call)]
        self.final_events: list[StreamEvent] = events
        return reply


def _same_call(call: ParsedCall, other: ParsedCall) -> bool:
    """``call == other`` — their dicts equal — read from what they were made of: both were graded by the
    same stream's toolset and options, so the same call and arguments give the same normalised arguments
    and verdict.  (Comparing the dicts would compute and compare those for every pair.)"""
    return (call.name == other.name and call.resolved_name == other.resolved_name and call.valid == other.valid
            and call.accepted == other.accepted and call.repairs == other.repairs and call.reason == other.reason
            and call.arguments == other.arguments)


def parse_stream(tools: Any, protocol_id: str, *, limits: Limits = DEFAULT_LIMITS, **options: Any) -> ReplyStream:
    """A reader of one reply in ``protocol_id`` as it streams in (``options``: those of ``parse_reply``).

    >>> from toolform_rules import sample_toolset
    >>> stream = parse_stream(sample_toolset(), "json_object")
    >>> for piece in ['Sure. {"name": "legal_draft_v3", ', '"arguments": {"counterparty": "Acme", ',
    ...               '"value": 5, "term_months": 12}}', ' Anything else?']:
    ...     for event in stream.feed(piece):
    ...         print(event.kind, event.name, event.call.valid if event.call else "")
    call_started legal_draft_v3 
    call_done legal_draft_v3 True
    >>> stream.close().calls[0].arguments["value"]
    5
    """
    return ReplyStream(tools, protocol_id, limits=limits, **options)


__all__ = ["ReplyStream", "StreamEvent", "parse_stream"]
