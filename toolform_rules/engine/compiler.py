"""Compile a tool's rules once into a program of closures, and run it per call.

For every schema node the compiler asks each rule of the profile, in profile order,
for a check (the rule's registered operation returns one, or ``None`` when the node
gives it nothing to do).  A node's checks are chained into one closure; an object's
``properties`` operation compiles its children the same way.  No source is generated
and nothing is evaluated: a program is plain Python closures, cached on the tool per
profile and limits.  A node's closures depend only on what the node asks and on the
profile, so nodes that ask the same share them, across tools (:class:`SharedNodes`).
"""

from __future__ import annotations

import functools
import weakref
from operator import countOf
from typing import Any, Callable, Union

import attrs

from ..schema.ir import Schema, Tool, content_key
from ..schema.names import canonical_name
from ..limits import Limits
from .context import (Bound, Check, Members, NodeContext, Path, Present, Reporter, Size, Transform, TypeGate,
                      accept, accept_nothing, make_reporter)
from .report import Finding, ValidationReport, VALID, report_of, rule_ids
from .rules import Rule, RuleSet

NESTING_LIMIT = Finding("engine.nesting-limit", "constraint_errors", (),
                        "$: the arguments are nested too deeply to check", "toolform_rules/engine/compiler.py")


class SharedNodes:
    """What every tool compiled under one profile of one rule set, with one set of limits, shares.

    Two nodes that ask the same of a value (equal :func:`.content_key`: the same keywords,
    whatever their annotations or place) get one compiled check and one normaliser, in one
    tool or across tools: ten thousand tools built from a few kinds of parameter hold those
    few once.  A node with a ``$ref`` below it is compiled per tool (its meaning depends on
    the tool's definitions).  Checks and normalisers are held weakly, so an entry lives as
    long as some program uses it; the reporters (one per rule) live with the rule set.
    """

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.checks: weakref.WeakValueDictionary[tuple, Check] = weakref.WeakValueDictionary()
        self.normalisers: weakref.WeakValueDictionary[tuple, Transform] = weakref.WeakValueDictionary()
        self.gates: weakref.WeakKeyDictionary[Check, TypeGate] = weakref.WeakKeyDictionary()
        # (id(rule), template option or None) -> the rule (kept, so the id stays its), its reporter
        self.reporters: dict[tuple[int, str | None], tuple[Rule, Reporter]] = {}
        # a node's check -> the rules listed in argument order that have a check of their own at or below it,
        # and the late rules that report there (only checks with some: most have none)
        self.ordered_under: weakref.WeakKeyDictionary[Check, tuple[frozenset[str], frozenset[str]]] = \
            weakref.WeakKeyDictionary()
        self._ordered_sets: dict[tuple[frozenset[str], frozenset[str]], tuple[frozenset[str], frozenset[str]]] = {}
        order = {r.id: r.order for r in rules}
        self.rule_order = order  # how a program orders findings: the same for every tool of the profile
        self.late_rules = frozenset(k for k, v in order.items() if v)
        self.positional_rules = frozenset(r.id for r in rules if r.listed == "in argument order")

    def keep_ordered_under(self, check: Check, positional: set[str], late: set[str]) -> None:
        """Note that under ``check`` these rules in argument order check and these late rules report."""
        entry = self.ordered_under.get(check)
        if entry is not None:  # the same check made at another node (a child's own, passed up): both
            positional, late = positional | entry[0], late | entry[1]
        if positional or late:
            pair = (frozenset(positional), frozenset(late))
            self.ordered_under[check] = self._ordered_sets.setdefault(pair, pair)  # one of each pair, shared

    @staticmethod
    def of(rules: tuple[Rule, ...], ruleset: RuleSet | None, limits: Limits) -> "SharedNodes":
        """The shared nodes of ``rules`` (a profile of ``ruleset``, ``None``: the built-in rules) under ``limits``."""
        from .rule_files import builtin_rules

        owner = ruleset if ruleset is not None else builtin_rules()
        key = (tuple(r.id for r in rules), limits)
        shared = owner.compiled.get(key)
        if shared is None:
            shared = owner.compiled[key] = SharedNodes(rules)
        return shared


