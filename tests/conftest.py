"""Shared fixtures: where the shared test data lives, and the reference oracle."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the project root (CI lays it there)."""
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"the shared test data is missing: expected {SHARED_DATA}")
    return SHARED_DATA
