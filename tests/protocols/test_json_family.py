"""The JSON family's shared module: locating JSON in replies, and the lenient fast path against the grammar."""

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
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.json_family import (_MISSING, Reply, Values, lenient_json, read_grammar, relocate,
                                                  value_spans)
from toolform_rules.protocols.values import balanced_spans


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
@given(st.data(), st.dictionaries(TEXT, JSON_VALUES, max_size=4))
def test_lenient_fast_path_and_grammar_agree(data, value):
    text = data.draw(lenient_text(value))
    fast, slow = lenient_json(text), grammar_value(text)
    assert fast is not _MISSING and slow is not _MISSING, text
    assert identical(fast, slow), (text, fast, slow)


def _fast_reading_agrees_with_the_grammar(text):
    """Where the lenient fast path reads an object or array from ``text``, the grammar reads the same."""
    fast = lenient_json(text)
    accepted = fast is not _MISSING and isinstance(fast, (dict, list))
    event("the lenient fast path read an object or array" if accepted else "the lenient fast path declined")
    if accepted:
        slow = grammar_value(text)
        assert slow is not _MISSING, text
        assert identical(fast, slow), (text, fast, slow)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[]{}\"',:\\ \n\t.+-0123456789eEtTrufalsFnNoe_xab", max_size=40))
def test_lenient_fast_path_never_reads_what_the_grammar_rejects(text):
    _fast_reading_agrees_with_the_grammar(text)


#: what :func:`near_misses` puts into a text: pieces of JSON as models write it, and nothing (a deletion)
EDITS = ["", ",", ":", "'", '"', "\\", "[", "]", "{", "}", " ", "\n", "True", "None", "nul", "1.", "+", ".5", "e", "x"]


@st.composite
def near_misses(draw):
    """An object or array as models write it with up to two edits: random characters seldom make an object or
    array (none in a thousand texts above), these are read by the lenient fast path about half the time."""
    value = draw(st.one_of(st.lists(JSON_VALUES, max_size=3), st.dictionaries(TEXT, JSON_VALUES, max_size=3)))
    text = draw(lenient_text(value))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(EDITS)) + text[at + draw(st.integers(0, 1)):]
    return text


@settings(max_examples=300, deadline=None)
@given(near_misses())
def test_lenient_fast_path_never_reads_what_the_grammar_rejects_in_near_misses(text):
    _fast_reading_agrees_with_the_grammar(text)


@pytest.mark.parametrize("text, value", [
    ("{'a': True, 'b': [1., +2, None,],}", {"a": True, "b": [1.0, 2, None]}),
    ('[007, .5, -0, 1e5, "\\u00e9"]', [7, 0.5, 0, 100000.0, "é"]),
    ("{'it\\'s': False}", {"it's": False}),
    ("[\n  {},\t\n]", [{}]),
])
def test_lenient_fast_path_and_grammar_read_known_model_json(text, value):
    """Known replies the lenient fast path reads, so that the agreement above is never vacuous."""
    assert identical(lenient_json(text), value), text
    assert identical(grammar_value(text), value), text


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), TEXT, st.booleans(),
                              st.none()),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
                    max_leaves=10))
def test_strict_json_reads_alike_on_every_path(value):
    text = json.dumps(value, ensure_ascii=False)
    assert identical(lenient_json(text), value), text
    if isinstance(value, (dict, list)):
        assert identical(grammar_value(text), value), text


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


def test_relocate_names_terminals_in_words():
    failure = GrammarFailure("g", 2, 3, ("json_values__double_quoted", "'}'"), "','")
    assert relocate(failure, "abc\ndef", 5).describe() == ("line 3, column 3: expected a double-quoted string or '}', "
                                                           "found ','")
