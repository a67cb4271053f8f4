"""xml_call: round trips, replies as models write them (against the reference), robustness."""

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
from toolform_rules.replies.formats.markup_family.shared import text_of, xml_text, xml_value

PROTOCOL = get_protocol("xml_call")
# what starts like a tag of the format (a name that is one is no legacy argument's)
OWN_TAG = re.compile(r"</?(?:[A-Za-z_][\w.-]*:)?(?:function_calls|invoke|function|parameters?|param|tool_name)"
                     r"(?:[\s>/]|$)", re.I)

DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array",
                                                                                   "items": {"type": "string"}},
    "e": {"type": "boolean"}, "g": {"type": "number"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
TOOLSET = toolset_for(DOCS)


def X(text: str) -> str:
    """Replies are written with ‹ › for < > so that the test file reads as text, not markup."""
    return text.replace("‹", "<").replace("›", ">")


@CALL_SETTINGS
@given(calls_on(text_values=True, several=False))
def test_round_trip_one_call(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=equal_json)


@CALL_SETTINGS
@given(calls_on(text_values=True, several=True))
def test_round_trip_several_calls(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=equal_json)


def test_render_shape() -> None:
    from toolform_rules.calls import ToolCall
    text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": "  x & <y>  ", "c": {"k": [1]}}), ToolCall("g", {})])
    assert text == X('‹function_calls›\n  ‹invoke name="f"›\n    ‹parameter name="a"›1‹/parameter›\n'
                     '    ‹parameter name="b"›&#32;&#32;x &amp; &lt;y&gt;&#32;&#32;‹/parameter›\n'
                     '    ‹parameter name="c"›{"k": [1]}‹/parameter›\n  ‹/invoke›\n  ‹invoke name="g"›\n'
                     '  ‹/invoke›\n‹/function_calls›')


# replies as models write them, where we and the reference agree (names and typed arguments)
AGREE = [
    '‹function_calls›\n‹invoke name="f"›\n‹parameter name="a"›1‹/parameter›\n‹parameter name="b"›x &amp; y &lt;z&gt;'
    '‹/parameter›\n‹/invoke›\n‹invoke name="g"›\n‹parameter name="b"›2‹/parameter›\n‹/invoke›\n‹/function_calls›',
    'Sure.\n‹function_calls›‹invoke name="f"›‹parameter name="a"›1‹/parameter›‹parameter name="c"›{"x": [1, 2]}'
    '‹/parameter›‹parameter name="d"›["p", "q"]‹/parameter›‹/invoke›‹/function_calls› done',
    '‹invoke name="f"›‹parameter name="a"›1‹/parameter›‹parameter name="e"›true‹/parameter›‹parameter name="g"›'
    '1e-07‹/parameter›‹/invoke›',
    "‹invoke name='f'›‹parameter name='a'›1‹/parameter›‹/invoke›",
    '‹function_calls›‹invoke name="F"›‹parameter name="a"›1‹/parameter›‹/invoke›‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="b"›&quot;q&quot; &#65; &apos;‹/parameter›‹/invoke›'
    '‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="b"›a ‹ b & c‹/parameter›‹/invoke›‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="b"›x‹/parameter›‹parameter name="a"›1‹/invoke›'
    '‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="b"›‹/parameter›‹/invoke›‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹/invoke›‹/function_calls›',
    '```xml\n‹function_calls›‹invoke name="f"›‹parameter name="a"›1‹/parameter›‹/invoke›‹/function_calls›\n```',
    '‹function_calls›‹invoke name="f"›‹parameter name="c"›{"x": "a&amp;b"}‹/parameter›‹/invoke›‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="b"›He said "hi"‹/parameter›‹/invoke›‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="a"›1‹/parameter›‹/invoke›‹/function_calls›\n'
    '‹function_calls›‹invoke name="g"›‹parameter name="b"›2‹/parameter›‹/invoke›‹/function_calls›',
    '‹function_calls›\n  ‹invoke name="legal_draft_v3"›\n    ‹parameter name="counterparty"›Acme, "Ltd"‹/parameter›\n'
    '    ‹parameter name="value"›1200.5‹/parameter›\n    ‹parameter name="term_months"›12‹/parameter›\n'
    '    ‹parameter name="auto_renew"›true‹/parameter›\n    ‹parameter name="contract_details"›'
    '{"contract_id": "C-1", "status": "draft"}‹/parameter›\n  ‹/invoke›\n‹/function_calls›',
    '‹function_calls›‹invoke name="f"›‹parameter name="b"›  spaced \n text  ‹/parameter›‹/invoke›‹/function_calls›',
    "I'll look that up.\n\n‹function_calls›\n‹invoke name=\"legal_draft_v3\"›\n‹parameter name=\"counterparty\"›"
    "Beta‹/parameter›\n‹parameter name=\"value\"›3‹/parameter›\n‹parameter name=\"term_months\"›6‹/parameter›\n"
    "‹/invoke›\n‹/function_calls›\n",
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    text = X(reply)
    ours = read_calls(PROTOCOL, text, TOOLSET)
    assert ours, text  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("xml_call", text, DOCS), equal_json, text)


def test_divergence_missing_closing_tags() -> None:
    """Divergence: a reply cut off inside a parameter still yields its call (the reference finds none).

    The brief asks for missing closing tags to be tolerated; every value up to the cut is read
    and the note says which element was left open.
    """
    text = X('‹function_calls›\n‹invoke name="f"›\n‹parameter name="a"›1‹/parameter›\n‹parameter name="b"›x')
    assert reference_calls("xml_call", text, DOCS) == []
    extraction = PROTOCOL.parse(text)
    assert [(c.name, c.arguments) for c in extraction.calls] == [("f", {"a": "1", "b": "x"})]
    assert not extraction.compliant
    assert any("line 4, column 1: the <parameter> element is not closed" in n for n in extraction.notes)


def test_divergence_namespaced_tags() -> None:
    """Divergence: tags with a namespace prefix (``ns:invoke``) are read; the reference finds nothing."""
    text = X('‹ns:function_calls›‹ns:invoke name="f"›‹ns:parameter name="a"›1‹/ns:parameter›‹/ns:invoke›'
             '‹/ns:function_calls›')
    assert reference_calls("xml_call", text, DOCS) == []
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"a": 1})], equal_json, text)


