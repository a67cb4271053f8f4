"""two_step_call: round trips, the name line against the grammar, model-like replies against the reference."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from json_family_cases import (JSON_VALUES, MALFORMED_INPUTS, NASTY_INPUTS, bfcl_calls, canonical_pairs, fast_calls,
                               grammar_calls, lenient_text, reference_pairs, sample_calls)
from support.bfcl import function_docs
from support.protocol_checks import as_pipeline_reads, assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import sample_toolset
from toolform_rules.calls import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats.json_family.shared import read_grammar
from toolform_rules.replies.formats.json_family.two_step_call import NAME_LINE

PROTOCOL = get_protocol("two_step_call")
TOOLS = sample_toolset()


def _read_with_tools(text):
    """The calls of ``text`` parsed with the sample toolset, names as written (the pipeline resolves them later)."""
    return as_pipeline_reads(PROTOCOL, PROTOCOL.parse(text, TOOLS))


@settings(max_examples=300, deadline=None)
@given(sample_calls(max_calls=4))
def test_round_trip_sample_tool(calls):
    assert_round_trip(PROTOCOL, calls)


@settings(max_examples=300, deadline=None)
@given(bfcl_calls(max_calls=4))
def test_round_trip_bfcl(calls):
    assert_round_trip(PROTOCOL, calls)


def test_every_bfcl_name_is_a_name_line():
    names = {doc["name"] for doc in function_docs()}
    assert all(NAME_LINE.fullmatch(name).group(1) == name for name in names)


def _grammar_name(line):
    """The name the grammar's ``name`` rule reads from ``line``, or None where it stops."""
    try:
        return read_grammar(PROTOCOL.grammar, line, PROTOCOL.transformer, "name")
    except GrammarFailure:
        return None


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["", "`", "*", "**", "***", " ", "\t"]), st.sampled_from(["f", "math.factorial", "a-b",
                                                                                  "Legal_Draft_V3", "été", "x1",
                                                                                  "1x", "a..b", "a.", "a b", ""]),
       st.sampled_from(["", "()", " ()", "( )", "(x)"]), st.sampled_from(["", "`", "*", "**", " "]),
       st.sampled_from(["", ":", " :", "::", "."]))
def test_name_line_expression_and_grammar_agree(before, name, parens, after, colon):
    line = before + name + parens + after + colon
    match = NAME_LINE.fullmatch(line)
    assert (match.group(1) if match else None) == _grammar_name(line), line


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="`*:() \tab.-_1é", max_size=12))
def test_name_line_expression_and_grammar_agree_on_noise(line):
    match = NAME_LINE.fullmatch(line)
    event("a name line" if match else "not a name line")
    assert (match.group(1) if match else None) == _grammar_name(line), line


@pytest.mark.parametrize("line, name", [("f", "f"), ("`math.factorial`", "math.factorial"),
                                        ("**Legal_Draft_V3**:", "Legal_Draft_V3"), ("été()", "été"),
                                        ("\tx1 :", "x1"), ("* a-b *", "a-b"), ("1x", None), ("a..b", None),
                                        ("a b", None), ("", None)])
def test_name_lines_read_by_the_expression_and_the_grammar(line, name):
    """Known lines, so that the agreement above is not two readers that both decline everything."""
    match = NAME_LINE.fullmatch(line)
    assert (match.group(1) if match else None) == name, line
    assert _grammar_name(line) == name, line


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "legal_draft_v3", "math.factorial"]),
                          st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4)), min_size=1, max_size=3))
def test_fast_path_and_grammar_agree(raw):
    text = PROTOCOL.render_calls([ToolCall(n, a) for n, a in raw])
    slow = grammar_calls(PROTOCOL, text)
    assert_calls(fast_calls(PROTOCOL, text), slow, context=text)
    assert_calls(read_calls(PROTOCOL, text), slow, context=text)


@settings(max_examples=50, deadline=None)
@given(st.data(), sample_calls(max_calls=3))
def test_json_as_models_write_it_is_read_as_the_grammar_reads(data, calls):
    decorations = data.draw(st.lists(st.sampled_from(["{}", "`{}`", "**{}**", "{}:", "{}()"]),
                                     min_size=len(calls), max_size=len(calls)))
    arguments = [data.draw(lenient_text(c.arguments)) for c in calls]
    text = "\n".join(d.format(c.name) + "\n" + a for d, c, a in zip(decorations, calls, arguments))
    slow = grammar_calls(PROTOCOL, text)
    extraction = PROTOCOL.parse(text)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), slow, context=text)
    assert extraction.compliant


