"""Evaluating expressions: a plain tree-walker (the reference, and ``explain``) and a compiler to closures.

Both read the same semantics from :mod:`.functions` and charge the same cost model, so
they agree on every value and every error — a hypothesis property holds them to it.  The
compiled form resolves names, functions and patterns once, and takes short cuts (a
literal bound compared without dispatch, ``in lists.x`` as a set lookup) that the
tree-walker does not.

Cost: an evaluation starts by charging the expression's size (one unit per node);
a quantifier charges, before it loops, the length of its list times the size of its
body; a function, ``in``, ``==`` on containers and ``+`` charge what their arguments'
lengths say (see :mod:`.functions`).  When the budget runs out the evaluation stops with
an :class:`EvaluationError` of kind ``budget``.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from ..errors import EvaluationError
from .expression import (Arithmetic, Call, Compare, Expression, Index, ListOf, Literal, Logical, Member, Name,
                         Node, Quantifier, Unary, reference_path, walk)
from .functions import (FUNCTIONS, Function, arithmetic, arithmetic_cost, check_arguments, compare, comparison_cost,
                        exact_types, item, kind_of, member, negate, truth)

_UNSET = object()


class Scope:
    """What an expression can see while one call is checked: the call, the lists, loop variables, the budget left."""

    __slots__ = ("args", "_norm", "_norm_source", "call", "lists", "variables", "remaining", "budget")

    def __init__(self, args: dict[str, Any], *, call: dict[str, Any] | None = None,
                 lists: dict[str, Any] | None = None, norm: Callable[[], dict[str, Any]] | dict[str, Any] | None = None,
                 budget: int = 100_000) -> None:
        self.args = args
        self._norm: Any = norm if isinstance(norm, dict) else _UNSET
        self._norm_source = norm if callable(norm) else None
        self.call = call if call is not None else {}
        self.lists = lists if lists is not None else {}
        self.variables: dict[str, Any] = {}
        self.remaining = budget
        self.budget = budget

    def norm(self) -> dict[str, Any]:
        """The normalised arguments (computed on first use: most constraints read ``args``)."""
        if self._norm is _UNSET:
            self._norm = self._norm_source() if self._norm_source is not None else self.args
        return self._norm  # type: ignore[no-any-return]

    def root(self, name: str) -> Any:
        """The value of a bare name: a loop variable, else one of the roots."""
        if name in self.variables:
            return self.variables[name]
        if name == "args":
            return self.args
        if name == "norm":
            return self.norm()
        if name == "call":
            return self.call
        if name == "lists":
            return self.lists
        raise EvaluationError(f"unknown name {name!r}", kind="type")

    def charge(self, units: int) -> None:
        """Spend ``units`` of the budget; an :class:`EvaluationError` (``budget``) when it runs out."""
        self.remaining -= units
        if self.remaining < 0:
            raise EvaluationError(f"the evaluation needs more than its budget of {self.budget} steps", kind="budget")


def _size(node: Node | None) -> int:
    return 0 if node is None else sum(1 for _ in walk(node))


def _constant(node: Node, lists_known: bool = True) -> bool:
    """Whether a sub-expression reads nothing of the call: only literals, ``lists`` (when known at
    compile time) and loop variables bound inside it — a name is bound only in the body and
    condition of its own quantifier, not beside it (``x == 1 and all(... for x in ...)``)."""
    stack: list[tuple[Node, frozenset[str]]] = [(node, frozenset())]
    while stack:
        current, bound = stack.pop()
        if isinstance(current, Name) and current.name not in bound and (current.name != "lists" or not lists_known):
            return False
        if isinstance(current, Quantifier):
            stack.append((current.iterable, bound))
            inner = bound | {current.variable}
            stack.extend((child, inner) for child in (current.body, current.condition) if child is not None)
        else:
            stack.extend((child, bound) for child in current.children())
    return True


# --- the tree-walker ---------------------------------------------------------------------------

class TreeWalker:
    """Evaluate a tree node by node.  ``trace`` (when a list) receives ``(node, value or error)``
    for every node evaluated, in the order they finish: ``explain`` shows it."""

    def __init__(self, expression: Expression, scope: Scope, trace: list[tuple[Node, Any]] | None = None) -> None:
        self.expression, self.scope, self.trace = expression, scope, trace
        self.visits = 0
        self._sizes: dict[int, int] = {}

    def run(self) -> Any:
        """Charge the expression's size, then evaluate it."""
        self.scope.charge(self.expression.cost)
        return self.evaluate(self.expression.root)

    def size(self, node: Node | None) -> int:
        if node is None:
            return 0
        key = id(node)
        if key not in self._sizes:
            self._sizes[key] = _size(node)
        return self._sizes[key]

    def evaluate(self, node: Node) -> Any:
        self.visits += 1
        try:
            value = self._evaluate(node)
        except EvaluationError as err:
            if self.trace is not None:
                self.trace.append((node, err))
            raise
        if self.trace is not None:
            self.trace.append((node, value))
        return value

    def _where(self, node: Node) -> str:
        return self.expression.source_of(node)

    def _evaluate(self, node: Node) -> Any:
        return getattr(self, "_" + type(node).__name__.lower())(node)  # one method per kind of node

    def _literal(self, node: Literal) -> Any:
        return node.value

    def _name(self, node: Name) -> Any:
        return self.scope.root(node.name)

    def _member(self, node: Member) -> Any:
        return member(self.evaluate(node.target), node.key, self._where(node.target))

    def _index(self, node: Index) -> Any:
        target = self.evaluate(node.target)
        return item(target, self.evaluate(node.index), self._where(node.target))

    def _listof(self, node: ListOf) -> Any:
        return [self.evaluate(child) for child in node.items]

    def _unary(self, node: Unary) -> Any:
        operand = self.evaluate(node.operand)
        if node.op == "not":
            return not truth(operand, "the operand of 'not'")
        return negate(operand)

    def _logical(self, node: Logical) -> Any:
        left = truth(self.evaluate(node.left), f"the left side of '{node.op}'")
        if (node.op == "and") != left:
            return left
        return truth(self.evaluate(node.right), f"the right side of '{node.op}'")

    def _compare(self, node: Compare) -> Any:
        left = self.evaluate(node.operands[0])
        for op, operand in zip(node.operators, node.operands[1:]):
            right = self.evaluate(operand)
            self.scope.charge(comparison_cost(op, left, right))
            if not compare(op, left, right):
                return False
            left = right
        return True

    def _arithmetic(self, node: Arithmetic) -> Any:
        left = self.evaluate(node.left)
        right = self.evaluate(node.right)
        self.scope.charge(arithmetic_cost(node.op, left, right))
        return arithmetic(node.op, left, right)

    def _call(self, node: Call) -> Any:
        if node.function == "has":
            return self._has(node)
        fn = FUNCTIONS.get(node.function)
        if fn is None:
            raise EvaluationError(f"unknown function {node.function}()", kind="type")
        arguments = [self.evaluate(argument) for argument in node.arguments]
        check_arguments(fn, arguments)
        if fn.cost is not None:
            self.scope.charge(fn.cost(*arguments))
        return fn.implementation(*arguments)

    def _has(self, node: Call) -> bool:
        if len(node.arguments) != 1 or reference_path(node.arguments[0]) is None:
            raise EvaluationError("has() takes one reference, like has(args.x)", kind="type")
        try:
            self.evaluate(node.arguments[0])
        except EvaluationError as err:
            if err.kind == "missing":
                return False
            raise
        return True

    def _quantifier(self, node: Quantifier) -> Any:
        items = self.evaluate(node.iterable)
        if kind_of(items) != "array":
            raise EvaluationError(f"{node.function}() walks a list; {self._where(node.iterable)} is "
                                  f"{kind_of(items)}", kind="type")
        self.scope.charge(len(items) * (self.size(node.body) + self.size(node.condition)))
        variables = self.scope.variables
        saved = variables.get(node.variable, _UNSET)
        found = 0
        try:
            for value in items:
                variables[node.variable] = value
                if node.condition is not None and not truth(self.evaluate(node.condition), "the 'if' of a generator"):
                    continue
                holds = truth(self.evaluate(node.body), f"the body of {node.function}()")
                if node.function == "all" and not holds:
                    return False
                if node.function in ("any", "none") and holds:
                    return node.function == "any"
                found += holds
        finally:
            if saved is _UNSET:
                variables.pop(node.variable, None)
            else:
                variables[node.variable] = saved
        return {"all": True, "any": False, "none": True}.get(node.function, found)


