r"""cli_call: ``tool_name --arg value --flag`` — one shell-style command line per call.

Grammar: ``grammars/cli_call.lark``.  Words are quoted as a POSIX shell quotes them
(``'it'"'"'s'``), so any text round-trips, line breaks included; nested values are JSON
text.  Options are written in kebab case (``--term-months``) and read back as the tool's
parameter names (``term_months``) — resolved against the tool's parameters when a toolset
is given.  Values are text (``text_values``); a bare ``--flag`` is the boolean ``true``
(the only value the syntax itself types), and ``--no-flag`` is ``false`` when the tool has
a parameter ``flag`` and none called ``no_flag``.

>>> from toolform_rules import ToolCall, sample_toolset
>>> text = PROTOCOL.render_calls([ToolCall("legal_draft_v3", {"counterparty": "Acme, 'Ltd'", "term_months": 12,
...                                                          "auto_renew": True})])
>>> text
'legal_draft_v3 --counterparty \'Acme, \'"\'"\'Ltd\'"\'"\'\' --term-months 12 --auto-renew'
>>> PROTOCOL.parse(text, sample_toolset()).calls[0].arguments
{'counterparty': "Acme, 'Ltd'", 'term_months': '12', 'auto_renew': True}
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import Token, Transformer
from .text_family import (GrammarBudget, LineStarts, Read, grammar_parse, has_parameter, kebab_argument_name,
                          never_raises, read_calls, resolve_tool, terminal_regex, value_text)

GRAMMAR = "cli_call"

#: the grammar's WORD terminal, written so that a run of plain characters (or a quoted stretch) is one
#: step — a word as long as the reply is read in C, not a character at a time; the tests hold it to
#: the grammar's.  Its alternatives start with different characters, so no repeat gives anything back.
_WORD = r"""(?:[^\s'"\\]++|\\(?!\r\n)[^\n]|'[^']*+'|"(?:[^"\\]++|\\[\s\S])*+")++"""
# one token of a call with the white space before it (SPACE and CONTINUATION, which the grammar ignores):
# the grammar's terminals in its lexer's order, one match a token
_TOKENS = re.compile(
    rf"(?:{terminal_regex(GRAMMAR, 'SPACE')}|{terminal_regex(GRAMMAR, 'CONTINUATION')})*+(?:"
    rf"(?P<OPTION_EQ>--?[A-Za-z_][\w.\-]*=(?:{_WORD})?)|(?P<OPTION>{terminal_regex(GRAMMAR, 'OPTION')})"
    rf"|(?P<WORD>{_WORD}))?")
_HEAD = re.compile(rf"[ \t\f\v]*(?:(?P<PROMPT>\$)[ \t\f\v]*)?(?P<NAME>{terminal_regex(GRAMMAR, 'NAME')})")
_START = re.compile(r"[ \t]*(?:\$[ \t]+)?[A-Za-z_][\w.\-]*(?P<rest>[ \t]+-|[ \t]*\\?$)")
# the lines ``starts`` may take: a name and an option, or a name alone (and a continuation) on its line
_CANDIDATES = LineStarts(r"[ \t]*(?:\$[ \t]+)?[A-Za-z_][\w.\-]*+(?:[ \t]+-|[ \t]*+\\?\r?(?:\n|\Z))")
_PIECES = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\[\s\S])*)\"|\\([^\n])|([^'\"\\]+)")
_DQ_ESCAPE = re.compile(r"\\([\"\\$`\n])")
_SAFE = frozenset("_@%+=:,./-")


def unquote_word(word: str) -> str:
    r"""The text a shell word stands for: quotes removed, escapes read.

    >>> unquote_word('\'it\'"\'"\'s\''), unquote_word('"a \\"b\\" \\\\ \\x"'), unquote_word('a\\ b')
    ("it's", 'a "b" \\ \\x', 'a b')
    """
    if "'" not in word and '"' not in word and "\\" not in word:
        return word
    out = []
    for m in _PIECES.finditer(word):
        single, double, escaped, bare = m.groups()
        if single is not None:
            out.append(single)
        elif double is not None:
            out.append(_DQ_ESCAPE.sub(lambda e: "" if e.group(1) == "\n" else e.group(1), double))
        elif escaped is not None:
            out.append(escaped)
        else:
            out.append(bare)
    return "".join(out)


