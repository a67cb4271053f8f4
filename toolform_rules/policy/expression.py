"""The constraint expression language: its nodes, and the reader that builds them from text.

``grammars/expr.lark`` is the source of truth for the syntax; :class:`ExpressionReader` is
its one ``Transformer``.  A node records where it was written (``start``/``end`` offsets
in the expression's text), so a load-time problem can point at it with a caret and
``explain`` can show the text of every sub-expression beside its value.  Reading never
evaluates anything: strings are unescaped by hand and numbers parsed with ``int``/``float``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Iterator

import attrs

from ..errors import LocatedError
from ..grammar import GrammarFailure, Token, Transformer, Tree, parse, transform, v_args
from ..limits import PolicyLimits

#: The functions that take a generator (``all(x > 0 for x in args.xs)``).
QUANTIFIERS = ("all", "any", "none", "count")
#: The names that stand for a whole part of the call.
ROOTS = ("args", "norm", "call", "lists")
_LITERAL_NAMES = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}


class ExpressionError(LocatedError):
    """An expression that cannot be read or cannot be used; ``line``/``column`` are within the expression.

    ``offset`` is the 0-based position in the expression's text the problem concerns;
    ``expected`` what the grammar (or the checker) wanted there.
    """

    def __init__(self, message: str, *, offset: int, text: str, expected: tuple[str, ...] = ()) -> None:
        self.offset, self.text, self.expected = offset, text, expected
        before = text[:offset]
        super().__init__(message, line=before.count("\n") + 1, column=offset - (before.rfind("\n") + 1) + 1)

    def _where(self) -> list[str]:
        return [f"line {self.line}, column {self.column}"]


@attrs.frozen(kw_only=True)
class Node:
    """One node of an expression; ``start``/``end`` are offsets into the expression's text."""

    start: int
    end: int
    #: the fields that hold the nodes directly below (a node, a tuple of them, or None), in evaluation order
    below: ClassVar[tuple[str, ...]] = ()

    def children(self) -> Iterator[Node]:
        """The nodes directly below this one, in evaluation order."""
        for name in self.below:
            value = getattr(self, name)
            if isinstance(value, tuple):
                yield from value
            elif value is not None:
                yield value


@attrs.frozen(kw_only=True)
class Literal(Node):
    value: Any


@attrs.frozen(kw_only=True)
class Name(Node):
    name: str


@attrs.frozen(kw_only=True)
class Member(Node):
    below = ("target",)
    target: Node
    key: str


@attrs.frozen(kw_only=True)
class Index(Node):
    below = ("target", "index")
    target: Node
    index: Node


@attrs.frozen(kw_only=True)
class ListOf(Node):
    below = ("items",)
    items: tuple[Node, ...]


@attrs.frozen(kw_only=True)
class Unary(Node):
    below = ("operand",)
    op: str  # "not" or "-"
    operand: Node


@attrs.frozen(kw_only=True)
class Logical(Node):
    below = ("left", "right")
    op: str  # "and" or "or"
    left: Node
    right: Node


@attrs.frozen(kw_only=True)
class Compare(Node):
    """``a < b <= c``: Python's chained comparison (``a < b and b <= c``, ``b`` evaluated once)."""

    below = ("operands",)
    operands: tuple[Node, ...]
    operators: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Arithmetic(Node):
    below = ("left", "right")
    op: str  # + - * /
    left: Node
    right: Node


@attrs.frozen(kw_only=True)
class Call(Node):
    below = ("arguments",)
    function: str
    arguments: tuple[Node, ...]


@attrs.frozen(kw_only=True)
class Quantifier(Node):
    """``all(body for variable in iterable if condition)`` (likewise any, none, count)."""

    below = ("iterable", "body", "condition")
    function: str
    body: Node
    variable: str
    iterable: Node
    condition: Node | None


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children (iterative: trees are depth-limited anyway)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(current.children())))


def reference_path(node: Node) -> tuple[str, tuple[str | int, ...]] | None:
    """``args.a.b[0]`` as ``("args", ("a", "b", 0))``; ``None`` for anything but a plain reference."""
    keys: list[str | int] = []
    while True:
        if isinstance(node, Member):
            keys.append(node.key)
            node = node.target
        elif isinstance(node, Index) and isinstance(node.index, Literal) and isinstance(node.index.value, (str, int)) \
                and not isinstance(node.index.value, bool):
            keys.append(node.index.value)
            node = node.target
        elif isinstance(node, Name):
            return node.name, tuple(reversed(keys))
        else:
            return None


