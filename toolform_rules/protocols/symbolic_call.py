r"""symbolic_call: ``tool_name ★arg§text ★count#7`` — each value marked with a symbol for its type.

Grammar: ``grammars/symbolic_call.lark``.  The symbols are § text, # whole number,
% number, ¿ true/false, ≡ list and ¤ object (lists and objects as JSON).  The syntax types
the values itself, so a call comes back with ints, floats, booleans, lists and objects
where the symbols say so; only § text is text (``text_values``: the pipeline still types a
§ value the schema wants as a number).  A value whose text does not fit its symbol
(``#twelve``) is kept as text for validation to report.  Text escapes its marker as ``\★``
and writes ``\\``, ``\n``, ``\r``, ``\t`` and a space kept at either end as ``\ ``.
There is no symbol for null: ``None`` is written ``§null``.

>>> from toolform_rules import ToolCall, sample_toolset
>>> call = ToolCall("legal_draft_v3", {"counterparty": "A★B ", "value": 0.5, "term_months": 12,
...                                    "auto_renew": False, "contract_details": {"status": "draft"}})
>>> text = PROTOCOL.render_calls([call])
>>> print(text)
legal_draft_v3 ★counterparty§A\★B\  ★value%0.5 ★term_months#12 ★auto_renew¿false ★contract_details¤{"status": "draft"}
>>> PROTOCOL.parse(text, sample_toolset()).calls[0].arguments
{'counterparty': 'A★B ', 'value': 0.5, 'term_months': 12, 'auto_renew': False, 'contract_details': {'status': 'draft'}}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import Tree
from .text_family import (GrammarBudget, LineStarts, Read, backslash_escape, backslash_unescape, grammar_parse,
                          never_raises, read_calls, resolve_tool, terminal_regex, value_text)
from .values import JsonValues, number

GRAMMAR = "symbolic_call"
MARK = "★"
TEXT_SIGIL, WHOLE, NUMBER, TRUTH, LIST, OBJECT = "§", "#", "%", "¿", "≡", "¤"
SIGILS = {"text": TEXT_SIGIL, "whole": WHOLE, "number_text": NUMBER, "truth": TRUTH, "listed": LIST,
          "mapping": OBJECT}

_NAME = re.compile(terminal_regex(GRAMMAR, "NAME"))
_KEY = re.compile(terminal_regex(GRAMMAR, "KEY"))
#: the grammar's TEXT and LOOSE terminals, written so that a run of plain characters is one step (a value
#: as long as the reply is read in C, not a character at a time); the tests hold them to the grammar's
_TEXT = re.compile(r"(?:[^★\\ \t\r\n]|\\[^\r\n])(?:[ \t]*+(?:[^★\\ \t\r\n]++|\\[^\r\n]))*+")
_LOOSE = re.compile(r"(?:[^★\\ \t\r\n\[{]|\\[^\r\n])(?:[ \t]*+(?:[^★\\ \t\r\n]++|\\[^\r\n]))*+")
_SPACE = re.compile(r"[ \t]*")
_START = re.compile(r"[ \t]*[A-Za-z_][\w.\-]*[ \t]*(?P<mark>★)?")
# the lines ``starts`` may take: a name and a ★, or a name alone on its line
_CANDIDATES = LineStarts(r"[ \t]*[A-Za-z_][\w.\-]*+[ \t]*+(?:★|\r?(?:\n|\Z))")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _no_constants(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(parse_constant=_no_constants)

#: one argument as read: (key, sigil, raw text | parsed JSON | None)
Argument = tuple[str, str, Any]


def _arguments_fast(segment: str) -> tuple[str, list[Argument]] | None:
    """The name and arguments of one line, scanned with the grammar's terminals and strict JSON
    (``json``'s C decoder); ``None`` when anything falls outside them."""
    if "\r" in segment:
        return None
    pos = _SPACE.match(segment).end()  # type: ignore[union-attr]
    m = _NAME.match(segment, pos)
    if m is None:
        return None
    name = m.group()
    pos = m.end()
    n = len(segment)
    arguments: list[Argument] = []
    while True:
        pos = _SPACE.match(segment, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            return name, arguments
        if segment[pos] != MARK:
            return None
        m = _KEY.match(segment, pos + 1)
        if m is None or m.end() >= n:
            return None
        key = m.group()
        sigil = segment[m.end()]
        pos = _SPACE.match(segment, m.end() + 1).end()  # type: ignore[union-attr]
        value: Any = None
        if sigil in (LIST, OBJECT) and pos < n and segment[pos] in "[{":
            if segment[pos] != ("[" if sigil == LIST else "{"):
                return None
            try:
                value, pos = _DECODER.raw_decode(segment, pos)
            except (ValueError, RecursionError):
                return None
        elif sigil in SIGILS.values():
            pattern = _LOOSE if sigil in (LIST, OBJECT) else _TEXT
            t = pattern.match(segment, pos)
            if t is not None:
                value, pos = t.group(), t.end()
        else:
            return None
        arguments.append((key, sigil, value))
        after = _SPACE.match(segment, pos).end()  # type: ignore[union-attr]
        if after < n and segment[after] != MARK:
            return None


class _Arguments(JsonValues):
    def start(self, calls: list) -> list:  # type: ignore[override]
        return calls

    def call(self, items: list) -> tuple[str, list[Argument]]:
        return str(items[0]), items[1:]

    def argument(self, items: list) -> Argument:
        key, (sigil, value) = items
        return str(key), sigil, value

    @staticmethod
    def _value(sigil: str, items: list) -> tuple[str, Any]:
        if not items:
            return sigil, None
        item = items[0]
        return sigil, (item if isinstance(item, (list, dict)) else str(item))

    def text(self, items: list) -> tuple[str, Any]:
        return self._value(TEXT_SIGIL, items)

    def whole(self, items: list) -> tuple[str, Any]:
        return self._value(WHOLE, items)

    def number_text(self, items: list) -> tuple[str, Any]:
        return self._value(NUMBER, items)

    def truth(self, items: list) -> tuple[str, Any]:
        return self._value(TRUTH, items)

    def listed(self, items: list) -> tuple[str, Any]:
        return self._value(LIST, items)

    def mapping(self, items: list) -> tuple[str, Any]:
        return self._value(OBJECT, items)


def _arguments_grammar(segment: str, budget: GrammarBudget | None = None) -> tuple[str, list[Argument]]:
    tree = grammar_parse(GRAMMAR, segment, budget)
    calls = _Arguments().transform(tree) if isinstance(tree, Tree) else []
    return calls[0] if calls else ("", [])


def typed_value(sigil: str, raw: Any) -> Any:
    """The value a symbol and its text stand for; text that does not fit the symbol stays text.

    >>> [typed_value(s, t) for s, t in (("#", "12"), ("%", "1e-07"), ("¿", "True"), ("#", "twelve"), ("§", None))]
    [12, 1e-07, True, 'twelve', '']
    """
    if raw is None:
        return ""
    if not isinstance(raw, str):
        return raw
    if sigil == TEXT_SIGIL:
        return backslash_unescape(raw, MARK)
    if sigil in (WHOLE, NUMBER):
        if _JSON_NUMBER.fullmatch(raw):
            return number(raw)
        return backslash_unescape(raw, MARK)
    if sigil == TRUTH:
        lowered = raw.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
    return backslash_unescape(raw, MARK)


def build_call(name: str, arguments: list[Argument]) -> Read:
    out: dict[str, Any] = {}
    notes: list[str] = []
    for key, sigil, raw in arguments:
        if key in out:
            notes.append(f"{name}: {key} is given more than once; the last value is kept")
        out[key] = typed_value(sigil, raw)
    return name, out, notes, True


def sigil_of(value: Any) -> str:
    """The symbol a value is written with (null is written as the text ``null``)."""
    if isinstance(value, bool):
        return TRUTH
    if isinstance(value, int):
        return WHOLE
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, list):
        return LIST
    if isinstance(value, dict):
        return OBJECT
    return TEXT_SIGIL


class SymbolicCall(Protocol):
    info = ProtocolInfo(
        id="symbolic_call",
        name="Type-marked symbolic call",
        description="`tool_name ★arg§text ★count#7`: ★ before each argument and a symbol for its value's type.",
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
            if m.group("mark"):
                return True
            return m.end() == len(head) and resolve_tool(head.strip(), tools) is not None

        def read_one(segment: str) -> Read:
            found = _arguments_fast(segment)
            if found is None:
                found = _arguments_grammar(segment, budget)
            return build_call(*found)

        return read_calls(self.id, text, starts, read_one, candidates=_CANDIDATES)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self._render(call) for call in calls)

    @staticmethod
    def _render(call: ToolCall) -> str:
        parts = [call.name]
        for key, value in call.arguments.items():
            sigil = sigil_of(value)
            if sigil == TEXT_SIGIL:
                text = backslash_escape(value_text(value), MARK)
            elif sigil == NUMBER and not _JSON_NUMBER.fullmatch(value_text(value)):
                sigil, text = TEXT_SIGIL, value_text(value)  # inf and nan have no number form
            else:
                text = value_text(value)
            parts.append(f"{MARK}{key}{sigil}{text}")
        return " ".join(parts)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one line per call and nothing else: the tool's name, then for each argument a ★, "
                "the argument's name, a symbol for the value's type and the value. The symbols: § text, "
                "# whole number, % any number, ¿ true or false, ≡ a list as JSON, ¤ an object as JSON. Inside "
                "text, write ★ as \\★, a backslash as \\\\ and a line break as \\n:\n"
                "tool_name ★city§New York ★days#3 ★metric¿true ★tags≡[\"a\", \"b\"]")


PROTOCOL = SymbolicCall()
