"""graphql_call: ``mutation { tool(arg: "value", n: 3) { result } }`` — GraphQL literal syntax.

Grammar: ``grammars/graphql_call.lark``.  Each operation (``mutation``, ``query``,
``subscription`` or an anonymous ``{ ... }``) in the reply is located and read; every root
field of it is a call.  The fast path reads position by position (compiled patterns for names
and punctuation, JSON's C decoder for strings and arrays); block strings, single-quoted
strings, comments or anything it does not know hand the operation (to its closing brace) to
the grammar.

Input-object keys are written as GraphQL names (``{status: "draft"}``), quoted only when a
key is not a name; enum words (``status: DRAFT``) are read as text.

>>> PROTOCOL.parse('mutation { f(a: "x", n: [1, 2.5], o: {k: null}) { result } }').calls[0].arguments
{'a': 'x', 'n': [1, 2.5], 'o': {'k': None}}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import (CallSyntax, CodeFamily, Head, Heads, Items, Literals, Object, Quoting, Reader, Reject,
                          call_names, json_number, scalar_literal)
from ..reading import JSON_VALUES
from ..values import unquote

OPERATION_WORDS = frozenset({"mutation", "query", "subscription"})
VALUE_WORDS = {"true": True, "false": False, "null": None}
#: what follows an operation's keyword: an optional operation name, then "{"
_AFTER_KEYWORD = r"(?![\w.])(?=[ \t\r\n]*+(?:[^\W\d]\w*+[ \t\r\n]*+)?\{)"
#: what follows an anonymous operation's "{": a field (an optional alias), then "(", "{" or "}"
_AFTER_BRACE = r"(?=[ \t\r\n]*+(?:[^\W\d]\w*+[ \t\r\n]*+:[ \t\r\n]*+)?[^\W\d][\w.]*+[ \t\r\n]*+[({}])"
#: where an operation starts: its keyword (not inside a longer name), or a "{" opening its line
#: (only spaces and tabs before it; group ``brace``).  Each branch begins with a literal, so the
#: search jumps from one possible first character to the next in C.
OPERATION_HEAD = re.compile("|".join([*(f"{w[0]}(?<![\\w.]{w[0]}){w[1:]}{_AFTER_KEYWORD}"
                                         for w in ("mutation", "query", "subscription")),
                                       r"\n[ \t]*+(?P<brace>\{)" + _AFTER_BRACE]))
#: the same "{" on the reply's first line
OPERATION_AT_START = re.compile(r"[ \t]*+(?P<brace>\{)" + _AFTER_BRACE)
GQL_STRING = re.compile(r'"""(?:\\"""|[^"\\]++|\\|"(?!""))*+"""|"(?:[^"\\\n\r]++|\\.)*+"|\'(?:[^\'\\\n\r]++|\\.)*+\'',
                        re.S)
#: GraphQL's strings for the bracket matcher (a one-line string escapes with a backslash)
GQL_QUOTING = Quoting(GQL_STRING, "\"'", {'"': r'"(?:[^"\\\n\r]++|\\.)*+', "'": r"'(?:[^'\\\n\r]++|\\.)*+"})
_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")
_BRACE_ESCAPE = re.compile(r"\\u\{([0-9A-Fa-f]{1,6})\}")

# the fast path: names and punctuation by compiled patterns, strings by JSON's C decoder
_SPACE: Any = re.compile(r"[ \t\r\n,]*+")  # matches everywhere
_WORD = re.compile(r"[^\W\d]\w*+(?:\.\w++)*+")
_NUMBER = re.compile(r"-?\d++(?:\.\d++)?(?:[eE][+-]?\d++)?(?![\w.])")
#: the start of an operation, up to its "{"
_OPERATION = re.compile(r"[ \t\r\n,]*+(?:(?:mutation|query|subscription)(?![\w.])[ \t\r\n,]*+"
                        r"(?:[^\W\d]\w*+(?:\.\w++)*+[ \t\r\n,]*+)?)?\{")
#: a field: an optional alias and its colon, the name, the white space after it
_FIELD = re.compile(r"[ \t\r\n,]*+(?:[^\W\d]\w*+(?:\.\w++)*+[ \t\r\n,]*+:[ \t\r\n,]*+)?"
                    r"([^\W\d]\w*+(?:\.\w++)*+)[ \t\r\n,]*+")
#: a selection of plain fields ({ result }), skipped in one go
_PLAIN_SELECTION = re.compile(r"\{[ \t\r\n,]*+(?:[^\W\d]\w*+(?:\.\w++)*+[ \t\r\n,]*+)++\}[ \t\r\n,]*+")
#: a quoted key's colon
_COLON = re.compile(r"[ \t\r\n,]*+:[ \t\r\n,]*+")
#: an argument's name and its colon
_ARGUMENT = re.compile(r"[ \t\r\n,]*+([^\W\d]\w*+(?:\.\w++)*+)[ \t\r\n,]*+:[ \t\r\n,]*+")


