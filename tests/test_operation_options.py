"""Operations declare their options, message fields and interactions; loading and compiling read them.

A rule's ``options:`` are checked against its operation's declaration when its file is
loaded (unknown, wrong type, missing, bad template: refused with file, line, column and
field), defaults are filled in, and the interactions between operations (``subsumes``,
``consults``, type gates and bounds, the unknown-tool rule) are data the compiler reads.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules import RuleFileError, builtin_rules, sample_tool, sample_toolset, validate_arguments
from toolform_rules.engine.report import Finding, format_path
from toolform_rules.engine.compiler import Compiler
from toolform_rules.engine.context import Bound, NodeContext, TypeGate
from toolform_rules.engine.declarations import Operation, Option
from toolform_rules.engine.option_checks import checked_options, template_problem
from toolform_rules.engine.operations import NORMALISE_OPERATIONS, REGISTRY, VALIDATE_OPERATIONS, operation_of
from toolform_rules.engine.rule_files import load_rules, rules_directory
from toolform_rules.engine.rules import Rule
from toolform_rules.engine.verbs import validation_profiles
from toolform_rules.errors import UnknownProfileError
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.schema.loaders import read_schema
from toolform_rules.yamlsource import load_yaml_file

# --- helpers ----------------------------------------------------------------------------------------


def _load(directory: Path, text: str) -> Path:
    path = directory / "mine.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _refused(directory: Path, text: str) -> tuple[RuleFileError, Path]:
    path = _load(directory, text)
    with pytest.raises(RuleFileError) as info:
        load_rules(path)
    return info.value, path


def _place(text: str, needle: str) -> tuple[int, int]:
    """The 1-based line and column where ``needle`` starts in ``text`` (dedented)."""
    for number, line in enumerate(textwrap.dedent(text).splitlines(), start=1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(f"{needle!r} is not in the text")


PATTERN_RULE = """\
rules:
  - id: mine.pattern
    op: pattern
    phase: validate
    bucket: constraint_errors
    message: "{path}: {value!r} does not match {pattern!r}"
    options:
"""

# (case, the options written under PATTERN_RULE or a whole file, where the error points, field, message part)
REFUSED = [
    ("a misspelled option", PATTERN_RULE + '      timeout_mesage: "{path}: too slow"\n', "timeout_mesage",
     "mine.pattern.options.timeout_mesage",
     "unknown option 'timeout_mesage' for operation 'pattern'; did you mean 'timeout_message'?"),
    ("an option of another operation", PATTERN_RULE + "      canonical_names: true\n", "canonical_names",
     "mine.pattern.options.canonical_names",
     "unknown option 'canonical_names' for operation 'pattern', which takes ecma_regex, timeout_message, "
     "too_long_message"),
    ("a boolean written as text", PATTERN_RULE + '      ecma_regex: "yes"\n', '"yes"',
     "mine.pattern.options.ecma_regex",
     "option 'ecma_regex': expected a boolean (true or false), got a string 'yes'"),
    ("a template that is a number", PATTERN_RULE + "      timeout_message: 5\n", "5",
     "mine.pattern.options.timeout_message", "option 'timeout_message': expected a string, got an integer 5"),
    ("an unknown field in an option's template", PATTERN_RULE + '      timeout_message: "{path}: {valeu}"\n',
     '"{path}: {valeu}', "mine.pattern.options.timeout_message",
     "option 'timeout_message': message field {valeu} is not provided by operation 'pattern' for "
     "timeout_message; did you mean {value}? It provides path, pattern, timeout, value"),
    ("a field of another template", PATTERN_RULE + '      timeout_message: "{path}: over {limit}"\n', '"{path}: over',
     "mine.pattern.options.timeout_message", "message field {limit} is not provided by operation 'pattern'"),
    ("attribute access in an option's template", PATTERN_RULE + "      too_long_message: '{value.__class__}'\n",
     "'{value", "mine.pattern.options.too_long_message",
     "message field {value.__class__} must be a plain name (no attribute access or indexing)"),
    ("a malformed option template", PATTERN_RULE + "      too_long_message: '{path'\n", "'{path",
     "mine.pattern.options.too_long_message", "message template is malformed"),
    ("a word outside the choices", "rules:\n  - id: mine.fields\n    op: object_fields\n    phase: normalise\n"
     "    options: {unknown: generc}\n", "generc", "mine.fields.options.unknown",
     "option 'unknown' must be one of keep, generic, not 'generc'; did you mean 'generic'?"),
    ("an item of the wrong type in a list", "rules:\n  - id: mine.words\n    op: boolean_word\n"
     "    phase: normalise\n    options:\n      \"true\": [sure, 1]\n", "1]", "mine.words.options.true.1",
     "option 'true': expected a string, got an integer 1"),
    ("a list where a string is wanted", "rules:\n  - id: mine.words\n    op: boolean_word\n"
     "    phase: normalise\n    options:\n      \"true\": sure\n", "sure", "mine.words.options.true",
     "option 'true': expected a list, got a string 'sure'"),
    ("an option for an operation that takes none", "rules:\n  - id: mine.trim\n    op: trim\n"
     "    phase: normalise\n    options: {strip: true}\n", "strip", "mine.trim.options.strip",
     "unknown option 'strip' for operation 'trim', which takes no options"),
]


@pytest.mark.parametrize("case, text, at, field, fragment", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_bad_option_is_refused_with_file_line_column_and_field(tmp_path, case, text, at, field, fragment):
    err, path = _refused(tmp_path, text)
    assert err.source == str(path)
    assert (err.line, err.column) == _place(text, at)
    assert err.field == field
    assert fragment in err.message
    assert str(err).startswith(f"{path}:{err.line}:{err.column}, field {field!r}: ")


def _with_required_option(monkeypatch) -> None:
    """Register, for one test, a normalisation operation with a required option."""
    def needs_mode(rule, node, ctx):
        """A test operation."""
        return None

    declared = Operation(needs_mode, "normalise", options=(
        Option("mode", str, None, "how to go about it", required=True, choices=("fast", "slow")),))
    monkeypatch.setitem(NORMALISE_OPERATIONS, "needs_mode", declared)


@pytest.mark.parametrize("options, at", [("", "- id: mine.needy"), ("    options: {}\n", "options:")])
def test_a_missing_required_option_is_refused(tmp_path, monkeypatch, options, at):
    _with_required_option(monkeypatch)
    text = "rules:\n  - id: mine.needy\n    op: needs_mode\n    phase: normalise\n" + options
    err, path = _refused(tmp_path, text)
    assert (err.source, err.field) == (str(path), "mine.needy.options.mode")
    line, column = _place(text, at)
    assert err.line == line and err.column in (column, column + 2)  # the rule's mapping starts after "- "
    assert err.message == "operation 'needs_mode' needs option 'mode' (how to go about it)"
    _load(tmp_path, text.replace("options: {}", "options: {mode: fast}") if options else
          text + "    options: {mode: slow}\n")
    assert load_rules(tmp_path / "mine.yaml").rules["mine.needy"].options == {"mode": "slow" if not options
                                                                              else "fast"}


def test_the_first_unknown_option_written_is_the_one_named(tmp_path):
    text = PATTERN_RULE + "      zeta: 1\n      ecma_regex: true\n      alpha: 2\n"
    err, _ = _refused(tmp_path, text)
    assert err.field == "mine.pattern.options.zeta" and err.line == _place(text, "zeta")[0]


def test_good_options_load_with_the_defaults_filled_in(tmp_path):
    path = _load(tmp_path, PATTERN_RULE + '      timeout_message: "{path}: {pattern} took over {timeout} s"\n')
    rule = load_rules(path).rules["mine.pattern"]
    assert rule.options == {"timeout_message": "{path}: {pattern} took over {timeout} s", "ecma_regex": False,
                            "too_long_message": None}


# --- the declarations cover the rule files, and the documentation covers the declarations ----------


def test_every_option_a_builtin_rule_file_uses_is_declared():
    used = 0
    for path in sorted(rules_directory().glob("*.yaml")):
        for raw in (load_yaml_file(path) or {}).get("rules") or ():
            operation = operation_of(raw["phase"], raw["op"])
            assert operation is not None, (path.name, raw["id"])
            for name in raw.get("options") or {}:
                used += 1
                assert operation.option(name) is not None, f"{path.name}: {raw['id']} uses undeclared {name!r}"
    assert used >= 29  # the option keys the built-in rules set


def test_every_loaded_rule_holds_exactly_its_operations_declared_options():
    for rule in builtin_rules().rules.values():
        operation = operation_of(rule.phase, rule.op)
        assert set(rule.options) == {option.name for option in operation.options}, rule.id



def test_the_declarations_are_coherent():
    names = set(VALIDATE_OPERATIONS) | set(NORMALISE_OPERATIONS)
    assert not set(VALIDATE_OPERATIONS) & set(NORMALISE_OPERATIONS)
    for phase, registered in REGISTRY.items():
        for name, operation in registered.items():
            assert isinstance(operation, Operation) and operation.phase == phase, name
            assert "path" in operation.message_fields
            assert set(operation.subsumes) <= set(registered) and set(operation.consults) <= names, name
            assert len({o.name for o in operation.options}) == len(operation.options), name
            # a check passes its message fields positionally, in this declared order
            assert set(operation.message_order) == operation.message_fields - {"path"}, name
            assert len(set(operation.message_order)) == len(operation.message_order), name
            for option in operation.options:
                if option.template_fields is not None:
                    assert set(option.template_order) == option.template_fields - {"path"}, (name, option.name)
                    # a template that is not given falls back on the rule's message, filled from the same values
                    assert option.template_fields >= operation.message_fields, (name, option.name)
            assert phase == "normalise" or (operation.changes is None and not operation.changes_with), name
            assert all(operation.option(o) is not None for o in operation.changes_with), name
            for option in operation.options:
                if option.required or option.default is None:
                    continue
                if option.type is bool:
                    assert type(option.default) is bool
                elif option.type is str:
                    assert isinstance(option.default, str)
                else:
                    assert isinstance(option.default, tuple) and all(isinstance(w, str) for w in option.default)
                assert not option.choices or option.default in option.choices


# --- property: checking is total over the declarations ------------------------------------------------

_OPERATIONS = sorted((phase, name) for phase, registered in REGISTRY.items() for name in registered)


def _value_for(option: Option) -> st.SearchStrategy:
    if option.choices:
        return st.sampled_from(option.choices)
    if option.template_fields is not None:
        return st.lists(st.sampled_from(sorted(option.template_fields)), max_size=3).map(
            lambda fields: " ".join(f"{{{f}}}" for f in fields))
    if option.type is bool:
        return st.booleans()
    if option.type is str:
        return st.text(max_size=5)
    return st.lists(st.text(max_size=5), max_size=3)


@st.composite
def _rules_with_options(draw):
    phase, name = draw(st.sampled_from(_OPERATIONS))
    operation = REGISTRY[phase][name]
    chosen = draw(st.lists(st.sampled_from(operation.options), unique=True)) if operation.options else []
    options = {option.name: draw(_value_for(option)) for option in chosen}
    return Rule(id="p.rule", op=name, phase=phase, options=options), operation


@settings(max_examples=150, deadline=None)
@given(_rules_with_options(), st.text(min_size=1, max_size=12))
def test_checking_fills_every_declared_option_keeps_what_is_written_and_refuses_any_other(drawn, stranger):
    rule, operation = drawn
    checked = checked_options(rule, {}, "p.yaml")
    assert set(checked.options) == {option.name for option in operation.options}
    for name, value in rule.options.items():
        assert checked.options[name] == (tuple(value) if isinstance(value, list) else value)
    assert checked_options(checked, {}, "p.yaml") == checked  # a checked rule checks the same
    if operation.option(stranger) is None:
        with pytest.raises(RuleFileError) as info:
            checked_options(attrs.evolve(rule, options={**rule.options, stranger: True}), {}, "p.yaml")
        assert info.value.field == f"p.rule.options.{stranger}" and info.value.source == "p.yaml"


def test_template_problem_agrees_with_the_message_checks():
    assert template_problem("{path}: {value!r:>{width}}", frozenset({"path", "value"}), "x") == (
        "message field {width} is not provided by x; it provides path, value")
    assert template_problem("{path}: {value!x}", None, "x").endswith("has an unknown conversion; use !r, !s or !a")
    assert template_problem("{path}", frozenset({"path"}), "x") is None


# --- interactions: declared data the compiler reads ----------------------------------------------------


def _compiler(profile: str, schema=None) -> tuple[Compiler, object]:
    if schema is None:
        tool = sample_tool()
        root = tool.parameters
    else:
        root, _, _ = read_schema(schema)
        tool = None
    return Compiler(builtin_rules().profile_rules(profile), tool, DEFAULT_LIMITS), root


def test_subsumption_comes_from_the_operations_declaration(monkeypatch):
    rules = builtin_rules().rules
    compiler, root = _compiler("study")
    assert compiler.subsumed == {"study.properties": (rules["study.unknown-args"],)}
    assert compiler.subsumer == {"study.unknown-args": rules["study.properties"]}
    extra_rule = rules["study.unknown-args"]
    extra = VALIDATE_OPERATIONS["additional_properties"].function
    assert extra(extra_rule, root, NodeContext(compiler, True)) is None  # properties reports for it
    undeclared = attrs.evolve(VALIDATE_OPERATIONS["properties"], subsumes=())
    monkeypatch.setitem(VALIDATE_OPERATIONS, "properties", undeclared)
    compiler, root = _compiler("study")
    assert compiler.subsumed == {} and compiler.subsumer == {}
    assert extra(extra_rule, root, NodeContext(compiler, True)) is not None  # so it does its own work


CALLS = [
    {"counterparty": "Acme", "value": 1, "term_months": 2, "colour": "red", "size": 3},
    {"Counterparty": "Acme", "value": -1, "termMonths": 2, "contract_details": {"status": "x", "extra": 1}},
    {"counterparty": 5, "value": True, "term_months": 2.0, "contract_details": []},
]


@pytest.mark.parametrize("profile", ["study", "sdk", "jsonschema"])
def test_subsumption_is_a_shortcut_the_findings_do_not_show(monkeypatch, profile):
    def reports():
        tool = sample_tool()  # a fresh tool: its programs are compiled anew
        return [validate_arguments({"name": tool.name, "arguments": a}, tool, profile=profile).findings
                for a in CALLS]

    declared = reports()
    monkeypatch.setitem(VALIDATE_OPERATIONS, "properties",
                        attrs.evolve(VALIDATE_OPERATIONS["properties"], subsumes=()))
    assert reports() == declared


def test_a_normaliser_asks_only_the_questions_it_declares(monkeypatch):
    assert _compiler("normalized")[0].consulted["normalise.fields"] == {"casefold": True}
    assert _compiler("coerce")[0].consulted["normalise.fields"] == {"casefold": False}
    compiler, root = _compiler("normalized")
    assert compiler.normaliser_of(root, root=True) is not None
    monkeypatch.setitem(NORMALISE_OPERATIONS, "object_fields",
                        attrs.evolve(NORMALISE_OPERATIONS["object_fields"], consults=()))
    # compiled nodes are shared by content under a profile (compiler.SharedNodes); an operation
    # swapped in the registry is not something a rule set's cache expects: start afresh
    builtin_rules().compiled.clear()
    compiler, root = _compiler("normalized")
    assert "normalise.fields" not in compiler.consulted
    with pytest.raises(LookupError, match="asks whether the profile runs 'casefold', which it does not declare"):
        compiler.normaliser_of(root, root=True)


def test_type_gates_and_bounds_are_returned_as_records_not_attributes():
    compiler, root = _compiler("study", {"type": "integer", "minimum": 1, "maximum": 9})
    rules = {r.op: r for r, _ in compiler.validate_rules}
    ctx = NodeContext(compiler, True)
    gate = VALIDATE_OPERATIONS["type"].function(rules["type"], root, ctx)
    low = VALIDATE_OPERATIONS["minimum"].function(rules["minimum"], root, ctx)
    assert type(gate) is TypeGate and int in gate.passing_types and bool not in gate.passing_types
    assert type(low) is Bound and low.limit == 1 and low.bool_is_number is True
    check = compiler.compile_node(root, root=True)
    assert not hasattr(check, "passing_types") and not hasattr(check, "bound")
    out: list = []
    assert check(0, None, out) and [f.message for f in out] == ["$: 0 < minimum 1"]
    assert not check(5, None, []) and check(True, None, [])  # the study compares True as 1
    tool_compiler, tool_root = _compiler("study")
    counterparty = next(p.schema for p in tool_root.properties if p.name == "counterparty")
    string_check = tool_compiler.compile_node(counterparty)
    # a str is Unicode text only after a look: the gate passes none on its type alone, ASCII text after isascii
    assert tool_compiler.passing_types(string_check) == frozenset()
    assert tool_compiler.quick_look(string_check) == (str, str.isascii)


# --- the unknown-tool rule -----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["study", "sdk", "jsonschema"])
def test_the_unknown_tool_finding_is_made_by_its_rule_through_the_registry(monkeypatch, profile):
    (finding,) = validate_arguments({"name": "no_such_tool", "arguments": {}}, sample_toolset(),
                                    profile=profile).findings
    rule = builtin_rules().rules[finding.rule]
    assert rule.op == "unknown_tool" and finding.bucket == "unknown_tool" and finding.path == ()
    assert finding.message == "unknown tool 'no_such_tool'"
    assert finding.source == str(rule.source) and finding.source.startswith("rules/")
    line = int(finding.source.rsplit(":", 1)[1])
    path = rules_directory() / finding.source.split("/", 1)[1].rsplit(":", 1)[0]
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].strip() == f"- id: {rule.id}"
    seen = []
    declared = VALIDATE_OPERATIONS["unknown_tool"]

    def spy(rule):
        seen.append(rule.id)
        return declared.function(rule)

    monkeypatch.setitem(VALIDATE_OPERATIONS, "unknown_tool", attrs.evolve(declared, function=spy))
    validate_arguments({"name": "no_such_tool", "arguments": {}}, sample_toolset(), profile=profile)
    assert seen == [rule.id]


def test_a_user_unknown_tool_rule_gives_its_own_message_and_source(tmp_path):
    path = _load(tmp_path, """\
        rules:
          - id: mine.unknown-tool
            op: unknown_tool
            phase: validate
            bucket: unknown_tool
            message: "{path}: no tool is called {name!r}"
          - id: mine.type
            op: type
            phase: validate
            bucket: type_errors
            message: "{path}: expected {expected}"
        profiles:
          - name: mine
            extends: sdk
            replace: {study.unknown-tool: mine.unknown-tool}
          - name: bare
            rules: [mine.type, study.properties]
        """)
    rules = load_rules(path)
    (finding,) = validate_arguments({"name": "nope", "arguments": {}}, sample_toolset(), profile="mine",
                                    rules=rules).findings
    assert (finding.rule, finding.message, finding.source) == (
        "mine.unknown-tool", "$: no tool is called 'nope'", f"{tmp_path.name}/mine.yaml:2")
    # a validation profile is one with validation rules; without an unknown-tool rule it says so
    assert "bare" in validation_profiles(rules) and "normalized" not in validation_profiles(rules)
    assert validate_arguments({"name": "legal_draft_v3", "arguments": {"counterparty": 1}}, sample_toolset(),
                              profile="bare", rules=rules).type_errors == ["counterparty: expected string"]
    with pytest.raises(UnknownProfileError, match="has no rule for a call that names no tool"):
        validate_arguments({"name": "nope", "arguments": {}}, sample_toolset(), profile="bare", rules=rules)


# --- findings: positional message fields, and which failing calls are normalised ---------------------


def test_every_message_field_reaches_a_user_template_in_any_order(tmp_path):
    """Each operation's checks hand the reporter its fields in their declared order; a user's
    template, and an option's template (``union_message``), may name them in any order."""
    path = _load(tmp_path, """\
        rules:
          - id: mine.type
            op: type
            phase: validate
            bucket: type_errors
            message: "{value!r} at {path} is a {got}, wanted {expected}"
            options: {union_message: "{path}: {got} is none of {expected} ({value})"}
          - id: mine.max-length
            op: max_length
            phase: validate
            bucket: constraint_errors
            message: "{size} > {limit} for {path} ({value})"
          - id: mine.pattern
            op: pattern
            phase: validate
            bucket: constraint_errors
            message: "{pattern} / {value} / {path}"
        profiles:
          - name: mine
            extends: sdk
            replace: {study.type: mine.type, sdk.pattern: mine.pattern, study.max-length: mine.max-length}
        """)
    rules = load_rules(path)
    tool = [{"name": "t", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer"}, "u": {"type": ["integer", "boolean"]},
        "s": {"type": "string", "maxLength": 2, "pattern": "^a"}}}}]
    report = validate_arguments({"name": "t", "arguments": {"n": "x", "u": "y", "s": "bcd"}}, tool,
                                profile="mine", rules=rules)
    assert [f.message for f in report.findings] == [
        "'x' at n is a str, wanted integer", "u: str is none of integer or boolean (y)", "3 > 2 for s (bcd)",
        "^a / bcd / s"]