def quote_word(text: str) -> str:
    """``text`` as one shell word: bare when that is safe, else single-quoted.

    >>> quote_word("Acme"), quote_word("a b"), quote_word("it's"), quote_word(""), quote_word("--x")
    ('Acme', "'a b'", '\\'it\\'"\\'"\\'s\\'', "''", "'--x'")
    """
    if text and text[0] != "-" and all(c.isalnum() or c in _SAFE for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _tokens_fast(segment: str) -> list[tuple[str, str]] | None:
    """The tokens of one call, scanned with the grammar's terminals; ``None`` when anything
    falls outside them (the grammar then reads the segment and says where it stopped)."""
    head = _HEAD.match(segment)
    if head is None:
        return None
    tokens: list[tuple[str, str]] = [("NAME", head.group("NAME"))]
    pos = head.end()
    n = len(segment)
    match = _TOKENS.match
    while pos < n:
        m = match(segment, pos)
        kind = m.lastgroup  # type: ignore[union-attr]
        if kind is None:  # white space to the end, or a character no terminal takes
            return tokens if m.end() == n else None  # type: ignore[union-attr]
        tokens.append((kind, m.group(kind)))  # type: ignore[union-attr]
        pos = m.end()  # type: ignore[union-attr]
    return tokens


class _Tokens(Transformer):
    def start(self, calls: list) -> list:
        return calls

    def call(self, items: list) -> list[tuple[str, str]]:
        return [(t.type, str(t)) for t in items if isinstance(t, Token) and t.type != "PROMPT"]


def _tokens_grammar(segment: str, budget: GrammarBudget | None = None) -> list[tuple[str, str]]:
    calls = _Tokens().transform(grammar_parse(GRAMMAR, segment, budget))
    return calls[0] if calls else []


def _option_name(option: str) -> str:
    return option.lstrip("-")


def build_call(tokens: list[tuple[str, str]], tools: Toolset | None) -> tuple[str, dict[str, Any], list[str], bool]:
    """``(name, arguments, notes, clean)`` of one call's tokens; ``clean`` is false when words
    follow no option (they are not part of the format and are left out)."""
    name = tokens[0][1]
    tool = resolve_tool(name, tools)
    arguments: dict[str, Any] = {}
    notes: list[str] = []
    positional: list[str] = []  # the first few words that follow no option (all are counted)
    left_out = 0
    pending: str | None = None

    def put(flag: str, value: Any) -> None:
        key = kebab_argument_name(flag, tool)
        if isinstance(value, bool) and value and key.startswith("no_") and tool is not None:
            positive = key[3:]
            if has_parameter(tool, positive) and not has_parameter(tool, key):
                key, value = positive, False
        if key in arguments:
            notes.append(f"--{flag} is given more than once; the last value is kept")
        arguments[key] = value

    for kind, text in tokens[1:]:
        if kind == "OPTION":
            if pending is not None:
                put(pending, True)
            pending = _option_name(text)
        elif kind == "OPTION_EQ":
            if pending is not None:
                put(pending, True)
                pending = None
            flag, _, raw = text.partition("=")
            put(_option_name(flag), unquote_word(raw))
        elif pending is not None:
            put(pending, unquote_word(text))
            pending = None
        else:
            left_out += 1
            if left_out <= 3:
                positional.append(unquote_word(text))
    if pending is not None:
        put(pending, True)
    if left_out:
        shown = ", ".join(repr(p) for p in positional) + (", ..." if left_out > 3 else "")
        notes.append(f"{name}: {left_out} value(s) follow no --option and are left out: {shown}")
    return name, arguments, notes, not left_out


# a backslash before CRLF escapes the whole line end (the continuation), not just the CR
_SEGMENT = re.compile(r"""(?:[^'"\\\n]++|\\\r\n|\\[\s\S]|'[^']*+'|"(?:[^"\\]++|\\[\s\S])*+")*+""")


def _extent(text: str, start: int, end: int) -> int:
    """Where a call that starts on this line ends: the first line break outside quotes that is
    not escaped (a quoted value may hold line breaks; ``\\`` at a line's end continues it).
    A quote left open ends the call at its own line (the grammar then says where it stopped)."""
    match = _SEGMENT.match(text, start)
    stop = match.end() if match is not None else end
    if stop < len(text) and text[stop] != "\n":  # an unclosed quote
        return end
    return stop - 1 if stop > start and text[stop - 1] == "\r" else stop


def kebab(name: str) -> str:
    """An argument name as an option: ``_`` made ``-``, except leading ones (``--_class``).

    >>> kebab("term_months"), kebab("_class")
    ('term-months', '_class')
    """
    body = name.lstrip("_")
    return name[:len(name) - len(body)] + body.replace("_", "-")


class CliCall(Protocol):
    info = ProtocolInfo(
        id="cli_call",
        name="Command-line call",
        description="`tool_name --arg value --flag`: a shell command line per call; values are text, typed from "
                    "the schema.",
        parallel=True,
        text_values=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return never_raises(self.id, self._parse, text, tools, limits)

    def _parse(self, text: str, tools: Toolset | None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        budget = GrammarBudget.of(limits)

        def starts(head: str) -> bool:
            m = _START.match(head)
            if m is None:
                return False
            if m.group("rest").strip(" \t") in ("", "\\"):  # a name alone: a call only to a known tool
                word = head.strip().lstrip("$").strip().rstrip("\\").strip()
                return resolve_tool(word, tools) is not None
            return True

        def read_one(segment: str) -> Read:
            tokens = _tokens_fast(segment)
            if tokens is None:
                tokens = _tokens_grammar(segment, budget)
            return build_call(tokens, tools)

        return read_calls(self.id, text, starts, read_one, _extent, what="command", candidates=_CANDIDATES)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self._render(call) for call in calls)

    def _render(self, call: ToolCall) -> str:
        parts = [call.name]
        for key, value in call.arguments.items():
            flag = "--" + kebab(key)
            if value is True:
                parts.append(flag)
                continue
            text = value_text(value)
            parts.append(flag)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not text.lstrip("-")[:1].isalpha():
                parts.append(text)  # numbers stand bare, negative ones too
            else:
                parts.append(quote_word(text))
        return " ".join(parts)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with a command line and nothing else: the tool's name, then each argument as "
                "--argument-name value (underscores in names become hyphens). Quote a value that holds spaces or "
                "special characters with single quotes, write a nested object or list as JSON inside single "
                "quotes, and write a true boolean as the bare --flag. For several calls, one command per line:\n"
                "tool_name --text 'two words' --count 3 --verbose")


PROTOCOL = CliCall()
