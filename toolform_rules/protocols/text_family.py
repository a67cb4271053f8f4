"""What the text-value protocols share: writing a value as text, escaping, finding calls in a reply.

The text family (``cli_call``, ``url_call``, ``key_value_call``, ``pipe_call``,
``csv_call``, ``table_call``, ``symbolic_call``) writes argument values as text; the
pipeline types them from the schema afterwards (:func:`.typing.type_values`).  So every
member writes a value the same way (:func:`value_text`: numbers as Python writes them,
``true``/``false``, ``null``, nested values as JSON) and reads it back as that text,
exactly — spaces at either end, quotes, delimiters, line breaks and all, each format
with its own escapes.

Reading a reply is two steps here too: a linear scan over the lines finds the
candidates (:func:`scan_lines`), then each candidate is parsed — by a fast path built
from the grammar's own terminals where one exists, else by the grammar itself.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Sequence

from ..schema.ir import Tool
from ..schema.toolset import Toolset
from .base import Extraction, RawCall, internal_error
from ..grammar import GrammarFailure, load_parser, parse

#: the most calls read from one reply; more are noted and left
MAX_CALLS = 1000
#: how much of a line is looked at to decide whether it starts a call
HEAD = 400
#: candidates longer than this are read by the fast paths only (the grammar costs ~15 µs a character)
MAX_GRAMMAR_CHARS = 50_000


# ---------------------------------------------------------------------------------------------
# values as text


def value_text(value: Any) -> str:
    """How the text family writes a value: strings as they are, everything else as JSON would.

    >>> [value_text(v) for v in ("a b", 12, 1e-07, 1200.5, True, None, {"a": [1, "x"]})]
    ['a b', '12', '1e-07', '1200.5', 'true', 'null', '{"a": [1, "x"]}']
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
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# backslash escapes (pipe_call, table_call, symbolic_call)

_BASE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", " ": " "}
_BASE_WRITE = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def backslash_escape(text: str, specials: str) -> str:
    r"""``text`` with ``\``, line breaks, tabs, the format's ``specials`` and spaces at either end escaped.

    The readers trim unescaped spaces and tabs around a value, so a space that belongs to the
    value at either end is written ``\ ``.

    >>> backslash_escape(" a|b\\c\n ", "|")
    '\\ a\\|b\\\\c\\n\\ '
    """
    out = []
    for ch in text:
        mapped = _BASE_WRITE.get(ch)
        if mapped is not None:
            out.append(mapped)
        elif ch in specials:
            out.append("\\" + ch)
        else:
            out.append(ch)
    if out and out[0] == " ":
        i = 0
        while i < len(out) and out[i] == " ":
            out[i] = "\\ "
            i += 1
    if out and out[-1] == " ":
        i = len(out) - 1
        while i >= 0 and out[i] == " ":
            out[i] = "\\ "
            i -= 1
    return "".join(out)


_BACKSLASH = re.compile(r"\\(.)", re.S)


def backslash_unescape(raw: str, specials: str) -> str:
    r"""The value a raw (already trimmed) field stands for: known escapes read, others kept.

    ``\n``, ``\r``, ``\t``, ``\\``, ``\ `` and ``\`` before one of ``specials`` are escapes;
    a backslash before anything else is kept with it (``C:\path`` reads as written).

    >>> backslash_unescape(r"\ a\|b\\c\n\ \q", "|")
    ' a|b\\c\n \\q'
    """
    if "\\" not in raw:
        return raw

    def one(match: re.Match[str]) -> str:
        ch = match.group(1)
        known = _BASE_ESCAPES.get(ch)
        if known is not None:
            return known
        return ch if ch in specials else match.group(0)

    return _BACKSLASH.sub(one, raw)


def trim_field(raw: str) -> str:
    r"""``raw`` without unescaped spaces and tabs at either end (``a\ `` keeps its escaped space).

    >>> trim_field("  a\\  "), trim_field("\\\\ ")
    ('a\\ ', '\\\\')
    """
    text = raw.lstrip(" \t")
    trimmed = text.rstrip(" \t")
    if len(trimmed) < len(text):
        backslashes = len(trimmed) - len(trimmed.rstrip("\\"))
        if backslashes % 2 == 1:  # the last space was escaped: keep it
            trimmed = text[:len(trimmed) + 1]
    return trimmed


# ---------------------------------------------------------------------------------------------
# JSON-quoted values (key_value_call)


def needs_json_quotes(text: str) -> bool:
    """A value that cannot stand bare on a ``key: value`` line: empty, spaced at an end,
    holding a line break, or starting with a double quote.

    >>> needs_json_quotes("Acme"), needs_json_quotes(" Acme"), needs_json_quotes('"x"'), needs_json_quotes("")
    (False, True, True, True)
    """
    return (not text or text[0] in ' \t"' or text[-1] in " \t" or "\n" in text or "\r" in text)


