"""The text-value protocols' skeleton: finding calls in a reply, reading each once, writing values as text.

The text family (``cli_call``, ``url_call``, ``key_value_call``, ``pipe_call``,
``csv_call``, ``table_call``, ``symbolic_call``) writes argument values as text; the
pipeline types them from the schema afterwards (:func:`.typing.type_values`).  So every
member writes a value the same way (:func:`value_text`: numbers as Python writes them,
``true``/``false``, ``null``, nested values as JSON) and reads it back as that text,
exactly — spaces at either end, quotes, delimiters, line breaks and all, each format
with its own escapes.

:class:`TextProtocol` reads a reply for every member, in one pass:

* each line is tested for what a call's line holds by ``str`` scans in C (a line of prose
  costs no pattern), and the format's ``starts`` judges the lines that pass by
  their head; a call may also follow a prose lead-in on its line (``Sure! tool_name|a=1``),
  as models write it — such a call must name a tool of the toolset and be in the plain form,
  or the line is prose;
* each candidate is read once: by the format's one fast reader, built from the grammar's own
  terminals (a differential test holds it to the grammar), else by the grammar, within the
  reply's :class:`~.reading.GrammarBudget`;
* the format's ``build`` turns what was read into calls.  The family's one lenient step: a
  value the schema types as an integer, number, boolean or enum ends where a sentence starts
  (``601 Done.`` is ``601``, with a note: :func:`split_trailing_prose`) — text values are never cut.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable, Sequence

from ....calls import ToolCall
from ....grammar import GrammarFailure, Transformer, load_parser, parse
from ....limits import DEFAULT_LIMITS, Limits
from ....schema.ir import Schema, Tool
from ....schema.names import canonical_name
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, ProtocolInfo, RawCall
from ..duplicates import keys_twice, where as twice_at
from ..markup_family.shared import LineCounter
from ..reading import GrammarBudget, tool_of

#: the most calls read from one reply; more are noted and left
MAX_CALLS = 1000
#: how much of a line is looked at to decide whether it starts a call
HEAD = 400


# ---------------------------------------------------------------------------------------------
# values as text


def value_text(value: Any) -> str:
    """How the text family writes a value: strings as they are, everything else as JSON would.

    >>> [value_text(v) for v in ("a b", 12, 1e-07, 1200.5, True, None, {"a": [1, "x"]})]
    ['a b', '12', '1e-07', '1200.5', 'true', 'null', '{"a": [1, "x"]}']
    """
    if isinstance(value, str):
        return value
    if value is True or value is False or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, (int, float)):
        return str(value) if isinstance(value, int) else repr(value)
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# backslash escapes (pipe_call, table_call, symbolic_call)

_BASE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", " ": " "}
_BASE_WRITE = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_EDGE_SPACES = re.compile(r"^ +| +$")
_BACKSLASH = re.compile(r"\\(.)", re.S)


def backslash_escape(text: str, specials: str) -> str:
    r"""``text`` with ``\``, line breaks, tabs, the format's ``specials`` and spaces at either end escaped.

    The readers trim unescaped spaces and tabs around a value, so a space that belongs to the
    value at either end is written ``\ ``.

    >>> backslash_escape(" a|b\\c\n ", "|")
    '\\ a\\|b\\\\c\\n\\ '
    """
    out = "".join(_BASE_WRITE.get(ch) or ("\\" + ch if ch in specials else ch) for ch in text)
    if out[:1] == " " or out[-1:] == " ":
        out = _EDGE_SPACES.sub(lambda m: "\\ " * len(m.group()), out)
    return out


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
        return _BASE_ESCAPES.get(ch) or (ch if ch in specials else match.group(0))

    return _BACKSLASH.sub(one, raw)


_PIECE = re.compile(r"(?:[^|\\\r\n]++|\\[^\r\n])*+")


def split_pipes(line: str) -> list[str]:
    r"""The parts of ``line`` between its unescaped pipes (``\|`` is no delimiter, ``\\|`` is); an empty
    list when the line holds a line break or ends in a lone backslash (the grammars take neither).

    >>> split_pipes(r"a|b\|c\\|d"), split_pipes("a|b\\")
    (['a', 'b\\|c\\\\', 'd'], [])
    """
    if "\\" not in line and "\r" not in line and "\n" not in line:
        return line.split("|")
    parts = []
    pos = 0
    while True:
        piece = _PIECE.match(line, pos)
        parts.append(piece.group())  # type: ignore[union-attr]
        pos = piece.end()  # type: ignore[union-attr]
        if pos >= len(line):
            return parts
        if line[pos] != "|":
            return []
        pos += 1


def trim_field(raw: str) -> str:
    r"""``raw`` without unescaped spaces and tabs at either end (``a\ `` keeps its escaped space).

    >>> trim_field("  a\\  "), trim_field("\\\\ ")
    ('a\\ ', '\\\\')
    """
    text = raw.lstrip(" \t")
    trimmed = text.rstrip(" \t")
    if len(trimmed) < len(text) and (len(trimmed) - len(trimmed.rstrip("\\"))) % 2 == 1:
        trimmed = text[:len(trimmed) + 1]  # the last space was escaped: keep it
    return trimmed


# ---------------------------------------------------------------------------------------------
# names: the one place a text protocol asks the toolset


def _per_tool(tool: Tool, build: Callable[[Tool], dict[str, Any]]) -> dict[str, Any]:
    """``build(tool)``, worked out once per tool (kept in ``tool.programs``)."""
    found = tool.programs.get(build)
    if found is None:
        found = tool.programs[build] = build(tool)
    return found


def _kebab_index(tool: Tool) -> dict[str, str]:
    index = {p.name.replace("_", "-"): p.name for p in reversed(tool.parameters.properties)}
    index.update((p.name, p.name) for p in tool.parameters.properties)
    return index


def _schema_index(tool: Tool) -> dict[str, Schema]:
    index = {canonical_name(p.name): p.schema for p in reversed(tool.parameters.properties)}
    index.update((p.name, p.schema) for p in tool.parameters.properties)
    return index


def argument_names(tool: Tool | None) -> dict[str, str]:
    """A tool's parameters by their own spelling and by their kebab-case one (``term-months``), for a
    format that writes names in kebab case; empty without a tool.

    >>> from toolform_rules import sample_tool
    >>> argument_names(sample_tool())["term-months"], argument_names(None)
    ('term_months', {})
    """
    return _per_tool(tool, _kebab_index) if tool is not None else {}


def tool_parameters(tool: Tool | None) -> Sequence[str]:
    """A tool's parameter names in declared order (empty without a tool).

    >>> from toolform_rules import sample_tool
    >>> tool_parameters(sample_tool())[:3], tool_parameters(None)
    (['counterparty', 'value', 'term_months'], [])
    """
    return [p.name for p in tool.parameters.properties] if tool is not None else []


def parameter_schema(tool: Tool | None, key: str) -> Schema | None:
    """The schema of ``tool``'s parameter written ``key`` (its own spelling, else any naming convention).

    >>> from toolform_rules import sample_tool
    >>> parameter_schema(sample_tool(), "termMonths").types, parameter_schema(sample_tool(), "x")
    (('integer',), None)
    """
    if tool is None:
        return None
    index = _per_tool(tool, _schema_index)
    found = index.get(key)
    return found if found is not None else index.get(canonical_name(key))


# ---------------------------------------------------------------------------------------------
# the lenient step: prose after a value, on the call's line

#: a literal of each type that cannot hold a space, as the text-values typing reads it
_LITERALS = {
    "integer": re.compile(r"[-+]?\d+(?:\.0*)?"),
    "number": re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"),
    "boolean": re.compile(r"(?i:true|false)"),
}
#: where prose starts after a value: spaces, then a word (a letter first)
_PROSE_START = re.compile(r" +(?=[^\W\d_])")


def split_trailing_prose(raw: str, schema: Schema | None) -> tuple[str, str]:
    """A value and the prose a model wrote after it on its line (``601 Done.``), or ``(raw, "")``.

    Only where the schema's type ends the value: an integer, number or boolean cannot hold a
    space, and an enum member is one of its members — so ``601 Done.`` is ``601`` followed by
    prose when the parameter is an integer.  Text may hold anything and is kept whole, and a
    value that is not a literal of its type is kept whole too (validation reports it).

    >>> from toolform_rules import Schema
    >>> split_trailing_prose("601 Done.", Schema(types=("integer",)))
    ('601', 'Done.')
    >>> split_trailing_prose("in review Thanks!", Schema(types=("string",), enum=("draft", "in review")))
    ('in review', 'Thanks!')
    >>> split_trailing_prose("Acme Done.", Schema(types=("string",)))
    ('Acme Done.', '')
    >>> split_trailing_prose("six Done.", Schema(types=("integer",)))
    ('six Done.', '')
    """
    if schema is None or " " not in raw:
        return raw, ""
    if schema.enum:
        members = {value_text(member) for member in schema.enum}
        # the longest member the value starts with
        best = None if raw in members else next((space for space in reversed(list(_PROSE_START.finditer(raw)))
                                                 if raw[:space.start()] in members), None)
        return (raw[:best.start()], raw[best.end():]) if best is not None else (raw, "")
    gap = _PROSE_START.search(raw) if "string" not in schema.types else None
    literal = raw[:gap.start()] if gap is not None else ""
    if gap is not None and any(t in _LITERALS and _LITERALS[t].fullmatch(literal) for t in schema.types):
        return literal, raw[gap.end():]
    return raw, ""


# ---------------------------------------------------------------------------------------------
# finding candidates

#: where a prose lead-in may end and a call start: after ``.``, ``!``, ``?`` or ``:`` and spaces; the
#: first few such places on a line are tried
_LEAD_IN_ENDS = re.compile(r"[.!?:] +")
_LEAD_IN_MARKS = 8

#: text that is only blank lines and code-fence lines (```` ```bash ````, ``~~~``): not prose
_NOT_PROSE = re.compile(r"(?:[^\S\n]*+(?:(?:```|~~~)[^\n]*+)?\n)*+[^\S\n]*+(?:(?:```|~~~)[^\n]*+)?")


def _is_prose(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds more than blank lines and code-fence lines."""
    between = text[start:end]
    if "`" in between or "~" in between:
        return _NOT_PROSE.fullmatch(between) is None
    return bool(between) and not between.isspace()


