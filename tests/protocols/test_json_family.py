"""The JSON family's shared module: locating JSON in replies, and the lenient fast path against the grammar."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from json_family_cases import JSON_VALUES, TEXT, lenient_text, same
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.json_family import (_MISSING, Values, find_outside, lenient_json, read_grammar,
                                                  relocate, value_spans)
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


@settings(max_examples=500, deadline=None)
@given(st.data(), st.dictionaries(TEXT, JSON_VALUES, max_size=4))
def test_lenient_fast_path_and_grammar_agree(data, value):
    text = data.draw(lenient_text(value))
    fast, slow = lenient_json(text), grammar_value(text)
    assert fast is not _MISSING and slow is not _MISSING, text
    assert same(fast, slow), (text, fast, slow)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="[]{}\"',:\\ \n\t.+-0123456789eEtTrufalsFnNoe_xab", max_size=40))
def test_lenient_fast_path_never_reads_what_the_grammar_rejects(text):
    fast = lenient_json(text)
    if fast is not _MISSING and isinstance(fast, (dict, list)):
        slow = grammar_value(text)
        assert slow is not _MISSING, text
        assert same(fast, slow), (text, fast, slow)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), TEXT, st.booleans(),
                              st.none()),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
                    max_leaves=10))
def test_strict_json_reads_alike_on_every_path(value):
    text = json.dumps(value, ensure_ascii=False)
    assert same(lenient_json(text), value)
    if isinstance(value, (dict, list)):
        assert same(grammar_value(text), value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}"\'\\\nab: ', max_size=50))
def test_value_spans_agrees_with_balanced_spans_on_braces(text):
    assert value_spans(text, openers="{") == balanced_spans(text)


def test_find_outside_skips_markers_inside_strings():
    close = re.compile("</tool_call>", re.I)
    text = '<tool_call>{"a": "</tool_call>", "b": [1]}</TOOL_CALL> tail'
    assert find_outside(text, close, 11) == (42, 54)
    assert find_outside('{"a": "\\"</x>"} </x>', re.compile("</x>")) == (16, 20)
    assert find_outside('{"a": 1', close) == (-1, -1)


def test_relocate_names_terminals_in_words():
    failure = GrammarFailure("g", 2, 3, ("json_values__double_quoted", "'}'"), "','")
    assert relocate(failure, "abc\ndef", 5).describe() == ("line 3, column 3: expected a double-quoted string or '}', "
                                                           "found ','")