class Compiler:
    """Compiles the schema nodes of one tool under one profile."""

    def __init__(self, rules: tuple[Rule, ...], tool: Tool | None, limits: Limits,
                 ruleset: RuleSet | None = None) -> None:
        from .operations import operation_of

        self.tool = tool
        self.limits = limits
        self.ruleset = ruleset  # where another profile is looked up (None: the built-in rules)
        declared = [(r, op) for r in rules if (op := operation_of(r.phase, r.op)) is not None]
        self.operations = {r.id: op for r, op in declared}
        # a "call" operation (unknown_tool) is run by the engine on a call naming no tool, not per node
        self.validate_rules = [(r, op.function) for r, op in declared if r.phase == "validate" and op.acts_on == "node"]
        self.normalise_rules = [(r, op.function) for r, op in declared if r.phase == "normalise"]
        # The interactions the operations declare, answered once for this profile (see NodeContext):
        # rule id -> the rules it may take over / the rule that may take it over / its questions' answers.
        ops_run = frozenset(r.op for r, _ in declared)
        self.subsumed: dict[str, tuple[Rule, ...]] = {}
        self.subsumer: dict[str, Rule] = {}
        self.consulted: dict[str, dict[str, bool]] = {}
        self.rule_of_op: dict[str, Rule] = {}
        for rule, operation in declared:
            if rule.phase == "validate":
                self.rule_of_op.setdefault(rule.op, rule)
            if operation.subsumes:
                taken = tuple(r for r, _ in declared if r.phase == rule.phase and r.op in operation.subsumes)
                self.subsumed[rule.id] = taken
                for other in taken:
                    self.subsumer.setdefault(other.id, rule)
            if operation.consults:
                self.consulted[rule.id] = {op: op in ops_run for op in operation.consults}
        self.shared = SharedNodes.of(rules, ruleset, limits)
        # this tool's nodes by id; a node being compiled is _COMPILING until done (a $ref cycle meets it)
        self._checks: dict[int, Any] = {}
        self._normalisers: dict[int, Any] = {}
        self._cells: dict[tuple[int, int], list] = {}  # (cache, node) -> the cell of a node a $ref cycle reached
        self._content: dict[int, Any] = {}  # content_key memo
        self._keep: list[Schema] = []  # ids in the caches stay valid while their nodes live
        self._others: dict[str, Compiler] = {}
        # for each check being built (innermost last): the rules in argument order with a check of their own
        # there, and the late rules reporting there (see SharedNodes.ordered_under)
        self._under: list[tuple[set[str], set[str]]] = []

    def under(self, profile: str) -> "Compiler":
        """A compiler for the same tool under another profile of the same rule set (made once)."""
        from .rule_files import builtin_rules

        other = self._others.get(profile)
        if other is None:
            ruleset = self.ruleset if self.ruleset is not None else builtin_rules()
            other = self._others[profile] = Compiler(ruleset.profile_rules(profile), self.tool, self.limits,
                                                     self.ruleset)
        return other

    def passing_types(self, check: Check) -> frozenset[type]:
        """The types ``check`` accepts outright, when it is a type gate's check (else none)."""
        gate = self.shared.gates.get(check)
        return _NO_TYPES if gate is None else gate.passing_types

    def quick_look(self, check: Check) -> tuple[type | None, Callable[[Any], bool]]:
        """The type whose values ``check`` passes after a quick look, when it is a type gate's, with that look."""
        gate = self.shared.gates.get(check)
        return (None, accept_nothing) if gate is None else (gate.looked_at, gate.look)

    def reporter(self, rule: Rule, template: str | None = None) -> Reporter:
        """The reporter of ``rule`` (or of its operation's template option ``template``), made once per profile."""
        if self._under and rule.id in self.shared.late_rules:
            self._under[-1][1].add(rule.id)
        reporters = self.shared.reporters
        key = (id(rule), template)
        entry = reporters.get(key)
        if entry is None:
            operation = self.operations[rule.id]
            if template is None:
                made = make_reporter(rule, operation.message_order)
            else:
                option = operation.option(template)
                if option is None or option.template_order is None:
                    raise LookupError(f"operation {rule.op!r} declares no template option {template!r}")
                made = make_reporter(rule, option.template_order, rule.options[template])
            entry = reporters[key] = (rule, made)
        return entry[1]

    @staticmethod
    def applies(rule: Rule, schema: Schema) -> bool:
        """Whether ``rule`` runs at ``schema``: it names no kinds, the node declares no type, or they meet."""
        return not (rule.applies_to and schema.types and not set(schema.types) & set(rule.applies_to))

    def done(self) -> None:
        """The tool is compiled: forget the content keys (a node compiled later computes its own again)."""
        self._content.clear()

    def _late(self, cells_key: tuple[int, int]) -> Any:
        """A stand-in for a node still being compiled (a ``$ref`` cycle reached it): calls it once made."""
        cell = self._cells.setdefault(cells_key, [])
        return lambda *args: cell[0](*args)

    def _compiled(self, schema: Schema, root: bool, local: dict[int, Any],
                  shared: weakref.WeakValueDictionary[tuple, Any], build: Callable[[NodeContext], Any],
                  checks: bool = False) -> Any:
        """What ``build`` makes of ``schema``: made once per tool (``local``), shared by content (``shared``).

        ``checks``: what is made is a check: the rules below it that need ordering are noted (see
        :meth:`ordered_in`)."""
        key = id(schema)
        if key in local:
            found = local[key]
            if found is _COMPILING:  # (its rules are the node's being built, which holds this one)
                return self._late((id(local), key))
            if checks:
                self._reused(found)
            return found
        self._keep.append(schema)
        content = content_key(schema, self._content)
        shared_key = None if content is None else (content, root)
        found = shared.get(shared_key) if shared_key is not None else None
        if found is not None:
            local[key] = found
            if checks:
                self._reused(found)
            return found
        local[key] = _COMPILING
        if checks:
            self._under.append((set(), set()))
        made = local[key] = build(NodeContext(self, root))
        if checks:
            positional, late = self._under.pop()
            if positional or late:
                self.shared.keep_ordered_under(made, positional, late)
                if self._under:
                    self._under[-1][0].update(positional)
                    self._under[-1][1].update(late)
        cell = self._cells.pop((id(local), key), None)
        if cell is not None:
            cell.append(made if made is not None else _unchanged)
        if shared_key is not None and made is not None:
            shared[shared_key] = made
        return made

    def _reused(self, check: Check) -> None:
        """A check made before is used again: its rules count where it is used."""
        entry = self.shared.ordered_under.get(check) if self._under else None
        if entry is not None:
            self._under[-1][0].update(entry[0])
            self._under[-1][1].update(entry[1])

    def compile_node(self, schema: Schema, *, root: bool = False) -> Check:
        """The check of ``schema``: the profile's checks at this node, chained (made once, shared by content)."""
        return self._compiled(schema, root, self._checks, self.shared.checks, lambda ctx: self._chain_at(schema, ctx),
                              checks=True)

    def ordered_in(self, check: Check) -> tuple[frozenset[str], frozenset[str]]:
        """The profile's rules listed in argument order that have a check of their own in ``check`` (a
        node's, at or below it), and its late rules that report there (their own checks, or another
        operation's on their behalf)."""
        return self.shared.ordered_under.get(check, (frozenset(), frozenset()))

    def _chain_at(self, schema: Schema, ctx: NodeContext) -> Check:
        checks: list[tuple[Made, bool, bool]] = []
        for rule, operation in self.validate_rules:
            if not self.applies(rule, schema):
                continue
            made = operation(rule, schema, ctx)
            if made is None:
                continue
            if type(made) is TypeGate:  # a parent may skip calling it for these types (ctx.passing_types)
                self.shared.gates[made.check] = made
            checks.append((made, rule.halts, rule.unconditional))
            if rule.id in self.shared.positional_rules:
                self._under[-1][0].add(rule.id)
            if rule.id in self.shared.late_rules:
                self._under[-1][1].add(rule.id)
        return _chain(checks)

    def normaliser_of(self, schema: Schema, *, root: bool = False) -> Transform | None:
        """The normaliser of ``schema`` (``None``: it changes nothing), made once, shared by content."""
        return self._compiled(schema, root, self._normalisers, self.shared.normalisers,
                              lambda ctx: _pipe([t for t in (op(rule, schema, ctx) for rule, op in self.normalise_rules)
                                                 if t is not None]))


