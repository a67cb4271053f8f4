"""What does a policy cost?  One process, run by hand:

    .venv/bin/python bench/policy.py              # a plain-text table
    .venv/bin/python bench/policy.py --markdown   # the same as Markdown (docs/performance.md)

A policy of 20 constraints, all applying to the sample tool ``legal_draft_v3`` (bounds,
list membership, string functions, a pattern, ``has``, a quantifier, arithmetic), is
applied to a valid call and to a call that trips several constraints.  The cost of the
policy is ``validate_arguments(..., policy=)`` minus ``validate_arguments(...)`` on the
same call, each the best of several ``timeit`` repeats.  Loading and checking the
policy (with the tools) is timed from its text.  Targets (docs/performance.md): ≤ 20 µs
added per call, ≤ 50 ms to load and check.  Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import time
import timeit
from typing import Any, Callable

from toolform_rules import load_policy, sample_toolset, validate_arguments
from toolform_rules.policy.evaluate import evaluate_by_walking

CONSTRAINTS = [
    ("value-cap", "args.value <= 1000000"),
    ("value-positive", "args.value > 0"),
    ("term-range", "1 <= args.term_months <= 120"),
    ("term-years", "args.term_months <= 12 or args.value < 500000"),
    ("party-known", "lower(args.counterparty) in lists.parties"),
    ("party-blocked", "args.counterparty not in lists.blocked"),
    ("party-length", "len(args.counterparty) <= 80"),
    ("party-trimmed", "trim(args.counterparty) == args.counterparty"),
    ("party-pattern", 'matches(args.counterparty, "^[A-Za-z0-9 .,&-]+$")'),
    ("party-prefix", 'not startswith(lower(args.counterparty), "test")'),
    ("renew-short", "not has(args.auto_renew) or not args.auto_renew or args.term_months <= 24"),
    ("details-status", 'not has(args.contract_details.status) or args.contract_details.status != "expired"'),
    ("details-id", 'not has(args.contract_details.contract_id) or '
                   'startswith(args.contract_details.contract_id, "C-")'),
    ("party-not-test", 'not endswith(lower(args.counterparty), "test")'),
    ("value-round", "args.value - args.value / 2 * 2 == 0"),
    ("tags-any", "all(len(p) < 40 for p in lists.parties)"),
    ("count-blocked", "count(p == lower(args.counterparty) for p in lists.blocked) == 0"),
    ("value-term", "args.value / args.term_months <= 100000"),
    ("name", 'call.name == "legal_draft_v3"'),
    ("party-not-self", 'lower(args.counterparty) != "our company"'),
]


def policy_text(n: int = 20) -> str:
    """The benchmark's policy: the first ``n`` constraints, all for the sample tool."""
    lines = ["policy: bench", "version: 1", "lists:",
             "  parties: [acme, globex, initech, umbrella, hooli, stark, wayne, tyrell, cyberdyne, wonka]",
             "  blocked: [evil corp, shady llc]", "constraints:"]
    for name, check in CONSTRAINTS[:n]:
        lines += [f"  - id: bench.{name}", "    tools: [legal_draft_v3]", f"    check: '{check.replace(chr(39), chr(39) * 2)}'"]
    return "\n".join(lines) + "\n"


VALID = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 1000, "term_months": 12,
                                                 "auto_renew": False,
                                                 "contract_details": {"contract_id": "C-1", "status": "draft"}}}
TRIPPING = {"name": "legal_draft_v3", "arguments": {"counterparty": "Evil Corp", "value": 5000000,
                                                    "term_months": 48, "auto_renew": True}}


def best(fn: Callable[[], Any], number: int = 20_000, repeat: int = 7) -> float:
    """Seconds per call: the best of ``repeat`` runs of ``number`` calls."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true")
    markdown = parser.parse_args().markdown
    tools = sample_toolset()
    text = policy_text()
    loads = []
    for _ in range(20):
        started = time.perf_counter()
        policy = load_policy(text, tools=tools)
        loads.append(time.perf_counter() - started)
    load_ms = min(loads) * 1e3
    rows = []
    for label, call in (("valid call", VALID), ("call tripping 6 constraints", TRIPPING)):
        plain = best(lambda: validate_arguments(call, tools))
        with_policy = best(lambda: validate_arguments(call, tools, policy=policy))
        fired = len(validate_arguments(call, tools, policy=policy).findings) - \
            len(validate_arguments(call, tools).findings)
        rows.append((label, plain * 1e6, with_policy * 1e6, (with_policy - plain) * 1e6, fired))
    # a constraint on ``norm`` pays for one normalisation of the call (computed once, when first read)
    norm_policy = load_policy(policy_text() + "  - id: bench.norm\n    check: norm.counterparty != ''\n", tools=tools)
    norm_adds = (best(lambda: validate_arguments(VALID, tools, policy=norm_policy))
                 - best(lambda: validate_arguments(VALID, tools, policy=policy))) * 1e6
    # the reference evaluator, for scale: the same 20 checks by walking the trees
    scope_call = VALID["arguments"]
    walked = best(lambda: [evaluate_by_walking(c.check, policy.scope("legal_draft_v3", scope_call))
                           for c in policy.constraints], number=2_000)
    header = ("case", "validate µs", "with policy µs", "policy adds µs", "policy findings")
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print(f"| {row[0]} | {row[1]:.2f} | {row[2]:.2f} | **{row[3]:.2f}** | {row[4]} |")
        print(f"\nLoading and checking the 20-constraint policy against the sample tool: **{load_ms:.1f} ms** "
              f"(best of 20).  The 20 checks by the tree-walking evaluator: {walked * 1e6:.1f} µs.  "
              f"A 21st constraint reading `norm` adds {norm_adds:.1f} µs (one normalisation of the call).")
    else:
        for row in rows:
            print(f"{row[0]:<30} validate {row[1]:7.2f} µs   with policy {row[2]:7.2f} µs   "
                  f"adds {row[3]:6.2f} µs   ({row[4]} findings)")
        print(f"load + check 20 constraints: {load_ms:.1f} ms;  tree-walking the 20 checks: {walked * 1e6:.1f} µs;  "
              f"a constraint on norm adds {norm_adds:.1f} µs")


if __name__ == "__main__":
    main()
