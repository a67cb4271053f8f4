"""The markup family: what the markup, config and natural-language protocols do alike.

Values as text and XML's escaping; the reply around the calls (code fences, places as line and column);
the note on where a grammar stops (:func:`grammar_stop_note`); the tag formats (:class:`TagFormat`: one
linear pass over the tags that follows the grammar, the grammar run where that pass stops); the documents
of YAML and TOML (:func:`calls_from_document`); the framed sentences (:class:`SentenceFormat`: found by one
pattern, read with the grammar's own terminals, the Lark parser where that reading stops).  Each format
module holds only what is its own.  Every ``read`` is guarded by :meth:`Protocol.parse <.base.Protocol.parse>`.
"""

from __future__ import annotations

import functools
import json
import math
import re
from operator import itemgetter
from typing import Any, Callable, ClassVar, NamedTuple, Sequence

from ....calls import ToolCall
from ....grammar import GrammarFailure, Transformer, load_parser, parse
from ....limits import DEFAULT_LIMITS, Limits
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, RawCall
from ..duplicates import Repeats, where as twice_at
from ..json_family.json_object import ARGUMENT_KEYS, NAME_KEYS
from ..reading import MAX_NOTES, GrammarBudget
from ..values import _MISSING, json_value, loads_lenient

# --- values as text


def scalar_text(value: Any, *, null: str = "null", nan: str = "NaN", inf: str = "Infinity") -> str | None:
    """A boolean, ``None`` or number as a format writes it; ``None`` for anything else.

    >>> [scalar_text(v, inf=".inf") for v in (True, None, 12, 1e-07, float("-inf"), "x")]
    ['true', 'null', '12', '1e-07', '-.inf', None]
    """
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: null}[value]
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, float):
        return None
    if math.isnan(value):
        return nan
    return repr(value) if not math.isinf(value) else inf if value > 0 else "-" + inf


def text_of(value: Any) -> str:
    """``value`` as a text-value format writes it: strings as they are, everything else as JSON.

    >>> [text_of(v) for v in ("a b", True, None, 12, 1e-07, {"k": [1, "x"]})]
    ['a b', 'true', 'null', '12', '1e-07', '{"k": [1, "x"]}']
    """
    if isinstance(value, str):
        return value
    scalar = scalar_text(value)
    return scalar if scalar is not None else json.dumps(value, ensure_ascii=False)


def flow_text(value: Any, string: Callable[[str], str], key: Callable[[str], str], binder: str, **spellings: str
              ) -> str:
    """``value`` in an inline syntax: strings by ``string``, ``{key<binder>value, ...}``, ``[item, ...]``, the
    rest by :func:`scalar_text` with the format's ``spellings``.

    >>> flow_text({"a b": [1.5, None, "x"]}, json.dumps, json.dumps, " = ", null="nil")
    '{"a b" = [1.5, nil, "x"]}'
    """
    if isinstance(value, str):
        return string(value)
    if isinstance(value, dict):
        return "{" + ", ".join(key(str(k)) + binder + flow_text(v, string, key, binder, **spellings)
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow_text(v, string, key, binder, **spellings) for v in value) + "]"
    scalar = scalar_text(value, **spellings)
    return scalar if scalar is not None else string(str(value))


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    table = dict(pairs)
    if len(table) != len(pairs):
        raise ValueError("a key is given twice")
    return table


#: strict JSON for the fast readers of YAML and TOML: no NaN or Infinity, no key given twice (their grammars
#: note those)
STRICT_JSON = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)


def unescape(body: str, escapes: dict[str, str], widths: dict[str, int], *, line_ending: bool = False) -> str:
    r"""``body`` with its backslash escapes decoded: ``escapes``, a character after the backslash and its text;
    ``widths``, a letter and how many hex digits follow it; ``line_ending``: a backslash that ends a line takes
    the line break and the white space after it (TOML).  Any other escape is the character itself.

    >>> unescape('a\\"b\\x41\\u00e9\\q\\', {'"': '"'}, {"x": 2, "u": 4})
    'a"bAéq\\'
    """
    if "\\" not in body:
        return body
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        slash = body.find("\\", i)
        if slash < 0 or slash + 1 == n:
            out.append(body[i:])
            break
        out.append(body[i:slash])
        i, after = slash, body[slash + 1]
        width = widths.get(after)
        if width is not None:
            try:
                out.append(chr(int(body[i + 2:i + 2 + width], 16)))
                i += 2 + width
                continue
            except ValueError:
                pass
        elif line_ending and after in " \t\r\n":
            j = i + 1
            while j < n and body[j] in " \t":
                j += 1
            if j < n and body[j] in "\r\n":
                while j < n and body[j] in " \t\r\n":
                    j += 1
                i = j
                continue
        out.append(escapes.get(after, after))
        i += 2
    return "".join(out)


def unquoted(raw: str) -> str:
    """A value written as a JSON string, unquoted; any other text as it is.

    >>> unquoted('"a \\\\"b\\\\""'), unquoted('"open'), unquoted("plain")
    ('a "b"', '"open', 'plain')
    """
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(value, str):
            return value
    return raw


def lenient_value(text: str, budget: GrammarBudget) -> Any:
    """A JSON value as models write it (single quotes, Python's words, trailing commas): by ``json`` when it is
    strict JSON; else by the grammar (raising :class:`GrammarFailure`), whose reading ``budget`` pays for.

    >>> lenient_value('{"a": true}', GrammarBudget(0)), lenient_value("{'a': True,}", GrammarBudget(100))
    ({'a': True}, {'a': True})
    """
    value = json_value(text)
    if value is not _MISSING:
        return value
    budget.spend("json_object", text)
    return loads_lenient(text, max_grammar_bytes=len(text))


# --- XML text

_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_XML_ATTRIBUTE_ESCAPES = {**_XML_ESCAPES, '"': "&quot;"}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def xml_escape(text: str, *, attribute: bool = False) -> str:
    """``text`` with ``&``, ``<`` and ``>`` (and ``"`` in an attribute) written as entities.

    >>> xml_escape('a < b & "c"'), xml_escape('say "hi"', attribute=True)
    ('a &lt; b &amp; "c"', 'say &quot;hi&quot;')
    """
    table = _XML_ATTRIBUTE_ESCAPES if attribute else _XML_ESCAPES
    return "".join(table.get(ch, ch) for ch in text) if any(ch in text for ch in table) else text


