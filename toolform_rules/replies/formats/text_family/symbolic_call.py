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

import re
from typing import Any, Iterable

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..reading import JSON_VALUES
from .shared import NAME, Calls, NameFirst, Reading, backslash_escape, backslash_unescape, value_text
from ..values import JsonValues, number

MARK = "★"
TEXT_SIGIL, WHOLE, NUMBER, TRUTH, LIST, OBJECT = "§", "#", "%", "¿", "≡", "¤"
#: the grammar's value rules and their symbols
_RULE_SIGILS = {"text": TEXT_SIGIL, "whole": WHOLE, "number_text": NUMBER, "truth": TRUTH, "listed": LIST,
                "mapping": OBJECT}

#: the grammar's terminals (the tests hold them to ``grammars/symbolic_call.lark``; NAME is the family's);
#: TEXT and LOOSE are written so that a run of plain characters is one step (a value as long as the reply
#: is read in C)
KEY = r"[^\s★§#%¿≡¤\\]+"
TEXT = r"(?:[^★\\ \t\r\n]|\\[^\r\n])(?:[ \t]*+(?:[^★\\ \t\r\n]++|\\[^\r\n]))*+"
LOOSE = r"(?:[^★\\ \t\r\n\[{]|\\[^\r\n])(?:[ \t]*+(?:[^★\\ \t\r\n]++|\\[^\r\n]))*+"
_TEXT = re.compile(TEXT)
_LOOSE = re.compile(LOOSE)
_HEAD = re.compile(rf"[ \t]*+({NAME})[ \t]*+")
# one argument and the spaces after it: a text-like value read whole, a list or object's start
_ARGUMENT = re.compile(rf"★({KEY}+)(?:([§#%¿])[ \t]*+({TEXT})?|[≡¤][ \t]*+)[ \t]*+")
_SPACE = re.compile(r"[ \t]*+")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")

#: one call as read: its name and arguments, (key, (symbol, raw text | parsed JSON | None))
Arguments = tuple[str, list[tuple[str, tuple[str, Any]]]]


class _Arguments(Calls, JsonValues):
    def call(self, items: list) -> Arguments:
        return str(items[0]), items[1:]

    def argument(self, items: list) -> tuple[str, tuple[str, Any]]:
        return str(items[0]), items[1]

    def __default__(self, rule: Any, children: list, meta: Any) -> Any:
        """A value rule (``text``, ``whole``, ... ``mapping``): its symbol and its text or JSON."""
        if rule not in _RULE_SIGILS:
            return super().__default__(rule, children, meta)  # type: ignore[misc]
        item = children[0] if children else None
        return _RULE_SIGILS[rule], (item if item is None or isinstance(item, (list, dict)) else str(item))


def typed_value(sigil: str, raw: Any) -> Any:
    """The value a symbol and its text stand for; text that does not fit the symbol stays text.

    >>> [typed_value(s, t) for s, t in (("#", "12"), ("%", "1e-07"), ("¿", "True"), ("#", "twelve"), ("§", None))]
    [12, 1e-07, True, 'twelve', '']
    """
    if raw is None:
        return ""
    if not isinstance(raw, str):
        return raw
    if sigil in (WHOLE, NUMBER) and _JSON_NUMBER.fullmatch(raw):
        return number(raw)
    if sigil == TRUTH:
        lowered = raw.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
    return backslash_unescape(raw, MARK)


def _typed(marked: tuple[str, Any]) -> Any:
    return typed_value(*marked)


def sigil_of(value: Any) -> str:
    """The symbol a value is written with (null is written as the text ``null``).

    >>> [sigil_of(v) for v in (True, 3, 0.5, [], {}, "a", None)]
    ['¿', '#', '%', '≡', '¤', '§', '§']
    """
    kinds = ((bool, TRUTH), (int, WHOLE), (float, NUMBER), (list, LIST), (dict, OBJECT))
    return next((sigil for kind, sigil in kinds if isinstance(value, kind)), TEXT_SIGIL)


class SymbolicCall(NameFirst):
    info = NameFirst.about(
        "symbolic_call", "Type-marked symbolic call",
        "`tool_name ★arg§text ★count#7`: ★ before each argument and a symbol for its value's type.")
    grammar = "symbolic_call"
    transformer = _Arguments
    delimiter = MARK

    def read_fast(self, segment: str, reading: Reading | None = None) -> Arguments | None:
        """The name and arguments of one line, scanned with the grammar's terminals and strict JSON
        (``json``'s C decoder)."""
        head = _HEAD.match(segment) if "\r" not in segment else None
        if head is None:
            return None
        pos, n = head.end(), len(segment)
        arguments: list[tuple[str, tuple[str, Any]]] = []
        while pos < n:
            found = _ARGUMENT.match(segment, pos)
            if found is None:
                return None
            key, sigil, value = found.groups()
            pos = found.end()
            if sigil is None:  # a list or an object: JSON, else text
                sigil = segment[found.start(1) + len(key)]
                if pos < n and segment[pos] in "[{":
                    if segment[pos] != ("[" if sigil == LIST else "{"):
                        return None
                    try:
                        value, pos = JSON_VALUES.raw_decode(segment, pos)
                    except (ValueError, RecursionError):
                        return None
                elif loose := _LOOSE.match(segment, pos):
                    value, pos = loose.group(), loose.end()
                pos = _SPACE.match(segment, pos).end()  # type: ignore[union-attr]
            arguments.append((key, (sigil, value)))
        return head.group(1), arguments

    def build(self, found: Arguments, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        name, arguments = found
        return [(name, reading.collect(name, arguments, _typed))]

    def render_call(self, call: ToolCall) -> str:
        parts = [call.name]
        for key, value in call.arguments.items():
            sigil, text = sigil_of(value), value_text(value)
            if sigil == TEXT_SIGIL:
                text = backslash_escape(text, MARK)
            elif sigil == NUMBER and not _JSON_NUMBER.fullmatch(text):
                sigil = TEXT_SIGIL  # inf and nan have no number form
            parts.append(f"{MARK}{key}{sigil}{text}")
        return " ".join(parts)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one line per call and nothing else: the tool's name, then for each argument a ★, "
                "the argument's name, a symbol for the value's type and the value. The symbols: § text, "
                "# whole number, % any number, ¿ true or false, ≡ a list as JSON, ¤ an object as JSON. Inside "
                "text, write ★ as \\★, a backslash as \\\\ and a line break as \\n:\n"
                "tool_name ★city§New York ★days#3 ★metric¿true ★tags≡[\"a\", \"b\"]")


PROTOCOL = SymbolicCall()
