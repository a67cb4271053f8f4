"""How many calls ``parse_reply`` recovers from replies written the way models write them,
ours against the reference (a black box), protocol by protocol.

Every protocol's calls of the sample tool (some omitting optional arguments) are rendered
by the reference's renderer, then wrapped as models wrap them: prose before the call on its
line and on the line above, "Done." after the last value on its line, a paragraph after, a
``<think>`` block before, a title-cased tool name, a camelCase argument name.  A call counts
as recovered when the reply yields exactly one call, of the tool written, with the values
written (types exact after typing by the schema; a key spelled as written or as declared).
Used by ``tests/test_recovery_reference.py`` (which asserts) and ``bench/recovery.py`` (which
prints the table).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import attrs

from toolform_rules import parse_reply, protocol_ids, sample_toolset
from toolform_rules.schema.names import canonical_name

from .compare import identical

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from toolform.ir import ToolCall as RefCall
    from toolform.protocols import get_protocol as ref_protocol
    from toolform.sdk import parse_reply as ref_parse_reply
    from toolform.sdk import sample_toolset as ref_sample_toolset

TOOL = "legal_draft_v3"

CALLS: tuple[dict[str, Any], ...] = (
    {"counterparty": "Acme", "value": 1000, "term_months": 12, "auto_renew": True},
    {"counterparty": "Globex Corp", "value": 250.5, "term_months": 601},
    {"counterparty": "Initech", "value": 0, "term_months": 3, "auto_renew": False},
)

WRAPS: dict[str, Callable[[str], str]] = {
    "bare": lambda t: t,
    "prose before, same line": lambda t: f"Sure! {t}",
    "prose on the line above": lambda t: f"Sure, here is the call.\n{t}",
    "Done. after, same line": lambda t: f"{t} Done.",
    "paragraph after": lambda t: f"{t}\n\nThis drafts the contract with the terms you gave. Let me know.",
    "think block": lambda t: f"<think>The user wants a contract drafted.</think>\n{t}",
    "title-cased name": lambda t: t.replace(TOOL, "LegalDraftV3"),
    "camelCase argument": lambda t: t.replace("term_months", "termMonths"),
}


@attrs.frozen
class Recovery:
    """One protocol's count: ``ours`` and ``reference`` recovered of ``cases``; the cases only one recovers."""

    protocol_id: str
    ours: int
    reference: int
    cases: int
    only_reference: tuple[str, ...]
    only_ours: tuple[str, ...]


def recovered(calls: list[tuple[Any, Any]], want: dict[str, Any]) -> bool:
    """Exactly one call, of the sample tool, with ``want``'s values (keys compared by canonical name)."""
    if len(calls) != 1:
        return False
    name, arguments = calls[0]
    if name != TOOL or not isinstance(arguments, dict):
        return False
    got = {canonical_name(k): v for k, v in arguments.items()}
    return identical(got, {canonical_name(k): v for k, v in want.items()}, key_order=False)


def ours_calls(text: str, protocol_id: str) -> list[tuple[Any, Any]]:
    reply = parse_reply(text, sample_toolset(), protocol_id, validate=False)
    return [(c.resolved_name, c.arguments) for c in (*reply.calls, *reply.rejected)]


def reference_calls(text: str, protocol_id: str) -> list[tuple[Any, Any]]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reply = ref_parse_reply(text, ref_sample_toolset(), protocol_id)
    except Exception:  # the reference raising on model text counts as nothing recovered
        return []
    return [(c.resolved_name, c.arguments) for c in reply.calls]


def cases(protocol_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(wrap name, reply text, the arguments written) for every call and wrap."""
    out = []
    for arguments in CALLS:
        rendered = ref_protocol(protocol_id).render_calls([RefCall(TOOL, arguments)])
        out.extend((wrap_name, wrap(rendered), arguments) for wrap_name, wrap in WRAPS.items())
    return out


def recovery(protocol_id: str) -> Recovery:
    ours = ref = 0
    only_ref: list[str] = []
    only_ours: list[str] = []
    all_cases = cases(protocol_id)
    for wrap_name, text, arguments in all_cases:
        mine = recovered(ours_calls(text, protocol_id), arguments)
        theirs = recovered(reference_calls(text, protocol_id), arguments)
        ours, ref = ours + mine, ref + theirs
        if theirs and not mine:
            only_ref.append(wrap_name)
        if mine and not theirs:
            only_ours.append(wrap_name)
    return Recovery(protocol_id, ours, ref, len(all_cases), tuple(sorted(set(only_ref))), tuple(sorted(set(only_ours))))


def all_recovery() -> list[Recovery]:
    return [recovery(protocol_id) for protocol_id in protocol_ids()]
