"""Issue 10's floor: on replies written the way models write them, ours recovers at least as
many calls as the reference in every protocol, and at least 95% of them overall.

The harness is ``tests/support/recovery.py`` (``bench/recovery.py`` prints its table).
"""

from __future__ import annotations

import pytest

from support.recovery import all_recovery, cases, ours_calls, recovered, recovery
from toolform_rules import protocol_ids

@pytest.mark.parametrize("protocol_id", protocol_ids())
def test_never_fewer_calls_than_the_reference(protocol_id: str) -> None:
    counted = recovery(protocol_id)
    assert counted.ours >= counted.reference, (
        f"{protocol_id}: ours {counted.ours}, reference {counted.reference} of {counted.cases}; "
        f"only the reference recovers: {', '.join(counted.only_reference)}")


def test_at_least_95_percent_overall() -> None:
    counts = all_recovery()
    ours = sum(c.ours for c in counts)
    total = sum(c.cases for c in counts)
    missed = {c.protocol_id: c.cases - c.ours for c in counts if c.ours < c.cases}
    assert ours >= 0.95 * total, f"ours {ours} of {total} ({ours / total:.1%}); missed per protocol: {missed}"


def test_the_harness_can_tell_a_wrong_call() -> None:
    """A reply holding other values, or two calls, does not count as recovered."""
    wrap_name, text, arguments = cases("json_object")[0]
    assert recovered(ours_calls(text, "json_object"), arguments)
    assert not recovered(ours_calls(text.replace("1000", "1001"), "json_object"), arguments)
    assert not recovered(ours_calls(text + "\n" + text, "json_object"), arguments)
    assert not recovered([("legal_draft_v3", {**arguments, "value": 1000.0})], arguments)
