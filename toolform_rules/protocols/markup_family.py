"""The markup family: the skeletons and shared pieces of the markup, config and natural-language protocols.

``yaml_call``, ``toml_call``, ``xml_call``, ``xml_generic_call``, ``function_tags``,
``react``, ``nl_intent`` and ``nl_intent_structured`` read different syntaxes; what they do
alike is written here once, and each format module holds only what is its own (its grammar's
name, its transformer, its fast reader, its renderer, its instructions):

* writing values (:func:`text_of` for the text-value formats, :func:`flow_text` for YAML's and
  TOML's inline collections) and XML's escaping both ways (:func:`xml_text`, :func:`xml_value`), and
  where a value's text ends when CDATA sections in it are text whole (:func:`end_outside_cdata`);
* the reply around the calls: Markdown fences (:func:`fenced_blocks`, :func:`only_fences`), places
  as line and column, worked out only when a note is written (:class:`LineCounter`,
  :class:`Position`, :func:`located_notes`, :func:`shifted`);
* the tool a name stands for (:func:`~.reading.tool_of`, the one look-up) — only where the syntax
  needs it: a bare value's parameter, argument names read against the parameters, a typed value
  cut from prose;
* the tag formats' skeleton (:class:`TagFormat`): the rendered shape read by regular expressions,
  any other reply by one linear pass over its tags, the grammar run only where that pass stops,
  on a bounded stretch (:func:`grammar_stop_note`);
* the documents' skeleton (:func:`calls_from_document`, :func:`read_document`): fast readers
  first, the grammar within the reply's :class:`~.reading.GrammarBudget`;
* the framed sentences' skeleton (:class:`SentenceFormat`): sentences found by one pattern run
  in C (:func:`sentence_spans`), read with the grammar's own terminals, the Lark parser only
  where that reading stops.

Every format's ``read`` is guarded by :meth:`Protocol.parse <.base.Protocol.parse>`.
"""

from __future__ import annotations

import functools
import json
import math
import re
from operator import itemgetter
from typing import Any, Callable, Iterator, Sequence

from ..calls import ToolCall
from ..grammar import GrammarFailure, Transformer, load_parser, parse
from ..limits import Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, RawCall
from .duplicates import Repeats, where as twice_at
from .json_object import ARGUMENT_KEYS, NAME_KEYS
from .reading import MAX_NOTES, GrammarBudget
from .values import _MISSING, json_value, loads_lenient

# ---------------------------------------------------------------------------------------------
# values as text


def scalar_text(value: Any, *, null: str = "null", nan: str = "NaN", inf: str = "Infinity") -> str | None:
    """A boolean, ``None`` or number as a format writes it (its spellings of null and the special floats);
    ``None`` for anything else.

    >>> [scalar_text(v, inf=".inf") for v in (True, None, 12, 1e-07, float("-inf"), "x")]
    ['true', 'null', '12', '1e-07', '-.inf', None]
    """
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return null
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return nan
        if math.isinf(value):
            return inf if value > 0 else "-" + inf
        return repr(value)
    return None


def text_of(value: Any) -> str:
    """``value`` as a text-value format writes it: strings as they are, everything else as JSON.

    >>> [text_of(v) for v in ("a b", True, None, 12, 1e-07, 1200.5, {"k": [1, "x"]})]
    ['a b', 'true', 'null', '12', '1e-07', '1200.5', '{"k": [1, "x"]}']
    """
    if isinstance(value, str):
        return value
    scalar = scalar_text(value)
    return scalar if scalar is not None else json.dumps(value, ensure_ascii=False)


