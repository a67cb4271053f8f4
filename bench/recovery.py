"""How many calls ``parse_reply`` recovers from replies written the way models write them, ours
against the reference, protocol by protocol.

    .venv/bin/python bench/recovery.py              # plain text
    .venv/bin/python bench/recovery.py --markdown

For every protocol, a few calls of the sample tool (some omitting optional arguments) are
rendered by the reference's renderer, then wrapped as models wrap them: prose before the
call on its line and on the line above, "Done." after the last value on its line, a
paragraph after, a ``<think>`` block before, a title-cased tool name, a camelCase argument
name.  A call counts as recovered when the reply yields exactly one call, of the tool
written, with the arguments written (values compared after typing by the schema, key
spelled as written or as declared).  Both implementations read the same texts.  Nothing
here asserts: issue 10 asks ours ≥ the reference in every protocol and ≥ 95% overall.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from toolform.ir import ToolCall as RefCall
from toolform.protocols import get_protocol as ref_protocol
from toolform.sdk import parse_reply as ref_parse_reply
from toolform.sdk import sample_toolset as ref_sample_toolset

from toolform_rules import parse_reply, protocol_ids, sample_toolset
from toolform_rules.schema.names import canonical_name

CALLS: list[dict[str, Any]] = [
    {"counterparty": "Acme", "value": 1000, "term_months": 12, "auto_renew": True},
    {"counterparty": "Globex Corp", "value": 250.5, "term_months": 601},
    {"counterparty": "Initech", "value": 0, "term_months": 3, "auto_renew": False},
]

WRAPS: dict[str, Callable[[str], str]] = {
    "bare": lambda t: t,
    "prose before, same line": lambda t: f"Sure! {t}",
    "prose on the line above": lambda t: f"Sure, here is the call.\n{t}",
    "Done. after, same line": lambda t: f"{t} Done.",
    "paragraph after": lambda t: f"{t}\n\nThis drafts the contract with the terms you gave. Let me know.",
    "think block": lambda t: f"<think>The user wants a contract drafted.</think>\n{t}",
    "title-cased name": lambda t: t.replace("legal_draft_v3", "LegalDraftV3"),
    "camelCase argument": lambda t: t.replace("term_months", "termMonths"),
}


def _same(got: list[tuple[Any, dict]], want: dict[str, Any]) -> bool:
    if len(got) != 1:
        return False
    name, arguments = got[0]
    if name != "legal_draft_v3":
        return False
    by_canonical = {canonical_name(k): v for k, v in arguments.items()}
    return by_canonical == {canonical_name(k): v for k, v in want.items()}


def _ours(text: str, protocol_id: str) -> list[tuple[Any, dict]]:
    reply = parse_reply(text, sample_toolset(), protocol_id, validate=False)
    return [(c.resolved_name, c.arguments) for c in (*reply.calls, *reply.rejected)]


def _ref(text: str, protocol_id: str) -> list[tuple[Any, dict]]:
    try:
        reply = ref_parse_reply(text, ref_sample_toolset(), protocol_id)
    except Exception:  # the reference raising on model text counts as nothing recovered
        return []
    return [(c.resolved_name, c.arguments) for c in reply.calls]


def recovery() -> dict[str, tuple[int, int, int, list[str]]]:
    """protocol -> (ours recovered, reference recovered, cases, the cases only the reference recovers)."""
    out = {}
    for protocol_id in protocol_ids():
        ours = ref = cases = 0
        lost: list[str] = []
        for arguments in CALLS:
            rendered = ref_protocol(protocol_id).render_calls([RefCall("legal_draft_v3", arguments)])
            for wrap_name, wrap in WRAPS.items():
                text = wrap(rendered)
                cases += 1
                mine, theirs = _same(_ours(text, protocol_id), arguments), _same(_ref(text, protocol_id), arguments)
                ours += mine
                ref += theirs
                if theirs and not mine:
                    lost.append(wrap_name)
        out[protocol_id] = (ours, ref, cases, lost)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true")
    opts = parser.parse_args(argv)
    results = recovery()
    rows = [["protocol", "ours", "reference", "cases", "only the reference recovers"]]
    for protocol_id, (ours, ref, cases, lost) in results.items():
        rows.append([protocol_id, str(ours), str(ref), str(cases), ", ".join(sorted(set(lost))) or "—"])
    total_ours = sum(r[0] for r in results.values())
    total_ref = sum(r[1] for r in results.values())
    total = sum(r[2] for r in results.values())
    rows.append(["all", f"{total_ours} ({total_ours / total:.0%})", f"{total_ref} ({total_ref / total:.0%})",
                 str(total), f"{sum(1 for r in results.values() if r[0] < r[1])} protocols below the reference"])
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