@pytest.mark.parametrize("message", ["all, reversed", "path alone", "the first only", "the second only"])
@pytest.mark.parametrize("arity", range(6))
@pytest.mark.parametrize("path", [None, (None, "top"), (None, 0), ((None, "a"), 2), (((None, "a"), 0), "b")])
def test_a_reporter_of_any_arity_makes_the_finding_the_packing_reporter_makes(arity, path, message):
    """Reporters of one to three fields take them as plain parameters; the others pack them.
    All make the same finding: the path flattened and written, the template filled, the rule stamped.
    (A message of the path alone, as most of the study's are, is the path's text taken as it is; a
    message that reads only the first fields is filled by a reporter of that many, given them all.)"""
    from toolform_rules.engine import context

    fields = tuple(f"f{i}" for i in range(arity))
    shown = {"all, reversed": fields[::-1], "path alone": (), "the first only": fields[:1],
             "the second only": fields[1:2]}[message]
    rule = attrs.evolve(next(r for r in builtin_rules().profile_rules("sdk") if r.op == "minimum"),
                        message="{path}" if message == "path alone" else
                        "at {path}: " + " ".join("<{%s}>" % f for f in shown))
    values = [f"v{i}" for i in range(arity)]
    made, packed = [], []
    assert context.make_reporter(rule, fields)(made, path, *values) is True
    context._reporter_of_any((rule.id, rule.bucket, str(rule.source)),
                             lambda filled: rule.message.format_map(dict(zip(("path", *fields), filled))))(
        packed, path, *values)
    assert made == packed and len(made) == 1
    (finding,) = made
    assert type(finding) is Finding and finding.severity == "error" and finding.policy is None
    shown_values = [values[fields.index(f)] for f in shown]
    assert finding.message == (format_path(finding.path) if message == "path alone" else
                               "at %s: %s" % (format_path(finding.path), " ".join(f"<{v}>" for v in shown_values)))


