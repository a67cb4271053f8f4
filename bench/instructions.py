"""Benchmark: machine instructions per reply (or per call), counted by valgrind: a measure no noise moves.

    .venv/bin/python bench/instructions.py                          # every model-native format and the anchor
    .venv/bin/python bench/instructions.py hermes qwen3_coder_xml   # some protocols
    .venv/bin/python bench/instructions.py --validate               # the seed's calls (bench/validate.py's a. and b., the same arguments)
    .venv/bin/python bench/instructions.py --against /tmp/before    # also a checkout of another commit, side by side

On this shared 2-CPU VM the same timing moves by a third from one process to the next and by half within
one, so an A/B of a few percent cannot be read from timings.  Counting instructions can: valgrind
(cachegrind, no cache simulation) runs one process that warms up and stops, and one that then parses the
reply ``--repeat`` more times; the difference over ``--repeat`` is the instructions one parse costs.  The
same count comes back run after run (the hash seed is fixed), and a change that saves 1% shows as 1%
(in what it touches: an unrelated change of the code moves other counts by up to ±1.6%, see bench/README.md).

It counts work, not time: a change that trades instructions for cache misses looks better here than it is,
so a result is confirmed with bench/parse.py or bench/validate.py.  Instructions per µs, measured beside the
counts (docs/performance.md): about 6,000 for a whole reply in a quiet process.

Needs valgrind (``apt install valgrind``); each protocol takes about 20 s of two processes, two at a time.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: what one process runs: ``validate_arguments`` of a call, or ``parse_reply`` of a reply in a protocol (given as
#: JSON, the same to every checkout), ``warm`` times then ``count`` more
DRIVER = """
import json, sys
from toolform_rules import parse_reply, sample_toolset, validate_arguments
kind, given, warm, count = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tools = sample_toolset()
if kind == "validate":
    run = lambda: validate_arguments(given, tools)
else:
    run = lambda: parse_reply(given["text"], tools, given["protocol"])
for _ in range(warm + count):
    run()
"""
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def work(what: str) -> tuple[str, str]:
    """What the driver runs for ``what`` (a protocol id, ``validate:a`` or ``validate:b``): the sample call as
    bench/validate.py validates it, the sample reply as bench/parse.py's native table reads it."""
    sys.path.insert(0, str(ROOT / "bench"))
    if what.startswith("validate:"):
        from validate import SAMPLE_INVALID, SAMPLE_VALID

        arguments = SAMPLE_VALID if what == "validate:a" else SAMPLE_INVALID
        return "validate", json.dumps({"name": "legal_draft_v3", "arguments": arguments})
    from parse import AFTER, ARGUMENTS, BEFORE

    from toolform_rules import ToolCall, get_protocol

    text = BEFORE + get_protocol(what).render_calls([ToolCall("legal_draft_v3", ARGUMENTS)]) + AFTER
    return "parse", json.dumps({"text": text, "protocol": what})


def instructions(checkout: Path, what: str, repeat: int) -> int:
    """Instructions one parse (or validation) costs in ``checkout``: two processes' counts, differenced."""
    kind, given = work(what)
    # (run in the checkout: ``-c`` puts the working directory first on the path)
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}
    counts = []
    for count in (0, 0, repeat):  # the first run may compile bytecode: the second is the base
        out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                              sys.executable, "-c", DRIVER, kind, given, "50", str(count)],
                             env=env, cwd=checkout, capture_output=True, text=True, check=True).stderr
        counts.append(int(_REFS.search(out).group(1).replace(",", "")))  # type: ignore[union-attr]
    return round((counts[2] - counts[1]) / repeat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("protocols", nargs="*", help="protocol ids (default: the anchor and every native format)")
    parser.add_argument("--validate", action="store_true", help="the seed's valid (a) and invalid (b) calls")
    parser.add_argument("--against", type=Path, help="another checkout (e.g. a git worktree of an older commit)")
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("bench/instructions.py needs valgrind (apt install valgrind)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from toolform_rules import protocol_ids

    names = (["validate:a", "validate:b"] if args.validate
             else args.protocols or ["tool_call_tags", *protocol_ids("native")])
    checkouts = [ROOT] + ([args.against] if args.against else [])
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {(name, checkout): pool.submit(instructions, checkout, name, args.repeat)
                   for name in names for checkout in checkouts}
        counts = {key: future.result() for key, future in futures.items()}
    header = "| what | instructions |" + (" against | change |" if args.against else "")
    print(header)
    print("|---|---:|" + ("---:|---:|" if args.against else ""))
    for name in names:
        ours = counts[name, ROOT]
        row = f"| {name} | {ours:,} |"
        if args.against:
            other = counts[name, args.against]
            row += f" {other:,} | {100 * (ours - other) / other:+.1f}% |"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
