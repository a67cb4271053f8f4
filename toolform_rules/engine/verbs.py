"""The public verbs: validate a call, validate any instance, normalise a call.

Data flows one way: the call is read, its name resolved to a tool, the tool's compiled
program (cached per profile and limits) normalises and checks the arguments, and a
:class:`ValidationReport` comes back.  Nothing the caller passed in is modified.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from ..calls import ToolCall, arguments_of, as_call
from .compiler import Compiler, Program, compile_tool
from .context import Check, Transform
from ..errors import LimitExceeded, LoaderError, UnknownProfileError
from ..schema.ir import Tool
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.loaders import load_tools, read_schema
from ..schema.patterns import bad_patterns
from .normalisation_ops import canonical_value
from .report import Finding, ValidationReport
from .rule_files import builtin_rules
from .rules import Rule, RuleSet
from ..schema.toolset import Toolset

if TYPE_CHECKING:
    from ..policy import Policy

NORMALISATION_PROFILES = ("normalized", "strict")


def _ruleset(rules: RuleSet | None) -> RuleSet:
    return builtin_rules() if rules is None else rules


def _profile(profile: str, rules: RuleSet | None = None) -> tuple[Rule, ...]:
    return _ruleset(rules).profile_rules(profile)


def _validation_profile(profile: str, rules: RuleSet | None = None) -> None:
    """Refuse a profile that cannot give a verdict (a normalisation profile has no validation rules)."""
    if not _ruleset(rules).validates(profile):
        raise UnknownProfileError(
            f"profile {profile!r} only normalises; validate with a validation profile "
            f"({', '.join(validation_profiles(rules))})")


def validation_profiles(rules: RuleSet | None = None) -> list[str]:
    """The profiles that validate (those with validation rules): sdk, study, jsonschema...

    >>> "sdk" in validation_profiles(), "normalized" in validation_profiles()
    (True, False)
    """
    ruleset = _ruleset(rules)
    return [name for name in ruleset.profile_names() if ruleset.validates(name)]


def require_validation_profile(profile: str, rules: RuleSet | None = None) -> None:
    """Refuse a name that is no validation profile (of the built-in rules, or of ``rules``).

    >>> require_validation_profile("sdk")
    >>> require_validation_profile("sdj")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.UnknownProfileError: unknown validation profile 'sdj'; known: jsonschema, sdk, study
    """
    if profile not in validation_profiles(rules):
        raise UnknownProfileError(f"unknown validation profile {profile!r}; known: "
                                  + ", ".join(validation_profiles(rules)))


def normalisation_profiles(rules: RuleSet | None = None) -> list[str]:
    """What ``normalize_call`` takes as ``strictness``: ``normalized``, ``strict``, and a user's
    profiles (in ``rules``) that have no validation rule."""
    own = [] if rules is None else [name for name in rules.profile_names()
                                    if name not in builtin_rules().profiles and not rules.validates(name)]
    return [*NORMALISATION_PROFILES, *own]


def _program_key(profile: str, limits: Limits, rules: RuleSet | None) -> Any:
    """Where a tool caches its program: the built-in profiles by name (the fast path reads that)."""
    key = profile if limits is DEFAULT_LIMITS else (profile, limits)
    return key if rules is None else (rules.key, key)


def program_for(tool: Tool, profile: str, limits: Limits = DEFAULT_LIMITS, rules: RuleSet | None = None) -> Program:
    """The compiled validation program of ``tool`` under ``profile`` (compiled once, cached on the tool).

    >>> from toolform_rules import sample_tool
    >>> program_for(sample_tool(), "study").run({"counterparty": "A", "value": 1, "term_months": 0}).constraint_errors
    ['term_months: 0 < minimum 1']
    """
    key = _program_key(profile, limits, rules)
    program = tool.programs.get(key)
    if program is None:
        _validation_profile(profile, rules)
        profile_rules = _profile(profile, rules)
        _refuse_bad_patterns(tool, profile, profile_rules)
        program = compile_tool(tool, profile_rules, limits, rules)
        tool.programs[key] = program
    return program


def _refuse_bad_patterns(tool: Tool, profile: str, rules: tuple[Rule, ...]) -> None:
    """Refuse ``tool`` under a profile that reads patterns as JSON Schema does (a rule with ``ecma_regex``)
    when one of its patterns is no ECMA-262 regular expression.

    JSON Schema makes such a schema invalid (python-jsonschema raises ``SchemaError``), so a
    verdict on a call would rest on a check that cannot run.  The other profiles skip the
    pattern, as the study's rule says (the loader has warned of it).  Checked before the
    tool compiles: nothing half-compiled is left behind.

    >>> from toolform_rules import load_tools
    >>> tools = load_tools({"name": "f", "parameters": {"type": "object", "properties": {
    ...     "x": {"type": "string", "pattern": "(unclosed"}}}})
    >>> validate_arguments({"name": "f", "arguments": {"x": "a"}}, tools).ok  # sdk: skipped
    True
    >>> validate_arguments({"name": "f", "arguments": {"x": "a"}}, tools, profile="jsonschema")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.LoaderError: <object> $: tool 'f' at #/properties/x/pattern: the pattern '(unclosed' is ...
    """
    if not any(rule.options.get("ecma_regex") for rule in rules):
        return
    for pointer, source, error in bad_patterns(tool, ecma=True):
        raise LoaderError(f"the pattern {source!r} is no ECMA-262 regular expression ({error}): under the "
                          f"{profile} profile, as in JSON Schema, the schema is invalid", source=tool.source,
                          tool=tool.name, path=pointer)


def normaliser_for(tool: Tool, strictness: str, limits: Limits = DEFAULT_LIMITS,
                   rules: RuleSet | None = None) -> Program:
    """The compiled normalisation program of ``tool`` (cached apart from the validation programs)."""
    key = (_program_key(strictness, limits, rules), "normalise")
    program = tool.programs.get(key)
    if program is None:
        program = compile_tool(tool, _profile(strictness, rules), limits, rules)
        tool.programs[key] = program
    return program


def _unknown_tool(name: Any, profile: str, rules: RuleSet | None = None) -> ValidationReport:
    """The report on a call whose ``name`` resolves to no tool: what the profile's rule for such a
    call (an operation that acts on the call, ``unknown_tool``) finds, through the registry."""
    from .operations import operation_of  # (the registry loads the operations: only when needed)

    for rule in _profile(profile, rules):
        operation = operation_of(rule.phase, rule.op)
        if operation is not None and operation.acts_on == "call":
            out: list[Finding] = []
            operation.function(rule)(name, None, out)
            return ValidationReport(tuple(out))
    raise UnknownProfileError(f"profile {profile!r} has no rule for a call that names no tool "
                              f"(a rule with op: unknown_tool)")


def as_toolset(tools: Any) -> Toolset:
    """``tools`` as a :class:`Toolset`: itself, one :class:`Tool`, or anything :func:`load_tools` reads."""
    if type(tools) is Toolset:
        return tools
    if isinstance(tools, Tool):
        return Toolset([tools])
    return load_tools(tools)


def validate_arguments(call: Any, tools: Any, *, profile: str = "sdk", rules: RuleSet | None = None,
                       policy: Policy | None = None, limits: Limits = DEFAULT_LIMITS) -> ValidationReport:
    """Check one call against its tool: name, then arguments, under ``profile``.

    ``call`` is a :class:`ToolCall` or a mapping with ``name`` and ``arguments``;
    ``tools`` a :class:`Toolset` (or anything :func:`load_tools` reads).  ``profile`` is
    ``sdk`` (default: the study's validator plus ``pattern`` and integral floats as
    integers), ``study`` or ``jsonschema``, or a profile of ``rules`` (from
    :func:`load_rules`: the built-in profiles and a user's).  ``policy`` (from :func:`load_policy`): its
    constraints for the tool run after the schema's rules, their findings in the same
    report (a ``warning`` constraint's in ``warnings``, never failing the call).

    >>> from toolform_rules import sample_toolset
    >>> report = validate_arguments(
    ...     {"name": "legal_draft_v3",
    ...      "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}},
    ...     sample_toolset())
    >>> report.ok
    False
    >>> report.to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'ok': False, 'unknown_tool': False, 'missing_required': [], 'unknown_args': ['colour'],
     'type_errors': ['term_months: expected integer, got str'], 'enum_errors': [],
     'constraint_errors': ['value: -5 < minimum 0'], 'n_errors': 3}
    """
    name = arguments = None
    if type(call) is dict:  # the common shape, read without copying (a missing key: as_call says what is wrong)
        try:
            name, arguments = call["name"], call["arguments"]
        except KeyError:
            pass
    if type(arguments) is not dict or type(name) is not str:
        name, arguments, _ = as_call(call)
    toolset = tools if type(tools) is Toolset else as_toolset(tools)
    # (a tool called by its exact name, the commonest case, is found without a call of Python)
    tool = toolset.by_exact_name(name) or toolset.get(name)
    if tool is None:
        _validation_profile(profile, rules)
        return _unknown_tool(name, profile, rules)
    program = (tool.programs.get(profile if limits is DEFAULT_LIMITS else (profile, limits)) if rules is None
               else None)
    if program is None:
        program = program_for(tool, profile, limits, rules)
    if policy is None:
        return program.run(arguments)
    return policy.apply(program.run(arguments), tool.name, arguments,
                        norm=lambda: normalised_arguments(arguments, tool, limits, rules), tool=tool)


def normalised_arguments(arguments: dict[str, Any], tool: Tool, limits: Limits = DEFAULT_LIMITS,
                         rules: RuleSet | None = None) -> dict[str, Any]:
    """``normalize_call``'s arguments (strictness ``normalized``) for a tool already resolved; ``{}`` when too deep."""
    program = normaliser_for(tool, "normalized", limits, rules)
    try:
        normalised = program.normalise(arguments) if program.normalise is not None else dict(arguments)
    except RecursionError:
        return {}
    return dict(arguments) if normalised is arguments else normalised


def validate_call(call: Any, tool: Tool | None, *, profile: str = "study", rules: RuleSet | None = None,
                  limits: Limits = DEFAULT_LIMITS) -> ValidationReport:
    """The study's validator (or ``profile`` of ``rules``) on one call and one tool (no name
    resolution; ``None`` is an unknown tool).

    >>> from toolform_rules import sample_tool
    >>> validate_call({"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 1,
    ...                "term_months": 12.0}}, sample_tool()).type_errors
    ['term_months: expected integer, got float']
    """
    name, arguments, _ = as_call(call)
    if tool is None:
        return _unknown_tool(name, profile, rules)
    return program_for(tool, profile, limits, rules).run(arguments)


class CompiledSchemas:
    """The compiled checks of the schemas :func:`validate_instance` has seen, by content.

    A schema is known by its JSON text (key order included: it orders the findings), the
    profile, the rule set and the limits; the least recently used entry goes first once
    ``limits.max_cached_schemas`` are held.  A schema with no JSON text (a tuple, a key
    that is not a string) is compiled every time.
    """

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, tuple[Check, Transform | None]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def get(self, schema: Any, profile: str, rules: RuleSet | None, limits: Limits) -> tuple[Check, Transform | None]:
        try:
            text = json.dumps(schema, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return _compile_schema(schema, profile, rules, limits)
        key = (text, profile, None if rules is None else rules.key, limits)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        compiled = _compile_schema(schema, profile, rules, limits)
        with self._lock:
            self._entries[key] = compiled
            while len(self._entries) > limits.max_cached_schemas:
                self._entries.popitem(last=False)
        return compiled


#: what validate_instance has compiled (bounded by ``Limits.max_cached_schemas``)
COMPILED_SCHEMAS = CompiledSchemas()


def _compile_schema(schema: Any, profile: str, rules: RuleSet | None, limits: Limits) -> tuple[Check, Transform | None]:
    root, definitions, _ = read_schema(schema, limits=limits)
    tool = Tool(name="<instance>", parameters=root, definitions=definitions)
    profile_rules = _profile(profile, rules)
    _refuse_bad_patterns(tool, profile, profile_rules)
    compiler = Compiler(profile_rules, tool, limits, rules)
    check = compiler.compile_node(root, root=True)
    return check, compiler.normaliser_of(root, root=True) if compiler.normalise_rules else None


def validate_instance(instance: Any, schema: Any, *, profile: str = "jsonschema", rules: RuleSet | None = None,
                      limits: Limits = DEFAULT_LIMITS) -> ValidationReport:
    """Any JSON value against any JSON schema (what the JSON-Schema-Test-Suite loader calls).

    The schema is compiled once per content (see :class:`CompiledSchemas`).

    >>> validate_instance([1, 1], {"type": "array", "uniqueItems": True}).constraint_errors
    ['$: items 0 and 1 are equal']
    >>> validate_instance(3, {"exclusiveMaximum": 3}).ok
    False
    """
    _validation_profile(profile, rules)
    check, normalise = COMPILED_SCHEMAS.get(schema, profile, rules, limits)
    out: list[Finding] = []
    try:
        value = normalise(instance) if normalise is not None else instance
    except RecursionError:
        raise LimitExceeded("the instance is nested too deeply to check", limit="nesting", value=None) from None
    try:
        check(value, None, out)
    except RecursionError:
        raise LimitExceeded("the instance is nested too deeply to check", limit="nesting", value=None) from None
    return ValidationReport(tuple(out))


def normalize_call(call: Any, tool: Tool | None, strictness: str = "normalized", *, rules: RuleSet | None = None,
                   limits: Limits = DEFAULT_LIMITS) -> ToolCall:
    """The call with its arguments normalised as the study graded them.

    ``strictness="normalized"``: numeric strings become numbers and "true"/"yes" booleans
    where the schema wants them, strings are trimmed and case-folded, a one-element list
    becomes a scalar where the schema wants a scalar, enum members match ignoring case,
    argument names resolve across naming conventions, empty or defaulted optional
    arguments are left out.  ``strict``: values only put in canonical form.  With ``rules``
    (from :func:`load_rules`), ``strictness`` may also name one of the user's profiles that
    only normalise.  The input is never modified; the name is only trimmed.

    >>> from toolform_rules import sample_tool
    >>> normalize_call({"name": "legal_draft_v3", "arguments": {"counterparty": " Acme ", "value": "5",
    ...                 "termMonths": 12.0, "auto_renew": "no", "contract_details": {"status": "DRAFT"}}},
    ...                sample_tool()).arguments
    {'counterparty': 'acme', 'value': 5.0, 'term_months': 12, 'contract_details': {'status': 'draft'}}
    """
    allowed = normalisation_profiles(rules)
    if strictness not in allowed:
        raise UnknownProfileError(f"unknown strictness {strictness!r}; use one of {', '.join(allowed)}")
    if isinstance(call, ToolCall):
        name, raw, call_id = call.name, call.arguments, call.call_id
    else:
        name, raw, call_id = as_call(call)
    arguments = raw if isinstance(raw, dict) else arguments_of(raw)
    if tool is None:
        normalised = canonical_value(arguments)
    else:
        program = normaliser_for(tool, strictness, limits, rules)
        try:
            normalised = program.normalise(arguments) if program.normalise is not None else dict(arguments)
        except RecursionError:
            raise LimitExceeded("the arguments are nested too deeply to normalise", limit="nesting",
                                value=None) from None
        if normalised is arguments:
            normalised = dict(arguments)
    return ToolCall(name=name.strip() if isinstance(name, str) else "", arguments=normalised, call_id=call_id)