def test_divergence_cdata_is_unwrapped() -> None:
    """Divergence: a CDATA section is XML's way to write raw text, so its content is the value.

    The reference keeps the ``<![CDATA[`` markers in the string.
    """
    text = X('‹function_calls›‹invoke name="f"›‹parameter name="b"›‹![CDATA[‹x› & y]]›‹/parameter›‹/invoke›'
             '‹/function_calls›')
    assert reference_calls("xml_call", text, DOCS) == [("f", {"b": "<![CDATA[<x> & y]]>"})]
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"b": "<x> & y"})], equal_json, text)


def test_divergence_extra_attributes() -> None:
    """Divergence: a parameter with more attributes than ``name`` is read; the reference drops it."""
    text = X('‹function_calls›‹invoke name="f"›‹parameter name="b" type="string"›x‹/parameter›‹/invoke›'
             '‹/function_calls›')
    assert reference_calls("xml_call", text, DOCS) == [("f", {})]
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"b": "x"})], equal_json, text)


def test_divergence_edge_spaces_written_as_references_survive() -> None:
    """Both strip the white space a model puts around a value; ours keeps spaces written as ``&#32;``."""
    text = X('‹function_calls›‹invoke name="f"›‹parameter name="b"›&#32;x&#32;‹/parameter›‹/invoke›'
             '‹/function_calls›')
    assert_calls(read_calls(PROTOCOL, text, TOOLSET), [("f", {"b": " x "})], equal_json, text)


