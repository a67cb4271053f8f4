"""Rule files: every malformed one is a RuleFileError naming file, line and field; the built-in ones load."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from toolform_rules import RuleFileError, builtin_rules, sample_toolset, validate_arguments, validate_instance
from toolform_rules.engine.verbs import validation_profiles
from toolform_rules.engine.rule_files import read_rule_files, rules_directory
from toolform_rules.engine.rules import BUCKETS, PHASES, Profile, Rule, RuleSet
from toolform_rules.yamlsource import load_yaml

# --- helpers ------------------------------------------------------------------------------------

RULE = """\
  - id: t.type
    op: type
    phase: validate
    bucket: type_errors
    message: "{path}: expected {expected}, got {got}"
"""
TRIM = """\
  - id: t.trim
    op: trim
    phase: normalise
"""


def _write(directory: Path, text: str, name: str = "rules.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _line(text: str, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of ``text`` (dedented) holding ``needle`` for the ``occurrence``-th time."""
    seen = 0
    for number, line in enumerate(textwrap.dedent(text).splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} is not in the text")


def _fails(directory: Path, text: str, name: str = "rules.yaml") -> tuple[RuleFileError, Path]:
    path = _write(directory, text, name)
    with pytest.raises(RuleFileError) as info:
        read_rule_files(directory)
    return info.value, path


# --- a good file ----------------------------------------------------------------------------------

def test_a_good_file_loads_with_every_rule_located(tmp_path):
    text = "description: A test file.\nrules:\n" + RULE + TRIM + """\
  - id: t.enum
    op: enum
    phase: validate
    bucket: enum_errors
    message: "{path}: {value!r} not in {members!r}"
    halts: true
    order: 2
    listed: in argument order
    options: {study_equality: true}
    description: Members only.
  - id: t.type2
    op: type
    phase: validate
    bucket: type_errors
    message: "{path}: want {expected}"
profiles:
  - name: base
    description: Types only.
    rules: [t.trim, t.type]
  - name: more
    extends: base
    replace: {t.type: t.type2}
    rules:
      - t.enum
"""
    _write(tmp_path, text)
    ruleset = read_rule_files(tmp_path)
    assert isinstance(ruleset, RuleSet)
    assert list(ruleset.rules) == ["t.type", "t.trim", "t.enum", "t.type2"]
    enum = ruleset.rules["t.enum"]
    assert (enum.op, enum.phase, enum.bucket, enum.halts, enum.order, enum.listed) == (
        "enum", "validate", "enum_errors", True, 2, "in argument order")
    # the options written, and the operation's other declared options at their defaults
    assert enum.options == {"study_equality": True, "null_makes_optional": False, "empty_accepts_all": False}
    assert enum.description == "Members only."
    assert ruleset.rules["t.trim"].bucket is None and ruleset.rules["t.trim"].message is None
    for rule_id, rule in ruleset.rules.items():
        assert str(rule.source) == f"{tmp_path.name}/rules.yaml:{_line(text, f'- id: {rule_id}')}"
    assert [r.id for r in ruleset.profile_rules("base")] == ["t.trim", "t.type"]
    assert [r.id for r in ruleset.profile_rules("more")] == ["t.trim", "t.type2", "t.enum"]
    assert ruleset.profiles["more"] == Profile(name="more", extends="base", rules=("t.enum",),
                                               replace={"t.type": "t.type2"}, source=ruleset.profiles["more"].source)
    assert str(ruleset.profiles["more"].source) == f"{tmp_path.name}/rules.yaml:{_line(text, '- name: more')}"
    assert enum.render(path="x", value="a", members=["b"]) == "x: 'a' not in ['b']"


