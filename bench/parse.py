"""Benchmark: parse_reply (parse + normalise + validate) per answer protocol, against the reference.

    .venv/bin/python bench/parse.py              # a plain table
    .venv/bin/python bench/parse.py --markdown   # Markdown, as recorded in docs/performance.md

For each protocol, one reply of about 250 bytes: prose, the sample call as the reference
renders it in that protocol, prose again.  Both implementations parse the same text with
the same toolset (the study's sample tool), validating; the best of several timeit repeats,
after a warm-up, in one process.  Prints µs per reply and the ratio, and the median ratio
over the protocols (the target: at least 3×).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import timeit
import warnings

warnings.simplefilter("ignore")

from toolform.ir import ToolCall as RefCall  # noqa: E402  (the reference, a black box)
from toolform.protocols import get_protocol as ref_protocol  # noqa: E402
from toolform.sdk import parse_reply as ref_parse_reply  # noqa: E402
from toolform.sdk import sample_toolset as ref_sample_toolset  # noqa: E402

from toolform_rules import parse_reply, protocol_ids, sample_toolset  # noqa: E402

ARGUMENTS = {"counterparty": "Acme Holdings", "value": 12000, "term_months": 24, "auto_renew": True,
             "contract_details": {"contract_id": "C-1042", "status": "draft"}}
BEFORE = "Sure — I'll draft that contract for you now.\n"
AFTER = "\nLet me know if anything should change."


def reply_for(protocol_id: str) -> str:
    """About 250 bytes: prose, the call as the reference renders it, prose."""
    rendered = ref_protocol(protocol_id).render_calls([RefCall("legal_draft_v3", ARGUMENTS)])
    return BEFORE + rendered + AFTER


def best(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    ours_tools, ref_tools = sample_toolset(), ref_sample_toolset()
    rows = []
    for protocol_id in protocol_ids():
        text = reply_for(protocol_id)
        ours = parse_reply(text, ours_tools, protocol_id)
        ref = ref_parse_reply(text, ref_tools, protocol_id)
        same = [c.arguments for c in ours.calls] == [c.arguments for c in ref.calls]
        number = 200
        t_ours = best(lambda: parse_reply(text, ours_tools, protocol_id), number, args.repeat)
        t_ref = best(lambda: ref_parse_reply(text, ref_tools, protocol_id), number // 4, args.repeat)
        rows.append((protocol_id, len(text.encode()), t_ours, t_ref, t_ref / t_ours, len(ours.calls), same))
    ratio = statistics.median(r[4] for r in rows)
    head = (f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}, "
            f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}")
    if args.markdown:
        print(head + "\n")
        print("| protocol | bytes | ours µs | reference µs | reference / ours | calls | same arguments |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for p, size, o, r, x, n, same in rows:
            print(f"| {p} | {size} | {o:.1f} | {r:.1f} | {x:.1f}× | {n} | {'yes' if same else 'no'} |")
        print(f"\nMedian over {len(rows)} protocols: reference / ours = {ratio:.1f}× "
              f"(ours median {statistics.median(r[2] for r in rows):.1f} µs, "
              f"reference median {statistics.median(r[3] for r in rows):.1f} µs).")
    else:
        print(head)
        for p, size, o, r, x, n, same in rows:
            print(f"{p:22} {size:4} B  ours {o:8.1f} µs  ref {r:8.1f} µs  {x:5.1f}×  calls {n}  "
                  f"{'same' if same else 'DIFFERENT'}")
        print(f"median ratio {ratio:.1f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
