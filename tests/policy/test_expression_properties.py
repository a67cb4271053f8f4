"""Properties of the constraint expression language on generated text and arguments.

The reader must turn any text into an expression or an ExpressionError; the tree-walker
(the reference) and the compiled closures must agree on every value, every error and every
unit of budget; the budget must bound the work really done; nothing may change its inputs;
the checker must never fail itself; and the size limits must refuse before Python's
recursion limit is reached.
"""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolform_rules import sample_tool
from toolform_rules.errors import EvaluationError
from toolform_rules.limits import PolicyLimits
from toolform_rules.policy.checker import check_expression
from toolform_rules.policy.evaluate import Scope, TreeWalker, compile_expression, evaluate_by_walking
from toolform_rules.policy.expression import Expression, ExpressionError, Literal, Node, read_expression, walk

from exprgen import LISTS, TOKENS, argument_dicts, boolean_expression_texts, expression_texts, same_value

#: A budget no generated expression comes near: what an evaluation costs when nothing stops it.
AMPLE = 10**9


def _outcome(run: Any) -> tuple[str, Any]:
    """``("value", v)`` or ``("error", (kind, message))``; any other exception propagates and fails."""
    try:
        return "value", run()
    except EvaluationError as err:
        return "error", (err.kind, str(err))


def _same_outcome(left: tuple[str, Any], right: tuple[str, Any]) -> bool:
    if left[0] != right[0]:
        return False
    if left[0] == "error":
        return left[1] == right[1]
    return same_value(left[1], right[1])


def _shape(node: Node) -> tuple[Any, ...]:
    """A node without its offsets: what a re-read of its text must give again."""
    fields = []
    for name, value in _fields(node):
        if name in ("start", "end"):
            continue
        if isinstance(value, Node):
            value = _shape(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Node):
            value = tuple(_shape(v) for v in value)
        elif name == "value":
            value = (type(value).__name__, repr(value))  # 1 and 1.0 and True differ
        fields.append((name, value))
    return (type(node).__name__, tuple(fields))


def _fields(node: Node) -> list[tuple[str, Any]]:
    return [(f.name, getattr(node, f.name)) for f in attrs.fields(type(node))]


def _read_or_error(text: str, limits: PolicyLimits = PolicyLimits()) -> Expression | ExpressionError:
    try:
        return read_expression(text, limits)
    except ExpressionError as err:
        return err


def _assert_well_placed(err: ExpressionError, text: str) -> None:
    assert 0 <= err.offset <= len(text)
    before = text[:err.offset]
    assert err.line == before.count("\n") + 1
    assert err.column == err.offset - (before.rfind("\n") + 1) + 1
    assert err.message


# ----------------------------------------------------------------------------- (a) reading

@given(st.one_of(st.text(), st.text(alphabet=st.characters(codec="utf-8"), max_size=60)))
def test_any_text_reads_or_is_an_expression_error(text: str) -> None:
    # Anything else escaping (a Lark error, RecursionError, IndexError, ValueError) would
    # crash a policy load instead of pointing at the problem.
    found = _read_or_error(text)
    if isinstance(found, ExpressionError):
        _assert_well_placed(found, text)
    else:
        assert found.text == text
        assert found.cost == sum(1 for _ in walk(found.root))


@given(st.lists(st.sampled_from(TOKENS), max_size=40), st.sampled_from(["", " ", "\n"]))
def test_token_soup_reads_or_is_an_expression_error(tokens: list[str], separator: str) -> None:
    text = separator.join(tokens)
    found = _read_or_error(text)
    if isinstance(found, ExpressionError):
        _assert_well_placed(found, text)
    else:
        assert found.cost == sum(1 for _ in walk(found.root)) <= PolicyLimits().max_expression_nodes


@given(expression_texts())
def test_generated_text_always_reads(text: str) -> None:
    # The generator only writes what the grammar accepts: a refusal is a reader bug
    # (or a generator bug), never an expected outcome.
    expression = read_expression(text)
    assert expression.cost == sum(1 for _ in walk(expression.root))


@given(expression_texts())
def test_every_node_span_reads_back_as_the_same_node(text: str) -> None:
    # Carets and ``explain`` show ``source_of(node)``: it must be exactly that node's text.
    expression = read_expression(text)
    for node in walk(expression.root):
        source = expression.source_of(node)
        assert _shape(read_expression(source).root) == _shape(node), source


