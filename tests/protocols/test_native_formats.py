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
from toolform_rules.protocols import REGISTRY
from toolform_rules.protocols.native_formats import NativeFormat, native_formats
from toolform_rules.protocols.native_formats.catalogue import Either, Optional_, read_catalogue

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


# --- compiled reading: the same answers as the step interpreter ---------------------------------


def _interpreted(protocol_id: str) -> NativeFormat:
    return NativeFormat(native_format(protocol_id).entry, get_protocol, compiled=False)


def _both(protocol_id: str, text: str) -> None:
    compiled, interpreted = native_format(protocol_id), _interpreted(protocol_id)
    assert compiled.parse(text, TOOLS) == interpreted.parse(text, TOOLS), text
    assert compiled.call_starts(text, 0) == interpreted.call_starts(text, 0), text


def test_the_compiled_reading_of_every_corpus_reply_is_the_interpreters() -> None:
    """Runs of literals and words matched by one pattern, parameters by the flat reader: the same calls, the
    same notes (where a call stopped and what was expected), the same content, on all 242 engine replies read
    in every native format (most of them, then, written in another one)."""
    texts = [json.loads(line)["reply"] for line in ENGINE_CASES.read_text(encoding="utf-8").splitlines()]
    for protocol_id in NATIVE:
        for text in texts:
            _both(protocol_id, text)


#: what is put into a rendered reply to make it go wrong: white space of every kind (the interpreter skips
#: Unicode white space only after an ASCII one), a tag's pieces, quotes, brackets
DAMAGE = st.sampled_from([" ", "\n", "\t", "\xa0", "\u2003", " \xa0", "<", ">", "</", "=", '"', "'", "{", "}",
                          "[", "]", "x", "\n\n", "<parameter=", "</parameter>", "name=\""])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NATIVE), st.lists(weather_arguments(), min_size=1, max_size=2),
       st.lists(st.tuples(st.floats(0, 1), DAMAGE, st.booleans()), max_size=3), st.floats(0, 1))
def test_the_compiled_reading_of_damaged_replies_is_the_interpreters(protocol_id, arguments, damage, cut) -> None:
    """Replies rendered in each format, then changed where it matters: characters put in or taken out at random
    places (white space of every kind among them), cut short: compiled and interpreted readings agree."""
    text = native_format(protocol_id).render_calls([ToolCall("get_weather", a) for a in arguments])
    for place, piece, insert in damage:
        at = int(place * len(text))
        text = text[:at] + piece + text[at:] if insert else text[:at] + text[at + len(piece):]
    _both(protocol_id, "Sure.\n" + text)
    _both(protocol_id, text[:int(cut * len(text))])


@pytest.mark.parametrize("protocol_id", NATIVE)
def test_the_compiled_reading_agrees_with_a_change_at_every_place(protocol_id: str) -> None:
    """Every place of a rendered reply, with a character of white space put in (an ASCII one, one the
    interpreter skips only after an ASCII one, both) or the character there taken out."""
    text = native_format(protocol_id).render_calls([ToolCall("get_weather", {"city": "Paris", "days": 3}),
                                                    ToolCall("search", {"input": "x"})])
    for at in range(len(text) + 1):
        for changed in (text[:at] + "\xa0" + text[at:], text[:at] + " \xa0" + text[at:], text[:at] + text[at + 1:]):
            _both(protocol_id, changed)


#: the formats whose parameters the flat reader reads (one pattern for a whole parameter, else steps)
FLAT = [protocol_id for protocol_id in NATIVE if native_format(protocol_id)._flat_parameter is not None]


def _parameter_pieces(protocol_id: str) -> tuple[str, str, str]:
    """A one-parameter call in ``protocol_id``: what comes before its value, its closing literal, what follows."""
    text = native_format(protocol_id).render_calls([ToolCall("get_weather", {"city": "VALUE"})])
    at = text.index("VALUE")
    close = native_format(protocol_id)._flat_parameter[2][0]
    return text[:at], close, text[at + len("VALUE"):]


def test_the_flat_formats_are_the_text_valued_xml_ones() -> None:
    assert len(FLAT) >= 8 and "qwen3_coder_xml" in FLAT and "anthropic_legacy_xml" in FLAT


@pytest.mark.parametrize("protocol_id", FLAT)
def test_parameters_the_one_pattern_does_not_read_are_read_by_the_steps_alike(protocol_id: str) -> None:
    """Where the one pattern for a parameter fails (a CDATA value holding the closing literal, a closing tag that
    names another key, a value that never closes) the steps read it, and every later parameter of the reply:
    the same calls, notes and content as the step interpreter; and a value on lines of its own is trimmed alike."""
    before, close, after = _parameter_pieces(protocol_id)
    good = before + "Paris" + after
    cases = [before + "<![CDATA[a" + close + "b]]>" + after, before + "<![CDATA[x]]>" + after + good,
             before + "x" + close.replace("/", "/y", 1) + after + good, before + "never closed" + good,
             good + before + "no end", before + "\nx\n" + after + good]
    for text in cases:
        _both(protocol_id, "Sure.\n" + text)
    cdata = parse_reply(before + "<![CDATA[a" + close + "b]]>" + after, TOOLS, protocol_id)
    assert [c.arguments for c in cdata.calls] == [{"city": "a" + close + "b"}], cdata.note
