"""The call loop over the wire: a loopback server speaking OpenAI's and Anthropic's formats, the official SDKs
pointed at it, text and native modes.  The seed's three on_invalid behaviours, the unknown-tool rule, the
exact feedback payload, a policy refusal, a failing executor, HTTP 500, a timeout, native round trips for both
providers, and a repair: invalid call -> feedback -> valid call -> executed -> final answer."""

from __future__ import annotations

import asyncio
import json

import pytest

from support.wire_server import (AnthropicReply, Delay, HttpError, OpenAIReply, ToolCall, closed_port_url, serve,
                                 text_block, tool_use_block)
from test_clients import anthropic_chat, openai_chat
from toolform_rules import CallLoop, load_policy, sample_toolset
from toolform_rules.cli import main
from toolform_rules.loop.call_loop import RESULT_HEADER

pytest.importorskip("openai")
pytest.importorskip("anthropic")

VALID_ARGUMENTS = {"counterparty": "Acme", "value": 10, "term_months": 12}
VALID = json.dumps({"name": "legal_draft_v3", "arguments": VALID_ARGUMENTS})
INVALID = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten"}}'
INVALID_VALIDATION = {"ok": False, "unknown_tool": False, "missing_required": [], "unknown_args": [],
                      "type_errors": ["term_months: expected integer, got str"], "enum_errors": [],
                      "constraint_errors": ["value: -5 < minimum 0"], "n_errors": 2}
DRAFTED = {"contract_id": "C-1"}
PROVIDERS = ["openai", "anthropic"]


def said(provider: str, text: str):
    """A text reply in ``provider``'s wire format."""
    return OpenAIReply(text) if provider == "openai" else AnthropicReply((text_block(text),))


def client_for(provider: str, base_url: str, **options):
    return (openai_chat if provider == "openai" else anthropic_chat)(base_url, **options)


def loop_for(provider: str, base_url: str, *, client_options=None, **options) -> CallLoop:
    options.setdefault("executors", {"legal_draft_v3": lambda **arguments: DRAFTED})
    return CallLoop(client_for(provider, base_url, **(client_options or {})), sample_toolset(), **options)


def last_user_text(provider: str, body: dict) -> str:
    """The text of the last message of a request: the loop's feedback."""
    message = body["messages"][-1]
    assert message["role"] == "user"
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block["text"] for block in content if block["type"] == "text")


def feedback(provider: str, body: dict) -> list[dict]:
    header, *lines = last_user_text(provider, body).split("\n")
    assert header == RESULT_HEADER
    return [json.loads(line) for line in lines]


# --- text protocols, both providers --------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_repair_invalid_feedback_valid_executed_final_answer(provider: str) -> None:
    with serve([said(provider, INVALID), said(provider, VALID), said(provider, "Drafted C-1.")]) as server:
        result = loop_for(provider, server.base_url).run("Draft a contract with Acme.")
    assert result.stopped == "no_call" and result.final_text == "Drafted C-1."
    first, second, third = server.bodies
    system = first["system"] if provider == "anthropic" else first["messages"][0]["content"]
    assert "legal_draft_v3" in system and "Reply with exactly one JSON object" in system
    assert feedback(provider, second) == [{"ok": False, "error": "invalid call", "tool": "legal_draft_v3",
                                           "validation": INVALID_VALIDATION}]
    assert feedback(provider, third) == [{"ok": True, "result": DRAFTED}]
    assert [c.to_dict() for c in result.calls] == [
        {"name": "legal_draft_v3", "arguments": VALID_ARGUMENTS, "ok": True, "result": DRAFTED}]
    assert [s.input_tokens for s in result.steps] == [11, 11, 11] if provider == "openai" else [13, 13, 13]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stop_ends_at_the_invalid_call(provider: str) -> None:
    with serve([said(provider, INVALID), said(provider, "never sent")]) as server:
        result = loop_for(provider, server.base_url, on_invalid="stop").run("Draft.")
    assert result.stopped == "invalid_call" and result.calls == () and len(server.received) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_execute_runs_the_invalid_call(provider: str) -> None:
    ran = []
    with serve([said(provider, INVALID), said(provider, "Done.")]) as server:
        result = loop_for(provider, server.base_url, on_invalid="execute",
                          executors={"legal_draft_v3": lambda **a: ran.append(a) or DRAFTED}).run("Draft.")
    assert result.stopped == "no_call" and ran == [{"counterparty": "Acme", "value": -5, "term_months": "ten"}]
    assert feedback(provider, server.bodies[1]) == [{"ok": True, "result": DRAFTED}]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unknown_tool_is_fed_back_as_invalid(provider: str) -> None:
    with serve([said(provider, '{"name": "wire_money", "arguments": {"to": "Mallory"}}'),
                said(provider, "I cannot.")]) as server:
        result = loop_for(provider, server.base_url).run("Pay Mallory.")
    (line,) = feedback(provider, server.bodies[1])
    assert line["error"] == "invalid call" and line["tool"] == "wire_money" and line["validation"]["unknown_tool"]
    assert result.calls == ()


