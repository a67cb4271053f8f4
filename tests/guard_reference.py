"""The reference's guard fixtures (``toolform/advisor/data/guard_cases.json``), read as data only.

55 texts with the findings the reference's guard raises on each, at every severity: the
parity oracle for the rules that keep the ids TS101-TS110.  Nothing here runs its code.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import Any


def guard_cases() -> list[dict[str, Any]]:
    """The fixture's cases: text, field, tool, catalogue_names, param_names, findings."""
    path = importlib.resources.files("toolform") / "advisor" / "data" / "guard_cases.json"
    return json.loads(path.read_text(encoding="utf-8"))["data"]["cases"]
