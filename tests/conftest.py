"""The suite's setup: the pinned corpora are checked before anything is collected, and CI
draws the same hypothesis examples on every run."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from support import corpora

# In CI the generated examples are the same on every run (a failure there is reproducible,
# never a roll of the dice); locally each run draws new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_configure(config: pytest.Config) -> None:
    """Stop at once, with one message, when a corpus the tests read is missing or corrupt."""
    problem = corpora.problems()
    if problem is not None:
        raise pytest.UsageError(f"the test corpora are not ready:\n{problem}")