def test_rules_and_profiles_may_be_spread_over_files(tmp_path):
    _write(tmp_path, "rules:\n" + RULE, "a.yaml")
    _write(tmp_path, "profiles:\n  - name: p\n    rules: [t.type]\n", "b.yaml")
    _write(tmp_path, "", "c.yaml")  # an empty file holds nothing
    _write(tmp_path, "rules:\nprofiles:\n", "d.yaml")  # empty lists
    (tmp_path / "below").mkdir()
    _write(tmp_path / "below", "bogus: file", "x.yaml")  # not read: only the directory itself
    _write(tmp_path, "bogus: file", "notes.yml")  # not read: only *.yaml
    ruleset = read_rule_files(tmp_path)
    assert list(ruleset.rules) == ["t.type"] and ruleset.profile_names() == ["p"]
    assert str(ruleset.profiles["p"].source) == f"{tmp_path.name}/b.yaml:2"


def test_yaml_merge_keys_may_override(tmp_path):
    text = """\
    common: &common
      phase: validate
      bucket: type_errors
    rules:
      - <<: *common
        id: t.type
        op: type
        message: "{path}"
        bucket: constraint_errors
    """
    _write(tmp_path, text.replace("common: &common", "x-common: &common"))
    with pytest.raises(RuleFileError) as info:  # an unknown top-level key, even for an anchor
        read_rule_files(tmp_path)
    assert info.value.field == "x-common"
    _write(tmp_path, "rules:\n  - &r\n    id: t.type\n    op: type\n    phase: validate\n"
                     "    bucket: type_errors\n    message: '{path}'\n  - <<: *r\n    id: t.type2\n")
    ruleset = read_rule_files(tmp_path)
    assert ruleset.rules["t.type2"].op == "type" and ruleset.rules["t.type2"].bucket == "type_errors"
    assert ruleset.rules["t.type2"].source.line == 8


# --- malformed files: one table -------------------------------------------------------------------

def _rule(*lines: str, rid: str = "x") -> str:
    return f"rules:\n  - id: {rid}\n" + "".join(f"    {line}\n" for line in lines)


VALID = ("op: type", "phase: validate", "bucket: type_errors", "message: '{path}'")

