"""The registry's markers: a reply without a protocol's marker holds no call of that protocol.

Naming a reply's syntax (``matched_syntax``) skips the protocols whose marker the reply
lacks, so a marker must be necessary: whenever a protocol finds a call, its marker is in
the text.  Checked on every text the suite has at hand — the recovery cases of all 31
protocols, the engine cases (real replies from serving engines' tests), every protocol's
rendering of varied calls — read by every protocol, and on generated text.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.recovery import cases
from toolform_rules import ToolCall, get_protocol, parse_reply, protocol_ids, sample_toolset
from toolform_rules.replies.formats import REGISTRY

TOOLS = sample_toolset()
ENGINE_CASES = pathlib.Path(__file__).parent / "data" / "replies" / "engine_cases.jsonl"
CALLS = [ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 5, "term_months": 12}),
         ToolCall("legal_draft_v3", {}),
         ToolCall("f", {"a": [1, {"b": None}], "c": "x, y"})]


def _texts() -> list[str]:
    texts = [text for protocol_id in protocol_ids() for _, text, _ in cases(protocol_id)]
    texts += [json.loads(line)["reply"] for line in ENGINE_CASES.read_text(encoding="utf-8").splitlines()]
    for protocol_id in protocol_ids():
        for call in CALLS:
            try:
                texts.append(get_protocol(protocol_id).render_calls([call]))
            except Exception:  # a format that cannot write this call
                continue
    return texts


TEXTS = _texts()


@pytest.mark.parametrize("protocol_id", [p for p in protocol_ids() if REGISTRY[p].marker])
def test_a_call_is_found_only_where_the_marker_is(protocol_id: str) -> None:
    protocol, registration = get_protocol(protocol_id), REGISTRY[protocol_id]
    found_somewhere = 0
    for text in TEXTS:
        if protocol.parse(text, TOOLS).calls:
            found_somewhere += 1
            assert registration.may_hold_calls(text), (protocol_id, text[:200])
    assert found_somewhere >= 3  # the check above was exercised


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("legal_draft_v3 (){}[]<>|:=/,\"'\n★§#-?&=.ACTIONaction")), max_size=80),
       st.sampled_from([p for p in protocol_ids() if REGISTRY[p].marker]))
def test_generated_text_without_the_marker_holds_no_call(text: str, protocol_id: str) -> None:
    if not REGISTRY[protocol_id].may_hold_calls(text):
        assert not get_protocol(protocol_id).parse(text, TOOLS).calls


def test_a_prose_reply_names_no_syntax_and_no_protocol_is_skipped_that_would_name_it() -> None:
    reply = parse_reply("I cannot help with that, sorry.", TOOLS, "json_object")
    assert reply.matched_syntax == "" and not reply.calls
    reply = parse_reply('legal_draft_v3(counterparty="Acme", value=5, term_months=12)', TOOLS, "json_object")
    assert reply.matched_syntax in ("python_tag", "python_call") and not reply.calls  # python_tag ranks first