def xml_text(text: str) -> str:
    """Element content for ``text``: escaped, white space at either end as character references (readers strip
    the white space around a value; written so, it survives).

    >>> xml_text("  a & b\\n")
    '&#32;&#32;a &amp; b&#10;'
    """
    body = xml_escape(text)
    start = len(body) - len(body.lstrip())
    end = max(start, len(body.rstrip()))
    if start == 0 and end == len(body):
        return body
    return "".join(f"&#{ord(ch)};" for ch in body[:start]) + body[start:end] + "".join(
        f"&#{ord(ch)};" for ch in body[end:])


def _entity(name: str) -> str | None:
    if name in _NAMED_ENTITIES or not name.startswith("#"):
        return _NAMED_ENTITIES.get(name)
    try:
        code = int(name[2:], 16) if name[1:2] in ("x", "X") else int(name[1:], 10)
    except ValueError:
        return None
    return chr(code) if 0 <= code <= 0x10FFFF else None


def xml_unescape(text: str) -> str:
    """``text`` with entity and character references decoded and CDATA sections unwrapped; a reference that is
    not one (``&``, ``&nbsp;``) and an unterminated section stay as written.

    >>> xml_unescape("a &lt;b&gt; &amp;amp; &#65;&#x42; & &nbsp; <![CDATA[<raw> &amp;]]>")
    'a <b> &amp; AB & &nbsp; <raw> &amp;'
    """
    if "&" not in text and "<![" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        amp, cdata = text.find("&", i), text.find("<![CDATA[", i)
        if amp < 0 and cdata < 0:
            out.append(text[i:])
            break
        if cdata >= 0 and (amp < 0 or cdata < amp):
            close = text.find("]]>", cdata + 9)
            out += [text[i:cdata], text[cdata:] if close < 0 else text[cdata + 9:close]]
            if close < 0:  # an unterminated section: its text, as written
                break
            i = close + 3
            continue
        semi = text.find(";", amp + 1, amp + 12)
        decoded = _entity(text[amp + 1:semi]) if semi > 0 else None
        out += [text[i:amp], "&" if decoded is None else decoded]
        i = amp + 1 if decoded is None else semi + 1
    return "".join(out)


_SPACE_CHAR = re.compile(r"\s")
_ATTRIBUTES = re.compile(r"""([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>/=`]+))""")


def tag_attribute(tag: str, attribute: str) -> str | None:
    """The value of ``attribute`` in an opening tag (references decoded), or ``None``.

    >>> tag_attribute('<invoke name="a&amp;b">', "name"), tag_attribute("<p type='s' name=x/>", "name")
    ('a&b', 'x')
    """
    if "=" not in tag:
        return None
    space = _SPACE_CHAR.search(tag)
    for found in _ATTRIBUTES.finditer(tag, space.start() if space is not None else len(tag)):
        if found.group(1).lower() == attribute:
            return xml_unescape(next(value for value in found.groups()[1:] if value is not None))
    return None


def xml_value(raw: str) -> str:
    """An element's content as a value: white space at the ends dropped, then references decoded.

    >>> xml_value("\\n   &#32;x &amp; y\\n  ")
    ' x & y'
    """
    return xml_unescape(raw.strip())


def end_outside_cdata(text: str, pos: int, stop: re.Pattern[str]) -> int:
    """Where a value's text from ``pos`` ends: at the first match of ``stop`` (or the end) outside every CDATA
    section.  A section ends at its ``]]>``; one that does not before the next ``<![CDATA[`` (or at all) is text
    as written — so a section is looked for no further than the next opening: one pass over any number.

    >>> text = 'a<![CDATA[</p>]]>b</p> <![CDATA[c</p> <![CDATA[ <![CDATA[</p>]]></p>'
    >>> [text[at:end_outside_cdata(text, at, re.compile("</p>"))] for at in (0, 23, 38)]
    ['a<![CDATA[</p>]]>b', '<![CDATA[c', '<![CDATA[ <![CDATA[</p>]]>']
    """
    found = stop.search(text, pos)
    at = found.start() if found is not None else len(text)
    while True:
        opening = text.find("<![CDATA[", pos, at)
        if opening < 0:
            return at
        after = text.find("<![CDATA[", opening + 9)
        close = text.find("]]>", opening + 9, after if after >= 0 else len(text))
        pos = close + 3 if close >= 0 else opening + 1  # (text as written: a later opening may still be one)
        if close >= 0 and pos > at:  # the section holds the stop: the next one is after it
            found = stop.search(text, pos)
            at = found.start() if found is not None else len(text)


# --- the reply around the calls

_CLOSING_FENCE = re.compile(r"\n[^\S\n]*```")
_FENCE_MARKS = re.compile(r"(?:```[\w.+-]*)?(?:```)?")


def fenced_blocks(text: str, limit: int = 100) -> list[tuple[int, int, str]]:
    r"""The Markdown code fences of ``text``: ``(start, end, language)`` of each body, in order.  A fence still
    open at the end of the text ends there; a closing fence has only white space before it on its line.

    >>> text = "a\n```yaml\nx: 1\n```\nb\n```\ny\n```"
    >>> [(text[s:e], lang) for s, e, lang in fenced_blocks(text)]
    [('x: 1\n', 'yaml'), ('y\n', '')]
    """
    blocks: list[tuple[int, int, str]] = []
    i, n = 0, len(text)
    while len(blocks) < limit:
        open_at = text.find("```", i)
        line_end = text.find("\n", open_at) if open_at >= 0 else -1
        if line_end < 0:
            break
        closing = _CLOSING_FENCE.search(text, line_end)
        end = n if closing is None else closing.start() + 1
        blocks.append((line_end + 1, end, text[open_at + 3:line_end].strip()))
        after = text.find("\n", closing.end()) if closing is not None else -1
        if after < 0:
            break
        i = after + 1
    return blocks


def only_fences(outside: str) -> bool:
    """Whether ``outside`` — the reply around its calls — is only white space and the marks of a code fence.

    >>> only_fences(" \\n"), only_fences("```xml\\n \\n```"), only_fences("Sure:")
    (True, True, False)
    """
    if not outside or outside.isspace():
        return True
    return "`" in outside and _FENCE_MARKS.fullmatch("".join(outside.split())) is not None


