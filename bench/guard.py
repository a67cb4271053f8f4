"""The guard's speed (issue 14, point 7): a 100-tool MCP manifest and a 1 MB description, at standard.

Run: ``PYTHONPATH=. python bench/guard.py``.  Prints the median of several runs; targets: the
manifest <= 50 ms, the 1 MB description <= 0.5 s.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from toolform_rules import load_tools
from toolform_rules.guard import builtin_guard_rules, scan_text, scan_toolset

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "guard" / "benign.jsonl"


def manifest(count: int = 100) -> list[dict]:
    """``count`` MCP tools: the benign corpus's tools, renamed apart, repeated as needed."""
    tools = [json.loads(line)["tool"] for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    return [dict(tools[i % len(tools)], name=f"tool_{i}") for i in range(count)]


def median_seconds(run, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    builtin_guard_rules()  # (read once per process, as in use)
    toolset = load_tools(manifest())
    words = ("Returns the rows of the table that match the query, sorted by date. Use the limit parameter to "
             "page through results; the default is 100. Ünïcödé façade, naïve café. ")
    big = (words * (1_000_000 // len(words) + 1))[:1_000_000]
    print(f"100-tool manifest: {1000 * median_seconds(lambda: scan_toolset(toolset)):.1f} ms (target 50 ms)")
    print(f"1 MB description:  {median_seconds(lambda: scan_text(big, tool='t', field='description'), 3):.3f} s "
          f"(target 0.5 s)")
    print(f"1 MB description, strict: "
          f"{median_seconds(lambda: scan_text(big, tool='t', field='description', strictness='strict'), 3):.3f} s")


if __name__ == "__main__":
    main()
