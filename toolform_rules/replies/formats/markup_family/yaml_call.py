"""yaml_call: a call as a small YAML document — ``name:`` and an ``arguments:`` mapping.

Grammar: ``grammars/yaml_call.lark`` (the lines of block YAML; the module nests them by
indentation).  Several calls are a YAML list of call mappings, documents separated by
``---``, or — as the reference renders them — call mappings one after another (a second
``name:`` at the left margin starts a new call).  The YAML may stand alone, in code fences
or after prose.

Plain scalars are typed by YAML 1.2's core schema (``true``/``True``, ``null``/``~``,
integers in base 10, 8 (``0o``) and 16 (``0x``), floats with ``1e-07`` and ``.inf``), plus
Python's ``None``; keys are always text.  ``yes``/``no``, dates and ``010`` stay strings,
where PyYAML's YAML 1.1 rules would turn them into booleans, dates and octal.  Prose on the
line of the first ``name:`` ("Sure! name: f", an ``arguments:`` line after it) is skipped; a
last value followed by words ("term_months: 601 Done.") is cut where a sentence starts when the
tool's schema types the parameter (601, an integer), and a note says what was left.

One fast path: libyaml (``yaml.CSafeLoader``'s parser), whose events this module builds into
values with the grammar's typing rules; a document with anchors, aliases, tags or a key given
twice, or that libyaml refuses, goes to the grammar.  Nothing is ever constructed from a tag,
so no loader can run code.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": "x: y", "c": {"d": [True, None]}})])
>>> print(text)
name: f
arguments:
  a: 1
  b: "x: y"
  c: {"d": [true, null]}
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': 1, 'b': 'x: y', 'c': {'d': [True, None]}}
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Sequence

import yaml

from ....calls import ToolCall
from ....grammar import GrammarFailure, Token, Transformer, parse, transform
from ....limits import Limits
from ....schema.names import canonical_name
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, ProtocolInfo, RawCall
from ..duplicates import Repeats
from .shared import (UNREAD, LineCounter, calls_from_document, excerpt, fenced_blocks, flow_text, only_fences,
                            read_document, unescape)
from ..reading import GrammarBudget, tool_of

# ---------------------------------------------------------------------------------------------
# typing plain scalars

_NULLS = frozenset({"", "~", "null", "Null", "NULL", "None"})
_TRUES = frozenset({"true", "True", "TRUE"})
_FALSES = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+")
_BASED_INT = re.compile(r"0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"([-+]?)\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
_NUMBER_START = frozenset("0123456789+-.")


def resolve(text: str) -> Any:
    """A plain scalar's value under YAML 1.2's core schema (and ``None``).

    >>> [resolve(t) for t in ("12", "0x1F", "1e-07", "-.inf", "True", "~", "None", "yes", "2024-01-01", "010")]
    [12, 31, 1e-07, -inf, True, None, None, 'yes', '2024-01-01', 10]
    """
    if text in _NULLS:
        return None
    if text in _TRUES or text in _FALSES:
        return text in _TRUES
    if text[0] not in _NUMBER_START:
        return text
    if _INT.fullmatch(text):
        return int(text)
    if _BASED_INT.fullmatch(text):
        return int(text, 0)
    if _FLOAT.fullmatch(text) and any(ch.isdigit() for ch in text):
        return float(text)
    inf = _INF.fullmatch(text)
    if inf is not None:
        return -math.inf if inf.group(1) == "-" else math.inf
    return math.nan if _NAN.fullmatch(text) else text


# ---------------------------------------------------------------------------------------------
# writing

_PLAIN_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_ESCAPES_OUT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0",
                "\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P", "\ufeff": "\\uFEFF"}


def _printable(ch: str) -> bool:
    """Characters YAML (and libyaml) take as they are inside a double-quoted scalar."""
    code = ord(ch)
    return (0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000) and \
        ch not in "\u2028\u2029\ufeff"


def _escaped(ch: str) -> str:
    if ch in _ESCAPES_OUT:
        return _ESCAPES_OUT[ch]
    if _printable(ch):
        return ch
    return f"\\x{ord(ch):02X}" if ord(ch) <= 0xFF else f"\\u{ord(ch):04X}"


def yaml_string(text: str) -> str:
    """A double-quoted YAML scalar for ``text`` (every character that needs it escaped).

    >>> print(yaml_string('say "hi"\\n\\u2028\\x7f'))
    "say \\"hi\\"\\n\\L\\x7F"
    """
    if all(_printable(ch) and ch not in '\\"' for ch in text):
        return f'"{text}"'
    return '"' + "".join(map(_escaped, text)) + '"'


def yaml_key(key: str) -> str:
    """A key (or a tool's name) as YAML writes it: plain when it reads back as that text, else quoted.

    >>> yaml_key("city"), yaml_key("true"), yaml_key("a b")
    ('city', '"true"', '"a b"')
    """
    return key if _PLAIN_SAFE.fullmatch(key) and isinstance(resolve(key), str) else yaml_string(key)


def yaml_flow(value: Any, top: bool = False) -> str:
    """A value in flow style: JSON-like, with YAML's spellings of the special floats.

    >>> yaml_flow({"a": [1.5, float("-inf"), None, False], "b": {}})
    '{"a": [1.5, -.inf, null, false], "b": {}}'
    """
    if top and isinstance(value, bool):
        return "True" if value else "False"
    return flow_text(value, yaml_string, yaml_string, ": ", nan=".nan", inf=".inf")


# ---------------------------------------------------------------------------------------------
# the fast path: libyaml's events

class _Loader(yaml.CSafeLoader):
    """libyaml's parser; nothing here resolves or constructs (the events are read by :func:`_node`)."""


class _NotPlain(Exception):
    """An event the grammar does not read as libyaml does (anchor, alias, tag, complex or repeated key)."""


_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _node(next_event: Callable[[], Any], event: Any) -> Any:
    """The value that starts with ``event`` (the events after it read from ``next_event``)."""
    if event.anchor is not None or getattr(event, "tag", None) is not None:
        raise _NotPlain  # (an alias has an anchor)
    kind = type(event)
    if kind is _SCALAR:
        return event.value if event.style else resolve(event.value)
    if kind is _SEQUENCE:
        items = []
        while type(event := next_event()) not in _ENDS:
            items.append(_node(next_event, event))
        return items
    if kind is not _MAPPING:
        raise _NotPlain
    table: dict[str, Any] = {}
    while type(event := next_event()) not in _ENDS:
        if type(event) is not _SCALAR or event.anchor is not None or event.tag is not None or event.value in table:
            raise _NotPlain  # a collection as a key; a key given twice (the grammar notes it)
        table[event.value] = _node(next_event, next_event())
    return table


def by_libyaml(text: str) -> Any:
    """One YAML document read by libyaml, typed as the grammar types it; :data:`.markup_family.UNREAD` for
    what the grammar must read (anchors, aliases, tags, a key given twice, several documents, an error).

    >>> by_libyaml("a: [1, yes, 0x1F]\\nb: 'x'"), by_libyaml("a: &x 1") is UNREAD
    ({'a': [1, 'yes', 31], 'b': 'x'}, True)
    """
    try:
        loader = _Loader(text)  # (a lone surrogate cannot be encoded for it: a ValueError)
    except ValueError:
        return UNREAD
    try:
        next_event = loader.get_event
        next_event()  # the stream's start
        if type(next_event()) is yaml.StreamEndEvent:
            return None
        document = _node(next_event, next_event())
        next_event()  # the document's end
        return document if type(next_event()) is yaml.StreamEndEvent else UNREAD
    except (yaml.YAMLError, _NotPlain, RecursionError, ValueError, TypeError):
        return UNREAD
    finally:
        loader.dispose()


# ---------------------------------------------------------------------------------------------
# the grammar

_YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
                 "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
                 "L": "\u2028", "P": "\u2029"}
