"""Memory: 10,000 distinct tools loaded, compiled and cached, in one process.

    .venv/bin/python bench/memory.py              # plain text
    .venv/bin/python bench/memory.py --markdown   # the table of docs/performance.md

Each tool is different (its name, its properties' names, bounds, enums and nesting vary
with its number) and about as rich as a real one: eight parameters — strings with lengths
and a pattern, an integer and a number with bounds, a boolean, an enum, an array of
strings, an object of three fields — four of them required.  All are loaded at once
(``load_tools`` of the OpenAI-format list), then each is validated once (profile ``sdk``),
which compiles its program and caches it on the tool; every tool, and so every program,
stays alive to the end.

Two fresh processes measure it: one reads the resident set size (``VmRSS`` of
``/proc/self/status``, the whole process: interpreter, libraries, everything) at each
step, the other the Python heap with ``tracemalloc`` (which slows allocation, so its run
is not timed).  Nothing here asserts a size: the target and the recorded results are in
docs/performance.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from typing import Any


def tool_definition(i: int) -> dict[str, Any]:
    """Tool number ``i``: eight parameters whose names, bounds and enum members depend on ``i``."""
    s = f"{i:05d}"
    return {"type": "function", "function": {
        "name": f"tool_{s}",
        "description": f"Tool number {i}: does one thing with its arguments.",
        "parameters": {
            "type": "object",
            "properties": {
                f"title_{s}": {"type": "string", "minLength": 1, "maxLength": 100 + i % 50},
                f"code_{s}": {"type": "string", "pattern": f"^[A-Z]{{{1 + i % 4}}}-[0-9]+$"},
                f"count_{s}": {"type": "integer", "minimum": 0, "maximum": 1000 + i},
                f"ratio_{s}": {"type": "number", "minimum": 0, "maximum": 1},
                f"enabled_{s}": {"type": "boolean", "default": False},
                f"mode_{s}": {"type": "string", "enum": [f"mode{i % 7}", f"mode{i % 11}x", "auto", "off"]},
                f"tags_{s}": {"type": "array", "maxItems": 10,
                              "items": {"type": "string", "maxLength": 32}},
                f"target_{s}": {"type": "object", "properties": {
                    "host": {"type": "string", "minLength": 1},
                    "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                    "secure": {"type": "boolean"},
                }, "required": ["host"]},
            },
            "required": [f"title_{s}", f"code_{s}", f"count_{s}", f"mode_{s}"],
        },
    }}


def valid_call(i: int) -> dict[str, Any]:
    s = f"{i:05d}"
    return {"name": f"tool_{s}", "arguments": {
        f"title_{s}": "a title", f"code_{s}": "A" * (1 + i % 4) + "-42", f"count_{s}": 7, f"mode_{s}": "auto",
        f"tags_{s}": ["x", "y"], f"target_{s}": {"host": "example.org", "port": 443}}}


def rss_bytes() -> int:
    """The process's resident set size (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(count: int, heap: bool) -> dict[str, Any]:
    """Load ``count`` tools, then compile each (by validating a call); sizes after each step."""
    import tracemalloc

    out: dict[str, Any] = {}
    if heap:
        tracemalloc.start()
    from toolform_rules import load_tools, validate_arguments

    validate_arguments(valid_call(0), load_tools([tool_definition(0)]))  # the library itself, warm
    definitions = [tool_definition(i) for i in range(count)]
    calls = [valid_call(i) for i in range(count)]
    gc.collect()
    out["baseline"] = tracemalloc.get_traced_memory()[0] if heap else rss_bytes()
    started = time.perf_counter()
    tools = load_tools(definitions)
    out["load_seconds"] = time.perf_counter() - started
    gc.collect()
    out["loaded"] = tracemalloc.get_traced_memory()[0] if heap else rss_bytes()
    started = time.perf_counter()
    failures = sum(not validate_arguments(call, tools).ok for call in calls)
    out["compile_seconds"] = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{failures} of the valid calls were refused: the benchmark's calls are wrong")
    gc.collect()
    out["compiled"] = tracemalloc.get_traced_memory()[0] if heap else rss_bytes()
    if heap:
        out["peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    out["programs"] = sum(len(tool.programs) for tool in tools.tools)
    out["tools"] = len(tools.tools)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", type=int, default=10_000, help="how many distinct tools (10000)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", choices=("rss", "heap"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        print(json.dumps(measure(opts.tools, heap=opts.child == "heap")))
        return 0

    results = {}
    for mode in ("rss", "heap"):
        done = subprocess.run([sys.executable, __file__, "--tools", str(opts.tools), "--child", mode],
                              capture_output=True, text=True, check=True)
        results[mode] = json.loads(done.stdout)
    rss, heap = results["rss"], results["heap"]
    mb = 1024 * 1024
    n = rss["tools"]
    rows = [
        ("tools loaded (load_tools), kept", f"{(rss['loaded'] - rss['baseline']) / mb:.1f} MB",
         f"{(heap['loaded'] - heap['baseline']) / mb:.1f} MB"),
        ("... and compiled, programs cached on them (sdk)", f"{(rss['compiled'] - rss['baseline']) / mb:.1f} MB",
         f"{(heap['compiled'] - heap['baseline']) / mb:.1f} MB"),
        ("per tool, loaded and compiled", f"{(rss['compiled'] - rss['baseline']) / n / 1024:.1f} KB",
         f"{(heap['compiled'] - heap['baseline']) / n / 1024:.1f} KB"),
        ("the whole process at the end", f"{rss['compiled'] / mb:.1f} MB", f"peak {heap['peak'] / mb:.1f} MB"),
    ]
    print(f"Python {platform.python_version()}, {platform.platform()}, {os.cpu_count()} CPUs; "
          f"{n:,} distinct tools, {rss['programs']:,} programs cached; load {rss['load_seconds']:.2f} s, "
          f"compile + validate once each {rss['compile_seconds']:.2f} s "
          f"({rss['compile_seconds'] / n * 1e3:.3f} ms per tool)")
    print()
    header = ("what", "resident (RSS)", "Python heap (tracemalloc)")
    if opts.markdown:
        print("| " + " | ".join(header) + " |")
        print("|---|---:|---:|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(3)]
        for row in (header, *rows):
            print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