def flow_text(value: Any, string: Callable[[str], str], key: Callable[[str], str], binder: str, **spellings: str
              ) -> str:
    """``value`` in an inline (flow) syntax: strings by ``string``, ``{key<binder>value, ...}``, ``[item, ...]``,
    the rest by :func:`scalar_text` with the format's ``spellings``.

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


#: strict JSON for the fast readers of YAML and TOML: no NaN or Infinity, no key given twice (their
#: grammars note those)
STRICT_JSON = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)


def unescape(body: str, escapes: dict[str, str], widths: dict[str, int], *, line_ending: bool = False) -> str:
    r"""``body`` with its backslash escapes decoded (a format's quoted string): ``escapes``, a character after
    the backslash and its text; ``widths``, a letter and how many hex digits follow it (``\x41``,
    ``\u00e9``); ``line_ending``: a backslash that ends a line takes the line break and the white space after
    it (TOML's multi-line strings).  Any other escape is the character itself.

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
    """A JSON value as models write it (single quotes, Python's words, trailing commas): by ``json`` and the
    lenient reader in C first; by the grammar — which raises :class:`GrammarFailure` where it stops — only
    within the reply's ``budget``.

    >>> lenient_value("{'a': True,}", GrammarBudget(0))
    {'a': True}
    """
    value = json_value(text)
    if value is not _MISSING:
        return value
    budget.spend("json_object", text)
    return loads_lenient(text, max_grammar_bytes=len(text))


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


def cdata_end(text: str, start: int) -> int:
    """Where the CDATA section opened at ``text[start]`` ends (after its ``]]>``), or -1 when it does not end
    before the next ``<![CDATA[`` (or at all): it is then text as written, the tags after it tags.

    So a section is looked for no further than the next opening: over any number of openings that never end,
    one pass over the text.

    >>> cdata_end("<![CDATA[</p>]]>x", 0), cdata_end("<![CDATA[a <![CDATA[b]]>", 0), cdata_end("<![CDATA[a", 0)
    (16, -1, -1)
    """
    after = text.find("<![CDATA[", start + 9)
    close = text.find("]]>", start + 9, after if after >= 0 else len(text))
    return close + 3 if close >= 0 else -1


def end_outside_cdata(text: str, pos: int, stop: re.Pattern[str]) -> int:
    """Where a value's text from ``pos`` ends: at the first match of ``stop`` (or the end) that is not inside a
    CDATA section (as :func:`cdata_end` has them) — a section is text whole, whatever tags it holds.

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
        pos = cdata_end(text, opening)
        if pos < 0:  # text as written: a later opening may still be a section
            pos = opening + 1
        elif pos > at:  # the section holds the stop: the next one is after it (else the one found still is)
            found = stop.search(text, pos)
            at = found.start() if found is not None else len(text)


# ---------------------------------------------------------------------------------------------
# the reply around the calls

_CLOSING_FENCE = re.compile(r"\n[^\S\n]*```")
_FENCE_MARKS = re.compile(r"(?:```[\w.+-]*)?(?:```)?")


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
        blocks.append((body_start, closing.start() + 1, language))
        after = text.find("\n", close)
        i = n if after < 0 else after + 1
    return blocks


def only_fences(outside: str) -> bool:
    """Whether ``outside`` — the reply around its calls — is only white space and the marks of a code fence
    (a compliant reply may stand in one).

    >>> only_fences(" \\n"), only_fences("```xml\\n \\n```"), only_fences("Sure:")
    (True, True, False)
    """
    if not outside or outside.isspace():
        return True
    return "`" in outside and _FENCE_MARKS.fullmatch("".join(outside.split())) is not None


def excerpt(text: str, limit: int = 40) -> str:
    """A bit of ignored text as a note quotes it: white space folded, shortened, in quotes."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


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
    r"""``line L, column C`` of an offset, worked out only when it is written into a note (by ``line_of``, a
    :class:`LineCounter` of the text, when places are written in order: one pass for them all).

    >>> "{}: here".format(Position("ab\ncd", 4))
    'line 2, column 2: here'
    """

    __slots__ = ("text", "index", "line_of")

    def __init__(self, text: str, index: int, line_of: LineCounter | None = None) -> None:
        self.text, self.index, self.line_of = text, index, line_of

    def __str__(self) -> str:
        where = self.line_of(self.index) if self.line_of is not None else line_column(self.text, self.index)
        return "line {}, column {}".format(*where)

    def __format__(self, spec: str) -> str:
        return str(self)


def located_notes(text: str, notes: list[tuple[int, str]], limit: int = MAX_NOTES) -> tuple[str, ...]:
    r"""``notes`` — (offset, sentence) pairs — in the order of their places in ``text``, each as ``line L,
    column C: sentence`` (the lines counted in one pass); past the first ``limit``, one note counts the rest.

    >>> located_notes("a\nbc", [(3, "two"), (0, "one")])
    ('line 1, column 1: one', 'line 2, column 2: two')
    >>> located_notes("abc", [(2, "z"), (0, "x"), (1, "y")], limit=1)
    ('line 1, column 1: x', '2 more notes like these were left out')
    """
    notes.sort(key=itemgetter(0))
    where = LineCounter(text)
    kept = tuple("line %d, column %d: %s" % (*where(at), what) for at, what in notes[:limit])
    if len(notes) <= limit:
        return kept
    return (*kept, f"{len(notes) - limit} more notes like these were left out")


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


# ---------------------------------------------------------------------------------------------
# the tag formats

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


class TaggedReply(Transformer):
    """What a tag format's reply holds, built by its grammar's transformer or by its linear pass alike: the
    prose outside every tag (``outside``, kept by ``start``), notes placed by offset, and a wrapper element's
    stray text and missing close noted (``wrapper``)."""

    def __init__(self) -> None:
        super().__init__()
        self.outside: list[str] = []
        self.notes: list[tuple[int, str]] = []

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
                self.outside.append(str(item))
        return self

    def extraction(self, calls: list[RawCall], notes: list[tuple[int, str]], text: str, none_found: str
                   ) -> Extraction:
        """The reply's calls and ``notes`` (placed by offset; ``none_found`` when there are neither); compliant
        when nothing was noted and the prose is only white space and fence marks."""
        words = located_notes(text, notes)
        compliant = bool(calls) and not words and only_fences("".join(self.outside))
        return Extraction(tuple(calls), words or (() if calls else (none_found,)), compliant)


def canonical_reply(text: str, start: int, end: int, calls: list[RawCall], own_tag: re.Pattern[str]
                    ) -> Extraction | None:
    """The calls a tag format's regular expressions read in their rendered shape at ``text[start:end]`` —
    unless there are none, or the prose around them holds a tag of the format (``own_tag``; the linear
    pass reads that reply); compliant when the prose is only white space and fence marks."""
    if not calls or (text.find("<", 0, start) >= 0 and own_tag.search(text, 0, start) is not None) or (
            text.find("<", end) >= 0 and own_tag.search(text, end) is not None):
        return None
    return Extraction(tuple(calls), (), only_fences(text[:start] + text[end:]))


class TagFormat(Protocol):
    """The skeleton of the tag formats (``function_tags``, ``xml_call``, ``xml_generic_call``).

    A reply in the rendered shape is read by the format's regular expressions (:meth:`canonical`);
    any other by one linear pass over its tags (:meth:`scan`), which gives what the grammar's tree
    would give (:meth:`extraction` makes the calls of it) or, where the grammar stops, a
    :class:`Stopped`; then the grammar (:meth:`by_grammar`, raising :class:`GrammarFailure`) reads a
    bounded stretch that ends in the same failure (``Limits.reply_grammar_chars``), to word the note.
    So a long hostile reply costs one linear pass.
    """

    closes_calls = True

    #: what the notes call the reply's markup; the grammar's transformer (what the linear pass builds too)
    markup = "the XML"
    tree: type[TaggedReply]

    #: the hooks (the format's functions): the calls of a reply in the rendered shape, or ``None`` (the linear
    #: pass reads it); the reply's structure, or a :class:`Stopped` where the grammar stops; the calls and
    #: notes of a structure (``budget``: the reply's, for what a grammar reads of the values)
    canonical: Callable[[str], Extraction | None]
    scan: Callable[[str], Any]
    extraction: Callable[[Any, str, GrammarBudget], Extraction]

    def by_grammar(self, text: str) -> Any:
        """The reply's structure as the grammar reads it (raises :class:`GrammarFailure` where it stops)."""
        return self.tree().transform(parse(self.info.id, text))

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        too_deep = self.markup + " is nested too deeply to read"
        fast = self.canonical(text)
        if fast is not None:
            return fast
        scanned = self.scan(text)
        if isinstance(scanned, Stopped):
            return grammar_stop_note(text, scanned, self.by_grammar, limit=limits.reply_grammar_chars,
                                     what=self.markup, too_deep=too_deep)
        try:
            return self.extraction(scanned, text, GrammarBudget.of(limits))
        except RecursionError:  # elements nested deeper than Python's stack
            return Extraction((), (too_deep,), False)


# ---------------------------------------------------------------------------------------------
# the documents (YAML, TOML)

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


#: what a fast reader of a document gives for a document it does not read as the grammar does
UNREAD: Any = object()


def read_document(text: str, start: int, end: int, readers: Sequence[Callable[[str], Any]],
                  by_grammar: Callable[[str], tuple[Any, list[str], Repeats]], budget: GrammarBudget, grammar: str,
                  what: str) -> tuple[Any, list[str], Repeats | None] | str:
    """The document at ``text[start:end]``: read by the first of ``readers`` that takes it (they refuse a key
    given twice), else by the grammar (``by_grammar``: the document, notes on it, and its mappings that give a
    key twice) within the reply's ``budget`` — ``(document, notes, repeats)``, or the note on why it could not
    be read (where the grammar stopped, placed in the reply).

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


# ---------------------------------------------------------------------------------------------
# the framed sentences (nl_intent, nl_intent_structured)

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


@functools.cache
def grammar_terminals(grammar: str) -> dict[str, re.Pattern[str]]:
    """The terminals of ``grammars/<grammar>.lark`` as compiled regular expressions, by name.

    A fast path that reads with the grammar's own terminals keeps one definition of the format.

    >>> grammar_terminals("xml_call")["INVOKE_CLOSE"].fullmatch("</invoke>") is not None
    True
    """
    parser = load_parser(grammar)
    return {t.name: re.compile(t.pattern.to_regexp()) for t in parser.terminals}


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
    for the two letters :func:`_verbs_in` leaves to the line-by-line reading.)"""
    t = grammar_terminals(grammar)
    verbs = "|".join(f"{word}(?<![\\w']{word})" for word in words)  # the word first: found as a literal, fast
    return re.compile(rf"(?:{verbs})[ \t]++(?P<after>)(?=(?>(?:(?i:the)[ \t]+)?)(?>{t['TOOL'].pattern})"
                      rf"(?:[^\S\n]*(?:\n|\Z)|{t['WITH'].pattern}|{t['END'].pattern}))")


_START = re.Match.start


def _verbs_in(text: str, grammar: str, words: tuple[str, ...]) -> Iterator[int]:
    """Where each opening's verb is (see :func:`_openings`), in order, found as one goes (a caller that has
    enough stops the search)."""
    if "\u0130" not in text and "\u212a" not in text:
        return map(_START, _openings(grammar, words).finditer(text.lower()))
    return _verbs_by_line(text, grammar, words)


def _verbs_by_line(text: str, grammar: str, words: tuple[str, ...]) -> Iterator[int]:
    """:func:`_verbs_in` for a reply holding a letter whose lower case TOOL's pattern reads otherwise (İ, the
    Kelvin sign): each verb is looked at in Python, TOOL on the reply as written."""
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
                yield verb


def _line_spans(text: str, starts: list[int], line_end: int, room: int) -> list[tuple[int, int]]:
    """The sentences of a line: from each start to the next (or the line's end), white space at the end off."""
    spans = []
    for i, start in enumerate(starts[:room]):
        end = starts[i + 1] if i + 1 < len(starts) else line_end
        while end > start and text[end - 1].isspace():
            end -= 1
        spans.append((start, end))
    return spans


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
    for verb in _verbs_in(text, grammar, words):
        if verb > line_end:  # on a later line
            if starts:
                spans += _line_spans(text, starts, line_end, limit - len(spans))
                if len(spans) >= limit:
                    return spans
            line_start = text.rfind("\n", max(line_end, 0), verb) + 1 or max(line_end + 1, 0)
            line_end = text.find("\n", verb)
            if line_end < 0:
                line_end = len(text)
            starts, quotes, skip = [], None, -1
        elif verb <= skip:
            continue
        start = verb
        if verb > line_start:
            prefix = frame_prefix.search(text, max(line_start, verb - 24), verb)
            if prefix is not None:
                start = prefix.start()
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
            break
    return spans + _line_spans(text, starts, line_end, limit - len(spans))


# tool, arguments (the name as written with its binder, the raw value, where the name starts, where the
# value ends), whether a period ends the sentence, the words after it
Sentence = tuple[str, list[tuple[str, str, int, int]], bool, str]


class SentenceParts(Transformer):
    """A sentence grammar's tree → the :data:`Sentence` the fast reader reads."""

    def argument(self, items: list) -> tuple[str, str, int, int]:
        value = items[-1] if len(items) > 1 and items[-1].type == "VALUE" else ""
        return str(items[0]), str(value), items[0].start_pos or 0, items[-1].end_pos or 0

    def start(self, items: list) -> Sentence:
        tool = trail = ""
        arguments = []
        period = False
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


# a plain value: a run of words without a comma, a period before a space or a period, a colon, an equals
# sign or a quote
_RUN = r'(?:[^\s,.;:"=]|\.(?=[^\s.]))++(?:[ \t](?:[^\s,.;:"=]|\.(?=[^\s.]))++)*+'


# where a sentence grammar's STOP can start (a separator, "and", the final period, spaces at the end), or a
# line break
_STOP_STARTS = re.compile(r"[ \t,;.\r\n]")


class _Terminals:
    """A sentence grammar's terminals, and the patterns the fast reader builds of them (each part atomic or
    possessive, so that it matches what its terminal alone matches where the parser tries it)."""

    def __init__(self, grammar: str, head: str, rendered_name: str, rendered_next: str) -> None:
        t = grammar_terminals(grammar)
        self.tool, self.sep, self.value, self.all = t["TOOL"], t["SEP"], t["VALUE"], t
        nothing = t["NO_ARGUMENTS"].pattern if "NO_ARGUMENTS" in t else "(?!)"  # ("with no arguments")
        self.opening = re.compile(rf"(?>{t['INTRO'].pattern})(?P<tool>(?>{t['TOOL'].pattern}))"
                                  rf"(?:(?P<with>(?>{t['WITH'].pattern}))(?P<nothing>(?>{nothing}))?+)?+")
        self.ending = re.compile(rf"(?P<end>{t['END'].pattern})?+(?P<trail>{t['TRAIL'].pattern})?+\Z")
        self.head = re.compile(head.format(**{name: terminal.pattern for name, terminal in t.items()}))
        # VALUE is a quoted string (with a lookahead after it) or ``(?:(?!STOP)[^\r\n])+``, a lookahead at every
        # character: its parts, taken from the grammar, so that the end of a value is searched for in C
        source = self.value.pattern
        split = source.rindex("|(?:(?!")
        stop = source[split + 7:source.rindex(")[^\r\n])+")]
        self.quoted, self.stop = re.compile(source[:split]), re.compile(stop)
        # an argument as the renderer writes it: a plain name, a plain run, then ", " and the next such name, or
        # the final period, or the end — there NAME (KEY, EQUALS), VALUE and SEP take just that (unless the run
        # holds "and" or "to", where VALUE may stop: see ``_risky``)
        self.plain = re.compile(rf"{rendered_name}(?P<value>{_RUN})(?:(?P<sep>, )(?={rendered_next})"
                                rf"|(?=\.(?:[ \t]|\r?\n|\Z)|\Z))")

    def value_end(self, text: str, pos: int) -> int:
        """Where VALUE's match at ``pos`` ends (``pos``: it does not match)."""
        quoted = self.quoted.match(text, pos)
        if quoted is not None:
            return quoted.end()
        if pos >= len(text) or text[pos] in "\r\n" or self.stop.match(text, pos) is not None:
            return pos
        at = pos + 1
        while True:  # STOP is looked for only where it can start (the other characters are skipped in C)
            found = _STOP_STARTS.search(text, at)
            if found is None:
                return len(text)
            at = found.start()
            if text[at] in "\r\n" or self.stop.match(text, at) is not None:
                return at
            at += 1


def _risky(run: str) -> bool:
    """Whether a plain run holds a word that could start where VALUE stops ("and", "set to"): VALUE reads it."""
    lowered = run.lower()
    return " and " in lowered or " to " in lowered


class SentenceFormat(Protocol):
    """The skeleton of the framed-sentence formats (``nl_intent``, ``nl_intent_structured``).

    The sentences are found by :func:`sentence_spans` (one pattern run in C); each is read by
    :meth:`read_fast` with the grammar's own terminals, in the order its parser tries them (an
    argument with a plain value by one pattern), or — where that reading stops — by the Lark parser, to
    say where (at most ``fallback_limit`` sentences, within the reply's grammar budget).  A format sets
    its grammar, verbs, frame prefix, the words it renders, and :meth:`key_of`, :meth:`plain_key`.
    """

    grammar: str
    #: the verbs that open a sentence, and what may stand before one ("I will", a list number)
    verbs: tuple[str, ...]
    frame_prefix: re.Pattern[str]
    #: a verb within 4 characters of the opening before it opens nothing ("I will use" found again at "use")
    repeated_opening = False
    #: how the renderer opens a sentence and binds a value to its name; whether it numbers several
    opener = "Use"
    binder = " = "
    numbered = False
    #: the pattern an argument starts with, up to its value (group ``name``: the name as the sentence writes
    #: it; ``{TERMINAL}``: the grammar's terminal)
    argument_head: str
    #: an argument's name as the renderer writes it (a plain word and its binder; group ``name``: the name as
    #: ``argument_head`` takes it), and what the next one starts with
    rendered_name: str
    rendered_next: str
    none_found = "no sentence naming a tool was found"
    sentences_limit = 200
    fallback_limit = 10  # sentences read by the Lark parser (to say where they break) per reply
    sentence_limit = 20_000

    @functools.cached_property
    def terminals(self) -> _Terminals:
        return _Terminals(self.grammar, self.argument_head, self.rendered_name, self.rendered_next)

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
        pos = opening.end()
        arguments: list[tuple[str, str, int, int]] = []
        if opening.group("with") is not None and opening.group("nothing") is None:
            while True:
                found = t.plain.match(text, pos)
                if found is not None:
                    name, value, sep = found.groups()
                    if not (" " in value and _risky(value)):
                        arguments.append((name, value, pos, found.end(2)))
                        pos = found.end()
                        if sep is None:
                            break
                        continue
                found = t.head.match(text, pos)
                if found is None:
                    return None
                end = t.value_end(text, found.end())
                arguments.append((found.group("name"), text[found.end():end], pos, end))
                separator = t.sep.match(text, end)
                if separator is None:
                    pos = end
                    break
                pos = separator.end()
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
        key_of = self.key_of
        for token, raw, _, _ in read[1]:
            key = key_of(token)
            if key in values:
                notes.append(f"argument {key!r} is given twice; the last one counts")
                twice[key] = None
            values[key] = unquoted(raw) if raw[:1] == '"' else raw
        return values, notes, tuple(twice)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        spans = self.spans(text)
        calls: list[RawCall] = []
        notes: list[str] = []
        clean = True
        fallbacks = 0
        budget = GrammarBudget(limits.reply_grammar_chars, run_cost=0)
        line_of = LineCounter(text)
        for start, end in spans:
            sentence = text[start:end]
            where = Position(text, start, line_of)  # (its line and column worked out for a note only)
            if len(sentence) > self.sentence_limit:
                notes.append(f"{where}: a sentence longer than {self.sentence_limit} characters was not read")
                clean = False
                continue
            read = self.read_fast(sentence)
            if read is None:
                fallbacks += 1
                if fallbacks > self.fallback_limit:
                    if fallbacks == self.fallback_limit + 1:
                        notes.append(f"{where}: this and later sentences that do not keep to the frame were not read")
                    clean = False
                    continue
                try:
                    budget.spend(self.grammar, sentence)
                    read = self.read_by_grammar(sentence)
                except GrammarFailure as failure:
                    notes.append(f"the sentence could not be read: {shifted(failure, text, start).describe()}")
                    clean = False
                    continue
            if read[3].strip():
                notes.append(f"{where}: words after the sentence were ignored: {excerpt(read[3])}")
                clean = False
            arguments, more, twice = self.arguments(sentence, read, tools)
            if more:
                notes += [f"{where}: {note}" for note in more]
                clean = False
            calls.append(RawCall(read[0].strip("`"), arguments, (start, end),
                                 tuple(twice_at((), key) for key in twice)))
        if not calls:
            no_tool = self.says_no_tool(text)
            if no_tool is not None:
                return Extraction((), (no_tool,), True)
            if not notes:
                notes.append(self.none_found)
        if len(spans) >= self.sentences_limit:
            notes.append(f"only the first {self.sentences_limit} sentences were read")
            clean = False
        return Extraction(tuple(calls), tuple(notes), clean and bool(calls) and not leftover_outside(text, spans))

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        sentences = [self._sentence(call) for call in calls]
        if self.numbered and len(sentences) > 1:
            return "\n".join(f"{i}. {sentence}" for i, sentence in enumerate(sentences, 1))
        return "\n".join(sentences)

    def _sentence(self, call: ToolCall) -> str:
        name = call.name if self.terminals.tool.fullmatch(call.name) else f"`{call.name}`"
        if not call.arguments:
            return f"{self.opener} {name}."
        parts = [(key if self.plain_key(key) else json.dumps(key, ensure_ascii=False)) + self.binder
                 + self._value(text_of(value)) for key, value in call.arguments.items()]
        return f"{self.opener} {name} with {', '.join(parts)}."

    def _value(self, text: str) -> str:
        """``text`` as it is when the sentence reads it back unchanged, else as a JSON string."""
        plain = (text and text == text.strip() and text[0] != '"' and "\n" not in text and "\r" not in text
                 and not find_words(text, 0, len(text), self.verbs) and not in_string_after(text))
        if plain:
            for after in (".", ", z" + self.binder + "1"):
                found = self.terminals.value.match(text + after)
                if found is None or found.end() != len(text):
                    return json.dumps(text, ensure_ascii=False)
        return text if plain else json.dumps(text, ensure_ascii=False)


__all__ = ["STRICT_JSON", "UNREAD", "LineCounter", "Position", "QuoteTracker", "SentenceFormat", "SentenceParts",
           "Stopped", "TagFormat", "TaggedReply", "calls_from_document", "canonical_reply", "cdata_end",
           "end_outside_cdata", "excerpt", "fenced_blocks", "find_words", "flow_text", "grammar_stop_note",
           "grammar_terminals", "in_string_after", "leftover_outside", "lenient_value",
           "line_column", "lines_with_words", "located_notes", "only_fences", "read_document", "scalar_text",
           "sentence_spans", "shifted", "tag_attribute", "text_of", "top_level_resumes", "unescape", "unquoted",
           "xml_escape", "xml_text", "xml_unescape", "xml_value"]