@pytest.mark.parametrize("options, repairable", [
    ({}, (float,)),
    ({"sdk.normalise-fields": {"rename": True}}, None),  # renaming a key may repair any value
    ({"sdk.normalise-items": {"untyped_items": "generic"}}, None),
])
def test_a_program_knows_which_values_its_repairing_rules_may_change(options, repairable):
    rules = tuple(attrs.evolve(r, options={**r.options, **options.get(r.id, {})})
                  for r in builtin_rules().profile_rules("sdk"))
    from toolform_rules.engine.compiler import compile_tool

    program = compile_tool(sample_tool(), rules, DEFAULT_LIMITS)
    assert program.normalise_on_failure and program.repairable == repairable
    undeclared = attrs.evolve(NORMALISE_OPERATIONS["integral_float_to_integer"], changes=None)
    assert undeclared.changed_types({}) is None


def test_what_several_repairing_rules_may_change_is_what_any_of_them_may():
    from toolform_rules.engine.compiler import _changes_only

    assert _changes_only([((float,), None), ((str,), None)]) is None  # each changes every value of its types
    assert _changes_only([((float,), float.is_integer)]) is float.is_integer
    either = _changes_only([((float,), float.is_integer), ((str,), None), ((int,), lambda v: v > 9)])
    assert [either(v) for v in (2.0, 2.5, "x", 10, 3)] == [True, False, True, True, False]