def line_end(text: str, pos: int) -> int:
    """Where the line starting at ``pos`` ends (before its ``\\n``; a ``\\r`` before it excluded).

    >>> line_end("ab\\r\\ncd", 0), line_end("ab\\r\\ncd", 4)
    (2, 6)
    """
    nl = text.find("\n", pos)
    end = len(text) if nl < 0 else nl
    return end - 1 if end > pos and text[end - 1] == "\r" else end


def quoted_extent(stretches: re.Pattern[str], text: str, start: int, end: int) -> int:
    r"""Where a call that starts at ``start`` ends when its quoted values may hold line breaks:
    ``stretches`` (the format's quoted and unquoted stretches, never a bare line break) matched from
    its start ends at the first line break outside quotes; a quote left open (``stretches`` stops
    elsewhere) ends the call at its first line, ``end`` (the grammar then says where it stops).

    >>> stretches = re.compile(r"(?:[^'\n]++|'[^']*+')*+")
    >>> quoted_extent(stretches, "f 'a\nb' c\r\nnext", 0, 4), quoted_extent(stretches, "f 'a\nb", 0, 4)
    (9, 4)
    """
    stop = stretches.match(text, start).end()  # type: ignore[union-attr]
    if stop < len(text) and text[stop] != "\n":
        return end
    return stop - 1 if stop > start and text[stop - 1] == "\r" else stop


