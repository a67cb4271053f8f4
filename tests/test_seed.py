"""The spec's example prints exactly what the spec shows; the sample tool under the study's rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolform_rules import sample_toolset, validate_arguments

SEED_SCRIPT = '''
from toolform_rules import sample_toolset, validate_arguments

tools = sample_toolset()     # legal_draft_v3, the study's sample tool
report = validate_arguments(
    {"name": "legal_draft_v3",
     "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}},
    tools)
print(report.ok)             # False
print(report.to_dict())
'''

SEED_OUTPUT = (
    "False\n"
    "{'ok': False, 'unknown_tool': False, 'missing_required': [], 'unknown_args': ['colour'], "
    "'type_errors': ['term_months: expected integer, got str'], 'enum_errors': [], "
    "'constraint_errors': ['value: -5 < minimum 0'], 'n_errors': 3}\n"
)


def test_seed_example_prints_exactly_the_seed_output() -> None:
    out = subprocess.run([sys.executable, "-c", SEED_SCRIPT], capture_output=True, text=True, check=True)
    assert out.stdout == SEED_OUTPUT


def test_seed_findings_name_their_rules_and_sources() -> None:
    from toolform_rules import sample_toolset, validate_arguments

    report = validate_arguments({"name": "legal_draft_v3", "arguments": {
        "counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}}, sample_toolset())
    by_rule = {f.rule: f for f in report.findings}
    assert set(by_rule) == {"study.minimum", "study.type", "study.unknown-args"}
    assert by_rule["study.type"].path == ("term_months",)
    assert by_rule["study.minimum"].bucket == "constraint_errors"
    for finding in report.findings:
        file, line = finding.source.rsplit(":", 1)
        assert file == "rules/study.yaml" and int(line) > 0


@pytest.mark.parametrize("extra, study_finds, jsonschema_finds", [
    ({"auto_renew": None}, [], ["auto_renew: expected boolean, got NoneType"]),
    ({"contract_details": None}, [], ["contract_details: expected object, got NoneType"]),
    ({"contract_details": {"status": None}}, ["contract_details.status: expected string, got NoneType"],
     ["contract_details.status: expected string, got NoneType"]),
    ({"counterparty": None}, ["counterparty: expected string, got NoneType"],
     ["counterparty: expected string, got NoneType"]),
])
def test_null_for_an_optional_top_level_argument_means_it_was_not_given(extra, study_finds, jsonschema_finds) -> None:
    """The study (and sdk): ``null`` for an optional argument of the tool is an argument left out; for a
    required one, or one nested deeper, it is a value of the wrong type.  JSON Schema: always the wrong type."""
    call = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 1, "term_months": 2, **extra}}
    for profile, expected in (("study", study_finds), ("sdk", study_finds), ("jsonschema", jsonschema_finds)):
        assert [f.message for f in validate_arguments(call, sample_toolset(), profile=profile).findings] == expected