def test_a_failing_call_is_normalised_only_when_a_reported_value_holds_what_the_rules_change():
    from toolform_rules.engine.verbs import program_for

    sdk = program_for(sample_toolset().get("legal_draft_v3"), "sdk")
    normalised = []

    def counting(arguments):
        normalised.append(arguments)
        return sdk.normalise(arguments)

    program = attrs.evolve(sdk, normalise=counting)

    def run(arguments):
        del normalised[:]
        report = program.run(arguments)
        assert report == sdk.run(arguments)
        return report, bool(normalised)

    # the seed's invalid call: -5, "ten" and an unknown "red": no float to repair, nothing normalised
    report, repaired = run({"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"})
    assert report.n_errors == 3 and not repaired
    # an integral float where an integer is wanted: normalised, and then it passes
    report, repaired = run({"counterparty": "Acme", "value": 5, "term_months": 12.0})
    assert report.ok and repaired
    # a float that is fine (value is a number) beside an error elsewhere: not normalised
    report, repaired = run({"counterparty": "Acme", "value": 5.5, "term_months": "x"})
    assert report.type_errors and not repaired
    # a float under an argument no rule changes (contract_details holds no integer): passed over
    report, repaired = run({"counterparty": "Acme", "value": 1, "term_months": 1, "contract_details": {"status": 3.0}})
    assert report.n_errors == 1 and not repaired and sdk.repair_keys == ("term_months", "termmonths")
    # ... and one spelled otherwise that resolves to one a rule changes: looked at, repaired
    report, repaired = run({"counterparty": "Acme", "value": 1, "termMonths": 2.0, "colour": 1})
    assert report.unknown_args == ["colour"] and repaired
    # floats with a fraction below a failing object: nothing the rules change (they change integral floats)
    report, repaired = run({"counterparty": "Acme", "value": 1, "term_months": 1,
                            "contract_details": {"status": 3.5, "extra": [0.25]}})
    assert report.n_errors == 2 and not repaired
    # only plain values, none a float: settled without looking at the findings
    report, repaired = run({"counterparty": 7, "value": True, "term_months": None})
    assert report.type_errors and not repaired
    # a valid call is never normalised
    report, repaired = run({"counterparty": "Acme", "value": 5.0, "term_months": 12})
    assert report.ok and not repaired


