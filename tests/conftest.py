"""The suite's setup: the pinned corpora are checked before anything is collected, and CI
draws the same hypothesis examples on every run."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from support import corpora

# In CI the generated examples are the same on every run (a failure there is reproducible,
# never a roll of the dice); locally each run draws new ones.
# Neither profile fails a test because drawing or running an example was slow (no deadline): on a
# loaded 2-core machine (CI, or the suite beside a benchmark) that says nothing about the code under
# test, and times are the benchmarks' to judge, never a unit test's.
settings.register_profile("local", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, suppress_health_check=[HealthCheck.too_slow],
                          deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")


def pytest_configure(config: pytest.Config) -> None:
    """Stop at once, with one message, when a corpus the tests read is missing or corrupt."""
    problem = corpora.problems()
    if problem is not None:
        raise pytest.UsageError(f"the test corpora are not ready:\n{problem}")