# ----------------------------------------------------------------------------- (b) agreement

@given(boolean_expression_texts(), argument_dicts())
def test_walker_and_compiled_agree(text: str, args: dict[str, Any]) -> None:
    expression = read_expression(text)
    scopes = [Scope(args, call={"name": "legal_draft_v3"}, lists=LISTS, budget=AMPLE) for _ in range(3)]
    walked = _outcome(lambda: evaluate_by_walking(expression, scopes[0]))
    compiled = _outcome(lambda: compile_expression(expression, LISTS)(scopes[1]))
    # Without the lists at compile time the set-lookup short cut is off: still the same answer.
    unbound = _outcome(lambda: compile_expression(expression)(scopes[2]))
    assert _same_outcome(walked, compiled), (walked, compiled)
    assert _same_outcome(walked, unbound), (walked, unbound)
    assert scopes[0].remaining == scopes[1].remaining == scopes[2].remaining
    assert not any(scope.variables for scope in scopes)  # loop variables never leak out


# ----------------------------------------------------------------------------- (c) budget

@given(expression_texts(), argument_dicts(), st.integers(0, 500))
def test_budget_bounds_the_work_and_cost_is_exact(text: str, args: dict[str, Any], budget: int) -> None:
    expression = read_expression(text)
    ample = Scope(args, lists=LISTS, budget=AMPLE)
    unlimited = _outcome(lambda: TreeWalker(expression, ample).run())
    needed = AMPLE - ample.remaining  # the units spent up to the value, or up to the error
    assume(unlimited[0] == "value" or unlimited[1][0] != "budget")

    compiled = compile_expression(expression, LISTS)
    for use_compiled in (False, True):
        scope = Scope(args, lists=LISTS, budget=budget)
        outcome = _outcome(lambda: compiled(scope) if use_compiled else TreeWalker(expression, scope).run())
        if needed > budget:
            assert outcome[0] == "error" and outcome[1][0] == "budget", outcome
            assert scope.remaining < 0
        else:
            # Enough budget: exactly the unlimited outcome, and exactly the same units spent.
            assert _same_outcome(outcome, unlimited), (outcome, unlimited)
            assert scope.remaining == budget - needed >= 0
    # The units charged pay for every node the walker really visited.
    scope = Scope(args, lists=LISTS, budget=budget)
    walker = TreeWalker(expression, scope)
    _outcome(walker.run)
    assert walker.visits <= budget - scope.remaining


@pytest.mark.parametrize("evaluator", ["walk", "compiled"])
def test_quadratic_quantifier_stops_on_its_budget_quickly(evaluator: str) -> None:
    expression = read_expression("all(all(x == y for y in args.xs) for x in args.xs)")
    # Equal items: every comparison holds, so no ``all`` stops early; 10^8 of them if nothing stopped it.
    scope = Scope({"xs": [7] * 10_000})
    walker = TreeWalker(expression, scope)
    run = walker.run if evaluator == "walk" else lambda: compile_expression(expression)(scope)
    with pytest.raises(EvaluationError) as caught:
        run()
    assert caught.value.kind == "budget"
    assert "budget of 100000" in str(caught.value)
    assert walker.visits <= PolicyLimits().evaluation_budget  # the work done is bounded, not the time


def test_budget_is_charged_before_a_quantifier_loops() -> None:
    # The charge for the whole walk comes first: not one item is looked at when it cannot be paid.
    expression = read_expression("any(x == 1 for x in args.xs)")
    scope = Scope({"xs": [0] * 1000}, budget=2000)
    walker = TreeWalker(expression, scope)
    with pytest.raises(EvaluationError) as caught:
        walker.run()
    assert caught.value.kind == "budget"
    assert walker.visits == 3  # the quantifier and its iterable (args.xs: two nodes), no body


# ----------------------------------------------------------------------------- (d) no mutation

@given(expression_texts(), argument_dicts())
def test_evaluation_never_changes_its_inputs(text: str, args: dict[str, Any]) -> None:
    expression = read_expression(text)
    lists = copy.deepcopy(LISTS)
    before_args, before_lists = copy.deepcopy(args), copy.deepcopy(lists)
    compiled = compile_expression(expression, lists)
    for run in (lambda scope: evaluate_by_walking(expression, scope), compiled):
        scope = Scope(args, lists=lists, budget=AMPLE)
        _outcome(lambda: run(scope))
        assert same_value(args, before_args)
        assert same_value(lists, before_lists)