# (case, file text, needle for the expected line (occurrence), expected field, message fragment)
MALFORMED: list[tuple[str, str, tuple[str, int], str | None, str]] = [
    ("unknown top-level key", "rules:\n" + RULE + "rulez: []\n", ("rulez:", 1), "rulez", "unknown key 'rulez'"),
    ("unknown key in a rule", _rule(*VALID, "colour: red"), ("colour:", 1), "x.colour", "unknown key 'colour'"),
    ("unknown keys in a rule: the first written", _rule(*VALID, "zeta: 1", "alpha: 2"), ("zeta:", 1), "x.zeta",
     "unknown key"),
    ("a rule claims a source", _rule(*VALID, "source: elsewhere.yaml:1"), ("source:", 1), "x.source",
     "unknown key 'source'"),
    ("missing id", "rules:\n  - op: type\n    phase: validate\n", ("- op: type", 1), "rules[0].id",
     "required key 'id' is missing"),
    ("missing id, second rule", "rules:\n" + RULE + "  - op: trim\n    phase: normalise\n", ("- op: trim", 1),
     "rules[1].id", "required key 'id' is missing"),
    ("missing op", _rule("phase: validate"), ("- id: x", 1), "x.op", "required key 'op' is missing"),
    ("missing phase", _rule("op: type"), ("- id: x", 1), "x.phase", "required key 'phase' is missing"),
    ("id not a string", "rules:\n  - id: [x]\n    op: trim\n    phase: normalise\n", ("- id:", 1), "rules[0].id",
     "expected a string, got a list ['x']"),
    ("id a number", "rules:\n  - id: 5\n    op: trim\n    phase: normalise\n", ("- id:", 1), "rules[0].id",
     "expected a string, got an integer 5"),
    ("unknown op", _rule("op: frobnicate", *VALID[1:]), ("op: frobnicate", 1), "x.op",
     "operation 'frobnicate' is not registered for phase 'validate'"),
    ("op of the other phase", _rule("op: trim", *VALID[1:]), ("op: trim", 1), "x.op",
     "operation 'trim' is not registered for phase 'validate'"),
    ("validation op in the normalise phase", _rule("op: type", "phase: normalise"), ("op: type", 1), "x.op",
     "operation 'type' is not registered for phase 'normalise'"),
    ("bad phase", _rule("op: type", "phase: check", *VALID[2:]), ("phase: check", 1), "x.phase",
     "phase must be one of normalise, validate, not 'check'"),
    ("bad bucket", _rule("op: type", "phase: validate", "bucket: type_error", "message: '{path}'"),
     ("bucket:", 1), "x.bucket", "bucket must be one of unknown_tool, missing_required"),
    ("bad listed", _rule(*VALID, "listed: sorted"), ("listed:", 1), "x.listed",
     "listed must be one of as found, in argument order, not 'sorted'"),
    ("halts is a string", _rule(*VALID, "halts: 'false'"), ("halts:", 1), "x.halts",
     "expected a boolean (true or false), got a string 'false'"),
    ("order is a string", _rule(*VALID, "order: '3'"), ("order:", 1), "x.order", "expected an integer, got a string"),
    ("order is a float", _rule(*VALID, "order: 1.5"), ("order:", 1), "x.order", "expected an integer, got a number"),
    ("options not a mapping", _rule(*VALID, "options: [a]"), ("options:", 1), "x.options",
     "expected a mapping, got a list"),
    ("message not a string", _rule(*VALID[:3], "message: [a]"), ("message:", 1), "x.message",
     "expected a string, got a list"),
    ("validation rule without a message", _rule(*VALID[:3]), ("- id: x", 1), "x.message",
     "a validation rule needs a bucket and a message; this one has no message"),
    ("validation rule without a bucket", _rule(*VALID[:2], VALID[3]), ("- id: x", 1), "x.bucket",
     "a validation rule needs a bucket and a message; this one has no bucket"),
    ("template field the op does not provide", _rule(*VALID[:3], "message: '{path}: {members}'"),
     ("message:", 1), "x.message", "message field {members} is not provided by operation 'type'; it provides "
                                   "expected, got, path, value"),
    ("template field in a normalisation rule", _rule("op: trim", "phase: normalise", "message: '{value}'"),
     ("message:", 1), "x.message", "message field {value} is not provided by operation 'trim'; it provides path"),
    ("template attribute access", _rule(*VALID[:3], "message: '{value.__class__}'"), ("message:", 1), "x.message",
     "message field {value.__class__} must be a plain name (no attribute access or indexing)"),
    ("template indexing", _rule(*VALID[:3], "message: '{value[0]}'"), ("message:", 1), "x.message",
     "message field {value[0]} must be a plain name"),
    ("template attribute access in a format spec", _rule(*VALID[:3], "message: '{value:{value.__class__}}'"),
     ("message:", 1), "x.message", "message field {value.__class__} must be a plain name"),
    ("template positional field", _rule(*VALID[:3], "message: '{} {0}'"), ("message:", 1), "x.message",
     "message field {} must be a plain name"),
    ("template unknown conversion", _rule(*VALID[:3], "message: '{value!x}'"), ("message:", 1), "x.message",
     "message field {value!x} has an unknown conversion"),
    ("template unbalanced", _rule(*VALID[:3], "message: '{value'"), ("message:", 1), "x.message",
     "message template is malformed"),
    ("rules not a list", "rules: 5\n", ("rules:", 1), "rules", "expected a list, got an integer 5"),
    ("rules a mapping", "rules:\n  id: x\n", ("rules:", 1), "rules", "expected a list, got a mapping"),
    ("a rule that is a string", "rules:\n" + RULE + "  - t.enum\n", ("- t.enum", 1), "rules[1]",
     "rules[1] must be a mapping, got str 't.enum'"),
    ("profile not a mapping", "rules:\n" + RULE + "profiles:\n  - base\n", ("- base", 1), "profiles[0]",
     "profiles[0] must be a mapping, got str 'base'"),
    ("profile without a name", "rules:\n" + RULE + "profiles:\n  - rules: [t.type]\n", ("- rules:", 1),
     "profiles[0].name", "required key 'name' is missing"),
    ("unknown key in a profile", "rules:\n" + RULE + "profiles:\n  - name: p\n    rulez: [t.type]\n",
     ("rulez:", 1), "p.rulez", "unknown key 'rulez'"),
    ("profile rules a string", "rules:\n" + RULE + "profiles:\n  - name: p\n    rules: t.type\n", ("rules: t", 1),
     "p.rules", "expected a list, got a string 't.type'"),
    ("profile replace a list", "rules:\n" + RULE + "profiles:\n  - name: p\n    replace: [t.type]\n",
     ("replace:", 1), "p.replace", "expected a mapping, got a list"),
    ("profile names an unknown rule", "rules:\n" + RULE + "profiles:\n  - name: p\n    rules: [t.type, t.enum]\n",
     ("rules: [", 1), "p.rules", "profile 'p' names unknown rule 't.enum'"),
    ("profile names an unknown rule, block list",
     "rules:\n" + RULE + "profiles:\n  - name: p\n    rules:\n      - t.type\n      - t.enum\n",
     ("- t.enum", 1), "p.rules", "profile 'p' names unknown rule 't.enum'"),
    ("profile extends an unknown profile",
     "rules:\n" + RULE + "profiles:\n  - name: p\n    rules: [t.type]\n  - name: q\n    extends: r\n",
     ("extends: r", 1), "q.extends", "profile 'q' extends unknown profile 'r'"),
    ("profile extends itself", "rules:\n" + RULE + "profiles:\n  - name: p\n    extends: p\n", ("extends: p", 1),
     "p.extends", "profile 'p' extends itself: p -> p"),
    ("a cycle of extends",
     "rules:\n" + RULE + "profiles:\n  - name: p\n    extends: q\n  - name: q\n    extends: r\n"
     "  - name: r\n    extends: p\n", ("extends: q", 1), "p.extends", "p -> q -> r -> p"),
    ("replace of a rule the base lacks",
     "rules:\n" + RULE + TRIM + "profiles:\n  - name: base\n    rules: [t.type]\n  - name: p\n    extends: base\n"
     "    replace:\n      t.trim: t.type\n", ("replace:", 1), "p.replace",
     "profile 'p' replaces 't.trim', which its base does not have"),
    ("replace without a base", "rules:\n" + RULE + TRIM + "profiles:\n  - name: p\n    replace: {t.type: t.trim}\n",
     ("replace:", 1), "p.replace", "replaces 't.type', which its base does not have"),
    ("replace with an unknown rule",
     "rules:\n" + RULE + "profiles:\n  - name: base\n    rules: [t.type]\n  - name: p\n    extends: base\n"
     "    replace: {t.type: t.nope}\n", ("replace: {", 1), "p.replace",
     "profile 'p' replaces a rule with unknown rule 't.nope'"),
    ("profile declared twice", "rules:\n" + RULE + "profiles:\n  - name: p\n  - name: p\n", ("- name: p", 2),
     "p.name", "profile 'p' is declared twice (first at "),
    ("duplicate YAML key in a rule", _rule(*VALID, "op: enum"), ("op: enum", 1), "op",
     "key 'op' is given twice in one mapping"),
    ("duplicate YAML key at the top", "rules: []\nprofiles: []\nrules: []\n", ("rules:", 2), "rules",
     "key 'rules' is given twice"),
    ("invalid YAML", "rules:\n  - id: x\n   op: type\n", ("op: type", 1), None, "not valid YAML"),
    ("invalid YAML: unclosed flow list", "profiles:\n  - name: p\n    rules: [a, b\n  - name: q\n", ("name: q", 1),
     None, "not valid YAML: while parsing a flow sequence (from line 3, column 12): expected ',' or ']'"),
    ("a tab for indentation", "rules:\n\t- id: x\n", ("- id: x", 1), None, "not valid YAML"),
    ("two YAML documents", "rules: []\n---\nprofiles: []\n", ("---", 1), None, "not valid YAML"),
    ("a file that is a list", "- id: x\n  op: type\n", ("- id: x", 1), None,
     "a rule file is a mapping with 'rules' and/or 'profiles'"),
]


