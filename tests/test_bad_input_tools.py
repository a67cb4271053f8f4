"""Bad input in tools and in the call loop (issue 28): patterns that do not compile are announced when the tools
load and refused where JSON Schema refuses them; an unknown tool or a value no JSON holds never reaches an
executor, not even in a dry run, and what the loop writes is strict JSON."""

from __future__ import annotations

import json

import pytest

from toolform_rules import CallLoop, load_tools, parse_reply, sample_toolset, validate_arguments
from toolform_rules.loop.clients import StubClient
from toolform_rules.engine.verbs import validate_instance
from toolform_rules.errors import LoaderError
from toolform_rules.loop.call_loop import RESULT_HEADER
from toolform_rules.schema.patterns import bad_patterns, ecma_to_regex, pattern_error


def tool_with(schema: dict, name: str = "lookup") -> list[dict]:
    return [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": schema}}}]


UNCLOSED = tool_with({"code": {"type": "string", "pattern": "(unclosed"}})


# --- 1. a pattern that does not compile -----------------------------------------------------------------------


def test_an_uncompilable_pattern_is_announced_with_the_tool_the_path_and_the_error() -> None:
    tools = load_tools(UNCLOSED)
    (warning,) = tools.warnings
    assert warning.startswith("tool 'lookup' at $[0].function.parameters.properties.code.pattern: "
                              "the pattern '(unclosed' does not compile (missing ), unterminated subpattern")
    assert "skips it" in warning and "jsonschema" in warning


@pytest.mark.parametrize("profile", ["sdk", "study"])
def test_the_default_profiles_still_skip_it(profile: str) -> None:
    report = validate_arguments({"name": "lookup", "arguments": {"code": "anything"}}, load_tools(UNCLOSED),
                                profile=profile)
    assert report.ok


def test_the_jsonschema_profile_refuses_the_tool_naming_it_and_the_path() -> None:
    tools = load_tools(UNCLOSED)
    with pytest.raises(LoaderError) as caught:
        validate_arguments({"name": "lookup", "arguments": {"code": "anything"}}, tools, profile="jsonschema")
    err = caught.value
    assert err.tool == "lookup" and err.path == "#/properties/code/pattern"
    assert "'(unclosed' is no ECMA-262 regular expression (missing )" in str(err)
    # refused again, not half-compiled: the next call meets the same error
    with pytest.raises(LoaderError):
        validate_arguments({"name": "lookup", "arguments": {}}, tools, profile="jsonschema")
    # the other profiles are unaffected
    assert validate_arguments({"name": "lookup", "arguments": {"code": "x"}}, tools).ok


def test_the_jsonschema_profile_refuses_it_in_validate_instance_and_in_a_ref_target() -> None:
    with pytest.raises(LoaderError, match="pattern '\\[' is no ECMA-262"):
        validate_instance("a", {"pattern": "["})
    assert validate_instance("a", {"pattern": "["}, profile="sdk").ok
    tools = load_tools({"name": "f", "parameters": {"type": "object", "properties": {"x": {"$ref": "#/$defs/c"}},
                                                    "$defs": {"c": {"type": "string", "pattern": "a{2,1}"}}}})
    assert "$defs.c.pattern" in tools.warnings[0]
    with pytest.raises(LoaderError) as caught:
        validate_arguments({"name": "f", "arguments": {"x": "aa"}}, tools, profile="jsonschema")
    assert caught.value.path == "#/$defs/c/pattern"


def test_a_pattern_that_compiles_in_one_dialect_only() -> None:
    """``\\p{L}`` and a variable-length look-behind are ECMA-262, not Python: the sdk skips them (and says so),
    the jsonschema profile checks with them."""
    tools = load_tools(tool_with({"word": {"type": "string", "pattern": "^\\p{L}+$"},
                                  "after": {"type": "string", "pattern": "(?<=a+)b"}}))
    assert len(tools.warnings) == 2
    assert all("as Python reads it" in w and "compiles so" in w for w in tools.warnings)
    assert "bad escape \\p" in tools.warnings[0] and "look-behind requires fixed-width" in tools.warnings[1]
    bad = {"name": "lookup", "arguments": {"word": "abc1", "after": "xb"}}
    assert validate_arguments(bad, tools).ok  # sdk: both skipped
    report = validate_arguments(bad, tools, profile="jsonschema")
    assert report.constraint_errors == ["word: 'abc1' does not match pattern '^\\\\p{L}+$'",
                                        "after: 'xb' does not match pattern '(?<=a+)b'"]
    assert validate_arguments({"name": "lookup", "arguments": {"word": "Zürich", "after": "aab"}}, tools,
                              profile="jsonschema").ok


def test_ecma_named_groups_backreferences_and_control_escapes_are_no_schema_error() -> None:
    for source in ("^(?<q>[ab])\\k<q>$", "^\\cC$", "\\u{1F600}"):
        assert pattern_error(source, ecma=True) is None, source
    tools = load_tools(tool_with({"twice": {"type": "string", "pattern": "^(?<q>[ab])\\k<q>$"}}))
    assert "as Python reads it" in tools.warnings[0]  # (Python writes (?P<q>...) and (?P=q))
    assert validate_arguments({"name": "lookup", "arguments": {"twice": "aa"}}, tools, profile="jsonschema").ok
    assert ecma_to_regex("[\\cA]") == "[\\x01]"


def test_an_ecma_backreference_is_checked_under_jsonschema() -> None:
    tools = load_tools(tool_with({"twice": {"type": "string", "pattern": "^(?<q>[ab])\\k<q>$"}}))
    assert not validate_arguments({"name": "lookup", "arguments": {"twice": "ab"}}, tools, profile="jsonschema").ok


def test_a_pattern_valid_in_both_dialects_is_not_announced() -> None:
    tools = load_tools(tool_with({"code": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"}}))
    assert tools.warnings == ()
    assert list(bad_patterns(tools.tools[0], ecma=True)) == []


def test_a_bad_pattern_properties_key_is_announced_and_refused_under_jsonschema() -> None:
    tools = load_tools(tool_with({"tags": {"type": "object", "patternProperties": {"[": {"type": "integer"},
                                                                                   "^x-": {"type": "string"}}}}))
    (warning,) = tools.warnings
    assert warning.startswith("tool 'lookup' at $[0].function.parameters.properties.tags.patternProperties.[: "
                              "the patternProperties key '[' does not compile (unterminated character set")
    assert "the sdk and study profiles skip it" in warning
    call = {"name": "lookup", "arguments": {"tags": {"x-a": "ok"}}}
    assert validate_arguments(call, tools).ok and validate_arguments(call, tools, profile="study").ok
    with pytest.raises(LoaderError) as caught:
        validate_arguments(call, tools, profile="jsonschema")
    assert caught.value.path == "#/properties/tags/patternProperties/["


def test_a_pattern_properties_key_ecma_reads_but_python_does_not() -> None:
    """A key is compiled by the regex engine alone (no ``re``): ``\\p{L}`` works in every profile, unannounced."""
    tools = load_tools(tool_with({"tags": {"type": "object", "patternProperties": {"^\\p{L}+$": {"type": "integer"}},
                                           "additionalProperties": False}}))
    assert tools.warnings == ()
    report = validate_arguments({"name": "lookup", "arguments": {"tags": {"abc": "no"}}}, tools, profile="jsonschema")
    assert report.type_errors == ["tags.abc: expected integer, got str"]


def test_the_command_line_prints_the_warning_and_exits_2_under_jsonschema(tmp_path, capsys) -> None:
    from toolform_rules.cli import main

    path = tmp_path / "tools.json"
    path.write_text(json.dumps(UNCLOSED), encoding="utf-8")
    call = '{"name": "lookup", "arguments": {"code": "x"}}'
    assert main(["validate", "--tools", str(path), call]) == 0
    err = capsys.readouterr().err
    assert "toolform-rules: warning: tool 'lookup' at $[0].function.parameters.properties.code.pattern" in err
    assert main(["validate", "--tools", str(path), "--profile", "jsonschema", call]) == 2
    assert "is no ECMA-262 regular expression" in capsys.readouterr().err


# --- 2. the call loop: unknown tools and values no JSON holds ----------------------------------------------------

UNKNOWN = '{"name": "send_payment", "arguments": {"to": "Mallory"}}'
VALID = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12}}'


def feedback_of(model: StubClient, request: int) -> list[dict]:
    header, *lines = model.requests[request][-1]["content"].split("\n")
    assert header == RESULT_HEADER
    return [json.loads(line) for line in lines]


def test_a_dry_run_feeds_an_unknown_tool_back_and_goes_on() -> None:
    model = StubClient([UNKNOWN, "I cannot pay anyone."])
    result = CallLoop(model, sample_toolset()).run("Pay Mallory.")
    assert result.stopped == "no_call" and result.final_text == "I cannot pay anyone."
    (line,) = feedback_of(model, 1)
    assert line["error"] == "invalid call" and line["tool"] == "send_payment"
    assert line["validation"]["unknown_tool"] is True and line["validation"]["n_errors"] == 1


def test_a_dry_run_ends_at_the_first_call_that_would_run() -> None:
    model = StubClient([UNKNOWN, VALID, "never asked"])
    result = CallLoop(model, sample_toolset()).run("Draft.")
    assert result.stopped == "dry_run" and len(model.requests) == 2 and result.calls == ()
    assert result.steps[-1].parsed.calls[0].valid


def test_a_dry_run_feeds_an_invalid_call_back_too() -> None:
    invalid = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": 12}}'
    model = StubClient([invalid, "Sorry."])
    result = CallLoop(model, sample_toolset()).run("Draft.")
    assert result.stopped == "no_call"
    assert feedback_of(model, 1)[0]["validation"]["constraint_errors"] == ["value: -5 < minimum 0"]


@pytest.mark.parametrize("on_invalid, stopped", [("stop", "invalid_call"), ("execute", "dry_run")])
def test_a_dry_run_under_stop_and_execute(on_invalid: str, stopped: str) -> None:
    """``stop`` stops at the invalid call; ``execute`` would run the (known) tool's invalid call: the dry run
    ends there.  An unknown tool never runs: it is fed back."""
    invalid = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": 12}}'
    assert CallLoop(StubClient([invalid]), sample_toolset(), on_invalid=on_invalid).run("x").stopped == stopped
    model = StubClient([UNKNOWN, "Sorry."])
    result = CallLoop(model, sample_toolset(), on_invalid=on_invalid).run("x")
    assert result.stopped == ("invalid_call" if on_invalid == "stop" else "no_call")


WEATHER_REPLIES = {
    "lone surrogate": '{"name": "get_weather", "arguments": {"city": "\\ud800"}}',
    "lone surrogate in a key": '{"name": "get_weather", "arguments": {"city": "Oslo", "\\udc00": 1}}',
    "NaN": '{"name": "get_weather", "arguments": {"city": "Paris", "days": NaN}}',
    "Infinity": '{"name": "get_weather", "arguments": {"city": "Paris", "days": -Infinity}}',
}


@pytest.mark.parametrize("on_invalid", ["feedback", "execute"])
@pytest.mark.parametrize("kind", sorted(WEATHER_REPLIES))
def test_a_value_no_json_holds_is_fed_back_and_never_reaches_an_executor(kind: str, on_invalid: str) -> None:
    seen: list[dict] = []

    def get_weather(**arguments):
        seen.append(arguments)
        return f"{arguments['city']}: sunny"

    tools = load_tools("docs/examples/my_tools.py")
    model = StubClient([WEATHER_REPLIES[kind], '{"name": "get_weather", "arguments": {"city": "Oslo"}}', "Sunny."])
    result = CallLoop(model, tools, executors={"get_weather": get_weather}, on_invalid=on_invalid).run("Weather?")
    assert result.stopped == "no_call" and result.error is None
    assert seen == [{"city": "Oslo"}]  # only the valid retry ran
    (line,) = feedback_of(model, 1)
    assert line["error"] == "invalid call" and line["validation"]["ok"] is False
    for request in model.requests:  # what the model was sent is UTF-8 text
        for message in request:
            message["content"].encode("utf-8")
    out = result.to_dict()
    json.dumps(out, allow_nan=False).encode("utf-8")
    json.loads(json.dumps(out, allow_nan=False))


def test_the_result_holds_what_the_model_wrote_as_strict_json() -> None:
    tools = load_tools("docs/examples/my_tools.py")
    model = StubClient([WEATHER_REPLIES["NaN"], "Sorry."])
    out = CallLoop(model, tools).run("Weather?").to_dict()
    assert out["stopped"] == "no_call"
    assert out["steps"][0]["parsed"]["calls"][0]["arguments"]["days"] == "NaN"  # named, not a bare NaN


def test_a_result_no_json_holds_is_sent_back_as_strict_json() -> None:
    def weird(**_):
        return {"t": float("inf"), "s": "a\ud800b"}

    model = StubClient([VALID, "Done."])
    result = CallLoop(model, sample_toolset(), executors={"legal_draft_v3": weird}).run("Draft.")
    assert result.stopped == "no_call"
    text = model.requests[1][-1]["content"]
    text.encode("utf-8")
    assert "\\ud800" in text and '"Infinity"' in text
    assert feedback_of(model, 1) == [{"ok": True, "result": {"t": "Infinity", "s": "a\ud800b"}}]
    json.dumps(result.to_dict(), allow_nan=False).encode("utf-8")


def test_the_call_command_feeds_an_unknown_tool_back_in_a_dry_run(capsys) -> None:
    """``toolform-rules call`` with the sample tool (no executor): the unknown tool is fed back, not a dry run."""
    from support.wire_server import OpenAIReply, serve

    from toolform_rules.cli import main

    with serve([OpenAIReply(UNKNOWN), OpenAIReply("I cannot pay.")]) as server:
        code = main(["call", "Pay Mallory.", "--base-url", server.base_url + "/v1", "--model", "m", "--json",
                     "--timeout", "10"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["stopped"] == "no_call" and result["final_text"] == "I cannot pay."
    assert '"unknown_tool": true' in result["steps"][0]["feedback"][0]


def test_parse_reply_reads_the_bad_values_as_type_errors() -> None:
    tools = load_tools("docs/examples/my_tools.py")
    for kind in ("lone surrogate", "NaN"):
        (call,) = parse_reply(WEATHER_REPLIES[kind], tools, "json_object").calls
        assert not call.valid and call.validation["type_errors"], kind