def test_compliance() -> None:
    good = PROTOCOL.parse(X('‹function_calls›‹invoke name="f"›‹parameter name="a"›1‹/parameter›‹/invoke›'
                            '‹/function_calls›'))
    fenced = PROTOCOL.parse(X('```xml\n‹function_calls›‹invoke name="f"›‹/invoke›‹/function_calls›\n```'))
    prose = PROTOCOL.parse(X('Here: ‹function_calls›‹invoke name="f"›‹/invoke›‹/function_calls›'))
    inner = PROTOCOL.parse(X('‹function_calls›‹invoke name="f"›oops‹/invoke›‹/function_calls›'))
    assert good.compliant and fenced.compliant and not prose.compliant and not inner.compliant
    assert any("text between the tags was ignored: 'oops'" in n for n in inner.notes)


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    text = X('‹function_calls›\n‹invoke name="f"›\n‹parameter name="a"›1‹/parameter›\n‹/invoke›\n‹/parameter›\n')
    extraction = assert_total(PROTOCOL, text, malformed=True)
    assert extraction.notes[0].startswith("the XML could not be read: line 5, column 1: expected ")
    assert extraction.notes[0].endswith("found '</parameter>'")


def test_parameter_outside_an_invoke_stops_the_grammar() -> None:
    extraction = assert_total(PROTOCOL, X('‹function_calls›\n  ‹parameter name="a"›1‹/parameter›'), malformed=True)
    assert extraction.notes[0].startswith("the XML could not be read: line 2, column 3: expected ")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """No nasty reply holds an <invoke> call: each is answered with no calls and a note."""
    assert_total(PROTOCOL, NASTY[name], malformed=True)


# ---------------------------------------------------------------------------------------------
# MiniCPM's <function>/<param>, CDATA holding a closing tag, Anthropic's legacy <tool_name>/<parameters>:
# replies from serving engines' test suites (tests/data/replies/engine_cases.jsonl)

ENGINE_TOOLSET = toolset_for([
    {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}},
    {"name": "html", "parameters": {"type": "object", "properties": {"markup": {"type": "string"}}}},
    {"name": "perform_addition", "parameters": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}}}])
ENGINE_REPLIES = {
    # llama.cpp's openbmb-MiniCPM5 template: <invoke> and <parameter> spelled <function> and <param>
    "fdad3a29471b": ("‹function name=\"python\"›‹param name=\"code\"›print('Hello, World!')‹/param›‹/function›",
                     [("python", {"code": "print('Hello, World!')"})], True),
    # ... where a CDATA section lets a value hold its own closing tag
    "d37518ea3d3b": ('‹function name="html"›‹param name="markup"›‹![CDATA[‹a href="/x"›hi‹/a› ‹/param›]]›‹/param›'
                     '‹/function›', [("html", {"markup": '<a href="/x">hi</a> </param>'})], True),
    # anthropic-tools: the tool named by <tool_name>, the arguments elements named after them in <parameters>
    "2466741b2f47": ("some text that might go here‹function_calls›‹invoke›‹tool_name›perform_addition‹/tool_name›"
                     "‹parameters›‹a›300‹/a›‹b›305‹/b›‹/parameters›‹/invoke›‹/function_calls›some more text that "
                     "might go here...", [("perform_addition", {"a": 300, "b": 305})], False),
    # ... which refuses an <invoke> without a <tool_name>, and argument tags that do not pair
    "8529f67b2571": ("‹function_calls›‹invoke›perform_addition‹parameters›‹a›305‹/a›‹b›300‹/b›‹/parameters›"
                     "‹/invoke›‹/function_calls›", [], False),
    "ed87e5597887": ("‹function_calls›‹invoke›‹tool_name›perform_addition‹/tool_name›‹parameters›‹a›305‹/a›"
                     "‹b›300‹/b›‹c›‹/d›‹/parameters›‹/invoke›‹/function_calls›", [], False),
}


