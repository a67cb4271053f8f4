"""Regenerate the documentation that is computed, not written: run after editing rules/*.yaml.

    python tools/gen_docs.py          # rewrite docs/rules.md, docs/protocols.md's reference, README's example
    python tools/gen_docs.py --check  # exit 1 when either is out of date

docs/rules.md is ``reference_docs.rules_markdown()``: every rule, then every registered
operation with the options, message fields and interactions it declares. In README.md,
each ``$ toolform-rules ...`` line of a ```` ```console ```` block is followed by what the
command prints now (the rules' file:line included), and ``$ echo $?`` by its exit code. tests/test_docs.py checks
both, so neither can drift from the rule files.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from pathlib import Path

from reference_docs import native_markdown, protocols_markdown, rules_markdown
from toolform_rules.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = ROOT / "docs" / "rules.md"
README = ROOT / "README.md"
PROTOCOLS_DOC = ROOT / "docs" / "protocols.md"
_GENERATED = re.compile(r"(<!-- generated: python tools/gen_docs.py \(reference_docs.protocols_markdown\) -->\n)(.*?)"
                        r"(<!-- end of generated -->)", re.S)
_GENERATED_NATIVE = re.compile(
    r"(<!-- generated: python tools/gen_docs.py \(reference_docs.native_markdown\) -->\n)(.*?)(<!-- end of generated -->)", re.S)
_CONSOLE = re.compile(r"(```console\n)(.*?)(```)", re.S)


def _run(command: str) -> tuple[list[str], int]:
    argv = shlex.split(command)
    assert argv[0] == "toolform-rules", command
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli(argv[1:])
    return printed.getvalue().splitlines(), code


def _refresh_console(block: str) -> str:
    lines, out, code = block.splitlines(), [], None
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.startswith("$ toolform-rules "):
            printed, code = _run(line[2:])
            out += printed
        elif line == "$ echo $?" and code is not None:
            out.append(str(code))
        else:
            continue
        while i < len(lines) and not lines[i].startswith("$ "):  # the old output
            i += 1
    return "\n".join(out) + "\n"


def generated() -> dict[Path, str]:
    """Each generated file and the text it should hold."""
    readme = README.read_text(encoding="utf-8")
    readme = _CONSOLE.sub(lambda m: m.group(1) + _refresh_console(m.group(2)) + m.group(3), readme)
    protocols = PROTOCOLS_DOC.read_text(encoding="utf-8")
    protocols = _GENERATED.sub(lambda m: m.group(1) + "\n" + protocols_markdown() + "\n" + m.group(3), protocols)
    protocols = _GENERATED_NATIVE.sub(lambda m: m.group(1) + "\n" + native_markdown() + "\n" + m.group(3), protocols)
    return {RULES_DOC: rules_markdown(), README: readme, PROTOCOLS_DOC: protocols}


def main(argv: list[str]) -> int:
    stale = []
    for path, text in generated().items():
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current == text:
            continue
        stale.append(path)
        if "--check" not in argv:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale and "--check" in argv:
        print("out of date: " + ", ".join(str(p.relative_to(ROOT)) for p in stale)
              + "; run python tools/gen_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
