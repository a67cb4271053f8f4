"""sexpr_call: round trips, the fast path against the grammar, model-like replies against the
reference, never raising, where the grammar stopped."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from code_family_support import (BROKEN_SEXPR, NASTY_INPUTS, OUR_TOOLS, PROPERTY, ROUND_TRIP, SAMPLE, SECOND,
                                 SEXPR_CALLS, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input, bfcl_calls,
                                 assert_fast_path_reads_as_the_grammar, calls_for, damaged, fast_path, json_value,
                                 ref_render, written)
from hypothesis import given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import grammar_read
from toolform_rules.replies.formats.code_family.sexpr_call import SexprValues

P = get_protocol("sexpr_call")
SYMBOL = re.compile(r"[^\W\d][\w.\-*/!?<>=$%&+]*")


def grammar_calls(text: str):
    """The calls of ``text`` as the sexpr_call grammar reads them (the slow path)."""
    return grammar_read("sexpr_call", SexprValues(), text)


def test_registered() -> None:
    assert P.info.id == "sexpr_call" and P.info.parallel and not P.info.text_values


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)
    text = P.render_calls(calls)  # the usual case takes the fast path, reading what the grammar reads
    assert_calls(written(fast_path("sexpr_call", text)), written(grammar_calls(text)), identical, context=text)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_through_the_grammar(calls: list[ToolCall]) -> None:
    text = P.render_calls(calls)
    found = [(c.name, dict(c.items)) for c in grammar_calls(text)]
    assert_calls(found, [(c.name, dict(c.arguments)) for c in calls], identical, context=text)


def test_the_example_is_the_reference_rendering() -> None:
    assert P.render_calls([THE_EXAMPLE, SECOND]) == ref_render("sexpr_call", [THE_EXAMPLE, SECOND])
    assert_round_trip(P, [THE_EXAMPLE, SECOND], SAMPLE)


@st.composite
def sexpr_source(draw: Any, value: Any, symbols_ok: bool = False) -> str:
    """``value`` in s-expression syntax, one of the ways a model might write it."""
    if isinstance(value, bool):
        return draw(st.sampled_from(["true", "#t"] if value else ["false", "#f"]))
    if value is None:
        return draw(st.sampled_from(["null", "nil"]))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if symbols_ok and SYMBOL.fullmatch(value) and value not in ("true", "false", "null", "nil"):
            if draw(st.booleans()):
                return value
        return draw(st.sampled_from([json.dumps(value, ensure_ascii=False), json.dumps(value)]))
    if isinstance(value, list):
        open_, close = draw(st.sampled_from([("[", "]"), ("(", ")"), ("'(", ")")]))
        if open_ != "[" and value and isinstance(value[0], str) and draw(st.booleans()):
            open_, close = "[", "]"
        return open_ + draw(st.sampled_from([", ", " ", ","])).join(
            [draw(sexpr_source(v, symbols_ok)) for v in value]) + close
    parts = []
    for k, v in value.items():
        if SYMBOL.fullmatch(k) and k not in ("true", "false", "null", "nil") and draw(st.booleans()):
            key = draw(st.sampled_from([":" + k, k]))
        else:
            key = json.dumps(k, ensure_ascii=False)
        parts.append(key + draw(st.sampled_from([" ", ": ", " : "])) + draw(sexpr_source(v, symbols_ok)))
    return "{" + draw(st.sampled_from([", ", " ", ","])).join(parts) + "}"


@st.composite
def expressions(draw: Any) -> tuple[str, str, list[tuple[str | None, Any]]]:
    """An s-expression as a model might write it, and the items it holds."""
    name = draw(st.sampled_from(["f", "legal_draft_v3", "math.factorial", "LegalDraftV3", "probe-tool"]))
    positional = draw(st.lists(json_value(4), max_size=1))
    keywords = draw(st.dictionaries(st.sampled_from(["a", "b", "counterparty", "s-x", "x_1", "true"]),
                                    st.one_of(json_value(6), st.sampled_from(["celsius", "red"])), max_size=3))
    parts = [draw(sexpr_source(v)) for v in positional]
    parts += [f":{k} {draw(sexpr_source(v, True))}" for k, v in keywords.items()]
    items = [(None, v) for v in positional] + list(keywords.items())
    return "(" + name + ("" if not parts else " ") + draw(st.sampled_from([" ", "\n  ", ", "])).join(parts) + ")", \
        name, items


#: expressions in the fast path's subset (keywords with JSON values, nil, bare words) as a model writes them
FAST_PATH_CASES = [
    '(legal_draft_v3 :counterparty "Acme, \\"Ltd\\"" :value 1200.5 :auto_renew true '
    ':contract_details {"status": "draft"})',
    '(probe_tool :s red :a [1, 2.5e-3, null] :o {"k": [true, false]} :b nil)\n(f "positional" :x_1 -0.0)',
]


@PROPERTY
@given(drawn=expressions(), junk=st.one_of(st.just(""), st.text(alphabet="'\"\\()[]{},:;#-.eE0 t\n", min_size=1,
                                                                max_size=3)), where=st.integers(min_value=0))
def test_the_fast_path_reads_what_the_grammar_reads(drawn, junk: str, where: int) -> None:
    """The grammar reads every expression a model might write; the fast path reads what it takes (not
    all: a quoted list '(...) is the grammar's) as the grammar does; damaged, nothing the grammar refuses."""
    text, name, items = drawn
    if not junk:
        assert_calls(written(grammar_calls(text)), [(name, items)], identical, context=text)
    text = damaged(text, junk, where)
    assert_fast_path_reads_as_the_grammar(fast_path("sexpr_call", text), grammar_calls, text, must_read=False)


@pytest.mark.parametrize("text", FAST_PATH_CASES)
def test_the_fast_path_reads_its_subset(text: str) -> None:
    assert_fast_path_reads_as_the_grammar(fast_path("sexpr_call", text), grammar_calls, text, must_read=True)


AGREE = [
    '(legal_draft_v3 :counterparty "a" :value 1)',
    '(legal_draft_v3 :counterparty "a")\n(probe_tool :s "b")',
    '(legal_draft_v3 :counterparty "a") (probe_tool :s "b")',
    '(probe_tool :s "x" :o {"k": 1} :a [1, 2])',
    '(probe_tool :s bare)',
    '(probe_tool :s "x" ; a comment\n :i 1)',
    '(LegalDraftV3 :counterparty "a")',
    '(legal_draft_v3 :counterparty "a"',
    'Sure: (legal_draft_v3 :counterparty "a") done',
    '```lisp\n(legal_draft_v3 :counterparty "a")\n```',
    '(probe_tool :s "a\\"b\\\\c\\nd")',
    '(probe_tool :o {:k 1})',
    '(probe_tool :o {"k" 1})',
    '(probe_tool :n -1.5e-3 :i +3)',
    '(probe_tool)',
    '(legal_draft_v3 :counterparty "a" :counterparty "b")',
    '(legal_draft_v3 :counterparty "Acme, \\"Ltd\\"" :value 1200.5 :term_months 12 :auto_renew true '
    ':contract_details {"contract_id": "C-1", "status": "draft"})',
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_agrees(P, text)


DIVERGE = [
    # nil is Lisp's nothing, and null JSON's: both are None (the reference reads nil as False and
    # keeps the text "null")
    ("(probe_tool :s nil :o null)", [("probe_tool", {"s": None, "o": None})]),
    # #t and #f are Scheme's booleans (the reference reads #t as False)
    ("(probe_tool :b #t :s #f)", [("probe_tool", {"b": True, "s": False})]),
    # vectors and lists hold values separated by white space (the reference keeps one string,
    # "1 2 3", or the text "(1")
    ("(probe_tool :a [1 2 3])", [("probe_tool", {"a": [1, 2, 3]})]),
    ("(probe_tool :a (1 2 3))", [("probe_tool", {"a": [1, 2, 3]})]),
    ("(probe_tool :a '(1 2 3))", [("probe_tool", {"a": [1, 2, 3]})]),
    # positional values bound to the schema's parameter order (the reference drops them)
    ('(legal_draft_v3 "pos" 1)', [("legal_draft_v3", {"counterparty": "pos", "value": 1})]),
    # a keyword with a dash is that name (the reference drops the argument)
    ('(legal_draft_v3 :counter-party "a")', [("legal_draft_v3", {"counter-party": "a"})]),
    # an expression naming an unknown tool, standing alone, is still the model's call (the
    # reference drops it)
    ("(ghost :a 1)", [("ghost", {"a": 1})]),
    # a nested list without a keyword is a positional value (the reference drops it silently);
    # its place, the first parameter, is taken by keyword, so it keeps the name _pos0
    ('(legal_draft_v3 :counterparty "x" (nested))', [("legal_draft_v3", {"counterparty": "x", "_pos0": ["nested"]})]),
    # t is a symbol, read as its text (the reference reads it as False)
    ("(probe_tool :b t)", [("probe_tool", {"b": "t"})]),
    # an apostrophe in the prose before the expression is prose (the reference finds no call)
    ("Sure — I'll draft that now.\n(legal_draft_v3 :counterparty \"Acme\" :value 12)\nAnything else?",
     [("legal_draft_v3", {"counterparty": "Acme", "value": 12})]),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(P, text, OUR_TOOLS), expected, identical, context=text)


def test_compliance() -> None:
    assert P.parse('(f :a 1)\n(g :b "x")').compliant
    assert P.parse('```lisp\n(f :a [1 2] :b {:k nil})\n```').compliant
    assert not P.parse("(probe_tool :s bare)").compliant  # a bare symbol is not a literal
    prose = P.parse('I (think) so: (legal_draft_v3 :counterparty "a")')
    assert [c.name for c in prose.calls] == ["legal_draft_v3"] and not prose.compliant


@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text)
    assert_total(P, "(f :a " + text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str) -> None:
    """A broken expression gives no call and a note why, a flood of expressions gives calls (the
    linear tests bound the time); after "(f :a " every nasty input leaves the expression unclosed,
    and only the flood's own expressions are read."""
    text, holds_calls = NASTY_INPUTS[name], name in SEXPR_CALLS
    assert_answers_nasty_input(P, text, SAMPLE, broken=name in BROKEN_SEXPR, holds_calls=holds_calls)
    assert_answers_nasty_input(P, "(f :a " + text, broken=not holds_calls, holds_calls=holds_calls)


def test_a_malformed_expression_says_where_the_grammar_stopped() -> None:
    extraction = P.parse('(legal_draft_v3 :counterparty "Acme" :value)', SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    assert "line 1, column 44" in extraction.notes[0] and "found ')'" in extraction.notes[0]


def test_instructions() -> None:
    text = P.instructions(SAMPLE)
    assert "(legal_draft_v3 :argument" in text and "JSON" in text
