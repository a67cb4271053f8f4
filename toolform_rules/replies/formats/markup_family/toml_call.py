"""toml_call: ``[[call]]`` tables — ``name = "tool"`` and a ``[call.arguments]`` table per call.

Grammar: ``grammars/toml_call.lark`` — TOML 1.0 plus what models write when they mix in
JSON or Python (``"key": value`` and line breaks inside inline tables, ``True``, ``null``).
The document may also be a single call (``name = ...`` and an ``[arguments]`` table) or use
``[[calls]]``/``tool``/``args``; the TOML may stand alone, in a code fence or between prose —
also prose on the line of its first ``[[call]]`` ("Sure! [[call]]"), and words after the last
value on its line ("term_months = 601 Done.": the value is 601, and a note says what was left).

One fast path: the rendered shape (``[[call]]``, ``name = "..."``, ``[call.arguments]`` and a
``key = value`` line per argument), rewritten as one JSON text for ``json``; any other TOML
goes to the Lark grammar, which also says where a document stops.

TOML has no null: ``None`` is written ``null``.

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

import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....grammar import Transformer, parse
from ....limits import Limits
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, ProtocolInfo, RawCall
from ..duplicates import Repeats
from .shared import (STRICT_JSON, UNREAD, calls_from_document, excerpt, fenced_blocks, flow_text, only_fences,
                            read_document, unescape)
from ..reading import GrammarBudget

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
    return flow_text(value, toml_string, toml_key, " = ", nan="nan", inf="inf")


# ---------------------------------------------------------------------------------------------
# reading: the grammar

_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}
_WIDTHS = {"u": 4, "U": 8}


def _unescape(body: str, multiline: bool) -> str:
    return unescape(body, _ESCAPES, _WIDTHS, line_ending=multiline)


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
        #: the tables that give a key twice
        self.repeats = Repeats()

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
            self.repeats.record(target, (key[-1],))
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


def by_grammar(text: str) -> tuple[dict, list[str], Repeats]:
    r"""A TOML document read by the grammar: the document, notes on it and the tables that give a key twice; a
    :class:`~toolform_rules.grammar.GrammarFailure` where it stops.

    >>> by_grammar('a = 1\n[t]\nb = {c = "x", "d": None}\nb = 2')[:2]
    ({'a': 1, 't': {'b': 2}}, ["key 'b' is given twice; the last one counts"])
    """
    transformer = TomlDocument()
    document: dict = transformer.transform(parse("toml_call", text))
    return document, transformer.problems, transformer.repeats


# ---------------------------------------------------------------------------------------------
# reading: the rendered shape (the fast path)

_JSON_STRING = r'"(?:[^"\\\x00-\x1f\x7f]|\\[btnfr"\\]|\\u[0-9A-Fa-f]{4})*"'
# a call table as the renderer writes it: its name (a JSON string) and its argument lines (each after its line
# break; a key bare or a JSON string)
_CALL_TABLE = re.compile(rf'\[\[call\]\]\nname = ({_JSON_STRING})\n\n\[call\.arguments\]'
                         rf'((?:\n(?:[A-Za-z0-9_-]++|{_JSON_STRING}) = [^\n]*+)*+)')
_NEXT_CALL = re.compile(r"\n(?:[ \t]*\n)*(?=\[\[call\]\])")
# what the rendered values write differently from JSON, found from the left: a string (kept as it is), a bare key
# and its "=", an "=" after a quoted key
_NOT_JSON = re.compile(r'("(?:[^"\\\x00-\x1f\x7f]++|\\[btnfr"\\]|\\u(?![dD][89abAB])[0-9A-Fa-f]{4})*+")|([A-Za-z0-9_-]+) = | = ')
_HEADER_LIKE = re.compile(r"\s*\[")
_KEYVAL_LIKE = re.compile(r"""\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
                          r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*\s*=""")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _as_json(text: str) -> str:
    """Argument lines (and their inline tables and arrays) as the renderer writes them, as JSON text."""
    return _NOT_JSON.sub(lambda m: m.group(1) or (f'"{m.group(2)}": ' if m.group(2) else ": "), text)


def _table_json(found: re.Match[str]) -> str | None:
    """A call table ``_CALL_TABLE`` matched, as JSON text; ``None`` when JSON would read it otherwise."""
    arguments = found.group(2)
    if "\\u" in arguments and _SURROGATE_ESCAPE.search(arguments):
        return None
    return '{"name": ' + found.group(1) + ', "arguments": {' + _as_json(arguments[1:]).replace("\n", ", ") + "}}"


def read_rendered(text: str) -> tuple[list[dict[str, Any]], int, int] | None:
    r"""The calls of a reply in the rendered shape — ``[[call]]``, ``name = "..."``, a blank line,
    ``[call.arguments]`` and one ``key = value`` line per argument, blank lines between calls — rewritten as
    one JSON text and read by ``json``; with where the TOML starts and ends.  ``None`` for any other reply.

    The values the renderer writes — basic strings, numbers, true/false, inline tables and
    arrays — read the same as JSON once bare keys are quoted and ``=`` is ``:``; what JSON would
    read differently (surrogate escapes, NaN, a key given twice) is left to the grammar.

    >>> read_rendered('Sure:\n[[call]]\nname = "f"\n\n[call.arguments]\na = {b = [1, "x"]}\nDone.')
    ([{'name': 'f', 'arguments': {'a': {'b': [1, 'x']}}}], 6, 62)
    """
    start = text.find("[[call]]")
    if start < 0 or (start > 0 and text[start - 1] != "\n"):
        return None
    tables: list[str] = []
    counts: list[int] = []  # how many arguments each call's lines give
    pos = start
    while after := _CALL_TABLE.match(text, pos):
        table = _table_json(after)
        if table is None:
            return None
        tables.append(table)
        counts.append(after.group(2).count("\n"))
        pos = after.end()
        gap = _NEXT_CALL.match(text, pos)
        if gap is None:
            break
        pos = gap.end()
    rest = text[pos:]
    if not tables or (("=" in rest or "[" in rest) and any(_HEADER_LIKE.match(line) or _KEYVAL_LIKE.match(line)
                                                             for line in rest.split("\n"))):
        return None  # (more TOML after the shape: the grammar reads it all)
    try:
        documents = STRICT_JSON.decode("[" + ", ".join(tables) + "]")
    except (ValueError, RecursionError):
        return None
    # (a value that is not one JSON value — "1, "b": 2" — gives another count of arguments)
    if any(len(document) != 2 or len(document["arguments"]) != count for document, count in zip(documents, counts)):
        return None
    return documents, start, pos


_LINE_KEYVAL = (r"""[^\S\n]*+(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')"""
                r"""(?:[^\S\n]*+\.[^\S\n]*+(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+'))*+[^\S\n]*+=""")