_NO_TYPES: frozenset[type] = frozenset()

#: marks a node whose compilation is under way (see Compiler._late)
_COMPILING = object()


def _unchanged(value: Any) -> Any:
    return value


#: what a validation operation makes: its check, or the check in a record saying what it is
Made = Union[Check, TypeGate, Bound, Size, Members, Present]


def _check_of(made: Made) -> Check:
    """The check an operation made, out of the record it may have declared it in."""
    return made.check if isinstance(made, (TypeGate, Bound, Size, Members, Present)) else made


def _chain(made: list[tuple[Made, bool, bool]]) -> Check:
    """One closure running a node's checks in order; unrolled for the common short chains.

    An operation may return its check in a record saying what it is (a :class:`TypeGate`,
    a :class:`Bound`, a :class:`Size`, :class:`Members`, :class:`Present`): that is what lets
    the chain test a gate's types inline and fold bounds, sizes, an enum's strings and an
    object's required names into it.
    """
    if not made:
        return accept
    checks = [(_check_of(m), halts, unconditional) for m, halts, unconditional in made]
    if len(checks) == 1:
        return checks[0][0]
    # plain: a halting gate, then checks none of which halts a later one or runs after a halt
    plain = checks[0][1] and not any(unconditional for _, _, unconditional in checks[1:]) \
        and not any(halts for _, halts, _ in checks[1:-1])
    # A type gate declares the types it passes outright: testing them here saves a call.
    first = made[0][0]
    passing: frozenset[type] = first.passing_types if isinstance(first, TypeGate) else frozenset()
    bounds = [m for m, _, _ in made[1:] if isinstance(m, Bound)]
    if plain and passing and len(bounds) == len(made) - 1 <= 2:
        return _gated_bounds(checks[0][0], passing, bounds)
    sizes = [m for m, _, _ in made[1:] if isinstance(m, Size)]
    if (plain and passing and len(sizes) == len(made) - 1 <= 2
            and all(issubclass(kind, size.kinds) for size in sizes for kind in passing)):
        return _gated_sizes(checks[0][0], passing, sizes)
    if plain and isinstance(first, TypeGate) and str in (first.looked_at, *passing) and len(made) == 2 \
            and isinstance(made[1][0], Members):
        return _gated_members(checks[0][0], passing, made[1][0])
    if plain and dict in passing and len(made) == 3 and isinstance(made[1][0], Present):
        return _gated_present(checks[0][0], passing, made[1][0], checks[2][0])
    if plain and len(checks) == 2:  # a type gate, then one check
        gate, second = checks[0][0], checks[1][0]

        def gate_then_one(value: Any, path: Path, out: list) -> bool:
            if type(value) not in passing and gate(value, path, out):
                return True
            return second(value, path, out)

        return gate_then_one
    if plain and len(checks) == 3:
        gate, second, third = (c for c, _, _ in checks)

        def gate_then_two(value: Any, path: Path, out: list) -> bool:
            if type(value) not in passing and gate(value, path, out):
                return True
            failed = second(value, path, out)
            return third(value, path, out) or failed

        return gate_then_two
    if plain and len(checks) == 4:
        gate, second, third, fourth = (c for c, _, _ in checks)

        def gate_then_three(value: Any, path: Path, out: list) -> bool:
            if type(value) not in passing and gate(value, path, out):
                return True
            failed = second(value, path, out)
            failed = third(value, path, out) or failed
            return fourth(value, path, out) or failed

        return gate_then_three
    pairs = tuple(checks)

    def node(value: Any, path: Path, out: list) -> bool:
        failed = halted = False
        for check, halts, unconditional in pairs:
            if halted and not unconditional:
                continue
            if check(value, path, out):
                failed = True
                halted = halted or halts
        return failed

    return node


