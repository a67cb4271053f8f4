"""Benchmark: parse_stream fed one character at a time, against one parse_reply of the whole reply.

    .venv/bin/python bench/stream.py              # a plain table
    .venv/bin/python bench/stream.py --markdown   # as recorded in docs/performance.md

For each protocol, a reply of about 4 KB: a sentence, then the sample call rendered as many
times as fits (as several calls: one reply, many calls), then a sentence.  It is read once
by ``parse_reply`` and once by a stream fed every character on its own (``close()``
included); the ratio is the second's time over the first's.  Issue 11's target: <= 20x.
Times are the best of ``--repeat`` runs, in one process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from toolform_rules import ToolCall, get_protocol, parse_reply, parse_stream, protocol_ids, sample_toolset

CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme Holdings", "value": 12000, "term_months": 24,
                                   "auto_renew": True, "contract_details": {"contract_id": "C-1042"}})


def reply_of(protocol_id: str, size: int = 4096) -> str:
    protocol = get_protocol(protocol_id)
    one = len(protocol.render_calls([CALL]))
    calls = max(1, (size - 80) // (one + 1)) if protocol.info.parallel else 1
    return "Sure, I'll do that now.\n" + protocol.render_calls([CALL] * calls) + "\nLet me know if that works."


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--protocols", nargs="*", default=None)
    args = parser.parse_args(argv)
    tools = sample_toolset()
    rows = []
    for protocol_id in args.protocols or protocol_ids("all"):
        text = reply_of(protocol_id)

        def whole() -> None:
            parse_reply(text, tools, protocol_id)

        def streamed() -> None:
            stream = parse_stream(tools, protocol_id)
            for character in text:
                stream.feed(character)
            stream.close()

        whole()
        streamed()
        w, s = best(whole, args.repeat), best(streamed, args.repeat)
        rows.append((protocol_id, len(text), len(parse_reply(text, tools, protocol_id).calls), w * 1e3, s * 1e3, s / w))
    ratios = [r[5] for r in rows]
    if args.markdown:
        print("| protocol | bytes | calls | parse_reply ms | streamed, 1 character a feed, ms | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for p, n, c, w, s, x in rows:
            print(f"| {p} | {n} | {c} | {w:.2f} | {s:.2f} | {x:.1f}× |")
        print(f"\n- median ratio **{statistics.median(ratios):.1f}×**, highest **{max(ratios):.1f}×** "
              f"({rows[ratios.index(max(ratios))][0]}); target ≤ 20×")
    else:
        for p, n, c, w, s, x in rows:
            print(f"{p:24} {n:5} B {c:3} calls  whole {w:7.2f} ms  streamed {s:8.2f} ms  {x:5.1f}x")
        print(f"median {statistics.median(ratios):.1f}x, highest {max(ratios):.1f}x "
              f"({rows[ratios.index(max(ratios))][0]}); target <= 20x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
