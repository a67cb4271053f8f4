"""The model-native formats of the catalogue (rules/native/formats.yaml): every engine label is a
protocol id; calls rendered in each read back as written; a malformed entry is a located error."""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules import ToolCall, get_protocol, load_tools, parse_reply, protocol_ids
from toolform_rules.errors import RuleFileError
from toolform_rules.replies.formats import REGISTRY
from toolform_rules.replies.model_formats import NativeFormat, native_formats
from toolform_rules.replies.model_formats.catalogue import Either, Optional_, read_catalogue

ENGINE_CASES = pathlib.Path(__file__).parents[1] / "data" / "replies" / "engine_cases.jsonl"
NATIVE = protocol_ids("native")


def native_format(name: str) -> NativeFormat:
    protocol = get_protocol(name)
    assert isinstance(protocol, NativeFormat)
    return protocol
TOOLS = load_tools([
    {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"},
        "ratio": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"type": "object", "properties": {"lat": {"type": "number"}, "note": {"type": "string"}}}}}},
    {"name": "search", "parameters": {"type": "object", "properties": {"input": {"type": "string"}},
                                      "required": ["input"]}},
])


def test_every_engine_label_is_a_protocol_id() -> None:
    labels = {json.loads(line)["format"] for line in ENGINE_CASES.read_text(encoding="utf-8").splitlines()}
    assert labels <= set(protocol_ids("all"))
    assert set(protocol_ids("native")) == set(NATIVE) and not set(NATIVE) & set(protocol_ids())
    assert labels - set(NATIVE) == {"json_array", "react"}  # the study's own protocols read those labels


def test_aliases_name_the_same_protocol() -> None:
    assert get_protocol("qwen3") is get_protocol("hermes") is native_format("hermes")
    assert get_protocol("gpt_oss").info.id == "harmony"
    formats = native_formats(get_protocol, frozenset(REGISTRY))
    assert all(get_protocol(name).info.id == protocol.info.id for name, protocol in formats.items())


def _literals(pieces) -> list[str]:
    out = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece.strip())
        elif isinstance(piece, Optional_):
            out += _literals(piece.optional)
        elif isinstance(piece, Either):
            for alternative in piece.either:
                out += _literals(alternative)
    return [literal for literal in out if literal]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=12)


@st.composite
def weather_arguments(draw) -> dict:
    chosen = draw(st.fixed_dictionaries({}, optional={
        "city": TEXT.filter(lambda s: s.strip() == s), "days": st.integers(-10**6, 10**6),
        "metric": st.booleans(), "ratio": st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3)),
        "tags": st.lists(st.sampled_from(["a", "b c", "é"]), max_size=3),
        "where": st.fixed_dictionaries({"lat": st.integers(-90, 90)})}))
    return chosen


def _safe(protocol_id: str, calls: list[ToolCall]) -> bool:
    """Whether no text value holds one of the format's literals (no format here escapes them)."""
    entry = native_format(protocol_id).entry
    literals = _literals(entry.call) + _literals(entry.parameter) + list(entry.quotes) + ["<", ">"]
    texts = json.dumps([c.arguments for c in calls], ensure_ascii=False)
    return not any(literal in texts for literal in literals)


ROUND_TRIP = [p for p in NATIVE if p != "langchain_xml_agent"]  # one free-text input: its own test below


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ROUND_TRIP), st.lists(weather_arguments(), min_size=1, max_size=3))
def test_calls_rendered_in_each_native_format_read_back_as_written(protocol_id: str, arguments: list[dict]) -> None:
    protocol = get_protocol(protocol_id)
    calls = [ToolCall("get_weather", a) for a in arguments[:1 if not protocol.info.parallel else 3]]
    if not _safe(protocol_id, calls):
        return
    text = protocol.render_calls(calls)
    reply = parse_reply(text, TOOLS, protocol_id)
    assert [(c.resolved_name, c.arguments) for c in reply.calls] == [(c.name, c.arguments) for c in calls], \
        (text, reply.note)
    assert reply.note == "" and reply.content == "", text


