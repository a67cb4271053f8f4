"""The spec's example prints exactly what the spec shows."""

from __future__ import annotations

import subprocess
import sys

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
