"""The JSON family's shared module: locating JSON in replies, and its fast path (strict JSON) against the grammar."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from json_family_cases import JSON_VALUES, TEXT, lenient_text
from support.compare import identical
from toolform_rules.grammar import GrammarFailure
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.json_family.shared import _MISSING, Reply, Values, read_grammar, relocate, value_spans
from toolform_rules.replies.formats.values import balanced_spans, lexes


class _One(Values):
    def start(self, items):
        return items[0]


def grammar_value(text):
    """The grammar's reading (json_object.lark: one value of json_values.lark), or _MISSING."""
    try:
        return read_grammar("json_object", text, _One())
    except GrammarFailure:
        return _MISSING


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), TEXT, st.booleans(),
                              st.none()),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
                    max_leaves=10))
def test_the_fast_path_reads_strict_json_as_the_grammar_does(value):
    """The family's one fast path, Python's ``json``, held to the grammar on its domain: strict JSON."""
    text = json.dumps(value, ensure_ascii=False)
    assert identical(json.loads(text), value), text
    if isinstance(value, (dict, list)):
        assert identical(grammar_value(text), value), text


@settings(max_examples=50, deadline=None)
@given(st.data(), st.dictionaries(TEXT, JSON_VALUES, max_size=4))
def test_json_as_models_write_it_is_read_by_the_grammar(data, value):
    """A call whose arguments are written as models write JSON (either quote, Python's words, trailing commas):
    the reply's reading gives what the grammar gives."""
    text = '{"name": "f", "arguments": ' + data.draw(lenient_text(value)) + "}"
    calls = get_protocol("json_object").parse(text).calls
    assert len(calls) == 1 and identical(calls[0].arguments, grammar_value(text)["arguments"]), text


#: what :func:`near_misses` puts into a text: pieces of JSON as models write it, and nothing (a deletion)
EDITS = ["", ",", ":", "'", '"', "\\", "[", "]", "{", "}", " ", "\n", "True", "None", "nul", "1.", "+", ".5", "e", "x"]


@st.composite
def near_misses(draw):
    """An object or array as models write it with up to two edits: some the grammar reads, some not."""
    value = draw(st.one_of(st.lists(JSON_VALUES, max_size=3), st.dictionaries(TEXT, JSON_VALUES, max_size=3)))
    text = draw(lenient_text(value))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(EDITS)) + text[at + draw(st.integers(0, 1)):]
    return text


@settings(max_examples=200, deadline=None)
@given(near_misses())
def test_what_the_grammar_reads_is_a_run_of_its_tokens(text):
    """``lexes`` says which bracket groups the grammar is not given (a word of prose): never one it reads."""
    read = grammar_value(text) is not _MISSING
    event("the grammar read it" if read else "the grammar stopped")
    assert lexes(text) or not read, text


@pytest.mark.parametrize("text, value", [
    ("{'a': True, 'b': [1., +2, None,],}", {"a": True, "b": [1.0, 2, None]}),
    ('[007, .5, -0, 1e5, "\\u00e9"]', [7, 0.5, 0, 100000.0, "é"]),
    ("{'it\\'s': False}", {"it's": False}),
    ("[\n  {},\t\n]", [{}]),
])
def test_the_grammar_reads_known_model_json(text, value):
    """Known JSON as models write it, read by the grammar (and the reply's reading) as the value it means."""
    assert lexes(text) and identical(grammar_value(text), value), text
    assert identical(get_protocol("native").parse(f'{{"name": "f", "arguments": {text}}}').calls[0].arguments,
                     value if isinstance(value, dict) else {"_raw": value}), text
    assert lexes("{think}") is False


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}"\'\\\nab: ', max_size=50))
def test_value_spans_agrees_with_balanced_spans_on_braces(text):
    assert value_spans(text, openers="{") == balanced_spans(text)


def test_a_marker_inside_a_string_does_not_end_a_stretch():
    until = re.compile("</tool_call>", re.I)
    text = '<tool_call>{"a": "</tool_call>", "b": [1]}</TOOL_CALL> tail'
    reply = Reply(text, DEFAULT_LIMITS, get_protocol("tool_call_tags"))
    values, marker = reply.values(11, len(text), until=until)
    assert [(c.begin, c.end, c.value) for c in values] == [(11, 42, {"a": "</tool_call>", "b": [1]})]
    assert (marker.start(), marker.end()) == (42, 54)
    escaped = Reply('{"a": "\\"</x>"} </x>', DEFAULT_LIMITS, get_protocol("tool_call_tags"))
    assert escaped.values(0, 20, until=re.compile("</x>"))[1].start() == 16


def test_a_value_that_never_closes_ends_at_the_first_marker_inside_it():
    """Once a value has run to the end of the reply, the stretch ends at the first marker (linear time)."""
    until = re.compile("</tool_call>")
    text = '{"a": 1</tool_call>{"b": 2}'
    reply = Reply(text, DEFAULT_LIMITS, get_protocol("tool_call_tags"))
    values, marker = reply.values(0, len(text), until=until)
    assert [(c.begin, c.end, c.value is _MISSING) for c in values] == [(0, 7, True)] and marker.start() == 7
    values, marker = reply.values(marker.end(), len(text), until=until)
    assert [(c.begin, c.end, c.value) for c in values] == [(19, 27, {"b": 2})] and marker is None


def test_relocate_moves_a_failure_to_the_reply_s_lines_and_columns():
    failure = GrammarFailure("g", 2, 3, ("a double-quoted string", "'}'"), "','")
    assert relocate(failure, "abc\ndef", 5).describe() == ("line 3, column 3: expected a double-quoted string or '}', "
                                                           "found ','")
    assert relocate(GrammarFailure("g", 1, 3, (), "'x'"), "abc\ndef", 5).describe() == "line 2, column 4: 'x'"
