"""Real replies from serving engines' test suites parse to the calls those suites expect.

The pass rate is reported per label; the reference passes 84% of these cases.
"""

from __future__ import annotations

import collections

import pytest

from engine_cases import LABELS, cases, expected_calls, toolset_json
from toolform_rules import load_tools, parse_reply

CASES = cases()


def _ours(case: dict) -> list[dict]:
    reply = parse_reply(case["reply"], load_tools(toolset_json(case)), LABELS[case["format"]], validate=False)
    return [{"name": c.resolved_name or c.name, "arguments": c.arguments} for c in reply.calls]


def pass_rates() -> dict[str, tuple[int, int]]:
    """label -> (cases passed, cases)."""
    tally: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for case in CASES:
        tally[case["format"]][1] += 1
        if _ours(case) == expected_calls(case):
            tally[case["format"]][0] += 1
    return {label: (passed, total) for label, (passed, total) in sorted(tally.items())}


def test_the_cases_of_the_study_protocols_are_read() -> None:
    assert len(CASES) == sum(1 for c in CASES if c["format"] in LABELS) and len(CASES) > 100


def test_pass_rate_per_label(capsys: pytest.CaptureFixture[str]) -> None:
    rates = pass_rates()
    passed = sum(p for p, _ in rates.values())
    total = sum(t for _, t in rates.values())
    with capsys.disabled():
        print("\nengine cases, pass rate per label:")
        for label, (p, t) in rates.items():
            print(f"  {label:22} {LABELS[label]:16} {p:3}/{t:<3} {p / t:6.1%}")
        print(f"  {'all':22} {'':16} {passed:3}/{total:<3} {passed / total:6.1%}")
    assert passed / total >= 0.84  # at least the reference's rate
