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

Fast paths: the rendered shape is read by regular expressions and ``json``; other documents by
libyaml (``yaml.CSafeLoader``'s parser), whose events this module builds into values with the
same typing rules; a document with anchors, aliases or tags, or that libyaml refuses, goes to
the grammar.  Nothing is ever constructed from a tag, so no loader can run code.

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
from typing import Any, Iterable, Sequence

import yaml

from ..calls import ToolCall
from ..grammar import GrammarFailure, Token, Transformer, Tree, parse
from ..limits import Limits
from ..schema.names import canonical_name
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from .duplicates import Repeats
from .markup_family import (STRICT_JSON, UNREAD, LineCounter, calls_from_document, excerpt, fenced_blocks, flow_text,
                            only_fences, read_document, unescape)
from .reading import GrammarBudget, tool_of

# ---------------------------------------------------------------------------------------------
# typing plain scalars (both readers)

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
    if text in _TRUES:
        return True
    if text in _FALSES:
        return False
    if text[0] in _NUMBER_START:
        if _INT.fullmatch(text):
            return int(text)
        if _BASED_INT.fullmatch(text):
            return int(text, 0)
        if _FLOAT.fullmatch(text) and any(ch.isdigit() for ch in text):
            return float(text)
        inf = _INF.fullmatch(text)
        if inf is not None:
            return -math.inf if inf.group(1) == "-" else math.inf
        if _NAN.fullmatch(text):
            return math.nan
    return text


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


def yaml_string(text: str) -> str:
    """A double-quoted YAML scalar for ``text`` (every character that needs it escaped).

    >>> print(yaml_string('say "hi"\\n\\u2028\\x7f'))
    "say \\"hi\\"\\n\\L\\x7F"
    """
    if all(_printable(ch) and ch not in '\\"' for ch in text):
        return f'"{text}"'
    out = []
    for ch in text:
        if ch in _ESCAPES_OUT:
            out.append(_ESCAPES_OUT[ch])
        elif _printable(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(f"\\u{ord(ch):04X}")
    return '"' + "".join(out) + '"'


def yaml_key(key: str) -> str:
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
# reading: libyaml's events

class _Loader(yaml.CSafeLoader):
    """libyaml's parser; nothing here resolves or constructs (the events are read by ``_from_events``)."""


class _NotPlain(Exception):
    """An event the grammar does not read (anchor, alias, tag, a second document)."""


_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
_DOCUMENT, _ALIAS, _STREAM_END = yaml.DocumentStartEvent, yaml.AliasEvent, yaml.StreamEndEvent


def _from_events(text: str) -> Any:
    loader = _Loader(text)
    try:
        return _build(loader.get_event)
    finally:
        loader.dispose()


def _build(get_event: Any) -> Any:
    stack: list[Any] = []  # the open collections
    keys: list[Any] = []  # for each, the key waiting for its value (or _NO_KEY)
    result: Any = None
    documents = 0
    while True:
        event = get_event()
        kind = type(event)
        if kind is _SCALAR:
            if event.anchor is not None or event.tag is not None:
                raise _NotPlain
            value: Any = event.value
            if event.implicit[0] and not event.style and not (stack and keys[-1] is _NO_KEY and
                                                               type(stack[-1]) is dict):
                value = resolve(value)
        elif kind is _MAPPING or kind is _SEQUENCE:
            if event.anchor is not None or event.tag is not None:
                raise _NotPlain
            if stack and keys[-1] is _NO_KEY and type(stack[-1]) is dict:
                raise _NotPlain  # a complex key
            stack.append({} if kind is _MAPPING else [])
            keys.append(_NO_KEY)
            continue
        elif kind in _ENDS:
            value = stack.pop()
            keys.pop()
        elif kind is _DOCUMENT:
            documents += 1
            if documents > 1:
                raise _NotPlain
            continue
        elif kind is _STREAM_END:
            return result
        elif kind is _ALIAS:
            raise _NotPlain
        else:
            continue
        if not stack:
            result = value
        elif type(stack[-1]) is list:
            stack[-1].append(value)
        elif keys[-1] is _NO_KEY:
            keys[-1] = value
        else:
            if keys[-1] in stack[-1]:
                raise _NotPlain  # a key given twice: the grammar notes it
            stack[-1][keys[-1]] = value
            keys[-1] = _NO_KEY


_NO_KEY = object()


def _by_libyaml(text: str) -> Any:
    """The document when libyaml reads ``text`` as a plain document, else :data:`UNREAD`."""
    try:
        return _from_events(text)
    except (yaml.YAMLError, _NotPlain, RecursionError, ValueError, TypeError):
        return UNREAD


# ---------------------------------------------------------------------------------------------
# reading: the rendered shape

# a double-quoted scalar that reads the same as a JSON string (printable characters, JSON's escapes)
_JSON_STRING = (r'"(?:[^"\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]++'
                r'|\\["\\/bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4})*+"')
# a key, and a value, that read the same in YAML and in JSON (a plain key, a JSON string; a JSON number,
# true/false/null as YAML writes them, a flow collection — JSON's, or json refuses it)
_KEY = rf"[A-Za-z_][A-Za-z0-9_.-]*+|{_JSON_STRING}"
_VALUE = rf"(?:{_JSON_STRING}|-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?|[Tt]rue|[Ff]alse|null|[{{\[][^\n]*+)"
# a call as the renderer writes it: ``name:``, ``arguments:`` and one ``key: value`` line an argument
# (indented two more in a list item); groups: the item's dash, the name, ``{}``, the argument lines
_CALL = re.compile(rf"(- )?name: ({_KEY})\n(?(1)  )arguments:( \{{\}})?((?:\n(?(1)  )  (?:{_KEY}): {_VALUE}(?=\n|\Z))*+)")
# an argument line: its key (plain or a JSON string) and, after it, its value
_LINE_KEY = re.compile(rf'\n +(?:([A-Za-z_][A-Za-z0-9_.-]*+)|({_JSON_STRING})): ')
# characters YAML reads differently from JSON inside a flow collection (line breaks, unprintables)
_FLOW_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB]")
_WORDS = {"True": "true", "False": "false"}


def _call_json(found: re.Match[str]) -> str | None:
    """A call ``_CALL`` matched, as JSON text (the same value), or ``None`` when YAML reads it otherwise."""
    name, empty, lines = found.group(2, 3, 4)
    if name[0] != '"':
        if not isinstance(resolve(name), str):  # (True, null: not a name)
            return None
        name = '"' + name + '"'
    if empty or not lines:  # "arguments: {}"; "arguments:" and nothing under it: null
        return None if lines else '{"name": ' + name + ', "arguments": ' + ("{}" if empty else "null") + "}"
    if (("{" in lines or "[" in lines) and _FLOW_UNSAFE.search(lines)) or (
            "\\u" in lines and _SURROGATE_ESCAPE.search(lines)):
        return None
    parts = _LINE_KEY.split(lines)
    keys = map('"{}"'.format, parts[1::3]) if not any(parts[2::3]) else [
        quoted or '"' + plain + '"' for plain, quoted in zip(parts[1::3], parts[2::3])]
    values = parts[3::3]
    return ('{"name": ' + name + ', "arguments": {' + ", ".join(map("{}: {}".format, keys, map(_WORDS.get, values, values)))
            + "}}")


def _canonical(body: str) -> Any:
    """The rendered shape (``name:``, ``arguments:`` and one ``key: value`` line each, or a list of those),
    rewritten as one JSON text and read by ``json``; :data:`UNREAD` for anything else.
    """
    calls: list[str] = []
    pos, n, listed = 0, len(body.rstrip("\n")), body[:2] == "- "
    while True:
        found = _CALL.match(body, pos)
        call = _call_json(found) if found is not None and (found.group(1) is not None) == listed else None
        if call is None:
            return UNREAD
        calls.append(call)
        pos = found.end()  # type: ignore[union-attr]
        if pos >= n or not listed or not body.startswith("\n- name: ", pos):
            break
        pos += 1
    if pos < n:
        return UNREAD
    try:
        return STRICT_JSON.decode("[" + ", ".join(calls) + "]" if listed else calls[0])
    except (ValueError, RecursionError):
        return UNREAD


# ---------------------------------------------------------------------------------------------
# reading: the grammar

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


class _Line:
    """One entry of the grammar's lines: a dash, a pair or a bare value, with its column."""

    __slots__ = ("kind", "column", "line", "key", "value", "has_value", "plain", "blank_before")

    def __init__(self, kind: str, column: int, line: int, key: str = "", value: Any = None, has_value: bool = False,
                 plain: str | None = None, blank_before: int = 0) -> None:
        self.kind, self.column, self.line, self.key = kind, column, line, key
        self.value, self.has_value, self.plain, self.blank_before = value, has_value, plain, blank_before


class _Flow:
    """A flow collection's value and where it starts."""

    __slots__ = ("value", "line", "column")

    def __init__(self, value: Any, opening: Token) -> None:
        self.value, self.line, self.column = value, opening.line or 1, opening.column or 1


def _scalar(token: Any) -> tuple[Any, str | None]:
    """A value token → (value, its plain text when it was a plain scalar)."""
    if isinstance(token, _Flow):
        return token.value, None
    if isinstance(token, Token):
        text = str(token)
        if token.type == "DOUBLE_QUOTED":
            return yaml_unescape(text[1:-1]), None
        if token.type == "SINGLE_QUOTED":
            return text[1:-1].replace("''", "'"), None
        return resolve(text), text
    return token, None


def _key_text(token: Token) -> str:
    text = str(token).rstrip()[:-1].rstrip()
    if token.type == "QUOTED_KEY":
        return yaml_unescape(text[1:-1]) if text[0] == '"' else text[1:-1].replace("''", "'")
    return text


def block_scalar(header: str, content: str, parent_indent: int) -> str:
    r"""The text of a literal (``|``) or folded (``>``) block scalar, as YAML defines it.

    ``content`` is the text after the header line's break (its own final break included
    when the source has one); ``parent_indent`` is the column of the key.

    >>> block_scalar("|", "  one\n    two\n\n  three\n", 0)
    'one\n  two\n\nthree\n'
    >>> block_scalar(">-", "  one\n  two\n\n  three\n", 0)
    'one two\nthree'
    """
    folded = header[:1] == ">"
    chomping = "+" if "+" in header else ("-" if "-" in header else "")
    digits = [ch for ch in header if ch.isdigit()]
    lines = content.split("\n")
    final_break = content.endswith("\n")
    if final_break:
        lines.pop()
    if digits:
        indent = parent_indent + int(digits[0])
    else:
        widest = 0
        for line in lines:
            spaces = len(line) - len(line.lstrip(" "))
            widest = max(widest, spaces)
            if spaces < len(line):
                break
        indent = max(parent_indent + 1, widest)
    chunks: list[str] = []
    breaks: list[str] = []
    line_break = ""
    previous_non_space = False
    started = False
    last = len(lines) - 1
    for i, line in enumerate(lines):
        has_break = i < last or final_break
        spaces = len(line) - len(line.lstrip(" "))
        rest = line[min(spaces, indent):]
        if not rest:  # an empty line
            if has_break:
                breaks.append("\n")
            continue
        if spaces < indent:
            raise ValueError("a line of the block scalar is indented less than its first line")
        non_space = rest[0] not in " \t"
        if started:
            if folded and line_break == "\n" and previous_non_space and non_space:
                if not breaks:
                    chunks.append(" ")
            else:
                chunks.append(line_break)
        chunks.extend(breaks)
        breaks = []
        chunks.append(rest)
        line_break = "\n" if has_break else ""
        previous_non_space = non_space
        started = True
    if not started:
        return "".join(breaks) if chomping == "+" else ""
    if chomping != "-":
        chunks.append(line_break)
    if chomping == "+":
        chunks.extend(breaks)
    return "".join(chunks)


class YamlLines(Transformer):
    """A ``yaml_call.lark`` tree → its lines (dashes, pairs, values) with their columns, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.failure: GrammarFailure | None = None
        #: the flow mappings that give a key twice (the last value counts, as in a block mapping), and where
        self.repeats = Repeats()
        self.problems: list[tuple[int, int, str]] = []

    def flow_seq(self, items: list) -> _Flow:
        values = [_scalar(item)[0] for item in items[1:] if not (isinstance(item, Token) and item.type == "NL")]
        return _Flow(values, items[0])

    def flow_map(self, items: list) -> _Flow:
        table: dict[str, Any] = {}
        for item in items[1:]:
            if isinstance(item, tuple):
                if item[0] in table:
                    self.repeats.record(table, (item[0],))
                    opening = items[0]  # (the source's first line is the one put before the text)
                    self.problems.append(((opening.line or 2) - 1, opening.column or 1,
                                          f"key {item[0]!r} is given twice; the last one counts"))
                table[item[0]] = item[1]
        return _Flow(table, items[0])

    def flow_pair(self, items: list) -> tuple[Any, Any]:
        values = [item for item in items if not (isinstance(item, Token) and item.type == "NL")]
        key = values[0]
        if isinstance(key, Token):
            text = str(key)
            key = (yaml_unescape(text[1:-1]) if key.type == "DOUBLE_QUOTED" else
                   text[1:-1].replace("''", "'") if key.type == "SINGLE_QUOTED" else text)
        else:  # a collection as a key: YAML allows it, a call's arguments cannot hold it
            if self.failure is None:
                self.failure = GrammarFailure("yaml_call", max(key.line - 1, 1), key.column, ("a scalar key",),
                                              "a collection used as a key")
            key = ""
        value = _scalar(values[1])[0] if len(values) > 1 else None
        return key, value

    def item(self, items: list) -> list:
        return items

    def key(self, items: list) -> Token:
        token: Token = items[0]
        return token

    def entry(self, items: list) -> list:
        return items


def _block_lines(token: Token, source: str) -> list[_Line]:
    """A BLOCK_PAIR or BLOCK_ITEM_PAIR token → its dash (for an item) and its pair."""
    raw_lines = str(token).split("\n")
    first = 1
    while first < len(raw_lines) - 1 and (not raw_lines[first].strip() or raw_lines[first].lstrip().startswith("#")):
        first += 1
    head = raw_lines[first]
    end = token.end_pos or 0
    content = "\n".join(raw_lines[first + 1:])
    if first + 1 < len(raw_lines):
        content += "\n" if source[end:end + 1] == "\n" else ""
    line_no = (token.line or 1) + first  # in the text with the extra line break before it
    indent = len(head) - len(head.lstrip(" "))
    rest = head[indent:]
    out: list[_Line] = []
    if token.type == "BLOCK_ITEM":  # "- |": the item is the block scalar
        header = rest[1:].strip()
        if "#" in header:
            header = header.split("#", 1)[0].strip()
        try:
            value = block_scalar(header, content, indent)
        except ValueError as err:
            raise GrammarFailure("yaml_call", line_no, indent + 1, ("lines indented like the first",),
                                 str(err)) from None
        column = indent + len(rest) - len(rest[1:].lstrip())
        return [_Line("dash", indent, line_no), _Line("value", column, line_no, value=value, has_value=True)]
    if token.type == "BLOCK_ITEM_PAIR":
        out.append(_Line("dash", indent, line_no))
        gap = 1 + len(rest[1:]) - len(rest[1:].lstrip(" "))
        indent += gap
        rest = rest[gap:]
    colon = _block_colon(rest)
    key = rest[:colon].rstrip()
    if key[:1] in ("'", '"'):
        key = yaml_unescape(key[1:-1]) if key[0] == '"' else key[1:-1].replace("''", "'")
    header = rest[colon + 1:].strip()
    if "#" in header:
        header = header.split("#", 1)[0].strip()
    try:
        value = block_scalar(header, content, indent)
    except ValueError as err:  # (line_no is the header's line in the text itself, plus one: the next line)
        raise GrammarFailure("yaml_call", line_no, indent + 1, ("lines indented like the first",), str(err)) from None
    out.append(_Line("pair", indent, line_no, key=key, value=value, has_value=True))
    return out


def _block_colon(rest: str) -> int:
    """Where the ``:`` before a block indicator is in ``key: |``."""
    found = re.search(r"[ \t]*:[ \t]+[|>][-+1-9]{0,2}[ \t]*(?:#.*)?$", rest)
    return rest.index(":", found.start()) if found else rest.rfind(":")


def _lines(tree: Tree, source: str) -> list[_Line]:
    """The tree's lines in order, each entry at its column."""
    out: list[_Line] = []
    blank = 0
    for child in tree.children:
        if isinstance(child, Token):
            if child.type == "NL":
                blank = max(child.count("\n") - 1, 0)
            else:  # a block pair
                out.extend(_block_lines(child, source))
                blank = 0
            continue
        parts: Any = child  # an item (the transformer made it a list): dashes then an entry
        for part in parts:
            if isinstance(part, Token) and part.type == "DASH":
                out.append(_Line("dash", (part.column or 1) - 1, part.line or 1, blank_before=blank))
                continue
            entry = part
            first = entry[0]
            if isinstance(first, Token) and first.type in ("KEY", "QUOTED_KEY"):
                line = _Line("pair", (first.column or 1) - 1, first.line or 1, key=_key_text(first),
                             blank_before=blank)
                if len(entry) > 1:
                    line.value, line.plain = _scalar(entry[1])
                    line.has_value = True
            else:
                line = _Line("value", (first.column or 1) - 1, first.line or 1, blank_before=blank)
                line.value, line.plain = _scalar(first)
                line.has_value = True
            out.append(line)
        blank = 0
    return out


class _Nester:
    """Nests the lines by their columns into mappings, sequences and scalars (block YAML's rules)."""

    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines
        self.i = 0
        self.problems: list[tuple[int, int, str]] = []
        self.repeats = Repeats()

    def fail(self, line: _Line, what: str) -> GrammarFailure:
        return GrammarFailure("yaml_call", line.line, line.column + 1, ("a line at an indentation that fits",), what)

    def document(self) -> Any:
        if not self.lines:
            return None
        value = self.node(-1)
        if self.i < len(self.lines):
            line = self.lines[self.i]
            raise self.fail(line, "a line indented deeper than the one before allows")
        return value

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
        folded = False
        while self.i < len(self.lines):
            nxt = self.lines[self.i]
            if nxt.kind != "value" or nxt.plain is None or nxt.column <= parent or nxt.line == line.line:
                break
            text += ("\n" * nxt.blank_before if nxt.blank_before else " ") + nxt.plain
            folded = True
            self.i += 1
        return resolve(text) if folded else line.value

    def sequence(self, column: int) -> list:
        items: list[Any] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.kind != "dash" or line.column != column:
                break
            self.i += 1
            if self.i < len(self.lines) and (self.lines[self.i].line == line.line or
                                             self.lines[self.i].column > column):
                items.append(self.node(column))
            else:
                items.append(None)
        return items

    def mapping(self, column: int) -> dict:
        table: dict[str, Any] = {}
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.kind != "pair" or line.column != column:
                break
            self.i += 1
            if line.has_value:
                value = self.fold(line, column)
            elif self.i < len(self.lines) and (self.lines[self.i].column > column or (
                    self.lines[self.i].kind == "dash" and self.lines[self.i].column == column)):
                value = self.node(column)
            else:
                value = None
            if line.key in table:
                self.problems.append((line.line, line.column + 1, f"key {line.key!r} is given twice; the last one "
                                                                  "counts"))
                self.repeats.record(table, (line.key,))
            table[line.key] = value
        return table


def _by_grammar(text: str) -> tuple[Any, list[str], Repeats]:
    """The document by the grammar: ``text`` with a line break put before it, so every line starts with one.
    Also the mappings that give a key twice."""
    source = "\n" + text.replace("\r\n", "\n")
    try:
        tree = parse("yaml_call", source)
    except GrammarFailure as failure:
        raise GrammarFailure(failure.grammar, max(failure.line - 1, 1), failure.column, failure.expected,
                             failure.found) from None
    transformer = YamlLines()
    lines = _lines(transformer.transform(tree), source)
    if transformer.failure is not None:
        raise transformer.failure
    for line in lines:
        line.line -= 1
    nester = _Nester(lines)
    document = nester.document()
    nester.repeats.merge(transformer.repeats)
    problems = sorted(transformer.problems + nester.problems)
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
    """Where the first line of ``text[start:end]`` (split at line feeds) that ``_CALL_START`` takes starts, or
    where a call starts after prose on an earlier line (``_LEAD_IN``), or -1."""
    first_end = text.find("\n", start, end)
    if first_end < 0:
        first_end = end
    if _CALL_START.match(text, start, first_end) is not None:
        return start
    found = _NEXT_CALL_LINE.search(text, first_end, end)
    line = found.start() + 1 if found is not None else end
    lead_in = _LEAD_IN.search(text, start, line)
    return lead_in.end() if lead_in is not None else line if found is not None else -1


def _documents(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The YAML documents in ``text[start:end]``: its region split at ``---`` and at a repeated ``name:``."""
    at = _first_call_line(text, start, end)
    if at < 0:
        return []
    lines = text[at:end].split("\n")  # the region's lines from the first call on (those before it are not read)
    offsets: list[int] = []  # where each line looked at starts
    pos = at
    first = 0
    documents: list[tuple[int, int]] = []
    doc_start = first
    last = first
    seen_name = False
    for i in range(first, len(lines)):
        line = lines[i]
        offsets.append(pos)
        pos += len(line) + 1
        stripped = line.strip()
        if stripped in ("---", "..."):
            if last >= doc_start and i > doc_start:
                documents.append((offsets[doc_start], offsets[last] + len(lines[last])))
            doc_start, last, seen_name = i + 1, i, False
            continue
        if not stripped or stripped.startswith("#") or line[:1] in (" ", "\t"):
            if stripped:
                last = i
            continue
        if line.startswith("- ") or line == "-":
            last = i
            continue
        if _TOP_KEY.match(line):
            if _NAME_KEY.match(line):
                if seen_name:  # a second call written after the first
                    documents.append((offsets[doc_start], offsets[last] + len(lines[last])))
                    doc_start = i
                seen_name = True
            last = i
            continue
        break  # prose after the YAML
    if last >= doc_start:
        documents.append((offsets[doc_start], offsets[last] + len(lines[last])))
    # a document ends with its last line's break (a block scalar's text depends on it)
    return [(s, e + 1 if e < end and text[e] == "\n" else e) for s, e in documents if text[s:e].strip()]


_NEXT_LINE = re.compile(r"\n(?:[ \t]*\n)*+([^\n]*)")


def _prose_after(text: str, end: int) -> bool:
    """Whether nothing but prose follows a document that ends at ``end`` (:func:`_documents` would end it there)."""
    found = _NEXT_LINE.match(text, end)
    if found is None:
        return end == len(text)
    line = found.group(1)
    stripped = line.strip()
    return not stripped or not (stripped in ("---", "...") or stripped[0] == "#" or line[0] in " \t-" or
                                _TOP_KEY.match(line))


def _rendered_reply(text: str) -> Extraction | None:
    """A reply holding one call in the rendered shape, prose around it: its call read by :func:`_call_json` (and
    ``json``) straight from the reply; ``None`` for any other reply."""
    start = _first_call_line(text, 0, len(text)) if "```" not in text else -1
    found = _CALL.match(text, start) if start >= 0 and text.startswith("name: ", start) else None
    call = _call_json(found) if found is not None and _prose_after(text, found.end()) else None
    try:
        document = STRICT_JSON.decode(call) if call is not None else None
    except (ValueError, RecursionError):
        return None
    if document is None:
        return None
    end = found.end() + (text[found.end():found.end() + 1] == "\n")  # type: ignore[union-attr]
    return Extraction((RawCall(document["name"], document["arguments"] or {}, (start, end)),), (),
                      _only_fences(text[:start] + text[end:]))


def _only_fences(outside: str) -> bool:
    """Whether the reply around the documents is only white space, fence marks and ``---``."""
    return only_fences(outside) or ("-" in outside and only_fences("".join(outside.split()).replace("---", "")))


def _cut_at_a_sentence(name: str, arguments: dict[str, Any], body: str, tools: Toolset | None) -> str | None:
    """A last value written with words after it ("601 Done.": libyaml reads a string) cut where a sentence
    starts, when the tool's schema types its parameter (not as text) and the value's first word is of that
    type; the words left out, or ``None``."""
    key, value = next(reversed(arguments.items()), (None, None))
    if not isinstance(key, str) or not isinstance(value, str) or " " not in value or not body.rstrip().endswith(value):
        return None
    word, _, words = value.partition(" ")
    tool = tool_of(tools, name)
    schema = next((p.schema for p in tool.parameters.properties if canonical_name(p.name) == canonical_name(key)),
                  None) if tool is not None else None
    if schema is None or not words[:1].isalpha() or not schema.types or "string" in schema.types:
        return None
    typed = resolve(word)
    kind = {bool: "boolean", int: "integer", float: "number", type(None): "null"}.get(type(typed))
    if kind is None or not (kind in schema.types or (kind == "integer" and "number" in schema.types)):
        return None
    arguments[key] = typed
    return words


class YamlCall(Protocol):
    info = ProtocolInfo(id="yaml_call", name="YAML call block",
                        description="The call as a small YAML document: a name key and an arguments mapping; several "
                                    "calls as a YAML list.")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if len(calls) == 1:
            return self._render(calls[0], "")
        return "\n".join("- " + self._render(call, "  ")[0:] for call in calls)

    def _render(self, call: ToolCall, indent: str) -> str:
        name = call.name if _PLAIN_SAFE.fullmatch(call.name) and isinstance(resolve(call.name), str) else \
            yaml_string(call.name)
        if not call.arguments:
            return f"name: {name}\n{indent}arguments: {{}}"
        lines = [f"name: {name}", f"{indent}arguments:"]
        lines.extend(f"{indent}  {yaml_key(str(key))}: {yaml_flow(value, top=True)}"
                     for key, value in call.arguments.items())
        return "\n".join(lines)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        fast = _rendered_reply(text)
        if fast is not None:
            return fast
        regions: list[tuple[int, int]] = []
        if "```" in text:
            regions = [(start, end) for start, end, language in fenced_blocks(text, limit=20)
                       if language.lower() in ("yaml", "yml", "")]
        documents = [doc for start, end in regions or [(0, len(text))] for doc in _documents(text, start, end)]
        if not documents:
            return Extraction((), ("no YAML naming a tool (a name: key) was found",), False)
        calls: list[RawCall] = []
        notes: list[str] = []
        budget = GrammarBudget.of(limits)
        line_of = LineCounter(text)
        for start, end in documents[:100]:
            found = read_document(text, start, end, (_canonical, _by_libyaml), _by_grammar, budget, "yaml_call",
                                  "the YAML")
            if isinstance(found, str):
                notes.append(found)
                continue
            document, problems, repeats = found
            if problems:
                line0 = line_of(start)[0] - 1
                notes.extend(_relined(problem, line0) for problem in problems)
            read = calls_from_document(document)
            if not read:
                notes.append("line {}: the YAML names no tool".format(line_of(start)[0]))
                continue
            for name, arguments in read:
                words = _cut_at_a_sentence(name, arguments, text[start:end], tools)
                if words is not None:
                    notes.append(f"words after the YAML were ignored: {excerpt(words)}")
                calls.append(RawCall(name, arguments, (start, end), repeats.of(arguments) if repeats else ()))
        covered = sorted(documents)
        outside = text[:covered[0][0]] + "".join(text[a[1]:b[0]] for a, b in zip(covered, covered[1:])) + \
            text[covered[-1][1]:]
        compliant = bool(calls) and not notes and _only_fences(outside)
        return Extraction(tuple(calls), tuple(notes), compliant)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with YAML only: a name: line with the tool's name, then arguments: with one indented "
                "line per argument. Put strings in double quotes; write numbers and true/false as they are, "
                "lists as [ ... ] and objects as { ... }. For several calls, make a YAML list with one '- name:' "
                "item per call.\nname: tool_name\narguments:\n  argument: \"value\"")


def _relined(problem: str, lines_before: int) -> str:
    head, _, rest = problem.partition(",")
    number = int(head.split()[1]) + lines_before
    return f"line {number},{rest}"


PROTOCOL = YamlCall()