def _gated_bounds(gate: Check, passing: frozenset[type], declared: list[Bound]) -> Check:
    """A type gate and one or two numeric bounds (minimum, maximum...) as one closure.

    The same checks in the same order as the chain would run them, with one call instead
    of three: a number's bounds are the commonest checks there are.
    """
    # plain tuples: unpacked on the slow path below, as cheaply as they can be
    bounds = [(b.failed, b.limit, b.report, b.bool_is_number) for b in declared]

    def in_bounds(value: Any, path: Path, out: list, bound: tuple) -> bool:
        failed, limit, report, bool_is_number = bound
        kind = type(value)
        if kind is int or kind is float or (isinstance(value, (int, float)) and (bool_is_number or kind is not bool)):
            if failed(value, limit):
                return report(out, path, value, limit)
        return False

    if len(bounds) == 1:
        ((failed, limit, report, _),) = bounds
        only = bounds[0]

        def gate_then_bound(value: Any, path: Path, out: list) -> bool:
            kind = type(value)
            if kind in passing:
                if (kind is int or kind is float) and failed(value, limit):
                    return report(out, path, value, limit)
                return kind is not int and kind is not float and in_bounds(value, path, out, only)
            if gate(value, path, out):
                return True
            return in_bounds(value, path, out, only)

        return gate_then_bound
    first, second = bounds
    failed_1, limit_1, report_1, _ = first
    failed_2, limit_2, report_2, _ = second

    def gate_then_bounds(value: Any, path: Path, out: list) -> bool:
        kind = type(value)
        if kind in passing and (kind is int or kind is float):
            low = failed_1(value, limit_1) and report_1(out, path, value, limit_1)
            return failed_2(value, limit_2) and report_2(out, path, value, limit_2) or low
        if kind not in passing and gate(value, path, out):
            return True
        low = in_bounds(value, path, out, first)
        return in_bounds(value, path, out, second) or low

    return gate_then_bounds