def test_a_float_below_a_failing_object_is_found_where_a_rule_may_change_it():
    """The look for a float goes down from the reported place: an object missing a field holds an
    integral float where an integer is wanted; it is normalised (and still fails, for the field)."""
    from toolform_rules import load_tools
    from toolform_rules.engine.verbs import program_for

    tool = load_tools([{"name": "t", "parameters": {"type": "object", "properties": {
        "box": {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
                "required": ["s"]},
        "label": {"type": "string"}}}}]).tools[0]
    sdk = program_for(tool, "sdk")
    assert sdk.repair_keys == ("box",)
    normalised = []
    program = attrs.evolve(sdk, normalise=lambda arguments: normalised.append(1) or sdk.normalise(arguments))
    report = program.run({"box": {"n": 2.0}, "label": "x"})
    assert report.missing_required == ["box.s"] and not report.type_errors and normalised
    del normalised[:]
    report = program.run({"box": {"n": 2, "s": "y"}, "label": 2.0})  # a float under "label": passed over
    assert report.type_errors == ["label: expected string, got float"] and not normalised


def test_findings_are_ordered_where_a_rule_in_argument_order_has_a_check_of_its_own():
    """Unknown arguments are listed in argument order.  Where ``properties`` reports them in its
    walk, they come in that order as found, and the program orders nothing; where
    ``additional_properties`` checks an object itself (it has ``patternProperties``), its keys come
    after the walk's, and the program orders them."""
    from toolform_rules import load_tools

    closed = load_tools([{"name": "t", "parameters": {"type": "object", "properties": {
        "o": {"type": "object", "properties": {"k": {"type": "string"}}}}}}]).tools[0]
    opened = load_tools([{"name": "t", "parameters": {"type": "object", "patternProperties": {"^x": {"type": "string"}},
                          "properties": {"o": {"type": "object", "properties": {"k": {"type": "string"}}}}}}]).tools[0]
    arguments = {"colour": 1, "o": {"zz": 1}, "b": 2}
    for profile in ("study", "sdk"):
        for tool, positional in ((closed, frozenset()), (opened, {"study.unknown-args"})):
            report = validate_arguments({"name": "t", "arguments": arguments}, tool, profile=profile)
            assert report.unknown_args == ["colour", "o.zz", "b"], (profile, tool)
            assert tool.programs[profile].positional_rules == positional
            assert tool.programs[profile].late_rules == frozenset()
    patterned = load_tools([{"name": "p", "parameters": {"type": "object", "properties": {
        "s": {"type": "string", "pattern": "^a"}, "n": {"type": "integer"}}}}]).tools[0]
    report = validate_arguments({"name": "p", "arguments": {"s": "b", "n": "x"}}, patterned)
    assert [f.rule for f in report.findings] == ["study.type", "sdk.pattern"]  # the pattern's last, as declared
    assert patterned.programs["sdk"].late_rules == {"sdk.pattern"}