def test_a_policy_refusal_reaches_the_model_with_its_rule_id() -> None:
    policy = load_policy("policy: caps\nconstraints:\n  - id: caps.value\n    check: args.value <= 5\n"
                         "    message: 'value {args.value} is over the cap of 5'\n")
    with serve([said("openai", VALID), said("openai", "Lowering it.")]) as server:
        result = loop_for("openai", server.base_url, policy=policy).run("Draft.")
    (line,) = feedback("openai", server.bodies[1])
    assert line["error"] == "invalid call"
    assert line["validation"]["constraint_errors"] == ["value 10 is over the cap of 5"]
    assert line["validation"]["findings"] == [{"rule": "caps.value", "path": "/value",
                                               "message": "value 10 is over the cap of 5"}]
    assert result.calls == ()


def test_a_failing_executor_is_fed_back_and_the_loop_goes_on() -> None:
    def broken(**_):
        raise ValueError("the store is down")

    with serve([said("openai", VALID), said("openai", "Sorry, the store is down.")]) as server:
        result = loop_for("openai", server.base_url, executors={"legal_draft_v3": broken}).run("Draft.")
    assert result.stopped == "no_call"
    assert feedback("openai", server.bodies[1]) == [{"ok": False, "error": "ValueError: the store is down"}]


# --- failures of the model's server ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_http_500_ends_the_run_with_the_message(provider: str) -> None:
    with serve([said(provider, VALID), HttpError(500, "the model crashed")]) as server:
        result = loop_for(provider, server.base_url).run("Draft.")
    assert result.stopped == "error" and "500" in result.error and "the model crashed" in result.error
    assert len(result.calls) == 1  # what ran before is kept


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_ends_the_run(provider: str) -> None:
    with serve([Delay(1.5, said(provider, VALID))]) as server:
        result = loop_for(provider, server.base_url, client_options={"timeout": 0.3}).run("Draft.")
    assert result.stopped == "error" and "timed out" in result.error


def test_a_refused_connection_ends_the_run() -> None:
    result = loop_for("openai", closed_port_url()).run("Draft.")
    assert result.stopped == "error" and result.error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_max_steps_and_dry_run_over_the_wire(provider: str) -> None:
    with serve([said(provider, VALID)] * 2) as server:
        assert loop_for(provider, server.base_url, max_steps=2).run("Draft.").stopped == "max_steps"
    with serve([said(provider, VALID)]) as server:
        assert loop_for(provider, server.base_url, executors={}).run("Draft.").stopped == "dry_run"


# --- native calls -------------------------------------------------------------------------------------------


