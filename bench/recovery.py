"""How many calls ``parse_reply`` recovers from replies written the way models write them, ours
against the reference, protocol by protocol.

    .venv/bin/python bench/recovery.py              # plain text
    .venv/bin/python bench/recovery.py --markdown

The harness (calls, wrappings, what counts as recovered) is ``tests/support/recovery.py``;
``tests/test_recovery_reference.py`` holds ours to the reference in every protocol and to 95%
overall.  This prints the table.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

from support.recovery import all_recovery  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true")
    opts = parser.parse_args(argv)
    results = all_recovery()
    rows = [["protocol", "ours", "reference", "cases", "only the reference recovers", "only ours recovers"]]
    for r in results:
        rows.append([r.protocol_id, str(r.ours), str(r.reference), str(r.cases), ", ".join(r.only_reference) or "—",
                     ", ".join(r.only_ours) or "—"])
    total_ours = sum(r.ours for r in results)
    total_ref = sum(r.reference for r in results)
    total = sum(r.cases for r in results)
    rows.append(["all", f"{total_ours} ({total_ours / total:.0%})", f"{total_ref} ({total_ref / total:.0%})",
                 str(total), f"{sum(1 for r in results if r.ours < r.reference)} protocols below the reference", ""])
    if opts.markdown:
        print("| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]))
        for row in rows[1:]:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
