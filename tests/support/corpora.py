"""Where the pinned public corpora are (``tools/corpora.py`` fetches and verifies them).

conftest.py checks every corpus before any test is collected and stops the run with one
message when one is missing or corrupt, so the functions here only say where to read.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def tool() -> ModuleType:
    """``tools/corpora.py`` as a module (the one place the pins live)."""
    spec = importlib.util.spec_from_file_location("toolform_rules_corpora", ROOT / "tools" / "corpora.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def problems() -> str | None:
    """Why the corpora cannot be read (every problem, with the command that fetches them), or None."""
    corpora = tool()
    try:
        corpora.verify_all()
    except corpora.CorpusError as err:
        return str(err)
    return None


def _folder(name: str) -> Path:
    corpora = tool()
    return corpora.folder(corpora.by_name(name))


def json_schema_suite() -> Path:
    """The JSON Schema Test Suite's draft 2020-12 folder (one JSON file per keyword)."""
    return _folder("json-schema-test-suite") / "tests" / "draft2020-12"


def bfcl() -> Path:
    """BFCL v4's data folder: ``BFCL_v4_<category>.json`` and ``possible_answer/``."""
    return _folder("bfcl")
