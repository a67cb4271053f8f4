"""The documentation cannot drift: the rule reference is regenerated and compared, links resolve.

The Python examples in ``docs/*.md`` run as doctests (``--doctest-glob='*.md'``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from toolform_rules import builtin_rules
from toolform_rules.cli import main, rules_markdown

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_rules_reference_is_generated_from_the_rule_files():
    committed = (DOCS / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(), "docs/rules.md is out of date: run python tools/gen_rules_doc.py"


def test_rules_reference_names_every_rule_with_its_source():
    text = rules_markdown()
    for rule in builtin_rules().rules.values():
        assert f"### `{rule.id}`" in text
        assert f"`{rule.source}`" in text


def test_cli_writes_the_rules_reference(capsys):
    assert main(["rules", "--markdown"]) == 0
    assert capsys.readouterr().out == rules_markdown()


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_readme_shows_the_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme


def test_readme_seed_example_prints_what_the_readme_shows():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (script,) = _blocks(readme, "python")
    assert "from toolform_rules import sample_toolset, validate_arguments" in script
    (shown,) = _blocks(readme, "text")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == shown.split()  # the README wraps the dict as the seed does


def test_readme_cli_example_prints_what_the_readme_shows(capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (console,) = _blocks(readme, "console")
    command, *rest = console.splitlines()
    status_at = rest.index("$ echo $?")
    argv = shlex.split(command.removeprefix("$ "))
    assert argv[0] == "toolform-rules"
    code = main(argv[1:])
    assert capsys.readouterr().out.splitlines() == rest[:status_at]
    assert str(code) == rest[status_at + 1]


def test_local_links_resolve():
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            if Path(target).name == "performance.md":
                continue  # written with the benchmarks, which may land after these docs
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"