AGREE = [
    'legal_draft_v3\n{"value": 1}',
    'I will use this tool:\nlegal_draft_v3\n{"value": 1}',
    "Legal_Draft_V3\n{'auto_renew': True,}",
    '`legal_draft_v3`\n{"value": 1}',
    '**legal_draft_v3**\n{"value": 1}',
    'legal_draft_v3\n\n{"value": 1}',
    '{"value": 1}',
    "legal_draft_v3",
    'legal_draft_v3()\n{"value": 1}',
    'legal_draft_v3\n{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    '{"name": "legal_draft_v3", "arguments": {"value": 1}}',
    "legal_draft_v3\n{}",
    'Legal Draft V3\n{"value": 1}',
    'legal_draft_v3:\n{"value": 1}\n',
    "",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text):
    """The reference resolves the name against the toolset (``Legal_Draft_V3`` → ``legal_draft_v3``);
    we return the name as written and the pipeline resolves it, so names compare canonically."""
    assert_calls(canonical_pairs(_read_with_tools(text)), canonical_pairs(reference_pairs("two_step_call", text)),
                 context=text)


def test_divergences_from_the_reference():
    """Divergences:
    - several name/arguments pairs give several calls (the rendered form of two calls); the
      reference reads the first pair only, so its own rendering loses calls;
    - arguments spread over several lines are read (the reference returns empty arguments);
    - arguments in a code fence, a name and arguments on one line, a dotted name the toolset does
      not know (``math.factorial``) are read, noted where not the format (the reference finds none);
    - arguments that are cut off, or an array, give no call and a note (the reference invents a call
      with empty arguments, which would then be validated as if the model had sent none)."""
    cases = {
        'f\n{"a": 1}\ng\n{"b": 2}': [("f", {"a": 1}), ("g", {"b": 2})],
        'legal_draft_v3\n{\n  "value": 1\n}': [("legal_draft_v3", {"value": 1})],
        'legal_draft_v3\n```json\n{"value": 1}\n```': [("legal_draft_v3", {"value": 1})],
        'legal_draft_v3 {"value": 1}': [("legal_draft_v3", {"value": 1})],
        'math.factorial\n{"n": 5}': [("math.factorial", {"n": 5})],
        'legal_draft_v3\n{"value": 1': [],
        "legal_draft_v3\n[1, 2]": [],
    }
    for text, expected in cases.items():
        assert_calls(_read_with_tools(text), expected, context=text)
        assert reference_pairs("two_step_call", text) != expected, text


def test_a_tool_named_in_a_prose_line_is_found_with_a_toolset():
    text = 'Tool: legal_draft_v3\nArguments: {"value": 1}'
    extraction = PROTOCOL.parse(text, TOOLS)
    assert_calls(as_pipeline_reads(PROTOCOL, extraction), [("legal_draft_v3", {"value": 1})])
    assert not extraction.compliant
    without = PROTOCOL.parse(text)
    assert without.calls == () and without.notes[0].endswith(
        "could not be read: line 1, column 7: expected the end of the text, found 'legal_draft_v3'")


def test_compliance():
    assert PROTOCOL.parse('f\n{"a": 1}').compliant
    assert PROTOCOL.parse('f\n{"a": 1}\ng\n{}').compliant
    assert PROTOCOL.parse('f\n```json\n{"a": 1}\n```').compliant
    assert not PROTOCOL.parse('Here it is.\nf\n{"a": 1}').compliant
    assert not PROTOCOL.parse('f {"a": 1}').compliant
    assert not PROTOCOL.parse("f").compliant


def test_malformed_reply_says_where_the_grammar_stopped():
    extraction = PROTOCOL.parse('legal_draft_v3\n{"value": 1, "term_months" 12}')
    assert extraction.calls == ()
    assert extraction.notes == ("no arguments could be read: line 2, column 28: expected ':' or ',' or '}' or ']', "
                                "found '12'",)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    assert_total(PROTOCOL, text)
    assert_total(PROTOCOL, text, TOOLS)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='[]{}"\':,\\ \nab1tTnN.-e`*()', max_size=60))
def test_never_raises_on_json_like_noise(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text):
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("text", MALFORMED_INPUTS, ids=range(len(MALFORMED_INPUTS)))
def test_malformed_nasty_inputs_give_no_call_and_say_why(text):
    assert_total(PROTOCOL, text, malformed=True)


def test_instructions():
    assert "name" in PROTOCOL.instructions() and "JSON" in PROTOCOL.instructions()