def test_native_openai_round_trip() -> None:
    calls = (ToolCall("call_1", "legal_draft_v3", '{"counterparty": "Acme", "value": -5'),
             ToolCall("call_2", "legal_draft_v3", json.dumps(VALID_ARGUMENTS)))
    with serve([OpenAIReply(None, calls, "tool_calls"), OpenAIReply("Drafted.")]) as server:
        result = loop_for("openai", server.base_url, native=True).run("Draft.")
    assert result.stopped == "no_call" and len(result.calls) == 1
    first, second = server.bodies
    assert first["tools"] == json.loads(json.dumps(sample_toolset().to_openai()))
    assistant, bad, good = second["messages"][-3:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1", "call_2"]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"counterparty": "Acme", "value": -5'
    assert (bad["role"], bad["tool_call_id"], good["tool_call_id"]) == ("tool", "call_1", "call_2")
    assert json.loads(bad["content"])["error"] == "invalid call"
    assert json.loads(good["content"]) == {"ok": True, "result": DRAFTED}
    assert "not valid JSON" in result.steps[0].parsed.note


def test_native_anthropic_round_trip() -> None:
    first_reply = AnthropicReply((text_block("Drafting."),
                                  tool_use_block("toolu_1", "legal_draft_v3", {"value": -1}),
                                  tool_use_block("toolu_2", "legal_draft_v3", VALID_ARGUMENTS)), "tool_use")
    with serve([first_reply, AnthropicReply((text_block("Drafted."),))]) as server:
        result = loop_for("anthropic", server.base_url, native=True).run("Draft.")
    assert result.stopped == "no_call" and result.final_text == "Drafted." and len(result.calls) == 1
    first, second = server.bodies
    assert first["tools"] == json.loads(json.dumps(sample_toolset().to_anthropic()))
    assistant, results = second["messages"][-2:]
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]
    assert results["role"] == "user" and [b["tool_use_id"] for b in results["content"]] == ["toolu_1", "toolu_2"]
    bad, good = (json.loads(b["content"] if isinstance(b["content"], str) else b["content"][0]["text"])
                 for b in results["content"])
    assert bad["error"] == "invalid call" and good == {"ok": True, "result": DRAFTED}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_native_stop_and_unknown_tool(provider: str) -> None:
    unknown = (OpenAIReply(None, (ToolCall("c1", "wire_money", "{}"),), "tool_calls") if provider == "openai"
               else AnthropicReply((tool_use_block("t1", "wire_money", {}),), "tool_use"))
    with serve([unknown]) as server:
        result = loop_for(provider, server.base_url, native=True, on_invalid="stop").run("Pay.")
    assert result.stopped == "invalid_call" and result.steps[0].parsed.hallucinated == ("wire_money",)


# --- async, and the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_arun_over_the_async_sdks(provider: str) -> None:
    async def draft(**_):
        return DRAFTED

    with serve([said(provider, INVALID), said(provider, VALID), said(provider, "Done.")]) as server:
        loop = loop_for(provider, server.base_url, client_options={"asynchronous": True},
                        executors={"legal_draft_v3": draft})
        result = asyncio.run(loop.arun("Draft."))
    assert result.stopped == "no_call" and [c.result for c in result.calls] == [DRAFTED]


def test_the_call_command_prints_each_step(capsys, tmp_path) -> None:
    with serve([OpenAIReply('{"name": "get_weather", "arguments": {"city": "Oslo", "days": 30}}'),
                OpenAIReply('{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}'),
                OpenAIReply("Sunny.")]) as server:
        code = main(["call", "Weather in Oslo?", "--tools", "docs/examples/my_tools.py", "--base-url",
                     server.base_url + "/v1", "--model", "m", "--timeout", "10"])
    out = capsys.readouterr().out
    assert code == 0
    assert "days: 30 > maximum 14" in out and "Oslo: sunny for 3 days" in out and "stopped: no_call" in out


def test_the_call_command_exits_1_when_the_run_does_not_end_with_an_answer(capsys) -> None:
    with serve([HttpError(500)]) as server:
        code = main(["call", "Draft.", "--base-url", server.base_url + "/v1", "--model", "m", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and result["stopped"] == "error" and "500" in result["error"]