def decode_graphql_string(token: str) -> str:
    r"""The text of a GraphQL ``"..."`` string (``\n``, ``\uXXXX``, ``\u{1F600}``, ``\/`` …).

    >>> decode_graphql_string(r'"a\"b\n\u00e9\u{1F600}"')
    'a"b\né😀'
    """
    if "\\" not in token:
        return token[1:-1]
    text = token
    if "\\u{" in text:
        text = _BRACE_ESCAPE.sub(lambda m: _u_escape(int(m.group(1), 16)), text)
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        return unquote(text)
    return value if isinstance(value, str) else unquote(text)


def _u_escape(code: int) -> str:
    if code > 0x10FFFF:
        raise Reject("an escape beyond Unicode")
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def block_string_value(token: str) -> str:
    """A GraphQL block string's value: ``\\\"\"\"`` unescaped, common indentation and blank
    first/last lines removed (the spec's BlockStringValue).

    >>> block_string_value('\"\"\"\\n    Hello,\\n      World!\\n\"\"\"')
    'Hello,\\n  World!'
    """
    raw = token[3:-3].replace('\\"""', '"""')
    lines = re.split(r"\r\n|\r|\n", raw)
    indent = None
    for line in lines[1:]:
        stripped = len(line) - len(line.lstrip(" \t"))
        if stripped < len(line) and (indent is None or stripped < indent):
            indent = stripped
    if indent:
        lines = [lines[0]] + [line[indent:] for line in lines[1:]]
    while lines and not lines[0].strip(" \t"):
        lines.pop(0)
    while lines and not lines[-1].strip(" \t"):
        lines.pop()
    return "\n".join(lines)


class GraphqlValues(Literals):
    """A ``graphql_call.lark`` tree → a list of :class:`~.code_family.CallSyntax` (root fields)."""

    def string(self, items: Items) -> str:
        return decode_graphql_string(str(items[0]))

    def block_string(self, items: Items) -> str:
        return block_string_value(str(items[0]))

    def sq_string(self, items: Items) -> str:
        return unquote(str(items[0]))

    def name_key(self, items: Items) -> str:
        return str(items[0])

    enum = name_key

    def true_key(self, _: Items) -> str:
        return "true"

    def false_key(self, _: Items) -> str:
        return "false"

    def null_key(self, _: Items) -> str:
        return "null"

    def object(self, items: Items) -> Object:
        return dict(zip(items[0::2], items[1::2]))

    argument = Literals.pair

    def field(self, items: Items) -> CallSyntax:
        names = [str(i) for i in items if not isinstance(i, (list, type(None)))]
        return CallSyntax(names[-1], next((i for i in items if isinstance(i, list)), []))

    def selection(self, _: Items) -> None:
        return None

    sub_field = sub_arguments = selection

    def operation(self, items: Items) -> Items:
        return [i for i in items if isinstance(i, CallSyntax)]

    def start(self, items: Items) -> Items:
        return [call for operation in items for call in operation]


class _Fast:
    """The fast path's reader, position by position (:class:`Reject` outside its subset)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def value(self, pos: int) -> tuple[Any, int]:
        """The value at ``pos`` (white space passed over) and where it ends."""
        text = self.text
        c = text[pos:pos + 1]
        if c == '"' and not text.startswith('"""', pos):
            return JSON_VALUES.raw_decode(text, pos)
        if c == "[":
            try:  # a JSON array (the usual case) in one go; else item by item
                return JSON_VALUES.raw_decode(text, pos)
            except ValueError:
                pass
            out = []
            pos = _SPACE.match(text, pos + 1).end()
            while not text.startswith("]", pos):
                item, pos = self.value(pos)
                out.append(item)
                pos = _SPACE.match(text, pos).end()
            return out, pos + 1
        if c == "{":
            obj: dict[str, Any] = {}
            return obj, self.pairs(pos + 1, "}", obj)
        m = _NUMBER.match(text, pos) or _WORD.match(text, pos)
        if m is None:
            raise Reject
        word = m.group()
        if m.re is _NUMBER:
            return json_number(word), m.end()
        return VALUE_WORDS.get(word, word), m.end()

    def pairs(self, pos: int, close: str, into: Any) -> int:
        """``key: value`` pairs up to ``close`` put into a dict (or appended to a list); the end."""
        text = self.text
        while True:
            m = _ARGUMENT.match(text, pos)
            if m is not None:
                key = m.group(1)
                value, pos = self.value(m.end())
            else:
                pos = _SPACE.match(text, pos).end()
                if text.startswith(close, pos):
                    return pos + 1
                if not text.startswith('"', pos) or text.startswith('"""', pos):
                    raise Reject
                key, pos = JSON_VALUES.raw_decode(text, pos)  # a quoted key
                colon = _COLON.match(text, pos)
                if colon is None:
                    raise Reject
                value, pos = self.value(colon.end())
            if isinstance(into, list):
                into.append((key, value))
            else:
                into[key] = value

    def field(self, pos: int, root: bool) -> tuple[CallSyntax | None, int]:
        text = self.text
        m = _FIELD.match(text, pos)
        if m is None:
            raise Reject
        name, after = m.group(1), m.end()
        items: list[tuple[str | None, Any]] = []
        if text.startswith("(", after):
            after = _SPACE.match(text, self.pairs(after + 1, ")", items)).end()
        if text.startswith("{", after):
            plain = _PLAIN_SELECTION.match(text, after)
            if plain is not None:
                after = plain.end()
            else:
                pos = after + 1
                while True:
                    _, pos = self.field(pos, False)
                    if text.startswith("}", pos):
                        break
                after = _SPACE.match(text, pos + 1).end()
        return (CallSyntax(name, items) if root else None), after

    def operation(self, pos: int) -> tuple[list[CallSyntax], int]:
        """One operation from ``pos``: its calls and where it ends."""
        text = self.text
        m = _OPERATION.match(text, pos)
        if m is None:
            raise Reject
        pos = m.end()
        calls: list[CallSyntax] = []
        while True:
            call, pos = self.field(pos, True)
            calls.append(call)  # type: ignore[arg-type]
            if text.startswith("}", pos):
                return calls, pos + 1


