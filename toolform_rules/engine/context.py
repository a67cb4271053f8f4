"""What an operation sees and makes while the compiler compiles one schema node.

The types of compiled checks and normalisers, the records an operation returns when the
compiler may fold its check into others (:class:`TypeGate`, :class:`Bound`, :class:`Size`,
:class:`Members`, :class:`Present`), the :func:`make_reporter` that turns a rule's failure
into a finding, and the :class:`NodeContext` an operation is handed: the limits, the tool,
and the compiler's services (children, other profiles, and the answers to the questions its
operation declared) — so the operations depend on this module and never on the compiler itself.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable

import attrs

from ..jsonvalues import as_writable

from ..limits import Limits
from ..schema.ir import Schema, Tool
from .report import Finding, located, message_formatter
from .rules import Rule, template_fields

if TYPE_CHECKING:
    from .compiler import Compiler

#: A linked path: ``None`` at the root, ``(parent, key)`` below (see :func:`.report.located`).
Path = Any
#: A compiled check: records findings for ``value`` at ``path`` into ``out``; True when it failed.
#: ``path`` is linked, ``None`` at the root and ``(parent, key)`` below: cheap to extend.
Check = Callable[[Any, Path, list], bool]
#: A compiled normaliser: returns the normalised value (a new container when anything changed).
Transform = Callable[[Any], Any]


def accept(value: Any, path: Path, out: list) -> bool:
    """The check of a node with nothing to check."""
    return False


def accept_nothing(_value: Any) -> bool:
    """The quick look of a gate that looks at no type: it passes nothing."""
    return False


@attrs.frozen
class TypeGate:
    """A type check that accepts the Python types ``passing_types`` outright.

    What the ``type`` operation returns when one type is declared: the compiler tests
    ``type(value) in passing_types`` inline instead of calling ``check`` (see
    ``compiler._chain``), and a parent (``properties``, ``items``) skips the call for such
    a child (:meth:`NodeContext.passing_types`).  ``looked_at``: the type of the declared JSON
    type whose values pass only after a look (a ``str`` must be Unicode text, a ``float``
    finite: see :mod:`toolform_rules.jsonvalues`), and ``look``, a test in C that passes most
    of them at once (ASCII text, a finite float), which a parent may make inline too
    (:meth:`NodeContext.quick_look`).
    """

    check: Check
    passing_types: frozenset[type]
    looked_at: type | None = None
    look: Callable[[Any], bool] = accept_nothing


@attrs.frozen
class Bound:
    """A numeric bound: ``failed(value, limit)`` (a C operator) reported by ``report``.

    What the bound operations (``minimum``, ``maximum``...) return: after a type gate the
    compiler folds one or two of them and the gate into one closure (``compiler._gated_bounds``).
    ``bool_is_number``: a boolean is compared as 0/1 (the study) rather than skipped.
    """

    check: Check
    failed: Callable[[Any, Any], bool]
    limit: Any
    report: Callable[..., bool]
    bool_is_number: bool


@attrs.frozen
class Size:
    """A bound on a value's size: ``too(len(value), limit)`` (a C operator) reported by ``report``
    with the value, the limit and the size, for values of ``kinds``.

    What the size operations (``min_length``, ``max_items``...) return: after a type gate whose
    types are all of ``kinds``, the compiler folds one or two of them and the gate into one
    closure (``compiler._gated_sizes``).
    """

    check: Check
    too: Callable[[int, Any], bool]
    limit: Any
    report: Callable[..., bool]
    kinds: tuple[type, ...]


@attrs.frozen
class Members:
    """An enum whose ``exact`` string members pass a string with one set lookup.

    What the ``enum`` operation returns when some members are strings: after a type gate
    that passes ``str`` outright, the compiler folds the two into one closure
    (``compiler._gated_members``), so a declared string, the commonest enum value there is,
    costs no call.
    """

    check: Check
    exact: frozenset[str]


@attrs.frozen
class Present:
    """A check that passes, with nothing to report, every ``dict`` holding all of ``wanted`` as keys.

    What the ``required`` operation returns: after a type gate that passes ``dict`` outright,
    the compiler tests ``value.keys() >= wanted`` inline and calls the check only when a name
    is missing (``compiler._gated_present``).
    """

    check: Check
    wanted: frozenset[str]


#: What reports a rule's failure: ``report(out, path, *values) -> True`` appends one finding to
#: ``out``, the values given in the order of the fields it was made for (see :func:`make_reporter`).
Reporter = Callable[..., bool]


def make_reporter(rule: Rule, fields: tuple[str, ...], template: str | None = None) -> Reporter:
    """The reporter of ``rule``: fills its message template, stamps its id, bucket and source.

    ``fields``: the names of the values a finding is reported with, in order (an
    operation's declared message fields, or an option template's); ``template``: the
    message, when not the rule's own.  A closure called with positional values: every
    error of an invalid call comes through here.  For one to three fields (every built-in
    operation) it takes exactly that many: a sixth less per finding than packing them
    (``*values``; 0.89 against 0.73 µs, measured side by side).  The path is flattened in
    one pass (a top-level argument, the commonest place, inline), the message filled by a
    formatter made once (:func:`.report.message_formatter`), the finding made from one tuple.

    >>> from toolform_rules.engine.rule_files import builtin_rules
    >>> minimum = next(r for r in builtin_rules().profile_rules("sdk") if r.op == "minimum")
    >>> out = []
    >>> make_reporter(minimum, ("value", "limit"))(out, (None, "value"), -5, 0)
    True
    >>> out[0].rule, out[0].path, out[0].message
    ('study.minimum', ('value',), 'value: -5 < minimum 0')
    """
    text = template if template is not None else rule.message or ""
    stamp = (rule.id, rule.bucket or "constraint_errors", str(rule.source))
    read = _fields_read(text, fields)
    # (the path's text is a str, so "{path}" is that text as it stands: taken at C speed)
    fill = _PATH_ALONE if text == "{path}" else message_formatter(text, ("path", *read))
    return _REPORTER_OF_ARITY.get(len(read), _reporter_of_any)(stamp, fill)


def _fields_read(template: str, fields: tuple[str, ...]) -> tuple[str, ...]:
    """The leading ``fields`` that ``template`` reads, up to the last it uses (at least one; all past three).

    A reporter of that many takes the rest too and leaves them out of the message: the
    study's type message reads ``expected`` and ``got`` of (expected, got, value), so its
    ``%``-format takes the values as the reporter packs them, with no item getter between.

    >>> _fields_read("{path}: expected {expected}, got {got}", ("expected", "got", "value"))
    ('expected', 'got')
    >>> _fields_read("{path}: {value!r} not in {members!r}", ("value", "const", "members"))
    ('value', 'const', 'members')
    """
    used = {name for name, _ in template_fields(template)}
    if len(fields) > 3 or not used <= {"path", *fields}:  # (packed; or refused by the formatter, naming all)
        return fields
    last = max((i for i, name in enumerate(fields) if name in used), default=0)
    return fields[:last + 1]


# One reporter per arity, so a check passes its values without packing them into a tuple.
# They differ only in their signatures: ``(out, path, *values)`` as a finding's fields; a
# reporter of one or two also takes the fields after its own, which its message does not read.

def _reporter_of_one(stamp: tuple[str, str, str], fill: Callable[[tuple], str]) -> Reporter:
    rule_id, bucket, source = stamp

    def report(out: list, path: Path, a: Any, _b: Any = None, _c: Any = None) -> bool:
        if path is not None and path[0] is None and type(path[1]) is str:
            text = path[1]
            flat: tuple = (text,)
        else:
            flat, text = located(path)
        try:
            message = fill((text, a))
        except ValueError:  # an integer longer than Python writes as text: named by its size
            message = fill(tuple(as_writable((text, a))))
        out.append(_new_finding(Finding, (rule_id, bucket, flat, message, source, "error", None)))
        return True

    return report


def _reporter_of_two(stamp: tuple[str, str, str], fill: Callable[[tuple], str]) -> Reporter:
    rule_id, bucket, source = stamp

    def report(out: list, path: Path, a: Any, b: Any, _c: Any = None) -> bool:
        if path is not None and path[0] is None and type(path[1]) is str:
            text = path[1]
            flat: tuple = (text,)
        else:
            flat, text = located(path)
        try:
            message = fill((text, a, b))
        except ValueError:  # an integer longer than Python writes as text: named by its size
            message = fill(tuple(as_writable((text, a, b))))
        out.append(_new_finding(Finding, (rule_id, bucket, flat, message, source, "error", None)))
        return True

    return report


def _reporter_of_three(stamp: tuple[str, str, str], fill: Callable[[tuple], str]) -> Reporter:
    rule_id, bucket, source = stamp

    def report(out: list, path: Path, a: Any, b: Any, c: Any) -> bool:
        if path is not None and path[0] is None and type(path[1]) is str:
            text = path[1]
            flat: tuple = (text,)
        else:
            flat, text = located(path)
        try:
            message = fill((text, a, b, c))
        except ValueError:  # an integer longer than Python writes as text: named by its size
            message = fill(tuple(as_writable((text, a, b, c))))
        out.append(_new_finding(Finding, (rule_id, bucket, flat, message, source, "error", None)))
        return True

    return report


def _reporter_of_any(stamp: tuple[str, str, str], fill: Callable[[tuple], str]) -> Reporter:
    rule_id, bucket, source = stamp

    def report(out: list, path: Path, *values: Any) -> bool:
        flat, text = located(path)
        try:
            message = fill((text, *values))
        except ValueError:  # an integer longer than Python writes as text: named by its size
            message = fill(tuple(as_writable((text, *values))))
        out.append(_new_finding(Finding, (rule_id, bucket, flat, message, source, "error", None)))
        return True

    return report


_PATH_ALONE = operator.itemgetter(0)
_REPORTER_OF_ARITY = {1: _reporter_of_one, 2: _reporter_of_two, 3: _reporter_of_three}
#: a :class:`Finding` from the tuple of its seven fields, without ``Finding(...)``'s argument handling
_new_finding = tuple.__new__


@attrs.define
class NodeContext:
    """What an operation sees while it compiles one node."""

    compiler: Compiler
    root: bool

    @property
    def limits(self) -> Limits:
        return self.compiler.limits

    @property
    def tool(self) -> Tool | None:
        return self.compiler.tool

    def compile(self, schema: Schema) -> Check:
        """The check of a child schema."""
        return self.compiler.compile_node(schema)

    def normaliser(self, schema: Schema) -> Transform | None:
        """The normaliser of a child schema (``None`` when it changes nothing)."""
        return self.compiler.normaliser_of(schema)

    def normaliser_under(self, profile: str, schema: Schema) -> Transform | None:
        """The normaliser of ``schema`` under another (normalisation) profile of the built-in rules."""
        return self.compiler.under(profile).normaliser_of(schema)

    def reporter(self, rule: Rule, template: str | None = None) -> Reporter:
        """The reporter of ``rule``, called with its operation's message fields in their declared order.

        ``template``: the name of one of the operation's template options (such as
        ``timeout_message``): the reporter fills that template, when the rule gives it, with
        that option's fields, in their declared order.  One per rule and template, shared by
        every node that reports under it.
        """
        return self.compiler.reporter(rule, template)

    def passing_types(self, check: Check) -> frozenset[type]:
        """The Python types ``check`` (a compiled child) accepts outright: a type gate's, else none."""
        return self.compiler.passing_types(check)

    def quick_look(self, check: Check) -> tuple[type | None, Callable[[Any], bool]]:
        """The type ``check`` (a compiled child) passes after a quick look, with that look: a type gate's
        (:attr:`TypeGate.looked_at`, :attr:`TypeGate.look`), else ``(None, None)``."""
        return self.compiler.quick_look(check)

    def applies(self, rule: Rule, schema: Schema) -> bool:
        """Whether ``rule`` runs at ``schema`` (its ``applies_to`` admits the node's types)."""
        return self.compiler.applies(rule, schema)

    def subsumed(self, rule: Rule) -> tuple[Rule, ...]:
        """The profile's rules whose work ``rule`` may take over (its operation's ``subsumes``)."""
        return self.compiler.subsumed.get(rule.id, ())

    def subsumer(self, rule: Rule) -> Rule | None:
        """The profile's rule that may take over ``rule``'s work (whose operation ``subsumes`` ``rule.op``)."""
        return self.compiler.subsumer.get(rule.id)

    def rule_running(self, op: str) -> Rule | None:
        """The profile's (first) validation rule that runs operation ``op``, if any: whose findings
        another operation makes when it sees, in its own walk, what that operation would report."""
        return self.compiler.rule_of_op.get(op)

    def profile_runs(self, rule: Rule, op: str) -> bool:
        """Whether the profile also runs operation ``op``; ``rule``'s operation must declare it consults ``op``."""
        answers = self.compiler.consulted.get(rule.id, {})
        if op not in answers:
            raise LookupError(f"operation {rule.op!r} asks whether the profile runs {op!r}, which it does not "
                              f"declare (add it to the operation's consults)")
        return answers[op]

    def resolve(self, ref: str) -> Schema:
        assert self.compiler.tool is not None
        return self.compiler.tool.resolve(ref)
