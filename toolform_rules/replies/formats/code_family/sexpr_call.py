"""sexpr_call: ``(tool :arg "value" :count 3)`` — an S-expression with keyword arguments.

Grammar: ``grammars/sexpr_call.lark``.  Each ``(symbol`` in the reply starts a candidate; nested
values are written as JSON (``:contract_details {"status": "draft"}``), which the grammar reads
as a map, and Lisp forms (``[1 2 3]``, ``'(1 2)``, ``{:k 1}``, ``nil``, ``#t``) are read too.
The fast path reads keyword by keyword (a compiled pattern for the keyword, JSON's C decoder
for its value); comments, Lisp lists and vectors, ``#t``/``#f`` or anything else it does not
know hand the candidate (to its closing parenthesis) to the grammar.  With a toolset,
candidates in running text count only when their head names one of its tools.

>>> PROTOCOL.parse('(f :a "x" :n -2 :o {"k": [1, null]} :b true)').calls[0].arguments
{'a': 'x', 'n': -2, 'o': {'k': [1, None]}, 'b': True}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import (CallSyntax, CodeFamily, Head, Heads, Items, Literals, Object, Pair, Quoting, Reader, call_names,
                          scalar_literal)
from ..values import unquote

_SYMBOL_CHARS = r"[\w.\-*/!?<>=$%&+]"
#: a candidate: "(" and a head symbol
SEXPR_HEAD = re.compile(r"\([ \t\r\n]*+([^\W\d]" + _SYMBOL_CHARS + r"*+)(?=[\s)\"\[{(:,;])")
SEXPR_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
#: the s-expression's strings for the bracket matcher (a backslash escapes; lines may break inside)
SEXPR_QUOTING = Quoting(SEXPR_STRING, '"', {'"': r'"(?:[^"\\]++|\\.)*+'})
WORDS = {"true": True, "false": False, "null": None, "nil": None}

# the fast path: a keyword, then a value read by JSON's C decoder (or a bare word)
def _no_constant(name: str) -> Any:
    raise ValueError(name)


_JSON = json.JSONDecoder(parse_constant=_no_constant, strict=False)
_FAST_HEAD = re.compile(r"[ \t\r\n]*+\([ \t\r\n]*+([^\W\d]" + _SYMBOL_CHARS + r"*+)")
_FAST_KEYWORD = re.compile(r":([^\W\d]" + _SYMBOL_CHARS + r"*+)[ \t\r\n,]++")
_FAST_SPACE: Any = re.compile(r"[ \t\r\n,]*+")  # matches everywhere
_FAST_WORD = re.compile(r"[^\W\d]" + _SYMBOL_CHARS + r"*+")
_FAST_VALUE_START = frozenset('"-0123456789[{')
_FAST_AFTER = frozenset(" \t\r\n,)")


def decode_sexpr_string(token: str) -> str:
    r"""The text of a ``"..."`` string (JSON's escapes, ``\\"`` and ``\\\\``; raw line ends kept).

    >>> decode_sexpr_string(r'"a\"b\\c\nd"')
    'a"b\\c\nd'
    """
    return token[1:-1] if "\\" not in token else unquote(token)


class SexprValues(Literals):
    """A ``sexpr_call.lark`` tree → a list of :class:`~.code_family.CallSyntax`."""

    def __init__(self) -> None:
        super().__init__()
        self.bare: list[str] = []

    def string(self, items: Items) -> str:
        return decode_sexpr_string(str(items[0]))

    def symbol(self, items: Items) -> str:
        self.bare.append(str(items[0]))
        return str(items[0])

    vector = Literals.list

    def keyword_key(self, items: Items) -> str:
        return str(items[0])[1:]

    def symbol_key(self, items: Items) -> str:
        return str(items[0])

    def map_entry(self, items: Items) -> Pair:
        return items[0], items[-1]

    def glued_entry(self, items: Items) -> Pair:
        word = str(items[1])[1:]
        if word in WORDS:
            return items[0], WORDS[word]
        self.bare.append(word)
        return items[0], word

    def map(self, items: Items) -> Object:
        return dict(items)

    def keyword_arg(self, items: Items) -> Pair:
        return str(items[0])[1:], items[1]

    def sexpr(self, items: Items) -> CallSyntax:
        call = CallSyntax(str(items[0]), list(items[1:]), self.bare)
        self.bare = []
        return call

    def start(self, items: Items) -> Items:
        return list(items)


def fast_sexpr_at(text: str, pos: int) -> tuple[CallSyntax, int] | None:
    """One s-expression read from ``pos`` without the grammar, and where it ends (``None``
    outside the fast subset: keyword arguments whose values are JSON — strings, numbers,
    true/false/null, objects, arrays — or, after a keyword, a bare word)."""
    n = len(text)
    head = _FAST_HEAD.match(text, pos)
    if head is None or head.group(1) in WORDS:
        return None
    name = head.group(1)
    pos = head.end()
    try:
        items: list[tuple[str | None, Any]] = []
        bare: list[str] = []
        while True:
            pos = _FAST_SPACE.match(text, pos).end()
            if pos >= n:
                return None
            c = text[pos]
            if c == ")":
                return CallSyntax(name, items, bare), pos + 1
            key = None
            if c == ":":
                keyword = _FAST_KEYWORD.match(text, pos)
                if keyword is None:
                    return None
                key, pos = keyword.group(1), keyword.end()
                c = text[pos] if pos < n else ""
            if c in _FAST_VALUE_START:
                value, pos = _JSON.raw_decode(text, pos)
            else:
                word = _FAST_WORD.match(text, pos)
                if word is None:
                    return None
                value, pos = word.group(), word.end()
                if value in WORDS:
                    value = WORDS[value]
                elif key is None:
                    return None
                else:
                    bare.append(value)
            if pos < n and text[pos] not in _FAST_AFTER:
                return None
            items.append((key, value))
    except (ValueError, RecursionError, IndexError):
        return None


def sexpr_literal(value: Any) -> str:
    """A keyword's value: a string in double quotes, true/false/null, numbers, JSON for the rest.

    >>> sexpr_literal('say "hi"'), sexpr_literal(None), sexpr_literal({"k": [1, True]})
    ('"say \\\\"hi\\\\""', 'null', '{"k": [1, true]}')
    """
    scalar = scalar_literal(value)
    if scalar is not None:
        return scalar
    if isinstance(value, tuple):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(str(value), ensure_ascii=False)


def _sexpr_head(m: re.Match[str]) -> Head:
    return m.start(), m.start(), m.group(1)


class SexprCalls(Reader):
    """``(symbol`` starts a call, read by :func:`fast_sexpr_at`, else (to its closing
    parenthesis) by the grammar."""

    grammar = "sexpr_call"
    transformer = SexprValues
    quoting = SEXPR_QUOTING

    def heads(self, text: str, start: int, end: int) -> Heads:
        return Heads(text, SEXPR_HEAD, start, end, head=_sexpr_head)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        one = fast_sexpr_at(text, begin)
        return None if one is None or one[1] > end else ([one[0]], one[1])


class SexprCall(CodeFamily):
    info = ProtocolInfo(
        id="sexpr_call",
        name="S-expression call",
        description='A Lisp-style call with keyword arguments: (tool :arg "value" :count 3).',
        parallel=True,
    )
    reader = SexprCalls()
    between = re.compile(r"[ \t\r\n,]*+")

    def alone(self, text: str, start: int, end: int) -> bool:
        return text.startswith("(", start, end) and text.endswith(")", start, end)

    def keeps(self, call: CallSyntax, tools: Toolset | None) -> bool:
        # "(think)" in prose is a remark in parentheses, not a call (with no toolset to say otherwise)
        return tools is not None or bool(call.items)

    def shown(self, name: str) -> str:
        return f"({name} ...)"

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self.expression(c) for c in calls)

    @staticmethod
    def expression(call: ToolCall) -> str:
        parts = [call.name] + [f":{k} {sexpr_literal(v)}" for k, v in dict(call.arguments or {}).items()]
        return "(" + " ".join(parts) + ")"

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f'({names[0] if names else "tool_name"} :argument "text" :count 3)'
        return ("Reply with the call as one S-expression and nothing else: the tool's name, then each "
                f"argument as :name followed by its value, for example {example}. Write text in double "
                "quotes, numbers as they are, true, false or null, and lists and objects as JSON. For "
                "several calls, write one expression per line.")


PROTOCOL = SexprCall()
