"""bracket_call: round trips, the fast path against the grammar, calls inside running text,
model-like replies against the reference, never raising, where the grammar stopped."""

from __future__ import annotations


import pytest
from code_family_support import (BROKEN_PYTHON, NASTY_INPUTS, OUR_TOOLS, PROPERTY, PYTHON_CALLS, ROUND_TRIP, SAMPLE,
                                 SECOND, TEXT, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input, bfcl_calls,
                                 calls_for, python_call_source, ref_render, unbound, written)
from hypothesis import given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import as_pipeline_reads, assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.bracket_call import BracketValues
from toolform_rules.replies.formats.code_family.shared import grammar_read

P = get_protocol("bracket_call")


def grammar_calls(text: str):
    """The calls of ``text`` (one bracket) as the bracket_call grammar reads them (the slow path)."""
    return grammar_read("bracket_call", BracketValues(), text)


def test_registered() -> None:
    assert P.info.id == "bracket_call" and P.info.parallel and not P.info.text_values


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE), words=st.lists(st.text(alphabet="abc ,.!?:'\"é\n", max_size=12), min_size=3,
                                                max_size=3))
def test_round_trip_inside_running_text(calls: list[ToolCall], words: list[str]) -> None:
    """The calls embedded in prose (Toolformer's use) come back exactly, in order."""
    before, between, after = words
    text = before + " " + (" " + between + " ").join(P.render_calls([c]) for c in calls) + " " + after
    extraction = P.parse(text, SAMPLE)
    want = [(c.name, dict(c.arguments)) for c in calls]
    assert_calls(as_pipeline_reads(P, extraction, SAMPLE), want, identical, context=(text, extraction))
    assert extraction.compliant, (text, extraction)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_through_the_grammar(calls: list[ToolCall]) -> None:
    for line, call in zip(P.render_calls(calls).split("\n"), calls, strict=True):
        found = [(c.name, dict(c.items)) for c in grammar_calls(line)]
        assert_calls(found, [(call.name, dict(call.arguments))], identical, context=line)


def test_the_example_is_the_reference_rendering() -> None:
    assert P.render_calls([THE_EXAMPLE, SECOND]) == ref_render("bracket_call", [THE_EXAMPLE, SECOND])
    assert_round_trip(P, [THE_EXAMPLE, SECOND], SAMPLE)


@PROPERTY
@given(drawn=st.lists(python_call_source(), min_size=1, max_size=2),
       result=st.sampled_from(["", " → 0.29", " -> done"]),
       before=TEXT, after=TEXT)
def test_the_fast_path_agrees_with_the_grammar(drawn, result: str, before: str, after: str) -> None:
    """A bracket of calls (and Toolformer's result part) in running text: the grammar reads the
    calls, and the reply (read by the fast path where it can) gives them first, positional values
    in their places (no toolset binds them), whatever prose is around."""
    bracket = "[" + ", ".join(t for t, _, _ in drawn) + result + "]"
    assert_calls(written(grammar_calls(bracket)), [(name, items) for _, name, items in drawn], identical,
                 context=bracket)
    before = before.replace("[", "(").replace("]", ")")
    text = f"{before} {bracket} {after}"
    read = [(c.name, c.arguments) for c in P.parse(text).calls][:len(drawn)]
    assert_calls(read, [(name, unbound(items)) for _, name, items in drawn], identical, context=text)


AGREE = [
    'The contract [legal_draft_v3(counterparty="a", value=1)] is drafted.',
    'x [legal_draft_v3(counterparty="a")] y [probe_tool(s="b")] z',
    'legal_draft_v3(counterparty="a")',
    '[legal_draft_v3(counterparty="a"), probe_tool(s="b")]',
    'see [1] and [legal_draft_v3(counterparty="a")]',
    '[legal_draft_v3(counterparty="a") → done]',
    '[legal_draft_v3(counterparty="[x]")]',
    '[legal_draft_v3(counterparty="a")',
    '[ legal_draft_v3(counterparty="a") ]',
    'Text [LegalDraftV3(counterparty="a")].',
    "The fee is [legal_draft_v3(counterparty='Acme', value=1200.5, contract_details={'status': 'draft'})] today.",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_agrees(P, text)


DIVERGE = [
    # positional values bound to the schema's parameter order (the reference keeps _pos0, _pos1)
    ('[legal_draft_v3("a", 5)]', [("legal_draft_v3", {"counterparty": "a", "value": 5})]),
    # a bracketed call to an unknown tool is still the model's call (the reference drops it)
    ("[ghost(a=1)]", [("ghost", {"a": 1})]),
    # null is None (the reference keeps the text "null")
    ("I drafted [legal_draft_v3(counterparty=null)].", [("legal_draft_v3", {"counterparty": None})]),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(P, text, OUR_TOOLS), expected, identical, context=text)


def test_compliance() -> None:
    assert P.parse('The draft [legal_draft_v3(counterparty="a")] is ready.').compliant  # prose is the format
    assert P.parse('[legal_draft_v3(counterparty="a") → 0.29]').compliant
    bare = P.parse('legal_draft_v3(counterparty="a")')
    assert bare.calls and not bare.compliant and "square brackets" in bare.notes[-1]
    assert not P.parse("There is nothing to call [1].").compliant


@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text)
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str) -> None:
    """A broken call gives no call and a note why, a flood of calls gives calls
    (the linear tests bound the time)."""
    text, broken, holds_calls = NASTY_INPUTS[name], name in BROKEN_PYTHON, name in PYTHON_CALLS
    assert_answers_nasty_input(P, text, SAMPLE, broken=broken, holds_calls=holds_calls)
    assert_answers_nasty_input(P, text, broken=broken, holds_calls=holds_calls)


def test_a_malformed_bracket_says_where_the_grammar_stopped() -> None:
    extraction = P.parse('It is [legal_draft_v3(counterparty="Acme" value=2)] now.', SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    note = next(n for n in extraction.notes if "could not be read" in n)
    assert "at character 6" in note and "line 1, column 37" in note and "found 'value'" in note


def test_instructions() -> None:
    text = P.instructions(SAMPLE)
    assert "[legal_draft_v3(" in text and "square brackets" in text
