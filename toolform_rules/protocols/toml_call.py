"""toml_call: ``[[call]]`` tables — ``name = "tool"`` and a ``[call.arguments]`` table per call.

Grammar: ``grammars/toml_call.lark`` — TOML 1.0 plus what models write when they mix in
JSON or Python (``"key": value`` and line breaks inside inline tables, ``True``, ``null``).
The document may also be a single call (``name = ...`` and an ``[arguments]`` table) or use
``[[calls]]``/``tool``/``args``; the TOML may stand alone, in a code fence or between prose.

Three readers, fastest first, each taking only what the next would read the same way:
the rendered shape line by line (``json`` for the values), then ``tomllib`` for any strict
TOML, then the Lark grammar for the rest — and for a note on where it stopped.

TOML has no null: ``None`` is written ``null``, which only the grammar reads.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": {"c": [True, "x"]}})])
>>> print(text)
[[call]]
name = "f"
<BLANKLINE>
[call.arguments]
a = 1
b = {c = [true, "x"]}
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': 1, 'b': {'c': [True, 'x']}}
"""

from __future__ import annotations

import datetime
import json
import math
import re
import tomllib
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import GrammarFailure, Transformer, parse
from .markup_family import calls_from_document, fenced_blocks, never_raises, shifted
from .text_family import document_chars, grammar_chars

# ---------------------------------------------------------------------------------------------
# writing

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped.

    >>> print(toml_string('say "hi"\\n\\x00'))
    "say \\"hi\\"\\n\\u0000"
    """
    out = []
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Any) -> str:
    """A value in TOML (inline tables and arrays for the nested ones; ``null`` for None).

    >>> toml_value({"a b": [1, 2.5, None], "c": {}})
    '{"a b" = [1, 2.5, null], c = {}}'
    """
    if isinstance(value, str):
        return toml_string(value)
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
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return toml_string(str(value))


# ---------------------------------------------------------------------------------------------
# reading: the grammar

_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


def _unescape(body: str, multiline: bool) -> str:
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 == n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "uU":
            width = 4 if nxt == "u" else 8
            digits = body[i + 2:i + 2 + width]
            try:
                out.append(chr(int(digits, 16)))
                i += 2 + width
                continue
            except ValueError:
                out.append(nxt)
                i += 2
                continue
        if multiline and nxt in " \t\r\n":  # a line-ending backslash: the line break and the indent go
            j = i + 1
            while j < n and body[j] in " \t":
                j += 1
            if j < n and body[j] in "\r\n":
                while j < n and body[j] in " \t\r\n":
                    j += 1
                i = j
                continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _drop_first_newline(body: str) -> str:
    if body.startswith("\n"):
        return body[1:]
    if body.startswith("\r\n"):
        return body[2:]
    return body


class TomlDocument(Transformer):
    """A ``toml_call.lark`` tree → the document as a dict (what ``tomllib`` gives, dates as text)."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def string(self, items: list) -> str:
        token = items[0]
        text = str(token)
        kind = token.type
        if kind == "BASIC_STRING":
            return _unescape(text[1:-1], False)
        if kind == "LITERAL_STRING":
            return text[1:-1]
        if kind == "ML_BASIC_STRING":
            return _unescape(_drop_first_newline(text[3:-3]), True)
        return _drop_first_newline(text[3:-3])

    def bare_key(self, items: list) -> str:
        return str(items[0])

    def key(self, items: list) -> list[str]:
        return list(items)

    def integer(self, items: list) -> int:
        text = str(items[0]).replace("_", "")
        return int(text, 0) if text[:2].lower() in ("0x", "0o", "0b") else int(text)

    def float(self, items: list) -> float:
        return float(str(items[0]).replace("_", ""))

    def boolean(self, items: list) -> bool:
        return str(items[0]).lower() == "true"

    def datetime(self, items: list) -> str:
        return str(items[0])

    def null(self, _: list) -> None:
        return None

    def array(self, items: list) -> list:
        return list(items)

    def pair(self, items: list) -> tuple[list[str], Any]:
        return items[0], items[1]

    def inline_table(self, items: list) -> dict:
        table: dict[str, Any] = {}
        for key, value in items:
            self._assign(table, key, value)
        return table

    def table(self, items: list) -> tuple[str, list[str]]:
        return "table", items[0]

    def array_table(self, items: list) -> tuple[str, list[str]]:
        return "array", items[0]

    def keyval(self, items: list) -> tuple[str, list[str], Any]:
        return "value", items[0], items[1]

    def _descend(self, node: dict, parts: list[str]) -> dict:
        for part in parts:
            child = node.get(part)
            if isinstance(child, list) and child and isinstance(child[-1], dict):
                node = child[-1]
                continue
            if not isinstance(child, dict):
                if child is not None:
                    self.problems.append(f"{'.'.join(parts)!r} is both a value and a table; the table wins")
                child = node[part] = {}
            node = child
        return node

    def _assign(self, node: dict, key: list[str], value: Any) -> None:
        target = self._descend(node, key[:-1])
        if key[-1] in target:
            self.problems.append(f"key {'.'.join(key)!r} is given twice; the last one counts")
        target[key[-1]] = value

    def start(self, items: list) -> dict:
        root: dict[str, Any] = {}
        current = root
        for item in items:
            if item[0] == "table":
                current = self._descend(root, item[1])
            elif item[0] == "array":
                parent = self._descend(root, item[1][:-1])
                tables = parent.get(item[1][-1])
                if not isinstance(tables, list):
                    if tables is not None:
                        self.problems.append(f"{'.'.join(item[1])!r} is both a table and an array of tables")
                    tables = parent[item[1][-1]] = []
                tables.append({})
                current = tables[-1]
            else:
                self._assign(current, item[1], item[2])
        return root