def evaluate_by_walking(expression: Expression, scope: Scope) -> Any:
    """The reference evaluation: walk the tree.

    >>> from .expression import read_expression
    >>> evaluate_by_walking(read_expression("all(x > 0 for x in args.xs)"), Scope({"xs": [1, 2]}))
    True
    """
    return TreeWalker(expression, scope).run()


# --- the compiler ----------------------------------------------------------------------------

Compiled = Callable[[Scope], Any]
_NUMBER_TYPES = (int, float)
#: Comparisons of two values of one scalar type (str, int or float), where JSON's semantics are Python's.
_SCALAR_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
# (not ``in``: ``1 in 2`` is a TypeError in Python, and a string search is charged by its length)


def compile_expression(expression: Expression, lists: dict[str, Any] | None = None, *,
                       fold_budget: int = 65_536) -> Compiled:
    """The expression as a closure over a :class:`Scope` (charges its size, then evaluates).

    ``lists``: the policy's lists, when known, so that ``x in lists.name`` is a set lookup and
    what reads only literals and lists is computed now — when that costs at most
    ``fold_budget`` units and gives a scalar (more, or a list or object, is left to run time,
    under the evaluation's budget).

    >>> from .expression import read_expression
    >>> check = compile_expression(read_expression("args.amount <= 10000"))
    >>> check(Scope({"amount": 20000})), check(Scope({"amount": 5}))
    (False, True)
    """
    body = _Compiler(expression, lists, fold_budget).compile(expression.root)
    cost = expression.cost

    def run(scope: Scope) -> Any:
        scope.remaining -= cost
        if scope.remaining < 0:
            scope.charge(0)
        return body(scope)

    return run