def excerpt(text: str, limit: int = 40) -> str:
    """A bit of ignored text as a note quotes it: white space folded, shortened, in quotes.

    >>> excerpt("a  b\\n c" + "x" * 50, limit=8)
    "'a b cxxx...'"
    """
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


def line_column(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of ``text[index]``.

    >>> line_column("ab\\ncd", 4)
    (2, 2)
    """
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


class LineCounter:
    r"""Line and column of offsets in ``text``, counted on from the offset asked before: offsets asked in order
    cost one pass over the text.

    >>> where = LineCounter("ab\ncd\nef")
    >>> where(4), where(7), where(1)
    ((2, 2), (3, 2), (1, 2))
    """

    __slots__ = ("text", "index", "line", "start")

    def __init__(self, text: str) -> None:
        self.text, self.index, self.line, self.start = text, 0, 1, 0

    def __call__(self, index: int) -> tuple[int, int]:
        if index >= self.index:
            self.line += self.text.count("\n", self.index, index)
            self.start = max(self.start, self.text.rfind("\n", self.index, index) + 1)
        else:
            self.line -= self.text.count("\n", index, self.index)
            self.start = self.text.rfind("\n", 0, index) + 1
        self.index = index
        return self.line, index - self.start + 1


def located_notes(text: str, notes: list[tuple[int, str]], limit: int = MAX_NOTES) -> tuple[str, ...]:
    r"""``notes`` — (offset, sentence) pairs — in the order of their places in ``text``, each as ``line L,
    column C: sentence``; past the first ``limit``, one note counts the rest.

    >>> located_notes("a\nbc", [(3, "two"), (0, "one")])
    ('line 1, column 1: one', 'line 2, column 2: two')
    >>> located_notes("abc", [(2, "z"), (0, "x"), (1, "y")], limit=1)
    ('line 1, column 1: x', '2 more notes like these were left out')
    """
    notes.sort(key=itemgetter(0))
    where = LineCounter(text)
    kept = tuple("line %d, column %d: %s" % (*where(at), what) for at, what in notes[:limit])
    return kept if len(notes) <= limit else (*kept, f"{len(notes) - limit} more notes like these were left out")


def shifted(failure: GrammarFailure, text: str, offset: int, line_of: Callable[[int], tuple[int, int]] | None = None
            ) -> GrammarFailure:
    """``failure`` (on ``text[offset:]``) placed in ``text``; ``line_of`` (a :class:`LineCounter` of ``text``)
    counts the lines when many failures are placed.

    >>> shifted(GrammarFailure("g", 2, 3, (), "x"), "ab\\ncd", 4).describe()
    'line 3, column 3: x'
    """
    line, column = line_of(offset) if line_of is not None else line_column(text, offset)
    if failure.line <= 1:
        return GrammarFailure(failure.grammar, line, column + max(failure.column, 1) - 1, failure.expected,
                              failure.found)
    return GrammarFailure(failure.grammar, line + failure.line - 1, failure.column, failure.expected, failure.found)


# --- where a grammar stops on a malformed reply

class Stopped(NamedTuple):
    """Where a fast reader found what its grammar cannot read: the offending token (``at`` to ``end``, as
    ``found``), and points before it where the grammar can start over and stop there the same way."""

    at: int
    end: int
    resumes: tuple[int, ...]
    found: str


def top_level_resumes(before: tuple[bool, int, int] | None, opened: int) -> tuple[int, ...]:
    """Where a grammar whose reply is a row of items can start over to stop as on the whole reply, at the item
    (or stray token) at ``opened`` after the item ``before`` (is it text, start, end; ``None``: none): on the
    last character of text before it, at the element before it, or — what it expects there perhaps not the
    same — at ``opened``.

    >>> top_level_resumes(None, 5), top_level_resumes((True, 0, 4), 5), top_level_resumes((False, 2, 4), 5)
    ((0,), (3, 5), (2, 5))
    """
    if before is None:
        return (0,)
    is_text, start, end = before
    return (end - 1, opened) if is_text else (start, opened)


def grammar_stop_note(text: str, stop: Stopped, read: Callable[[str], Any], *, limit: int, what: str,
                      too_deep: str = "the reply is nested too deeply to read") -> Extraction:
    r"""No calls, and a note saying where the grammar stopped on a reply its fast reader found malformed: the
    grammar (``read``, which raises :class:`GrammarFailure`) reads the reply up to the end of the offending token
    when that is at most ``limit`` characters, else from the first of ``stop.resumes`` that fits; when none
    does, the note is the fast reader's own.

    >>> def read(body):
    ...     raise GrammarFailure("g", 1, body.index("!") + 1, ("'x'",), "'!'")
    >>> grammar_stop_note("a" * 20 + "\nb!", Stopped(22, 23, (21,), "!"), read, limit=10, what="the tags").notes
    ("the tags could not be read: line 2, column 2: expected 'x', found '!'",)
    >>> grammar_stop_note("a" * 20 + "!", Stopped(20, 21, (0,), "!"), read, limit=10, what="the tags").notes[0][:54]
    "the tags could not be read: line 1, column 21: '!' can"
    """
    starts = (0,) if stop.end <= limit else tuple(at for at in stop.resumes if stop.end - at <= limit)
    if starts:
        try:
            read(text[starts[0]:stop.end])
        except GrammarFailure as failure:
            return Extraction((), (f"{what} could not be read: {shifted(failure, text, starts[0]).describe()}",),
                              False)
        except RecursionError:
            return Extraction((), (too_deep,), False)
    line, column = line_column(text, stop.at)
    return Extraction((), (f"{what} could not be read: line {line}, column {column}: {excerpt(stop.found)} cannot "
                           f"stand there (the grammar, which says what can, reads at most {limit} characters of a "
                           "reply)",), False)


# --- the tag formats

WRAPPER, CALL, PART = 0, 1, 2


class Element:
    """An element of a tag format's reply: its level (a :data:`WRAPPER` of calls, a :data:`CALL`, a :data:`PART`
    of one), its word (lower case), its opening tag, where it starts and ends, whether it is closed; a wrapper's
    or a call's elements and the text between them (text, where); a part's text (``None``: none), and where."""

    __slots__ = ("level", "word", "tag", "start", "end", "closed", "parts", "texts", "raw", "raw_at")

    def __init__(self, level: int, word: str, tag: str, start: int, end: int) -> None:
        self.level, self.word, self.tag, self.start, self.end, self.closed = level, word, tag, start, end, False
        self.parts: list[Element] = []
        self.texts: list[tuple[str, int]] = []
        self.raw: str | None = None
        self.raw_at = end


class TaggedReply(Transformer):
    """What a tag format's reply holds — the prose outside every element, the wrappers, the calls, the closing
    wrapper tags that close nothing — from the grammar's tree (this transformer of its rules ``wrapper``,
    ``call``, ``part`` and ``prose``) or from :meth:`scan`, one pass over the tags that follows the grammar.

    A format sets ``tags`` (groups: the tag, a closing tag's word, an opening tag's word, a stray — what no
    terminal takes), ``levels`` (each word's level), ``cdata`` (a part's text holds CDATA sections whole) and
    ``loose_close`` (a closing wrapper tag with no wrapper open is read, not a stop).  A missing closing tag is
    no stop: an opening tag ends what it cannot stand in.
    """

    tags: ClassVar[re.Pattern[str]]
    levels: ClassVar[dict[str, int]]
    cdata = loose_close = False

    def __init__(self) -> None:
        super().__init__()
        self.outside: list[str] = []
        self.calls: list[Element] = []
        self.wrappers: list[Element] = []
        self.loose: list[int] = []

    def _element(self, items: list, level: int) -> Element:
        found = self.tags.match(str(items[0]))
        word = (found.group(3) or found.group(2)).lower() if found is not None else ""
        element = Element(level, word, str(items[0]), items[0].start_pos, items[0].end_pos)
        for item in items[1:]:
            if isinstance(item, Element):
                element.parts.append(item)
            elif item.type not in ("TEXT", "VALUE"):
                element.closed = True
            elif level == PART:
                element.raw, element.raw_at = str(item), item.start_pos
            else:
                element.texts.append((str(item), item.start_pos))
            element.end = item.end if isinstance(item, Element) else item.end_pos
        return element

    def part(self, items: list) -> Element:
        return self._element(items, PART)

    def prose(self, items: list) -> Any:
        return items[0]

    def call(self, items: list) -> Element:
        self.calls.append(self._element(items, CALL))
        return self.calls[-1]

    def wrapper(self, items: list) -> Element:
        self.wrappers.append(self._element(items, WRAPPER))
        return self.wrappers[-1]

    def start(self, items: list) -> TaggedReply:
        self.outside = [str(item) for item in items if getattr(item, "type", "") == "TEXT"]
        self.loose = [item.start_pos for item in items if getattr(item, "type", "TEXT") != "TEXT"]
        return self

    def scan(self, text: str) -> TaggedReply | Stopped:
        """What the grammar's tree holds, read in one pass — or where the grammar stops."""
        return _TagScan(self, text).run()

    def extraction(self, calls: list[RawCall], notes: list[tuple[int, str]], text: str, none_found: str
                   ) -> Extraction:
        """The calls and ``notes`` (placed by offset; ``none_found`` when there are neither); compliant when
        nothing was noted and the prose is only white space and fence marks."""
        words = located_notes(text, notes)
        compliant = bool(calls) and not words and only_fences("".join(self.outside))
        return Extraction(tuple(calls), words or (() if calls else (none_found,)), compliant)