def _by_grammar(text: str) -> tuple[dict, list[str]]:
    transformer = TomlDocument()
    document: dict = transformer.transform(parse("toml_call", text))
    return document, transformer.problems


# ---------------------------------------------------------------------------------------------
# reading: tomllib and the rendered shape

def _plain(value: Any) -> bool:
    """No dates or times inside (``tomllib`` makes objects of them; the grammar keeps their text)."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not isinstance(value, (datetime.date, datetime.time))


def _by_tomllib(text: str) -> dict | None:
    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None
    return document if _plain(document) else None


_CANONICAL_KEY = re.compile(r'[A-Za-z0-9_-]+|"(?:[^"\\\x00-\x1f\x7f]|\\[btnfr"\\])*"')
_STRINGS = re.compile(r'("(?:[^"\\\x00-\x1f\x7f]|\\[btnfr"\\]|\\u(?![dD][89abAB])[0-9A-Fa-f]{4})*")')
_BARE_KEY_EQUALS = re.compile(r"([A-Za-z0-9_-]+) = ")
_HEADER_LIKE = re.compile(r"\s*\[")
_KEYVAL_LIKE = re.compile(r"""\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
                          r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*\s*=""")


def _reject(name: str) -> Any:
    raise ValueError(name)


def _unique(pairs: list[tuple[str, Any]]) -> dict:
    table = dict(pairs)
    if len(table) != len(pairs):
        raise ValueError("a key is given twice")
    return table


_JSON = json.JSONDecoder(parse_constant=_reject, object_pairs_hook=_unique)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _inline(text: str) -> str:
    """An inline table or array as the renderer writes it, rewritten as JSON text (strings untouched)."""
    parts = _STRINGS.split(text)
    for i in range(0, len(parts), 2):
        part = parts[i]
        if " = " in part:
            if i and part.startswith(" = "):  # after a quoted key
                part = ": " + part[3:]
            pieces = _BARE_KEY_EQUALS.split(part)
            for j in range(1, len(pieces), 2):
                pieces[j] = '"' + pieces[j] + '": '
            parts[i] = "".join(pieces)
    return "".join(parts)


def _canonical(text: str) -> tuple[list, int, int] | None:
    """The rendered shape, rewritten line by line as one JSON text and read by ``json``.

    The values the renderer writes — basic strings, numbers, true/false, inline tables and
    arrays — read the same as JSON once bare keys are quoted and ``=`` is ``:``; what JSON would
    read differently (surrogate escapes, NaN) is left to the other readers.  Returns the call
    tables and where the TOML starts and ends in ``text``.
    """
    start = text.find("[[call]]")
    if start < 0 or (start > 0 and text[start - 1] != "\n"):
        return None
    out: list[str] = ["["]
    in_call = in_arguments = False
    first = True
    pos = end = start
    rest = ""
    for line in text[start:].split("\n"):
        line_end = pos + len(line)
        head = line[:1]
        if not head:
            pass
        elif head == "[":
            if line == "[[call]]":
                if in_arguments:
                    out.append("}")
                out.append("}, {" if in_call else "{")
                in_call, in_arguments, first = True, False, True
            elif line == "[call.arguments]" and in_call and not in_arguments:
                out.append('"arguments": {' if first else ', "arguments": {')
                in_arguments, first = True, True
            else:
                return None
            end = line_end
        elif head == "#":
            end = line_end
        else:
            key, equals, value = line.partition(" = ")
            if not equals or not _CANONICAL_KEY.fullmatch(key):
                if _HEADER_LIKE.match(line) or _KEYVAL_LIKE.match(line):
                    return None
                rest = text[pos:]
                break  # prose after the TOML
            if "\\u" in value and _SURROGATE_ESCAPE.search(value):
                return None
            if value[:1] in ("{", "["):
                value = _inline(value)
            out.append(('"' + key + '": ' if key[0] != '"' else key + ": ") if first else
                       (', "' + key + '": ' if key[0] != '"' else ", " + key + ": "))
            out.append(value)
            first = False
            end = line_end
        pos = line_end + 1
    if in_arguments:
        out.append("}")
    out.append("}]")
    if rest and ("=" in rest or "[" in rest):
        for line in rest.split("\n"):
            if _HEADER_LIKE.match(line) or _KEYVAL_LIKE.match(line):
                return None
    try:
        documents = _JSON.decode("".join(out))
    except (ValueError, RecursionError):
        return None
    return documents, start, end


_LINE_KEYVAL = (r"""[^\S\n]*+(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')"""
                r"""(?:[^\S\n]*+\.[^\S\n]*+(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+'))*+[^\S\n]*+=""")
