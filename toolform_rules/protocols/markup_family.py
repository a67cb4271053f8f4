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
* line and column of an offset (:func:`line_column`), and a grammar failure moved to
  where its text stood in the reply (:func:`shifted`).
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, Callable, TypeVar

from .base import Extraction, internal_error
from ..grammar import GrammarFailure, Transformer, load_parser
from .json_object import ARGUMENT_KEYS, NAME_KEYS

#: the longest reply a grammar is run on; past this the reply is cut and a note says so
GRAMMAR_LIMIT = 200_000


_Parse = TypeVar("_Parse", bound=Callable[..., Extraction])


def never_raises(parse: _Parse) -> _Parse:
    """``parse`` that turns any error it did not expect into a note (a protocol's parse never raises).

    >>> from toolform_rules.protocols import get_protocol
    >>> never_raises(lambda self, text, tools=None: 1 / 0)(get_protocol("react"), "x").notes
    ('react: internal error while reading the reply (ZeroDivisionError)',)
    """
    @functools.wraps(parse)
    def guarded(self: Any, text: Any, tools: Any = None) -> Extraction:
        try:
            return parse(self, text, tools)
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


_ATTRIBUTES = re.compile(r"""([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>/=`]+))""")


def tag_attribute(tag: str, attribute: str) -> str | None:
    """The value of ``attribute`` in an opening tag (references decoded), or ``None``.

    >>> tag_attribute('<invoke name="a&amp;b">', "name"), tag_attribute("<p type='s' name=x/>", "name")
    ('a&b', 'x')
    """
    space = 0
    while space < len(tag) and not tag[space].isspace():
        space += 1
    for found in _ATTRIBUTES.finditer(tag, space):
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

def fenced_blocks(text: str, limit: int = 100) -> list[tuple[int, int, str]]:
    r"""The Markdown code fences of ``text``: ``(start, end, language)`` of each body, in order.

    A fence still open at the end of the text ends there.

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
        close = text.find("```", body_start)
        while close > 0 and text[close - 1] not in "\n":  # a closing fence starts its line
            if text[text.rfind("\n", 0, close) + 1:close].strip() == "":
                break
            close = text.find("```", close + 3)
        if close < 0:
            blocks.append((body_start, n, language))
            break
        line_start = text.rfind("\n", 0, close) + 1
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


def read_within(text: str, read: Callable[[str], Extraction], *, limit: int, what: str,
                too_deep: str = "the reply is nested too deeply to read") -> Extraction:
    """``read`` (a grammar's reading) on the first ``limit`` characters of ``text``: a grammar's
    failure becomes a note saying where it stopped, a cut text a note saying so.

    >>> read_within("x" * 10, lambda body: Extraction((), (), True), limit=4, what="the tags").notes
    ('only the first 4 characters were read',)
    """
    body = text if len(text) <= limit else text[:limit]
    try:
        extraction = read(body)
    except GrammarFailure as failure:
        return Extraction((), (f"{what} could not be read: {failure.describe()}",), False)
    except RecursionError:
        return Extraction((), (too_deep,), False)
    if body is not text:
        extraction = Extraction(extraction.calls, extraction.notes + (
            f"only the first {limit} characters were read",), False)
    return extraction


def excerpt(text: str, limit: int = 40) -> str:
    """A bit of ignored text as a note quotes it: white space folded, shortened, in quotes."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


SentenceRead = tuple[Any, Any, Any, str]  # (tool, arguments, period, words after the sentence)


def read_sentences(text: str, spans: list[tuple[int, int]], quick: Callable[[str], SentenceRead | None],
                   by_grammar: Callable[[str], SentenceRead],
                   build: Callable[[str, SentenceRead], tuple[str, dict[str, Any], list[str]]], *,
                   sentence_limit: int, fallback_limit: int) -> tuple[list[Any], list[str], bool]:
    """The calls of the sentences at ``spans``: each read by ``quick`` or, failing that, by the
    grammar (at most ``fallback_limit`` sentences: the grammar says where a sentence breaks, at a
    cost), then made a call by ``build`` (tool, arguments, notes).  Returns the calls, the notes
    (each with its line and column) and whether every sentence kept to the frame.
    """
    from .base import RawCall

    calls: list[Any] = []
    notes: list[str] = []
    clean = True
    fallbacks = 0
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


def leftover_outside(text: str, spans: list[tuple[int, int]]) -> bool:
    r"""Whether ``text`` holds anything besides ``spans``, white space and list numbers ("1.", "2)").

    >>> leftover_outside("1. a\n2) b", [(3, 4), (8, 9)]), leftover_outside("x a", [(2, 3)])
    (False, True)
    """
    previous = 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        for piece in text[previous:start].split():
            if not _LIST_NUMBER_ONLY.fullmatch(piece):
                return True
        previous = max(previous, end)
    return False


def shifted(failure: GrammarFailure, text: str, offset: int, lines: int = 0) -> GrammarFailure:
    """``failure`` (on ``text[offset:]``, which had ``lines`` extra lines put before it) placed in ``text``."""
    line, column = line_column(text, offset)
    at_line = failure.line - lines
    if at_line <= 1:
        return GrammarFailure(failure.grammar, line, column + max(failure.column, 1) - 1, failure.expected,
                              failure.found)
    return GrammarFailure(failure.grammar, line + at_line - 1, failure.column, failure.expected, failure.found)


def in_string_after(text: str, start: int = 0, end: int | None = None) -> bool:
    r"""Whether ``text[start:end]`` leaves a double-quoted (JSON) string open.

    >>> in_string_after('a = "x, use f." and'), in_string_after('a = "x \\" use')
    (False, True)
    """
    inside = False
    i = start
    stop = len(text) if end is None else end
    while True:
        i = text.find('"', i, stop) if not inside else i
        if i < 0 or i >= stop:
            return inside
        if not inside:
            inside = True
            i += 1
            continue
        while i < stop and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        if i >= stop:
            return True
        inside = False
        i += 1


@functools.cache
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(map(re.escape, words)) + ")[ \t]+")


def find_words(text: str, start: int, end: int, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where each of ``words`` (lower case, a whole word followed by spaces) stands in ``text[start:end]``.

    Returns (where the word starts, where the spaces after it end), in order.

    >>> find_words("Use f. I will call g; reuse x", 0, 29, ("use", "call"))
    [(0, 4), (14, 19)]
    """
    low = text[start:end].lower()
    found = []
    for match in _words_pattern(words).finditer(low):
        at = match.start()
        if at == 0 or not (low[at - 1].isalnum() or low[at - 1] in "_'"):
            found.append((start + at, start + match.end()))
    return found


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


__all__ = ["GRAMMAR_LIMIT", "Position", "calls_from_document", "fenced_blocks", "find_words", "grammar_terminals",
           "in_string_after", "leftover_outside", "line_column", "never_raises", "plain_value", "shifted",
           "tag_attribute", "text_of", "xml_escape", "xml_text", "xml_unescape", "xml_value"]
