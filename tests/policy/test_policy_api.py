"""Policies through the public API and the CLI: findings in the report, audit fields, includes,
decision records, explain, the test runner."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import textwrap

import pytest

from toolform_rules import (EvaluationError, PolicyError, load_policy, parse_reply, sample_toolset,
                            validate_arguments)
from toolform_rules.cli import main
from toolform_rules.policy.explain import explain
from toolform_rules.policy.policy import ToolPattern
from toolform_rules.policy.records import DecisionLog, decision_record
from toolform_rules.policy.testing import run_tests

CAPS = textwrap.dedent("""\
    policy: caps
    version: 3
    description: Caps on contract values.
    lists:
      parties: [acme, globex]
    mask: [args.counterparty]
    constraints:
      - id: caps.value
        tools: [legal_draft_v3]
        when: args.term_months > 12
        check: args.value <= 1000
        message: "value {args.value} over 1000 for {args.term_months} months"
      - id: caps.party
        tools: ["Legal*"]
        check: lower(args.counterparty) in lists.parties
        severity: warning
      - id: caps.renew
        check: args.auto_renew == false
        on_error: skip
    """)


def call(**arguments):
    base = {"counterparty": "Acme", "value": 10, "term_months": 6}
    base.update(arguments)
    return {"name": "legal_draft_v3", "arguments": base}


@pytest.fixture(scope="module")
def caps():
    return load_policy(CAPS, tools=sample_toolset())


def test_policy_errors_land_in_the_report_with_their_audit_fields(caps):
    report = validate_arguments(call(value=5000, term_months=24), sample_toolset(), policy=caps)
    assert not report.ok
    assert report.constraint_errors == ["value 5000 over 1000 for 24 months"]
    (finding,) = report.findings
    assert finding.rule == "caps.value" and finding.path == ("value",) and finding.severity == "error"
    assert finding.source == "<policy>:8"
    assert finding.policy.name == "caps" and finding.policy.version == 3
    assert finding.policy.digest == caps.digest and len(caps.digest) == 64
    assert finding.to_dict()["policy"] == {"name": "caps", "version": 3, "sha256": caps.digest}
    # the seed's shape is untouched: the policy's error is one more constraint error
    assert list(report.to_dict()) == ["ok", "unknown_tool", "missing_required", "unknown_args", "type_errors",
                                      "enum_errors", "constraint_errors", "n_errors"]


def test_when_false_means_the_constraint_does_not_apply(caps):
    assert validate_arguments(call(value=5000, term_months=6), sample_toolset(), policy=caps).ok


def test_warnings_never_make_ok_false(caps):
    report = validate_arguments(call(counterparty="Initech"), sample_toolset(), policy=caps)
    assert report.ok and report.findings == ()
    assert [w.rule for w in report.warnings] == ["caps.party"]
    assert report.to_json()["warnings"][0]["severity"] == "warning"


def test_a_runtime_error_fails_closed_unless_skipped():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    check: args.auto_renew == false\n")
    report = validate_arguments(call(), sample_toolset(), policy=policy)  # auto_renew is absent
    assert not report.ok and "cannot be checked (args.auto_renew is missing)" in report.constraint_errors[0]
    skipping = load_policy("policy: p\nconstraints:\n  - id: p.x\n    on_error: skip\n"
                           "    check: args.auto_renew == false\n")
    assert validate_arguments(call(), sample_toolset(), policy=skipping).ok


def test_bucket_is_the_constraints_choice():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    bucket: enum_errors\n"
                         "    check: args.counterparty != 'Acme'\n")
    assert validate_arguments(call(), sample_toolset(), policy=policy).enum_errors == [
        "p.x: args.counterparty != 'Acme' does not hold"]


def test_policy_runs_after_schema_rules_and_both_report(caps):
    report = validate_arguments(call(value=-5000, term_months=24, colour="red"), sample_toolset(), policy=caps)
    assert report.unknown_args == ["colour"]
    assert "value: -5000 < minimum 0" in report.constraint_errors
    assert [f.rule for f in report.findings][-1] == "study.minimum" or "caps.value" not in report.constraint_errors


def test_unknown_tool_runs_no_constraint(caps):
    report = validate_arguments({"name": "nope", "arguments": {}}, sample_toolset(), policy=caps)
    assert report.unknown_tool and all(f.policy is None for f in report.findings)


def test_parse_reply_applies_the_policy(caps):
    text = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 5000, "term_months": 24}}'
    reply = parse_reply(text, sample_toolset(), "json_object", policy=caps)
    (parsed,) = reply.calls
    assert not parsed.valid and not reply.ok
    assert parsed.validation["constraint_errors"] == ["value 5000 over 1000 for 24 months"]
    assert parse_reply(text, sample_toolset(), "json_object").ok


def test_norm_reads_the_normalised_arguments():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    check: norm.counterparty == 'acme'\n")
    assert validate_arguments(call(counterparty="  ACME "), sample_toolset(), policy=policy).ok
    assert not validate_arguments(call(counterparty="Initech"), sample_toolset(), policy=policy).ok


def test_call_name_is_the_resolved_tool_name():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    check: call.name == 'legal_draft_v3'\n")
    assert validate_arguments({"name": "LegalDraftV3", "arguments": call()["arguments"]}, sample_toolset(),
                              policy=policy).ok


def test_nothing_the_caller_passed_is_mutated(caps):
    given = call(value=5000, term_months=24, contract_details={"status": "draft"})
    before = copy.deepcopy(given)
    validate_arguments(given, sample_toolset(), policy=caps)
    decision_record(given, validate_arguments(given, sample_toolset(), policy=caps), caps, duration=0.0)
    explain(given, caps, sample_toolset())
    assert given == before


@pytest.mark.parametrize("pattern, name, matches", [
    ("send_payment", "SendPayment", True), ("send_*", "send-email", True), ("send_*", "resend_email", False),
    ("*_file", "read_file", True), ("*_file", "ReadFile", True), ("get_?", "getX", True), ("get_?", "get", False),
    # canonical matching ignores "_": "*_file" is "*file", so it also covers "profile" (a broader
    # match applies the constraint to more tools: the safe direction for a guard)
    ("*_file", "profile", True),
    ("*", "anything", True), ("a*b*c", "a" * 500 + "b", False),
])
def test_tool_patterns_match_canonical_names(pattern, name, matches):
    assert ToolPattern.read(pattern).matches(name) is matches


def test_include_merges_lists_and_constraints_and_the_digest_covers_every_file(tmp_path):
    (tmp_path / "common.yaml").write_text("policy: common\nlists:\n  parties: [acme]\nconstraints:\n"
                                          "  - id: common.cap\n    check: args.value < 100\n")
    main_text = "policy: main\ninclude: [common.yaml]\nconstraints:\n" \
                "  - id: main.party\n    check: lower(args.counterparty) in lists.parties\n"
    (tmp_path / "main.yaml").write_text(main_text)
    policy = load_policy(tmp_path / "main.yaml")
    assert [c.id for c in policy.constraints] == ["main.party", "common.cap"]
    assert [f.sha256 for f in policy.files] == [hashlib.sha256(main_text.encode()).hexdigest(),
                                                hashlib.sha256((tmp_path / "common.yaml").read_bytes()).hexdigest()]
    report = validate_arguments(call(value=500, counterparty="Initech"), sample_toolset(), policy=policy)
    assert {f.rule for f in report.findings} == {"main.party", "common.cap"}
    assert {f.source.rsplit("/", 1)[-1] for f in report.findings} == {"main.yaml:4", "common.yaml:5"}
    before = policy.digest
    (tmp_path / "common.yaml").write_text((tmp_path / "common.yaml").read_text().replace("100", "101"))
    assert load_policy(tmp_path / "main.yaml").digest != before


def test_include_cycles_and_missing_files_are_problems(tmp_path):
    (tmp_path / "a.yaml").write_text("policy: a\ninclude: [b.yaml, gone.yaml]\n")
    (tmp_path / "b.yaml").write_text("policy: b\ninclude: [a.yaml]\n")
    with pytest.raises(PolicyError) as caught:
        load_policy(tmp_path / "a.yaml")
    messages = [p.message for p in caught.value.problems]
    assert any("includes itself" in m for m in messages) and any("cannot include gone.yaml" in m for m in messages)


def test_an_unreadable_path_is_a_policy_error(tmp_path):
    with pytest.raises(PolicyError, match="cannot read the policy"):
        load_policy(tmp_path / "missing.yaml")


def test_decision_records_mask_values_and_digest_the_masked_arguments(caps):
    stream = io.StringIO()
    secret = "Zyxwv Holdings"
    with DecisionLog(stream, policy=caps) as log:
        log.check(call(counterparty=secret, value=5000, term_months=24), sample_toolset())
        log.check(call(), sample_toolset())
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert secret not in stream.getvalue()
    assert first["verdict"] == "deny" and second["verdict"] == "allow"
    assert first["policy"] == {"name": "caps", "version": 3, "sha256": caps.digest}
    assert first["tool"] == "legal_draft_v3" and first["time"].endswith("Z")
    assert [f["rule"] for f in first["findings"]] == ["caps.value"]
    assert [w["rule"] for w in first["warnings"]] == ["caps.party"]
    masked = {"counterparty": "***", "value": 5000, "term_months": 24}
    assert first["arguments_sha256"] == hashlib.sha256(
        json.dumps(masked, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert isinstance(first["duration_us"], float)


def test_a_masked_value_is_scrubbed_from_messages():
    policy = load_policy("policy: p\nmask: [args.counterparty]\nconstraints:\n  - id: p.x\n"
                         "    check: args.counterparty == 'Acme'\n    message: 'party {args.counterparty} refused'\n")
    given = call(counterparty="Initech")
    report = validate_arguments(given, sample_toolset(), policy=policy)
    assert report.constraint_errors == ["party Initech refused"]  # the caller's own report keeps it
    assert decision_record(given, report, policy, duration=0)["findings"][0]["message"] == "party *** refused"


def test_explain_shows_each_sub_expression(caps):
    explanation = explain(call(value=5000, term_months=24), caps, sample_toolset())
    outcomes = {c.id: c.outcome for c in explanation.constraints}
    assert outcomes == {"caps.value": "fired", "caps.party": "held", "caps.renew": "skipped on error"}
    value = next(c for c in explanation.constraints if c.id == "caps.value")
    assert [(s.text, s.value) for s in value.when] == [("args.term_months > 12", True), ("args.term_months", 24)]
    assert (value.check[0].text, value.check[0].value) == ("args.value <= 1000", False)
    assert value.message == "value 5000 over 1000 for 24 months"
    assert json.loads(json.dumps(explanation.to_dict()))["constraints"][0]["id"] == "caps.value"


def test_explain_says_which_constraints_are_for_other_tools():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    tools: [other]\n    check: 'true'\n")
    assert explain(call(), policy).constraints[0].outcome == "not for this tool"


POLICY_WITH_TESTS = textwrap.dedent("""\
    policy: t
    constraints:
      - id: t.cap
        check: args.value <= 10
      - id: t.never
        when: args.value > 1000000
        check: false
    tests:
      - name: under the cap
        call: {name: legal_draft_v3, arguments: {value: 5}}
        expect: {ok: true, fired: []}
      - name: wrongly expected
        call: {name: legal_draft_v3, arguments: {value: 50}}
        expect: {ok: true}
    """)


def test_runner_reports_failures_and_coverage(tmp_path):
    (tmp_path / "t.yaml").write_text(POLICY_WITH_TESTS)
    (tmp_path / "t_test.yaml").write_text("tests:\n  - call: {name: legal_draft_v3, arguments: {value: 50}}\n"
                                          "    expect: {ok: false, fired: [t.cap], not_fired: [t.never]}\n")
    run = run_tests([tmp_path])
    assert [r.passed for r in run.results] == [True, False, True]
    assert run.results[1].problems == ("expected ok true, got false",)
    assert run.results[1].where.endswith("t.yaml:12")
    (coverage,) = run.coverage
    assert coverage.never_exercised == ["t.never"] and coverage.never_fired == ["t.never"]
    assert not run.ok and run.to_dict()["failed"] == 1
    assert "FAIL" in run.render() and "never exercised: t.never" in run.render()


def test_runner_uses_the_toolset_the_policy_names(tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "f", "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}]))
    (tmp_path / "p.yaml").write_text("policy: p\ntoolset: tools.json\nconstraints:\n  - id: p.x\n"
                                     "    check: args.x < 5\ntests:\n  - call: {name: f, arguments: {}}\n"
                                     "    expect: {ok: false, fired: [p.x]}\n")
    run = run_tests([tmp_path / "p.yaml"])
    assert run.ok, run.render()  # the schema's missing x and the policy's runtime error both fail the call


def test_cli_check_test_explain_and_policy_options(tmp_path, capsys):
    (tmp_path / "caps.yaml").write_text(CAPS)
    policy = str(tmp_path / "caps.yaml")
    assert main(["check", policy]) == 0
    assert "caps v3: 3 constraints, 1 list, 0 tests in 1 file; no problems" in capsys.readouterr().out
    (tmp_path / "bad.yaml").write_text("policy: bad\nconstraints:\n  - id: b.x\n    check: args.value <=\n"
                                       "  - id: b.y\n    check: lowr(args.x)\n")
    assert main(["check", str(tmp_path / "bad.yaml")]) == 1
    err = capsys.readouterr().err
    assert "2 problems" in err and "bad.yaml:4:25" in err and "bad.yaml:6:12" in err and "^" in err
    assert main(["check", str(tmp_path / "bad.yaml"), "--json"]) == 1
    assert [p["line"] for p in json.loads(capsys.readouterr().out)["problems"]] == [4, 6]
    bad_call = json.dumps(call(value=5000, term_months=24))
    assert main(["validate", bad_call, "--policy", policy]) == 1
    assert "caps.value" in capsys.readouterr().out
    log = tmp_path / "decisions.jsonl"
    assert main(["validate", bad_call, "--policy", policy, "--decisions", str(log), "--mask", "args.value"]) == 1
    capsys.readouterr()
    record = json.loads(log.read_text())
    assert record["verdict"] == "deny" and "5000" not in log.read_text()
    assert main(["explain", policy, bad_call, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["constraints"][0]["outcome"] == "fired"
    (tmp_path / "t.yaml").write_text(POLICY_WITH_TESTS)
    assert main(["test", str(tmp_path / "t.yaml")]) == 1
    capsys.readouterr()
    assert main(["test", str(tmp_path / "t.yaml"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["failed"] == 1
    reply = tmp_path / "reply.txt"
    reply.write_text(bad_call)
    assert main(["parse", str(reply), "-p", "json_object", "--policy", policy]) == 1
    assert "caps.value" in capsys.readouterr().out


def test_cli_validate_with_a_broken_policy_shows_its_problem_at_its_place(tmp_path, capsys):
    (tmp_path / "bad.yaml").write_text("policy: bad\nconstraints:\n  - id: b.x\n    check: args.nope > 1\n")
    assert main(["validate", json.dumps(call()), "--policy", str(tmp_path / "bad.yaml")]) == 2
    err = capsys.readouterr().err
    assert "unknown argument 'nope'" in err and "bad.yaml:4:12" in err


def test_evaluation_errors_are_ours():
    assert issubclass(EvaluationError, Exception)
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    check: args.value / 0 > 1\n")
    report = validate_arguments(call(), sample_toolset(), policy=policy)
    assert "division by zero" in report.constraint_errors[0]


def test_args_sees_the_names_the_schema_resolves_so_case_cannot_step_around_a_constraint():
    # the sdk rules accept "TermMonths" for term_months and "Status" for status: so must the policy
    policy = load_policy("policy: p\nconstraints:\n  - id: p.term\n    check: args.term_months <= 12\n"
                         "  - id: p.status\n    check: args.contract_details.status != 'expired'\n")
    given = {"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 1, "TermMonths": 48,
                                                     "contract_details": {"Status": "expired"}}}
    report = validate_arguments(given, sample_toolset(), policy=policy)
    assert {f.rule for f in report.findings if f.policy} == {"p.term", "p.status"}


def test_a_mask_covers_every_spelling_of_its_key():
    policy = load_policy("policy: p\nmask: [args.counterparty]\nconstraints:\n  - id: p.x\n    check: 'false'\n")
    given = {"name": "legal_draft_v3", "arguments": {"Counterparty": "Secretive Inc", "value": 1, "term_months": 1}}
    record = decision_record(given, validate_arguments(given, sample_toolset(), policy=policy), policy, duration=0)
    assert "Secretive" not in json.dumps(record)


def test_message_fields_escape_control_characters_and_show_json():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    check: 'false'\n"
                         "    message: '{args.counterparty} / {args.contract_details}'\n")
    report = validate_arguments(call(counterparty="A\x1b[31m\nB", contract_details={"status": "draft"}),
                                sample_toolset(), policy=policy)
    assert report.constraint_errors == ['A\\x1b[31m\\nB / {"status": "draft"}']


def test_an_empty_tools_list_is_refused():
    with pytest.raises(PolicyError, match="tools must name at least one tool"):
        load_policy("policy: p\nconstraints:\n  - id: p.x\n    tools: []\n    check: 'true'\n")


def test_a_files_digest_is_of_its_bytes(tmp_path):
    raw = b"policy: p\r\nconstraints: []\r\n"
    (tmp_path / "p.yaml").write_bytes(raw)
    assert load_policy(tmp_path / "p.yaml").files[0].sha256 == hashlib.sha256(raw).hexdigest()


def test_a_test_may_name_a_constraint_of_an_included_file(tmp_path):
    (tmp_path / "common.yaml").write_text("policy: common\nconstraints:\n  - id: common.cap\n"
                                          "    check: args.value < 100\n")
    (tmp_path / "main.yaml").write_text("policy: main\ninclude: [common.yaml]\ntests:\n"
                                        "  - call: {name: legal_draft_v3, arguments: {value: 500}}\n"
                                        "    expect: {ok: false, fired: [common.cap]}\n")
    assert run_tests([tmp_path / "main.yaml"]).ok


def test_explain_sees_the_arguments_as_validation_does():
    policy = load_policy("policy: p\nconstraints:\n  - id: p.term\n    check: args.term_months <= 12\n")
    given = {"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 1, "TermMonths": 48}}
    (item,) = explain(given, policy, sample_toolset()).constraints
    assert item.outcome == "fired" and (item.check[1].text, item.check[1].value) == ("args.term_months", 48)