def read_json_quoted(raw: str) -> str:
    r"""A bare value as written, or the string a JSON string literal stands for.

    >>> read_json_quoted('"a\\nb"'), read_json_quoted('"Acme" and "Beta"'), read_json_quoted('x')
    ('a\nb', '"Acme" and "Beta"', 'x')
    """
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return raw
        if isinstance(value, str):
            return value
    return raw


# ---------------------------------------------------------------------------------------------
# names


def resolve_tool(name: str, tools: Toolset | None) -> Tool | None:
    """The tool a written name means (any naming convention), if a toolset is given."""
    if tools is None or not name:
        return None
    try:
        return tools.get(name)
    except Exception:  # a toolset that cannot look a name up finds nothing
        return None


def kebab_tool_name(written: str, tools: Toolset | None) -> str:
    """The tool a kebab-case name (``legal-draft-v3``) stands for: the toolset's spelling when
    it has the tool, else the name with ``-`` made ``_``.

    >>> kebab_tool_name("legal-draft-v3", None)
    'legal_draft_v3'
    """
    if tools is not None:
        for tool in tools:
            if tool.name == written:
                return tool.name
        for tool in tools:
            if tool.name.replace("_", "-") == written:
                return tool.name
        found = resolve_tool(written, tools)
        if found is not None:
            return found.name
    return written.replace("-", "_")


def kebab_argument_name(written: str, tool: Tool | None) -> str:
    """The parameter a kebab-case flag (``term-months``) names: the tool's own spelling when one
    of its parameters is written that way, else the flag with ``-`` made ``_``.

    >>> kebab_argument_name("term-months", None)
    'term_months'
    """
    if tool is not None:
        found = _kebab_index(tool).get(written)
        if found is not None:
            return found
    return written.replace("-", "_")


_INDEXES: dict[int, tuple[Tool, dict[str, str]]] = {}


def _kebab_index(tool: Tool) -> dict[str, str]:
    """A tool's parameters by their own name and by their kebab-case spelling (cached per tool)."""
    cached = _INDEXES.get(id(tool))
    if cached is not None and cached[0] is tool:
        return cached[1]
    index: dict[str, str] = {}
    for p in tool.parameters.properties:
        index.setdefault(p.name.replace("_", "-"), p.name)
    for p in tool.parameters.properties:
        index[p.name] = p.name
    if len(_INDEXES) > 4096:
        _INDEXES.clear()
    _INDEXES[id(tool)] = (tool, index)
    return index


def has_parameter(tool: Tool | None, name: str) -> bool:
    """Whether ``tool`` declares a parameter spelled exactly ``name``."""
    return tool is not None and _kebab_index(tool).get(name) == name


# ---------------------------------------------------------------------------------------------
# finding candidates


def is_fence(line: str) -> bool:
    """A Markdown code-fence line (```` ``` ````, ```` ```bash ````, ``~~~``)."""
    stripped = line.strip()
    return stripped.startswith("```") or stripped.startswith("~~~")


def line_end(text: str, pos: int) -> int:
    """Where the line starting at ``pos`` ends (before its ``\\n``; a ``\\r`` before it excluded)."""
    nl = text.find("\n", pos)
    end = len(text) if nl < 0 else nl
    if end > pos and text[end - 1] == "\r":
        end -= 1
    return end


def scan_lines(text: str, starts: Callable[[str], bool],
               extent: Callable[[str, int, int], int] | None = None,
               *, limit: int = MAX_CALLS) -> tuple[list[tuple[int, int, int]], bool, bool]:
    """The candidate calls of a line-oriented format in one pass over ``text``.

    ``starts(head)`` says whether a line (its first :data:`HEAD` characters) begins a call;
    ``extent(text, start, end)`` may carry a call past its first line (a quoted line break)
    and returns where it ends.  Returns ``(spans, prose, truncated)``: ``(start, end, line)``
    per candidate (``line`` 1-based), whether any other non-blank, non-fence line was seen,
    and whether candidates past ``limit`` were left.
    """
    spans: list[tuple[int, int, int]] = []
    prose = False
    pos = 0
    line = 1
    n = len(text)
    while pos <= n:
        end = line_end(text, pos)
        head = text[pos:min(end, pos + HEAD)]
        stop = end
        bare = head.strip()
        if not bare or bare[0] in "`~" and (bare.startswith("```") or bare.startswith("~~~")):
            pass
        elif starts(head):
            if len(spans) >= limit:
                return spans, prose, True
            if extent is not None:
                stop = extent(text, pos, end)
            spans.append((pos, stop, line))
        else:
            prose = True
        nl = text.find("\n", stop if stop > end else end)
        if nl < 0:
            break
        line += 1 + (text.count("\n", end, stop) if stop > end else 0)
        pos = nl + 1
    return spans, prose, False