def fast_operation(text: str, pos: int) -> tuple[list[CallSyntax], int] | None:
    """The fast path: one operation read from ``pos`` without the grammar, and its end (``None``
    outside its subset: block strings, single quotes, comments and what it does not know).

    >>> fast_operation('mutation { f(a: "x" b: [RED], o: {k: 1}) { result } }', 0)[0]
    [CallSyntax('f', [('a', 'x'), ('b', ['RED']), ('o', {'k': 1})], bare=[])]
    """
    try:
        return _Fast(text).operation(pos)
    except (Reject, RecursionError, ValueError, IndexError):
        return None


def gql_key(key: Any) -> str:
    """An argument or input-object key: a GraphQL name, else a quoted string."""
    text = key if isinstance(key, str) else str(key)
    if _NAME.fullmatch(text) and text not in VALUE_WORDS and text not in OPERATION_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def gql_literal(value: Any) -> str:
    """``value`` in GraphQL literal syntax.

    >>> gql_literal({"status": "draft", "tags": ["a", 1, None], "x y": True})
    '{status: "draft", tags: ["a", 1, null], "x y": true}'
    """
    scalar = scalar_literal(value)
    if scalar is not None:
        return scalar
    if isinstance(value, dict):
        return "{" + ", ".join(f"{gql_key(k)}: {gql_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(gql_literal(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _operation_head(m: re.Match[str]) -> Head:
    if m.lastgroup == "brace":
        return m.start("brace"), m.start("brace"), None
    return m.start(), m.string.index("{", m.end()), None


class GraphqlOperations(Reader):
    """An operation (``mutation``/``query``/``subscription`` or a ``{`` opening its line) read by
    :func:`fast_operation`, else (to its closing brace) by the grammar; its root fields are the calls."""

    grammar = "graphql_call"
    transformer = GraphqlValues
    quoting = GQL_QUOTING
    unit, units = "operation", "operations"
    look_inside = False
    every_failure = gives_up = True

    def heads(self, text: str, start: int, end: int) -> Heads:
        return Heads(text, OPERATION_HEAD, start, end, first=OPERATION_AT_START, head=_operation_head)

    def read_at(self, text: str, begin: int, open_pos: int, end: int) -> tuple[list[CallSyntax], int] | None:
        read = fast_operation(text, begin)
        return None if read is None or read[1] > end else read


class GraphqlCall(CodeFamily):
    info = ProtocolInfo(
        id="graphql_call",
        name="GraphQL mutation",
        description='A GraphQL mutation whose root fields are the calls: mutation { tool(arg: "value") { result } }.',
        parallel=True,
    )
    reader = GraphqlOperations()
    between = re.compile(r"[ \t\r\n,]*+")
    read_what = "the operations"

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self.operation(c) for c in calls)

    @staticmethod
    def operation(call: ToolCall) -> str:
        arguments = ", ".join(f"{gql_key(k)}: {gql_literal(v)}" for k, v in dict(call.arguments or {}).items())
        field = f"{call.name}({arguments})" if arguments else call.name
        return f"mutation {{ {field} {{ result }} }}"

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        names = call_names(tools)
        example = f'mutation {{ {names[0] if names else "toolName"}(argument: "text", count: 3) {{ result }} }}'
        return ("Reply with the call as a GraphQL mutation and nothing else, for example "
                f"{example}. Write argument values as GraphQL literals: double-quoted strings, numbers, "
                "true, false, null, lists in [ ] and input objects as {key: value}. For several calls, "
                "write one mutation per line.")


PROTOCOL = GraphqlCall()
