"""The documentation cannot drift: generated parts are regenerated and compared, links resolve.

The Python examples in ``docs/*.md`` run as doctests (``--doctest-glob='*.md'``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolform_rules import builtin_rules
from toolform_rules.engine.operations import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "tools"))

import gen_docs  # noqa: E402  (tools/gen_docs.py: what the generated docs should hold)
from reference_docs import rules_markdown  # noqa: E402


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_generated_docs_are_current():
    for path, text in gen_docs.generated().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.relative_to(ROOT)} is out of date: run python tools/gen_docs.py")


def test_rules_reference_names_every_rule_with_its_source():
    text = rules_markdown()
    for rule in builtin_rules().rules.values():
        assert f"### `{rule.id}`" in text
        assert f"`{rule.source}`" in text


def test_readme_shows_the_commands_and_a_cli_example():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    (console,) = _blocks(readme, "console")
    assert console.startswith("$ toolform-rules validate ") and "$ echo $?\n1\n" in console


def test_readme_seed_example_prints_what_the_readme_shows():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    script = _blocks(readme, "python")[0]
    assert "from toolform_rules import sample_toolset, validate_arguments" in script
    (shown,) = _blocks(readme, "text")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == shown.split()  # the README wraps the dict as the seed does


def test_local_links_resolve():
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            if Path(target).name == "performance.md":
                continue  # written with the benchmarks, which may land after these docs
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


@pytest.mark.parametrize("marker", ["LegalDraftV3", "load_policy", "py_tools"])
def test_readme_examples_print_what_their_comments_say(marker):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (script,) = [b for b in _blocks(readme, "python") if marker in b]
    expected = [line[2:] for line in script.splitlines() if line.startswith("# ")]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == expected


def test_every_declared_option_of_every_operation_is_documented():
    reference = rules_markdown()
    section = reference[reference.index("## Operations"):]
    for phase, registered in REGISTRY.items():
        for name, operation in registered.items():
            assert f"#### `{name}`\n" in section
            entry = section[section.index(f"#### `{name}`\n"):]
            entry = entry[:entry.find("\n#### ", 1) if "\n#### " in entry[1:] else len(entry)]
            assert operation.doc, name
            for option in operation.options:
                assert option.doc and (option.doc[0].islower() or option.doc[0] == "`"), (name, option.name)
                assert f"| `{option.name}` | " in entry, (name, option.name)
            if phase == "validate":
                assert "message fields: " + ", ".join(f"`{{{f}}}`" for f in sorted(operation.message_fields)) \
                    in entry
