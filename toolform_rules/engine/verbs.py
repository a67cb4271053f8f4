"""The public verbs: validate a call, validate any instance, normalise a call.

Data flows one way: the call is read, its name resolved to a tool, the tool's compiled
program (cached per profile and limits) normalises and checks the arguments, and a
:class:`ValidationReport` comes back.  Nothing the caller passed in is modified.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..calls import ToolCall, arguments_of, as_call
from .compiler import Compiler, Program, compile_tool
from ..errors import LimitExceeded, UnknownProfileError
from ..schema.ir import Tool
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.loaders import load_tools, read_schema
from .normalisation_ops import canonical_value
from .report import Finding, ValidationReport
from .rule_files import builtin_rules
from .rules import Rule
from ..schema.toolset import Toolset

if TYPE_CHECKING:
    from ..policy import Policy

NORMALISATION_PROFILES = ("normalized", "strict")


def _profile(profile: str) -> tuple[Rule, ...]:
    return builtin_rules().profile_rules(profile)


def _validation_profile(profile: str) -> None:
    """Refuse a profile that cannot give a verdict (a normalisation profile has no validation rules)."""
    if not any(rule.op == "unknown_tool" for rule in _profile(profile)):
        raise UnknownProfileError(
            f"profile {profile!r} only normalises; validate with a validation profile "
            f"({', '.join(validation_profiles())})")


def validation_profiles() -> list[str]:
    """The profiles that validate (those with an ``unknown_tool`` rule): sdk, study, jsonschema..."""
    ruleset = builtin_rules()
    return [name for name in ruleset.profile_names()
            if any(rule.op == "unknown_tool" for rule in ruleset.profile_rules(name))]


def program_for(tool: Tool, profile: str, limits: Limits = DEFAULT_LIMITS) -> Program:
    """The compiled validation program of ``tool`` under ``profile`` (compiled once, cached on the tool).

    >>> from toolform_rules import sample_tool
    >>> program_for(sample_tool(), "study").run({"counterparty": "A", "value": 1, "term_months": 0}).constraint_errors
    ['term_months: 0 < minimum 1']
    """
    key = profile if limits is DEFAULT_LIMITS else (profile, limits)
    program = tool.programs.get(key)
    if program is None:
        _validation_profile(profile)
        program = compile_tool(tool, _profile(profile), limits)
        tool.programs[key] = program
    return program


def normaliser_for(tool: Tool, strictness: str, limits: Limits = DEFAULT_LIMITS) -> Program:
    """The compiled normalisation program of ``tool`` (cached apart from the validation programs)."""
    key = (strictness, limits, "normalise")
    program = tool.programs.get(key)
    if program is None:
        program = compile_tool(tool, _profile(strictness), limits)
        tool.programs[key] = program
    return program


def _unknown_tool(name: Any, profile: str) -> ValidationReport:
    for rule in _profile(profile):
        if rule.op == "unknown_tool":
            message = (rule.message or "{name!r}").format_map({"name": name, "path": "$"})
            return ValidationReport((Finding(rule.id, "unknown_tool", (), message, str(rule.source)),))
    raise UnknownProfileError(f"profile {profile!r} has no unknown_tool rule")


def as_toolset(tools: Any) -> Toolset:
    """``tools`` as a :class:`Toolset`: itself, one :class:`Tool`, or anything :func:`load_tools` reads."""
    if type(tools) is Toolset:
        return tools
    if isinstance(tools, Tool):
        return Toolset([tools])
    return load_tools(tools)


def validate_arguments(call: Any, tools: Any, *, profile: str = "sdk", policy: Policy | None = None,
                       limits: Limits = DEFAULT_LIMITS) -> ValidationReport:
    """Check one call against its tool: name, then arguments, under ``profile``.

    ``call`` is a :class:`ToolCall` or a mapping with ``name`` and ``arguments``;
    ``tools`` a :class:`Toolset` (or anything :func:`load_tools` reads).  ``profile`` is
    ``sdk`` (default: the study's validator plus ``pattern`` and integral floats as
    integers), ``study`` or ``jsonschema``.  ``policy`` (from :func:`load_policy`): its
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
    if type(call) is dict:  # the common shape, read without copying
        name, arguments = call.get("name"), call.get("arguments")
    if type(arguments) is not dict or type(name) is not str:
        name, arguments, _ = as_call(call)
    tool = (tools if type(tools) is Toolset else as_toolset(tools)).get(name)
    if tool is None:
        _validation_profile(profile)
        return _unknown_tool(name, profile)
    program = tool.programs.get(profile if limits is DEFAULT_LIMITS else (profile, limits))
    if program is None:
        program = program_for(tool, profile, limits)
    if policy is None:
        return program.run(arguments)
    return policy.apply(program.run(arguments), tool.name, arguments,
                        norm=lambda: normalised_arguments(arguments, tool, limits), tool=tool)


