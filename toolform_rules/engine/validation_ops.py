"""Validation operations: one function per keyword, registered in ``VALIDATE_OPERATIONS``.

Each operation is called once per schema node while a tool compiles, as
``operation(rule, node, ctx)``, and returns a check ``check(value, path, out) -> failed``
(``path`` is linked: ``None`` at the root, ``(parent, key)`` below it, so descending costs
one small tuple)
— or ``None`` when the node gives it nothing to do.  A check appends findings through
``ctx.reporter(rule)``, which fills the rule's message template.  Operations differ
between profiles only through ``rule.options`` (for example the study's case-insensitive
enums), so the YAML rule files decide behaviour and this module only supplies the verbs.

Each function is declared with :func:`~.declarations.operation`: the options it reads
(checked, and their defaults filled in, when a rule file is loaded, so a function reads
``rule.options[name]`` for declared names only), the fields it fills in a message, and
its interactions with other operations, which the compiler reads.

Checks apply to the values they concern and ignore the rest: ``minimum`` looks at
numbers only, ``properties`` at objects only; the ``type`` rule, which halts the node
when it fails, is what rejects a value of the wrong type.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any, Callable, Iterable, Sized


from .context import (Bound, Check, Members, NodeContext, Present, Size, TypeGate, accept, accept_nothing,
                      make_reporter)
from .declarations import Operation, Option, operation, template
from ..schema.ir import Schema
from ..jsonvalues import (EXACT_TYPES, first_not_json, is_json_type, is_multiple_of, json_equal, not_json_reason,
                          shared_type)
from ..schema.names import canonical_name
from ..schema.patterns import compile_pattern, pattern_exceptions
from .rules import Rule

# --- options several operations read ---------------------------------------------------------

NULL_MAKES_OPTIONAL = Option(
    "null_makes_optional", bool, False,
    "a `null` beside other types (a type list, an enum member, an anyOf branch) makes the parameter "
    "optional instead of admitting null (the study)")
NULLABLE_IS_OPTIONAL = Option(
    "nullable_is_optional", bool, False,
    "a property that declares `null` beside its type is optional even when listed as required (the study)")
CANONICAL_NAMES = Option(
    "canonical_names", bool, False,
    "an argument is found under any naming convention (`termMonths` is `term_months`)")
STUDY_EQUALITY = Option(
    "study_equality", bool, False,
    "a string matches a member whose text is equal ignoring case (`\"DRAFT\"` is `\"draft\"`, `\"1\"` is 1); "
    "else JSON equality")
ECMA_REGEX = Option(
    "ecma_regex", bool, False,
    "patterns are read as ECMA-262, as JSON Schema specifies (else as Python's `re` reads them)")
BOOL_IS_NUMBER = Option(
    "bool_is_number", bool, False,
    "a boolean is compared as 0/1 (the study); else a boolean is not a number and is not compared")


# --- helpers ---------------------------------------------------------------------------------

def _study_types(node: Schema, rule: Rule) -> tuple[str, ...]:
    """The types a node declares, as the rule reads them.

    With ``null_makes_optional`` (the study), a ``null`` member of a type list makes the
    parameter optional rather than admitting ``null`` as a value; with
    ``enum_implies_type`` an untyped enum takes the type its members share.
    """
    types = node.types
    if rule.options["null_makes_optional"] and "null" in types and len(types) > 1:
        types = tuple(t for t in types if t != "null")
    if not types and rule.options["enum_implies_type"] and node.enum is not None and node.boolean is None:
        types = (shared_type(node.enum),)
    if not types and rule.options["enum_implies_type"] and node.const is not None and _has_const(node):
        types = (shared_type((node.const,)),)
    return types


def _has_const(node: Schema) -> bool:
    from ..schema.ir import ABSENT

    return node.const is not ABSENT


#: JSON type -> the Python type of its values that may still be no JSON value (a ``str`` with a lone
#: surrogate, a ``float`` NaN or infinity), and a test in C that passes most of them at once (ASCII text,
#: a finite float; other text is looked at whole)
_QUICK_LOOK: dict[str, tuple[type | None, Callable[[Any], bool]]] = {"string": (str, str.isascii),
                                                              "number": (float, math.isfinite)}
#: the looked-at types: no type gate passes them on their type alone
_LOOKED_AT = frozenset(kind for kind, _ in _QUICK_LOOK.values())


def _passing_types(name: str) -> frozenset[type]:
    """The Python types whose every value is of JSON type ``name``: a gate passes these on their type."""
    return EXACT_TYPES[name] - _LOOKED_AT


def _type_test(name: str, integral_float_is_integer: bool) -> Callable[[Any], bool]:
    exact = _passing_types(name)
    settled = _settled_types(name, integral_float_is_integer)

    def test(value: Any) -> bool:
        kind = type(value)
        if kind in exact:
            return True
        if kind in settled:
            return False
        return is_json_type(value, name, integral_float_is_integer=integral_float_is_integer)

    return test


_PLAIN_TYPES: frozenset[type] = frozenset().union(*EXACT_TYPES.values())


def _settled_types(name: str, integral_float_is_integer: bool) -> frozenset[type]:
    """The types whose values are not of JSON type ``name`` when their type is not one of its exact ones.

    Every plain JSON type but those of ``name`` whose values are looked at (a string, a
    number's float) and, when an integral float counts as an integer, ``float``: only a
    subclass (or such a value) needs the full test.
    """
    settled = _PLAIN_TYPES - (EXACT_TYPES[name] & _LOOKED_AT)
    return settled - {float} if integral_float_is_integer and name == "integer" else settled


def _got(value: Any) -> str:
    """What a type finding says the value is: its type, and why it is no JSON value when it is not one."""
    kind = type(value)
    reason = None if kind not in _LOOKED_AT or (kind is str and value.isascii()) else not_json_reason(value)
    return kind.__name__ if reason is None else f"{kind.__name__} ({reason})"


def _json_values_only(report: Callable[..., bool],
                      parts: Callable[[Any], Iterable[tuple[Any, Any]]] | None = None) -> Check:
    """The check of what no declared type looks at: everything in it is a JSON value (Unicode text,
    finite numbers), reported as a type finding at the first that is not.  ``parts``: the
    (key, item) pairs of a container to look at, when not the value as a whole."""

    def check(value: Any, path: Any, out: list) -> bool:
        for key, item in ((None, value),) if parts is None else parts(value):
            found = first_not_json(item)
            if found is None:
                continue
            inner, bad, _ = found
            at = path if key is None else (path, key)
            for step in inner:
                at = (at, step)
            return report(out, at, "a JSON value", _got(bad), bad)
        return False

    return check


def _unchecked_parts(node: Schema, types: tuple[str, ...]) -> Callable[[Any], Iterable[tuple[Any, Any]]] | None:
    """What no subschema of ``node`` looks at in a container: the members of an object that declares
    no properties and no schema for others, the items past the ``prefixItems`` of an array with no
    ``items`` schema; ``None`` when nothing is left unlooked at.  (The other members of an object
    that declares properties are ``properties``' to look at, in its walk.)"""
    if "object" in types and not (node.properties or node.pattern_properties
                                  or isinstance(node.additional_properties, Schema)):
        return lambda value: value.items() if isinstance(value, dict) else ()
    if "array" in types and node.items is None:
        start = len(node.prefix_items)
        return lambda value: list(enumerate(value))[start:] if isinstance(value, (list, tuple)) else ()
    return None


def _nullable(schema: Schema, rule: Rule) -> bool:
    """Whether the rule reads ``schema`` as optional (the study: it declares null beside a type)."""
    return rule.options["nullable_is_optional"] and schema.declares_null


@operation("validate", message_fields=("name",), acts_on="call")
def unknown_tool(rule: Rule) -> Check:
    """The call's name resolves to no tool: one finding, at the root, naming it.

    Not compiled per node: the engine calls the check it returns, with the call's name,
    when no tool answers to that name.
    """
    report = make_reporter(rule, unknown_tool.message_order)

    def check(name: Any, path: Any, out: list) -> bool:
        return report(out, path, name)

    return check


# --- types -----------------------------------------------------------------------------------

@operation("validate", message_fields=("expected", "got", "value"), options=(
    NULL_MAKES_OPTIONAL,
    Option("enum_implies_type", bool, False, "an untyped `enum` or `const` takes the type its members share"),
    Option("integral_float_is_integer", bool, False, "a float with no fraction (`5.0`) is an integer"),
    template("union_message", "the message when a value has none of several declared types (default: `message`)",
             ("expected", "got", "value")),
))
def type_(rule: Rule, node: Schema, ctx: NodeContext) -> Check | TypeGate | None:
    """``type``: the value is of a declared type (``bool`` is never a number).

    Every profile also refuses what is no JSON value (see :mod:`toolform_rules.jsonvalues`):
    a string that is not Unicode text, a number that is not finite is of no type; where no
    declared type looks at a value (no ``type``, the schema ``true``, a container whose
    contents no subschema checks) everything in it must be a JSON value.
    """
    if node.boolean is False:
        return None
    types = () if node.boolean is not None else _study_types(node, rule)
    report = ctx.reporter(rule)
    if not types:
        return _json_values_only(report)
    parts = _unchecked_parts(node, types)
    screen = None if parts is None else _json_values_only(report, parts)
    integral = rule.options["integral_float_is_integer"]
    if len(types) == 1:
        (name,) = types
        exact = _passing_types(name)
        looked_at, look = _QUICK_LOOK.get(name, (None, accept_nothing))
        test = _type_test(name, integral)
        settled = _settled_types(name, integral)

        def check_one(value: Any, path: Any, out: list) -> bool:
            kind = type(value)
            if kind in exact or (kind is looked_at and look(value)) or (kind not in settled and test(value)):
                return False  # (see _type_test; the quick look passes ASCII text and finite floats)
            return report(out, path, name, _got(value), value)

        if screen is None:
            return TypeGate(check_one, exact, looked_at, look)  # the compiler tests these types inline
        return _then(check_one, screen)
    tests = tuple(_type_test(t, integral) for t in types)
    exact_any = frozenset().union(*(_passing_types(t) for t in types))
    report_union = ctx.reporter(rule, "union_message")
    expected = " or ".join(types)

    def check_many(value: Any, path: tuple, out: list) -> bool:
        if type(value) in exact_any:
            return False
        if any(test(value) for test in tests):
            return False
        return report_union(out, path, expected, _got(value), value)

    return check_many if screen is None else _then(check_many, screen)


def _then(first: Check, second: Check) -> Check:
    """``first``, then ``second`` when ``first`` passed."""

    def check(value: Any, path: Any, out: list) -> bool:
        return first(value, path, out) or second(value, path, out)

    return check


@operation("validate", message_fields=("value",))
def boolean_schema(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """The schema ``false``: no value is allowed here (``true`` allows every value)."""
    if node.boolean is not False:
        return None
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        return report(out, path, value)

    return check


# --- enum and const -------------------------------------------------------------------------

def _membership(rule: Rule, members: tuple[Any, ...]) -> Callable[[Any], bool]:
    if rule.options["study_equality"]:
        lowered = frozenset(str(m).lower() for m in members)

        def is_member(value: Any) -> bool:
            if isinstance(value, str) and value.lower() in lowered:
                return True
            try:
                return value in members
            except Exception:  # a value whose == raises is not a member
                return False

        return is_member

    def is_json_member(value: Any) -> bool:
        return any(json_equal(value, m) for m in members)

    return is_json_member


@operation("validate", message_fields=("value", "members"), options=(
    STUDY_EQUALITY, NULL_MAKES_OPTIONAL,
    Option("empty_accepts_all", bool, False, "an empty `enum` accepts every value (else none)"),
))
def enum(rule: Rule, node: Schema, ctx: NodeContext) -> Check | Members | None:
    """``enum``: the value is one of the members (the study: strings compared case-insensitively)."""
    if node.enum is None:
        return None
    members = node.enum
    if rule.options["null_makes_optional"] and "null" not in node.types:
        members = tuple(m for m in members if m is not None)
    if not members and rule.options["empty_accepts_all"]:
        return None
    is_member = _membership(rule, members)
    report = ctx.reporter(rule)
    shown = list(members)
    # exact string members answer the common case with one set lookup
    exact_strings = frozenset(m for m in members if type(m) is str)

    def check(value: Any, path: Any, out: list) -> bool:
        if type(value) is str and value in exact_strings:
            return False
        if is_member(value):
            return False
        return report(out, path, value, shown)

    return Members(check, exact_strings) if exact_strings else check  # (see compiler._gated_members)


@operation("validate", message_fields=("value", "const", "members"), options=(STUDY_EQUALITY,))
def const(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``const``: the value is exactly this one (the study reads it as a one-member enum)."""
    if not _has_const(node):
        return None
    expected = node.const
    is_member = _membership(rule, (expected,))
    report = ctx.reporter(rule)
    shown = [expected]

    def check(value: Any, path: tuple, out: list) -> bool:
        if is_member(value):
            return False
        return report(out, path, value, expected, shown)

    return check


# --- numbers ---------------------------------------------------------------------------------

_NUMBERS = (int, float)


def _bound(attribute: str, failed: Callable[[Any, Any], bool]) -> Operation:
    """An operation comparing numbers with the node's ``attribute`` (``failed(value, limit)``: a C operator)."""

    def function(rule: Rule, node: Schema, ctx: NodeContext) -> Bound | None:
        limit = getattr(node, attribute)
        if limit is None:
            return None
        # the study compares True as 1; JSON Schema does not count booleans as numbers
        bool_is_number = rule.options["bool_is_number"]
        report = ctx.reporter(rule)

        def check(value: Any, path: Any, out: list) -> bool:
            kind = type(value)
            if kind is int or kind is float or (isinstance(value, _NUMBERS) and (bool_is_number or kind is not bool)):
                if failed(value, limit):
                    return report(out, path, value, limit)
            return False

        # what the compiler needs to fold this bound into the type gate before it (see _chain)
        return Bound(check, failed, limit, report, bool_is_number)

    function.__name__ = attribute
    function.__doc__ = f"``{attribute}``: numbers only."
    return operation("validate", message_fields=("value", "limit"), options=(BOOL_IS_NUMBER,))(function)


minimum = _bound("minimum", operator.lt)
maximum = _bound("maximum", operator.gt)
exclusive_minimum = _bound("exclusive_minimum", operator.le)
exclusive_maximum = _bound("exclusive_maximum", operator.ge)
multiple_of = _bound("multiple_of", lambda v, lim: v == v and abs(v) != float("inf") and not is_multiple_of(v, lim))


# --- sizes -----------------------------------------------------------------------------------

def _size(attribute: str, kinds: tuple[type[Sized], ...], too: Callable[[int, int], bool]) -> Operation:
    def function(rule: Rule, node: Schema, ctx: NodeContext) -> Size | None:
        limit = getattr(node, attribute)
        if limit is None:
            return None
        report = ctx.reporter(rule)

        def check(value: Any, path: Any, out: list) -> bool:
            if isinstance(value, kinds) and too(len(value), limit):
                return report(out, path, value, limit, len(value))
            return False

        # what the compiler needs to fold this size into the type gate before it (see _chain)
        return Size(check, too, limit, report, kinds)

    function.__name__ = attribute
    function.__doc__ = f"``{attribute}``: counts code points, items or properties."
    return operation("validate", message_fields=("value", "limit", "size"))(function)


min_length = _size("min_length", (str,), operator.lt)
max_length = _size("max_length", (str,), operator.gt)
min_items = _size("min_items", (list, tuple), operator.lt)
max_items = _size("max_items", (list, tuple), operator.gt)
min_properties = _size("min_properties", (dict,), operator.lt)
max_properties = _size("max_properties", (dict,), operator.gt)


# --- strings ---------------------------------------------------------------------------------

@operation("validate", message_fields=("value", "pattern"), options=(
    ECMA_REGEX,
    template("timeout_message", "the message when matching runs out of time (default: `message`)",
             ("value", "pattern", "timeout")),
    template("too_long_message", "the message when a string is too long to match (default: `message`)",
             ("value", "pattern", "timeout", "limit")),
))
def pattern(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``pattern``: an unanchored search.  A pattern that does not compile is skipped (the
    tools' loading announced it; a profile reading patterns as ECMA-262 refuses such a tool
    before compiling it: see ``verbs``).

    Matching uses the ``regex`` engine with a timeout (``Limits.pattern_timeout``), so a
    hostile pattern and value cannot hang the caller: a match that runs out of time is
    reported as a finding (it fails closed).  With ``ecma_regex`` (the ``jsonschema``
    profile) the pattern is read as ECMA-262 and only the ``regex`` engine must compile
    it (so ``\\p{Letter}`` works); otherwise Python's ``re`` must compile it too.
    """
    if node.pattern is None:
        return None
    source = node.pattern
    try:
        if not rule.options["ecma_regex"]:
            re.compile(source)  # the study's rule: what Python cannot compile is skipped
        compiled = compile_pattern(source, ecma=rule.options["ecma_regex"])
    except pattern_exceptions():
        return None
    report = ctx.reporter(rule)
    timeout = ctx.limits.pattern_timeout
    longest = ctx.limits.max_pattern_subject
    report_too_costly = ctx.reporter(rule, "timeout_message")
    report_too_long = ctx.reporter(rule, "too_long_message")

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, str):
            return False
        if len(value) > longest:
            return report_too_long(out, path, value[:40] + "...", source, timeout, longest)
        try:
            if compiled.search(value, timeout=timeout) is not None:
                return False
        except TimeoutError:
            return report_too_costly(out, path, value, source, timeout)
        return report(out, path, value, source)

    return check


# --- objects ---------------------------------------------------------------------------------

def _by_canonical_name(node: Schema) -> dict[str, str]:
    """The declared property each canonical name stands for (the first declared, where two share one;
    none for the empty name, which no key resolves by)."""
    by_canonical: dict[str, str] = {}
    for prop in node.properties:
        by_canonical.setdefault(canonical_name(prop.name), prop.name)
    by_canonical.pop("", None)
    return by_canonical


def _resolver(node: Schema, canonical: bool) -> Callable[[Any], str | None]:
    """Finds the declared property an argument key names (exact, then canonical when allowed)."""
    exact = {p.name for p in node.properties}
    by_canonical = _by_canonical_name(node) if canonical else {}

    def resolve(key: Any) -> str | None:
        if key in exact:
            return key
        if canonical and isinstance(key, str):
            return by_canonical.get(canonical_name(key))
        return None

    return resolve


@operation("validate", subsumes=("additional_properties",), options=(
    CANONICAL_NAMES,
    Option("skip_null_optional_at_root", bool, False,
           "`null` for an optional top-level argument means it was not given (the study)"),
    NULLABLE_IS_OPTIONAL,
))
def properties(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``properties``: each argument's value is checked against its property's schema.

    It subsumes ``additional_properties``: where that rule would only report the keys
    this walk cannot resolve, this walk reports them, under that rule (see
    :func:`_keys_taken_over`).
    """
    if not node.properties:
        return None
    by_canonical = _by_canonical_name(node) if rule.options["canonical_names"] else None
    undeclared_rule = _keys_taken_over(node, rule, ctx)
    report_undeclared = ctx.reporter(undeclared_rule) if undeclared_rule is not None else None
    type_rule = ctx.rule_running("type")
    # the members no subschema looks at must still be JSON values: the type rule's finding, made in this walk
    screen_others = (_json_values_only(ctx.reporter(type_rule))
                     if type_rule is not None and _open_to_others(node, rule, ctx) else None)
    skip_null = rule.options["skip_null_optional_at_root"] and ctx.root
    required = frozenset(p.name for p in node.properties
                         if p.name in node.required and not _nullable(p.schema, rule))
    # name -> (check, the types of value it passes at once: its type gate's, and None's where None means
    # "not given"; the types it passes after its gate's quick look, with that look)
    table = {}
    for prop in node.properties:
        sub = ctx.compile(prop.schema)
        passing = ctx.passing_types(sub)
        table[prop.name] = (sub, passing | _NONE_TYPE if skip_null and prop.name not in required else passing,
                            *ctx.quick_look(sub))

    def check(value: Any, path: Any, out: list) -> bool:
        if not isinstance(value, dict):
            return False
        failed = False
        for key, item in value.items():
            entry = table.get(key)
            if entry is None:  # (so not a declared name as it stands: by its canonical name, if the rule allows)
                name = (by_canonical.get(canonical_name(key)) if by_canonical is not None and isinstance(key, str)
                        else None)
                if name is None:
                    if report_undeclared is not None:
                        failed = report_undeclared(out, (path, key), key)
                    elif screen_others is not None and screen_others({key: item}, path, out):
                        failed = True  # (the member as a whole: its key is text too)
                    continue
                entry = table[name]
            sub, passing, looked_at, look = entry
            kind = type(item)
            if kind in passing or (kind is looked_at and look(item)):
                continue
            if sub(item, (path, key), out):
                failed = True
        return failed

    return check


_NONE_TYPE = frozenset({type(None)})


def _open_to_others(node: Schema, props_rule: Rule, ctx: NodeContext) -> bool:
    """Whether ``node`` allows members it does not declare and no subschema looks at them (no
    ``additionalProperties`` or ``patternProperties`` schema; not closed by the profile's rule)."""
    extra = node.additional_properties
    if node.pattern_properties or isinstance(extra, Schema) or extra is False:
        return False
    return extra is True or not any(r.options["closed_when_properties"] for r in ctx.subsumed(props_rule))


def _keys_taken_over(node: Schema, props_rule: Rule, ctx: NodeContext) -> Rule | None:
    """The ``additional_properties`` rule whose findings ``props_rule`` makes at ``node``, if any.

    ``properties`` and ``additionalProperties`` walk the same keys.  When the second would
    only report each key the first cannot resolve (a closed object, no patternProperties,
    the same name resolution), ``properties`` reports those keys for it, under its rule,
    in the same walk, and ``additional_properties`` stands down.  Which rules these are is
    the compiler's answer from the declarations (``properties`` subsumes
    ``additional_properties``); both operations ask this same question, so they agree.
    """
    if not node.properties or node.pattern_properties or not ctx.applies(props_rule, node):
        return None
    for extra_rule in ctx.subsumed(props_rule):
        if extra_rule.options["canonical_names"] != props_rule.options["canonical_names"]:
            continue
        extra = node.additional_properties
        if extra is None and extra_rule.options["closed_when_properties"]:
            extra = False
        if extra is False and ctx.applies(extra_rule, node):
            return extra_rule
    return None


@operation("validate", message_fields=("key",), options=(
    CANONICAL_NAMES,
    Option("closed_when_properties", bool, False,
           "a tool's arguments, and an object that lists properties, are closed unless "
           "`additionalProperties` says otherwise (the study)"),
    ECMA_REGEX,
))
def additional_properties(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``additionalProperties``: arguments the object does not declare.

    ``false`` reports each undeclared key (``unknown_args``); a schema checks their values.
    """
    owner = ctx.subsumer(rule)
    if owner is not None and _keys_taken_over(node, owner, ctx) is rule:
        return None  # the properties walk reports the undeclared keys (see _keys_taken_over)
    extra = node.additional_properties
    if extra is None and rule.options["closed_when_properties"] and (node.properties or ctx.root):
        extra = False  # the study: a tool's arguments are closed, and so is an object that lists properties
    if extra is None or extra is True:
        return None
    canonical = rule.options["canonical_names"]
    resolve = _resolver(node, canonical)
    declared = frozenset(p.name for p in node.properties)
    patterns = []
    for source, _ in node.pattern_properties:
        try:
            patterns.append(compile_pattern(source, ecma=rule.options["ecma_regex"]))
        except pattern_exceptions():
            continue
    timeout = ctx.limits.pattern_timeout
    report = ctx.reporter(rule)
    sub = ctx.compile(extra) if isinstance(extra, Schema) else None

    def undeclared(key: Any) -> bool:
        if resolve(key) is not None:
            return False
        if patterns and isinstance(key, str):
            try:
                return not any(p.search(key, timeout=timeout) for p in patterns)
            except TimeoutError:
                return True
        return True

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, dict) or value.keys() <= declared:
            return False
        failed = False
        for key, item in value.items():
            if key in declared or not undeclared(key):
                continue
            if sub is None:
                failed = report(out, (path, key), key) or failed
            elif sub(item, (path, key), out):
                failed = True
        return failed

    return check


@operation("validate", message_fields=("name",), options=(
    Option("declared_only", bool, False, "a required name that is not a declared property is ignored (the study)"),
    Option("in_property_order", bool, False, "missing names are listed in the order the properties are declared, "
           "then any undeclared ones in the order of `required` (the study), rather than in the order of `required`"),
    NULLABLE_IS_OPTIONAL, CANONICAL_NAMES,
))
def required(rule: Rule, node: Schema, ctx: NodeContext) -> Present | None:
    """``required``: each required property is present (by its canonical name, in the study)."""
    declared = {p.name: p.schema for p in node.properties}
    names = node.required
    if rule.options["declared_only"]:
        names = tuple(n for n in names if n in declared)
    if rule.options["in_property_order"]:
        wanted_names = set(names)
        names = (*(n for n in declared if n in wanted_names), *(n for n in names if n not in declared))
    names = tuple(n for n in names if not (n in declared and _nullable(declared[n], rule)))
    if not names:
        return None
    wanted = frozenset(names)
    canonical = rule.options["canonical_names"]
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, dict) or value.keys() >= wanted:
            return False
        given = {canonical_name(k) for k in value if isinstance(k, str)} if canonical else set()
        failed = False
        for name in names:
            if name in value or (canonical and canonical_name(name) in given):
                continue
            failed = report(out, (path, name), name)
        return failed

    return Present(check, wanted)  # (see compiler._gated_present)


@operation("validate", message_fields=("name", "trigger"))
def dependent_required(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``dependentRequired``: when a property is present, these others must be too."""
    if not node.dependent_required:
        return None
    report = ctx.reporter(rule)
    pairs = node.dependent_required

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, dict):
            return False
        failed = False
        for trigger, needed in pairs:
            if trigger in value:
                for name in needed:
                    if name not in value:
                        failed = report(out, (path, name), name, trigger)
        return failed

    return check


@operation("validate", options=(ECMA_REGEX,))
def pattern_properties(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``patternProperties``: values of keys that match a pattern are checked against its schema."""
    if not node.pattern_properties:
        return None
    compiled = []
    for source, schema in node.pattern_properties:
        try:
            compiled.append((compile_pattern(source, ecma=rule.options["ecma_regex"]), ctx.compile(schema)))
        except pattern_exceptions():
            continue
    timeout = ctx.limits.pattern_timeout

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, dict):
            return False
        failed = False
        for key, item in value.items():
            for expression, sub in compiled:
                try:
                    hit = isinstance(key, str) and expression.search(key, timeout=timeout) is not None
                except TimeoutError:
                    hit = True
                if hit and sub(item, (path, key), out):
                    failed = True
        return failed

    return check


@operation("validate")
def property_names(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``propertyNames``: every key, as a string, satisfies the schema."""
    if node.property_names is None:
        return None
    sub = ctx.compile(node.property_names)

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, dict):
            return False
        failed = False
        for key in value:
            if sub(key, (path, key), out):
                failed = True
        return failed

    return check


# --- arrays ----------------------------------------------------------------------------------

@operation("validate")
def prefix_items(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``prefixItems``: the first items are checked position by position."""
    if not node.prefix_items:
        return None
    subs = tuple(ctx.compile(s) for s in node.prefix_items)

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, (list, tuple)):
            return False
        failed = False
        for index, (sub, item) in enumerate(zip(subs, value)):
            if sub(item, (path, index), out):
                failed = True
        return failed

    return check


@operation("validate")
def items(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``items``: every item after the ``prefixItems`` is checked against the schema."""
    if node.items is None:
        return None
    sub = ctx.compile(node.items)
    if sub is accept:
        return None
    start = len(node.prefix_items)
    passing = ctx.passing_types(sub)
    looked_at, look = ctx.quick_look(sub)

    def check(value: Any, path: Any, out: list) -> bool:
        if not isinstance(value, (list, tuple)):
            return False
        failed = False
        for index in range(start, len(value)):
            item = value[index]
            kind = type(item)
            if kind in passing or (kind is looked_at and look(item)):
                continue
            if sub(item, (path, index), out):
                failed = True
        return failed

    return check


@operation("validate", message_fields=("first", "second"))
def unique_items(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``uniqueItems``: no two items are equal (JSON equality)."""
    if not node.unique_items:
        return None
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, (list, tuple)):
            return False
        for i in range(len(value)):
            for j in range(i):
                if json_equal(value[i], value[j]):
                    return report(out, path, j, i)
        return False

    return check


@operation("validate", message_fields=("count", "low", "high"))
def contains(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``contains`` with ``minContains``/``maxContains``: how many items match the schema."""
    if node.contains is None:
        return None
    sub = ctx.compile(node.contains)
    low = 1 if node.min_contains is None else node.min_contains
    high = node.max_contains
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        if not isinstance(value, (list, tuple)):
            return False
        hits = sum(1 for item in value if not sub(item, path, []))
        if hits < low or (high is not None and hits > high):
            return report(out, path, hits, low, high if high is not None else "any")
        return False

    return check


# --- combinators -----------------------------------------------------------------------------

def _branches(node_branches: tuple[Schema, ...], rule: Rule) -> tuple[Schema, ...]:
    if rule.options["null_makes_optional"]:
        return tuple(b for b in node_branches if b.types != ("null",))
    return node_branches


@operation("validate", message_fields=("value", "got"), options=(
    NULL_MAKES_OPTIONAL,
    Option("single_branch_inline", bool, False,
           "one (non-null) branch is that branch itself: its own findings, not the union's message"),
    Option("one_of_as_any_of", bool, False, "`oneOf` is read as `anyOf` (a union)"),
))
def any_of(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``anyOf`` (and, with ``one_of_as_any_of``, ``oneOf``): at least one branch accepts the value.

    The study reads it as a union: a single non-null branch is that branch itself, and when
    no branch accepts the value the branches' own messages are replaced by one.
    """
    branches = node.any_of
    if not branches and rule.options["one_of_as_any_of"]:
        branches = node.one_of
    branches = _branches(branches, rule)
    if not branches:
        return None
    if len(branches) == 1 and rule.options["single_branch_inline"]:
        return ctx.compile(branches[0])
    subs = tuple(ctx.compile(b) for b in branches)
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        for sub in subs:
            if not sub(value, path, []):
                return False
        return report(out, path, value, type(value).__name__)

    return check


@operation("validate", message_fields=("value", "count", "got"))
def one_of(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``oneOf``: exactly one branch accepts the value."""
    if not node.one_of:
        return None
    subs = tuple(ctx.compile(b) for b in node.one_of)
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        hits = sum(1 for sub in subs if not sub(value, path, []))
        if hits == 1:
            return False
        return report(out, path, value, hits, type(value).__name__)

    return check


@operation("validate")
def all_of(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``allOf``: every branch accepts the value; each branch reports its own findings."""
    if not node.all_of:
        return None
    subs = tuple(ctx.compile(b) for b in node.all_of)
    if len(subs) == 1:
        return subs[0]

    def check(value: Any, path: tuple, out: list) -> bool:
        failed = False
        for sub in subs:
            if sub(value, path, out):
                failed = True
        return failed

    return check


@operation("validate", message_fields=("value",))
def not_(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``not``: the value must not satisfy the schema."""
    if node.not_ is None:
        return None
    sub = ctx.compile(node.not_)
    report = ctx.reporter(rule)

    def check(value: Any, path: tuple, out: list) -> bool:
        if sub(value, path, []):
            return False
        return report(out, path, value)

    return check


@operation("validate")
def if_then_else(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``if``/``then``/``else``: the branch the condition picks applies."""
    if node.if_ is None or (node.then_ is None and node.else_ is None):
        return None
    condition = ctx.compile(node.if_)
    then = ctx.compile(node.then_) if node.then_ is not None else accept
    otherwise = ctx.compile(node.else_) if node.else_ is not None else accept

    def check(value: Any, path: tuple, out: list) -> bool:
        branch = otherwise if condition(value, path, []) else then
        return branch(value, path, out)

    return check


@operation("validate")
def ref(rule: Rule, node: Schema, ctx: NodeContext) -> Check | None:
    """``$ref``: the value also satisfies the schema the reference points to."""
    if node.ref is None:
        return None
    return ctx.compile(ctx.resolve(node.ref))