@pytest.mark.parametrize("protocol_id", ["langchain_xml_agent", "react_json"])
def test_a_free_text_input_is_the_tools_one_text_parameter(protocol_id: str) -> None:
    call = ToolCall("search", {"input": "weather in Paris"})
    reply = parse_reply(get_protocol(protocol_id).render_calls([call]), TOOLS, protocol_id)
    assert [(c.resolved_name, c.arguments) for c in reply.calls] == [("search", {"input": "weather in Paris"})]


@pytest.mark.parametrize("protocol_id", NATIVE)
def test_prose_around_the_calls_is_the_content(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    call = ToolCall("search", {"input": "Paris"}) if protocol_id == "langchain_xml_agent" else \
        ToolCall("get_weather", {"city": "Paris"})
    body = protocol.render_calls([call])
    if protocol_id == "pythonic":  # read from the reply's start
        text, want = body, ""
    else:
        text, want = "Let me check.\n" + body, "Let me check."
    reply = parse_reply(text, TOOLS, protocol_id)
    assert [c.arguments for c in reply.calls] == [call.arguments], (text, reply.note)
    assert reply.content == want
    assert reply.note == "", text


def test_a_line_of_prose_is_no_broken_functionary_call() -> None:
    """Functionary writes a call's name at a line's start: every line of prose begins like one.  A line whose first
    word no JSON follows is prose (no note); one whose JSON breaks is a call that could not be read (a note)."""
    call = 'get_weather\n{"city": "Paris"}'
    reply = parse_reply("Sure — I'll look.\n" + call + "\nLet me know.", TOOLS, "functionary_v32")
    assert [c.arguments for c in reply.calls] == [{"city": "Paris"}]
    assert (reply.note, reply.content) == ("", "Sure — I'll look.\n\nLet me know.")
    broken = parse_reply('get_weather\n{"city": "Paris"', TOOLS, "functionary_v32")
    assert broken.calls == () and "line 1, column 1 could not be read" in broken.note


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NATIVE), st.text(max_size=200))
def test_any_text_is_read_without_an_exception(protocol_id: str, text: str) -> None:
    reply = parse_reply(text, TOOLS, protocol_id)
    assert "internal error" not in reply.note


def test_invalid_json_inside_the_markers_is_no_call_and_a_note() -> None:
    reply = parse_reply('<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>', TOOLS, "hermes")
    assert reply.calls == () and "line 2, column" in reply.note


BAD_ENTRIES = {
    "unknown slot": ("    call: [\"<x>\", {slot: nmae}]\n", "unknown slot 'nmae'", 5),
    "no literal after a value": ("    values: text\n    call: [\"<x>\", {slot: name}, {slot: parameters}, \"</x>\"]\n"
                                 "    parameter: [\"<p=\", {slot: key}, \">\", {slot: value}]\n",
                                 "reads up to the next literal", 7),
    "unknown key": ("    call: [\"<x>\", {slot: call}]\n    separater: \",\"\n", "unknown key 'separater'", 6),
    "a study protocol's id": None,
}


@pytest.mark.parametrize("case", [c for c in BAD_ENTRIES if BAD_ENTRIES[c]])
def test_a_malformed_entry_is_an_error_naming_file_line_and_field(case: str, tmp_path: pathlib.Path) -> None:
    body, words, line = BAD_ENTRIES[case]  # type: ignore[misc]
    path = tmp_path / "formats.yaml"
    path.write_text("formats:\n  - id: mine\n    name: Mine\n    description: Mine.\n" + body, encoding="utf-8")
    with pytest.raises(RuleFileError) as raised:
        read_catalogue(path)
    assert words in str(raised.value) and f"formats.yaml:{line}:" in str(raised.value), str(raised.value)