@pytest.mark.parametrize("case, text, needle, field, fragment", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_rule_files_are_located(tmp_path, case, text, needle, field, fragment):
    err, path = _fails(tmp_path, text)
    assert err.source == str(path)
    assert err.line == _line(text, *needle)
    assert err.field == field
    assert fragment in err.message
    assert str(err).startswith(f"{path}:{err.line}")
    if field is not None:
        assert f"field {field!r}" in str(err)


def test_a_duplicate_rule_id_names_the_first_declaration(tmp_path):
    text = "rules:\n" + RULE + TRIM + RULE
    err, path = _fails(tmp_path, text)
    first, second = _line(text, "- id: t.type", 1), _line(text, "- id: t.type", 2)
    assert (err.source, err.line, err.field) == (str(path), second, "t.type.id")
    assert err.message == f"rule id 't.type' is declared twice (first at {tmp_path.name}/rules.yaml:{first})"


def test_a_duplicate_rule_id_across_files(tmp_path):
    _write(tmp_path, "rules:\n" + RULE, "a.yaml")
    err, path = _fails(tmp_path, "rules:\n" + TRIM + RULE, "b.yaml")
    assert (err.source, err.line, err.field) == (str(path), 5, "t.type.id")
    assert f"(first at {tmp_path.name}/a.yaml:2)" in err.message


def test_a_profile_error_names_the_file_of_the_profile(tmp_path):
    _write(tmp_path, "rules:\n" + RULE, "a.yaml")
    err, path = _fails(tmp_path, "# profiles\nprofiles:\n  - name: p\n    rules: [t.type, t.gone]\n", "b.yaml")
    assert (err.source, err.line, err.field) == (str(path), 4, "p.rules")


@pytest.mark.parametrize("tag", [
    '!!python/object/apply:os.system ["touch {marker}"]',
    '!!python/object/apply:subprocess.check_call [["touch", "{marker}"]]',
    "!!python/object/new:os.system [touch {marker}]",
    "!!python/name:os.system",
    "!!python/module:os",
])
@pytest.mark.parametrize("where", ["top", "rule id", "option"])
def test_yaml_tags_that_would_construct_python_objects_are_refused(tmp_path, tag, where):
    marker = tmp_path / "executed"
    tag = tag.format(marker=marker)
    text = {
        "top": f"{tag}\n",
        "rule id": f"rules:\n  - id: {tag}\n    op: trim\n    phase: normalise\n",
        "option": f"rules:\n  - id: x\n    op: trim\n    phase: normalise\n    options:\n      k: {tag}\n",
    }[where]
    err, path = _fails(tmp_path, text)
    assert err.source == str(path)
    assert err.line == _line(text, "!!python")
    assert "not valid YAML: could not determine a constructor for the tag" in err.message
    assert not marker.exists()  # nothing ran


def test_yaml_nested_too_deeply(tmp_path):
    err, path = _fails(tmp_path, "rules: " + "[" * 5000 + "]" * 5000 + "\n")
    assert err.source == str(path) and "nested too deeply" in err.message


def test_a_file_that_is_not_utf8(tmp_path):
    (tmp_path / "rules.yaml").write_bytes("description: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(RuleFileError) as info:
        read_rule_files(tmp_path)
    assert info.value.source == str(tmp_path / "rules.yaml") and "not UTF-8" in info.value.message


def test_a_missing_directory(tmp_path):
    with pytest.raises(RuleFileError) as info:
        read_rule_files(tmp_path / "nowhere")
    assert info.value.source == str(tmp_path / "nowhere")
    assert "no such rule file or folder of rule files" in str(info.value)


def test_duplicate_keys_are_found_by_the_yaml_loader_with_line_and_column():
    with pytest.raises(RuleFileError) as info:
        load_yaml("a: 1\nb:\n  c: 2\n  c: 3\n", source="x.yaml")
    assert (info.value.source, info.value.line, info.value.column, info.value.field) == ("x.yaml", 4, 3, "c")


# --- the built-in rules ---------------------------------------------------------------------------

def test_the_built_in_rules_load_and_every_profile_resolves():
    ruleset = builtin_rules()
    assert ruleset is builtin_rules()  # loaded once
    fresh = read_rule_files(rules_directory())
    assert list(fresh.rules) == list(ruleset.rules) and fresh.profile_names() == ruleset.profile_names()
    assert {"study", "sdk", "jsonschema"} <= set(ruleset.profile_names())
    for name in ruleset.profile_names():
        rules = ruleset.profile_rules(name)
        assert rules and all(isinstance(rule, Rule) for rule in rules)
        assert all(rule.phase in PHASES and (rule.bucket is None or rule.bucket in BUCKETS) for rule in rules)
    for name in validation_profiles():
        assert any(rule.phase == "validate" for rule in ruleset.profile_rules(name))


def _declared_at(source: str) -> str:
    """The text of the line a finding's or rule's ``source`` (``rules/study.yaml:27``) names."""
    match = re.fullmatch(r"rules/([\w.-]+\.yaml):(\d+)", source)
    assert match, f"not a rules/<file>:<line> source: {source!r}"
    lines = (rules_directory() / match[1]).read_text(encoding="utf-8").splitlines()
    return lines[int(match[2]) - 1]


def test_every_built_in_rule_source_points_at_its_id():
    for rule_id, rule in builtin_rules().rules.items():
        assert _declared_at(str(rule.source)).strip() == f"- id: {rule_id}", rule_id


# Calls that make every bucket fire, in every validation profile.
CALLS = [
    {"name": "no_such_tool", "arguments": {}},
    {"name": "legal_draft_v3", "arguments": {}},
    {"name": "legal_draft_v3", "arguments": {"counterparty": 5, "value": -1, "term_months": 1000, "colour": "red",
                                             "auto_renew": "maybe", "contract_details": {"status": "lost"}}},
    {"name": "LegalDraftV3", "arguments": {"counterparty": "", "value": "ten", "term_months": 1.5,
                                           "contract_details": {"contract_id": 7, "status": "DRAFT", "x": 1}}},
    {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 0, "term_months": 0,
                                             "contract_details": "none"}},
]
SCHEMAS = [  # for the rules the sample tool does not reach
    ({"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": True, "items": {"type": "integer"},
      "contains": {"const": 0}}, [1, 1, 1, 1]),
    ({"type": "object", "minProperties": 2, "maxProperties": 2, "propertyNames": {"maxLength": 1},
      "dependentRequired": {"a": ["b"]}, "patternProperties": {"^x": {"type": "string"}},
      "additionalProperties": False}, {"a": 1, "xy": 2, "zzz": 3}),
    ({"anyOf": [{"type": "string"}, {"type": "null"}], "not": {"const": 3}}, 3),
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, 4),
    ({"allOf": [{"minimum": 5}], "multipleOf": 2, "exclusiveMaximum": 1, "exclusiveMinimum": 9}, 3),
    ({"type": "string", "minLength": 3, "maxLength": 1, "pattern": "^a", "enum": ["abc"]}, "zz"),
    ({"prefixItems": [{"type": "string"}], "items": False}, [1, 2]),
    ({"if": {"type": "integer"}, "then": {"minimum": 10}, "else": False}, 3),
    ({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}, 1),
    (False, 1),
]


def test_every_finding_source_points_at_the_rule_that_made_it():
    findings = []
    for profile in validation_profiles():
        for call in CALLS:
            findings.extend(validate_arguments(call, sample_toolset(), profile=profile).findings)
        for schema, instance in SCHEMAS:
            findings.extend(validate_instance(instance, schema, profile=profile).findings)
    assert len({f.bucket for f in findings}) == len(BUCKETS)  # every bucket was reached
    assert len({f.rule for f in findings}) >= 30
    for finding in findings:
        assert finding.rule in builtin_rules().rules
        assert finding.source == str(builtin_rules().rules[finding.rule].source)
        assert _declared_at(finding.source).strip() == f"- id: {finding.rule}", finding
