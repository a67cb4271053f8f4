"""The example policies of rules/examples/ and the JSON Schema of policy files, docs/policy.schema.json.

Each example loads cleanly against its tools and passes every test it carries (inline,
and in its ``<stem>_test.yaml``); every constraint fires in at least one of them.  The
schema accepts every example file, refuses the mistakes the loader refuses, and names
exactly the fields of the attrs classes the loader structures, so the two cannot drift.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
import yaml

from toolform_rules import load_policy, load_tools, validate_arguments
from toolform_rules.convert import structure
from toolform_rules.errors import PolicyError, RuleFileError
from toolform_rules.policy.document import (ON_ERROR, SEVERITIES, ConstraintSpec, ExpectSpec, PolicyDocument,
                                          PolicyTestSpec, TestCallSpec, TestDocument)
from toolform_rules.engine.rules import BUCKETS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "rules" / "examples"
SCHEMA_PATH = ROOT / "docs" / "policy.schema.json"
POLICIES = {"payments": "payments_tools.json", "email_recipients": "email_tools.json",
            "filesystem_paths": "filesystem_tools.json", "contracts": "contracts_tools.json"}


def run_policy_tests(policy_path: Path) -> tuple[list[str], set[str]]:
    """Run a policy's tests (inline and in its ``<stem>_test.yaml``): the failures, and every id that fired.

    A stand-in for ``toolform-rules test`` with the same semantics: ``ok`` is the whole
    report's verdict (profile sdk, plus the policy's errors; warnings never fail),
    ``fired`` is exactly the set of this policy's constraints that fire, errors and
    warnings alike, and ``not_fired`` must not fire.
    """
    policy = load_policy(policy_path)
    assert policy.toolset is not None, f"{policy_path.name} names no toolset"
    suites = [(policy_path.parent / policy.toolset, [spec for spec, _ in policy.tests])]
    sibling = policy_path.with_name(f"{policy_path.stem}_test.yaml")
    if sibling.exists():
        document = structure(yaml.safe_load(sibling.read_text(encoding="utf-8")), TestDocument)
        assert (sibling.parent / (document.policy or policy_path.name)).resolve() == policy_path.resolve()
        toolset = sibling.parent / document.toolset if document.toolset else policy_path.parent / policy.toolset
        suites.append((toolset, list(document.tests)))
    failures: list[str] = []
    everything_fired: set[str] = set()
    for toolset, specs in suites:
        tools = load_tools(str(toolset))
        for spec in specs:
            call = {"name": spec.call.name, "arguments": spec.call.arguments}
            report = validate_arguments(call, tools, policy=policy)
            fired = {f.rule for f in (*report.findings, *report.warnings) if f.policy is not None}
            everything_fired |= fired
            wrong = []
            if spec.expect.ok is not None and report.ok != spec.expect.ok:
                wrong.append(f"ok is {report.ok}, expected {spec.expect.ok}")
            if spec.expect.fired is not None and fired != set(spec.expect.fired):
                wrong.append(f"fired {sorted(fired)}, expected {sorted(spec.expect.fired)}")
            if fired & set(spec.expect.not_fired):
                wrong.append(f"fired {sorted(fired & set(spec.expect.not_fired))}, listed in not_fired")
            if wrong:
                messages = [f"{f.rule}: {f.message}" for f in (*report.findings, *report.warnings)]
                failures.append(f"{spec.name or call}: {'; '.join(wrong)} (findings: {messages})")
    return failures, everything_fired


# --- the examples --------------------------------------------------------------------------------

@pytest.mark.parametrize("stem", POLICIES)
def test_example_loads_cleanly_against_its_tools(stem: str) -> None:
    tools_path = EXAMPLES / POLICIES[stem]
    policy = load_policy(EXAMPLES / f"{stem}.yaml", tools=str(tools_path))
    assert policy.toolset == POLICIES[stem]
    assert policy.constraints


@pytest.mark.parametrize("stem", POLICIES)
def test_every_test_of_the_example_passes(stem: str) -> None:
    failures, _ = run_policy_tests(EXAMPLES / f"{stem}.yaml")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("stem", POLICIES)
def test_every_constraint_of_the_example_fires_in_some_test(stem: str) -> None:
    policy = load_policy(EXAMPLES / f"{stem}.yaml")
    _, fired = run_policy_tests(EXAMPLES / f"{stem}.yaml")
    assert {c.id for c in policy.constraints} - fired == set()


def test_the_examples_show_what_they_are_meant_to_show() -> None:
    documents = {stem: yaml.safe_load((EXAMPLES / f"{stem}.yaml").read_text(encoding="utf-8")) for stem in POLICIES}
    constraints = [c for d in documents.values() for c in d["constraints"]]
    assert any(c.get("severity") == "warning" for c in constraints)
    assert any(c.get("on_error") == "skip" and c.get("description") for c in constraints)
    assert any("when" in c for c in constraints)
    assert any(any("*" in t for t in c.get("tools", ())) for c in constraints)
    assert documents["email_recipients"]["include"] == ["common.yaml"]
    assert documents["email_recipients"]["mask"] == ["args.body"]
    assert (EXAMPLES / "email_recipients_test.yaml").exists() and (EXAMPLES / "filesystem_paths_test.yaml").exists()
    # the included list is really merged in
    assert "corp_domains" in load_policy(EXAMPLES / "email_recipients.yaml").lists


def test_a_masked_value_is_not_in_the_findings_messages() -> None:
    policy = load_policy(EXAMPLES / "email_recipients.yaml")
    tools = load_tools(str(EXAMPLES / "email_tools.json"))
    call = {"name": "send_email", "arguments": {"to": ["dana@partner.example"], "subject": "Contract",
                                                "body": "CONFIDENTIAL: the price is 4.2M"}}
    report = validate_arguments(call, tools, policy=policy)
    assert report.ok and [w.rule for w in report.warnings] == ["email.confidential-outside"]
    assert "4.2M" not in report.warnings[0].message
    assert policy.mask == (("body",),)


def test_a_findings_source_is_the_constraints_file_and_line() -> None:
    policy = load_policy(EXAMPLES / "email_recipients.yaml")
    tools = load_tools(str(EXAMPLES / "email_tools.json"))
    report = validate_arguments({"name": "send_email", "arguments": {"to": ["eve@evil.example"], "subject": "x",
                                                                     "body": "x"}}, tools, policy=policy)
    (finding,) = report.findings
    text = (EXAMPLES / "email_recipients.yaml").read_text(encoding="utf-8").split("\n")
    file, line = finding.source.rsplit(":", 1)
    assert Path(file).name == "email_recipients.yaml"
    assert text[int(line) - 1].strip() == "- id: email.recipients-allowed"
    assert finding.policy is not None and (finding.policy.name, finding.policy.version) == ("email-recipients", 3)
    assert finding.policy.digest == policy.digest and len(policy.digest) == 64


# --- the schema ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_is_draft_2020_12(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_file_fits_the_schema(validator: jsonschema.Draft202012Validator, path: Path) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(yaml.safe_load(path.read_text(
        encoding="utf-8")))]
    assert not errors, errors


def test_every_example_file_names_the_schema_for_editors() -> None:
    for path in EXAMPLES.glob("*.yaml"):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        assert first == "# yaml-language-server: $schema=../../docs/policy.schema.json", path.name
        assert (path.parent / "../../docs/policy.schema.json").resolve() == SCHEMA_PATH


_POLICY = {"policy": "p", "constraints": [{"id": "p.c", "check": "args.x > 0"}]}
_TEST = {"call": {"name": "t", "arguments": {"x": 1}}, "expect": {"ok": True}}


def _with(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``document`` with the value at ``path`` set (or removed, for ``...``)."""
    copy = json.loads(json.dumps(document))
    node = copy
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


