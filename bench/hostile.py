"""How long ``parse_reply`` takes on long and hostile replies, per protocol and shape.

    .venv/bin/python bench/hostile.py                     # 100 KB and 1 MB, the study protocols, every shape
    .venv/bin/python bench/hostile.py --sizes 1000000 --kind all   # what `make bench` prints: 65 protocols at 1 MB
    .venv/bin/python bench/hostile.py --sizes 100000 --protocols json_object,python_call
    .venv/bin/python bench/hostile.py --markdown

Six shapes of text, each cut to the size asked (what a model or an attacker can send):

* ``prose``: sentences, no call;
* ``key_value``: ``key_n: value n`` lines;
* ``open_brackets``: ``[{`` repeated, never closed;
* ``open_tags``: unclosed ``<tool_call>`` tags with text between;
* ``call_like``: prose that names the tool and its arguments again and again;
* ``huge_argument``: one real call of the protocol whose ``counterparty`` is the whole size.

Each (protocol, size) runs in a fresh child process that reads the shapes one after the other,
with a time limit (``--timeout``, 30 s per shape), so a super-linear case cannot stall the run.
A cell's time is the best of ``--repeat`` parses after a warm-up (the grammars built), in the
child's CPU time: a parse runs on one thread, so on an idle machine this is its wall-clock time,
and on a shared one it leaves out the time other processes held the CPU.  A cell over the target
(≤ 0.25 s per MB) is marked ✗ and named at the end.  Nothing here asserts a time: the figures are
recorded in docs/performance.md (that every reader's work grows linearly, the tests count:
tests/test_linear_work.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

SHAPES = ("prose", "key_value", "open_brackets", "open_tags", "call_like", "huge_argument")
#: issue 10's target: one reply of any of the shapes read in at most this many seconds per MB
TARGET_PER_MB = 0.25


def hostile_text(shape: str, size: int, protocol_id: str) -> str:
    """``size`` characters of ``shape`` (for ``huge_argument``: one call of ``protocol_id``)."""
    if shape == "prose":
        unit = "The quick brown fox jumps over the lazy dog, and then it rests a while. "
    elif shape == "key_value":
        return "".join(f"key_{i}: value {i}\n" for i in range(size // 10 + 1))[:size]
    elif shape == "open_brackets":
        unit = "[{"
    elif shape == "open_tags":
        unit = "<tool_call> legal_draft_v3 {\"counterparty\": "
    elif shape == "call_like":
        unit = "Call legal_draft_v3(counterparty=Acme, value=5, term_months=12 and then "
    elif shape == "huge_argument":
        return huge_call(protocol_id, size)
    else:
        raise ValueError(shape)
    return (unit * (size // len(unit) + 1))[:size]


def huge_call(protocol_id: str, size: int) -> str:
    from toolform_rules import ToolCall, get_protocol, sample_toolset

    protocol = get_protocol(protocol_id)
    call = ToolCall("legal_draft_v3", {"counterparty": "A" * size, "value": 5, "term_months": 12})
    try:
        return protocol.render_calls([call], tools=sample_toolset())  # type: ignore[call-arg]
    except TypeError:
        return protocol.render_calls([call])


def child(protocol_id: str, shapes: list[str], size: int, repeat: int) -> None:
    """Print, one JSON line per shape as it is done, how long ``parse_reply`` takes on it."""
    from toolform_rules import parse_reply, sample_toolset

    tools = sample_toolset()
    parse_reply("warm up", tools, protocol_id)
    for shape in shapes:
        text = hostile_text(shape, size, protocol_id)
        parse_reply(text[:1000], tools, protocol_id)  # the grammars this shape reaches, built
        runs = []
        for _ in range(repeat):
            t0 = time.process_time()
            reply = parse_reply(text, tools, protocol_id)
            runs.append(time.process_time() - t0)
        print(json.dumps({"shape": shape, "seconds": min(runs), "chars": len(text), "calls": len(reply.calls)}),
              flush=True)


def measure(protocol_id: str, shapes: list[str], size: int, repeat: int, timeout: float) -> dict[str, dict[str, Any]]:
    """Each shape's cell, read by one child process for the protocol (``timeout`` seconds per shape at
    most: a shape the child did not finish, and every later one, is noted instead of timed)."""
    command = [sys.executable, __file__, "--child", protocol_id, ",".join(shapes), str(size), str(repeat)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout * len(shapes))
        out, problem = done.stdout, None if done.returncode == 0 else "error: " + (
            done.stderr.strip().splitlines() or ["?"])[-1][:80]
    except subprocess.TimeoutExpired as stopped:
        partial = stopped.stdout or ""
        out, problem = partial.decode() if isinstance(partial, bytes) else partial, f"> {timeout:g} s"
    cells = {cell["shape"]: cell for cell in map(json.loads, out.splitlines())}
    return {shape: cells.get(shape, {"seconds": None, "note": problem or "?"}) for shape in shapes}


def target(size: int) -> float:
    """The most one parse of ``size`` characters may take: 0.25 s per MB, from 1 MB up (below it, the fixed
    costs and the bounded probes of a reply weigh more than its length: the ratio column shows the growth)."""
    return TARGET_PER_MB * size / 1_000_000 if size >= 1_000_000 else float("inf")


def cell_text(cell: dict[str, Any], size: int) -> str:
    if cell["seconds"] is None:
        return f"{cell['note']} ✗"
    return f"{cell['seconds'] * 1e3:.1f} ms" + (" ✗" if cell["seconds"] > target(size) else "")


def header(sizes: list[int], shapes: list[str]) -> list[str]:
    """One size: a protocol per row, a shape per column.  Several: a (protocol, shape) per row, a size per
    column (and their ratio, for two)."""
    if len(sizes) == 1:
        return ["protocol", *shapes]
    return ["protocol", "shape", *(f"{s // 1000} KB" for s in sizes), *(["ratio"] if len(sizes) == 2 else [])]


def rows(protocol_id: str, cells: dict[int, dict[str, dict[str, Any]]], sizes: list[int],
         shapes: list[str]) -> list[list[str]]:
    """The protocol's rows of the table :func:`header` heads."""
    if len(sizes) == 1:
        return [[protocol_id, *(cell_text(cells[sizes[0]][shape], sizes[0]) for shape in shapes)]]
    table = []
    for shape in shapes:
        row = [protocol_id, shape, *(cell_text(cells[size][shape], size) for size in sizes)]
        if len(sizes) == 2:
            a, b = (cells[size][shape]["seconds"] for size in sizes)
            row.append(f"{b / a:.1f}×" if a and b else "—")
        table.append(row)
    return table


