"""xml_call: round trips, replies as models write them (against the reference), robustness."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from markup_family_support import CALL_SETTINGS, NASTY, SAMPLE_DOC, calls_on, reference_calls, toolset_for
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.protocols import get_protocol
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.markup_family import Stopped
from toolform_rules.protocols.xml_call import _canonical, _extraction, _scan_or_stop

PROTOCOL = get_protocol("xml_call")


_structure_by_grammar = PROTOCOL.by_grammar


def _scan(text: str):
    """The linear pass's structure, or ``None`` where the grammar stops."""
    found = _scan_or_stop(text)
    return None if isinstance(found, Stopped) else found
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


FRAGMENTS = ['‹function_calls›', '‹/function_calls›', '‹invoke name="f"›', "‹invoke name='g'›", '‹invoke›',
             '‹/invoke›', '‹parameter name="a"›', '‹parameter name="b" x="1"›', '‹/parameter›', '‹parameter/›',
             'text', ' ', '\n', '‹', '&amp;', '&#32;', '‹![CDATA[‹/parameter›]]›', '‹ns:invoke name="h"›',
             '‹/ns:invoke›', '‹invoke name="f"', '‹/parameter x›', '‹other›', '‹/INVOKE›']


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join).map(X))
def test_fast_path_and_grammar_agree(text: str) -> None:
    """The regex fast path reads what the grammar reads, and gives up exactly where the grammar stops;
    where the canonical reader answers too (the test below holds rows it must take), it agrees."""
    fast = _scan(text)
    try:
        slow = _structure_by_grammar(text)
    except GrammarFailure:
        slow = None
    assert (fast is None) == (slow is None), text
    event("scan: " + ("declined" if fast is None else "answered"))
    if fast is not None and slow is not None:
        a, b = _extraction(fast, text), _extraction(slow, text)
        assert a == b, (text, a, b)
        canonical = _canonical(text)
        event("canonical reader: " + ("declined" if canonical is None else "answered"))
        assert canonical is None or canonical == a, (text, canonical, a)


# rows of the fragments above that the scan and, for the first ones, the canonical reader must take
SCANNED_ROWS = [
    ('‹function_calls›‹invoke name="f"›‹parameter name="a"›text‹/parameter›‹/invoke›‹/function_calls›', True),
    ('‹function_calls›\n‹invoke name="f"›‹/invoke›\n‹/function_calls›', True),
    ("‹invoke name='g'›‹/invoke›", False),
    ('‹invoke name="f"›‹parameter name="b" x="1"›&amp;‹/parameter›‹/invoke›', False),
    ('‹function_calls›‹invoke name="f"›‹parameter/›‹/invoke›‹/function_calls›', False),
]


@pytest.mark.parametrize("row, canonical_too", SCANNED_ROWS)
def test_fast_paths_take_fragment_rows(row: str, canonical_too: bool) -> None:
    text = X(row)
    fast = _scan(text)
    assert fast is not None, text
    expected = _extraction(_structure_by_grammar(text), text)
    assert _extraction(fast, text) == expected, text
    if canonical_too:
        assert _canonical(text) == expected, text


@CALL_SETTINGS
@given(calls_on(text_values=True), st.sampled_from(["", "Sure:\n", "```xml\n", " \n"]),
       st.sampled_from(["", "\nDone.", "\n```", "\n\n"]))
def test_canonical_path_agrees_with_the_grammar(case, before: str, after: str) -> None:
    """The canonical reader (three regular expressions) gives what the grammar gives on rendered replies."""
    text = before + PROTOCOL.render_calls(case[0]) + after
    canonical = _canonical(text)
    assert canonical is not None
    assert canonical == _extraction(_structure_by_grammar(text), text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """No nasty reply holds an <invoke> call: each is answered with no calls and a note."""
    assert_total(PROTOCOL, NASTY[name], malformed=True)
