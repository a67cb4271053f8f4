"""cli_call: round trips, model-like replies against the reference, never raising, grammar notes."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls, render
from text_family_support import (ROUND_TRIP, SAMPLE, TEXT, assert_fast_path_agrees, assert_reads_as_the_reference,
                                 bfcl_calls, calls_for, nasty_cases, ref_example, ref_parse, single_calls)

from toolform_rules import ToolCall, parse_reply
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.text_family.cli_call import quote_word, unquote_word
from toolform_rules.replies.formats.text_family.shared import value_text

P = get_protocol("cli_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "cli_call" and P.info.text_values and P.info.parallel


# ---------------------------------------------------------------------------------------------
# round trips


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
    """Before typing: each value reads back as the text it was written as (a true flag as True)."""
    extraction = P.parse(P.render_calls(calls), SAMPLE)
    for raw, call in zip(extraction.calls, calls, strict=True):
        want = {k: (True if v is True else value_text(v)) for k, v in call.arguments.items()}
        assert raw.arguments == want


@given(text=TEXT)
def test_words_round_trip(text: str) -> None:
    assert unquote_word(quote_word(text)) == text


def test_the_example() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "auto_renew": True,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    text = P.example(call)
    assert text == ("legal_draft_v3 --counterparty 'Acme, \"Ltd\"' --value 1200.5 --term-months 12 --auto-renew "
                    "--contract-details '{\"contract_id\": \"C-1\", \"status\": \"draft\"}'")
    assert text == ref_example("cli_call", call.name, call.arguments)  # the reference writes the same line
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


# ---------------------------------------------------------------------------------------------
# model-like replies, against the reference

AGREE = [
    "legal_draft_v3 --counterparty Acme --value 3 --term-months 4",
    "Sure, here it is:\n```bash\nlegal_draft_v3 --counterparty Acme --value 3 --term-months 4\n```\nDone.",
    "legal_draft_v3 --counterparty=\"Acme Ltd\" --value=3 --term-months 4 --auto_renew false",
    "Legal_Draft_V3 --counterparty \"Acme Ltd\" --value 3 --term_months 4",
    "legal-draft-v3 --counterparty \"Acme Ltd\" --value 3 --term_months 4 --auto-renew",
    "$ legal_draft_v3 --counterparty Acme --value 3 --term-months 4",
    "legal_draft_v3 --counterparty 'Acme, \"Ltd\"' --value 1200.5 --term-months 12 --contract-details "
    "'{\"contract_id\": \"C-1\", \"status\": \"draft\"}'",
    "legal_draft_v3 --counterparty A --value 1 --term-months 2\nlegal_draft_v3 --counterparty B --value 3 "
    "--term-months 4",
    "I will call the tool.\n\nlegal_draft_v3 --counterparty 'it'\"'\"'s' --value 0 --term-months 600",
    "legal_draft_v3 --counterparty Acme --value 3 --term-months 4 --auto-renew",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_reads_as_the_reference(P, text)


def test_prose_around_is_read_but_not_compliant() -> None:
    extraction = P.parse(AGREE[1], SAMPLE)
    assert len(extraction.calls) == 1 and not extraction.compliant
    fenced = P.parse("```bash\nlegal_draft_v3 --counterparty Acme --value 3 --term-months 4\n```", SAMPLE)
    assert fenced.compliant


def test_divergence_spaces_at_either_end_are_kept() -> None:
    """Divergence: the reference strips a quoted value (' Acme ' → 'Acme'); a quoted word is
    exactly its text in a shell, so we keep the spaces — the round trip must be exact."""
    text = "legal_draft_v3 --counterparty ' Acme ' --value 3 --term-months 4"
    assert read_calls(P, text, SAMPLE)[0][1]["counterparty"] == " Acme "
    assert ref_parse("cli_call", text)[0][1]["counterparty"] == "Acme"


def test_divergence_quoted_line_breaks() -> None:
    """Divergence: the reference cuts a quoted value at its line break and reads the rest as a
    second call; a quoted word may hold line breaks in a shell, so we read one value."""
    text = "legal_draft_v3 --counterparty 'a\nb' --value 12 --term-months 12"
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": "a\nb", "value": 12, "term_months": 12})], equal_json)
    assert ref_parse("cli_call", text) != read_calls(P, text, SAMPLE)


def test_divergence_false_is_written() -> None:
    """Divergence: the reference leaves a false flag out of the command line, so ``False`` comes
    back absent (the default may differ); we write ``--auto-renew false``."""
    call = ToolCall("legal_draft_v3", {"counterparty": "A", "value": 1, "term_months": 2, "auto_renew": False})
    assert "--auto-renew" not in ref_example("cli_call", call.name, call.arguments)
    assert P.example(call).endswith("--auto-renew false")
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


def test_divergence_no_flag() -> None:
    """Divergence: ``--no-auto-renew`` is false for ``auto_renew`` (the tool has no ``no_auto_renew``);
    the reference reads an unknown argument ``no_auto_renew`` = true."""
    text = "legal_draft_v3 --counterparty A --value 3 --term-months 4 --no-auto-renew"
    assert read_calls(P, text, SAMPLE)[0][1]["auto_renew"] is False
    assert ref_parse("cli_call", text)[0][1].get("no_auto_renew") is True


def test_divergence_line_continuation() -> None:
    """Divergence: a backslash at a line's end continues the command (shell rule); the reference
    stops the call there and loses the rest."""
    text = "legal_draft_v3 --counterparty Acme \\\n  --value 3 \\\n  --term-months 4"
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": "Acme", "value": 3, "term_months": 4})], equal_json)
    assert ref_parse("cli_call", text) == [("legal_draft_v3", {"counterparty": "Acme"})]


def test_line_continuation_with_crlf_line_ends() -> None:
    """A reply with Windows line ends continues a command as one with LF line ends does: the
    grammar's CONTINUATION and its line break both take a CR before the LF."""
    text = "legal_draft_v3 --counterparty Acme \\\r\n  --value 3 \\\r\n  --term-months 4"
    extraction = P.parse(text, SAMPLE)
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": "Acme", "value": 3, "term_months": 4})], equal_json,
                 context=extraction)
    assert extraction.compliant and not extraction.notes, extraction


