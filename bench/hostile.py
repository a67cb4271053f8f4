"""How long ``parse_reply`` takes on long and hostile replies, per protocol and shape.

    .venv/bin/python bench/hostile.py                     # 100 KB and 1 MB, every protocol and shape
    .venv/bin/python bench/hostile.py --sizes 100000 --protocols json_object,python_call
    .venv/bin/python bench/hostile.py --markdown

Six shapes of text, each cut to the size asked (what a model or an attacker can send):

* ``prose``: sentences, no call;
* ``key_value``: ``key_n: value n`` lines;
* ``open_brackets``: ``[{`` repeated, never closed;
* ``open_tags``: unclosed ``<tool_call>`` tags with text between;
* ``call_like``: prose that names the tool and its arguments again and again;
* ``huge_argument``: one real call of the protocol whose ``counterparty`` is the whole size.

Each (protocol, shape, size) runs in a fresh child process with a time limit (``--timeout``,
30 s), so a super-linear case cannot stall the run; its time is the best of ``--repeat``
parses after one warm-up (the grammar built).  Nothing here asserts a time: the targets
(≤ 0.25 s per MB, 1 MB ≤ 12× 100 KB) are judged in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

SHAPES = ("prose", "key_value", "open_brackets", "open_tags", "call_like", "huge_argument")


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


def child(protocol_id: str, shape: str, size: int, repeat: int) -> dict[str, Any]:
    from toolform_rules import parse_reply, sample_toolset

    tools = sample_toolset()
    text = hostile_text(shape, size, protocol_id)
    parse_reply("warm up", tools, protocol_id)
    runs = []
    calls = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        reply = parse_reply(text, tools, protocol_id)
        runs.append(time.perf_counter() - t0)
        calls = len(reply.calls)
    return {"seconds": min(runs), "chars": len(text), "calls": calls}


def measure(protocol_id: str, shape: str, size: int, repeat: int, timeout: float) -> dict[str, Any]:
    try:
        done = subprocess.run([sys.executable, __file__, "--child", protocol_id, shape, str(size), str(repeat)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"> {timeout:g} s"}
    if done.returncode != 0:
        return {"seconds": None, "note": "error: " + done.stderr.strip().splitlines()[-1][:80]}
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--protocols", default="")
    parser.add_argument("--kind", default="study", choices=("study", "native", "all"),
                        help="which protocols, when --protocols does not name them (protocol_ids(kind))")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        protocol_id, shape, size, repeat = opts.child
        print(json.dumps(child(protocol_id, shape, int(size), int(repeat))))
        return 0

    from toolform_rules import protocol_ids

    protocols = opts.protocols.split(",") if opts.protocols else protocol_ids(opts.kind)
    sizes = [int(s) for s in opts.sizes.split(",")]
    shapes = opts.shapes.split(",")
    header = ["protocol", "shape", *(f"{s // 1000} KB" for s in sizes)]
    if len(sizes) == 2:
        header.append("ratio")
    rows = []
    worst: list[tuple[float, str]] = []
    for protocol_id in protocols:
        for shape in shapes:
            cells = [measure(protocol_id, shape, size, opts.repeat, opts.timeout) for size in sizes]
            row = [protocol_id, shape]
            for cell in cells:
                row.append(f"{cell['seconds'] * 1e3:.1f} ms" if cell["seconds"] is not None else cell["note"])
            if len(sizes) == 2:
                a, b = cells[0]["seconds"], cells[1]["seconds"]
                row.append(f"{b / a:.1f}×" if a and b else "—")
                worst.append((b if b is not None else float("inf"), f"{protocol_id}/{shape}"))
            rows.append(row)
            print(" | ".join(row) if not opts.markdown else "| " + " | ".join(row) + " |", flush=True)
    if worst:
        over = [name for seconds, name in worst if seconds > 0.25]
        print(f"\n{len(over)} of {len(worst)} over 0.25 s at the largest size: {', '.join(over) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