def _gated_members(gate: Check, passing: frozenset[type], members: Members) -> Check:
    """A type gate that passes ``str`` outright, then an enum with string members, as one closure.

    The chain's verdict and findings: a string among the exact members passes the gate and
    is found by the enum's first test, so it passes here with one set lookup; any other
    value goes through the gate and the enum's whole check, as in the chain.
    """
    exact, check = members.exact, members.check

    def gate_then_members(value: Any, path: Path, out: list) -> bool:
        kind = type(value)
        if kind is str and value in exact:
            return False
        if kind not in passing and gate(value, path, out):
            return True
        return check(value, path, out)

    return gate_then_members


def _gated_present(gate: Check, passing: frozenset[type], present: Present, then: Check) -> Check:
    """A type gate that passes ``dict`` outright, the required names, then one more check (an
    object's commonest chain: ``type``, ``required``, ``properties``) as one closure.

    The chain's verdict and findings: a dict holding every required name passes the gate and
    the required check, which would report nothing, so only ``then`` is called for it.
    """
    wanted, check = present.wanted, present.check

    def gate_then_present_then_one(value: Any, path: Path, out: list) -> bool:
        kind = type(value)
        if kind is dict:
            failed = not value.keys() >= wanted and check(value, path, out)
            return then(value, path, out) or failed
        if kind not in passing and gate(value, path, out):
            return True
        failed = check(value, path, out)
        return then(value, path, out) or failed

    return gate_then_present_then_one


