"""Load-time checks of an expression: names, functions, arguments and kinds, before any call is seen.

The checker infers, for every node, the kinds of value it can have — from literals, from
the functions' declared signatures and, when the tools are known, from their schemas —
and reports what can never work: an unknown name, list, function or argument; a
function given a kind it never takes; a comparison whose sides can never meet (a number
against a string, a value outside the argument's enum); a ``check`` that cannot be a
boolean.  Every problem is an :class:`ExpressionError` at the offending node.
"""

from __future__ import annotations

from typing import Any, Iterable

import attrs

from ..schema.ir import Schema, Tool
from .expression import (QUANTIFIERS, ROOTS, Arithmetic, Call, Compare, Expression, ExpressionError, Index, ListOf,
                         Literal, Logical, Member, Name, Node, Quantifier, Unary, reference_path)
from .functions import ANY, BOOLEAN, FUNCTIONS, NUMBER, STRING, kind_of

_ORDERED = frozenset(("number", "string"))
_CONTAINERS = frozenset(("array", "string", "object"))


@attrs.frozen
class Info:
    """What the checker knows of a node's value: its possible kinds, the schemas it comes
    from, the values it can take (an enum), what its items are (for a list)."""

    kinds: frozenset[str] = ANY
    schemas: tuple[tuple[Schema, Tool], ...] | None = None
    values: tuple[Any, ...] | None = None
    items: "Info | None" = None
    root: str = ""


UNKNOWN = Info()


def _describe_kinds(kinds: Iterable[str]) -> str:
    kinds = sorted(kinds)
    if set(kinds) >= ANY:
        return "anything"
    return " or ".join(kinds) if kinds else "nothing"


def resolve_schema(schema: Schema, tool: Tool) -> Schema:
    """The schema a ``$ref`` chain ends at (the schema itself when it has none)."""
    seen = 0
    while schema.ref is not None and seen < 32:
        try:
            schema = tool.resolve(schema.ref)
        except KeyError:
            break
        seen += 1
    return schema


def schema_kinds(schema: Schema, tool: Tool) -> frozenset[str]:
    """The kinds a schema admits, in the checker's words (integer is a number)."""
    schema = resolve_schema(schema, tool)
    if schema.boolean is False:
        return frozenset()
    if schema.types:
        return frozenset("number" if t == "integer" else t for t in schema.types)
    branches = schema.any_of or schema.one_of
    if branches:
        return frozenset().union(*(schema_kinds(b, tool) for b in branches))
    if schema.enum is not None:
        return frozenset(kind_of(v) for v in schema.enum)
    return ANY


def _property(schema: Schema, key: str, tool: Tool) -> tuple[Schema | None, bool]:
    """The schema of ``key`` in an object schema, and whether undeclared keys are allowed."""
    schema = resolve_schema(schema, tool)
    found = schema.property(key)
    if found is not None:
        return found, True
    for branch in (*schema.any_of, *schema.one_of, *schema.all_of):
        sub, _ = _property(branch, key, tool)
        if sub is not None:
            return sub, True
    declared = schema.properties or schema.any_of or schema.one_of or schema.all_of
    extra = schema.additional_properties
    open_ = not declared or bool(schema.pattern_properties) or extra is True or isinstance(extra, Schema)
    return None, open_


def _declared(schema: Schema, tool: Tool) -> list[str]:
    return [p.name for p in resolve_schema(schema, tool).properties]


def _items(schema: Schema, tool: Tool) -> Schema | None:
    schema = resolve_schema(schema, tool)
    return schema.items