@pytest.mark.parametrize("key", ENGINE_REPLIES)
def test_engine_replies_in_the_other_spellings_are_read_as_the_engine_reads_them(key: str) -> None:
    reply, want, compliant = ENGINE_REPLIES[key]
    text = X(reply)
    assert hashlib.sha256(text.encode()).hexdigest()[:12] == key
    extraction = assert_total(PROTOCOL, text, ENGINE_TOOLSET)
    assert_calls(read_calls(PROTOCOL, text, ENGINE_TOOLSET), want, equal_json, (text, extraction))
    assert extraction.compliant == compliant, extraction
    assert extraction == PROTOCOL.by_grammar(text)  # the linear pass reads as the grammar


def test_legacy_arguments_whose_tags_do_not_pair_skip_their_call() -> None:
    """Anthropic's legacy reader refuses argument tags that do not pair; the note says which tag, and the other
    calls of the reply are read."""
    head = "‹function_calls›‹invoke›‹tool_name›f‹/tool_name›‹parameters›"
    for body, where in [("‹c›‹/d›", "'</d>' where </c> was expected"), ("‹/c›", "'</c>' closes nothing"),
                        ("‹a›1‹b›2‹/b›‹/a›", "'<b>' inside <a>")]:
        text = X(head + body + "‹/parameters›‹/invoke›‹invoke name=\"g\"›‹/invoke›‹/function_calls›")
        extraction = PROTOCOL.parse(text)
        assert [c.name for c in extraction.calls] == ["g"], text
        assert any(f"the arguments in <parameters> do not pair: {where}; the call was skipped" in note
                   for note in extraction.notes), extraction.notes
    cut = PROTOCOL.parse(X(head + "\n‹a›1‹/a›\n‹b/›‹c›‹![CDATA[‹/c›]]›"))
    assert [c.arguments for c in cut.calls] == [{"a": "1", "b": "", "c": "</c>"}]
    assert {note.split(": ", 1)[1] for note in cut.notes} == {
        "the <c> element is not closed", "the <parameters> element is not closed", "the <invoke> element is not closed",
        "the <function_calls> block is not closed"}


def test_the_spellings_mix_only_as_their_tags_pair() -> None:
    """A <param> may stand in an <invoke> and a <parameter> in a <function>; a closing tag of the other name
    stops the grammar, as any stray closing tag does."""
    mixed = PROTOCOL.parse(X('‹invoke name="f"›‹param name="a"›1‹/param›‹/invoke›'
                             '‹function name="g"›‹parameter name="b"›2‹/parameter›‹/function›'))
    assert [(c.name, c.arguments) for c in mixed.calls] == [("f", {"a": "1"}), ("g", {"b": "2"})] and mixed.compliant
    for text in ('‹function name="f"›‹param name="a"›1‹/parameter›‹/function›', '‹invoke name="f"›‹/function›',
                 '‹function name="f"›‹/invoke›'):
        extraction = assert_total(PROTOCOL, X(text), malformed=True)
        assert extraction.notes[0].startswith("the XML could not be read: line 1, column "), extraction.notes


def test_cdata_sections_in_values() -> None:
    """A section is text whole up to its ``]]>``; one that does not end before the next ``<![CDATA[`` (or at all)
    is text as written, and the tags after it are tags."""
    read = PROTOCOL.parse(X('‹invoke name="f"›‹parameter name="a"›‹![CDATA[‹/parameter›‹/invoke›]]›‹/parameter›'
                            '‹parameter name="b"›x ‹![CDATA[y‹/parameter›‹/invoke›'))
    assert [c.arguments for c in read.calls] == [{"a": "</parameter></invoke>", "b": "x <![CDATA[y"}] and read.compliant
    nested = PROTOCOL.parse(X('‹invoke name="f"›‹parameter name="a"›‹![CDATA[ ‹![CDATA[‹/parameter›]]›‹/parameter›'
                              '‹/invoke›'))
    assert [c.arguments for c in nested.calls] == [{"a": " <![CDATA[</parameter>"}]