def _gated_sizes(gate: Check, passing: frozenset[type], declared: list[Size]) -> Check:
    """A type gate and one or two sizes (``minLength``, ``maxItems``...) as one closure.

    The same checks in the same order as the chain would run them: a value of the gate's
    types (all of them sized) is measured once and compared inline; any other value goes
    through the gate and, if it passes, the sizes' own checks.
    """
    if len(declared) == 1:
        (only,) = declared
        too, limit, report, check = only.too, only.limit, only.report, only.check

        def gate_then_size(value: Any, path: Path, out: list) -> bool:
            if type(value) in passing:
                size = len(value)
                return too(size, limit) and report(out, path, value, limit, size)
            if gate(value, path, out):
                return True
            return check(value, path, out)

        return gate_then_size
    first, second = declared
    too_1, limit_1, report_1, check_1 = first.too, first.limit, first.report, first.check
    too_2, limit_2, report_2, check_2 = second.too, second.limit, second.report, second.check

    def gate_then_sizes(value: Any, path: Path, out: list) -> bool:
        if type(value) in passing:
            size = len(value)
            low = too_1(size, limit_1) and report_1(out, path, value, limit_1, size)
            return too_2(size, limit_2) and report_2(out, path, value, limit_2, size) or low
        if gate(value, path, out):
            return True
        low = check_1(value, path, out)
        return check_2(value, path, out) or low

    return gate_then_sizes


def _pipe(steps: list[Transform]) -> Transform | None:
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    if len(steps) == 2:
        first, second = steps
        return lambda value: second(first(value))
    if len(steps) == 3:
        first, second, third = steps
        return lambda value: third(second(first(value)))
    if len(steps) == 4:
        first, second, third, fourth = steps
        return lambda value: fourth(third(second(first(value))))
    if len(steps) == 5:
        first, second, third, fourth, fifth = steps
        return lambda value: fifth(fourth(third(second(first(value)))))
    chain = tuple(steps)

    def pipe(value: Any) -> Any:
        for step in chain:
            value = step(value)
        return value

    return pipe


@attrs.frozen
class Program:
    """A tool compiled under one profile: normalise the arguments, then check them."""

    tool: Tool
    normalise: Transform | None
    check: Check
    late_rules: frozenset[str]  # rules whose findings come after all others in their bucket
    rule_order: dict[str, int]
    positional_rules: frozenset[str]  # rules whose findings are listed in argument order, depth first
    # every normalisation rule repairs only what validation rejects: normalise only a failing call
    normalise_on_failure: bool = False
    # ... and the only values those rules change are of these types (None: any): a failing call
    # none of whose failing values holds one is not normalised (see _may_repair)
    repairable: tuple[type, ...] | None = None
    # ... and, of those, only the values this holds for (None: all of them)
    repairable_only: Callable[[Any], bool] | None = None
    # the top-level arguments whose values normalising may change, by declared and by canonical name
    # (None: any may); a finding under another argument is passed over without a look (see _repair_keys)
    repair_keys: tuple[str, ...] | None = None
    # the plain JSON scalar types none of those rules changes (what a call of only such values holds)
    kept_scalars: frozenset[type] = attrs.field(init=False)

    @kept_scalars.default
    def _kept_scalars(self) -> frozenset[type]:
        return _kept_scalars(self.repairable)

    def run(self, arguments: Any) -> ValidationReport:
        """Validate one call's arguments; the input is never modified."""
        normalise = self.normalise
        if normalise is not None and not self.normalise_on_failure:
            try:
                arguments = normalise(arguments)
            except RecursionError:  # fail closed, as below
                return ValidationReport((NESTING_LIMIT,))
        out: list[Finding] = []
        try:
            self.check(arguments, None, out)
        except RecursionError:  # fail closed: a value too deep to walk is not accepted
            out.append(NESTING_LIMIT)
        if not out:
            return VALID
        # (arguments of only plain values none of which the rules change: nothing to repair, whatever failed)
        if normalise is not None and self.normalise_on_failure and (self.repairable is None or not (
                type(arguments) is dict and self.kept_scalars.issuperset(map(type, arguments.values())))
                and _may_repair(out, arguments, self.repairable, self.repairable_only, self.repair_keys)):
            try:
                repaired = normalise(arguments)
            except RecursionError:
                return ValidationReport((NESTING_LIMIT,))
            if repaired is not arguments:
                arguments, out = repaired, []
                try:
                    self.check(arguments, None, out)
                except RecursionError:
                    out.append(NESTING_LIMIT)
                if not out:
                    return VALID
        if len(out) > 1 and (self.positional_rules or self.late_rules):  # (one finding is in order already)
            fired = rule_ids(out)
            positional = self.positional_rules
            if positional and (countOf(fired, next(iter(positional))) if len(positional) == 1
                               else sum(map(positional.__contains__, fired))) > 1:
                _order_by_position(out, positional, arguments)
            if self.late_rules and not self.late_rules.isdisjoint(fired):
                order = self.rule_order
                out.sort(key=lambda f: order.get(f.rule, 0))
        return report_of(tuple(out))