# ---------------------------------------------------------------------------------------------
# grammar support


def terminal_regex(grammar: str, name: str) -> str:
    """The regular expression of terminal ``name`` in ``grammars/<grammar>.lark`` (loads Lark).

    The fast readers scan with the grammar's own terminals, written out in the format modules
    (so that importing one does not load Lark); the tests hold each to this.

    >>> terminal_regex("url_call", "FRAGMENT")
    '#\\\\S*'
    """
    return str(load_parser(grammar).get_terminal(name).pattern.to_regexp())


def where(failure: GrammarFailure, line: int) -> str:
    """``failure.describe()`` with its line counted from the start of the reply (``line``: the candidate's).

    >>> where(GrammarFailure("g", 2, 5, ("'|'",), "'x'"), 10)
    "line 11, column 5: expected '|', found 'x'"
    """
    return GrammarFailure(failure.grammar, failure.line + line - 1, failure.column, failure.expected,
                          failure.found).describe()


# ---------------------------------------------------------------------------------------------
# the skeleton


class Reading:
    """One reply being read: the toolset and limits it is read under, the calls and notes so far,
    whether it kept to the format, and the reply's grammar budget (made when first needed)."""

    __slots__ = ("protocol_id", "tools", "limits", "calls", "notes", "clean", "_budget", "_tools", "twice")

    def __init__(self, protocol_id: str, tools: Toolset | None, limits: Limits) -> None:
        self.protocol_id, self.tools, self.limits = protocol_id, tools, limits
        self.calls: list[RawCall] = []
        self.notes: list[str] = []
        self.clean = True
        self._budget: GrammarBudget | None = None
        self._tools: dict[str, Tool | None] = {}
        #: the arguments that give a key more than once, by identity, with those keys (see :meth:`collect`)
        self.twice: dict[int, tuple[dict[str, Any], tuple[str, ...]]] = {}

    def add(self, name: str, arguments: dict[str, Any], span: tuple[int, int]) -> None:
        """The call ``name(arguments)``, with the keys :meth:`collect` found given twice."""
        known = self.twice.get(id(arguments)) if self.twice else None
        self.calls.append(RawCall(name, arguments, span, known[1] if known is not None and known[0] is arguments
                                  else ()))

    def note(self, sentence: str, *, breaks_format: bool = False) -> None:
        """Say ``sentence`` to the caller; ``breaks_format``: the reply is then not only the format."""
        self.notes.append(sentence)
        self.clean = self.clean and not breaks_format

    def tool(self, name: str) -> Tool | None:
        """The tool ``name`` means in this reply's toolset (:func:`~.reading.tool_of`, asked once per name)."""
        if name not in self._tools:
            self._tools[name] = tool_of(self.tools, name)
        return self._tools[name]

    def grammar(self, grammar: str, segment: str) -> Any:
        """``segment`` parsed by ``grammars/<grammar>.lark`` within the reply's budget (a
        :class:`GrammarFailure` where it stops, or :class:`~.reading.GrammarTooLong`)."""
        if self._budget is None:
            self._budget = GrammarBudget.of(self.limits)
        self._budget.spend(grammar, segment)
        return parse(grammar, segment)

    def without_prose(self, call: str, key: str, raw: Any) -> Any:
        """``raw`` (the last value of ``call``) without the prose written after it on its line, when
        the parameter's type ends it (:func:`split_trailing_prose`); the prose is noted."""
        if type(raw) is tuple:  # (the format's mark, the text): symbolic_call's § # % ¿
            text = self.without_prose(call, key, raw[1])
            return raw if text is raw[1] else (raw[0], text)
        if type(raw) is not str or " " not in raw:
            return raw
        value, prose = split_trailing_prose(raw, parameter_schema(self.tool(call), key))
        if prose:
            self.note(f"{call}: {key}: the text after the value ({prose!r}) is prose, not part of it",
                      breaks_format=True)
        return value

    def collect(self, call: str, pairs: Sequence[tuple[str, Any]],
                decode: Callable[[Any], Any] | None = None) -> dict[str, Any]:
        """The arguments of ``pairs`` (key, raw value), each value ``decode``\\ d (when given); a key
        given again keeps its last value (noted), and the last value loses the prose written after it."""
        arguments = dict(pairs)
        twice = keys_twice(pairs) if len(arguments) < len(pairs) else ()
        seen: set[str] = set()
        for key, _ in pairs if twice else ():
            if key in seen:
                self.note(f"{call}: {key} is given more than once; the last value is kept")
            seen.add(key)
        if pairs:
            key, raw = pairs[-1]
            arguments[key] = self.without_prose(call, key, raw)
        if decode is not None:
            arguments = {key: decode(raw) for key, raw in arguments.items()}
        if twice:
            self.twice[id(arguments)] = arguments, tuple(twice_at((), key) for key in twice)
        return arguments


