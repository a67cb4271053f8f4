"""toml_call: round trips, the fast path held to the grammar, replies as models write them, robustness."""

from __future__ import annotations

import datetime
import math
import tomllib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from markup_family_support import (CALL_SETTINGS, NASTY, SAMPLE_DOC, calls_on, json_values, reference_calls, texts,
                                   toolset_for)
from support.compare import equal_json, identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.replies.formats import get_protocol
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats.markup_family.toml_call import by_grammar, read_rendered, toml_key, toml_string, toml_value

PROTOCOL = get_protocol("toml_call")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array"},
    "e": {"type": "boolean"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
TOOLSET = toolset_for(DOCS)


# TOML literals give each value back with its type (3 and 3.0 apart) and keys in order: identical
@CALL_SETTINGS
@given(calls_on(text_values=False, several=False))
def test_round_trip_one_call(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=identical)


@CALL_SETTINGS
@given(calls_on(text_values=False, several=True))
def test_round_trip_several_calls(case) -> None:
    """None has no TOML spelling: it is written ``null``, which the grammar reads (tomllib does not)."""
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=identical)


def _has_null(value) -> bool:
    """Whether ``value`` holds a None anywhere (TOML has no null)."""
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


@CALL_SETTINGS
@given(calls_on(text_values=False), st.sampled_from(["", "Sure:\n", "```toml\n"]),
       st.sampled_from(["", "\nDone.", "\n```"]))
def test_the_fast_path_and_the_grammar_agree_on_rendered_replies(case, before: str, after: str) -> None:
    """The fast path held to the grammar: it reads every rendered reply, as the grammar (and, without nulls,
    tomllib) reads the same TOML."""
    text = before + PROTOCOL.render_calls(case[0]) + after
    fast = read_rendered(text)
    assert fast is not None, text
    body = text[fast[1]:fast[2]]
    grammar, problems, _ = by_grammar(body)
    assert problems == []
    assert identical(grammar, {"call": fast[0]}), (text, grammar, fast[0])
    if not any(_has_null(c.arguments) for c in case[0]):
        assert identical(tomllib.loads(body), grammar), text


# documents in the many spellings TOML allows, to hold the grammar against tomllib

def _literal_ok(text: str) -> bool:
    """Whether ``text`` can be a TOML literal string (no quote, no control character but tab)."""
    return "'" not in text and not any(ch < " " and ch != "\t" or ch == "\x7f" for ch in text)


