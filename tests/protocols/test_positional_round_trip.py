"""Positional formats (csv_call) keep each value in its place when optionals are left out.

An omitted optional is rendered as an empty field and an empty field is read as absent, so a
call that omits any subset of its optional arguments reads back as written (issue 10, item 6).
"""

from __future__ import annotations

from hypothesis import given, strategies as st

from toolform_rules import ToolCall, get_protocol, load_tools, parse_reply

TOOLS = load_tools([{"name": "add_note", "parameters": {"type": "object", "properties": {
    "title": {"type": "string"}, "body": {"type": "string"}, "tags": {"type": "string"},
    "weight": {"type": "number"}, "pinned": {"type": "boolean"}, "count": {"type": "integer"}},
    "required": ["title"]}}])
OPTIONAL = {"body": st.text(min_size=1, max_size=8).filter(lambda s: s.strip() == s and s.strip()),
            "tags": st.sampled_from(["a", "b,c", 'say "hi"', "{x}"]),
            "weight": st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3)),
            "pinned": st.booleans(), "count": st.integers(-1000, 1000)}


@given(title=st.sampled_from(["Title", "A, B", " lead"]),
       chosen=st.fixed_dictionaries({}, optional=OPTIONAL))
def test_any_subset_of_optionals_round_trips(title, chosen):
    call = ToolCall("add_note", {"title": title, **chosen})
    text = get_protocol("csv_call").render_calls([call], tools=TOOLS)  # type: ignore[call-arg]
    reply = parse_reply(text, TOOLS, "csv_call")
    assert [c.arguments for c in reply.calls] == [call.arguments], text


def test_the_gap_of_an_omitted_optional_is_an_empty_field():
    call = ToolCall("add_note", {"title": "Title", "body": "Body", "weight": 2.5})
    text = get_protocol("csv_call").render_calls([call], tools=TOOLS)  # type: ignore[call-arg]
    assert text == "add_note,Title,Body,,2.5"
    assert parse_reply(text, TOOLS, "csv_call").calls[0].arguments == {"title": "Title", "body": "Body", "weight": 2.5}


def test_a_prose_line_before_the_row_is_not_a_call():
    """"Sure, here is the call." has the shape of a row (a word, a comma); a name no tool answers to
    with a space after its comma is prose. A row naming an unknown tool is still read (hallucinated)."""
    reply = parse_reply("Sure, here is the call.\nadd_note,Title,Body", TOOLS, "csv_call")
    assert [c.arguments for c in reply.calls] == [{"title": "Title", "body": "Body"}] and not reply.rejected
    unknown = parse_reply("add_nota,Title,Body", TOOLS, "csv_call")
    assert unknown.hallucinated == ("add_nota",)


def test_prose_after_a_typed_last_value_ends_it_with_a_note():
    """An integer, number or boolean cannot hold a space: "7 Done." is 7 and a sentence."""
    reply = parse_reply("add_note,Title,,,,,7 Done.", TOOLS, "csv_call")
    assert reply.calls[0].arguments == {"title": "Title", "count": 7}
    assert "the text after the value ('Done.') is prose" in reply.note
    # a string may hold a sentence: kept whole
    assert parse_reply("add_note,Title Done.", TOOLS, "csv_call").calls[0].arguments == {"title": "Title Done."}
    # not a literal of the type: left as written, for validation to report
    call = parse_reply("add_note,T,,,,,seven Done.", TOOLS, "csv_call").calls[0]
    assert call.arguments["count"] == "seven Done." and call.validation["type_errors"] == [
        "count: expected integer, got str"]