def test_a_returned_list_is_not_the_policy_list() -> None:
    # A caller that appends to what ``lists.names + []`` gave must not change the policy.
    lists = copy.deepcopy(LISTS)
    for run in (lambda e, s: evaluate_by_walking(e, s), lambda e, s: compile_expression(e, lists)(s)):
        value = run(read_expression("lists.names + []"), Scope({}, lists=lists))
        value.append("mallory")
        assert lists["names"] == LISTS["names"]


# ----------------------------------------------------------------------------- (e) checker

@given(expression_texts(), st.booleans(), st.booleans())
def test_checker_returns_located_problems(text: str, with_tool: bool, want_boolean: bool) -> None:
    expression = read_expression(text)
    problems = check_expression(expression, [sample_tool()] if with_tool else None, LISTS,
                                want_boolean=want_boolean)
    assert isinstance(problems, list)
    for problem in problems:
        assert isinstance(problem, ExpressionError)
        _assert_well_placed(problem, text)


@settings(max_examples=60)
@given(expression_texts(), argument_dicts())
def test_what_the_checker_passes_never_fails_for_a_reason_it_checks(text: str, args: dict[str, Any]) -> None:
    # Unknown names and functions, arity and has() misuse are load-time problems: an
    # expression the checker accepts must never meet them while evaluating.
    expression = read_expression(text)
    assume(not check_expression(expression, None, LISTS, want_boolean=False))
    outcome = _outcome(lambda: evaluate_by_walking(expression, Scope(args, lists=LISTS, budget=AMPLE)))
    if outcome[0] == "error":
        kind, message = outcome[1]
        assert not message.startswith(("unknown function", "unknown name", "has() takes")), message
        assert " arguments, not " not in message, message


# ----------------------------------------------------------------------------- (f) limits

_RAISED = PolicyLimits(max_expression_chars=10**6, max_expression_depth=10**6, max_expression_nodes=10**6)