@CALL_SETTINGS
@given(calls_on(text_values=True))
def test_rendered_calls_read_back_in_minicpm_spelling(case) -> None:
    """The rendered reply with MiniCPM's tag names (no <function_calls>): the same calls, compliant.  (Values and
    names are escaped, so only tags are renamed.)"""
    calls, docs = case
    text = PROTOCOL.render_calls(calls)
    for old, new in [("<function_calls>\n", ""), ("</function_calls>", ""), ("<invoke name=", "<function name="),
                     ("</invoke>", "</function>"), ("<parameter name=", "<param name="), ("</parameter>", "</param>")]:
        text = text.replace(old, new)
    extraction = PROTOCOL.parse(text, toolset_for(docs))
    assert_calls(read_calls(PROTOCOL, text, toolset_for(docs)), [(c.name, dict(c.arguments)) for c in calls],
                 equal_json, (text, extraction))
    assert extraction.compliant and extraction.notes == (), (text, extraction)


@CALL_SETTINGS
@given(calls_on(text_values=True))
def test_calls_read_back_in_the_legacy_spelling_and_in_cdata(case) -> None:
    """Calls written in Anthropic's legacy shape (arguments named by their elements, where a key is an XML name
    that is no tag of the format), and with every value a CDATA section (where it holds none): the same calls."""
    calls, docs = case
    keys = {key for call in calls for key in call.arguments}
    assume(all(re.fullmatch(r"[A-Za-z_][\w.-]*", key) and not OWN_TAG.match(f"<{key}>") for key in keys))
    legacy = "<function_calls>\n" + "".join(
        f"<invoke>\n<tool_name>{xml_text(call.name)}</tool_name>\n<parameters>\n"
        + "".join(f"<{key}>{xml_text(text_of(value))}</{key}>\n" for key, value in call.arguments.items())
        + "</parameters>\n</invoke>\n" for call in calls) + "</function_calls>"
    values = [text_of(value) for call in calls for value in call.arguments.values()]
    assume(not any("]]>" in value or "<![CDATA[" in value for value in values))
    cdata = re.sub(r'(<parameter name="[^"]*">)([^<]*)(</parameter>)',
                   lambda found: found.group(1) + "<![CDATA[" + xml_value(found.group(2)) + "]]>" + found.group(3),
                   PROTOCOL.render_calls(calls))
    want = [(c.name, dict(c.arguments)) for c in calls]
    for text in (legacy, cdata):
        extraction = PROTOCOL.parse(text, toolset_for(docs))
        assert_calls(read_calls(PROTOCOL, text, toolset_for(docs)), want, equal_json, (text, extraction))
        assert extraction.compliant and extraction.notes == (), (text, extraction)


SPELLINGS = ['‹function_calls›', '‹/function_calls›', '‹function name="f"›', '‹function›', '‹/function›',
             '‹invoke name="g"›', "‹invoke name='h'›", '‹invoke›', '‹/invoke›', '‹param name="a"›', '‹/param›',
             '‹parameter name="b" x="1"›', '‹/parameter›', '‹parameter/›', '‹tool_name›', '‹/tool_name›', '‹parameters›',
             '‹/parameters›', '‹a›', '‹/a›', '‹b/›', '‹/c›', '‹![CDATA[', ']]›', '‹![CDATA[‹/param›]]›',
             '‹![CDATA[‹/parameters›‹a›]]›', 'x', ' ', '\n', '&amp;', '&#32;', '‹', '‹param', '‹ns:function name="h"›',
             '‹/ns:function›', '‹function=f›', '‹/tool_name x›', '‹invoke name="f"', '‹other›', '‹/INVOKE›', '```xml\n']


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SPELLINGS), max_size=14).map("".join).map(X), st.integers(1, 80))
def test_the_linear_pass_reads_what_the_grammar_reads(text: str, limit: int) -> None:
    """The fast path (one pass over the tags) gives what the grammar alone gives (``limit``: what the grammar
    may read of a reply)."""
    assert_reads_as_the_grammar(PROTOCOL, text, limit)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("<>/=\"\n _ax!") + ["function", "param", "invoke", "tool_name", "[CDATA[",
                                                          "]]>", " name="]), max_size=40).map("".join))
def test_never_raises_on_tag_like_text(text: str) -> None:
    assert_total(PROTOCOL, text)
