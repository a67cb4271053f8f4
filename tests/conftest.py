"""Shared fixtures: where the shared test data lives, and the reference oracle."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# In CI the generated examples are the same on every run (a failure there is reproducible,
# never a roll of the dice); locally each run draws new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the project root (CI lays it there)."""
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"the shared test data is missing: expected {SHARED_DATA}")
    return SHARED_DATA
