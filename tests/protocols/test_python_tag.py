"""python_tag: round trips, the fast path against the grammar, model-like replies against the
reference, never raising, where the grammar stopped."""

from __future__ import annotations


import pytest
from code_family_support import (BROKEN_PYTHON, NASTY_INPUTS, OUR_TOOLS, PROPERTY, PYTHON_CALLS, ROUND_TRIP, SAMPLE,
                                 SECOND, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input, bfcl_calls, calls_for,
                                 python_call_source, ref_render, unbound, written)
from hypothesis import assume, given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import grammar_read
from toolform_rules.replies.formats.code_family.python_tag import TAG, PythonTagValues

P = get_protocol("python_tag")


def grammar_calls(text: str):
    """The calls of ``text`` as the python_tag grammar reads them (the slow path)."""
    return grammar_read("python_tag", PythonTagValues(), text)


def test_registered() -> None:
    assert P.info.id == "python_tag" and P.info.parallel and not P.info.text_values


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
@given(calls=calls_for(SAMPLE))
def test_round_trip_through_the_grammar(calls: list[ToolCall]) -> None:
    text = P.render_calls(calls)
    found = [(c.name, dict(c.items)) for c in grammar_calls(text)]
    assert_calls(found, [(c.name, dict(c.arguments)) for c in calls], identical, context=text)


def test_the_example_is_the_reference_rendering() -> None:
    assert P.render_calls([THE_EXAMPLE, SECOND]) == ref_render("python_tag", [THE_EXAMPLE, SECOND])
    assert P.example(THE_EXAMPLE).startswith(TAG + "legal_draft_v3(")
    assert_round_trip(P, [THE_EXAMPLE, SECOND], SAMPLE)


@PROPERTY
@given(drawn=st.lists(python_call_source(), min_size=1, max_size=3),
       shape=st.sampled_from(["lines", "semicolons", "list", "tags"]),
       end=st.sampled_from(["", "<|eom_id|>", "<|eot_id|>"]))
def test_the_fast_path_agrees_with_the_grammar(drawn, shape: str, end: str) -> None:
    """The reply (read by the fast path where it can) gives the calls the grammar reads, with
    positional values in their places, no toolset binding them."""
    sources = [t for t, _, _ in drawn]
    assume(not any("<|" in t for t in sources))  # a marker in a string ends the segment (we write it escaped)
    if shape == "lines":
        text = TAG + "\n".join(sources) + end
    elif shape == "semicolons":
        text = TAG + "; ".join(sources) + end
    elif shape == "list":
        text = TAG + "[" + ", ".join(sources) + "]" + end
    else:
        text = "\n".join(TAG + s + end for s in sources)
    assert_calls(written(grammar_calls(text)), [(name, items) for _, name, items in drawn], identical, context=text)
    extraction = P.parse(text)
    assert_calls([(c.name, c.arguments) for c in extraction.calls],
                 [(name, unbound(items)) for _, name, items in drawn], identical, context=text)
    assert extraction.compliant, (text, extraction)


AGREE = [
    '<|python_tag|>legal_draft_v3(counterparty="a")',
    '<|python_tag|>legal_draft_v3(counterparty="a")<|eom_id|>',
    'legal_draft_v3(counterparty="a")',
    '<|python_tag|>legal_draft_v3(counterparty="a")\n<|python_tag|>probe_tool(s="b")',
    '<|python_tag|>legal_draft_v3(counterparty="a"); probe_tool(s="b")',
    '<|python_tag|>[legal_draft_v3(counterparty="a"), probe_tool(s="b")]',
    'Let me call.\n<|python_tag|>legal_draft_v3(counterparty="a")<|eot_id|>',
    '<|python_tag|>{"name": "legal_draft_v3", "parameters": {"counterparty": "a", "value": 2}}',
    '<|python_tag|>legal_draft_v3(counterparty="a")\nprobe_tool(s="b")',
    '<|python_tag|> legal_draft_v3(counterparty="a") <|eom_id|> trailing',
    "<|python_tag|>",
    '<|python_tag|>legal_draft_v3(counterparty="a"',
    "<|python_tag|>LegalDraftV3(counterparty='Acme', value=1200.5, auto_renew=True, "
    "contract_details={'contract_id': 'C-1', 'status': 'draft'})<|eom_id|>",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_agrees(P, text)


DIVERGE = [
    # positional values bound to the schema's parameter order (the reference keeps _pos0, _pos1)
    ('<|python_tag|>legal_draft_v3("a", 5)', [("legal_draft_v3", {"counterparty": "a", "value": 5})]),
    # a call to an unknown tool after the marker is still the model's call (the reference drops it)
    ("<|python_tag|>ghost(a=1)", [("ghost", {"a": 1})]),
    # null is None (the reference keeps the text "null")
    ("<|python_tag|>legal_draft_v3(counterparty=null)", [("legal_draft_v3", {"counterparty": None})]),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(P, text, OUR_TOOLS), expected, identical, context=text)


def test_compliance() -> None:
    assert P.parse('<|python_tag|>legal_draft_v3(counterparty="a")<|eom_id|>').compliant
    assert P.parse('<|python_tag|>legal_draft_v3(counterparty="a")\n<|python_tag|>probe_tool(s="b")\n').compliant
    assert P.parse('<|python_tag|>legal-draft-v3(counterparty=true, value=007)').compliant
    untagged = P.parse('legal_draft_v3(counterparty="a")')
    assert untagged.calls and not untagged.compliant and "marker" in untagged.notes[-1]
    prose = P.parse('Sure.\n<|python_tag|>legal_draft_v3(counterparty="a")')
    assert prose.calls and not prose.compliant
    after = P.parse('<|python_tag|>legal_draft_v3(counterparty="a") and that is all')
    assert after.calls and not after.compliant and "that is all" in after.notes[-1]


@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text)
    assert_total(P, TAG + text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str) -> None:
    """A broken call gives no call and a note why, a flood of calls gives calls (the linear tests
    bound the time); after the marker, whatever holds no readable call is a broken segment."""
    text, holds_calls = NASTY_INPUTS[name], name in PYTHON_CALLS
    assert_answers_nasty_input(P, text, SAMPLE, broken=name in BROKEN_PYTHON, holds_calls=holds_calls)
    assert_answers_nasty_input(P, TAG + text, broken=not holds_calls, holds_calls=holds_calls)


def test_a_malformed_segment_says_where_the_grammar_stopped() -> None:
    extraction = P.parse('<|python_tag|>legal_draft_v3(counterparty="Acme", value=)<|eom_id|>', SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    note = next(n for n in extraction.notes if "after the marker" in n)
    assert "line 1, column 57" in note and "expected" in note and "found ')'" in note


def test_instructions() -> None:
    text = P.instructions(SAMPLE)
    assert TAG + "legal_draft_v3(" in text
