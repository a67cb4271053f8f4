"""The text family's skeleton (text_family.TextProtocol): what every text format reads alike.

* prose after a value on the call's line: a value the schema types as an integer, number,
  boolean or enum ends where a sentence starts (``601 Done.`` is 601, with a note); text is
  never cut, so a string that ends in words reads back whole;
* a prose lead-in on the call's line (``Sure! tool_name|a=1``) is skipped when the call names a
  tool of the toolset; otherwise the line is prose and nothing is noted;
* the terminals the fast readers write out are the grammars' own, and the URL decoder is
  ``unquote_plus``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.compare import equal_json
from support.protocol_checks import render

from toolform_rules import ToolCall, load_tools, parse_reply
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.text_family import cli_call, csv_call, pipe_call, symbolic_call, table_call, shared as text_family, url_call
from toolform_rules.replies.formats.text_family.shared import split_trailing_prose
from toolform_rules.schema.ir import Schema

FORMATS = ["cli_call", "csv_call", "key_value_call", "pipe_call", "symbolic_call", "table_call", "url_call"]
TOOLS = load_tools([{"name": "set_level", "parameters": {"type": "object", "properties": {
    "title": {"type": "string"}, "count": {"type": "integer"}, "ratio": {"type": "number"},
    "on": {"type": "boolean"}, "mode": {"type": "string", "enum": ["fast", "very slow"]}}}}])
TYPED_LAST = [("count", 601), ("ratio", 2.5), ("on", True), ("on", False), ("mode", "very slow"), ("mode", "fast")]


def reply(protocol_id: str, arguments: dict[str, Any]) -> str:
    return render(get_protocol(protocol_id), [ToolCall("set_level", arguments)], TOOLS)


def read(protocol_id: str, text: str) -> tuple[list[dict[str, Any]], str]:
    """The accepted calls' arguments and the reply's notes, as parse_reply gives them."""
    parsed = parse_reply(text, TOOLS, protocol_id)
    return [c.arguments for c in (*parsed.calls, *parsed.rejected)], parsed.note


# ---------------------------------------------------------------------------------------------
# prose after the last value, on its line


@pytest.mark.parametrize(("schema", "raw", "want"), [
    (Schema(types=("integer",)), "601 Done.", ("601", "Done.")),
    (Schema(types=("integer",)), "-3  Thanks, that is all.", ("-3", "Thanks, that is all.")),
    (Schema(types=("number",)), "2.5e3 Done.", ("2.5e3", "Done.")),
    (Schema(types=("boolean",)), "False Let me know.", ("False", "Let me know.")),
    (Schema(types=("integer", "null")), "7 ok", ("7", "ok")),
    (Schema(types=("string",), enum=("fast", "very slow")), "very slow Done.", ("very slow", "Done.")),
    (Schema(types=("string",), enum=("a", "a b")), "a b c", ("a b", "c")),
    (Schema(types=("string",), enum=("fast", "very slow")), "very slow", ("very slow", "")),
    (Schema(types=("integer",), enum=(1, 2)), "2 Done.", ("2", "Done.")),
])
def test_a_typed_value_ends_where_prose_starts(schema: Schema, raw: str, want: tuple[str, str]) -> None:
    assert split_trailing_prose(raw, schema) == want


@pytest.mark.parametrize(("schema", "raw"), [
    (Schema(types=("string",)), "Acme Done."),  # text holds anything
    (Schema(types=("string", "integer")), "12 Done."),  # a string may be meant
    (Schema(types=("integer",)), "six Done."),  # not a literal of the type: kept, for validation to report
    (Schema(types=("integer",)), "601 (about)"),  # not a sentence after it
    (Schema(types=("number",)), "2,5 Done."),
    (Schema(types=("boolean",)), "yes Done."),  # typing does not read "yes"
    (Schema(types=("string",), enum=("fast", "very slow")), "slow Done."),
    (Schema(types=()), "601 Done."),  # no type: nothing ends the value
    (None, "601 Done."),
])
def test_other_values_are_kept_whole(schema: Schema | None, raw: str) -> None:
    assert split_trailing_prose(raw, schema) == (raw, "")


@given(text=st.text(), words=st.text(alphabet="abc .!", min_size=1))
def test_text_is_never_cut(text: str, words: str) -> None:
    value = f"{text} {words}"
    assert split_trailing_prose(value, Schema(types=("string",))) == (value, "")


@pytest.mark.parametrize("protocol_id", FORMATS)
@pytest.mark.parametrize(("key", "value"), TYPED_LAST)
def test_done_after_a_typed_last_value_on_its_line(protocol_id: str, key: str, value: Any) -> None:
    """``... 601 Done.``: the value the call wrote, and a note that the rest is prose (in cli_call a word
    after the last option's value is left out; in table_call it is a cell past the table's columns)."""
    arguments = {"title": "Acme Ltd", key: value}
    text = reply(protocol_id, arguments) + " Done."
    calls, note = read(protocol_id, text)
    assert len(calls) == 1 and equal_json(calls[0], arguments), (text, calls, note)
    if protocol_id == "cli_call":
        assert "'Done.'" in note and "left out" in note, note
    elif protocol_id == "table_call":
        assert "the cells past the last column are left out" in note, note
    else:
        assert "the text after the value ('Done.') is prose" in note, note
    assert not get_protocol(protocol_id).parse(text, TOOLS).compliant


@pytest.mark.parametrize("protocol_id", FORMATS)
def test_a_string_that_ends_in_words_reads_back_whole(protocol_id: str) -> None:
    arguments = {"count": 3, "title": "Acme Done. Thanks"}
    calls, note = read(protocol_id, reply(protocol_id, arguments))
    assert calls == [arguments] and "prose" not in note, (calls, note)


@pytest.mark.parametrize("protocol_id", ["csv_call", "key_value_call", "pipe_call", "symbolic_call", "url_call"])
def test_a_string_last_value_with_words_after_it_is_not_cut(protocol_id: str) -> None:
    """Prose after a text value cannot be told from the value: kept whole where the format lets a
    value hold spaces; url_call's values cannot hold a raw space, so the grammar says where it stops."""
    calls, note = read(protocol_id, reply(protocol_id, {"title": "Acme"}) + " Done.")
    if protocol_id == "url_call":
        assert calls == [] and "could not be read" in note, (calls, note)
    else:
        assert calls == [{"title": "Acme Done."}], (calls, note)


