"""pipe_call: round trips, model-like replies against the reference, never raising, grammar notes."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.compare import equal_json
from support.protocol_checks import assert_round_trip, assert_total, read_calls, render
from text_family_support import (ROUND_TRIP, SAMPLE, TEXT, assert_fast_path_agrees, assert_reads_as_the_reference,
                                 bfcl_calls, calls_for, nasty_cases, ref_example, ref_parse, single_calls)

from toolform_rules import ToolCall
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.text_family.pipe_call import SPECIALS
from toolform_rules.replies.formats.text_family.shared import backslash_escape, backslash_unescape, trim_field, value_text

P = get_protocol("pipe_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "pipe_call" and P.info.text_values and P.info.parallel


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE, values=equal_json)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset, values=equal_json)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_text_level(calls: list[ToolCall]) -> None:
    extraction = P.parse(P.render_calls(calls), SAMPLE)
    for raw, call in zip(extraction.calls, calls, strict=True):
        assert raw.arguments == {k: value_text(v) for k, v in call.arguments.items()}


@given(text=TEXT)
def test_escapes_round_trip(text: str) -> None:
    assert backslash_unescape(trim_field(backslash_escape(text, SPECIALS)), SPECIALS) == text


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    assert P.example(call) == ('legal_draft_v3|counterparty=Acme, "Ltd"|value=1200.5|term_months=12|auto_renew=true|'
                               'contract_details={"contract_id": "C-1", "status": "draft"}')
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


AGREE = [
    "legal_draft_v3|counterparty=Acme|value=3|term_months=4",
    "legal_draft_v3 | counterparty = Acme | value = 3 | term_months = 4",
    "Here:\n```\nlegal_draft_v3|counterparty=Acme|value=3|term_months=4\n```\nAnything else?",
    "LegalDraftV3|counterparty=Acme|value=3|term_months=4|auto_renew=false\n"
    "legal_draft_v3|counterparty=B|value=1|term_months=2|",
    "legal_draft_v3|counterparty=x=y|value=3",
    'legal_draft_v3|counterparty=Acme, "Ltd"|value=1200.5|term_months=12|auto_renew=True|'
    'contract_details={"contract_id": "C-1", "status": "draft"}',
    'legal_draft_v3|counterparty="Acme"|value=3',
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_reads_as_the_reference(P, text)


def test_divergence_delimiters_in_values_are_escaped() -> None:
    """Divergence: the reference writes a ``|`` inside a value as it is, so the value is cut there
    and the rest is read as another field; we write ``\\|`` and read it back whole."""
    call = ToolCall("legal_draft_v3", {"counterparty": "a|b=c", "value": 1, "term_months": 2})
    reference_text = ref_example("pipe_call", call.name, call.arguments)
    assert ref_parse("pipe_call", reference_text)[0][1]["counterparty"] == "a"
    assert P.example(call).startswith("legal_draft_v3|counterparty=a\\|b\\=c|")
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


def test_divergence_spaces_at_either_end() -> None:
    """Divergence: spaces around a value are layout (the reference strips them too), but a space
    that belongs to the value is written ``\\ `` and kept; the reference cannot keep it."""
    call = ToolCall("legal_draft_v3", {"counterparty": " Acme ", "value": 1, "term_months": 2})
    assert "counterparty=\\ Acme\\ " in P.example(call)
    assert_round_trip(P, [call], SAMPLE, values=equal_json)
    assert ref_parse("pipe_call", ref_example("pipe_call", call.name, call.arguments))[0][1]["counterparty"] == "Acme"


def test_divergence_bare_flag_is_true() -> None:
    """Divergence: a bare field ``|auto_renew|`` is the flag true; the reference drops it."""
    text = "legal_draft_v3|counterparty=x|auto_renew|value=3"
    assert read_calls(P, text, SAMPLE)[0][1]["auto_renew"] is True
    assert "auto_renew" not in ref_parse("pipe_call", text)[0][1]


def test_divergence_line_breaks_are_escaped() -> None:
    """Divergence: a line break inside a value is written ``\\n``; the reference writes it raw and
    the call breaks in two."""
    call = ToolCall("legal_draft_v3", {"counterparty": "a\nb", "value": 1, "term_months": 2})
    assert "\n" not in P.example(call)
    assert_round_trip(P, [call], SAMPLE, values=equal_json)
    assert len(ref_parse("pipe_call", ref_example("pipe_call", call.name, call.arguments))[0][1]) < 3


def test_unknown_backslash_sequences_are_kept() -> None:
    assert read_calls(P, "legal_draft_v3|counterparty=C:\\path\\x", SAMPLE)[0][1]["counterparty"] == "C:\\path\\x"


def test_prose_and_compliance() -> None:
    assert not P.parse(AGREE[2], SAMPLE).compliant
    assert P.parse(AGREE[0], SAMPLE).compliant
    assert P.parse("```\n" + AGREE[0] + "\n```", SAMPLE).compliant


def test_lone_name_is_a_call_only_for_a_known_tool() -> None:
    assert [c.arguments for c in P.parse("legal_draft_v3", SAMPLE).calls] == [{}]
    assert P.parse("Hello", SAMPLE).calls == ()
    assert [c.name for c in P.parse("other_tool|", SAMPLE).calls] == ["other_tool"]


def test_duplicate_keys_are_noted() -> None:
    extraction = P.parse("legal_draft_v3|value=1|value=2", SAMPLE)
    assert extraction.calls[0].arguments == {"value": "2"} and "more than once" in extraction.notes[0]


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = P.parse("Call:\nlegal_draft_v3|counterparty=x|=3", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert "line 2, column 31" in note and "expected" in note


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "legal_draft_v3|" + "a=b|" * 15000 + "\\"
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


#: none of the nasty inputs holds a call line that cannot be read (repeated fields are noted, not refused)
MALFORMED: set[str] = set()


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize(("text", "malformed"), nasty_cases(MALFORMED))
def test_never_raises_on_nasty_inputs(text: str, malformed: bool) -> None:
    assert_total(P, text, SAMPLE, malformed=malformed)


@ROUND_TRIP
@given(drawn=single_calls())
def test_fast_path_reads_every_rendered_call(drawn) -> None:
    """A call line as we write it is the plain form: the fast path reads it, field for field as the grammar."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


SEGMENT = st.builds(lambda name, rest: name + rest, st.sampled_from(["legal_draft_v3", " f ", "a.b-c", "x y"]),
                    st.text(alphabet=" \t|=ab\\\rné{}", max_size=30))


@settings(max_examples=200, deadline=None)
@given(segment=SEGMENT)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike, and what the grammar reads the fast path reads."""
    fast, slow = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")
    if slow is not None:
        assert fast == slow, (segment, fast, slow)


@pytest.mark.parametrize(("segment", "fast_reads"), [
    ("legal_draft_v3|a=b|b", True),
    (" f | a = b\\|a | b=\\n", True),
    ("a.b-c|a=b=a|", True),
    ("x y|a=b", False),
    ("legal_draft_v3|=a", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of SEGMENT's own alphabet, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_instructions() -> None:
    assert "|name=value" in P.instructions(SAMPLE)