@attrs.frozen
class Expression:
    """A read expression: its text, its tree, and its static cost (one unit per node)."""

    text: str
    root: Node
    cost: int

    def source_of(self, node: Node) -> str:
        """The text a node was read from."""
        return self.text[node.start:node.end]

    def argument_path(self) -> tuple[str | int, ...]:
        """The first argument the expression reads (``args.x.y`` → ``("x", "y")``), else ``()``."""
        for node in walk(self.root):
            found = reference_path(node)
            if found and found[0] in ("args", "norm") and found[1]:
                return found[1]
        return ()


_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0", "/": "/"}


def unescape(body: str, offset: int, text: str) -> str:
    """A string literal's body with its escapes read (``\\n``, ``\\u00e9``, ``\\x41``...)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1] if i + 1 < len(body) else ""
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
            continue
        width = {"x": 2, "u": 4, "U": 8}.get(code)
        digits = body[i + 2:i + 2 + width] if width else ""
        if width and len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits) \
                and int(digits, 16) <= 0x10FFFF:
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        raise ExpressionError(f"unknown escape {body[i:i + 2]!r} in a string", offset=offset + 1 + i, text=text,
                              expected=("\\\\", "\\\"", "\\'", "\\n", "\\t", "\\r", "\\0", "\\xHH", "\\uHHHH"))
    return "".join(out)


class ExpressionReader(Transformer):
    """The ``expr`` grammar's tree → our nodes (the one transformer of ``grammars/expr.lark``)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def _span(self, meta: Any) -> dict[str, int]:
        return {"start": meta.start_pos, "end": meta.end_pos}

    @v_args(meta=True)
    def number(self, meta: Any, children: list[Token]) -> Literal:
        text = str(children[0])
        try:
            value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            raise ExpressionError(f"the number {text[:20]}... is too large", offset=meta.start_pos,
                                  text=self.text) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ExpressionError(f"the number {text} is too large", offset=meta.start_pos, text=self.text)
        return Literal(value=value, **self._span(meta))

    @v_args(meta=True)
    def string(self, meta: Any, children: list[Token]) -> Literal:
        quoted = str(children[0])
        return Literal(value=unescape(quoted[1:-1], meta.start_pos, self.text), **self._span(meta))

    @v_args(meta=True)
    def name(self, meta: Any, children: list[Token]) -> Node:
        word = str(children[0])
        if word in _LITERAL_NAMES:
            return Literal(value=_LITERAL_NAMES[word], **self._span(meta))
        return Name(name=word, **self._span(meta))

    @v_args(meta=True)
    def member(self, meta: Any, children: list[Any]) -> Member:
        return Member(target=children[0], key=str(children[1]), **self._span(meta))

    @v_args(meta=True)
    def index(self, meta: Any, children: list[Any]) -> Index:
        return Index(target=children[0], index=children[1], **self._span(meta))

    def arguments(self, children: list[Node]) -> tuple[Node, ...]:
        return tuple(children)

    @v_args(meta=True)
    def list_of(self, meta: Any, children: list[Any]) -> ListOf:
        return ListOf(items=children[0] if children else (), **self._span(meta))

    @v_args(meta=True)
    def call(self, meta: Any, children: list[Any]) -> Call:
        function = str(children[0])
        if function in _LITERAL_NAMES:
            raise ExpressionError(f"{function} is a value, not a function", offset=meta.start_pos, text=self.text)
        return Call(function=function, arguments=children[1] if len(children) > 1 else (), **self._span(meta))

    @v_args(meta=True)
    def quantifier(self, meta: Any, children: list[Any]) -> Quantifier:
        function, body, variable, _, iterable, *condition = children
        if str(function) not in QUANTIFIERS:
            raise ExpressionError(f"{function}() does not take a generator; only {', '.join(QUANTIFIERS)} do",
                                  offset=meta.start_pos, text=self.text, expected=QUANTIFIERS)
        word = str(variable)
        if word in ROOTS or word in _LITERAL_NAMES:
            raise ExpressionError(f"{word!r} cannot name a loop variable: it is a reserved name",
                                  offset=self.text.find(word, body.end), text=self.text)
        return Quantifier(function=str(function), body=body, variable=word, iterable=iterable,
                          condition=condition[0] if condition else None, **self._span(meta))

    @v_args(meta=True)
    def negative(self, meta: Any, children: list[Any]) -> Node:
        operand = children[0]
        if isinstance(operand, Literal) and type(operand.value) in (int, float):
            return Literal(value=-operand.value, **self._span(meta))
        return Unary(op="-", operand=operand, **self._span(meta))

    @v_args(meta=True)
    def not_op(self, meta: Any, children: list[Any]) -> Unary:
        return Unary(op="not", operand=children[0], **self._span(meta))

    @v_args(meta=True)
    def and_op(self, meta: Any, children: list[Any]) -> Logical:
        return Logical(op="and", left=children[0], right=children[1], **self._span(meta))

    @v_args(meta=True)
    def or_op(self, meta: Any, children: list[Any]) -> Logical:
        return Logical(op="or", left=children[0], right=children[1], **self._span(meta))

    @v_args(meta=True)
    def binary(self, meta: Any, children: list[Any]) -> Arithmetic:
        return Arithmetic(op=str(children[1]), left=children[0], right=children[2], **self._span(meta))

    @v_args(meta=True)
    def compare(self, meta: Any, children: list[Any]) -> Compare:
        operands = tuple(children[0::2])
        operators = tuple("not in" if c.type == "NOT_IN" else str(c) for c in children[1::2])
        return Compare(operands=operands, operators=operators, **self._span(meta))