@st.composite
def toml_scalar(draw, value):
    """A TOML spelling of ``value`` (several for each type)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        style = draw(st.integers(0, 3))
        if style == 1 and value >= 0:
            return hex(value)
        if style == 2 and value >= 0:
            return oct(value)
        if style == 3 and abs(value) >= 1000:
            digits = f"{abs(value):,}".replace(",", "_")
            return ("-" if value < 0 else "") + digits
        return str(value)
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return toml_value(value)
        text = repr(value)
        return text.replace("e", "E") if draw(st.booleans()) and "e" in text else text
    if isinstance(value, str):
        style = draw(st.integers(0, 3))
        if style == 1 and _literal_ok(value):
            return f"'{value}'"
        if style == 2 and "'''" not in value and _literal_ok(value.replace("\n", "")) and not value.endswith("'"):
            return f"'''\n{value}'''"
        if style == 3:
            body = toml_string(value)[1:-1].replace("\\n", "\n")
            if not body.endswith('"') and not body.startswith("\n"):
                return f'"""{body}"""'
        return toml_string(value)
    if value is None:
        raise ValueError("TOML has no null")
    if isinstance(value, list):
        items = [draw(toml_scalar(v)) for v in value]
        separator = draw(st.sampled_from([", ", ",\n  ", " , "]))
        trailing = draw(st.sampled_from(["", ",", ",\n"])) if items else ""
        return "[" + separator.join(items) + trailing + "]"
    pairs = [f"{toml_key(str(k))} = {draw(toml_scalar(v))}" for k, v in value.items()]
    return "{" + ", ".join(pairs) + "}"


def _no_null(value) -> bool:
    """Whether ``value`` holds no None, so that TOML can write it."""
    return not _has_null(value)


@st.composite
def toml_documents(draw):
    """TOML documents: comments, keys in every spelling, a table and an array of tables."""
    data = draw(st.dictionaries(texts(6), json_values(1).filter(_no_null), max_size=4))
    sub = draw(st.dictionaries(st.sampled_from(["x", "y", "z-1", "with space"]), json_values(1).filter(_no_null),
                               max_size=3))
    lines = ["# a comment"] if draw(st.booleans()) else []
    for key, value in data.items():
        lines.append(f"{toml_key(key)} = {draw(toml_scalar(value))}" + (" # note" if draw(st.booleans()) else ""))
    if sub:
        header = draw(st.sampled_from(["table", "a.b", '"q k".c']))
        lines.append(f"[{header}]")
        lines.extend(f"{toml_key(k)} = {draw(toml_scalar(v))}" for k, v in sub.items())
    if draw(st.booleans()):
        lines += ["[[list]]", "n = 1", "", "[[list]]", "n = 2", "m.o = 'x'"]
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


def _without_dates(value) -> bool:
    if isinstance(value, dict):
        return all(_without_dates(v) for v in value.values())
    if isinstance(value, list):
        return all(_without_dates(v) for v in value)
    return not isinstance(value, (datetime.date, datetime.time))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(toml_documents())
def test_tomllib_and_the_grammar_agree(text: str) -> None:
    """Where tomllib (the oracle) reads a document without dates (it makes objects of them; the grammar keeps
    their text), the grammar reads the same document."""
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        expected = None
    assume(expected is not None and _without_dates(expected))
    got, problems, _ = by_grammar(text)
    assert problems == []
    assert identical(got, expected), (text, got, expected)


def test_grammar_reads_dates_multiline_strings_and_bases() -> None:
    text = ('a = 1979-05-27T07:32:00Z\nb = 07:32:00\nc = """\\\n   one \\\n   two"""\nd = 0xff\ne = 1_000\n'
            "f = '''\nraw\\n'''\ng = -inf\nh = [\n  1,\n  2,\n]\n")
    document, problems, _ = by_grammar(text)
    assert problems == []
    # identical: the bases and underscores must give integers, in the document's order
    assert identical(document, {"a": "1979-05-27T07:32:00Z", "b": "07:32:00", "c": "one two", "d": 255, "e": 1000,
                                "f": "raw\\n", "g": -math.inf, "h": [1, 2]}), document


AGREE = [
    '[[call]]\nname = "f"\n\n[call.arguments]\na = 1\nb = "x"\n\n[[call]]\nname = "g"\n\n[call.arguments]\nb = 2\n',
    '```toml\n[[call]]\nname = "f"\n[call.arguments]\na = 1\n```',
    'Here:\n[[call]]\nname = "f"\n[call.arguments]\na = 1\nThanks',
    'Here:\n\n[[call]]\nname = "f"\n[call.arguments]\na = 1\n\nThanks for asking.',
    'name = "f"\n[arguments]\na = 1\n',
    '[call]\nname = "f"\n[call.arguments]\na = 1\n',
    '[[call]]\nname = "f"\n[call.arguments]\na = 1\ne = True\n',
    '[[calls]]\nname = "f"\n[calls.arguments]\na = 1\n',
    '[[call]]\nname = "f"\n',
    '[[call]]\nname = "F"\n[call.arguments]\na = 1\n',
    '[[call]]\nname = "legal_draft_v3"\n\n[call.arguments]\ncounterparty = "Acme, \\"Ltd\\""\nvalue = 1200.5\n'
    'term_months = 12\nauto_renew = true\ncontract_details = {"contract_id": "C-1", "status": "draft"}',
    '[[call]]\nname = "f"\n[call.arguments]\na = 1\nc = {x = 1}\n',
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    ours = read_calls(PROTOCOL, reply, TOOLSET)
    assert ours, reply  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("toml_call", reply, DOCS), equal_json, reply)


@pytest.mark.parametrize("reply, ref, ours", [
    ('[[call]]\nname = "f"\narguments = {a = 1, b = "x"}\n', {}, {"a": 1, "b": "x"}),
    ('[[call]]\nname = "f"\n[call.arguments]\na = 1\n[call.arguments.c]\nx = 1\n', {"a": 1, "x": 1},
     {"a": 1, "c": {"x": 1}}),
    ('[[call]]\nname = "f"\n[call.arguments]\na = 1\nb = """multi\nline"""\n', {"a": 1, "b": '"""multi'},
     {"a": 1, "b": "multi\nline"}),
    ("[[call]]\nname = 'f'\n[call.arguments]\na = 1\nb = 'lit'\n", None, {"a": 1, "b": "lit"}),
    ('[[call]]\ntool = "f"\n[call.args]\na = 1\n', None, {"a": 1}),
    ('[[call]]\nname = "f"\n[call.arguments]\na = 1\nb = 1979-05-27\n', {"a": 1, "b": "1979-05-27"},
     {"a": 1, "b": "1979-05-27"}),
])
def test_divergences_from_the_reference(reply: str, ref, ours) -> None:
    """Divergences, each because the reference's line-by-line reader is not TOML: an inline arguments table
    (it gives no arguments), a sub-table (it flattens its keys into the arguments), multi-line strings (it
    keeps the first line, quotes and all), literal strings and ``tool``/``args`` keys (it finds no call).  A date
    is text in both."""
    assert reference_calls("toml_call", reply, DOCS) == ([] if ref is None else [("f", ref)])
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", ours)], equal_json, reply)


