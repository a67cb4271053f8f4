"""A user's own rule files: load_rules(*paths) gives the built-in profiles and the user's,
a user profile extends a built-in one, and rules= reaches every verb and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolform_rules import (Limits, RuleFileError, RuleSet, UnknownProfileError, builtin_rules, load_rules,
                            load_tools, normalize_call, parse_reply, sample_tool, sample_toolset, validate_arguments,
                            validate_call, validate_instance)
from toolform_rules.engine.verbs import COMPILED_SCHEMAS, CompiledSchemas

TEAM = """\
# The team's profile: the SDK's rules, multipleOf checked too, and our own wording for minimum.
rules:
  - id: team.multiple-of
    op: multiple_of
    phase: validate
    bucket: constraint_errors
    message: "{path}: {value} is not a multiple of {limit}"
  - id: team.minimum
    op: minimum
    phase: validate
    bucket: constraint_errors
    message: "{path} must be at least {limit} (got {value})"
profiles:
  - name: team
    description: sdk, with multipleOf and our minimum message.
    extends: sdk
    replace: {study.minimum: team.minimum}
    rules: [team.multiple-of]
"""

STEPPED = [{"name": "book", "parameters": {"type": "object", "properties": {
    "seats": {"type": "integer", "minimum": 1, "multipleOf": 2}}, "required": ["seats"]}}]


@pytest.fixture()
def team(tmp_path: Path) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(TEAM, encoding="utf-8")
    return path


def _line(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_user_profile_extends_a_builtin_one(team: Path) -> None:
    rules = load_rules(team)
    assert isinstance(rules, RuleSet) and set(builtin_rules().profiles) < set(rules.profiles)
    assert [r.id for r in rules.profile_rules("team")] == [
        r.id if r.id != "study.minimum" else "team.minimum" for r in builtin_rules().profile_rules("sdk")
    ] + ["team.multiple-of"]
    tools = load_tools(STEPPED)
    report = validate_arguments({"name": "book", "arguments": {"seats": 3}}, tools, profile="team", rules=rules)
    assert report.constraint_errors == ["seats: 3 is not a multiple of 2"]
    low = validate_arguments({"name": "book", "arguments": {"seats": 0}}, tools, profile="team", rules=rules)
    assert low.constraint_errors == ["seats must be at least 1 (got 0)"]  # 0 is a multiple of 2
    (finding,) = low.findings
    assert (finding.rule, finding.source) == ("team.minimum", f"{team.parent.name}/team.yaml:{_line(TEAM, 'id: team.minimum')}")


def test_the_builtin_profiles_answer_as_before_beside_a_user_profile(team: Path) -> None:
    rules = load_rules(team)
    tools = load_tools(STEPPED)
    call = {"name": "book", "arguments": {"seats": 3}}
    for profile in ("sdk", "study", "jsonschema"):
        assert validate_arguments(call, tools, profile=profile, rules=rules).to_dict() == \
            validate_arguments(call, tools, profile=profile).to_dict()
    # the same tool under the user's profile and the built-in one: each its own compiled program
    assert validate_arguments(call, tools, profile="team", rules=rules).constraint_errors
    assert validate_arguments(call, tools).ok
    assert validate_arguments(call, tools, profile="team", rules=rules).constraint_errors


def test_the_seed_example_is_unchanged_under_the_user_rule_set(team: Path) -> None:
    call = {"name": "legal_draft_v3",
            "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}}
    rules = load_rules(team)
    assert validate_arguments(call, sample_toolset(), rules=rules).to_dict() == \
        validate_arguments(call, sample_toolset()).to_dict()
    assert validate_arguments(call, sample_toolset(), profile="team", rules=rules).constraint_errors == [
        "value must be at least 0 (got -5)"]


def test_rules_reach_every_verb(team: Path) -> None:
    rules = load_rules(team)
    tool = load_tools(STEPPED).tools[0]
    assert validate_call({"name": "book", "arguments": {"seats": 3}}, tool, profile="team",
                         rules=rules).constraint_errors == ["seats: 3 is not a multiple of 2"]
    assert validate_call({"name": "x", "arguments": {}}, None, profile="team", rules=rules).unknown_tool
    schema = STEPPED[0]["parameters"]
    assert validate_instance({"seats": 3}, schema, profile="team", rules=rules).constraint_errors == [
        "seats: 3 is not a multiple of 2"]
    reply = parse_reply('{"name": "book", "arguments": {"seats": 3}}', STEPPED, "json_object", profile="team",
                        rules=rules)
    assert reply.calls[0].validation["constraint_errors"] == ["seats: 3 is not a multiple of 2"]
    unknown = parse_reply('{"name": "nope", "arguments": {}}', STEPPED, "json_object", profile="team", rules=rules)
    assert unknown.rejected[0].validation["unknown_tool"]
    assert normalize_call({"name": "book", "arguments": {"seats": "4"}}, tool, rules=rules).arguments == {"seats": 4}


def test_a_user_normalisation_profile_is_a_strictness(tmp_path: Path) -> None:
    path = tmp_path / "norm.yaml"
    path.write_text("profiles:\n  - name: trim-only\n    rules: [normalise.trim, normalise.fields]\n",
                    encoding="utf-8")
    rules = load_rules(path)
    call = {"name": "legal_draft_v3", "arguments": {"counterparty": " Acme ", "value": "5"}}
    assert normalize_call(call, sample_tool(), "trim-only", rules=rules).arguments == {
        "counterparty": "Acme", "value": "5"}
    with pytest.raises(UnknownProfileError, match="trim-only"):
        normalize_call(call, sample_tool(), "trim-only")  # without the user's rules there is no such profile
    with pytest.raises(UnknownProfileError, match="only normalises"):
        validate_arguments(call, sample_toolset(), profile="trim-only", rules=rules)


def test_files_and_folders_together(tmp_path: Path, team: Path) -> None:
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "a.yaml").write_text("profiles:\n  - name: strict-team\n    extends: team\n    rules: []\n")
    (folder / "notes.txt").write_text("not a rule file")
    rules = load_rules(team, folder)
    assert [r.id for r in rules.profile_rules("strict-team")] == [r.id for r in rules.profile_rules("team")]
    assert load_rules(team).key == load_rules(str(team)).key != rules.key != builtin_rules().key


@pytest.mark.parametrize(("text", "field", "fragment"), [
    ("rules:\n  - id: study.type\n    op: type\n    phase: validate\n    bucket: type_errors\n"
     "    message: '{path}'\n", "study.type.id", "declared twice (first at rules/study.yaml:"),
    ("profiles:\n  - name: sdk\n    rules: []\n", "sdk.name", "name yours apart and extend it"),
    ("profiles:\n  - name: mine\n    extends: sdkk\n", "mine.extends", "extends unknown profile 'sdkk'"),
    ("profiles:\n  - name: mine\n    extends: sdk\n    replace: {study.nope: study.type}\n", "mine.replace",
     "replaces 'study.nope', which its base does not have"),
    ("rules:\n  - id: t.x\n    op: no_such_op\n    phase: validate\n    bucket: type_errors\n    message: x\n",
     "t.x.op", "not registered"),
])
def test_a_bad_user_file_names_itself(tmp_path: Path, text: str, field: str, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RuleFileError) as caught:
        load_rules(path)
    assert caught.value.field == field and fragment in str(caught.value)
    assert caught.value.source == str(path) and caught.value.line is not None


def test_a_missing_path_is_a_rule_file_error(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="no such rule file or folder"):
        load_rules(tmp_path / "nowhere.yaml")


def test_load_rules_does_not_change_the_builtin_set(team: Path) -> None:
    before = (dict(builtin_rules().rules), dict(builtin_rules().profiles))
    load_rules(team)
    assert (builtin_rules().rules, builtin_rules().profiles) == before
    with pytest.raises(UnknownProfileError):
        validate_arguments({"name": "legal_draft_v3", "arguments": {}}, sample_toolset(), profile="team")


# --- validate_instance compiles a schema once per content ----------------------------------------------

def test_validate_instance_compiles_a_schema_once_per_content() -> None:
    cache = CompiledSchemas()
    limits = Limits()
    schema = {"type": "integer", "maximum": 3}
    first = cache.get(schema, "jsonschema", None, limits)
    assert cache.get({"type": "integer", "maximum": 3}, "jsonschema", None, limits) is first  # same content
    assert cache.get(schema, "study", None, limits) is not first and len(cache) == 2
    schema["maximum"] = 5  # changed in place: new content, never the stale program
    assert cache.get(schema, "jsonschema", None, limits) is not first and len(cache) == 3


def test_the_schema_cache_is_bounded_least_recently_used_first() -> None:
    cache = CompiledSchemas()
    limits = Limits(max_cached_schemas=2)
    a = cache.get({"maximum": 1}, "jsonschema", None, limits)
    cache.get({"maximum": 2}, "jsonschema", None, limits)
    assert cache.get({"maximum": 1}, "jsonschema", None, limits) is a  # used again: now the newest
    cache.get({"maximum": 3}, "jsonschema", None, limits)  # evicts maximum 2
    assert len(cache) == 2 and cache.get({"maximum": 1}, "jsonschema", None, limits) is a
    assert cache.get({"maximum": 2}, "jsonschema", None, limits) is not None and len(cache) == 2


def test_a_schema_with_no_json_text_is_validated_uncached() -> None:
    before = len(COMPILED_SCHEMAS)
    schema = {"type": "integer", "x-note": object()}  # an annotation JSON cannot write: still a schema
    assert validate_instance("x", schema).type_errors and len(COMPILED_SCHEMAS) == before
    assert validate_instance(1, schema).ok


def test_cached_and_fresh_verdicts_agree() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 2}}, "required": ["a"]}
    for value in ({"a": "xyz"}, {}, {"a": 1}, {"a": "ok"}):
        first = validate_instance(value, schema).to_dict()
        assert validate_instance(value, json.loads(json.dumps(schema))).to_dict() == first


# --- the command line ------------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolform_rules", *args], capture_output=True, text=True,
                          timeout=120)


def test_the_command_line_takes_rules_wherever_it_takes_a_profile(team: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(STEPPED), encoding="utf-8")
    call = json.dumps({"name": "book", "arguments": {"seats": 3}})
    assert _cli("validate", call, "--tools", str(tools)).returncode == 0
    run = _cli("validate", call, "--tools", str(tools), "--rules", str(team), "--profile", "team")
    assert run.returncode == 1 and "team.multiple-of" in run.stdout and "team.yaml:" in run.stdout, run.stderr
    reply = tmp_path / "reply.txt"
    reply.write_text('Booking. {"name": "book", "arguments": {"seats": 3}}', encoding="utf-8")
    parsed = _cli("parse", str(reply), "--protocol", "json_object", "--tools", str(tools), "--rules", str(team),
                  "--profile", "team", "--json")
    assert parsed.returncode == 1, parsed.stderr
    assert json.loads(parsed.stdout)["calls"][0]["validation"]["constraint_errors"] == [
        "seats: 3 is not a multiple of 2"]
    listing = _cli("rules", "--rules", str(team), "--profile", "team")
    assert listing.returncode == 0 and "team.minimum" in listing.stdout and "extends sdk" in listing.stdout
    unknown = _cli("validate", call, "--tools", str(tools), "--profile", "team")
    assert unknown.returncode == 2 and "unknown validation profile 'team'" in unknown.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("profiles:\n  - name: sdk\n", encoding="utf-8")
    bad = _cli("validate", call, "--tools", str(tools), "--rules", str(broken))
    assert bad.returncode == 2 and "broken.yaml" in bad.stderr and "Traceback" not in bad.stderr
