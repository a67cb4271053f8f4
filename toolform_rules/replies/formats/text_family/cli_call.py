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
from typing import Any, Iterable

from ....calls import ToolCall
from ....grammar import Token
from ....schema.toolset import Toolset
from ..reading import tool_of
from .shared import (NAME, Calls, Reading, TextProtocol, argument_names, parameter_schema,
                          quoted_extent, value_text)

#: the grammar's terminals (the tests hold them to ``grammars/cli_call.lark``; NAME is the family's); WORD is
#: written so that a run of plain characters (or a quoted stretch) is one step — a word as long as the reply
#: is read in C.  Its alternatives start with different characters, so no repeat gives anything back.
OPTION = r"--?[A-Za-z_][\w.\-]*"
SPACE = r"[ \t\f\v]+"
CONTINUATION = r"\\\r?\n"
WORD = r"""(?:[^\s'"\\]++|\\(?!\r\n)[^\n]|'[^']*+'|"(?:[^"\\]++|\\[\s\S])*+")++"""
_SPACES = rf"(?:{SPACE}|{CONTINUATION})*+"
# one token of a call with the white space before it (SPACE and CONTINUATION, which the grammar ignores):
# the grammar's terminals in its lexer's order (OPTION_EQ, OPTION, WORD), one match a token
_OPTION = r"--?[A-Za-z_][\w.\-]*+"  # OPTION, giving nothing back (its characters are never "=" or space)
_TOKEN = rf"{_SPACES}(?:({_OPTION}=(?:{WORD})?)|({_OPTION})|({WORD}))"
_TOKENS = re.compile(_TOKEN)
# a command in the plain form: the tokens one after another (each repeat atomic, so the tokens are the
# ones the lexer takes, one after the other), white space to the end
_COMMAND = re.compile(rf"[ \t\f\v]*(?:\$[ \t\f\v]*)?(?P<NAME>{NAME})"
                      rf"(?:{_SPACES}(?:{_OPTION}=(?:{WORD})?|{_OPTION}|{WORD}))*+(?P<tail>){_SPACES}")
_START = re.compile(r"[ \t]*(?:\$[ \t]+)?[A-Za-z_][\w.\-]*(?P<rest>[ \t]+-|[ \t]*\\?$)")
_PIECES = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\[\s\S])*)\"|\\([^\n])|([^'\"\\]+)")
_DQ_ESCAPE = re.compile(r"\\([\"\\$`\n])")
_SAFE = frozenset("_@%+=:,./-")
#: the words a boolean option may take as its value (the rest, after the last option, is prose)
_BOOLEAN_WORDS = frozenset(("true", "false", "yes", "no", "on", "off", "y", "n", "1", "0"))

#: a command as read: the tool's name and its tokens, each (OPTION_EQ, OPTION, WORD) with one of them
#: not empty, as ``re.findall`` gives them
Tokens = tuple[str, list[tuple[str, str, str]]]


def _piece(found: re.Match[str]) -> str:
    single, double, escaped, bare = found.groups()
    if double is not None:
        return _DQ_ESCAPE.sub(lambda e: "" if e.group(1) == "\n" else e.group(1), double)
    return single if single is not None else escaped if escaped is not None else bare


def unquote_word(word: str) -> str:
    r"""The text a shell word stands for: quotes removed, escapes read.

    >>> unquote_word('\'it\'"\'"\'s\''), unquote_word('"a \\"b\\" \\\\ \\x"'), unquote_word('a\\ b')
    ("it's", 'a "b" \\ \\x', 'a b')
    """
    if "'" not in word and '"' not in word and "\\" not in word:
        return word
    return "".join(map(_piece, _PIECES.finditer(word)))