# ---------------------------------------------------------------------------------------------
# grammar support


def terminal_regex(grammar: str, name: str) -> str:
    """The regular expression of terminal ``name`` in ``grammars/<grammar>.lark``.

    Fast paths scan with the grammar's own terminals, so both read tokens alike.
    """
    parser = load_parser(grammar)
    return str(parser.get_terminal(name).pattern.to_regexp())


class TooLong(GrammarFailure):
    """A candidate the fast path could not read and the grammar is not given (it is too long)."""

    def __init__(self, grammar: str, size: int) -> None:
        self.size = size
        super().__init__(grammar, 1, 1, (), f"{size} characters")

    def describe(self) -> str:
        return (f"it is {self.size} characters long and not in the plain form the fast reader takes; the grammar "
                f"reads at most {MAX_GRAMMAR_CHARS} characters")


def grammar_parse(grammar: str, segment: str) -> Any:
    """``parse(grammar, segment)``, refused (:class:`TooLong`) past :data:`MAX_GRAMMAR_CHARS`."""
    if len(segment) > MAX_GRAMMAR_CHARS:
        raise TooLong(grammar, len(segment))
    return parse(grammar, segment)


def where(failure: GrammarFailure, line: int) -> str:
    """``failure.describe()`` with its line counted from the start of the reply."""
    if isinstance(failure, TooLong):
        return failure.describe()
    moved = GrammarFailure(failure.grammar, failure.line + line - 1, failure.column, failure.expected,
                           failure.found)
    return moved.describe()


class Reading:
    """The calls and notes a parse collects, and whether the reply kept to the format."""

    __slots__ = ("calls", "notes", "clean")

    def __init__(self) -> None:
        self.calls: list[RawCall] = []
        self.notes: list[str] = []
        self.clean = True

    def note(self, sentence: str, *, breaks_format: bool = True) -> None:
        self.notes.append(sentence)
        if breaks_format:
            self.clean = False

    def extraction(self, prose: bool = False) -> Extraction:
        compliant = self.clean and not prose and bool(self.calls)
        return Extraction(tuple(self.calls), tuple(self.notes), compliant)


def never_raises(protocol: str, parse: Callable[[str, Toolset | None], Extraction],
                 text: Any, tools: Toolset | None) -> Extraction:
    """Run ``parse``; whatever goes wrong becomes a note (a protocol never raises on a reply)."""
    if not isinstance(text, str):
        return Extraction((), (f"{protocol}: the reply is not text ({type(text).__name__})",), False)
    try:
        return parse(text, tools)
    except RecursionError:
        return Extraction((), (f"{protocol}: the reply is nested too deeply to read",), False)
    except Exception as err:  # noqa: BLE001 — the safety net; tests check it never fires
        return internal_error(protocol, err)


#: what reading one candidate gives: name, arguments, notes, and whether it kept to the format
Read = tuple[str, dict[str, Any], list[str], bool]


def read_calls(protocol: str, text: str, starts: Callable[[str], bool],
               read_one: Callable[[str], Read], extent: Callable[[str, int, int], int] | None = None,
               *, what: str = "call") -> Extraction:
    """The calls of a line-oriented reply: candidates found by :func:`scan_lines`, each read by
    ``read_one`` (which raises :class:`GrammarFailure` where the grammar stopped)."""
    spans, prose, truncated = scan_lines(text, starts, extent)
    reading = Reading()
    for start, end, line in spans:
        try:
            name, arguments, notes, clean = read_one(text[start:end])
        except GrammarFailure as failure:
            reading.note(f"{protocol}: the {what} on line {line} could not be read: {where(failure, line)}")
            continue
        for sentence in notes:
            reading.note(sentence, breaks_format=False)
        reading.clean = reading.clean and clean
        reading.calls.append(RawCall(name, arguments, (start, end)))
    if truncated:
        reading.note(f"{protocol}: only the first {len(reading.calls)} calls are read")
    return reading.extraction(prose)


def tool_parameters(tool: Tool | None) -> Sequence[str]:
    """A tool's parameter names in declared order (empty without a tool)."""
    return [p.name for p in tool.parameters.properties] if tool is not None else []


__all__ = ["HEAD", "MAX_CALLS", "MAX_GRAMMAR_CHARS", "Read", "Reading", "TooLong", "backslash_escape",
           "backslash_unescape", "grammar_parse", "has_parameter", "is_fence", "kebab_argument_name",
           "kebab_tool_name", "line_end", "needs_json_quotes", "never_raises", "read_calls", "read_json_quoted",
           "resolve_tool", "scan_lines", "terminal_regex", "tool_parameters", "trim_field", "value_text", "where"]