# where the TOML may start: a line _HEADER_LIKE takes whose last character is "]", or one _KEYVAL_LIKE takes
# (the same patterns, kept to one line), found in C
_FIRST_LINE = re.compile(rf"[^\S\n]*\[[^\n]*\][^\S\n]*(?=\n|\Z)|{_LINE_KEYVAL}")
_NEXT_FIRST_LINE = re.compile(rf"\n(?:[^\S\n]*\[[^\n]*\][^\S\n]*(?=\n|\Z)|{_LINE_KEYVAL})")


def _region(text: str, limit: int | None = None) -> tuple[int, int]:
    """Where the TOML stands in ``text``: from its first table header (or key) to its last line before prose.

    The first line is found in C; the lines after it are read one by one, at most ``limit`` characters
    of them (a region found longer than that ends there: too long to be read).
    """
    first_end = text.find("\n")
    if first_end < 0:
        first_end = len(text)
    if _FIRST_LINE.match(text, 0, first_end) is not None:
        first = 0
    else:
        found = _NEXT_FIRST_LINE.search(text, first_end)
        if found is None:
            return 0, len(text)
        first = found.start() + 1
    last = (first, first)
    depth = 0
    quote = ""
    pos = first
    while True:
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line = text[pos:end]
        stripped = line.strip()
        inside = depth > 0 or bool(quote)
        if not inside and stripped and not stripped.startswith("#") and not (
                _HEADER_LIKE.match(line) or _KEYVAL_LIKE.match(line)):
            break
        depth, quote = _track(line, depth, quote)
        if stripped:
            last = (pos, end)
        if nl < 0 or (limit is not None and end - first > limit):
            break
        pos = nl + 1
    return first, last[1]