def test_divergence_argument_names_are_kept_as_written() -> None:
    """Divergence: only the format's own convention (kebab case) is undone; ``--termMonths`` stays
    ``termMonths`` (the validator judges spellings), where the reference renames it."""
    text = "legal_draft_v3 --counterparty A --value 3 --termMonths 4"
    assert "termMonths" in read_calls(P, text, SAMPLE)[0][1]
    assert "term_months" in ref_parse("cli_call", text)[0][1]


def test_positional_words_are_noted() -> None:
    extraction = P.parse("legal_draft_v3 --value 3 Acme", SAMPLE)
    assert extraction.calls[0].arguments == {"value": "3"}
    assert not extraction.compliant and "left out" in extraction.notes[0]


def test_lone_name_is_a_call_only_for_a_known_tool() -> None:
    assert [c.name for c in P.parse("legal_draft_v3", SAMPLE).calls] == ["legal_draft_v3"]
    assert P.parse("hello", SAMPLE).calls == ()
    assert P.parse("legal_draft_v3", None).calls == ()


def test_without_a_toolset_flags_become_snake_case() -> None:
    extraction = P.parse("some-tool --term-months 4 --x=1", None)
    assert extraction.calls[0].name == "some-tool"
    assert extraction.calls[0].arguments == {"term_months": "4", "x": "1"}


# ---------------------------------------------------------------------------------------------
# malformed replies and never raising

#: the nasty inputs that hold a command that cannot be read: a single quote left open
MALFORMED = {"cli: option then 50001 single quotes"}


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = P.parse("Here you go:\nlegal_draft_v3 --counterparty \"Acme --value 3", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert "line 2, column 31" in note and "expected" in note and "found '\"'" in note


def test_a_bad_line_does_not_hide_the_next_call() -> None:
    extraction = P.parse("legal_draft_v3 --a 'x\nlegal_draft_v3 --b 2", SAMPLE)
    assert [c.arguments for c in extraction.calls] == [{"b": "2"}]
    assert len(extraction.notes) == 1


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "legal_draft_v3 --a " + "x " * 30000 + "'"
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize(("text", "malformed"), nasty_cases(MALFORMED))
def test_never_raises_on_nasty_inputs(text: str, malformed: bool) -> None:
    assert_total(P, text, SAMPLE, malformed=malformed)


def test_not_text_never_raises() -> None:
    """Bytes are not text: the protocol reads their ``str`` (no call, no exception); the pipeline
    decodes them first and reads the call."""
    extraction = assert_total(P, b"legal_draft_v3 --value 3", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    assert [c.arguments for c in parse_reply(b"legal_draft_v3 --value 3", SAMPLE, "cli_call").calls] == [{"value": 3}]


# ---------------------------------------------------------------------------------------------
# the fast path and the grammar agree


@ROUND_TRIP
@given(drawn=single_calls())
def test_fast_path_reads_every_rendered_command(drawn) -> None:
    """A command as we write it is the plain form: the fast path reads it, token for token as the grammar."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


SEGMENT = st.builds(lambda name, rest: name + rest,
                    st.sampled_from(["legal_draft_v3", "$ f", "a.b-c", "x"]),
                    st.text(alphabet=" \t-=ab'\"\\\n\r{}:,é", max_size=30))


@settings(max_examples=200, deadline=None)
@given(segment=SEGMENT)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike, and a one-line command the
    grammar reads the fast path reads too."""
    fast, slow = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")
    if slow is not None and "\n" not in segment:
        assert fast == slow, (segment, fast, slow)


@pytest.mark.parametrize(("segment", "fast_reads"), [
    ("legal_draft_v3 --a b", True),
    ("$ f -a=b 'b a' \"é\"", True),
    ("x --a \\\n  --b", True),
    ("x {a:b}", True),
    ("a.b-c --a 'b", False),
    ("legal_draft_v3 --a\n--b", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of SEGMENT's own alphabet, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_fast_path_and_grammar_agree_on_a_crlf_continuation() -> None:
    """A backslash before CRLF continues the line in both readers (it once was an escaped CR to the grammar)."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, "legal_draft_v3 --a \\\r\n  --b", reads=True)


def test_instructions_are_our_own_words() -> None:
    text = P.instructions(SAMPLE)
    assert "--" in text and "one command per line" in text
