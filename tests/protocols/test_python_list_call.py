"""python_list_call and bfcl_python_list (the same syntax, asked for in BFCL's words): round trips,
model-like replies against the reference, never raising, where the grammar stopped.  Every test runs
for both protocols.  (The fast path is held to the grammar in test_python_call, for lists too.)"""

from __future__ import annotations


import pytest
from code_family_support import (BROKEN_PYTHON, NASTY_INPUTS, OUR_TOOLS, PYTHON_CALLS, ROUND_TRIP, SAMPLE,
                                 SECOND, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input, bfcl_calls, calls_for,
                                 python_call_source, ref_render, written)
from hypothesis import given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import grammar_read, read_python
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats.code_family.bfcl_python_list import BfclListValues
from toolform_rules.replies.formats.code_family.python_list_call import PythonListValues

LISTINGS = {"python_list_call": PythonListValues, "bfcl_python_list": BfclListValues}


class Listing:
    """One of the two protocols: its registry entry and a reader of its grammar."""

    def __init__(self, protocol_id: str) -> None:
        self.id, self.protocol = protocol_id, get_protocol(protocol_id)
        self.values = LISTINGS[protocol_id]

    def grammar_calls(self, text: str):
        """The calls of ``text`` as this protocol's grammar reads them (the slow path)."""
        return grammar_read(self.id, self.values(), text)


# module-scoped: hypothesis refuses function-scoped fixtures, and a Listing holds no state
@pytest.fixture(scope="module", params=sorted(LISTINGS))
def listing(request: pytest.FixtureRequest) -> Listing:
    return Listing(request.param)


def test_registered(listing: Listing) -> None:
    info = listing.protocol.info
    assert info.id == listing.id and info.parallel and not info.text_values


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall], listing: Listing) -> None:
    assert_round_trip(listing.protocol, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn, listing: Listing) -> None:
    toolset, calls = drawn
    assert_round_trip(listing.protocol, calls, toolset)
    text = listing.protocol.render_calls(calls)  # what we write is read by the fast path, as the grammar reads it
    read = read_python(text, 0, len(text), "list")
    assert read is not None and read[1] == len(text), text
    assert_calls(written(read[0]), written(listing.grammar_calls(text)), identical, context=text)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_through_the_grammar(calls: list[ToolCall], listing: Listing) -> None:
    text = listing.protocol.render_calls(calls)
    found = [(c.name, dict(c.items)) for c in listing.grammar_calls(text)]
    assert_calls(found, [(c.name, dict(c.arguments)) for c in calls], identical, context=text)


def test_the_example_is_the_reference_rendering(listing: Listing) -> None:
    assert listing.protocol.render_calls([THE_EXAMPLE, SECOND]) == ref_render(listing.id, [THE_EXAMPLE, SECOND])
    assert listing.protocol.example(THE_EXAMPLE) == ref_render(listing.id, [THE_EXAMPLE])
    assert_round_trip(listing.protocol, [THE_EXAMPLE, SECOND], SAMPLE)


def test_an_empty_list_calls_nothing(listing: Listing) -> None:
    extraction = listing.protocol.parse("[]")
    assert extraction.calls == () and extraction.compliant and "calls no tool" in extraction.notes[0]
    assert listing.protocol.render_calls([]) == "[]"


def test_the_fast_path_refuses_a_name_written_apart_as_the_grammar_does(listing: Listing) -> None:
    text = "[math .factorial(number=5)]"
    with pytest.raises(GrammarFailure):
        listing.grammar_calls(text)
    assert read_python(text, 0, len(text), "list") is None


AGREE = [
    '[legal_draft_v3(counterparty="a"), probe_tool(s="b")]',
    'Here: [legal_draft_v3(counterparty="a")] ok',
    '```\n[legal_draft_v3(counterparty="a", value=[1,2])]\n```',
    '[legal_draft_v3(counterparty="a"),]',
    '[legal_draft_v3(counterparty="a")',
    'legal_draft_v3(counterparty="a")',
    'The answer uses [a, b] and [legal_draft_v3(counterparty="a")]',
    '[legal_draft_v3(counterparty="a")]\n\nI called it.',
    "[LegalDraftV3(counterparty='Acme', value=1200.5, term_months=12, auto_renew=True, "
    "contract_details={'contract_id': 'C-1', 'status': 'draft'})]",
    '[\n  legal_draft_v3(counterparty="a"),\n  probe_tool(s="b", o={"k": [1, True, None]})\n]',
    "[]",
    "[1, 2]",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str, listing: Listing) -> None:
    assert_agrees(listing.protocol, text)