def quote_word(text: str) -> str:
    """``text`` as one shell word: bare when that is safe, else single-quoted.

    >>> quote_word("Acme"), quote_word("a b"), quote_word("it's"), quote_word(""), quote_word("--x")
    ('Acme', "'a b'", '\\'it\\'"\\'"\\'s\\'', "''", "'--x'")
    """
    if text and text[0] != "-" and all(c.isalnum() or c in _SAFE for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


class _Tokens(Calls):
    def call(self, items: list) -> Tokens:
        tokens = [t for t in items if isinstance(t, Token) and t.type != "PROMPT"]
        return str(tokens[0]), [_AS_FOUND[t.type](str(t)) for t in tokens[1:]]


_AS_FOUND = {"OPTION_EQ": lambda text: (text, "", ""), "OPTION": lambda text: ("", text, ""),
             "WORD": lambda text: ("", "", text)}

# a command's stretches: a backslash before CRLF escapes the whole line end (the continuation), not just the CR
_STRETCHES = re.compile(r"""(?:[^'"\\\n]++|\\\r\n|\\[\s\S]|'[^']*+'|"(?:[^"\\]++|\\[\s\S])*+")*+""")


def kebab(name: str) -> str:
    """An argument name as an option: ``_`` made ``-``, except leading ones (``--_class``).

    >>> kebab("term_months"), kebab("_class")
    ('term-months', '_class')
    """
    body = name.lstrip("_")
    return name[:len(name) - len(body)] + body.replace("_", "-")


class CliCall(TextProtocol):
    info = TextProtocol.about(
        "cli_call", "Command-line call",
        "`tool_name --arg value --flag`: a shell command line per call; values are text, typed from the "
        "schema.")
    grammar = "cli_call"
    what = "command"
    transformer = _Tokens
    needle = "-"  # a name and an option, or a name alone (and a continuation) on its line
    lone_names = True

    def starts(self, head: str, tools: Toolset | None) -> bool:
        m = _START.match(head)
        if m is None:
            return False
        if m.group("rest").strip(" \t") in ("", "\\"):  # a name alone: a call only to a known tool
            word = head.strip().lstrip("$").strip().rstrip("\\").strip()
            return tool_of(tools, word) is not None
        return True

    def starts_after_lead_in(self, head: str, tools: Toolset | None) -> bool:
        m = _START.match(head)  # a name and an option: a lone word after prose is prose
        return m is not None and m.group("rest").strip(" \t") not in ("", "\\")

    def extent(self, text: str, start: int, end: int) -> int:
        """A command runs to the first line break outside quotes that is not escaped (a quoted value may
        hold line breaks; ``\\`` at a line's end continues it); a quote left open ends it at its line."""
        return quoted_extent(_STRETCHES, text, start, end)

    def read_fast(self, segment: str, reading: Reading | None = None) -> Tokens | None:
        """The tokens of one command, scanned with the grammar's terminals."""
        m = _COMMAND.fullmatch(segment)
        if m is None:
            return None
        return m.group("NAME"), _TOKENS.findall(segment, m.end("NAME"), m.start("tail"))

    def build(self, found: Tokens, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        """The call of one command's tokens; words that follow no option are not part of the format
        and are left out (noted), and so is prose after a boolean flag (``--auto-renew Done.``)."""
        name, tokens = found
        tool = reading.tool(name)
        spelled = argument_names(tool)
        pairs: list[tuple[str, Any]] = []
        left_out: list[str] = []
        pending: str | None = None  # an option waiting for its value
        prose_at = _prose_after_flag(tokens, spelled, tool)
        for i, (option_eq, option, word) in enumerate(tokens):
            if pending is not None and (not word or i == prose_at):  # a flag: true
                pairs.append(_named(pending, True, spelled))
                pending = None
            if option_eq:
                flag, _, raw = option_eq.partition("=")
                pairs.append(_named(flag.lstrip("-"), unquote_word(raw), spelled))
            elif word and pending is not None:
                pairs.append(_named(pending, unquote_word(word), spelled))
            elif word:
                left_out.append(word)
            pending = option.lstrip("-") if option else None
        if pending is not None:
            pairs.append(_named(pending, True, spelled))
        if left_out:
            shown = ", ".join(repr(unquote_word(w)) for w in left_out[:3]) + (", ..." if len(left_out) > 3 else "")
            reading.note(f"{name}: {len(left_out)} value(s) follow no --option and are left out: {shown}",
                         breaks_format=True)
        return [(name, reading.collect(name, pairs))]

    def render_call(self, call: ToolCall) -> str:
        parts = [call.name]
        for key, value in call.arguments.items():
            parts.append("--" + kebab(key))
            text = value_text(value)
            if value is not True:  # (a true boolean is the bare flag; numbers stand bare, negative ones too)
                number = isinstance(value, (int, float)) and not isinstance(value, bool) and \
                    not text.lstrip("-")[:1].isalpha()
                parts.append(text if number else quote_word(text))
        return " ".join(parts)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with a command line and nothing else: the tool's name, then each argument as "
                "--argument-name value (underscores in names become hyphens). Quote a value that holds spaces or "
                "special characters with single quotes, write a nested object or list as JSON inside single "
                "quotes, and write a true boolean as the bare --flag. For several calls, one command per line:\n"
                "tool_name --text 'two words' --count 3 --verbose")


def _named(flag: str, value: Any, spelled: dict[str, str]) -> tuple[str, Any]:
    """The parameter a flag names (its kebab case undone) and its value; ``--no-flag`` is ``flag``
    false when the tool has a parameter ``flag`` and none called ``no_flag``."""
    key = spelled.get(flag) or flag.replace("-", "_")
    if value is True and key.startswith("no_") and spelled.get(key[3:]) == key[3:] and spelled.get(key) != key:
        return key[3:], False
    return key, value


def _prose_after_flag(tokens: list[tuple[str, str, str]], spelled: dict[str, str], tool: Any) -> int:
    """Where prose starts right after the last option when the schema types it as a boolean (the flag,
    then a sentence: a bare word that starts with a letter and is no boolean word), or -1."""
    last = len(tokens) - 2
    if last < 0 or not tokens[last][1] or not tokens[last + 1][2] or tool is None:
        return -1
    word = tokens[last + 1][2]
    if not word[:1].isalpha() or word.lower() in _BOOLEAN_WORDS or "'" in word or '"' in word:
        return -1
    schema = parameter_schema(tool, _named(tokens[last][1].lstrip("-"), True, spelled)[0])
    return last + 1 if schema is not None and "boolean" in schema.types and "string" not in schema.types else -1


PROTOCOL = CliCall()
