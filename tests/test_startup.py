"""Cold start: importing the package loads nothing, and each use loads only what it needs.

What each process imports is behaviour and can be asserted; how long it takes is measured
by bench/startup.py (recorded in docs/performance.md), never here.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import toolform_rules
from test_architecture import cycles, import_graph

#: Libraries and parts of the package that a plain validation has no use for.
HEAVY = ("lark", "re2", "toolform_rules.policy", "toolform_rules.protocols", "toolform_rules.grammar",
         "toolform_rules.replies")

CALL = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten",
                                                "colour": "red"}}


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


def test_importing_the_package_imports_none_of_it() -> None:
    added = loaded_after("import toolform_rules") - loaded_after("pass")
    assert sorted(m for m in added if m.startswith("toolform_rules")) == ["toolform_rules", "toolform_rules.version"]
    # nothing else but the standard library's import machinery
    assert {m.split(".")[0] for m in added} <= {"toolform_rules", "__future__", "importlib", "warnings"}


def test_validating_loads_no_grammar_policy_or_protocol() -> None:
    modules = loaded_after("from toolform_rules import sample_toolset, validate_arguments\n"
                           f"assert validate_arguments({CALL!r}, sample_toolset()).n_errors == 3")
    assert heavy(modules) == []


def test_the_command_line_validates_without_the_policy_machinery() -> None:
    modules = loaded_after("from toolform_rules.cli import main\n"
                           f"assert main(['validate', {json.dumps(CALL)!r}]) == 1")
    assert heavy(modules) == []


def test_a_policy_loads_what_it_needs_when_used() -> None:
    modules = loaded_after("from toolform_rules import load_policy\n"
                           "load_policy('policy: p\\nconstraints:\\n  - id: p.c\\n    check: args.a > 1\\n')")
    assert "lark" in modules and "toolform_rules.policy" in modules


def test_every_public_name_is_there_when_asked_for() -> None:
    for name in toolform_rules.__all__:
        assert getattr(toolform_rules, name) is not None, name
    assert set(toolform_rules.__all__) <= set(dir(toolform_rules))
    with pytest.raises(AttributeError):
        toolform_rules.no_such_name  # noqa: B018


def test_the_public_names_come_from_where_they_are_defined() -> None:
    exports = toolform_rules._EXPORTS
    assert sorted(exports) == sorted(toolform_rules.__all__)
    for name, module in exports.items():
        defined = importlib.import_module(f"toolform_rules{module}")
        assert getattr(defined, name) is getattr(toolform_rules, name), name


def test_the_deferred_imports_make_no_cycle_either() -> None:
    """The package's ``__init__`` imports its names on first use: as edges, they close no cycle."""
    graph = import_graph()
    graph["toolform_rules"] |= {f"toolform_rules{module}" for module in set(toolform_rules._EXPORTS.values())}
    assert cycles(graph) == []


def test_grammar_lends_lark_names_on_first_use() -> None:
    modules = loaded_after("import toolform_rules.grammar")
    assert "lark" not in modules
    modules = loaded_after("from toolform_rules.grammar import Transformer, parse\n"
                           "assert parse('json_object', \"{'a': 1}\") is not None")
    assert "lark" in modules