# where the TOML may start: a line _HEADER_LIKE takes whose last character is "]", or one _KEYVAL_LIKE takes
# (the same patterns, kept to one line), found in C
_FIRST_LINE = re.compile(rf"[^\S\n]*\[[^\n]*\][^\S\n]*(?=\n|\Z)|{_LINE_KEYVAL}")
_NEXT_FIRST_LINE = re.compile(rf"\n(?:[^\S\n]*\[[^\n]*\][^\S\n]*(?=\n|\Z)|{_LINE_KEYVAL})")
# a call's table header at the end of a line of prose ("Sure! [[call]]"), the TOML's first line after it
_LEAD_IN = re.compile(r"[^\S\n](\[\[?(?:tool_)?calls?\]\]?)[^\S\n]*\n\s*\Z")
# a key and a whole value on the TOML's last line, and words after it that start a sentence ("= 601 Done.")
_WORDS_AFTER = re.compile(_LINE_KEYVAL + r"""[^\S\n]*+(?:"(?:[^"\\\n]|\\.)*+"|'[^'\n]*+'|\{[^\n]*\}|\[[^\n]*\]"""
                          r"|[\w.:+-]++)(?=[^\S\n]+[^\W\d_])")


def _first_line(text: str, start: int, end: int) -> int:
    """Where the TOML in ``text[start:end]`` starts (found in C): its first table header or key — or a call's
    header after prose on its line ("Sure! [[call]]") — or -1."""
    first_end = text.find("\n", start, end)
    if _FIRST_LINE.match(text, start, end if first_end < 0 else first_end) is not None:
        return start
    found = _NEXT_FIRST_LINE.search(text, end if first_end < 0 else first_end, end)
    if found is None:
        return -1
    lead_in = _LEAD_IN.search(text, max(start, text.rfind("\n", start, found.start()) + 1), found.start() + 1)
    return lead_in.start(1) if lead_in is not None else found.start() + 1


