"""When the asked protocol finds no call, naming the reply's syntax costs a bounded probe."""

from __future__ import annotations

from toolform_rules import Limits, parse_reply, sample_toolset
from toolform_rules.replies.formats import REGISTRY, lenient_order
from toolform_rules.replies.formats import protocol_ids

CALL = '<tool_call>{"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 1, "term_months": 2}}' \
       '</tool_call>'


def test_the_syntax_of_a_call_in_another_format_is_named():
    reply = parse_reply(CALL, sample_toolset(), "python_call")
    # (native, the first protocol tried, reads the provider JSON inside the tags)
    assert not reply.calls and reply.matched_syntax == "native" and not reply.format_compliant


def test_without_lenient_fallback_only_the_start_of_the_reply_is_probed():
    late = "Let me think. " * 2_000 + CALL  # 28,000 characters of prose first
    limits = Limits(syntax_probe_chars=1_000)
    reply = parse_reply(late, sample_toolset(), "python_call", limits=limits)
    assert reply.matched_syntax == "" and reply.format_compliant
    wide = Limits(syntax_probe_chars=len(late))
    assert parse_reply(late, sample_toolset(), "python_call", limits=wide).matched_syntax == "native"


def test_with_lenient_fallback_the_whole_reply_is_read():
    late = "Let me think. " * 2_000 + CALL
    reply = parse_reply(late, sample_toolset(), "python_call", lenient_fallback=True,
                        limits=Limits(syntax_probe_chars=1_000))
    assert reply.matched_syntax == "native" and [c.resolved_name for c in reply.calls] == ["legal_draft_v3"]


def test_every_registered_protocol_is_tried_by_the_lenient_fallback():
    """The registry is the one list: every protocol has a distinct rank and is tried, in rank order."""
    order = lenient_order()
    assert sorted(order) == sorted(protocol_ids()) and len(set(order)) == len(order)
    ranks = [REGISTRY[p].lenient_rank for p in order]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