@pytest.mark.parametrize("protocol_id", ["csv_call", "key_value_call", "pipe_call", "symbolic_call", "url_call"])
def test_a_value_that_is_no_literal_of_its_type_is_kept_for_validation(protocol_id: str) -> None:
    text = reply(protocol_id, {"title": "A", "count": 601}).replace("601", "six") + " Done."
    parsed = parse_reply(text, TOOLS, protocol_id)
    if protocol_id == "url_call":
        assert parsed.calls == () and "could not be read" in parsed.note
    else:
        (call,) = parsed.calls + parsed.rejected
        assert call.arguments["count"] == "six Done." and call.validation["type_errors"], parsed


@settings(max_examples=60, deadline=None)
@given(protocol_id=st.sampled_from(FORMATS), number=st.integers(-10**9, 10**9),
       sentence=st.sampled_from(["Done.", "Let me know!", "That is all, thanks.", "OK"]))
def test_any_integer_then_a_sentence(protocol_id: str, number: int, sentence: str) -> None:
    if protocol_id == "csv_call" and "," in sentence:
        return  # a comma after a row starts another field: the sentence's end is then the last value
    arguments = {"title": "T", "count": number}
    calls, _ = read(protocol_id, f"{reply(protocol_id, arguments)} {sentence}")
    assert len(calls) == 1 and calls[0]["count"] == number, (protocol_id, calls)


@settings(max_examples=60, deadline=None)
@given(protocol_id=st.sampled_from(FORMATS),
       title=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
       words=st.sampled_from([" Done.", " 601 Done.", " true Thanks", " fast ok"]))
def test_a_string_round_trips_whatever_words_end_it(protocol_id: str, title: str, words: str) -> None:
    arguments = {"count": 1, "title": title + words}
    calls, _ = read(protocol_id, reply(protocol_id, arguments))
    assert calls == [arguments], (protocol_id, calls)


def test_a_boolean_flag_before_prose_is_true_in_cli_call() -> None:
    """``--on Done.``: a boolean option takes no word that is no boolean; the flag is true and the
    sentence is left out (noted)."""
    calls, note = read("cli_call", "set_level --title A --on Done.")
    assert calls == [{"title": "A", "on": True}] and "left out: 'Done.'" in note
    assert read("cli_call", "set_level --title A --on no")[0] == [{"title": "A", "on": "no"}]  # a word it may take
    assert read("cli_call", "set_level --on Done. --title A")[0] == [{"on": "Done.", "title": "A"}]  # not the last


# ---------------------------------------------------------------------------------------------
# a prose lead-in on the call's line


@pytest.mark.parametrize("protocol_id", FORMATS)
@pytest.mark.parametrize("lead", ["Sure! ", "Here is the call: ", "Okay. I will draft it now:  "])
def test_a_prose_lead_in_on_the_calls_line_is_skipped(protocol_id: str, lead: str) -> None:
    arguments = {"title": "Acme Ltd", "count": 12}
    text = lead + reply(protocol_id, arguments)
    parsed = parse_reply(text, TOOLS, protocol_id)
    assert [c.arguments for c in parsed.calls] == [arguments], parsed
    extraction = get_protocol(protocol_id).parse(text, TOOLS)
    assert extraction.calls[0].span[0] == len(lead) and not extraction.notes and not extraction.compliant, extraction


@pytest.mark.parametrize("protocol_id", FORMATS)
def test_a_call_after_a_lead_in_names_a_tool_of_the_toolset(protocol_id: str) -> None:
    """An unknown tool after ``Note:`` is prose that looks like a call: nothing is read, nothing noted."""
    text = "Note: " + reply(protocol_id, {"title": "Acme", "count": 1}).replace("set_level", "other_tool").replace(
        "set-level", "other-tool")
    extraction = get_protocol(protocol_id).parse(text, TOOLS)
    assert extraction.calls == () and extraction.notes == (), extraction
    assert get_protocol(protocol_id).parse(text, None).calls == ()  # without a toolset no tool is known