class _Compiler:
    def __init__(self, expression: Expression, lists: dict[str, Any] | None, fold_budget: int) -> None:
        # unknown lists (None) are the scope's, at run time: ``lists.x`` is then no constant
        self.expression, self.lists, self.lists_known = expression, lists or {}, lists is not None
        # folding runs while the policy loads, where no call's budget applies: nested quantifiers
        # over long lists cost their product, so a constant costlier than this is left to run time
        self.fold_budget = fold_budget

    def compile(self, node: Node) -> Compiled:  # noqa: C901  (one branch per node kind)
        if not isinstance(node, (Literal, Name)) and _constant(node, self.lists_known):
            return self._folded(node)
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node)  # type: ignore[no-any-return]

    def _folded(self, node: Node) -> Compiled:
        """A sub-expression of literals and lists only, computed now by the tree-walker; at run time it
        charges what the walker charged and gives what it gave (a value, or the same error)."""
        sub = Expression(self.expression.text, node, _size(node))
        scope = Scope({}, lists=self.lists, budget=self.fold_budget)
        walker = TreeWalker(sub, scope)
        try:
            value: Any = walker.evaluate(node)
            failure: EvaluationError | None = None
        except EvaluationError as err:
            if err.kind == "budget":  # too costly to compute while loading: left to run time and its budget
                return getattr(self, "_" + type(node).__name__.lower())(node)  # type: ignore[no-any-return]
            value, failure = None, err
        if isinstance(value, (list, dict)):
            # left to run time, as the tree-walker computes it: folded, every use would need a copy
            # (else callers share one they could change) whose size no budget counts — made again
            # for each item of a quantifier over a call's list
            return getattr(self, "_" + type(node).__name__.lower())(node)  # type: ignore[no-any-return]
        units = self.fold_budget - scope.remaining
        if failure is not None:
            message, kind = str(failure), failure.kind

            def fail(scope: Scope) -> Any:
                if units:
                    scope.charge(units)
                raise EvaluationError(message, kind=kind)
            return fail
        if units:
            def charged(scope: Scope) -> Any:
                scope.charge(units)
                return value
            return charged
        return lambda scope: value

    def _where(self, node: Node) -> str:
        return self.expression.source_of(node)

    def _literal(self, node: Literal) -> Compiled:
        value = node.value
        if isinstance(value, (list, dict)):  # never shared: a caller could change what it got
            return lambda scope: list(value) if isinstance(value, list) else dict(value)
        return lambda scope: value

    def _name(self, node: Name) -> Compiled:
        name = node.name
        if name == "args":  # a reserved name: no loop variable can hide it
            return lambda scope: scope.args
        return lambda scope: scope.root(name)

    def _member(self, node: Member) -> Compiled:
        key, where = node.key, self._where(node.target)
        if isinstance(node.target, Name) and node.target.name == "args":
            def argument(scope: Scope) -> Any:
                try:
                    return scope.args[key]
                except KeyError:
                    raise EvaluationError(f"args.{key} is missing", kind="missing") from None
            return argument
        target = self.compile(node.target)

        def get(scope: Scope) -> Any:
            value = target(scope)
            if type(value) is dict and key in value:
                return value[key]
            return member(value, key, where)
        return get

    def _index(self, node: Index) -> Compiled:
        target, index, where = self.compile(node.target), self.compile(node.index), self._where(node.target)
        return lambda scope: item(target(scope), index(scope), where)

    def _listof(self, node: ListOf) -> Compiled:
        items = [self.compile(child) for child in node.items]
        return lambda scope: [evaluate(scope) for evaluate in items]

    def _unary(self, node: Unary) -> Compiled:
        operand = self.compile(node.operand)
        if node.op == "not":
            def not_(scope: Scope) -> bool:
                value = operand(scope)
                if value is True or value is False:
                    return not value
                return not truth(value, "the operand of 'not'")
            return not_
        return lambda scope: negate(operand(scope))

    def _logical(self, node: Logical) -> Compiled:
        left, right = self.compile(node.left), self.compile(node.right)
        left_what, right_what = f"the left side of '{node.op}'", f"the right side of '{node.op}'"
        # the left value that decides alone (false for "and", true for "or"), and the one that does not
        decides, goes_on = node.op == "or", node.op == "and"

        def logical(scope: Scope) -> bool:
            value = left(scope)
            if value is decides:
                return decides
            if value is not goes_on:
                truth(value, left_what)  # (raises: not a boolean)
            value = right(scope)
            return value if value is True or value is False else truth(value, right_what)
        return logical

    def _compare(self, node: Compare) -> Compiled:
        if len(node.operators) == 1:
            fast = self._single_comparison(node)
            if fast is not None:
                return fast
        operands = [self.compile(operand) for operand in node.operands]
        first, pairs = operands[0], list(zip(node.operators, operands[1:]))

        def chain(scope: Scope) -> bool:
            left = first(scope)
            for op, evaluate in pairs:
                right = evaluate(scope)
                kind = type(left)
                if kind is type(right) and (kind is str or kind is int or kind is float) and op in _SCALAR_TESTS:
                    if not _SCALAR_TESTS[op](left, right):
                        return False
                    left = right
                    continue
                cost = comparison_cost(op, left, right)
                if cost:
                    scope.charge(cost)
                if not compare(op, left, right):
                    return False
                left = right
            return True
        return chain

    def _single_comparison(self, node: Compare) -> Compiled | None:
        op, (left_node, right_node) = node.operators[0], node.operands
        left = self.compile(left_node)
        if isinstance(right_node, Literal) and type(right_node.value) in _NUMBER_TYPES and op in ("<", "<=", ">", ">="):
            bound = right_node.value
            test = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

            def against_bound(scope: Scope) -> bool:
                value = left(scope)
                if type(value) is int or type(value) is float:
                    return test(value, bound)  # type: ignore[no-any-return]
                return compare(op, value, bound)
            return against_bound
        if isinstance(right_node, Literal) and op in ("==", "!=") and type(right_node.value) is str:
            text, equal = right_node.value, op == "=="

            def against_text(scope: Scope) -> bool:
                value = left(scope)
                return (type(value) is str and value == text) is equal
            return against_text
        if op in ("in", "not in") and self._static_list(right_node) is not None:
            values = self._static_list(right_node)
            assert values is not None
            strings = frozenset(v for v in values if type(v) is str)
            if len(strings) == len(values):  # all strings: a set lookup, charged as the list search it replaces
                right = self.compile(right_node)
                cost, inside = len(values), op == "in"

                def in_strings(scope: Scope) -> bool:
                    value = left(scope)
                    scope.remaining -= cost
                    if scope.remaining < 0:
                        scope.charge(0)
                    if type(value) is str:
                        return (value in strings) is inside
                    return compare(op, value, right(scope))
                return in_strings
        return None

    def _static_list(self, node: Node) -> list[Any] | None:
        """The values of a literal list of literals (a ``lists.x`` is one once the policy binds it)."""
        if isinstance(node, ListOf) and all(isinstance(i, Literal) for i in node.items):
            return [i.value for i in node.items if isinstance(i, Literal)]
        found = reference_path(node)
        if self.lists_known and found is not None and found[0] == "lists" and len(found[1]) == 1:
            value = self.lists.get(str(found[1][0]))
            return list(value) if isinstance(value, list) else None
        return None

    def _arithmetic(self, node: Arithmetic) -> Compiled:
        left, right, op = self.compile(node.left), self.compile(node.right), node.op

        fast = {"+": operator.add, "-": operator.sub}.get(op)

        def compute(scope: Scope) -> Any:
            a, b = left(scope), right(scope)
            kind_a, kind_b = type(a), type(b)
            if (kind_a is int or kind_a is float) and (kind_b is int or kind_b is float):
                try:
                    if fast is not None:
                        return fast(a, b)
                    if op == "/" and b:
                        return a / b
                    if op == "*" and (kind_a is float or kind_b is float):
                        return a * b
                except OverflowError:  # a float beside a huge integer: arithmetic() says so
                    pass
            cost = arithmetic_cost(op, a, b)
            if cost:
                scope.charge(cost)
            return arithmetic(op, a, b)
        return compute

    def _call(self, node: Call) -> Compiled:
        if node.function == "has":
            return self._has(node)
        fn = FUNCTIONS.get(node.function)
        if fn is None:
            name = node.function

            def unknown(scope: Scope) -> Any:
                raise EvaluationError(f"unknown function {name}()", kind="type")
            return unknown
        arguments = [self.compile(argument) for argument in node.arguments]
        implementation, cost = fn.implementation, fn.cost
        if len(arguments) == len(fn.parameters) and len(arguments) in (1, 2):
            return self._fast_call(fn, arguments)

        def call(scope: Scope) -> Any:
            values = [evaluate(scope) for evaluate in arguments]
            check_arguments(fn, values)
            if cost is not None:
                units = cost(*values)
                if units:
                    scope.charge(units)
            return implementation(*values)
        return call

    def _fast_call(self, fn: Function, arguments: list[Compiled]) -> Compiled:
        """A call of one or two arguments whose types are checked by exact type first (the common case)."""
        implementation, cost = fn.implementation, fn.cost
        types = [exact_types(kinds) for kinds in fn.parameters]
        if len(arguments) == 1:
            (only,), (accepted,) = arguments, types

            def call_one(scope: Scope) -> Any:
                value = only(scope)
                if type(value) not in accepted:
                    check_arguments(fn, [value])
                if cost is not None:
                    units = cost(value)
                    if units:
                        scope.charge(units)
                return implementation(value)
            return call_one
        (first, second), (accepted_first, accepted_second) = arguments, types

        def call_two(scope: Scope) -> Any:
            a, b = first(scope), second(scope)
            if type(a) not in accepted_first or type(b) not in accepted_second:
                check_arguments(fn, [a, b])
            if cost is not None:
                units = cost(a, b)
                if units:
                    scope.charge(units)
            return implementation(a, b)
        return call_two

    def _has(self, node: Call) -> Compiled:
        if len(node.arguments) != 1 or reference_path(node.arguments[0]) is None:
            def refuse(scope: Scope) -> Any:
                raise EvaluationError("has() takes one reference, like has(args.x)", kind="type")
            return refuse
        target = self.compile(node.arguments[0])
        found = reference_path(node.arguments[0])
        if found is not None and found[0] in ("args", "norm") and all(type(k) is str for k in found[1]):
            root, keys = found[0] == "args", found[1]

            def has_keys(scope: Scope) -> bool:
                # a walk down dicts, without raising for the usual "absent" answer; anything
                # else (a list, a string on the way) takes the general path and its errors
                value: Any = scope.args if root else scope.norm()
                for key in keys:
                    if type(value) is not dict:
                        break
                    if key not in value:
                        return False
                    value = value[key]
                else:
                    return True
                return has(scope)
        else:
            has_keys = None  # type: ignore[assignment]

        def has(scope: Scope) -> bool:
            try:
                target(scope)
            except EvaluationError as err:
                if err.kind == "missing":
                    return False
                raise
            return True
        return has_keys if has_keys is not None else has

    def _quantifier(self, node: Quantifier) -> Compiled:
        iterable, body = self.compile(node.iterable), self.compile(node.body)
        condition = self.compile(node.condition) if node.condition is not None else None
        per_item = _size(node.body) + _size(node.condition)
        function, variable, where = node.function, node.variable, self._where(node.iterable)
        body_what = f"the body of {function}()"

        def quantify(scope: Scope) -> Any:
            items = iterable(scope)
            if type(items) is not list and kind_of(items) != "array":
                raise EvaluationError(f"{function}() walks a list; {where} is {kind_of(items)}", kind="type")
            scope.charge(len(items) * per_item)
            variables = scope.variables
            saved = variables.get(variable, _UNSET)
            found = 0
            try:
                for value in items:
                    variables[variable] = value
                    if condition is not None and not truth(condition(scope), "the 'if' of a generator"):
                        continue
                    holds = body(scope)
                    if holds is not True and holds is not False:
                        holds = truth(holds, body_what)
                    if function == "all":
                        if not holds:
                            return False
                    elif function == "count":
                        found += holds
                    elif holds:
                        return function == "any"
            finally:
                if saved is _UNSET:
                    variables.pop(variable, None)
                else:
                    variables[variable] = saved
            return found if function == "count" else function != "any"
        return quantify