def _depth(tree: Tree) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return deepest


def read_expression(text: str, limits: PolicyLimits = PolicyLimits()) -> Expression:
    """Read one expression; an error says where (line and column within it) and what was expected.

    >>> expression = read_expression("args.amount <= 10000")
    >>> type(expression.root).__name__, expression.cost
    ('Compare', 4)
    >>> read_expression("args.amount <=")
    Traceback (most recent call last):
    ...
    toolform_rules.policy.expression.ExpressionError: line 1, column 15: expected a name or a number or a string or '(' or '-' or '[', found the end of the text
    """
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be a string, not {type(text).__name__}", offset=0, text="")
    if len(text) > limits.max_expression_chars:
        raise ExpressionError(f"the expression is {len(text)} characters long; the limit is "
                              f"{limits.max_expression_chars}", offset=0, text=text)
    if not text.strip():
        raise ExpressionError("the expression is empty", offset=0, text=text, expected=("an expression",))
    try:
        tree = parse("expr", text, positions=True)
    except GrammarFailure as failure:
        lines = text.split("\n")
        offset = sum(len(line) + 1 for line in lines[:failure.line - 1]) + failure.column - 1
        if failure.found == "the end of the text":  # Lark places it on the last token; point past it
            offset = len(text.rstrip())
        expected = tuple(sorted(failure.expected, key=_expected_order))
        wanted = " or ".join(expected[:8]) + (" or ..." if len(expected) > 8 else "")
        found = f", found {failure.found}" if failure.found else ""
        message = f"expected {wanted}{found}" if wanted else f"cannot read the expression{found}"
        raise ExpressionError(message, offset=min(offset, len(text)), text=text, expected=expected) from None
    if not isinstance(tree, Tree):  # a lone token cannot be the start: every atom has an alias
        raise ExpressionError("cannot read the expression", offset=0, text=text)
    if _depth(tree) > limits.max_expression_depth:
        raise ExpressionError(f"the expression nests deeper than {limits.max_expression_depth} levels",
                              offset=0, text=text)
    try:
        root = transform(ExpressionReader(text), tree)
    except RecursionError:  # only when max_expression_depth is raised past what Python's stack holds
        raise ExpressionError("the expression nests too deeply to be read", offset=0, text=text) from None
    cost = sum(1 for _ in walk(root))
    if cost > limits.max_expression_nodes:
        raise ExpressionError(f"the expression has {cost} parts; the limit is {limits.max_expression_nodes}",
                              offset=0, text=text)
    return Expression(text, root, cost)


def _expected_order(word: str) -> tuple[int, str]:
    return (0 if word[:1].isalpha() else 1, word)