class TextProtocol(Protocol):
    """A text-family protocol: the family finds and reads the candidates (:meth:`read`); the
    format says what a candidate is and what it holds, through these hooks:

    * ``grammar``, ``what`` (a candidate's name in a note);
    * ``needle``, ``fold_case``, ``lone_names`` — what a line must hold to be judged (tested
      without a pattern); :meth:`starts` (``start``) — whether a line's head begins a call; :meth:`extent` — where a
      call that starts on a line ends (past that line for a multi-line call);
    * :meth:`read_fast` — the candidate read with the grammar's terminals (``None``: the grammar
      reads it), and ``transformer`` — the grammar's tree made into the same thing;
    * :meth:`build` — the calls of what was read.
    """

    grammar: str = ""
    what: str = "call"
    #: where a line that begins a call starts (a pattern matched at the line's start): the default :meth:`starts`
    start: str = ""
    #: what every line that begins a call holds, after a lead-in too; in any case with ``fold_case``
    needle: str = ""
    fold_case = False
    #: whether a name alone on its line may be a call (a line of at most ``lone_spaces`` spaces, its
    #: ends aside, is then judged: a prompt's ``$ `` or a continuation's `` \``)
    lone_names = False
    lone_spaces = 2
    transformer: type[Transformer]
    #: what stands between two calls of a reply this protocol writes
    separator = "\n"
    _start: re.Pattern[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "start" in cls.__dict__:
            cls._start = re.compile(cls.start)

    @staticmethod
    def about(id: str, name: str, description: str) -> ProtocolInfo:
        """A text protocol's identity: its calls are lines (several a reply) and its values text."""
        return ProtocolInfo(id=id, name=name, description=description, parallel=True, text_values=True)

    def starts(self, head: str, tools: Toolset | None) -> bool:
        """Whether a line whose first :data:`HEAD` characters are ``head`` begins a call."""
        return self._start.match(head) is not None

    def starts_after_lead_in(self, head: str, tools: Toolset | None) -> bool:
        """Whether a call begins where a prose lead-in on its line ends (``head``: the rest of the line's head)."""
        return self.starts(head, tools)

    def extent(self, text: str, start: int, end: int) -> int:
        """Where a call starting at ``start`` ends; ``end``: the end of its first line."""
        return end

    def read_fast(self, segment: str, reading: Reading | None = None) -> Any:
        """``segment`` read with the grammar's terminals, as the grammar reads it; ``None`` when it
        is not in the plain form (the grammar then reads it and says where it stops)."""
        return None

    def read_grammar(self, segment: str, reading: Reading | None = None) -> Any:
        """``segment`` read by the grammar (within ``reading``'s budget): what :meth:`read_fast` returns."""
        tree = parse(self.grammar, segment) if reading is None else reading.grammar(self.grammar, segment)
        found = self.transformer().transform(tree)
        return found[0] if found else None

    def build(self, found: Any, reading: Reading) -> Iterable[tuple[str, dict[str, Any]]]:
        """The calls (name, arguments) of one candidate as read; notes go to ``reading``."""
        raise NotImplementedError

    def render_call(self, call: ToolCall) -> str:
        """One call as this protocol writes it."""
        raise NotImplementedError

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return self.separator.join(self.render_call(call) for call in calls)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        reading = Reading(self.info.id, tools, limits)
        spans, prose, truncated = self._candidates(text, tools)
        line_of = LineCounter(text)
        for start, end, lead in spans:
            if lead:
                self._read_after_lead_in(text[start:end], (start, end), reading)
                continue
            found = self.read_fast(text[start:end], reading)
            try:
                found = self.read_grammar(text[start:end], reading) if found is None else found
            except GrammarFailure as failure:
                line = line_of(start)[0]
                reading.note(f"{reading.protocol_id}: the {self.what} on line {line} could not be read: "
                             f"{where(failure, line)}", breaks_format=True)
                continue
            for name, arguments in self.build(found, reading) if found is not None else ():
                reading.add(name, arguments, (start, end))
        if truncated:
            reading.note(f"{reading.protocol_id}: only the first {len(reading.calls)} calls are read",
                         breaks_format=True)
        return Extraction(tuple(reading.calls), tuple(reading.notes), reading.clean and not prose and
                          bool(reading.calls))

    def _read_after_lead_in(self, segment: str, span: tuple[int, int], reading: Reading) -> None:
        """A call after a prose lead-in on its line: read only in the plain form (the fast reader's), and
        only when it names a tool of the toolset — else the line is prose, and nothing is noted."""
        kept = len(reading.notes), reading.clean
        found = self.read_fast(segment, reading)
        calls = list(self.build(found, reading)) if found is not None else []
        if not calls or any(reading.tool(name) is None for name, _ in calls):
            del reading.notes[kept[0]:]
            reading.clean = kept[1]
            return
        for name, arguments in calls:
            reading.add(name, arguments, span)

    def _after_lead_in(self, head: str, tools: Toolset | None) -> int:
        """Where in a line's head a call starts after a prose lead-in (the first few marks tried), or -1."""
        for tried, mark in enumerate(_LEAD_IN_ENDS.finditer(head)):
            if tried == _LEAD_IN_MARKS:
                break
            if self.starts_after_lead_in(head[mark.end():], tools):
                return mark.end()
        return -1

    def _candidates(self, text: str, tools: Toolset | None) -> tuple[list[tuple[int, int, bool]], bool, bool]:
        """``(start, end, after a lead-in)`` of every candidate call, in one pass; whether any
        other non-blank, non-fence text was seen (prose); whether candidates past
        :data:`MAX_CALLS` were left.

        A line is judged by its head (:meth:`starts`, a pattern) only when it holds the ``needle``
        (in any case with ``fold_case``), or may be a name alone with ``lone_names`` — tests of
        ``str`` in C, so that a line of prose costs no pattern."""
        spans: list[tuple[int, int, bool]] = []
        prose = False
        gap = resume = pos = 0  # where the text not yet judged prose or not starts; where a call may start
        needle, fold, lone, lone_spaces = self.needle, self.fold_case, self.lone_names, self.lone_spaces  # (per line)
        for line in text.split("\n"):
            begin, pos = pos, pos + len(line) + 1
            if begin < resume:
                continue
            held = needle in (line.lower() if fold else line)
            if not held and not (lone and line.strip().count(" ") <= lone_spaces):
                continue
            end = pos - 2 if line[-1:] == "\r" else pos - 1
            head = line[:min(end - begin, HEAD)]
            # after a lead-in a line holds the needle too: a line without it is a call from its start or none
            at = 0 if self.starts(head, tools) else self._after_lead_in(head, tools) if held else -1
            if at < 0:
                continue
            if len(spans) >= MAX_CALLS:
                return spans, True, True
            stop = self.extent(text, begin + at, end)
            prose = prose or at > 0 or _is_prose(text, gap, begin)
            spans.append((begin + at, stop, at > 0))
            gap = resume = stop
        return spans, prose or _is_prose(text, gap, len(text)), False


class Calls(Transformer):
    """The base of a text grammar's transformer: the reply's calls, in order (its ``start`` rule)."""

    def start(self, calls: list) -> list:
        return calls


#: the grammars' NAME: a tool's name where a call starts with it
NAME = r"[A-Za-z_][\w.\-]*"
_NAME = re.compile(NAME)


def is_name(text: str) -> bool:
    """Whether ``text`` is a NAME (an ASCII identifier is, without a pattern).

    >>> is_name("legal_draft_v3"), is_name("a.b-c"), is_name("3x"), is_name("é")
    (True, True, False, False)
    """
    return (text.isascii() and text.isidentifier()) or _NAME.fullmatch(text) is not None


class NameFirst(TextProtocol):
    """A format whose call is a line that starts with the tool's name and then ``delimiter`` (``|``, ``★``,
    ``,``): such a line begins a call, and so does a name alone on its line when the toolset has that
    tool (a call without arguments — a lone word is prose otherwise, and always after a lead-in)."""

    #: the delimiter after the name (the ``needle``)
    delimiter: str
    lone_names = True
    lone_spaces = 0  # a name alone: one word

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.needle = cls.delimiter

    def starts(self, head: str, tools: Toolset | None) -> bool:
        at = head.find(self.delimiter)
        if at >= 0:
            return is_name(head[:at].strip(" \t"))
        name = head.strip(" \t")
        return is_name(name) and tool_of(tools, name) is not None

    def starts_after_lead_in(self, head: str, tools: Toolset | None) -> bool:
        # a name and the delimiter: a lone word after prose is prose
        at = head.find(self.delimiter)
        return at >= 0 and is_name(head[:at].strip(" \t"))


__all__ = ["DEFAULT_LIMITS", "HEAD", "MAX_CALLS", "NAME", "Calls", "GrammarBudget", "NameFirst", "Reading",
           "TextProtocol", "argument_names", "backslash_escape", "backslash_unescape", "is_name", "line_end",
           "parameter_schema", "quoted_extent", "split_pipes", "split_trailing_prose", "terminal_regex",
           "tool_parameters", "trim_field", "value_text", "where"]