@pytest.mark.parametrize(("text", "limits", "fragment"), [
    pytest.param("1" + " + 1" * 1000, PolicyLimits(), "characters long", id="too-long"),
    pytest.param("not " * 5000 + "true", PolicyLimits(), "characters long", id="not-x5000-too-long"),
    pytest.param("not " * 5000 + "true", PolicyLimits(max_expression_chars=10**5), "nests deeper than 48",
                 id="not-x5000-too-deep"),
    pytest.param("(" * 500 + "1" + " + 1)" * 500, PolicyLimits(), "nests deeper than 48", id="parens-x500-with-sums"),
    pytest.param("-" * 3000 + "x", PolicyLimits(), "nests deeper than 48", id="minus-x3000"),
    pytest.param("args" + ".k" * 100, PolicyLimits(), "nests deeper than 48", id="member-chain"),
    pytest.param("[" * 100 + "]" * 100, PolicyLimits(), "nests deeper than 48", id="nested-lists"),
    pytest.param("all(" * 60 + "x" + " for x in args.xs)" * 60, PolicyLimits(max_expression_chars=10**4),
                 "nests deeper than 48", id="nested-quantifiers"),
    pytest.param("[" + "1," * 1500 + "]", PolicyLimits(), "has 1501 parts; the limit is 1000", id="too-many-nodes"),
    pytest.param("1 + 1", PolicyLimits(max_expression_nodes=2), "has 3 parts; the limit is 2", id="nodes-tight"),
    pytest.param("x" * 11, PolicyLimits(max_expression_chars=10), "11 characters long; the limit is 10",
                 id="chars-tight"),
    # With every limit raised the reader must still refuse, not overflow Python's stack.
    pytest.param("not " * 5000 + "true", _RAISED, "too deeply", id="raised-limits-deep"),
    pytest.param("-" * 20000 + "x", _RAISED, "too deeply", id="raised-limits-minus"),
    pytest.param("9" * 5000, _RAISED, "too large", id="raised-limits-long-number"),
])
def test_limits_refuse_with_an_expression_error(text: str, limits: PolicyLimits, fragment: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        read_expression(text, limits)
    assert fragment in caught.value.message
    _assert_well_placed(caught.value, text)


def test_redundant_parentheses_do_not_deepen_the_tree() -> None:
    # The depth limit bounds the tree (what the evaluators recurse on); parentheses that
    # add no node add no depth, and Lark's LALR parser does not recurse on them.
    expression = read_expression("(" * 1000 + "1" + ")" * 1000)
    assert expression.root == Literal(value=1, start=1000, end=1001)
    assert expression.cost == 1


def test_depth_limit_is_exact() -> None:
    limits = PolicyLimits(max_expression_depth=4)
    assert read_expression("not not not true", limits).cost == 4
    with pytest.raises(ExpressionError, match="deeper than 4"):
        read_expression("not not not not true", limits)


# ----------------------------------------------------------------------------- regressions
# Each case once broke the agreement, the budget or the "only EvaluationError" promise;
# generated input reaches them only now and then, so they are pinned here.

_LISTS_BIG = {"names": ["a"], "big": list(range(5000))}


@pytest.mark.parametrize(("text", "args", "expected"), [
    # An inner quantifier's variable does not bind the same name beside it (constant folding took it for bound).
    pytest.param("any(x == 1 and all(true for x in [1]) for x in args.xs)", {"xs": [1]}, ("value", True),
                 id="fold-inner-variable"),
    # ``in`` between two numbers is a type error, not Python's TypeError from a fast path.
    pytest.param("args.n in args.n", {"n": 1}, ("error", "type"), id="in-between-numbers"),
    pytest.param("args.n in args.n < 3", {"n": 1}, ("error", "type"), id="chained-in-between-numbers"),
    # A float beside an integer no float can hold: OverflowError in Python.
    pytest.param("1.5 * args.n", {"n": 10**400}, ("error", "value"), id="overflow-product"),
    pytest.param("args.n / 3", {"n": 10**400}, ("error", "value"), id="overflow-division"),
    pytest.param("args.n + 0.5 > 0", {"n": 10**400}, ("error", "value"), id="overflow-sum"),
    # A pattern the checker would refuse, evaluated unchecked: an error of the call, not a ValueError.
    pytest.param('matches(args.s, "(a)\\\\1")', {"s": "aa"}, ("error", "value"), id="back-reference-unchecked"),
    pytest.param('matches("aa", "(a)\\\\1")', {}, ("error", "value"), id="back-reference-constant"),
    # JSON's "\ud800" is a lone surrogate, which UTF-8 cannot encode for RE2.
    pytest.param('matches(args.s, "a")', {"s": "\ud800a"}, ("value", True), id="surrogate-subject"),
    # An integer too long for str(): the message must still be written.
    pytest.param('args.n < "a"', {"n": 10**5000}, ("error", "type"), id="huge-integer-in-message"),
    # Nested quantifiers over long constant lists: folding them at compile time would cost 75M steps.
    pytest.param("args.b or count(any(y == x for y in lists.big) for x in lists.big) > 0", {"b": False},
                 ("error", "budget"), id="costly-constant-left-to-run-time"),
])
def test_regressions_agree(text: str, args: dict[str, Any], expected: tuple[str, Any]) -> None:
    expression = read_expression(text)
    scopes = [Scope(args, lists=_LISTS_BIG) for _ in range(3)]
    outcomes = [_outcome(lambda: evaluate_by_walking(expression, scopes[0])),
                _outcome(lambda: compile_expression(expression, _LISTS_BIG)(scopes[1])),
                _outcome(lambda: compile_expression(expression)(scopes[2]))]
    assert all(_same_outcome(outcomes[0], other) for other in outcomes[1:]), outcomes
    assert scopes[0].remaining == scopes[1].remaining == scopes[2].remaining
    kind, detail = outcomes[0]
    assert kind == expected[0]
    assert (detail if kind == "value" else detail[0]) == expected[1]


def test_compiled_without_lists_reads_the_scopes_lists() -> None:
    # ``lists=None`` means "not known yet": ``lists.x`` must come from the scope, not be folded to missing.
    run = compile_expression(read_expression("'b' in lists.names and len(lists.names) == 2"))
    assert run(Scope({}, lists={"names": ["a", "b"]})) is True
    assert run(Scope({}, lists={"names": ["a"]})) is False


def test_string_search_is_charged_by_its_length_in_a_chain() -> None:
    # 640 characters searched: 10 units beyond the 5 nodes, on both evaluators.
    expression = read_expression("args.s in args.t != false")
    for run in (lambda s: evaluate_by_walking(expression, s), compile_expression(expression)):
        scope = Scope({"s": "b", "t": "b" * 640}, budget=100)
        assert run(scope) is True
        assert scope.remaining == 100 - 6 - 10