class _TagScan:
    """One pass over a tag format's reply, split at its tags in C: the open element of each level, and the
    top-level items before (for :func:`top_level_resumes`).  Tokens follow each other: an element that the next
    tag ends ends where that tag starts."""

    def __init__(self, reply: TaggedReply, text: str) -> None:
        self.reply, self.text = reply, text
        self.open: list[Element | None] = [None, None, None]
        self.last: tuple[bool, int, int] | None = None  # the last top-level item: is it text, start, end
        self.before: tuple[bool, int, int] | None = None  # the one before the open top-level element

    def run(self) -> TaggedReply | Stopped:
        parts = self.reply.tags.split(self.text)  # text, (tag, close, open, stray), text, ...
        cdata, count, add_text, opening, close = self.reply.cdata, len(parts), self.add_text, self.opening, self.close
        i = pos = 0
        while True:
            piece = parts[i]
            if piece and cdata and "<![CDATA[" in piece and self.in_value():
                end, i = self.past_sections(parts, i, pos)
                piece = self.text[pos:end]
            if piece:
                add_text(piece, pos)
                pos += len(piece)
            if i + 1 == count:
                self.end(WRAPPER, pos)
                return self.reply
            tag, closing, opened = parts[i + 1:i + 4]
            stopped = opening(opened.lower(), tag, pos) if opened else close(closing.lower(), tag, pos) if closing \
                else self.stop(pos, tag)
            if stopped is not None:
                return stopped
            pos += len(tag)
            i += 5

    def in_value(self) -> bool:
        part = self.open[PART]
        return part is not None and part.raw is None

    def past_sections(self, parts: list[str], i: int, pos: int) -> tuple[int, int]:
        """Where a part's text from ``pos`` ends, CDATA sections in it text whole (the tags in them too), and the
        index of the split's text before the tag there."""
        end = end_outside_cdata(self.text, pos, self.reply.tags)
        at = pos + len(parts[i])
        while at < end:
            at += len(parts[i + 1]) + len(parts[i + 5])
            i += 5
        return end, i

    def add_text(self, piece: str, pos: int) -> None:
        wrapper, call, part = self.open
        if part is not None and part.raw is None:
            part.raw, part.raw_at = piece, pos
        elif call is not None:
            self.end(PART, pos)
            call.texts.append((piece, pos))
        elif wrapper is not None:
            wrapper.texts.append((piece, pos))
        else:
            self.reply.outside.append(piece)
            self.last = (True, pos, pos + len(piece))

    def opening(self, word: str, tag: str, at: int) -> Stopped | None:
        level = self.reply.levels[word]
        parent = self.open[level - 1] if level != WRAPPER else None
        if level == PART and parent is None:
            return self.stop(at, tag)
        self.end(level, at)
        if parent is None:  # a top-level element
            self.before = self.last
        element = self.open[level] = Element(level, word, tag, at, at + len(tag))
        if parent is not None:
            parent.parts.append(element)
        if level != PART:
            (self.reply.wrappers if level == WRAPPER else self.reply.calls).append(element)
        return None

    def close(self, word: str, tag: str, at: int) -> Stopped | None:
        level = self.reply.levels[word]
        element = self.open[level]
        if element is None and level == WRAPPER:
            self.end(CALL, at)  # the open call stands at the top: it ends
            if self.reply.loose_close:
                self.reply.loose.append(at)
                self.last = (False, at, at + len(tag))
                return None
        if element is None or element.word != word:
            return self.stop(at, tag)
        self.end(level + 1, at)
        element.closed = True
        self.end(level, at + len(tag))
        return None

    def end(self, level: int, at: int) -> None:
        """The open elements of ``level`` and below end at ``at``."""
        for depth in range(PART, level - 1, -1):
            element = self.open[depth]
            if element is not None:
                self.open[depth], element.end = None, at
                if depth == WRAPPER or (depth == CALL and self.open[WRAPPER] is None):
                    self.last = (False, element.start, at)

    def stop(self, at: int, tag: str) -> Stopped:
        wrapper, call = self.open[WRAPPER], self.open[CALL]
        opened = wrapper.start if wrapper is not None else call.start if call is not None else at
        context = self.before if (wrapper is not None or call is not None) else self.last
        return Stopped(at, at + len(tag), top_level_resumes(context, opened), tag)


