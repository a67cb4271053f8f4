"""Shared pieces of the markup, config and natural-language protocols.

``yaml_call``, ``toml_call``, ``xml_call``, ``xml_generic_call``, ``function_tags``,
``react``, ``nl_intent`` and ``nl_intent_structured`` read different syntaxes but share
a few chores, kept here so each is written once:

* writing a value as text (:func:`text_of`) for the formats whose values are untyped text;
* XML character escaping both ways (:func:`xml_escape`, :func:`xml_text`,
  :func:`xml_unescape`, :func:`xml_value`), with white space at the ends of a value written
  as character references so that a round trip keeps it;
* finding Markdown code fences (:func:`fenced_blocks`) in one linear scan;
* turning a parsed YAML or TOML document into calls (:func:`calls_from_document`);
* line and column of an offset (:func:`line_column`; :class:`LineCounter` for many, in one
  pass), and a grammar failure moved to where its text stood in the reply (:func:`shifted`);
* the note on a malformed reply (:func:`grammar_stop_note`): the tag formats read every reply
  in one linear pass and run the grammar only where that pass stops, on a bounded stretch
  (``Limits.reply_grammar_chars``) that ends in the same failure;
* finding the framed sentences of the NL protocols (:func:`sentence_spans`) with one pattern
  run in C over the reply.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, Callable, Iterator, TypeVar

from ..limits import DEFAULT_LIMITS, Limits
from .base import Extraction, internal_error
from ..grammar import GrammarFailure, Transformer, load_parser
from .json_object import ARGUMENT_KEYS, NAME_KEYS


_Parse = TypeVar("_Parse", bound=Callable[..., Extraction])


def never_raises(parse: _Parse) -> _Parse:
    """``parse`` that turns any error it did not expect into a note (a protocol's parse never raises).

    >>> from toolform_rules.protocols import get_protocol
    >>> never_raises(lambda self, text, tools=None, limits=None: 1 / 0)(get_protocol("react"), "x").notes
    ('react: internal error while reading the reply (ZeroDivisionError)',)
    """
    @functools.wraps(parse)
    def guarded(self: Any, text: Any, tools: Any = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        try:
            return parse(self, text, tools, limits)
        except Exception as err:  # a bug must not take the reply down; the note names it
            return internal_error(self.info.id, err)
    return guarded  # type: ignore[return-value]


def text_of(value: Any) -> str:
    """``value`` as a text-value format writes it: strings as they are, everything else as JSON.

    >>> [text_of(v) for v in ("a b", True, None, 12, 1e-07, 1200.5, {"k": [1, "x"]})]
    ['a b', 'true', 'null', '12', '1e-07', '1200.5', '{"k": [1, "x"]}']
    """
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# XML text

_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_XML_ATTRIBUTE_ESCAPES = {**_XML_ESCAPES, '"': "&quot;"}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def xml_escape(text: str, *, attribute: bool = False) -> str:
    """``text`` with ``&``, ``<`` and ``>`` (and ``"`` in an attribute) written as entities.

    >>> xml_escape('a < b & "c"'), xml_escape('say "hi"', attribute=True)
    ('a &lt; b &amp; "c"', 'say &quot;hi&quot;')
    """
    table = _XML_ATTRIBUTE_ESCAPES if attribute else _XML_ESCAPES
    if not any(ch in text for ch in table):
        return text
    return "".join(table.get(ch, ch) for ch in text)


def xml_text(text: str) -> str:
    """Element content for ``text``: escaped, with white space at either end as character references.

    Readers strip the white space a model puts around a value; written as references it
    survives, so ``"  a  "`` comes back as it went in.

    >>> xml_text("  a & b\\n")
    '&#32;&#32;a &amp; b&#10;'
    """
    body = xml_escape(text)
    if not body or not (body[0].isspace() or body[-1].isspace()):
        return body
    start = 0
    while start < len(body) and body[start].isspace():
        start += 1
    end = len(body)
    while end > start and body[end - 1].isspace():
        end -= 1
    lead = "".join(f"&#{ord(ch)};" for ch in body[:start])
    trail = "".join(f"&#{ord(ch)};" for ch in body[end:])
    return lead + body[start:end] + trail


def _entity(name: str) -> str | None:
    if name in _NAMED_ENTITIES:
        return _NAMED_ENTITIES[name]
    if name.startswith("#"):
        digits = name[1:]
        try:
            code = int(digits[1:], 16) if digits[:1] in ("x", "X") else int(digits, 10)
        except ValueError:
            return None
        if 0 <= code <= 0x10FFFF:
            return chr(code)
    return None


def xml_unescape(text: str) -> str:
    """``text`` with entity and character references decoded and CDATA sections unwrapped.

    A reference that is not one (``&``, ``&nbsp;``) stays as written.

    >>> xml_unescape("a &lt;b&gt; &amp;amp; &#65;&#x42; & &nbsp; <![CDATA[<raw> &amp;]]>")
    'a <b> &amp; AB & &nbsp; <raw> &amp;'
    """
    if "&" not in text and "<![" not in text:
        return text
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        amp = text.find("&", i)
        cdata = text.find("<![CDATA[", i)
        if amp < 0 and cdata < 0:
            out.append(text[i:])
            break
        if cdata >= 0 and (amp < 0 or cdata < amp):
            out.append(text[i:cdata])
            close = text.find("]]>", cdata + 9)
            if close < 0:  # an unterminated section: its text, as written
                out.append(text[cdata:])
                break
            out.append(text[cdata + 9:close])
            i = close + 3
            continue
        out.append(text[i:amp])
        semi = text.find(";", amp + 1, amp + 12)
        decoded = _entity(text[amp + 1:semi]) if semi > 0 else None
        if decoded is None:
            out.append("&")
            i = amp + 1
        else:
            out.append(decoded)
            i = semi + 1
    return "".join(out)


_SPACE_CHAR = re.compile(r"\s")
_ATTRIBUTES = re.compile(r"""([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>/=`]+))""")


def tag_attribute(tag: str, attribute: str) -> str | None:
    """The value of ``attribute`` in an opening tag (references decoded), or ``None``.

    >>> tag_attribute('<invoke name="a&amp;b">', "name"), tag_attribute("<p type='s' name=x/>", "name")
    ('a&b', 'x')
    """
    if "=" not in tag:  # no attribute at all
        return None
    space = _SPACE_CHAR.search(tag)
    for found in _ATTRIBUTES.finditer(tag, space.start() if space is not None else len(tag)):
        if found.group(1).lower() == attribute:
            value = found.group(2) if found.group(2) is not None else (
                found.group(3) if found.group(3) is not None else found.group(4))
            return xml_unescape(value)
    return None


def xml_value(raw: str) -> str:
    """An element's content as a value: white space at the ends dropped, then references decoded.

    >>> xml_value("\\n   &#32;x &amp; y\\n  ")
    ' x & y'
    """
    return xml_unescape(raw.strip())


# ---------------------------------------------------------------------------------------------
# replies

_CLOSING_FENCE = re.compile(r"\n[^\S\n]*```")


def fenced_blocks(text: str, limit: int = 100) -> list[tuple[int, int, str]]:
    r"""The Markdown code fences of ``text``: ``(start, end, language)`` of each body, in order.

    A fence still open at the end of the text ends there; a closing fence is the first ````` ``` `````
    with nothing but white space before it on its line (found in C, so a long line of backticks costs
    one pass).

    >>> text = "a\n```yaml\nx: 1\n```\nb\n```\ny\n```"
    >>> [(text[s:e], lang) for s, e, lang in fenced_blocks(text)]
    [('x: 1\n', 'yaml'), ('y\n', '')]
    """
    blocks: list[tuple[int, int, str]] = []
    i = 0
    n = len(text)
    while len(blocks) < limit:
        open_at = text.find("```", i)
        if open_at < 0:
            break
        line_end = text.find("\n", open_at)
        if line_end < 0:
            break
        language = text[open_at + 3:line_end].strip()
        body_start = line_end + 1
        closing = _CLOSING_FENCE.search(text, line_end)  # (the body starts a line: its line break is line_end)
        if closing is None:
            blocks.append((body_start, n, language))
            break
        close = closing.end() - 3
        line_start = closing.start() + 1
        blocks.append((body_start, line_start, language))
        after = text.find("\n", close)
        i = n if after < 0 else after + 1
    return blocks


class SentenceParts(Transformer):
    """Base of the NL grammars' transformers: a sentence as (tool, arguments, period, trail).

    Each grammar's ``argument`` rule is its own; the sentence around it is the same.
    """

    def start(self, items: list) -> tuple[str, list, bool, str]:
        tool = ""
        arguments = []
        period = False
        trail = ""
        for item in items:
            if isinstance(item, tuple):
                arguments.append(item)
            elif item.type == "TOOL":
                tool = str(item)
            elif item.type == "END":
                period = True
            elif item.type == "TRAIL":
                trail = str(item)
        return tool, arguments, period, trail


class TaggedReply(Transformer):
    """Transformer base of the tag grammars: the prose around the tags is kept (``start``), and a
    wrapper element's stray text and missing close become notes (``wrapper``)."""

    notes: list[tuple[int, str]]
    prose: list[str]

    def wrapper(self, items: list, closing: str, unclosed: str) -> None:
        """Note the text between a wrapper's tags, and a wrapper whose last token is not ``closing``."""
        for item in items[1:]:
            if getattr(item, "type", None) == "TEXT" and not item.isspace():
                self.notes.append((item.start_pos or 0, "text between the tags was ignored: " + excerpt(item)))
        if getattr(items[-1], "type", None) != closing:
            self.notes.append((items[0].start_pos, unclosed))

    def start(self, items: list) -> Any:
        for item in items:
            if isinstance(item, str):  # a token: prose outside every tag
                self.prose.append(str(item))
        return self


def sentence_value(grammar: str, text: str, pos: int) -> tuple[str, int]:
    """The value that starts at ``pos`` in a sentence of ``grammar`` (its ``VALUE`` terminal, by the
    plain-value fast path when it applies), and where it ends; ``("", pos)`` when there is none."""
    quick = plain_value(grammar, text, pos)
    if quick is not None:
        return quick
    value = grammar_terminals(grammar)["VALUE"].match(text, pos)
    return (value.group(0), value.end()) if value is not None else ("", pos)


def sentence_end(grammar: str, text: str, pos: int) -> tuple[bool, str] | None:
    """After a sentence's last value: whether a period ends it and the words after it (its ``END``
    and ``TRAIL`` terminals); ``None`` when anything else is left."""
    terminals = grammar_terminals(grammar)
    period = False
    end = terminals["END"].match(text, pos)
    if end is not None:
        period, pos = True, end.end()
    trail = ""
    rest = terminals["TRAIL"].match(text, pos)
    if rest is not None:
        trail, pos = rest.group(0), rest.end()
    return (period, trail) if pos == len(text) else None


class Stopped:
    """Where a fast reader found what its grammar cannot read: the offending token (``at`` to ``end``, as
    ``found``), and ``resumes``: points before it where the grammar can be started over and stop there
    the same way (best first: the grammar is in the state it has there on the whole reply)."""

    __slots__ = ("at", "end", "resumes", "found")

    def __init__(self, at: int, end: int, resumes: tuple[int, ...], found: str) -> None:
        self.at, self.end, self.resumes, self.found = at, end, resumes, found

    def __repr__(self) -> str:
        return f"Stopped({self.at}, {self.end}, {self.resumes}, {self.found!r})"


def top_level_resumes(before: tuple[bool, int, int] | None, opened: int) -> tuple[int, ...]:
    """Where the grammar of a tag format can start over to stop where it stops on the whole reply, for
    an element (or stray token) at ``opened`` after the top-level item ``before`` (is it text, start,
    end; ``None``: nothing before it): on the last character of text before it (the grammar then has
    read an item, as on the whole reply), at the element before it, and — the grammar's place the
    same, its list of what it expected perhaps not — at ``opened`` itself."""
    if before is None:
        return (0,)
    is_text, start, end = before
    return (end - 1, opened) if is_text else (start, opened)


def grammar_stop_note(text: str, stop: Stopped, read: Callable[[str], Any], *, limit: int, what: str,
                      too_deep: str = "the reply is nested too deeply to read") -> Extraction:
    r"""No calls, and a note saying where the grammar stopped on a reply its fast reader found malformed.

    The grammar (``read``, which raises :class:`GrammarFailure`) reads the reply up to the end of the
    offending token — the same failure as on the whole reply — when that is at most ``limit``
    characters; else the stretch from the first of ``stop.resumes`` that fits (the grammar stops
    there the same way, its place moved into the reply); when none does, the note is the fast
    reader's own.

    >>> def read(body):
    ...     raise GrammarFailure("g", 1, body.index("!") + 1, ("'x'",), "'!'")
    >>> grammar_stop_note("ab!", Stopped(2, 3, (0,), "!"), read, limit=10, what="the tags").notes
    ("the tags could not be read: line 1, column 3: expected 'x', found '!'",)
    >>> grammar_stop_note("a" * 20 + "\nb!", Stopped(22, 23, (21,), "!"), read, limit=10, what="the tags").notes
    ("the tags could not be read: line 2, column 2: expected 'x', found '!'",)
    >>> grammar_stop_note("a" * 20 + "!", Stopped(20, 21, (0,), "!"), read, limit=10, what="the tags").notes[0][:54]
    "the tags could not be read: line 1, column 21: '!' can"
    """
    starts = (0,) if stop.end <= limit else tuple(at for at in stop.resumes if stop.end - at <= limit)
    if starts:
        start = starts[0]
        try:
            read(text[start:stop.end])
        except GrammarFailure as failure:
            if start:
                failure = shifted(failure, text, start)
            return Extraction((), (f"{what} could not be read: {failure.describe()}",), False)
        except RecursionError:
            return Extraction((), (too_deep,), False)
    line, column = line_column(text, stop.at)
    return Extraction((), (f"{what} could not be read: line {line}, column {column}: {excerpt(stop.found)} cannot "
                           f"stand there (the grammar, which says what can, reads at most {limit} characters of a "
                           "reply)",), False)


def excerpt(text: str, limit: int = 40) -> str:
    """A bit of ignored text as a note quotes it: white space folded, shortened, in quotes."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


SentenceRead = tuple[Any, Any, Any, str]  # (tool, arguments, period, words after the sentence)


def read_sentences(text: str, spans: list[tuple[int, int]], quick: Callable[[str], SentenceRead | None],
                   by_grammar: Callable[[str], SentenceRead],
                   build: Callable[[str, SentenceRead], tuple[str, dict[str, Any], list[str]]], *,
                   sentence_limit: int, fallback_limit: int, grammar_chars: int | None = None
                   ) -> tuple[list[Any], list[str], bool]:
    """The calls of the sentences at ``spans``: each read by ``quick`` or, failing that, by the
    grammar (at most ``fallback_limit`` sentences and ``grammar_chars`` characters in all: the grammar
    says where a sentence breaks, at a cost), then made a call by ``build`` (tool, arguments, notes).
    Returns the calls, the notes (each with its line and column) and whether every sentence kept to
    the frame.
    """
    from .base import RawCall

    calls: list[Any] = []
    notes: list[str] = []
    clean = True
    fallbacks = 0
    left = grammar_chars
    for start, end in spans:
        sentence = text[start:end]
        where = Position(text, start)
        if len(sentence) > sentence_limit:
            notes.append(f"{where}: a sentence longer than {sentence_limit} characters was not read")
            clean = False
            continue
        read = quick(sentence)
        if read is None:
            fallbacks += 1
            if fallbacks > fallback_limit:
                if fallbacks == fallback_limit + 1:
                    notes.append(f"{where}: this and later sentences that do not keep to the frame were not read")
                clean = False
                continue
            if left is not None:
                if len(sentence) > left:
                    notes.append(f"{where}: a sentence that does not keep to the frame was not read (the grammar "
                                 f"reads at most {grammar_chars} characters of a reply)")
                    clean = False
                    continue
                left -= len(sentence)
            try:
                read = by_grammar(sentence)
            except GrammarFailure as failure:
                line, column = line_column(text, start)
                notes.append(f"the sentence could not be read: line {line}, column "
                             f"{column + failure.column - 1}: expected {' or '.join(failure.expected[:6])}"
                             f"{', found ' + failure.found if failure.found else ''}")
                clean = False
                continue
        if read[3].strip():
            notes.append(f"{where}: words after the sentence were ignored: {excerpt(read[3])}")
            clean = False
        tool, arguments, more = build(sentence, read)
        notes.extend(f"{where}: {note}" for note in more)
        clean = clean and not more
        calls.append(RawCall(tool, arguments, (start, end)))
    return calls, notes, clean


@functools.cache
def grammar_terminals(grammar: str) -> dict[str, re.Pattern[str]]:
    """The terminals of ``grammars/<grammar>.lark`` as compiled regular expressions, by name.

    A fast path that reads with the grammar's own terminals keeps one definition of the format.

    >>> grammar_terminals("xml_call")["INVOKE_CLOSE"].fullmatch("</invoke>") is not None
    True
    """
    parser = load_parser(grammar)
    return {t.name: re.compile(t.pattern.to_regexp()) for t in parser.terminals}


_RUN = re.compile(r'(?:[^\s,.;:"=]|\.(?=[^\s.]))+(?:[ \t](?:[^\s,.;:"=]|\.(?=[^\s.]))+)*')


@functools.cache
def _value_stop(grammar: str) -> re.Pattern[str]:
    """Where a plain VALUE of ``grammar`` stops: the lookahead inside its terminal, taken from the grammar."""
    source = grammar_terminals(grammar)["VALUE"].pattern
    start = source.rindex("(?:(?!")
    end = source.rindex(")[^\r\n])+")  # (Lark writes the escapes as the characters)
    return re.compile(source[start + 6:end])


def plain_value(grammar: str, text: str, pos: int) -> tuple[str, int] | None:
    """A plain value at ``pos`` read without the per-character lookahead of the grammar's VALUE terminal.

    A run of words (no comma, period before a space, colon, equals sign or quote) followed by a
    place where the terminal stops is exactly what the terminal takes, unless it holds a word
    that could start a stop ("and", "set to"); then, and otherwise, ``None``: use the terminal.

    >>> plain_value("nl_intent", "a: Acme Ltd, b: 2.", 3), plain_value("nl_intent", "a: 1.5, b", 3)
    (('Acme Ltd', 11), None)
    """
    found = _RUN.match(text, pos)
    if found is None:
        return None
    end = found.end()
    if end != len(text) and not _value_stop(grammar).match(text, end):
        return None
    run = found.group(0)
    if " " in run:
        lowered = run.lower()
        if " and " in lowered or " to " in lowered:
            return None
    return run, end


def line_column(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of ``text[index]``.

    >>> line_column("ab\\ncd", 4)
    (2, 2)
    """
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


class LineCounter:
    r"""Line and column of offsets in ``text``, counted on from the offset asked before: offsets asked in
    order cost one pass over the text, however many there are.

    >>> where = LineCounter("ab\ncd\nef")
    >>> where(4), where(7), where(1)
    ((2, 2), (3, 2), (1, 2))
    """

    __slots__ = ("text", "index", "line", "start")

    def __init__(self, text: str) -> None:
        self.text, self.index, self.line, self.start = text, 0, 1, 0

    def __call__(self, index: int) -> tuple[int, int]:
        text = self.text
        if index >= self.index:
            self.line += text.count("\n", self.index, index)
            nl = text.rfind("\n", self.index, index)
            if nl >= 0:
                self.start = nl + 1
        else:
            self.line -= text.count("\n", index, self.index)
            self.start = text.rfind("\n", 0, index) + 1
        self.index = index
        return self.line, index - self.start + 1


class Position:
    r"""``line L, column C`` of an offset, worked out only when it is written into a note.

    >>> "{}: here".format(Position("ab\ncd", 4))
    'line 2, column 2: here'
    """

    __slots__ = ("text", "index")

    def __init__(self, text: str, index: int) -> None:
        self.text, self.index = text, index

    def __str__(self) -> str:
        return "line {}, column {}".format(*line_column(self.text, self.index))

    def __format__(self, spec: str) -> str:
        return str(self)


_LIST_NUMBER_ONLY = re.compile(r"\d{1,3}[.)]")


_WORD = re.compile(r"\S+")


def leftover_outside(text: str, spans: list[tuple[int, int]]) -> bool:
    r"""Whether ``text`` holds anything besides ``spans``, white space and list numbers ("1.", "2)").

    >>> leftover_outside("1. a\n2) b", [(3, 4), (8, 9)]), leftover_outside("x a", [(2, 3)])
    (False, True)
    """
    previous = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        if start > previous:
            for piece in _WORD.finditer(text, previous, start):  # the first word that is no list number answers
                if not _LIST_NUMBER_ONLY.fullmatch(piece.group(0)):
                    return True
        previous = max(previous, end)
    return False


def shifted(failure: GrammarFailure, text: str, offset: int, lines: int = 0,
            line_of: Callable[[int], tuple[int, int]] | None = None) -> GrammarFailure:
    """``failure`` (on ``text[offset:]``, which had ``lines`` extra lines put before it) placed in ``text``;
    ``line_of`` (a :class:`LineCounter` of ``text``) counts the lines when many failures are placed."""
    line, column = line_of(offset) if line_of is not None else line_column(text, offset)
    at_line = failure.line - lines
    if at_line <= 1:
        return GrammarFailure(failure.grammar, line, column + max(failure.column, 1) - 1, failure.expected,
                              failure.found)
    return GrammarFailure(failure.grammar, line + at_line - 1, failure.column, failure.expected, failure.found)


_IN_STRING = re.compile(r'(?:[^"\\]++|\\[\s\S])*+')


def in_string_after(text: str, start: int = 0, end: int | None = None) -> bool:
    r"""Whether ``text[start:end]`` leaves a double-quoted (JSON) string open.

    >>> in_string_after('a = "x, use f." and'), in_string_after('a = "x \\" use')
    (False, True)
    """
    return QuoteTracker(text, start).inside_at(len(text) if end is None else end)


class QuoteTracker:
    r"""Whether a double-quoted (JSON) string is open at a point of ``text``, counting from ``start``;
    asked at points that only move forward, it reads each character once (in C).

    >>> quotes = QuoteTracker('a "b \\" c" d "e', 0)
    >>> [quotes.inside_at(at) for at in (2, 4, 9, 11, 15)]
    [False, True, True, False, True]
    """

    __slots__ = ("text", "origin", "at", "inside")

    def __init__(self, text: str, start: int) -> None:
        self.text, self.origin, self.at, self.inside = text, start, start, False

    def copy(self) -> "QuoteTracker":
        other = QuoteTracker(self.text, self.origin)
        other.at, other.inside = self.at, self.inside
        return other

    def inside_at(self, stop: int) -> bool:
        """Whether ``text[start:stop]`` leaves a string open (``stop`` never less than the last asked)."""
        text = self.text
        while True:
            if not self.inside:
                quote = text.find('"', self.at, stop)
                if quote < 0:
                    self.at = max(self.at, stop)
                    return False
                self.inside, self.at = True, quote + 1
                continue
            if self.at >= stop:
                return True
            close = _IN_STRING.match(text, self.at, stop).end()  # type: ignore[union-attr]
            if close >= stop or text[close] != '"':  # still open (or an escape cut at ``stop``)
                self.at = close
                return True
            self.inside, self.at = False, close + 1

    def closing(self) -> int:
        """Where the string open at the last point asked closes (its quote), or the text's end."""
        close = _IN_STRING.match(self.text, self.at).end()  # type: ignore[union-attr]
        return close


@functools.cache
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(map(re.escape, words)) + ")[ \t]+")


def find_words(text: str, start: int, end: int, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where each of ``words`` (lower case, a whole word followed by spaces) stands in ``text[start:end]``.

    Returns (where the word starts, where the spaces after it end), in order.

    >>> find_words("Use f. I will call g; reuse x", 0, 29, ("use", "call"))
    [(0, 4), (14, 19)]
    """
    low = _lower(text[start:end])
    found = []
    for match in _words_pattern(words).finditer(low):
        at = match.start()
        if at == 0 or not (low[at - 1].isalnum() or low[at - 1] in "_'"):
            found.append((start + at, start + match.end()))
    return found


def _lower(text: str) -> str:
    """``text`` in lower case, one character for one: the one letter whose lower case is two characters
    (İ, "i" and a combining dot) is the dot alone (a word it stands in is no verb; a verb after it is one)."""
    return text.replace("\u0130", "\u0307").lower() if "\u0130" in text else text.lower()


def lines_with_words(text: str, words: tuple[str, ...]) -> Iterator[tuple[int, int, list[tuple[int, int]]]]:
    r"""Each line of ``text`` on which :func:`find_words` finds ``words``: (its start, its end, what it finds),
    in order — found in one pass over the whole reply, so a line without them costs nothing.

    >>> list(lines_with_words("a\nI will USE f\nx\nreuse y; call g", ("use", "call")))
    [(2, 14, [(9, 13)]), (17, 32, [(26, 31)])]
    """
    low = _lower(text)
    line_start = line_end = -1
    found: list[tuple[int, int]] = []
    for match in _words_pattern(words).finditer(low):
        at = match.start()
        if at > line_end:  # on a later line
            if found:
                yield line_start, line_end, found
                found = []
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            if line_end < 0:
                line_end = len(text)
        if at == line_start or not (low[at - 1].isalnum() or low[at - 1] in "_'"):
            found.append((at, match.end()))
    if found:
        yield line_start, line_end, found


_THE = re.compile(r"(?i)the[ \t]+")
_SPACES = re.compile(r"\s*")


@functools.cache
def _openings(grammar: str, words: tuple[str, ...]) -> re.Pattern[str]:
    """The openings of ``grammar``'s sentences as :func:`sentence_spans` takes them, in one pattern run on
    the lower-cased reply: one of ``words`` as :func:`find_words` finds it (not after a letter, digit,
    ``_`` or ``'``), "the" and a tool name (the grammar's TOOL, taken whole), then WITH, END or the
    line's end — all but the verb and its spaces looked at ahead, so that the next search starts where
    :func:`find_words`' does.  Group ``after``: where the verb's spaces end.  (Lower-casing changes none
    of what the grammar's patterns match — TOOL's letters are both cases, the rest ignores case — but
    for the two letters :func:`_openings_in` leaves to the line-by-line reading.)"""
    t = grammar_terminals(grammar)
    verbs = "|".join(f"{word}(?<![\\w']{word})" for word in words)  # the word first: found as a literal, fast
    return re.compile(rf"(?:{verbs})[ \t]++(?P<after>)(?=(?>(?:(?i:the)[ \t]+)?)(?>{t['TOOL'].pattern})"
                      rf"(?:[^\S\n]*(?:\n|\Z)|{t['WITH'].pattern}|{t['END'].pattern}))")


def _openings_in(text: str, grammar: str, words: tuple[str, ...]) -> Iterator[tuple[int, int, int]]:
    """Each opening (see :func:`_openings`), in order: (its line's start, its line's end, its verb), found
    as one goes (a caller that has enough stops the search)."""
    if "\u0130" in text or "\u212a" in text:  # letters whose lower case TOOL's pattern reads otherwise (İ, the
        # Kelvin sign): each verb is looked at in Python, TOOL on the reply as written
        terminals = grammar_terminals(grammar)
        for line_start, line_end, found in lines_with_words(text, words):
            for verb, after in found:
                the = _THE.match(text, after, line_end)
                tool = terminals["TOOL"].match(text, the.end() if the else after, line_end)
                if tool is None:
                    continue
                rest = tool.end()
                if (rest >= line_end or _SPACES.match(text, rest, line_end).end() == line_end  # type: ignore[union-attr]
                        or terminals["WITH"].match(text, rest, line_end) or terminals["END"].match(text, rest, line_end)):
                    yield line_start, line_end, verb
        return
    line_start = line_end = -1
    for match in _openings(grammar, words).finditer(_lower(text)):
        verb = match.start()
        if verb > line_end:  # on a later line
            line_start = text.rfind("\n", max(line_end, 0), verb) + 1 or max(line_end + 1, 0)
            line_end = text.find("\n", verb)
            if line_end < 0:
                line_end = len(text)
        yield line_start, line_end, verb


def sentence_spans(text: str, words: tuple[str, ...], frame_prefix: re.Pattern[str], grammar: str, *, limit: int,
                   repeated_opening: bool = False) -> list[tuple[int, int]]:
    """Where the framed sentences of ``grammar`` are: from each opening (one of ``words``, with what
    ``frame_prefix`` takes before it) to the next opening or the line's end; at most ``limit``.

    An opening counts when a tool name (the grammar's ``TOOL``, "the" allowed before it) follows
    its verb and then ``WITH``, ``END`` or the line's end; not when it stands inside a quoted value
    of the sentence before it, nor (``repeated_opening``) within 4 characters of the one before
    ("I will use" found again at its verb).  One pass over the reply: the openings are found by one
    pattern in C, each is looked at once (those inside a quoted value at once with it), and the
    quotes of a line are read once.
    """
    spans: list[tuple[int, int]] = []
    starts: list[int] = []
    line_start, line_end = 0, -1
    quotes: QuoteTracker | None = None
    skip = -1  # openings up to here stand inside a quoted value

    def close_line() -> None:
        for i, start in enumerate(starts[:limit - len(spans)]):
            end = starts[i + 1] if i + 1 < len(starts) else line_end
            while end > start and text[end - 1].isspace():
                end -= 1
            spans.append((start, end))

    for begin, end_of_line, verb in _openings_in(text, grammar, words):
        if end_of_line != line_end:  # a new line
            close_line()
            if len(spans) >= limit:
                return spans
            line_start, line_end = begin, end_of_line
            starts, quotes, skip = [], None, -1
        if verb <= skip:
            continue
        head = text[max(line_start, verb - 24):verb]
        prefix = frame_prefix.search(head)
        start = verb - (len(prefix.group(0)) if prefix else 0)
        if start > line_start and (text[start - 1].isalnum() or text[start - 1] in "_'"):
            continue
        if starts:
            origin = starts[-1]
            if repeated_opening and start < origin + 4:
                continue
            if start > origin:  # inside a quoted value of the sentence before?
                if quotes is None or quotes.origin != origin:
                    quotes = QuoteTracker(text, origin)
                quotes.inside_at(max(origin, verb - 24))  # where every later opening starts, at the earliest
                probe = quotes.copy()
                if probe.inside_at(start):
                    skip = probe.closing()  # and so is every opening up to where the value's quote closes
                    continue
        starts.append(start)
        if len(starts) > limit - len(spans):  # one more than fits: it ends the last sentence that does
            close_line()
            return spans
    close_line()
    return spans


def calls_from_document(document: Any, call_keys: tuple[str, ...] = ("call", "calls", "tool_call", "tool_calls")
                        ) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls a parsed YAML/TOML document holds, or ``None`` when it names no tool.

    A document is one call (a mapping with a name and arguments), a list of calls, or a
    mapping holding them under ``call``/``calls``/``tool_call(s)``.

    >>> calls_from_document({"call": [{"name": "f", "arguments": {"a": 1}}, {"tool": "g"}]})
    [('f', {'a': 1}), ('g', {})]
    >>> calls_from_document({"Name": "f", "Arguments": {"A": 1}})
    [('f', {'A': 1})]
    """
    if isinstance(document, dict):
        if not any(k in document for k in NAME_KEYS + call_keys + ("function",)):
            lowered = {k.lower(): v for k, v in document.items() if isinstance(k, str)}
            if any(k in lowered for k in NAME_KEYS + call_keys):  # Name: / Arguments: as some models write them
                document = lowered
        for key in call_keys:
            if key in document and not any(isinstance(document.get(k), str) for k in NAME_KEYS):
                inner = calls_from_document(document[key], ())
                if inner is not None:
                    return inner
        function = document.get("function")
        if isinstance(function, dict) and "name" in function:
            return calls_from_document(function, ())
        name = next((document[k] for k in NAME_KEYS if isinstance(document.get(k), str)), None)
        if name is None:
            return None
        arguments: Any = next((document[k] for k in ARGUMENT_KEYS if k in document), {})
        if isinstance(arguments, str) and arguments.strip()[:1] in ("{", "["):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                pass
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            arguments = {"_raw": arguments}
        return [(name, arguments)]
    if isinstance(document, list):
        calls: list[tuple[str, dict[str, Any]]] = []
        for item in document:
            found = calls_from_document(item, call_keys)
            if found:
                calls.extend(found)
        return calls or None
    return None


__all__ = ["LineCounter", "Position", "QuoteTracker", "Stopped", "calls_from_document", "fenced_blocks", "find_words",
           "grammar_stop_note", "grammar_terminals", "in_string_after", "leftover_outside", "line_column",
           "lines_with_words", "never_raises", "plain_value", "sentence_spans", "shifted", "tag_attribute", "text_of",
           "top_level_resumes", "xml_escape", "xml_text", "xml_unescape", "xml_value"]