def test_divergence_unclosed_string_stops_the_grammar() -> None:
    """Divergence: the reference keeps ``"unclosed`` (quote and all) as the value; the grammar stops and
    says where."""
    reply = '[[call]]\nname = "f"\n[call.arguments]\na = "unclosed\n'
    assert reference_calls("toml_call", reply, DOCS) == [("f", {"a": '"unclosed'})]
    extraction = assert_total(PROTOCOL, reply, malformed=True)
    assert extraction.notes[0].startswith("the TOML could not be read: line 4, column 5: expected ")


def test_malformed_reply_position_is_in_the_reply() -> None:
    extraction = assert_total(PROTOCOL, 'Sure!\n\n[[call]]\nname = "f"\n[call.arguments]\na = [1, 2\nb = 3\n',
                              malformed=True)
    assert extraction.notes == ("the TOML could not be read: line 7, column 1: expected ',' or ']', found 'b'",)


def test_compliance() -> None:
    assert PROTOCOL.parse('[[call]]\nname = "f"\n\n[call.arguments]\na = 1').compliant
    assert PROTOCOL.parse('```toml\n[[call]]\nname = "f"\n[call.arguments]\na = 1\n```').compliant
    assert not PROTOCOL.parse('Here:\n[[call]]\nname = "f"\n[call.arguments]\na = 1\n').compliant
    twice = PROTOCOL.parse('[[call]]\nname = "f"\n[call.arguments]\na = 1\na = 2\n')
    assert twice.calls[0].arguments == {"a": 2} and not twice.compliant and "given twice" in twice.notes[0]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """No nasty reply holds a [[call]] table with a name: each is answered with no calls and a note."""
    assert_total(PROTOCOL, NASTY[name], malformed=True)


def test_grammar_failure_is_a_grammar_failure() -> None:
    with pytest.raises(GrammarFailure):
        by_grammar("a = ")


def test_title_cased_tables_and_keys() -> None:
    reply = '[[Call]]\nName = "f"\n\n[Call.Arguments]\na = 1\n'
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1})], equal_json, reply)


# ---------------------------------------------------------------------------------------------
# the lenient step: prose on the line of the first table, words after the last value

SAMPLE = toolset_for([SAMPLE_DOC])
TOML_CALL = '[[call]]\nname = "legal_draft_v3"\n\n[call.arguments]\ncounterparty = "Acme"\nvalue = 1000\n'


def test_prose_before_the_first_table_on_its_line_is_skipped() -> None:
    extraction = PROTOCOL.parse("Sure! " + TOML_CALL + "term_months = 12", SAMPLE)
    assert [(c.name, c.arguments) for c in extraction.calls] == [
        ("legal_draft_v3", {"counterparty": "Acme", "value": 1000, "term_months": 12})]
    assert not extraction.compliant and extraction.notes == ()


@pytest.mark.parametrize("last, value", [("601", 601), ("true", True), ('"x y"', "x y"), ("{a = 1}", {"a": 1}),
                                         ("[1, 2]", [1, 2]), ("2.5", 2.5)])
def test_words_after_the_last_value_are_left_with_a_note(last: str, value) -> None:
    extraction = PROTOCOL.parse(TOML_CALL + f"term_months = {last} Done.", SAMPLE)
    assert [(c.name, c.arguments) for c in extraction.calls] == [
        ("legal_draft_v3", {"counterparty": "Acme", "value": 1000, "term_months": value})]
    assert extraction.notes == ("words after the TOML were ignored: 'Done.'",) and not extraction.compliant


def test_a_value_with_a_space_of_its_own_is_not_cut() -> None:
    """A date and a time are one value (what follows is no sentence: it starts with a digit)."""
    extraction = PROTOCOL.parse('name = "f"\nwhen = 1979-05-27 07:32:00')
    assert extraction.calls and extraction.calls[0].name == "f" and extraction.notes == ()


def test_the_fast_path_takes_one_json_value_per_line() -> None:
    """A line whose value would read as two JSON members is not the rendered shape (nor TOML)."""
    assert read_rendered(TOML_CALL + 'term_months = 1, "x": 2') is None
    extraction = PROTOCOL.parse(TOML_CALL + 'term_months = 1, "x": 2')
    assert extraction.calls == () and extraction.notes[0].startswith("the TOML could not be read: line 7, column 16: ")