def _last_line(text: str, first: int, end: int, limit: int | None) -> tuple[tuple[int, int], bool]:
    """The TOML's last line, before prose (lines read one by one, at most ``limit`` characters of them), and
    whether it starts outside brackets and strings."""
    last, outside = (first, first), True
    depth, quote = 0, ""
    pos = first
    while True:
        nl = text.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        line = text[pos:line_end]
        stripped = line.strip()
        inside = depth > 0 or bool(quote)
        if not inside and stripped and stripped[0] != "#" and not (_HEADER_LIKE.match(line) or
                                                                  _KEYVAL_LIKE.match(line)):
            return last, outside
        if stripped:
            last, outside = (pos, line_end), not inside
        depth, quote = _track(line, depth, quote)
        if nl < 0 or (limit is not None and line_end - first > limit):
            return last, outside
        pos = nl + 1


def _region(text: str, start: int, end: int, limit: int | None = None) -> tuple[int, int, str]:
    """Where the TOML stands in ``text[start:end]``, from its first line to its last before prose — and the
    lenient step: words after the last value on that line, which are not part of it (they are noted)."""
    first = _first_line(text, start, end)
    if first < 0:
        return start, end, ""
    last, outside = _last_line(text, first, end, limit)
    value = _WORDS_AFTER.match(text, *last) if outside and last[1] > last[0] else None
    if value is not None:
        return first, value.end(), text[value.end():last[1]].strip()
    return first, last[1], ""


# what moves the bracket depth or opens a string, in the order a scan from the left meets them
_TRACKED = re.compile(r'"""|\'\'\'|"(?:[^"\\]|\\.)*+"?|\'[^\']*+\'?|[#\[\]{}]')


def _track(line: str, depth: int, quote: str) -> tuple[int, str]:
    """Bracket depth and open multi-line string after ``line`` (a light scan, good enough to find the end)."""
    if not quote and '"' not in line and "'" not in line and "#" not in line:
        return max(depth + line.count("[") + line.count("{") - line.count("]") - line.count("}"), 0), ""
    pos = 0
    while True:
        if quote:
            close = line.find(quote, pos)
            if close < 0:
                return depth, quote
            pos, quote = close + 3, ""
        found = _TRACKED.search(line, pos)
        if found is None or found.group() == "#":
            return depth, ""
        token, pos = found.group(), found.end()
        if token in ('"""', "\'\'\'"):
            quote = token
        elif token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)


class TomlCall(Protocol):
    info = ProtocolInfo(id="toml_call", name="TOML call block",
                        description="Each call a [[call]] table with a name and a [call.arguments] table.")

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        fast = read_rendered(text)
        if fast is not None:
            documents, start, end = fast
            return Extraction(tuple(RawCall(d["name"], d["arguments"], (start, end)) for d in documents), (),
                              only_fences(text[:start] + text[end:]))
        body_start, body_end = next(((s, e) for s, e, language in fenced_blocks(text, limit=10)
                                     if language.lower() in ("toml", "", "ini", "cfg") and "=" in text[s:e]),
                                    (0, len(text)))
        longest = limits.reply_document_chars
        start, end, words_after = _region(text, body_start, body_end, longest)
        if end - start > longest:
            return Extraction((), (f"the TOML is longer than {longest} characters and was not read",), False)
        found = read_document(text, start, end, (), by_grammar, GrammarBudget.of(limits), "toml_call", "the TOML")
        if isinstance(found, str):
            return Extraction((), (found,), False)
        document, notes, repeats = found
        if words_after:
            notes.append(f"words after the TOML were ignored: {excerpt(words_after)}")
        calls = calls_from_document(document)
        if not calls:
            return Extraction((), tuple(notes) + ("the TOML names no tool (no [[call]] table with a name)",), False)
        return Extraction(tuple(RawCall(name, arguments, (start, end), repeats.of(arguments) if repeats else ())
                                for name, arguments in calls), tuple(notes),
                          not notes and only_fences(text[:start] + text[end:]))

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