BAD_POLICIES = {
    "unknown top-level key": _with(_POLICY, ("rules",), []),
    "no policy name": _with(_POLICY, ("policy",), ...),
    "a policy name with a space": _with(_POLICY, ("policy",), "my policy"),
    "version true": _with(_POLICY, ("version",), True),
    "lists of a scalar": _with(_POLICY, ("lists",), {"payees": "alice@corp.example"}),
    "constraint without check": _with(_POLICY, ("constraints", 0, "check"), ...),
    "constraint with an unknown key": _with(_POLICY, ("constraints", 0, "level"), "high"),
    "severity fatal": _with(_POLICY, ("constraints", 0, "severity"), "fatal"),
    "bucket that is not one of the six": _with(_POLICY, ("constraints", 0, "bucket"), "policy_errors"),
    "on_error ignore": _with(_POLICY, ("constraints", 0, "on_error"), "ignore"),
    "tools as one string": _with(_POLICY, ("constraints", 0, "tools"), "send_payment"),
    "check as a number": _with(_POLICY, ("constraints", 0, "check"), 1),
    "when as a list": _with(_POLICY, ("constraints", 0, "when"), ["args.x > 0"]),
    "an id with a space": _with(_POLICY, ("constraints", 0, "id"), "p c"),
    "a test without expect": _with(_POLICY, ("tests",), [_with(_TEST, ("expect",), ...)]),
    "expect with a misspelt key": _with(_POLICY, ("tests",), [_with(_TEST, ("expect", "fires"), ["p.c"])]),
    "ok as a string": _with(_POLICY, ("tests",), [_with(_TEST, ("expect", "ok"), "yes")]),
    "call arguments as a list": _with(_POLICY, ("tests",), [_with(_TEST, ("call", "arguments"), [1])]),
}
BAD_TEST_FILES = {
    "a test file with an unknown key": {"tests": [_TEST], "tools": "tools.json"},
    "a test file without tests": {"toolset": "tools.json"},
    "a test in a test file without a call": {"tests": [_with(_TEST, ("call",), ...)]},
}