def normalised_arguments(arguments: dict[str, Any], tool: Tool, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """``normalize_call``'s arguments (strictness ``normalized``) for a tool already resolved; ``{}`` when too deep."""
    program = normaliser_for(tool, "normalized", limits)
    try:
        normalised = program.normalise(arguments) if program.normalise is not None else dict(arguments)
    except RecursionError:
        return {}
    return dict(arguments) if normalised is arguments else normalised


def validate_call(call: Any, tool: Tool | None, *, limits: Limits = DEFAULT_LIMITS) -> ValidationReport:
    """The study's validator on one call and one tool (no name resolution; ``None`` is an unknown tool).

    >>> from toolform_rules import sample_tool
    >>> validate_call({"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 1,
    ...                "term_months": 12.0}}, sample_tool()).type_errors
    ['term_months: expected integer, got float']
    """
    name, arguments, _ = as_call(call)
    if tool is None:
        return _unknown_tool(name, "study")
    return program_for(tool, "study", limits).run(arguments)


def validate_instance(instance: Any, schema: Any, *, profile: str = "jsonschema",
                      limits: Limits = DEFAULT_LIMITS) -> ValidationReport:
    """Any JSON value against any JSON schema (what the JSON-Schema-Test-Suite loader calls).

    >>> validate_instance([1, 1], {"type": "array", "uniqueItems": True}).constraint_errors
    ['$: items 0 and 1 are equal']
    >>> validate_instance(3, {"exclusiveMaximum": 3}).ok
    False
    """
    _validation_profile(profile)
    root, definitions, _ = read_schema(schema, limits=limits)
    tool = Tool(name="<instance>", parameters=root, definitions=definitions)
    compiler = Compiler(_profile(profile), tool, limits)
    check = compiler.compile_node(root, root=True)
    normalise = compiler.normaliser_of(root, root=True) if compiler.normalise_rules else None
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


def normalize_call(call: Any, tool: Tool | None, strictness: str = "normalized", *,
                   limits: Limits = DEFAULT_LIMITS) -> ToolCall:
    """The call with its arguments normalised as the study graded them.

    ``strictness="normalized"``: numeric strings become numbers and "true"/"yes" booleans
    where the schema wants them, strings are trimmed and case-folded, a one-element list
    becomes a scalar where the schema wants a scalar, enum members match ignoring case,
    argument names resolve across naming conventions, empty or defaulted optional
    arguments are left out.  ``strict``: values only put in canonical form.  The input is
    never modified; the name is only trimmed.

    >>> from toolform_rules import sample_tool
    >>> normalize_call({"name": "legal_draft_v3", "arguments": {"counterparty": " Acme ", "value": "5",
    ...                 "termMonths": 12.0, "auto_renew": "no", "contract_details": {"status": "DRAFT"}}},
    ...                sample_tool()).arguments
    {'counterparty': 'acme', 'value': 5.0, 'term_months': 12, 'contract_details': {'status': 'draft'}}
    """
    if strictness not in NORMALISATION_PROFILES:
        raise UnknownProfileError(f"unknown strictness {strictness!r}; use one of {', '.join(NORMALISATION_PROFILES)}")
    if isinstance(call, ToolCall):
        name, raw, call_id = call.name, call.arguments, call.call_id
    else:
        name, raw, call_id = as_call(call)
    arguments = raw if isinstance(raw, dict) else arguments_of(raw)
    if tool is None:
        normalised = canonical_value(arguments)
    else:
        program = normaliser_for(tool, strictness, limits)
        try:
            normalised = program.normalise(arguments) if program.normalise is not None else dict(arguments)
        except RecursionError:
            raise LimitExceeded("the arguments are nested too deeply to normalise", limit="nesting",
                                value=None) from None
        if normalised is arguments:
            normalised = dict(arguments)
    return ToolCall(name=name.strip() if isinstance(name, str) else "", arguments=normalised, call_id=call_id)