_WIDTHS = {"x": 2, "u": 4, "U": 8}


def yaml_unescape(body: str) -> str:
    """The text of a double-quoted scalar's body (YAML's escapes).

    >>> yaml_unescape('a\\\\"b\\\\x41\\\\u00e9\\\\L')
    'a"bAé\\u2028'
    """
    return unescape(body, _YAML_ESCAPES, _WIDTHS)


def _unquote(text: str) -> str:
    """A scalar's text: quotes removed and escapes read (a plain scalar as written)."""
    if text[:1] == '"':
        return yaml_unescape(text[1:-1])
    return text[1:-1].replace("''", "'") if text[:1] == "'" else text


def block_scalar(header: str, content: str, parent_indent: int) -> str:
    r"""The text of a literal (``|``) or folded (``>``) block scalar, as YAML defines it.

    ``content`` is the text after the header line's break (its own final break included
    when the source has one); ``parent_indent`` is the column of the key.

    >>> block_scalar("|", "  one\n    two\n\n  three\n", 0)
    'one\n  two\n\nthree\n'
    >>> block_scalar(">-", "  one\n  two\n\n  three\n", 0)
    'one two\nthree'
    """
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    digits = [ch for ch in header if ch.isdigit()]
    indent = parent_indent + int(digits[0]) if digits else _detected_indent(lines, parent_indent)
    rests = [_past_indent(line, indent) for line in lines]  # each line past the indentation ("": an empty line)
    last_break = "\n"
    if rests and not content.endswith("\n"):  # the last line has no break: empty, it adds nothing
        if rests[-1]:
            last_break = ""
        else:
            rests.pop()
    last = max((i for i, rest in enumerate(rests) if rest), default=-1)
    chomping = "+" if "+" in header else ("-" if "-" in header else "")
    if last < 0:
        return "\n" * len(rests) if chomping == "+" else ""
    text = _folded(rests[:last + 1]) if header[:1] == ">" else "\n".join(rests[:last + 1])
    if chomping == "-":
        return text
    return text + last_break + ("\n" * (len(rests) - 1 - last) if chomping == "+" else "")