@pytest.mark.parametrize("document", BAD_POLICIES.values(), ids=BAD_POLICIES.keys())
def test_the_schema_and_the_loader_both_refuse_a_bad_policy(validator: jsonschema.Draft202012Validator,
                                                            document: dict[str, Any]) -> None:
    assert not validator.is_valid(document)
    with pytest.raises(PolicyError):
        load_policy(json.dumps(document))


@pytest.mark.parametrize("document", BAD_TEST_FILES.values(), ids=BAD_TEST_FILES.keys())
def test_the_schema_and_the_loader_both_refuse_a_bad_test_file(validator: jsonschema.Draft202012Validator,
                                                               document: dict[str, Any]) -> None:
    assert not validator.is_valid(document)
    with pytest.raises(RuleFileError):
        structure(document, TestDocument)


def test_the_good_shapes_the_bad_ones_start_from_fit_the_schema(validator: jsonschema.Draft202012Validator) -> None:
    assert validator.is_valid(_POLICY) and validator.is_valid(_with(_POLICY, ("tests",), [_TEST]))
    assert validator.is_valid({"tests": [_TEST]})
    load_policy(json.dumps(_with(_POLICY, ("tests",), [_TEST])))


def test_a_yaml_boolean_is_an_expression_for_both(validator: jsonschema.Draft202012Validator) -> None:
    document = _with(_POLICY, ("constraints", 0, "check"), False)
    assert validator.is_valid(document)
    assert [f.rule for f in load_policy(json.dumps(document)).evaluate("t", {})] == ["p.c"]


def test_the_schema_and_the_loader_both_refuse_an_empty_tools_list(
        validator: jsonschema.Draft202012Validator) -> None:
    """``tools: []`` would apply the constraint to no tool at all: a mistake both refuse."""
    document = _with(_POLICY, ("constraints", 0, "tools"), [])
    assert not validator.is_valid(document)
    with pytest.raises(PolicyError, match="tools must name at least one tool"):
        load_policy(json.dumps(document))


SCHEMA_CLASSES = {"policyFile": PolicyDocument, "constraint": ConstraintSpec, "test": PolicyTestSpec,
                  "call": TestCallSpec, "expect": ExpectSpec, "testFile": TestDocument}


@pytest.mark.parametrize("definition", SCHEMA_CLASSES)
def test_the_schema_names_exactly_the_loaders_fields(schema: dict[str, Any], definition: str) -> None:
    cls = SCHEMA_CLASSES[definition]
    part = schema["$defs"][definition]
    fields = attrs.fields(cls)
    assert set(part["properties"]) == {f.name for f in fields}
    assert set(part.get("required", ())) == {f.name for f in fields if f.default is attrs.NOTHING}
    assert part["additionalProperties"] is False


def test_the_schemas_enums_are_the_loaders(schema: dict[str, Any]) -> None:
    properties = schema["$defs"]["constraint"]["properties"]
    assert properties["severity"]["enum"] == list(SEVERITIES)
    assert properties["on_error"]["enum"] == list(ON_ERROR)
    assert properties["bucket"]["enum"] == list(BUCKETS)


def test_every_property_of_the_schema_is_described(schema: dict[str, Any]) -> None:
    undescribed = [f"{name}.{key}" for name, part in schema["$defs"].items()
                   for key, value in part.get("properties", {}).items() if not value.get("description")]
    assert not undescribed
    assert all(part.get("description") for part in schema["$defs"].values())


def test_the_runner_passes_every_example_and_covers_every_constraint() -> None:
    """``toolform-rules test rules/examples``: the real runner agrees with the stand-in above."""
    from toolform_rules.cli import main
    from toolform_rules.policy.testing import run_tests

    run = run_tests([EXAMPLES])
    assert run.ok, run.render()
    expected = sum(len(run_policy_tests(EXAMPLES / f"{stem}.yaml")[0]) == 0 for stem in POLICIES)
    assert expected == len(POLICIES)
    covered = {c.policy: c for c in run.coverage}
    for stem in POLICIES:
        policy = load_policy(EXAMPLES / f"{stem}.yaml")
        assert covered[policy.name].never_exercised == [] and covered[policy.name].never_fired == []
    assert main(["test", str(EXAMPLES), "--require-coverage"]) == 0