def over_target(protocol_id: str, cells: dict[int, dict[str, dict[str, Any]]]) -> list[str]:
    """The protocol's cells over the target (or not timed), named."""
    return [f"{protocol_id}/{shape}" + (f" at {size // 1000} KB" if len(cells) > 1 else "")
            for size, by_shape in cells.items() for shape, cell in by_shape.items()
            if cell["seconds"] is None or cell["seconds"] > target(size)]


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--protocols", default="")
    parser.add_argument("--kind", default="study", choices=("study", "native", "all"),
                        help="which protocols, when --protocols does not name them (protocol_ids(kind))")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one shape may take in all")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = arguments(argv)
    if opts.child:
        protocol_id, shapes, size, repeat = opts.child
        child(protocol_id, shapes.split(","), int(size), int(repeat))
        return 0

    from toolform_rules import protocol_ids

    began = time.perf_counter()
    protocols = opts.protocols.split(",") if opts.protocols else protocol_ids(opts.kind)
    sizes = [int(s) for s in opts.sizes.split(",")]
    shapes = opts.shapes.split(",")
    heads = header(sizes, shapes)
    show(heads, opts.markdown)
    if opts.markdown:
        show(["---"] + ["---:"] * (len(heads) - 1), True)
    over: list[str] = []
    for protocol_id in protocols:
        cells = {size: measure(protocol_id, shapes, size, opts.repeat, opts.timeout) for size in sizes}
        over += over_target(protocol_id, cells)
        for row in rows(protocol_id, cells, sizes, shapes):
            show(row, opts.markdown)
    count = len(protocols) * len(sizes) * len(shapes)
    print(f"\n{len(over)} of {count} cells over the target (≤ {TARGET_PER_MB:g} s per MB from 1 MB up, ✗): "
          f"{', '.join(over) or 'none'}\n({len(protocols)} protocols, best of {opts.repeat} parse_reply calls per "
          f"cell after a warm-up, CPU time, {time.perf_counter() - began:.0f} s in all)")
    return 0


def show(row: list[str], markdown: bool) -> None:
    print("| " + " | ".join(row) + " |" if markdown else " | ".join(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