def _track(line: str, depth: int, quote: str) -> tuple[int, str]:
    """Bracket depth and open multi-line string after ``line`` (a light scan, good enough to find the end)."""
    if not quote and '"' not in line and "'" not in line and "#" not in line:
        return max(depth + line.count("[") + line.count("{") - line.count("]") - line.count("}"), 0), ""
    i = 0
    n = len(line)
    while i < n:
        if quote:
            close = line.find(quote, i)
            if close < 0:
                return depth, quote
            i = close + 3
            quote = ""
            continue
        ch = line[i]
        if ch == "#":
            break
        if ch in "\"'":
            if line.startswith(ch * 3, i):
                quote = ch * 3
                i += 3
                continue
            close = i + 1
            while close < n and line[close] != ch:
                close += 2 if (ch == '"' and line[close] == "\\") else 1
            i = close + 1
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return depth, quote


_FENCE_ONLY = re.compile(r"(?:```[\w.+-]*)?(?:```)?")


def _outside_is_clean(text: str, start: int, end: int) -> bool:
    outside = text[:start] + text[end:]
    return not outside or outside.isspace() or _FENCE_ONLY.fullmatch("".join(outside.split())) is not None


class TomlCall(Protocol):
    info = ProtocolInfo(
        id="toml_call",
        name="TOML call block",
        description="Each call a [[call]] table with a name and a [call.arguments] table.",
        parallel=True,
    )

    @never_raises
    def parse(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        fast = _canonical(text)
        if fast is not None:
            documents, start, end = fast
            if all(type(d.get("name")) is str and type(d.get("arguments", {})) is dict and len(d) <= 2
                   for d in documents):
                return Extraction(tuple(RawCall(d["name"], d.get("arguments", {}), (start, end)) for d in documents),
                                  (), _outside_is_clean(text, start, end))
        body_start, body_end = 0, len(text)
        for fence_start, fence_end, language in fenced_blocks(text, limit=10):
            if language.lower() in ("toml", "", "ini", "cfg") and "=" in text[fence_start:fence_end]:
                body_start, body_end = fence_start, fence_end
                break
        longest = document_chars(limits)
        start, end = _region(text[body_start:body_end], longest)
        start, end = body_start + start, body_start + end
        region = text[start:end]
        if len(region) > longest:
            return Extraction((), (f"the TOML is longer than {longest} characters and was not read",), False)
        notes: list[str] = []
        document = _by_tomllib(region)
        if document is None:
            if len(region) > grammar_chars(limits):
                return Extraction((), (f"the TOML is longer than {grammar_chars(limits)} characters and not strict "
                                       "TOML; it was not read (that is as much as the grammar reads of a reply)",),
                                  False)
            try:
                document, problems = _by_grammar(region)
            except GrammarFailure as failure:
                where = shifted(failure, text, start)
                return Extraction((), (f"the TOML could not be read: {where.describe()}",), False)
            except RecursionError:
                return Extraction((), ("the TOML is nested too deeply to read",), False)
            notes.extend(problems)
        found = calls_from_document(document)
        if not found:
            return Extraction((), tuple(notes) + ("the TOML names no tool (no [[call]] table with a name)",), False)
        calls = tuple(RawCall(name, arguments, (start, end)) for name, arguments in found)
        compliant = not notes and _outside_is_clean(text, start, end)
        return Extraction(calls, tuple(notes), compliant)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        blocks = []
        for call in calls:
            lines = ["[[call]]", f"name = {toml_string(call.name)}", "", "[call.arguments]"]
            lines.extend(f"{toml_key(key)} = {toml_value(value)}" for key, value in call.arguments.items())
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with TOML only. Write one [[call]] table per call: a line name = \"<tool name>\", then a "
                "[call.arguments] table with one line per argument. Quote strings, write numbers and true/false "
                "as they are, lists as [ ... ] and objects as inline tables { key = value, ... }.\n"
                "[[call]]\nname = \"tool_name\"\n\n[call.arguments]\nargument = \"value\"")


PROTOCOL = TomlCall()