def test_an_entry_may_not_take_a_study_protocols_id(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "formats.yaml"
    path.write_text("formats:\n  - id: react\n    name: R\n    description: R.\n    call: [\"<x>\", {slot: call}]\n",
                    encoding="utf-8")
    with pytest.raises(RuleFileError, match="one of the study's protocols"):
        read_catalogue(path, frozenset(REGISTRY))


def test_several_call_objects_in_one_hermes_tag_are_all_read() -> None:
    text = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "A"}}\n'
            '{"name": "get_weather", "arguments": {"city": "B"}}\n</tool_call>')
    assert [c.arguments for c in parse_reply(text, TOOLS, "hermes").calls] == [{"city": "A"}, {"city": "B"}]


@pytest.mark.parametrize("protocol_id", ["hermes", "kimi_k2", "mistral_name_args"])
def test_arguments_longer_than_the_first_json_window_are_read_whole(protocol_id: str) -> None:
    call = ToolCall("get_weather", {"city": "x" * 70_000, "tags": ["y" * 5000] * 3})
    reply = parse_reply(get_protocol(protocol_id).render_calls([call]), TOOLS, protocol_id)
    assert [c.arguments for c in reply.calls] == [call.arguments]
    broken = get_protocol(protocol_id).render_calls([call]).replace('"tags"', '"tags" ]', 1)
    assert parse_reply(broken, TOOLS, protocol_id).calls == ()


#: the formats whose arguments are parameters written with a parameter template
PARAMETERS = [protocol_id for protocol_id in NATIVE if native_format(protocol_id).entry.parameter]


def _parameter_pieces(protocol_id: str) -> tuple[str, str, str]:
    """A one-parameter call in ``protocol_id``: what comes before its value, its closing literal, what follows."""
    text = native_format(protocol_id).render_calls([ToolCall("get_weather", {"city": "VALUE"})])
    at = text.index("VALUE")
    pieces = native_format(protocol_id).entry.parameter
    after = pieces[[getattr(piece, "slot", "") for piece in pieces].index("value") + 1]
    close = after if isinstance(after, str) else after.either[0][0]
    return text[:at], close, text[at + len("VALUE"):]


def test_the_parameter_formats_are_the_text_valued_xml_ones() -> None:
    assert len(PARAMETERS) == 8 and "qwen3_coder_xml" in PARAMETERS and "anthropic_legacy_xml" in PARAMETERS
    assert all(get_protocol(protocol_id).info.text_values for protocol_id in PARAMETERS)


@pytest.mark.parametrize("protocol_id", PARAMETERS)
def test_a_cdata_value_may_hold_the_closing_literal(protocol_id: str) -> None:
    """A ``<![CDATA[...]]>`` value is read whole, the parameter's closing literal inside it too; a parameter
    that never closes, or whose closing tag names another key, leaves no call and a note."""
    before, close, after = _parameter_pieces(protocol_id)
    cdata = parse_reply(before + "<![CDATA[a" + close + "b]]>" + after, TOOLS, protocol_id)
    assert [c.arguments for c in cdata.calls] == [{"city": "a" + close + "b"}], cdata.note
    for broken in (before + "<![CDATA[never closed" + after, before + "never closed"):
        reply = parse_reply("Sure.\n" + broken, TOOLS, protocol_id)
        assert reply.calls == () and "could not be read" in reply.note, broken
    good = before + "Paris" + after
    reply = parse_reply("Sure.\n" + before + "x" + close.replace("/", "/y", 1) + after + good, TOOLS, protocol_id)
    assert [c.arguments for c in reply.calls][-1:] == [{"city": "Paris"}], reply.note


@pytest.mark.parametrize("protocol_id", PARAMETERS)
def test_a_value_on_lines_of_its_own_is_trimmed_as_the_entry_says(protocol_id: str) -> None:
    before, _, after = _parameter_pieces(protocol_id)
    reply = parse_reply(before + "\nx\n" + after, TOOLS, protocol_id)
    trim = native_format(protocol_id).entry.value_trim == "newline"
    assert [c.arguments for c in reply.calls] == [{"city": "x" if trim else "\nx\n"}], reply.note