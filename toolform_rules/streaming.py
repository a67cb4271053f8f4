"""Reading a reply while it streams in: events as its calls appear, then the same result as ``parse_reply``.

``parse_stream(tools, protocol)`` returns a :class:`ReplyStream`.  ``feed(chunk)`` takes the
next piece of the reply and returns what it revealed — a call started (with its name), its
argument text as it arrives, a call complete (graded and validated, as ``parse_reply``
grades it) — and ``close()`` returns the :class:`~toolform_rules.replies.ParsedReply` of the
whole text, equal to ``parse_reply(whole_text, ...)`` with the same options, however the
reply was cut into chunks.

A feed does little: it keeps the chunk and, when the chunk holds a character that can end a
call (a closing bracket, tag or line) and the text not yet settled has grown by a quarter
since the last look, reads that text once more.  So the text is read a bounded number of
times in all (each look reads at least a quarter more than the last), whatever the
chunking: feeding a reply one character at a time costs a small multiple of one
``parse_reply`` (``bench/stream.py``).

A call is announced as done once text follows it that it did not take — in a format whose
calls a marker closes (JSON, tags, Python calls: ``Protocol.closes_calls``) — else once the
next call begins; what only the end of the reply completes is announced by ``close()``, in
``final_events``, and so are calls only ``lenient_fallback`` finds.  A model-native format
also announces a call as soon as its name is written, and then its argument text as it arrives.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import attrs

from .limits import DEFAULT_LIMITS, Limits
from .protocols import get_protocol
from .protocols.base import RawCall
from .replies import ParsedCall, ParsedReply, _extract, _grade, parse_reply, remove_reasoning
from .schema.loaders import load_tools
from .schema.toolset import Toolset

#: what may end a call in any protocol: a closing bracket, the end of a tag, the end of a line
_ENDS_A_CALL = frozenset("}])>\n")
#: what may end a model-native format's call head (its name): markers and line ends too
_ENDS_A_HEAD = frozenset("}])>\n:|\"=")
#: the share by which the unsettled text must have grown before it is read again
GROWTH = 4
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
        self._chunks = [region[length:]]
        self._settled += length

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
        # (a feed of one character is the common case and the costly one: set tests, no regex, and out early)
        ends = not _ENDS_A_CALL.isdisjoint(chunk)
        if not ends and not self._ends_a_call and (head is not None or self._starts is None or
                                                    _ENDS_A_HEAD.isdisjoint(chunk)):
            return [StreamEvent("arguments", head[1], "", chunk)] if head is not None else []
        events = [StreamEvent("arguments", head[1], "", chunk)] if head is not None else []
        if self._ends_a_call or ends:
            unsettled = self._size - self._settled
            if self._ends_a_call or unsettled >= self._looked + max(1, self._looked // GROWTH) and (
                    not self._protocol.closes_calls or self._may_close(unsettled)):
                events += self._look()
        if head is None and self._starts is not None and self._head is None and \
                not _ENDS_A_HEAD.isdisjoint(chunk):
            unsettled = self._size - self._settled
            if unsettled >= self._sought + max(1, self._sought // GROWTH):
                events += self._announce()
        return events

    def _may_close(self, unsettled: int) -> bool:
        """Whether the unsettled text may hold a complete call: its braces balance (a look at an unclosed
        object costs several times one at a closed one, in the readers' lenient paths) — or it has doubled
        since the last look, so that braces in prose do not stop the looks for good."""
        region = self._unsettled()
        return region.count("{") <= region.count("}") or unsettled >= 2 * self._looked

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
        masked = remove_reasoning(region, blank=True)[0]
        extraction = _extract(self._protocol, masked, self._toolset, self._look_limits)
        spans = [(raw, raw.span) for raw in extraction.calls if raw.span is not None]
        if not spans:
            self._ends_a_call, self._taking_in = False, -1
            return []
        (last_start, last_end), closes = spans[-1][1], self._protocol.closes_calls
        # once per call: a call that again ends where the text does is taking in what arrives, not closed
        at_end = closes and last_end == len(region)
        self._ends_a_call = at_end and last_start != self._taking_in
        self._taking_in = last_start if at_end else -1
        if not (closes and last_end < len(region)):
            # a call whose end no marker closes may go on in the next chunk: done when the next call begins
            spans = [(raw, span) for raw, span in spans if span[1] <= last_start]
        if not spans:
            return []
        complete = [raw for raw, _ in spans]
        events: list[StreamEvent] = []
        for raw in complete:
            call, number = self._grade(raw), len(self._done)
            if self._head is None or self._head[1] != number:  # (else announced, its text sent by feed)
                events.append(StreamEvent("call_started", number, name=raw.name))
            events.append(StreamEvent("call_done", number, name=raw.name, call=call))
            self._done.append(call)
            self._head = None
        self._settle(max(span[1] for _, span in spans))
        self._looked = self._sought = 0
        return events

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
            if call in unannounced:
                unannounced.remove(call)
        events: list[StreamEvent] = []
        for index, call in enumerate(unannounced, start=len(self._done)):
            if self._head is None or self._head[1] != index:  # (a call already announced as started is not again)
                events.append(StreamEvent("call_started", index, name=call.name))
            events.append(StreamEvent("call_done", index, name=call.name, call=call))
        self.final_events: list[StreamEvent] = events
        return reply


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
