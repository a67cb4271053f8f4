"""Cold start: how long a new process takes to import, validate one call and parse one reply.

    .venv/bin/python bench/startup.py              # plain text
    .venv/bin/python bench/startup.py --markdown   # the table of docs/performance.md

Each variant is a fresh ``python -c`` process (the command line: the ``toolform-rules``
console script), run ``--runs`` times, the variants interleaved so that a noisy stretch
spoils one run of each rather than every run of one; the median wall-clock time of each is
shown (process start-up included: the first row is an empty interpreter).

What the processes share, as an installed package would have it:

* **bytecode**: every module's ``.pyc`` is written once, before the timed runs, into a
  temporary ``PYTHONPYCACHEPREFIX`` (a wheel installed by pip has its bytecode compiled at
  install time; this checkout is run with ``PYTHONDONTWRITEBYTECODE``, which would
  otherwise recompile our sources in every process).  ``--no-bytecode`` times them
  without it.
* **the compiled built-in rules**: ``rules/compiled.json``, built with the package (and kept
  current in a checkout) from the rule files; the variant marked "no rule cache" sets
  ``TOOLFORM_RULES_CACHE=off``, so each run reads the YAML itself.

Nothing here asserts a time: the targets and the recorded results are in
docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CALL = ('{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, '
        '"term_months": "ten", "colour": "red"}}')
REPLY = ('Sure. {"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", "value": -5, '
         '"termMonths": 12}}')

#: One session: import, validate the seed's call, parse one json_object reply (validating it).
OURS_SESSION = f"""
from toolform_rules import parse_reply, sample_toolset, validate_arguments
import json
tools = sample_toolset()
assert validate_arguments(json.loads({CALL!r}), tools).n_errors == 3
assert parse_reply({REPLY!r}, tools, "json_object").calls[0].valid is False
"""
REFERENCE_SESSION = f"""
import toolform.sdk as ts
import json
tools = ts.sample_toolset()
assert ts.validate_arguments(json.loads({CALL!r}), tools).to_dict()["n_errors"] == 3
assert ts.parse_reply({REPLY!r}, tools, "json_object").calls[0].valid is False
"""


def console_script() -> list[str]:
    """The ``toolform-rules`` command beside this interpreter (else the same entry point via ``-c``)."""
    script = Path(sys.executable).with_name("toolform-rules")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from toolform_rules.cli import main; sys.exit(main())"]


def variants() -> list[tuple[str, list[str], bool]]:
    """(label, command, whether it gets a fresh empty rule cache each run)."""
    python = sys.executable
    return [
        ("python -c pass (the interpreter alone)", [python, "-c", "pass"], False),
        ("import toolform_rules", [python, "-c", "import toolform_rules"], False),
        ("ours: import + validate one call + parse one json_object reply", [python, "-c", OURS_SESSION], False),
        ("ours: the same, no rule cache (YAML read and checked)", [python, "-c", OURS_SESSION], True),
        ("reference: import + validate one call + parse one json_object reply",
         [python, "-c", REFERENCE_SESSION], False),
        ("toolform-rules validate CALL", [*console_script(), "validate", CALL], False),
    ]


def run_once(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):  # validate exits 1 on an invalid call
        raise SystemExit(f"{command[:3]} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per variant (21)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="run as this environment is set up (no shared bytecode folder)")
    opts = parser.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="toolform-startup-"))
    try:
        env = dict(os.environ)
        if not opts.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
        cases = variants()
        for _, command, _ in cases:  # warm-up: bytecode written, disk cache warm
            run_once(command, env)
        times: dict[str, list[float]] = {label: [] for label, _, _ in cases}
        for _ in range(opts.runs):
            for label, command, fresh_cache in cases:
                run_env = env
                if fresh_cache:
                    run_env = {**env, "TOOLFORM_RULES_CACHE": "off"}
                times[label].append(run_once(command, run_env))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    medians = {label: statistics.median(values) for label, values in times.items()}
    reference = medians["reference: import + validate one call + parse one json_object reply"]
    rows = []
    for label, values in times.items():
        median = medians[label]
        spread = f"{min(values) * 1e3:.0f}–{max(values) * 1e3:.0f}"
        rows.append((label, f"{median * 1e3:.0f}", spread, f"{median / reference:.2f}×"))
    started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    print(f"Python {platform.python_version()}, {platform.platform()}, {os.cpu_count()} CPUs, {started}; "
          f"median of {opts.runs} fresh processes per row, interleaved; "
          f"{'no shared bytecode' if opts.no_bytecode else 'bytecode compiled once beforehand'}")
    print()
    header = ("process", "median ms", "min–max ms", "/ reference")
    if opts.markdown:
        print("| " + " | ".join(header) + " |")
        print("|---|---:|---:|---:|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
        for row in (header, *rows):
            print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
