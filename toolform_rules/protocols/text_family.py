"""What the text-value protocols share: writing a value as text, escaping, finding calls in a reply.

The text family (``cli_call``, ``url_call``, ``key_value_call``, ``pipe_call``,
``csv_call``, ``table_call``, ``symbolic_call``) writes argument values as text; the
pipeline types them from the schema afterwards (:func:`.typing.type_values`).  So every
member writes a value the same way (:func:`value_text`: numbers as Python writes them,
``true``/``false``, ``null``, nested values as JSON) and reads it back as that text,
exactly — spaces at either end, quotes, delimiters, line breaks and all, each format
with its own escapes.

Reading a reply is two steps here too: one pass over the lines finds the candidates
(:func:`scan_lines`: a protocol's :class:`LineStarts` pattern finds the lines that may begin
a call in C, so the lines between them cost nothing in Python), then each candidate is read
once — by a fast path built from the grammar's own terminals where one exists, else by the
grammar itself, within a budget of characters per reply (:class:`GrammarBudget`, from
``Limits``) so that a reply of many malformed candidates costs no more than one.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Sequence

from ..limits import DEFAULT_LIMITS, Limits
from ..schema.ir import Tool
from ..schema.toolset import Toolset
from .base import Extraction, RawCall, internal_error
from ..grammar import GrammarFailure, load_parser, parse

#: the most calls read from one reply; more are noted and left
MAX_CALLS = 1000
#: how much of a line is looked at to decide whether it starts a call
HEAD = 400
#: the default of ``Limits.reply_grammar_chars`` (see :func:`grammar_chars`): how many characters of one
#: reply the grammar reads in all; a candidate the fast paths cannot read and that does not fit in
#: what is left is noted, not read (Lark costs up to ~15 µs a character on short tokens)
MAX_GRAMMAR_CHARS = DEFAULT_LIMITS.reply_grammar_chars


def grammar_chars(limits: Limits) -> int:
    """How many characters of one reply the Lark grammars may read in all: ``limits.reply_grammar_chars``.

    >>> grammar_chars(DEFAULT_LIMITS)
    16384
    """
    return limits.reply_grammar_chars


def document_chars(limits: Limits) -> int:
    """The longest YAML or TOML document of a reply that a library's reader in Python (tomllib) is given:
    ``limits.reply_document_chars`` — linear, but ~1 µs a character.
    """
    return limits.reply_document_chars


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


class LineStarts:
    r"""The lines that may begin a call, found in C: ``pattern`` matched at a line's start.

    ``pattern`` must match at the start of every line whose head (:data:`HEAD` characters) the
    protocol's ``starts`` accepts — it may match more, ``starts`` decides — and must not match
    a line break at its start.  A line of :data:`HEAD` characters or more is always handed to
    ``starts``, which judges it by its head, as the line-by-line scan does.

    >>> LineStarts(r"[ \t]*\|").lines("a\n | b\nc\n|d")
    [2, 9]
    """

    __slots__ = ("first", "rest")

    def __init__(self, pattern: str) -> None:
        body = f"(?:{pattern})|[^\\n]{{{HEAD}}}"
        self.first = re.compile(body)
        self.rest = re.compile(f"\\n(?:{body})")

    def next(self, text: str, pos: int) -> int:
        """The start of the first line at or after ``pos`` (a line start) that may begin a call, or -1."""
        if pos == 0 and self.first.match(text) is not None:
            return 0
        found = self.rest.search(text, pos - 1 if pos > 0 else 0)
        return found.start() + 1 if found is not None else -1

    def lines(self, text: str) -> list[int]:
        """Where every line the pattern takes starts."""
        out: list[int] = []
        pos = 0
        while True:
            at = self.next(text, pos)
            if at < 0:
                return out
            out.append(at)
            pos = text.find("\n", at) + 1
            if pos == 0:
                return out


# a line that may be neither blank nor a fence: its first non-space character within its head, and not
# the start of a fence that the head holds whole (a line this takes is then judged by its head)
_PROSE = rf"[^\S\n]{{0,{HEAD - 4}}}(?!```|~~~)\S|[^\S\n]{{{HEAD - 3},{HEAD - 1}}}\S"
_PROSE_LINE = re.compile(_PROSE)
_NEXT_PROSE_LINE = re.compile(rf"\n(?:{_PROSE})")


def _has_prose(text: str, pos: int, stop: int) -> bool:
    """Whether a line starting in ``text[pos:stop]`` (``pos`` a line start) is neither blank nor a fence,
    judged by its head as :func:`scan_lines` judges a line (the likely line found in C, then judged)."""
    while pos < stop:
        if _PROSE_LINE.match(text, pos, stop) is not None:
            begin = pos
        else:
            found = _NEXT_PROSE_LINE.search(text, pos, stop)
            if found is None:
                return False
            begin = found.start() + 1
        end = line_end(text, begin)
        bare = text[begin:min(end, begin + HEAD)].strip()
        if bare and not (bare[0] in "`~" and (bare.startswith("```") or bare.startswith("~~~"))):
            return True
        nl = text.find("\n", begin)  # (a fence cut by the head's end: on to the next line)
        if nl < 0:
            return False
        pos = nl + 1
    return False


def scan_lines(text: str, starts: Callable[[str], bool],
               extent: Callable[[str, int, int], int] | None = None,
               *, limit: int = MAX_CALLS, candidates: LineStarts | None = None
               ) -> tuple[list[tuple[int, int, int]], bool, bool]:
    """The candidate calls of a line-oriented format in one pass over ``text``.

    ``starts(head)`` says whether a line (its first :data:`HEAD` characters) begins a call;
    ``extent(text, start, end)`` may carry a call past its first line (a quoted line break)
    and returns where it ends.  ``candidates`` finds the lines ``starts`` may accept in C; without
    it every line is handed to ``starts``.  Returns ``(spans, prose, truncated)``: ``(start, end,
    line)`` per candidate (``line`` 1-based), whether any other non-blank, non-fence line was
    seen, and whether candidates past ``limit`` were left.
    """
    if candidates is None:
        return _scan_every_line(text, starts, extent, limit)
    spans: list[tuple[int, int, int]] = []
    prose = False
    pos = 0  # where the lines not yet looked at start
    line = 1
    counted = 0  # the line breaks before this offset are counted in ``line``
    n = len(text)
    while pos <= n:
        begin = candidates.next(text, pos)
        if begin < 0:
            break
        if not prose:
            prose = _has_prose(text, pos, begin)
        end = line_end(text, begin)
        head = text[begin:min(end, begin + HEAD)]
        bare = head.strip()
        stop = end
        if not bare or bare[0] in "`~" and (bare.startswith("```") or bare.startswith("~~~")):
            pass
        elif starts(head):
            if len(spans) >= limit:
                return spans, prose, True
            if extent is not None:
                stop = extent(text, begin, end)
            line += text.count("\n", counted, begin)
            counted = begin
            spans.append((begin, stop, line))
        else:
            prose = True
        nl = text.find("\n", stop if stop > end else end)
        if nl < 0:
            return spans, prose, False
        pos = nl + 1
    if not prose:
        prose = _has_prose(text, pos, n + 1)
    return spans, prose, False


def _scan_every_line(text: str, starts: Callable[[str], bool], extent: Callable[[str, int, int], int] | None,
                     limit: int) -> tuple[list[tuple[int, int, int]], bool, bool]:
    """:func:`scan_lines` without a :class:`LineStarts`: every line handed to ``starts`` in Python."""
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

    def __init__(self, grammar: str, size: int, limit: int = MAX_GRAMMAR_CHARS, left: int | None = None) -> None:
        self.size, self.limit, self.left = size, limit, left
        super().__init__(grammar, 1, 1, (), f"{size} characters")

    def describe(self) -> str:
        spent = "" if self.left is None or self.left >= self.size else f" and {self.left} of them are left"
        return (f"it is {self.size} characters long and not in the plain form the fast reader takes; the grammar "
                f"reads at most {self.limit} characters of a reply{spent}")


class GrammarBudget:
    """How many more characters the grammar may read in one reply (``Limits.reply_grammar_chars`` in all).

    >>> budget = GrammarBudget(10)
    >>> budget.spend("g", "x" * 8); budget.left
    2
    >>> try:
    ...     budget.spend("g", "xyz")
    ... except TooLong as refused:
    ...     print(refused.describe()[-61:])
    reads at most 10 characters of a reply and 2 of them are left
    """

    __slots__ = ("limit", "left")

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit

    @classmethod
    def of(cls, limits: Limits) -> "GrammarBudget":
        return cls(grammar_chars(limits))

    def spend(self, grammar: str, segment: str) -> None:
        """Take ``segment``'s length from what is left, or raise :class:`TooLong` when it does not fit."""
        if len(segment) > self.left:
            raise TooLong(grammar, len(segment), self.limit, self.left)
        self.left -= len(segment)