DIVERGE = [
    # positional values bound to the schema's parameter order (the reference keeps _pos0, _pos1)
    ('[legal_draft_v3("a", 2)]', [("legal_draft_v3", {"counterparty": "a", "value": 2})]),
    # an unknown tool in the list is still the model's call (the reference drops it silently)
    ('[legal_draft_v3(counterparty="a"), ghost(a=1)]',
     [("legal_draft_v3", {"counterparty": "a"}), ("ghost", {"a": 1})]),
    ("[ghost(a=1)]", [("ghost", {"a": 1})]),
    # two lists: both are read, and the reply is marked as not keeping to the format (the
    # reference reads the first list only and drops the second call)
    ('[legal_draft_v3(counterparty="a")]\n[probe_tool(s="b")]',
     [("legal_draft_v3", {"counterparty": "a"}), ("probe_tool", {"s": "b"})]),
    # null is None (the reference keeps the text "null")
    ("[legal_draft_v3(counterparty=null)]", [("legal_draft_v3", {"counterparty": None})]),
    # a call as a value is no literal: that list is not read (the reference keeps the text "f(1)")
    ('[probe_tool(s="b", x=f(1))]', []),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected, listing: Listing) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(listing.protocol, text, OUR_TOOLS), expected, identical, context=text)


def test_compliance(listing: Listing) -> None:
    assert listing.protocol.parse('[legal_draft_v3(counterparty="a"), probe_tool(s="b")]').compliant
    assert listing.protocol.parse('```python\n[legal_draft_v3(counterparty="a")]\n```').compliant
    # the grammar's part of the syntax
    assert listing.protocol.parse('[legal-draft-v3(counterparty="a", value=007)]').compliant
    two = listing.protocol.parse('[legal_draft_v3(counterparty="a")]\n[probe_tool(s="b")]')
    assert not two.compliant and "2 lists" in two.notes[0]
    bare = listing.protocol.parse('legal_draft_v3(counterparty="a")')
    assert not bare.compliant and "not in a bracketed list" in bare.notes[-1]
    assert not listing.protocol.parse('Here: [legal_draft_v3(counterparty="a")]').compliant


@given(text=st.text())
def test_never_raises_on_any_text(text: str, listing: Listing) -> None:
    assert_total(listing.protocol, text)
    assert_total(listing.protocol, text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str, listing: Listing) -> None:
    """A broken call gives no call and a note why, a flood of calls gives calls
    (the linear tests bound the time)."""
    text, broken, holds_calls = NASTY_INPUTS[name], name in BROKEN_PYTHON, name in PYTHON_CALLS
    assert_answers_nasty_input(listing.protocol, text, SAMPLE, broken=broken, holds_calls=holds_calls)
    assert_answers_nasty_input(listing.protocol, text, broken=broken, holds_calls=holds_calls)


def test_a_malformed_list_says_where_the_grammar_stopped(listing: Listing) -> None:
    extraction = listing.protocol.parse('[legal_draft_v3(counterparty="Acme") probe_tool(s="b")]', SAMPLE)
    assert not extraction.compliant
    note = next(n for n in extraction.notes if "could not be read" in n)
    assert "line 1, column 38" in note and "expected ',' or ']'" in note and "found 'probe_tool'" in note


def test_instructions(listing: Listing) -> None:
    text = listing.protocol.instructions(SAMPLE)
    if listing.id == "python_list_call":
        assert "legal_draft_v3(" in text and "[" in text and "[]" in text
    else:  # BFCL's own prompt
        assert "[func_name1(param_a=value_a" in text and "nothing else" in text
        assert text != get_protocol("python_list_call").instructions(SAMPLE)


# --- calls_in: what a model-native format hands this protocol ----------------------------------------

_AROUND = st.sampled_from(["", "Sure.\n", "Here: ", "[1, 2] ", "```python\n", "\n```", " [] ", "Then [x(", ")] ",
                           "[f(a=1)]", "[g('x'), h(b=[1, 2])]", "(", "]", "'", '"', "\n", "[ f(1) ]"])


@given(st.lists(st.one_of(_AROUND, python_call_source().map(lambda source: source[0]),
                          python_call_source().map(lambda source: "[" + source[0] + "]")), max_size=5).map("".join))
def test_calls_in_gives_the_calls_parse_gives(text):
    """``calls_in`` reads a text of one plain list directly; on any text it answers as ``parse`` does."""
    for protocol_id in LISTINGS:
        protocol = get_protocol(protocol_id)
        expected = [(call.name, call.arguments) for call in protocol.parse(text, OUR_TOOLS).calls]
        assert protocol.calls_in(text, OUR_TOOLS) == expected, protocol_id


def test_calls_in_gives_the_calls_parse_gives_on_the_engine_corpus_and_nasty_input():
    from engine_cases import all_cases

    texts = [case["reply"] for case in all_cases()] + list(NASTY_INPUTS.values())
    assert len(texts) > 242
    for protocol_id in LISTINGS:
        protocol = get_protocol(protocol_id)
        taken = 0
        for text in texts:
            expected = [(call.name, call.arguments) for call in protocol.parse(text, OUR_TOOLS).calls]
            assert protocol.calls_in(text, OUR_TOOLS) == expected, (protocol_id, text[:200])
            taken += bool(expected)
        assert taken > 20