def _may_repair(findings: list[Finding], arguments: Any, types: tuple[type, ...],
                only: Callable[[Any], bool] | None = None, keys: tuple[str, ...] | None = None) -> bool:
    """Whether a value some finding is about holds, at any depth, a value of ``types`` (for which ``only`` holds).

    A rule that repairs only rejected values changes only a value some check reported: the
    finding's path is that value's, or an ancestor's.  So when no reported value holds a type
    the profile's rules may change, normalising would change nothing.  Each finding's path is
    followed as far as the arguments go, and what is there scanned whole (a missing argument:
    its parent).  ``keys``: the top-level arguments normalising may change at all (by declared
    and canonical name); a finding under any other argument is passed over.
    """
    if not types:
        return False
    top = arguments if type(arguments) is dict else None
    for finding in findings:
        path = finding[2]
        if keys is not None and path and type(path[0]) is str and path[0] not in keys \
                and canonical_name(path[0]) not in keys:
            continue
        if top is not None and len(path) == 1:  # a top-level argument: the commonest place
            value = top.get(path[0], top)
        else:
            value = arguments
            for part in path:
                if type(value) is dict:
                    if part not in value:
                        break
                    value = value[part]
                elif isinstance(value, (list, tuple)) and type(part) is int and 0 <= part < len(value):
                    value = value[part]
                else:  # not there, or in a container of another kind: scan what holds it
                    break
        if type(value) in _PLAIN_SCALARS:
            if isinstance(value, types) and (only is None or only(value)):
                return True
        elif _holds(value, types, only):
            return True
    return False


_PLAIN_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _kept_scalars(repairable: tuple[type, ...] | None) -> frozenset[type]:
    """The plain scalar types none of ``repairable`` is (one set per answer, shared by every program)."""
    if repairable is None:
        return frozenset()
    return frozenset(t for t in _PLAIN_SCALARS if not issubclass(t, repairable))