@pytest.mark.parametrize("protocol_id", FORMATS)
def test_a_lead_in_call_must_be_in_the_plain_form(protocol_id: str) -> None:
    """A malformed call after a lead-in is prose (no grammar note): only a line that starts a call is
    the grammar's to report on."""
    broken = {"cli_call": "set_level --title 'A", "csv_call": 'set_level,"A', "key_value_call": "TOOL: set_level\rx",
              "pipe_call": "set_level|=3", "symbolic_call": "set_level ★title^A", "table_call": "| tool |\n| x |",
              "url_call": "POST /set-level?title=A B"}[protocol_id]
    extraction = get_protocol(protocol_id).parse("Sure! " + broken, TOOLS)
    assert extraction.calls == () and extraction.notes == (), extraction


def test_the_first_few_marks_of_a_line_are_tried() -> None:
    pipe = get_protocol("pipe_call")
    assert [c.name for c in pipe.parse("Hi. So: a. Then! set_level|count=1", TOOLS).calls] == ["set_level"]
    late = "x. " * 9 + "set_level|count=1"
    assert pipe.parse(late, TOOLS).calls == ()


# ---------------------------------------------------------------------------------------------
# compliance: blank lines and code fences around the calls are not prose


@pytest.mark.parametrize("protocol_id", FORMATS)
@pytest.mark.parametrize("fence", ["```", "```tool-code", "~~~text", "```c++"])
def test_a_fenced_reply_is_compliant(protocol_id: str, fence: str) -> None:
    text = f"\n{fence}\n{reply(protocol_id, {'title': 'A', 'count': 1})}\n```\n\n"
    extraction = get_protocol(protocol_id).parse(text, TOOLS)
    assert len(extraction.calls) == 1 and extraction.compliant, extraction


# ---------------------------------------------------------------------------------------------
# the written-out terminals are the grammars'

TERMINALS = [
    ("cli_call", "NAME", text_family.NAME, "aZ_0.-é -$\n"),
    ("cli_call", "OPTION", cli_call.OPTION, "-a_0.-é =\n"),
    ("cli_call", "SPACE", cli_call.SPACE, " \t\f\va\n"),
    ("cli_call", "CONTINUATION", cli_call.CONTINUATION, "\\\r\n a"),
    ("csv_call", "NAME", text_family.NAME, "aZ_0.-é ,\n"),
    ("csv_call", "QUOTED", csv_call.QUOTED, '"a,\n '),
    ("csv_call", "BARE", csv_call.BARE, 'a ,"{[\t\r\n'),
    ("pipe_call", "NAME", text_family.NAME, "aZ_0.-é |\n"),
    ("pipe_call", "KEY", pipe_call.KEY, "a |=\\\t\r\n\x0b"),
    ("symbolic_call", "NAME", text_family.NAME, "aZ_0.-é ★\n"),
    ("symbolic_call", "KEY", symbolic_call.KEY, "a ★§#%¿≡¤\\\t\n"),
    ("table_call", "SEPARATOR", table_call.SEPARATOR, "|-: \ta\n\r"),
    ("url_call", "METHOD", url_call.METHOD, "GETpostPUTx.- "),
    ("url_call", "ORIGIN", url_call.ORIGIN, "https:/a?# "),
    ("url_call", "SEGMENT", url_call.SEGMENT, "a/?#& %"),
    ("url_call", "QKEY", url_call.QKEY, "a&=# %["),
    ("url_call", "FRAGMENT", url_call.FRAGMENT, "#a \n"),
    ("url_call", "VERSION", url_call.VERSION, "HTtp/1.2 "),
]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_written_terminals_match_what_the_grammar_terminals_match(data) -> None:
    grammar, name, written, alphabet = data.draw(st.sampled_from(TERMINALS))
    theirs, ours = re.compile(text_family.terminal_regex(grammar, name)), re.compile(written)
    text = data.draw(st.text(alphabet, max_size=16))
    for pos in range(len(text) + 1):
        slow, quick = theirs.match(text, pos), ours.match(text, pos)
        assert (slow and slow.end()) == (quick and quick.end()), (grammar, name, text, pos)


@given(st.text(alphabet="%+aZ0f9E4B8ADC3é中 \\xu", max_size=16))
def test_url_decoding_is_unquote_plus(text: str) -> None:
    assert url_call.decode(text) == unquote_plus(text, errors="replace")


# ---------------------------------------------------------------------------------------------
# the grammar's budget


def test_a_candidate_too_long_for_the_grammar_is_noted_where_it_stands() -> None:
    text = "Intro.\n\n" + "set_level|" + "a=b|" * 5000 + "\\"
    extraction = get_protocol("pipe_call").parse(text, TOOLS)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert note.startswith("pipe_call: the call on line 3 could not be read: line 3, column 1: a candidate of ")
    assert "Limits.reply_grammar_chars" in note
