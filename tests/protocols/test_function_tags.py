"""function_tags: round trips, replies as models write them (against the reference), robustness."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from markup_family_support import (CALL_SETTINGS, NASTY, SAMPLE_DOC, assert_reads_as_the_grammar, calls_on,
                                   reference_calls, toolset_for)
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.markup_family.shared import text_of

PROTOCOL = get_protocol("function_tags")
OWN_TAG = re.compile(r"</?(?:function|parameter)[=>]|</?tool_call>")  # the tags a value cannot hold
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array",
                                                                                   "items": {"type": "string"}},
    "e": {"type": "boolean"}, "g": {"type": "number"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
TOOLSET = toolset_for(DOCS)


def X(text: str) -> str:
    """Replies are written with ‹ › for < > so that the test file reads as text, not markup."""
    return text.replace("‹", "<").replace("›", ">")


def expressible(calls) -> bool:
    """The format has no escaping: a value holding one of its own tags cannot be written (the only exclusion)."""
    return not any(OWN_TAG.search(text_of(v)) for c in calls for v in c.arguments.values())


@CALL_SETTINGS
@given(calls_on(text_values=True, several=False))
def test_round_trip_one_call(case) -> None:
    calls, docs = case
    assume(expressible(calls))
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=equal_json)


@CALL_SETTINGS
@given(calls_on(text_values=True, several=True))
def test_round_trip_several_calls(case) -> None:
    calls, docs = case
    assume(expressible(calls))
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=equal_json)


AGREE = [
    '‹function=f›\n‹parameter=a›\n1\n‹/parameter›\n‹parameter=b›\nx &amp; y\n‹/parameter›\n‹/function›\n'
    '‹function=g›\n‹parameter=b›2‹/parameter›\n‹/function›',
    '‹tool_call›\n‹function=f›\n‹parameter=a›\n1\n‹/parameter›\n‹/function›\n‹/tool_call›',
    '‹function=f›{"a": 1, "b": "x"}‹/function›',
    'Let me call. ‹function=f›‹parameter=a›1‹/parameter›‹/function› ok',
    '‹function=f›‹parameter=b›a ‹ b‹/parameter›‹/function›',
    '‹function=F›‹parameter=a›1‹/parameter›‹/function›',
    '‹function=f›‹parameter=b›‹/parameter›‹/function›',
    '‹function=f›\n‹parameter=a›\n7\n‹/parameter›\n‹parameter=c›\n{"x": [1, 2]}\n‹/parameter›\n‹parameter=d›\n["p"]\n'
    '‹/parameter›\n‹parameter=e›\ntrue\n‹/parameter›\n‹/function›',
    '‹function=legal_draft_v3›\n‹parameter=counterparty›\nAcme, "Ltd"\n‹/parameter›\n‹parameter=value›\n1200.5\n'
    '‹/parameter›\n‹parameter=term_months›\n12\n‹/parameter›\n‹/function›',
    '‹tool_call›\n‹function=f›\n‹parameter=a›\n1\n‹/parameter›\n‹/function›\n‹/tool_call›\n‹tool_call›\n'
    '‹function=g›\n‹parameter=b›\n2\n‹/parameter›\n‹/function›\n‹/tool_call›',
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    text = X(reply)
    ours = read_calls(PROTOCOL, text, TOOLSET)
    assert ours, text  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("function_tags", text, DOCS), equal_json, text)


def test_divergence_spaces_inside_a_value_are_kept() -> None:
    """Divergence: only the newline the template writes at each end is dropped; the reference strips all
    white space, so a string with spaces (or blank lines) at its ends does not survive its round trip."""
    text = X('‹function=f›‹parameter=b›  sp  ‹/parameter›‹parameter=a›\n\n1\n‹/parameter›‹/function›')
    assert reference_calls("function_tags", text, DOCS) == [("f", {"b": "sp", "a": 1})]
    assert PROTOCOL.parse(text).calls[0].arguments == {"b": "  sp  ", "a": "\n1"}


def test_divergence_missing_closing_tags() -> None:
    """Divergence: a reply cut short (or a model that forgets ``</function>``) still yields its call."""
    text = X('‹function=f›‹parameter=a›1‹/parameter›‹parameter=c›{"x": 1}‹/parameter›‹parameter=e›True‹/parameter›')
    assert reference_calls("function_tags", text, DOCS) == []
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"a": 1, "c": {"x": 1}, "e": True})], equal_json, text)
    cut = PROTOCOL.parse(X('‹function=f›\n‹parameter=a›\n1\n‹parameter=b›\ntwo'))
    assert [c.arguments for c in cut.calls] == [{"a": "1", "b": "two"}]
    assert "line 2, column 1: the <parameter=...> element is not closed" in cut.notes
    assert not cut.compliant


def test_divergence_empty_function() -> None:
    """Divergence: ``<function=f></function>`` is a call with no arguments (the reference finds none)."""
    text = X('‹function=f›\n‹/function›')
    assert reference_calls("function_tags", text, DOCS) == []
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {})], equal_json, text)


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = assert_total(PROTOCOL, X('‹function=f›\n‹parameter=a›1‹/parameter›\n‹/function›\n‹/parameter›'),
                              malformed=True)
    assert extraction.notes[0].startswith("the tags could not be read: line 4, column 1: expected ")
    broken = assert_total(PROTOCOL, X('‹function=f›\n‹parameter=a\n1'), malformed=True)
    assert "line 2, column 1" in broken.notes[0]


def test_compliance() -> None:
    assert PROTOCOL.parse(X('‹function=f›‹parameter=a›1‹/parameter›‹/function›')).compliant
    assert PROTOCOL.parse(X('‹tool_call›‹function=f›{"a": 1}‹/function›‹/tool_call›')).compliant
    assert not PROTOCOL.parse(X('I call ‹function=f›‹/function›')).compliant
    junk = PROTOCOL.parse(X('‹function=f›hmm‹parameter=a›1‹/parameter›‹/function›'))
    assert not junk.compliant and "ignored" in junk.notes[0]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """No nasty reply holds a call in <function=...> tags: each is answered with no calls and a note."""
    assert_total(PROTOCOL, NASTY[name], malformed=True)


# ---------------------------------------------------------------------------------------------
# a missing opening <tool_call>: replies from serving engines' test suites (engine_cases.jsonl)

ENGINE_TOOLSET = toolset_for([
    {"name": "special_function", "parameters": {"type": "object", "properties": {"arg1": {"type": "integer"}}}},
    {"name": "special_function_with_opt", "parameters": {"type": "object", "properties": {
        "arg1": {"type": "integer"}, "arg2": {"type": "integer"}}}},
    {"name": "get_current_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "state": {"type": "string"}, "unit": {"type": "string"}}}}])
SKIPPED_OPENING = {
    # vLLM's qwen3_coder parser tests (a streaming variant): prose, then a call without its <tool_call>
    "42bb7b511848": ("I'll check the weather for you.\n\n‹function=get_current_weather›\n‹parameter=city›\nDallas\n"
                     "‹/parameter›\n‹parameter=state›\nTX\n‹/parameter›\n‹parameter=unit›\nfahrenheit\n‹/parameter›\n"
                     "‹/function›\n‹/tool_call›",
                     [("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})]),
    # llama.cpp's Qwen3-Coder template: the model starts with <function=...>
    "6c7a5e38f445": ("‹function=special_function›\n‹parameter=arg1›\n1\n‹/parameter›\n‹/function›\n‹/tool_call›",
                     [("special_function", {"arg1": 1})]),
    # ... and only the first of several calls skips it; the later ones keep </tool_call>\n<tool_call>
    "395c8ad41816": ("‹function=special_function›\n‹parameter=arg1›\n1\n‹/parameter›\n‹/function›\n‹/tool_call›\n"
                     "‹tool_call›\n‹function=special_function_with_opt›\n‹parameter=arg1›\n1\n‹/parameter›\n"
                     "‹parameter=arg2›\n2\n‹/parameter›\n‹/function›\n‹/tool_call›",
                     [("special_function", {"arg1": 1}), ("special_function_with_opt", {"arg1": 1, "arg2": 2})]),
}


@pytest.mark.parametrize("key", SKIPPED_OPENING)
def test_engine_replies_without_the_opening_tool_call_are_read_as_the_engine_reads_them(key: str) -> None:
    """The </tool_call> of a call whose <tool_call> the model skipped is noted, not read as prose."""
    text, want = X(SKIPPED_OPENING[key][0]), SKIPPED_OPENING[key][1]
    assert hashlib.sha256(text.encode()).hexdigest()[:12] == key
    assert_calls(read_calls(PROTOCOL, text, ENGINE_TOOLSET), want, equal_json, text)
    extraction = PROTOCOL.parse(text)
    assert [note.split(": ", 1)[1] for note in extraction.notes] == [
        "a </tool_call> without its opening <tool_call> was skipped"]
    assert not extraction.compliant
    assert extraction == PROTOCOL.by_grammar(text)  # the linear pass reads what the grammar reads


def test_a_stray_tool_call_close_no_longer_stops_the_reading() -> None:
    """A </tool_call> that closes no wrapper is skipped with a note wherever it stands (its opening is what
    models skip); any other stray closing tag still stops the grammar."""
    alone = PROTOCOL.parse(X("Done.\n‹/tool_call›"))
    assert alone.calls == () and alone.notes == ("line 2, column 1: a </tool_call> without its opening <tool_call> "
                                                 "was skipped",)
    twice = PROTOCOL.parse(X("‹tool_call›‹function=f›‹/function›‹/tool_call›‹/tool_call›"))
    assert [c.name for c in twice.calls] == ["f"] and len(twice.notes) == 1 and not twice.compliant
    open_function = PROTOCOL.parse(X("‹function=f›\n‹parameter=a›\n1\n‹/tool_call›"))
    assert [c.arguments for c in open_function.calls] == [{"a": "1"}]
    assert sorted(note.split(": ", 1)[1] for note in open_function.notes) == [
        "a </tool_call> without its opening <tool_call> was skipped", "the <function=...> element is not closed",
        "the <parameter=...> element is not closed"]
    assert_total(PROTOCOL, X("‹function=f›‹/function›‹/tool_call›‹/function›"), malformed=True)


@pytest.mark.parametrize("indent", ["  ", "    ", "\t"])
def test_parameters_indented_with_spaces_are_read(indent: str) -> None:
    text = X(f"‹tool_call›\n‹function=get_current_weather›\n{indent}‹parameter=city›\nDallas\n‹/parameter›\n"
             f"{indent}‹parameter=unit›\nfahrenheit\n‹/parameter›\n‹/function›\n‹/tool_call›")
    extraction = PROTOCOL.parse(text)
    assert [(c.name, c.arguments) for c in extraction.calls] == [
        ("get_current_weather", {"city": "Dallas", "unit": "fahrenheit"})]
    assert extraction.compliant and extraction.notes == ()


@CALL_SETTINGS
@given(calls_on(text_values=True), st.booleans())
def test_rendered_calls_without_their_opening_tool_call_read_back(case, all_skipped: bool) -> None:
    """Rendered calls, each in <tool_call> as vLLM writes them, with the opening of the first (or of every one)
    left out: the same calls, one note per missing opening."""
    calls, docs = case
    assume(expressible(calls))
    blocks = [("" if i == 0 or all_skipped else "<tool_call>\n") + PROTOCOL.render_calls([call]) + "\n</tool_call>"
              for i, call in enumerate(calls)]
    text = "\n".join(blocks)
    extraction = PROTOCOL.parse(text, toolset_for(docs))
    want = [(call.name, dict(call.arguments)) for call in calls]
    assert_calls(read_calls(PROTOCOL, text, toolset_for(docs)), want, equal_json, (text, extraction))
    skipped = len(calls) if all_skipped else 1
    assert [note.split(": ", 1)[1] for note in extraction.notes] == [
        "a </tool_call> without its opening <tool_call> was skipped"] * skipped
    assert not extraction.compliant


FRAGMENTS = ['‹tool_call›', '‹/tool_call›', '‹/tool_call›\n', '‹function=f›', '‹function=g›', '‹/function›',
             '‹parameter=a›', '‹parameter=b›', '‹/parameter›', '1', ' ', '\n', '‹', 'x', '{"a": 1}', "{'b': True,}",
             '{"a": 1, "a": 2}', '{bad', '‹function=›', '‹parameter= c ›', '  ‹parameter=a›', '\t‹parameter=b›',
             '‹function›', '‹/function=', '‹parameter=a\n', '‹tool_call', '‹/parameter x›', '```\n']


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join).map(X), st.integers(1, 80))
def test_the_linear_pass_reads_what_the_grammar_reads(text: str, limit: int) -> None:
    """The fast path (one pass over the tags) gives what the grammar alone gives (``limit``: what the grammar
    may read of a reply)."""
    assert_reads_as_the_grammar(PROTOCOL, text, limit)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("<>/=\n _ax{}") + ["tool_call", "function", "parameter"]), max_size=40)
       .map("".join))
def test_never_raises_on_tag_like_text(text: str) -> None:
    assert_total(PROTOCOL, text)