def _holds(value: Any, types: tuple[type, ...], only: Callable[[Any], bool] | None = None) -> bool:
    """Whether ``value`` is or holds, at any depth, a value of ``types`` for which ``only`` holds
    (no recursion; cycles visited once)."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, types) and (only is None or only(value)):
            return True
        if isinstance(value, (dict, list, tuple)) and id(value) not in seen:
            seen.add(id(value))
            stack.extend(value.values() if isinstance(value, dict) else value)
    return False


def _position(path: tuple, value: Any) -> tuple[int, ...]:
    """Where ``path`` stands in ``value``: the index of each key or item along the way."""
    out = []
    for part in path:
        if isinstance(value, dict):
            keys = list(value)
            out.append(keys.index(part) if part in value else len(keys))
            value = value.get(part)
        elif isinstance(value, (list, tuple)) and isinstance(part, int) and part < len(value):
            out.append(part)
            value = value[part]
        else:
            out.append(0)
            value = None
    return tuple(out)


def _order_by_position(findings: list[Finding], rules: frozenset[str], arguments: Any) -> None:
    """Reorder, in place and among themselves, the findings of ``rules`` by their position in the call."""
    slots = [i for i, f in enumerate(findings) if f.rule in rules]
    if len(slots) < 2:
        return
    ordered = sorted((findings[i] for i in slots), key=lambda f: _position(f.path, arguments))
    for slot, finding in zip(slots, ordered):
        findings[slot] = finding


def compile_tool(tool: Tool, rules: tuple[Rule, ...], limits: Limits, ruleset: RuleSet | None = None) -> Program:
    """Compile ``tool`` under ``rules`` (a profile's rule list of ``ruleset``) into a :class:`Program`."""
    compiler = Compiler(rules, tool, limits, ruleset)
    check = compiler.compile_node(tool.parameters, root=True)
    normalise = compiler.normaliser_of(tool.parameters, root=True) if compiler.normalise_rules else None
    on_failure = bool(compiler.normalise_rules) and all(r.repairs_only_rejected for r, _ in compiler.normalise_rules)
    changed = [(compiler.operations[r.id].changed_types(r.options), compiler.operations[r.id].changes_only)
               for r, _ in compiler.normalise_rules]
    repairable = (None if any(types is None for types, _ in changed)
                  else tuple({t: None for types, _ in changed for t in types or ()}))
    # (while the compiler still knows the properties' normalisers, made with the root's)
    repair_keys = _repair_keys(compiler, tool.parameters, repairable) if on_failure and repairable else None
    compiler.done()
    shared = compiler.shared
    # Findings need ordering only where they can come out of order: a late rule's only if it reports in this
    # tool; a rule listed in argument order only if it has a check of its own here (where another operation
    # reports on its behalf, as properties does for additional_properties, it does so in its walk's order,
    # which is the arguments').
    positional, late = compiler.ordered_in(check)
    return Program(tool, normalise, check, late, shared.rule_order, positional, on_failure, repairable,
                   _changes_only([(types, only) for types, only in changed if types]) if repairable else None,
                   repair_keys)


def _repair_keys(compiler: Compiler, root: Schema, repairable: tuple[type, ...]) -> tuple[str, ...] | None:
    """The top-level arguments whose values normalising may change, by declared and canonical name;
    ``None`` when that cannot be told from the root's properties alone.

    Each normalisation rule replaces only values of the types it declares (``changes``) at
    its own node, and the rules that declare none only rebuild an object or a list from
    their children's normalisers.  So where no rule may replace the arguments' object
    itself, an argument's value changes only through its property's normaliser: one with
    none is left as it is (and so is an undeclared argument that does not resolve to a
    property with one).  An object that also has other ways to its values (a union, an
    ``allOf``, a ``$ref``, patterns or a schema for undeclared keys) is not told apart.
    """
    if (not root.properties or root.any_of or root.one_of or root.all_of or root.not_ is not None
            or root.if_ is not None or root.ref is not None or root.pattern_properties
            or isinstance(root.additional_properties, Schema) or any(issubclass(dict, t) for t in repairable)):
        return None
    changed = [p.name for p in root.properties if compiler.normaliser_of(p.schema) is not None]
    return tuple(dict.fromkeys([*changed, *map(canonical_name, changed)])) if changed else ()


def _changes_only(changed: list[tuple[tuple[type, ...], Callable[[Any], bool] | None]]) -> Callable[[Any], bool] | None:
    """Whether some rule may change a value of one of the types it declares (``None``: every rule
    may change any value of its types).  Asked only of a value of one of those types."""
    if all(only is None for _, only in changed):
        return None
    if len(changed) == 1:
        return changed[0][1]
    pairs = tuple(changed)
    return lambda value: any(isinstance(value, types) and (only is None or only(value)) for types, only in pairs)