class TagFormat(Protocol):
    """The skeleton of the scanned tag formats (``function_tags``, ``xml_call``): the reply read by
    :meth:`TaggedReply.scan`; where that stops, the grammar reads a bounded stretch that ends in the same
    failure (``Limits.reply_grammar_chars``) to word the note.  A format sets its ``tree`` and
    :meth:`extraction`: the calls of what the reply holds, and notes on what the model got wrong."""

    closes_calls = True
    markup = "the XML"  # what the notes call the reply's markup
    tree: type[TaggedReply]

    def grammar_tree(self, text: str) -> TaggedReply:
        """The reply's structure as the grammar reads it (raises :class:`GrammarFailure` where it stops)."""
        reply: TaggedReply = self.tree().transform(parse(self.info.id, text))
        return reply

    def by_grammar(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        """What the grammar alone reads of ``text``: the specification the linear pass is held to."""
        try:
            reply = self.grammar_tree(text)
        except GrammarFailure as failure:
            return Extraction((), (f"{self.markup} could not be read: {failure.describe()}",), False)
        return self.extraction(reply, text, GrammarBudget.of(limits))

    def extraction(self, reply: Any, text: str, budget: GrammarBudget) -> Extraction:
        """The calls of a reply's structure and notes (``budget``: what a grammar may still read of values)."""
        raise NotImplementedError

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        scanned = self.tree().scan(text)
        if isinstance(scanned, Stopped):
            return grammar_stop_note(text, scanned, self.grammar_tree, limit=limits.reply_grammar_chars,
                                     what=self.markup, too_deep=self.markup + " is nested too deeply to read")
        try:
            return self.extraction(scanned, text, GrammarBudget.of(limits))
        except RecursionError:  # values nested deeper than Python's stack
            return Extraction((), (self.markup + " is nested too deeply to read",), False)


# --- the documents (YAML, TOML)

_CALL_KEYS = ("call", "calls", "tool_call", "tool_calls")


def calls_from_document(document: Any, call_keys: tuple[str, ...] = _CALL_KEYS
                        ) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls a parsed YAML/TOML document holds, or ``None`` when it names no tool: one call (a mapping with
    a name and arguments), a list of calls, or a mapping holding them under ``call``/``calls``/``tool_call(s)``.

    >>> calls_from_document({"call": [{"name": "f", "arguments": {"a": 1}}, {"tool": "g"}]})
    [('f', {'a': 1}), ('g', {})]
    >>> calls_from_document({"Name": "f", "Arguments": {"A": 1}})
    [('f', {'A': 1})]
    """
    if isinstance(document, list):
        return [call for item in document for call in calls_from_document(item, call_keys) or ()] or None
    if not isinstance(document, dict):
        return None
    document = _keys_as_named(document, call_keys)
    name = next((document[k] for k in NAME_KEYS if isinstance(document.get(k), str)), None)
    for key in call_keys if name is None else ():
        inner = calls_from_document(document[key], ()) if key in document else None
        if inner is not None:
            return inner
    function = document.get("function")
    if isinstance(function, dict) and "name" in function:
        return calls_from_document(function, ())
    return None if name is None else [(name, _arguments_of(document))]


def _keys_as_named(document: dict, call_keys: tuple[str, ...]) -> dict:
    """``document`` with its keys in lower case when only so they name a call (``Name:``, ``Arguments:``)."""
    if any(k in document for k in NAME_KEYS + call_keys + ("function",)):
        return document
    lowered = {k.lower(): v for k, v in document.items() if isinstance(k, str)}
    return lowered if any(k in lowered for k in NAME_KEYS + call_keys) else document


def _arguments_of(call: dict) -> dict[str, Any]:
    arguments: Any = next((call[k] for k in ARGUMENT_KEYS if k in call), {})
    if isinstance(arguments, str) and arguments.strip()[:1] in ("{", "["):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            pass
    arguments = {} if arguments is None else arguments
    return arguments if isinstance(arguments, dict) else {"_raw": arguments}


#: what a fast reader of a document gives for a document it does not read as the grammar does
UNREAD: Any = object()


def read_document(text: str, start: int, end: int, readers: Sequence[Callable[[str], Any]],
                  by_grammar: Callable[[str], tuple[Any, list[str], Repeats]], budget: GrammarBudget, grammar: str,
                  what: str) -> tuple[Any, list[str], Repeats | None] | str:
    """The document at ``text[start:end]``: read by the first of ``readers`` that takes it (they refuse a key
    given twice), else by the grammar (``by_grammar``: the document, notes on it, and its mappings that give a
    key twice) within the reply's ``budget`` — or the note on why it could not be read.

    >>> read_document("x: {", 0, 4, [lambda body: UNREAD], lambda body: 1 / 0, GrammarBudget(10), "g", "the YAML")
    'the YAML could not be read: line 1, column 1: a candidate of 4 characters that the fast readers could not read, longer than the grammar reads in one reply (10, Limits.reply_grammar_chars)'
    """
    body = text[start:end]
    for reader in readers:
        document = reader(body)
        if document is not UNREAD:
            return document, [], None
    try:
        budget.spend(grammar, body)
        return by_grammar(body)
    except GrammarFailure as failure:
        return f"{what} could not be read: {shifted(failure, text, start).describe()}"
    except RecursionError:
        return f"{what} is nested too deeply to read"


# --- the framed sentences (nl_intent, nl_intent_structured)

_LIST_NUMBER_ONLY = re.compile(r"\d{1,3}[.)]")
_WORD = re.compile(r"\S+")


def leftover_outside(text: str, spans: list[tuple[int, int]]) -> bool:
    r"""Whether ``text`` holds anything besides ``spans``, white space and list numbers ("1.", "2)").

    >>> leftover_outside("1. a\n2) b", [(3, 4), (8, 9)]), leftover_outside("x a", [(2, 3)])
    (False, True)
    """
    previous = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        if any(not _LIST_NUMBER_ONLY.fullmatch(word.group(0)) for word in _WORD.finditer(text, previous, start)):
            return True
        previous = max(previous, end)
    return False


@functools.cache
def grammar_terminals(grammar: str) -> dict[str, re.Pattern[str]]:
    """The terminals of ``grammars/<grammar>.lark`` as compiled regular expressions, by name (a fast path that
    reads with the grammar's own terminals keeps one definition of the format).

    >>> grammar_terminals("xml_call")["INVOKE_CLOSE"].fullmatch("</invoke>") is not None
    True
    """
    return {t.name: re.compile(t.pattern.to_regexp()) for t in load_parser(grammar).terminals}


_IN_STRING = re.compile(r'(?:[^"\\]++|\\[\s\S])*+')


def in_string_after(text: str, start: int = 0, end: int | None = None) -> bool:
    r"""Whether ``text[start:end]`` leaves a double-quoted (JSON) string open.

    >>> in_string_after('a = "x, use f." and'), in_string_after('a = "x \\" use')
    (False, True)
    """
    return QuoteTracker(text, start).inside_at(len(text) if end is None else end)


class QuoteTracker:
    r"""Whether a double-quoted (JSON) string is open at a point of ``text``, counting from ``start``; asked at
    points that only move forward, it reads each character once (in C).

    >>> quotes = QuoteTracker('a "b \\" c" d "e', 0)
    >>> [quotes.inside_at(at) for at in (2, 4, 9, 11, 15)]
    [False, True, True, False, True]
    """

    __slots__ = ("text", "origin", "at", "inside")

    def __init__(self, text: str, start: int, at: int | None = None, inside: bool = False) -> None:
        self.text, self.origin, self.at, self.inside = text, start, start if at is None else at, inside

    def copy(self) -> QuoteTracker:
        return QuoteTracker(self.text, self.origin, self.at, self.inside)

    def inside_at(self, stop: int) -> bool:
        """Whether ``text[start:stop]`` leaves a string open (``stop`` never less than the last asked)."""
        while True:
            if not self.inside:
                quote = self.text.find('"', self.at, stop)
                if quote < 0:
                    self.at = max(self.at, stop)
                    return False
                self.inside, self.at = True, quote + 1
            if self.at >= stop:
                return True
            close = _IN_STRING.match(self.text, self.at, stop).end()  # type: ignore[union-attr]
            if close >= stop or self.text[close] != '"':  # still open (or an escape cut at ``stop``)
                self.at = close
                return True
            self.inside, self.at = False, close + 1

    def closing(self) -> int:
        """Where the string open at the last point asked closes (its quote), or the text's end."""
        return _IN_STRING.match(self.text, self.at).end()  # type: ignore[union-attr]


def find_words(text: str, start: int, end: int, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where each of ``words`` (lower case, a whole word followed by spaces) stands in ``text[start:end]``: (where
    it starts, where the spaces after it end), in order.

    >>> find_words("Use f. I will call g; reuse x", 0, 29, ("use", "call"))
    [(0, 4), (14, 19)]
    """
    low = text[start:end].replace("\u0130", "\u0307").lower()  # (one character for one: İ lowers to two)
    return [(start + found.start(), start + found.end()) for found in _words_pattern(words).finditer(low)
            if found.start() == 0 or not (low[found.start() - 1].isalnum() or low[found.start() - 1] in "_'")]


@functools.cache
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(map(re.escape, words)) + ")[ \t]+")


@functools.cache
def _openings(grammar: str, words: tuple[str, ...]) -> re.Pattern[str]:
    """The openings of ``grammar``'s sentences, in one pattern: one of ``words`` as :func:`find_words` finds it
    (either case, the Kelvin sign a ``k``; not after a letter, digit, ``_`` or ``'`` but for an ``İ``, which
    lower-cases to none), "the" and a tool name (the grammar's TOOL), then WITH, END or the line's end — all
    but the verb and its spaces looked at ahead."""
    t = grammar_terminals(grammar)
    letters = {"k": "kK\u212a"}
    verbs = "|".join("".join(f"[{letters.get(c, c + c.upper())}]" for c in word) for word in words)
    first = "".join(sorted({letters.get(word[0], word[0] + word[0].upper()) for word in words}))  # (a quick skip)
    return re.compile(rf"(?=[{first}])(?:(?<![\w'])|(?<=\u0130))(?:{verbs})[ \t]++(?=(?>(?:(?i:the)[ \t]+)?)"
                      rf"(?>{t['TOOL'].pattern})(?:[^\S\n]*(?:\n|\Z)|{t['WITH'].pattern}|{t['END'].pattern}))")


class _Line:
    """The openings found so far on the line of ``text`` that holds ``verb``, and the quotes of its last
    sentence (``skip``: openings up to there stand inside a quoted value)."""

    __slots__ = ("text", "start", "end", "starts", "quotes", "skip")

    def __init__(self, text: str, verb: int, after: int) -> None:
        self.text, self.skip = text, -1
        self.starts: list[int] = []
        self.quotes: QuoteTracker | None = None
        self.start = text.rfind("\n", max(after, 0), verb) + 1 or max(after + 1, 0)
        self.end = text.find("\n", verb) % (len(text) + 1)  # (-1: the text's end)

    def opening(self, verb: int, frame_prefix: re.Pattern[str], repeated_opening: bool) -> int | None:
        """Where the sentence of the opening at ``verb`` starts, or ``None`` when it opens none."""
        text, start = self.text, verb
        if verb <= self.skip:
            return None
        if verb > self.start:
            prefix = frame_prefix.search(text, max(self.start, verb - 24), verb)
            start = prefix.start() if prefix is not None else verb
            if start > self.start and (text[start - 1].isalnum() or text[start - 1] in "_'"):
                return None
        origin = self.starts[-1] if self.starts else start
        if repeated_opening and self.starts and start < origin + 4:
            return None
        if start <= origin:
            return start
        if self.quotes is None or self.quotes.origin != origin:
            self.quotes = QuoteTracker(text, origin)
        self.quotes.inside_at(max(origin, verb - 24))  # where every later opening starts, at the earliest
        probe = self.quotes.copy()
        if probe.inside_at(start):  # inside a quoted value of the sentence before, as is every opening up to
            self.skip = probe.closing()  # where that value's quote closes
            return None
        return start

    def spans(self, room: int) -> list[tuple[int, int]]:
        """The line's sentences (at most ``room``): from each start to the next, white space at the end off."""
        spans = []
        for start, end in zip(self.starts[:room], self.starts[1:] + [self.end]):
            while end > start and self.text[end - 1].isspace():
                end -= 1
            spans.append((start, end))
        return spans


def sentence_spans(text: str, words: tuple[str, ...], frame_prefix: re.Pattern[str], grammar: str, *, limit: int,
                   repeated_opening: bool = False) -> list[tuple[int, int]]:
    r"""Where the framed sentences of ``grammar`` are: from each opening (one of ``words``, with what
    ``frame_prefix`` takes before it) to the next opening or the line's end; at most ``limit``.

    An opening counts when a tool name (the grammar's ``TOOL``, "the" allowed before it) follows its verb, then
    ``WITH``, ``END`` or the line's end; not inside a quoted value of the sentence before it, nor
    (``repeated_opening``) within 4 characters of the one before ("I will use" found again at its verb).

    >>> sentence_spans("Sure. I will use f. Use g with a = 1.", ("use",), re.compile(r"(?:I will )?\Z"),
    ...                "nl_intent_structured", limit=5)
    [(6, 19), (20, 37)]
    """
    spans: list[tuple[int, int]] = []
    line: _Line | None = None
    for found in _openings(grammar, words).finditer(text):
        verb = found.start()
        if line is None or verb > line.end:
            if line is not None:
                spans += line.spans(limit - len(spans))
                if len(spans) >= limit:
                    return spans
            line = _Line(text, verb, line.end if line is not None else -1)
        start = line.opening(verb, frame_prefix, repeated_opening)
        if start is not None:
            line.starts.append(start)
            if len(line.starts) > limit - len(spans):  # one more than fits: it ends the last sentence that does
                break
    return spans + (line.spans(limit - len(spans)) if line is not None else [])


# tool, arguments (the name as written with its binder, the raw value, where the name starts, where the value
# ends), whether a period ends the sentence, the words after it
Sentence = tuple[str, list[tuple[str, str, int, int]], bool, str]


class SentenceParts(Transformer):
    """A sentence grammar's tree → the :data:`Sentence` the fast reader reads."""

    def argument(self, items: list) -> tuple[str, str, int, int]:
        value = items[-1] if len(items) > 1 and items[-1].type == "VALUE" else ""
        return str(items[0]), str(value), items[0].start_pos or 0, items[-1].end_pos or 0

    def start(self, items: list) -> Sentence:
        tokens = {item.type: str(item) for item in items if not isinstance(item, tuple)}
        return (tokens.get("TOOL", ""), [item for item in items if isinstance(item, tuple)], "END" in tokens,
                tokens.get("TRAIL", ""))


class _Terminals:
    """A sentence grammar's terminals, and the patterns the fast reader builds of them (each part atomic or
    possessive: it matches what its terminal alone matches where the parser tries it)."""

    def __init__(self, grammar: str, head: str) -> None:
        t = grammar_terminals(grammar)
        self.tool, self.sep, self.value, self.all = t["TOOL"], t["SEP"], t["VALUE"], t
        nothing = t["NO_ARGUMENTS"].pattern if "NO_ARGUMENTS" in t else "(?!)"  # ("with no arguments")
        self.opening = re.compile(rf"(?>{t['INTRO'].pattern})(?P<tool>(?>{t['TOOL'].pattern}))"
                                  rf"(?:(?P<with>(?>{t['WITH'].pattern}))(?P<nothing>(?>{nothing}))?+)?+")
        self.ending = re.compile(rf"(?P<end>{t['END'].pattern})?+(?P<trail>{t['TRAIL'].pattern})?+\Z")
        self.head = re.compile(head.format(**{name: terminal.pattern for name, terminal in t.items()}))

    def argument(self, text: str, pos: int) -> tuple[tuple[str, str, int, int], int, bool] | None:
        """The argument at ``pos`` (its name, its value, where it starts and ends), where the next one starts,
        and whether one does; ``None`` where the grammar stops."""
        head = self.head.match(text, pos)
        if head is None:
            return None
        value = self.value.match(text, head.end())
        end = value.end() if value is not None else head.end()
        separator = self.sep.match(text, end)
        return (head.group("name"), text[head.end():end], pos, end), separator.end() if separator else end, \
            separator is not None


class SentenceFormat(Protocol):
    """The skeleton of the framed-sentence formats (``nl_intent``, ``nl_intent_structured``): sentences found by
    :func:`sentence_spans`, each read by :meth:`read_fast` with the grammar's own terminals in the order its
    parser tries them, or — where that stops — by the Lark parser, to say where (at most ``fallback_limit``
    sentences, within the reply's grammar budget).  A format sets its grammar, verbs, frame prefix, the words
    it renders, and :meth:`key_of`, :meth:`plain_key`."""

    grammar: str
    verbs: tuple[str, ...]  # the verbs that open a sentence
    frame_prefix: re.Pattern[str]  # what may stand before one ("I will", a list number)
    repeated_opening = False  # a verb within 4 characters of the opening before opens nothing ("I will use")
    opener, binder, numbered = "Use", " = ", False  # how the renderer opens a sentence, binds a value, numbers
    #: the pattern an argument starts with, up to its value (group ``name``; ``{TERMINAL}``: the grammar's)
    argument_head: str
    none_found = "no sentence naming a tool was found"
    sentences_limit, fallback_limit, sentence_limit = 200, 10, 20_000

    @functools.cached_property
    def terminals(self) -> _Terminals:
        return _Terminals(self.grammar, self.argument_head)

    def key_of(self, token: str) -> str:
        """The argument's name in the token that writes it."""
        return unquoted(token) if token[:1] == '"' else token

    def plain_key(self, key: str) -> bool:
        """Whether the renderer writes ``key`` as it is (else as a JSON string)."""
        raise NotImplementedError

    def says_no_tool(self, text: str) -> str | None:
        """The note for a reply without a call that says no tool fits, or ``None``."""
        return None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the sentences are: from each opening to the next opening or the line's end."""
        return sentence_spans(text, self.verbs, self.frame_prefix, self.grammar, limit=self.sentences_limit,
                              repeated_opening=self.repeated_opening)

    def read_fast(self, text: str) -> Sentence | None:
        """One sentence read with the grammar's terminals; ``None`` where the grammar stops (or may)."""
        t = self.terminals
        opening = t.opening.match(text)
        if opening is None:
            return None
        pos, more = opening.end(), opening.group("with") is not None and opening.group("nothing") is None
        arguments: list[tuple[str, str, int, int]] = []
        while more:
            read = t.argument(text, pos)
            if read is None:
                return None
            arguments.append(read[0])
            pos, more = read[1], read[2]
        ending = t.ending.match(text, pos)
        if ending is None:
            return None
        return opening.group("tool"), arguments, ending.group("end") is not None, ending.group("trail") or ""

    def read_by_grammar(self, text: str) -> Sentence:
        """One sentence read by the Lark parser (raises :class:`GrammarFailure` where it stops)."""
        sentence: Sentence = SentenceParts().transform(parse(self.grammar, text))
        return sentence

    def arguments(self, sentence: str, read: Sentence, tools: Toolset | None
                  ) -> tuple[dict[str, Any], list[str], tuple[str, ...]]:
        """The arguments of a read sentence, notes on them (a name given twice), and the names given twice."""
        values: dict[str, Any] = {}
        notes: list[str] = []
        twice: dict[str, None] = {}
        for token, raw, _, _ in read[1]:
            key = self.key_of(token)
            if key in values:
                notes.append(f"argument {key!r} is given twice; the last one counts")
                twice[key] = None
            values[key] = unquoted(raw)
        return values, notes, tuple(twice)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        spans = self.spans(text)
        calls: list[RawCall] = []
        notes: list[str] = []
        stopped = 0  # sentences the fast reader stopped on
        budget = GrammarBudget(limits.reply_grammar_chars, run_cost=0)
        line_of = LineCounter(text)
        for start, end in spans:
            sentence, where = text[start:end], "line %d, column %d" % line_of(start)
            if len(sentence) > self.sentence_limit:
                notes.append(f"{where}: a sentence longer than {self.sentence_limit} characters was not read")
                continue
            read = self.read_fast(sentence)
            if read is None:
                stopped += 1
                read = self._by_grammar(sentence, text, start, where, stopped, budget, notes)
                if read is None:
                    continue
            if read[3].strip():
                notes.append(f"{where}: words after the sentence were ignored: {excerpt(read[3])}")
            arguments, more, twice = self.arguments(sentence, read, tools)
            notes += [f"{where}: {note}" for note in more]
            calls.append(RawCall(read[0].strip("`"), arguments, (start, end),
                                 tuple(twice_at((), key) for key in twice)))
        no_tool = self.says_no_tool(text) if not calls else None
        if no_tool is not None:
            return Extraction((), (no_tool,), True)
        notes = notes or ([] if calls else [self.none_found])
        if len(spans) >= self.sentences_limit:
            notes.append(f"only the first {self.sentences_limit} sentences were read")
        return Extraction(tuple(calls), tuple(notes), bool(calls) and not notes and not leftover_outside(text, spans))

    def _by_grammar(self, sentence: str, text: str, start: int, where: str, stopped: int, budget: GrammarBudget,
                    notes: list[str]) -> Sentence | None:
        """A sentence the fast reader stopped on, read by the Lark parser to say where (the first
        ``fallback_limit`` of a reply, within its budget); ``None`` and a note when it is not read."""
        if stopped > self.fallback_limit:
            if stopped == self.fallback_limit + 1:
                notes.append(f"{where}: this and later sentences that do not keep to the frame were not read")
            return None
        try:
            budget.spend(self.grammar, sentence)
            return self.read_by_grammar(sentence)
        except GrammarFailure as failure:
            notes.append(f"the sentence could not be read: {shifted(failure, text, start).describe()}")
            return None

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        sentences = [self._sentence(call) for call in calls]
        if self.numbered and len(sentences) > 1:
            return "\n".join(f"{i}. {sentence}" for i, sentence in enumerate(sentences, 1))
        return "\n".join(sentences)

    def _sentence(self, call: ToolCall) -> str:
        name = call.name if self.terminals.tool.fullmatch(call.name) else f"`{call.name}`"
        parts = [(key if self.plain_key(key) else json.dumps(key, ensure_ascii=False)) + self.binder
                 + self._value(text_of(value)) for key, value in call.arguments.items()]
        return f"{self.opener} {name} with {', '.join(parts)}." if parts else f"{self.opener} {name}."

    def _value(self, text: str) -> str:
        """``text`` as it is when the sentence reads it back unchanged, else as a JSON string."""
        plain = (text and text == text.strip() and text[0] != '"' and "\n" not in text and "\r" not in text
                 and not find_words(text, 0, len(text), self.verbs) and not in_string_after(text)
                 and all((found := self.terminals.value.match(text + after)) is not None and found.end() == len(text)
                         for after in (".", ", z" + self.binder + "1")))
        return text if plain else json.dumps(text, ensure_ascii=False)


__all__ = ["CALL", "PART", "STRICT_JSON", "UNREAD", "WRAPPER", "Element", "LineCounter", "QuoteTracker",
           "SentenceFormat", "SentenceParts", "Stopped", "TagFormat", "TaggedReply", "calls_from_document",
           "end_outside_cdata", "excerpt", "fenced_blocks", "find_words", "flow_text", "grammar_stop_note",
           "grammar_terminals", "in_string_after", "leftover_outside", "lenient_value", "line_column", "located_notes",
           "only_fences", "read_document", "scalar_text", "sentence_spans", "shifted", "tag_attribute", "text_of",
           "top_level_resumes", "unescape", "unquoted", "xml_escape", "xml_text", "xml_unescape", "xml_value"]