class Checker:
    """Check one expression against the tools it applies to (``None``: not known) and the policy's lists."""

    def __init__(self, expression: Expression, tools: list[Tool] | None, lists: dict[str, Any]) -> None:
        self.expression, self.tools, self.lists = expression, tools, lists
        self.problems: list[ExpressionError] = []

    def problem(self, node: Node, message: str, expected: tuple[str, ...] = ()) -> None:
        self.problems.append(ExpressionError(message, offset=node.start, text=self.expression.text,
                                             expected=expected))

    def text(self, node: Node) -> str:
        return self.expression.source_of(node)

    def want(self, node: Node, info: Info, kinds: frozenset[str], what: str) -> None:
        if not (info.kinds & kinds):
            self.problem(node, f"{what} must be {_describe_kinds(kinds)}; {self.text(node)} is "
                               f"{_describe_kinds(info.kinds)}", tuple(sorted(kinds)))

    def check(self, want_boolean: bool = True) -> list[ExpressionError]:
        """Infer the whole expression; a ``check``/``when`` must be able to be a boolean."""
        info = self.infer(self.expression.root, {})
        if want_boolean:
            self.want(self.expression.root, info, BOOLEAN, "a check")
        return self.problems

    def infer(self, node: Node, variables: dict[str, Info]) -> Info:
        """What ``node``'s value can be (the problems met on the way are kept)."""
        return getattr(self, "_" + type(node).__name__.lower())(node, variables)  # type: ignore[no-any-return]

    def _literal(self, node: Literal, variables: dict[str, Info]) -> Info:
        return Info(frozenset((kind_of(node.value),)), values=(node.value,))

    def _index(self, node: Index, variables: dict[str, Info]) -> Info:
        target = self.infer(node.target, variables)
        index = self.infer(node.index, variables)
        self.want(node.target, target, frozenset(("array", "object")), "what is indexed")
        self.want(node.index, index, frozenset(("number", "string")), "an index")
        return target.items or UNKNOWN

    def _listof(self, node: ListOf, variables: dict[str, Info]) -> Info:
        infos = [self.infer(item, variables) for item in node.items]
        kinds = frozenset().union(*(i.kinds for i in infos)) if infos else ANY
        return Info(frozenset(("array",)), items=Info(kinds))

    def _unary(self, node: Unary, variables: dict[str, Info]) -> Info:
        operand = self.infer(node.operand, variables)
        if node.op == "not":
            self.want(node.operand, operand, BOOLEAN, "the operand of 'not'")
            return Info(BOOLEAN)
        self.want(node.operand, operand, NUMBER, "the operand of '-'")
        return Info(NUMBER)

    def _logical(self, node: Logical, variables: dict[str, Info]) -> Info:
        for side in (node.left, node.right):
            self.want(side, self.infer(side, variables), BOOLEAN, f"each side of '{node.op}'")
        return Info(BOOLEAN)

    def _compare(self, node: Compare, variables: dict[str, Info]) -> Info:
        infos = [self.infer(operand, variables) for operand in node.operands]
        for op, (left, right), (left_node, right_node) in zip(
                node.operators, zip(infos, infos[1:]), zip(node.operands, node.operands[1:])):
            self._comparison(op, left, right, left_node, right_node)
        return Info(BOOLEAN)

    def _arithmetic(self, node: Arithmetic, variables: dict[str, Info]) -> Info:
        left, right = self.infer(node.left, variables), self.infer(node.right, variables)
        allowed = frozenset(("number", "string", "array")) if node.op == "+" else NUMBER
        self.want(node.left, left, allowed, f"the left side of '{node.op}'")
        self.want(node.right, right, allowed, f"the right side of '{node.op}'")
        common = left.kinds & right.kinds & allowed
        if left.kinds & allowed and right.kinds & allowed and not common:
            self.problem(node, f"cannot compute {_describe_kinds(left.kinds)} {node.op} "
                               f"{_describe_kinds(right.kinds)}")
        return Info(common or allowed)

    def _name(self, node: Name, variables: dict[str, Info]) -> Info:
        if node.name in variables:
            return variables[node.name]
        if node.name in ("args", "norm"):
            schemas = None if self.tools is None else tuple((t.parameters, t) for t in self.tools)
            return Info(frozenset(("object",)), schemas=schemas, root=node.name)
        if node.name in ("call", "lists"):
            return Info(frozenset(("object",)), root=node.name)
        self.problem(node, f"unknown name {node.name!r}; expected {', '.join(ROOTS)} or a loop variable",
                     ROOTS + tuple(variables))
        return UNKNOWN

    def _member(self, node: Member, variables: dict[str, Info]) -> Info:
        target = self.infer(node.target, variables)
        if target.root == "lists":
            return self._list_member(node)
        if target.root == "call":
            if node.key != "name":
                self.problem(node, f"call has no {node.key!r}; expected call.name", ("name",))
            return Info(STRING)
        if not (target.kinds & frozenset(("object",))):
            self.problem(node, f"{self.text(node.target)} is {_describe_kinds(target.kinds)}, which has no "
                               f".{node.key}", ("an object",))
            return UNKNOWN
        return UNKNOWN if target.schemas is None else self._schema_member(node, target, target.schemas)

    def _list_member(self, node: Member) -> Info:
        """``lists.name``: one of the policy's lists."""
        if node.key not in self.lists:
            known = ", ".join(sorted(self.lists)) or "none"
            self.problem(node, f"unknown list {node.key!r}; the policy's lists: {known}", tuple(sorted(self.lists)))
            return Info(frozenset(("array",)))
        values = self.lists[node.key]
        return Info(frozenset(("array",)), items=Info(frozenset(kind_of(v) for v in values) or ANY,
                                                       values=tuple(values)))

    def _schema_member(self, node: Member, target: Info, schemas: tuple[tuple[Schema, Tool], ...]) -> Info:
        """``target.key`` where the schemas of ``target`` are known: an argument, or a key inside one."""
        found: list[tuple[Schema, Tool]] = []
        open_ = False
        for schema, tool in schemas:
            sub, allows_more = _property(schema, node.key, tool)
            if sub is not None:
                found.append((sub, tool))
            open_ = open_ or allows_more
        if not found:
            if not open_:
                self._unknown_key(node, schemas)
            return UNKNOWN
        return _found_info(found, target.root, any_kind=open_ and len(found) < len(schemas))

    def _unknown_key(self, node: Member, schemas: tuple[tuple[Schema, Tool], ...]) -> None:
        declared = sorted({name for schema, tool in schemas for name in _declared(schema, tool)})
        where = "argument" if isinstance(node.target, Name) else "key"
        tools = ", ".join(sorted({tool.name for _, tool in schemas}))
        self.problem(node, f"unknown {where} {node.key!r}: {tools} declares {', '.join(declared) or 'none'}",
                     tuple(declared))

    def _comparison(self, op: str, left: Info, right: Info, left_node: Node, right_node: Node) -> None:
        if op in ("==", "!="):
            self._equality(op, left, right, left_node, right_node)
        elif op in ("in", "not in"):
            self._membership(op, left, right, left_node, right_node)
        else:
            self._order(op, left, right, left_node, right_node)

    def _equality(self, op: str, left: Info, right: Info, left_node: Node, right_node: Node) -> None:
        if left.kinds != ANY and right.kinds != ANY and not (left.kinds & right.kinds):
            self.problem(right_node, f"{self.text(left_node)} {op} {self.text(right_node)} compares "
                                     f"{_describe_kinds(left.kinds)} with {_describe_kinds(right.kinds)}: "
                                     f"they are never equal", tuple(sorted(left.kinds)))
            return
        for fixed, other, other_node in ((right, left, left_node), (left, right, right_node)):
            if _outside_values(fixed, other):
                assert fixed.values is not None and other.values is not None
                allowed = ", ".join(repr(v) for v in other.values)
                self.problem(right_node if other_node is left_node else left_node,
                             f"{fixed.values[0]!r} is not one of {self.text(other_node)}'s values ({allowed})",
                             tuple(repr(v) for v in other.values))
                return

    def _membership(self, op: str, left: Info, right: Info, left_node: Node, right_node: Node) -> None:
        self.want(right_node, right, _CONTAINERS, f"the right side of '{op}'")
        if right.kinds == frozenset(("array",)) and right.items is not None and right.items.kinds != ANY \
                and left.kinds != ANY and not (left.kinds & right.items.kinds):
            self.problem(left_node, f"{self.text(left_node)} is {_describe_kinds(left.kinds)}, but "
                                    f"{self.text(right_node)} holds {_describe_kinds(right.items.kinds)}")
        elif right.kinds <= frozenset(("string", "object")) and right.kinds:
            self.want(left_node, left, STRING, f"the left side of '{op}' {_describe_kinds(right.kinds)}")

    def _order(self, op: str, left: Info, right: Info, left_node: Node, right_node: Node) -> None:
        self.want(left_node, left, _ORDERED, f"each side of '{op}'")
        self.want(right_node, right, _ORDERED, f"each side of '{op}'")
        if left.kinds & _ORDERED and right.kinds & _ORDERED and not (left.kinds & right.kinds & _ORDERED):
            self.problem(right_node, f"{self.text(left_node)} {op} {self.text(right_node)} compares "
                                     f"{_describe_kinds(left.kinds & _ORDERED)} with "
                                     f"{_describe_kinds(right.kinds & _ORDERED)}", tuple(sorted(left.kinds & _ORDERED)))

    def _call(self, node: Call, variables: dict[str, Info]) -> Info:
        if node.function == "has":
            if len(node.arguments) != 1 or reference_path(node.arguments[0]) is None:
                self.problem(node, "has() takes one reference, like has(args.x)", ("a reference",))
                return Info(BOOLEAN)
            self.infer(node.arguments[0], variables)
            return Info(BOOLEAN)
        fn = FUNCTIONS.get(node.function)
        if fn is None:
            names = ("has", *sorted(FUNCTIONS), *QUANTIFIERS)
            self.problem(node, f"unknown function {node.function}(); the functions are: {', '.join(names)}", names)
            for argument in node.arguments:
                self.infer(argument, variables)
            return UNKNOWN
        if node.function in QUANTIFIERS:  # pragma: no cover  (quantifiers are not registered functions)
            return UNKNOWN
        if len(node.arguments) != len(fn.parameters):
            self.problem(node, f"{fn.name}() takes {len(fn.parameters)} argument"
                               f"{'s' if len(fn.parameters) != 1 else ''}, not {len(node.arguments)}")
        for position, (argument, accepted) in enumerate(zip(node.arguments, fn.parameters)):
            info = self.infer(argument, variables)
            self.want(argument, info, accepted, f"argument {position + 1} of {fn.name}()")
            if position in fn.literal:
                if not (isinstance(argument, Literal) and isinstance(argument.value, str)):
                    self.problem(argument, f"argument {position + 1} of {fn.name}() must be written as a string "
                                           f"literal (a value from the call must never become a pattern)",
                                 ("a string literal",))
                elif fn.prepare is not None:
                    try:
                        fn.prepare(argument.value)
                    except ValueError as err:
                        self.problem(argument, str(err))
        for argument in node.arguments[len(fn.parameters):]:
            self.infer(argument, variables)
        return Info(fn.returns)

    def _quantifier(self, node: Quantifier, variables: dict[str, Info]) -> Info:
        iterable = self.infer(node.iterable, variables)
        self.want(node.iterable, iterable, frozenset(("array",)), f"what {node.function}() walks")
        inner = {**variables, node.variable: iterable.items or UNKNOWN}
        if node.condition is not None:
            self.want(node.condition, self.infer(node.condition, inner), BOOLEAN, "the 'if' of a generator")
        self.want(node.body, self.infer(node.body, inner), BOOLEAN, f"the body of {node.function}()")
        return Info(NUMBER if node.function == "count" else BOOLEAN)