def _detected_indent(lines: list[str], parent_indent: int) -> int:
    """A block scalar's indentation when its header gives none: its first non-empty line's (or a wider empty line
    before it)."""
    widest = 0
    for line in lines:
        spaces = len(line) - len(line.lstrip(" "))
        widest = max(widest, spaces)
        if spaces < len(line):
            break
    return max(parent_indent + 1, widest)


def _past_indent(line: str, indent: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    rest = line[min(spaces, indent):]
    if rest and spaces < indent:
        raise ValueError("a line of the block scalar is indented less than its first line")
    return rest


def _folded(rests: list[str]) -> str:
    """Lines of a folded scalar: a break between two lines that start with no space is a space, and is dropped
    before empty lines; more-indented lines keep theirs."""
    out: list[str] = []
    previous, empty = "", 0
    for rest in rests:
        if not rest:
            empty += 1
            continue
        if previous and previous[0] not in " \t" and rest[0] not in " \t":
            out.append("\n" * empty if empty else " ")
        else:
            out.append("\n" * (empty + bool(previous)))
        out.append(rest)
        previous, empty = rest, 0
    return "".join(out)


class _Line:
    """One entry of the grammar's lines: a dash, a pair or a bare value, with its column (0-based)."""

    __slots__ = ("kind", "column", "line", "key", "value", "has_value", "plain", "blank_before")

    def __init__(self, kind: str, column: int, line: int, key: str = "") -> None:
        self.kind, self.column, self.line, self.key = kind, column, line, key
        self.value: Any = None
        self.plain: str | None = None
        self.has_value, self.blank_before = False, 0

    def holding(self, value: Any, plain: str | None = None) -> _Line:
        self.value, self.plain, self.has_value = value, plain, True
        return self


class _Flow:
    """A flow collection's value and where it starts."""

    __slots__ = ("value", "line", "column")

    def __init__(self, value: Any, opening: Token) -> None:
        self.value, self.line, self.column = value, opening.line or 1, opening.column or 1


def _scalar(token: Any) -> tuple[Any, str | None]:
    """A value token → (value, its text when it was a plain scalar)."""
    if isinstance(token, _Flow):
        return token.value, None
    if token.type in ("DOUBLE_QUOTED", "SINGLE_QUOTED"):
        return _unquote(str(token)), None
    return resolve(str(token)), str(token)


class YamlLines(Transformer):
    """A ``yaml_call.lark`` tree (of ``source``) → its lines (dashes, pairs, values) with their columns, in order.

    The line numbers are the source's, which has a line break put before the text.
    """

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        #: the flow mappings that give a key twice (the last value counts, as in a block mapping), and where
        self.repeats = Repeats()
        self.problems: list[tuple[int, int, str]] = []

    def flow_seq(self, items: list) -> _Flow:
        return _Flow([_scalar(item)[0] for item in items[1:] if getattr(item, "type", "") != "NL"], items[0])

    def flow_map(self, items: list) -> _Flow:
        table: dict[str, Any] = {}
        for key, value in (item for item in items[1:] if isinstance(item, tuple)):
            if key in table:
                self.repeats.record(table, (key,))
                self.problems.append(((items[0].line or 2) - 1, items[0].column or 1,
                                      f"key {key!r} is given twice; the last one counts"))
            table[key] = value
        return _Flow(table, items[0])

    def flow_pair(self, items: list) -> tuple[Any, Any]:
        values = [item for item in items if getattr(item, "type", "") != "NL"]
        if not isinstance(values[0], Token):  # a collection as a key: YAML allows it, a call's arguments cannot
            raise GrammarFailure("yaml_call", max(values[0].line - 1, 1), values[0].column, ("a scalar key",),
                                 "a collection used as a key")
        return _unquote(str(values[0])), _scalar(values[1])[0] if len(values) > 1 else None

    def key(self, items: list) -> Token:
        token: Token = items[0]
        return token

    def entry(self, items: list) -> _Line:
        first = items[0]
        if isinstance(first, Token) and first.type in ("KEY", "QUOTED_KEY"):
            pair = _Line("pair", (first.column or 1) - 1, first.line or 1, _unquote(str(first).rstrip()[:-1].rstrip()))
            return pair.holding(*_scalar(items[1])) if len(items) > 1 else pair
        return _Line("value", (first.column or 1) - 1, first.line or 1).holding(*_scalar(first))

    def item(self, items: list) -> list[_Line]:
        return [_Line("dash", (part.column or 1) - 1, part.line or 1) if isinstance(part, Token) else part
                for part in items]

    def start(self, children: list) -> list[_Line]:
        out: list[_Line] = []
        blank = 0
        for child in children:
            if isinstance(child, Token) and child.type == "NL":
                blank = max(child.count("\n") - 1, 0)
                continue
            lines = _block_lines(child, self.source) if isinstance(child, Token) else child
            for line in lines:
                line.blank_before = blank
            out.extend(lines)
            blank = 0
        return out


_BLOCK_COLON = re.compile(r"[ \t]*:[ \t]+[|>][-+1-9]{0,2}[ \t]*(?:#.*)?$")


def _block_lines(token: Token, source: str) -> list[_Line]:
    """A BLOCK_PAIR, BLOCK_ITEM_PAIR or BLOCK_ITEM token → its dash (for an item) and its pair or value."""
    raw = str(token).split("\n")
    first = 1  # the header's line (blank and comment lines before it are part of the token)
    while first < len(raw) - 1 and raw[first].strip()[:1] in ("", "#"):
        first += 1
    head, body = raw[first], raw[first + 1:]
    end = token.end_pos or 0
    content = "\n".join(body) + ("\n" if body and source[end:end + 1] == "\n" else "")
    line_no = (token.line or 1) + first  # (in the source; the header's line in the text itself, plus one)
    indent = len(head) - len(head.lstrip(" "))
    rest = head[indent:]
    out: list[_Line] = []
    key = None
    if token.type != "BLOCK_PAIR":  # an item: its dash, then the block scalar (BLOCK_ITEM) or a pair
        out.append(_Line("dash", indent, line_no))
        gap = len(rest) - len(rest[1:].lstrip())
        column, header = indent + gap, rest[1:]
    if token.type != "BLOCK_ITEM":
        if token.type == "BLOCK_ITEM_PAIR":
            indent, rest = indent + gap, rest[gap:]
        found = _BLOCK_COLON.search(rest)
        colon = rest.index(":", found.start()) if found else rest.rfind(":")
        key, column, header = _unquote(rest[:colon].rstrip()), indent, rest[colon + 1:]
    try:
        value = block_scalar(header.split("#", 1)[0].strip(), content, indent)
    except ValueError as err:
        raise GrammarFailure("yaml_call", line_no, indent + 1, ("lines indented like the first",), str(err)) from None
    out.append(_Line("value" if key is None else "pair", column, line_no, key or "").holding(value))
    return out


class _Nester:
    """Nests the lines by their columns into mappings, sequences and scalars (block YAML's rules)."""

    def __init__(self, lines: list[_Line], repeats: Repeats) -> None:
        self.lines, self.i, self.repeats = lines, 0, repeats
        self.problems: list[tuple[int, int, str]] = []

    def document(self) -> Any:
        if not self.lines:
            return None
        value = self.node(-1)
        if self.i < len(self.lines):
            line = self.lines[self.i]
            raise GrammarFailure("yaml_call", line.line, line.column + 1, ("a line at an indentation that fits",),
                                 "a line indented deeper than the one before allows")
        return value

    def _next(self) -> _Line | None:
        return self.lines[self.i] if self.i < len(self.lines) else None

    def node(self, parent: int) -> Any:
        line = self.lines[self.i]
        if line.kind == "dash":
            return self.sequence(line.column)
        if line.kind == "pair":
            return self.mapping(line.column)
        self.i += 1
        return self.fold(line, parent)

    def fold(self, line: _Line, parent: int) -> Any:
        """A plain scalar continued on deeper lines (YAML folds the line breaks into spaces)."""
        if line.plain is None:
            return line.value
        text = line.plain
        while (nxt := self._next()) is not None and nxt.kind == "value" and nxt.plain is not None and \
                nxt.column > parent and nxt.line != line.line:
            text += ("\n" * nxt.blank_before if nxt.blank_before else " ") + nxt.plain
            self.i += 1
        return resolve(text) if text is not line.plain else line.value

    def sequence(self, column: int) -> list:
        items: list[Any] = []
        while (line := self._next()) is not None and line.kind == "dash" and line.column == column:
            self.i += 1
            nxt = self._next()
            items.append(self.node(column) if nxt is not None and (nxt.line == line.line or nxt.column > column)
                         else None)
        return items

    def mapping(self, column: int) -> dict:
        table: dict[str, Any] = {}
        while (line := self._next()) is not None and line.kind == "pair" and line.column == column:
            self.i += 1
            nxt = self._next()
            if line.has_value:
                value = self.fold(line, column)
            elif nxt is not None and (nxt.column > column or (nxt.kind == "dash" and nxt.column == column)):
                value = self.node(column)
            else:
                value = None
            if line.key in table:
                self.problems.append((line.line, line.column + 1, f"key {line.key!r} is given twice; the last one "
                                                                  "counts"))
                self.repeats.record(table, (line.key,))
            table[line.key] = value
        return table


def by_grammar(text: str) -> tuple[Any, list[str], Repeats]:
    """One YAML document read by the grammar: the document, notes on it (a key given twice) and the mappings that
    give a key twice; a :class:`~toolform_rules.grammar.GrammarFailure` where it stops.

    >>> by_grammar("a: Note: bring ID\\nb:\\n  - 1\\n  - x\\na: |\\n  two\\n  lines\\n")[:2]
    ({'a': 'two\\nlines\\n', 'b': [1, 'x']}, ["line 5, column 1: key 'a' is given twice; the last one counts"])
    """
    source = "\n" + text.replace("\r\n", "\n")  # so that every line starts with its line break
    try:
        tree = parse("yaml_call", source)
    except GrammarFailure as failure:
        raise GrammarFailure(failure.grammar, max(failure.line - 1, 1), failure.column, failure.expected,
                             failure.found) from None
    reader = YamlLines(source)
    lines = transform(reader, tree)
    for line in lines:
        line.line -= 1
    nester = _Nester(lines, reader.repeats)
    document = nester.document()
    problems = sorted(reader.problems + nester.problems)
    return document, [f"line {line}, column {column}: {what}" for line, column, what in problems], nester.repeats


# ---------------------------------------------------------------------------------------------
# finding the YAML in a reply

_CALL_START = re.compile(r"(?i)(?:- +)?(?:name|tool|tool_name|function|calls?|tool_calls?)[ \t]*:(?=[ \t]|$)")
_TOP_KEY = re.compile(r"[^\s#\-][^:\n]*:(?=[ \t]|$)|\"[^\"\n]*\"[ \t]*:|'[^'\n]*'[ \t]*:")
_NAME_KEY = re.compile(r"(?i)(?:name|tool|tool_name|function)[ \t]*:(?=[ \t]|$)")
# a later line that _CALL_START takes (on a line, "$" is the line's end), found in C from its line break
_NEXT_CALL_LINE = re.compile(r"\n(?i:(?:- +)?(?:name|tool|tool_name|function|calls?|tool_calls?)[ \t]*:)(?=[ \t]|\n|\Z)")
# prose, then on the same line a name and on the next line the arguments ("Sure! name: f\narguments:")
_LEAD_IN = re.compile(r"(?i)[.!?:][ \t]+(?=(?:name|tool|tool_name|function)[ \t]*:[ \t][^\n]*\n"
                      r"(?:arguments|args|parameters|input)[ \t]*:)")


def _first_call_line(text: str, start: int, end: int) -> int:
    """Where the first line of ``text[start:end]`` that ``_CALL_START`` takes starts, or where a call starts after
    prose on an earlier line (``_LEAD_IN``), or -1."""
    first_end = text.find("\n", start, end)
    if first_end < 0:
        first_end = end
    if _CALL_START.match(text, start, first_end) is not None:
        return start
    found = _NEXT_CALL_LINE.search(text, first_end, end)
    line = found.start() + 1 if found is not None else end
    lead_in = _LEAD_IN.search(text, start, line)
    return lead_in.end() if lead_in is not None else line if found is not None else -1


_BLANK, _SEPARATOR, _NAME, _CONTENT, _PROSE = range(5)


def _line_kind(line: str) -> int:
    stripped = line.strip()
    if stripped in ("---", "..."):
        return _SEPARATOR
    if not stripped:
        return _BLANK
    if stripped[0] == "#" or line[0] in " \t" or line.startswith("- ") or line == "-":
        return _CONTENT
    if _TOP_KEY.match(line):
        return _NAME if _NAME_KEY.match(line) else _CONTENT
    return _PROSE


def _documents(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The YAML documents in ``text[start:end]``: from its first call on, split at ``---`` and at a repeated
    ``name:``, to the first line of prose; each ends with its last line's break (a block scalar's text
    depends on it)."""
    at = _first_call_line(text, start, end)
    if at < 0:
        return []
    spans: list[tuple[int, int]] = []
    begin = stop = pos = at  # the document gathered: where it starts, where its last line ends
    named = False
    for line in text[at:end].split("\n"):
        line_start, pos = pos, pos + len(line) + 1
        kind = _line_kind(line)
        if kind == _PROSE:
            break
        if kind == _SEPARATOR or (kind == _NAME and named):  # (a second call written after the first)
            spans.append((begin, stop))
            begin = stop = pos if kind == _SEPARATOR else line_start
            named = False
        named = named or kind == _NAME
        if kind in (_NAME, _CONTENT):
            stop = line_start + len(line)
    spans.append((begin, stop))
    return [(s, e + 1 if e < end and text[e] == "\n" else e) for s, e in spans if text[s:e].strip()]


def _only_fences(outside: str) -> bool:
    """Whether the reply around the documents is only white space, fence marks and ``---``."""
    return only_fences(outside) or ("-" in outside and only_fences("".join(outside.split()).replace("---", "")))


_TYPE_NAMES = {bool: "boolean", int: "integer", float: "number", type(None): "null"}


def _cut_at_a_sentence(name: str, arguments: dict[str, Any], body: str, tools: Toolset | None) -> str | None:
    """The lenient step: a last value written with words after it ("601 Done.": YAML reads a string) cut where a
    sentence starts, when the tool's schema types its parameter (not as text) and the value's first word is
    of that type; the words left out, or ``None``."""
    key, value = next(reversed(arguments.items()), (None, None))
    if not isinstance(value, str) or " " not in value or not body.rstrip().endswith(value):
        return None
    word, _, words = value.partition(" ")
    tool = tool_of(tools, name) if words[:1].isalpha() else None
    schema = next((p.schema for p in tool.parameters.properties if canonical_name(p.name) == canonical_name(key)),
                  None) if tool is not None else None
    if schema is None or not schema.types or "string" in schema.types:
        return None
    typed = resolve(word)
    kind = _TYPE_NAMES.get(type(typed))
    if kind is None or not (kind in schema.types or (kind == "integer" and "number" in schema.types)):
        return None
    arguments[key] = typed  # type: ignore[index]
    return words


def _relined(problem: str, lines_before: int) -> str:
    head, _, rest = problem.partition(",")
    return f"line {int(head.split()[1]) + lines_before},{rest}"


class YamlCall(Protocol):
    info = ProtocolInfo(id="yaml_call", name="YAML call block",
                        description="The call as a small YAML document: a name key and an arguments mapping; several "
                                    "calls as a YAML list.")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if len(calls) == 1:
            return self._render(calls[0], "")
        return "\n".join("- " + self._render(call, "  ") for call in calls)

    @staticmethod
    def _render(call: ToolCall, indent: str) -> str:
        if not call.arguments:
            return f"name: {yaml_key(call.name)}\n{indent}arguments: {{}}"
        lines = [f"name: {yaml_key(call.name)}", f"{indent}arguments:"]
        lines.extend(f"{indent}  {yaml_key(str(key))}: {yaml_flow(value, top=True)}"
                     for key, value in call.arguments.items())
        return "\n".join(lines)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        regions = [(start, end) for start, end, language in fenced_blocks(text, limit=20)
                   if language.lower() in ("yaml", "yml", "")] if "```" in text else []
        documents = [doc for start, end in regions or [(0, len(text))] for doc in _documents(text, start, end)]
        if not documents:
            return Extraction((), ("no YAML naming a tool (a name: key) was found",), False)
        calls: list[RawCall] = []
        notes: list[str] = []
        budget, line_of = GrammarBudget.of(limits), LineCounter(text)
        for start, end in documents[:100]:
            found = read_document(text, start, end, (by_libyaml,), by_grammar, budget, "yaml_call", "the YAML")
            if isinstance(found, str):
                notes.append(found)
                continue
            document, problems, repeats = found
            notes.extend(_relined(problem, line_of(start)[0] - 1) for problem in problems)
            read = calls_from_document(document)
            if not read:
                notes.append("line {}: the YAML names no tool".format(line_of(start)[0]))
            for name, arguments in read or ():
                words = _cut_at_a_sentence(name, arguments, text[start:end], tools)
                if words is not None:
                    notes.append(f"words after the YAML were ignored: {excerpt(words)}")
                calls.append(RawCall(name, arguments, (start, end), repeats.of(arguments) if repeats else ()))
        outside = "".join(text[a[1]:b[0]] for a, b in zip([(0, 0)] + documents, documents + [(len(text), 0)]))
        return Extraction(tuple(calls), tuple(notes), bool(calls) and not notes and _only_fences(outside))

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with YAML only: a name: line with the tool's name, then arguments: with one indented "
                "line per argument. Put strings in double quotes; write numbers and true/false as they are, "
                "lists as [ ... ] and objects as { ... }. For several calls, make a YAML list with one '- name:' "
                "item per call.\nname: tool_name\narguments:\n  argument: \"value\"")


PROTOCOL = YamlCall()
