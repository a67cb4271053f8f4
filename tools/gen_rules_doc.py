"""Write docs/rules.md, the rule reference, from rules/*.yaml.

    python tools/gen_rules_doc.py          # rewrite docs/rules.md
    python tools/gen_rules_doc.py --check  # exit 1 when docs/rules.md is out of date

The text is ``toolform-rules rules --markdown``; tests/test_docs.py checks the committed
file against it, so the reference cannot drift from the rule files.
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolform_rules.cli import rules_markdown

TARGET = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def main(argv: list[str]) -> int:
    text = rules_markdown()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python tools/gen_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