def _found_info(found: list[tuple[Schema, Tool]], root: str, *, any_kind: bool) -> Info:
    """What a key is that ``found`` schemas declare (``any_kind``: other schemas allow it undeclared)."""
    kinds = ANY if any_kind else frozenset().union(*(schema_kinds(s, t) for s, t in found))
    enums = [resolve_schema(s, t).enum for s, t in found]
    values = tuple(v for e in enums if e is not None for v in e) \
        if all(e is not None for e in enums) and root == "args" else None
    items = [(i, t) for s, t in found if (i := _items(s, t)) is not None]
    item_info = Info(frozenset().union(*(schema_kinds(i, t) for i, t in items)), schemas=tuple(items)) \
        if items else None
    return Info(kinds, schemas=tuple(found), values=values, items=item_info, root=root)


def _outside_values(fixed: Info, other: Info) -> bool:
    """Whether ``fixed`` is one value that an argument's ``other`` values (its enum) never hold."""
    return fixed.values is not None and len(fixed.values) == 1 and other.values is not None \
        and other.root == "args" and fixed.values[0] not in other.values


def check_expression(expression: Expression, tools: list[Tool] | None, lists: dict[str, Any], *,
                     want_boolean: bool = True) -> list[ExpressionError]:
    """Every problem of one expression, against these tools (``None``: the tools are not known).

    >>> from toolform_rules import sample_tool
    >>> from .expression import read_expression
    >>> [p.message for p in check_expression(read_expression("args.value <= 'x'"), [sample_tool()], {})]
    ["args.value <= 'x' compares number with string"]
    """
    return Checker(expression, tools, lists).check(want_boolean)