def grammar_parse(grammar: str, segment: str, budget: GrammarBudget | None = None) -> Any:
    """``parse(grammar, segment)`` within ``budget`` (the reply's), else within :data:`MAX_GRAMMAR_CHARS`;
    a segment that does not fit is refused (:class:`TooLong`)."""
    if budget is not None:
        budget.spend(grammar, segment)
    elif len(segment) > MAX_GRAMMAR_CHARS:
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


def never_raises(protocol: str, parse: Callable[..., Extraction], text: Any, tools: Toolset | None,
                 limits: Limits | None = None) -> Extraction:
    """Run ``parse`` (with ``limits=`` when given); whatever goes wrong becomes a note (a protocol never
    raises on a reply)."""
    if not isinstance(text, str):
        return Extraction((), (f"{protocol}: the reply is not text ({type(text).__name__})",), False)
    try:
        return parse(text, tools) if limits is None else parse(text, tools, limits=limits)
    except RecursionError:
        return Extraction((), (f"{protocol}: the reply is nested too deeply to read",), False)
    except Exception as err:  # noqa: BLE001 — the safety net; tests check it never fires
        return internal_error(protocol, err)


#: what reading one candidate gives: name, arguments, notes, and whether it kept to the format
Read = tuple[str, dict[str, Any], list[str], bool]


def read_calls(protocol: str, text: str, starts: Callable[[str], bool],
               read_one: Callable[[str], Read], extent: Callable[[str, int, int], int] | None = None,
               *, what: str = "call", candidates: LineStarts | None = None) -> Extraction:
    """The calls of a line-oriented reply: candidates found by :func:`scan_lines` (through
    ``candidates`` when given), each read by ``read_one`` (which raises :class:`GrammarFailure`
    where the grammar stopped)."""
    spans, prose, truncated = scan_lines(text, starts, extent, candidates=candidates)
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


__all__ = ["HEAD", "MAX_CALLS", "MAX_GRAMMAR_CHARS", "DEFAULT_LIMITS", "GrammarBudget", "LineStarts", "Read",
           "Reading", "TooLong", "backslash_escape", "backslash_unescape", "document_chars", "grammar_chars",
           "grammar_parse", "has_parameter", "is_fence", "kebab_argument_name",
           "kebab_tool_name", "line_end", "needs_json_quotes", "never_raises", "read_calls", "read_json_quoted",
           "resolve_tool", "scan_lines", "terminal_regex", "tool_parameters", "trim_field", "value_text", "where"]
