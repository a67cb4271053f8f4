"""The call loop with a scripted model: the seed's three on_invalid behaviours, the feedback payload, unknown
tools, policies, executors that fail, dry runs, step limits, client failures, native calls, async runs, audit."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules import CallLoop, load_policy, load_tools, parse_native, sample_toolset
from toolform_rules.loop.clients import ChatReply, ClientError, NativeCall, StubClient
from toolform_rules.loop.call_loop import RESULT_HEADER, schema_spelling
from toolform_rules.policy.records import DecisionLog

VALID = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12}}'
INVALID = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten"}}'
UNKNOWN = '{"name": "send_payment", "arguments": {"to": "Mallory"}}'
DRAFTED = {"id": "D-1"}


def drafted(**arguments):
    drafted.seen.append(arguments)
    return DRAFTED


def loop_for(replies, **options) -> tuple[CallLoop, StubClient]:
    drafted.seen = []
    model = StubClient(replies, provider=options.pop("provider", "stub"))
    options.setdefault("executors", {"legal_draft_v3": drafted})
    return CallLoop(model, sample_toolset(), **options), model


def feedback_lines(message: dict) -> list[dict]:
    header, *lines = message["content"].split("\n")
    assert header == RESULT_HEADER
    return [json.loads(line) for line in lines]


# --- on_invalid: the seed's three behaviours --------------------------------------------------------------


def test_feedback_sends_the_seeds_payload_and_lets_the_model_try_again() -> None:
    loop, model = loop_for([INVALID, VALID, "Drafted."])
    result = loop.run("Draft a contract with Acme.")
    assert result.stopped == "no_call" and result.final_text == "Drafted."
    (line,) = feedback_lines(model.requests[1][-1])
    assert line == {"ok": False, "error": "invalid call", "tool": "legal_draft_v3", "validation": {
        "ok": False, "unknown_tool": False, "missing_required": [], "unknown_args": [],
        "type_errors": ["term_months: expected integer, got str"], "enum_errors": [],
        "constraint_errors": ["value: -5 < minimum 0"], "n_errors": 2}}
    assert list(line) == ["ok", "error", "tool", "validation"]
    assert feedback_lines(model.requests[2][-1]) == [{"ok": True, "result": DRAFTED}]
    assert [c.to_dict() for c in result.calls] == [{"name": "legal_draft_v3", "arguments": {
        "counterparty": "Acme", "value": 10, "term_months": 12}, "ok": True, "result": DRAFTED}]
    assert drafted.seen == [{"counterparty": "Acme", "value": 10, "term_months": 12}]  # the invalid one never ran


def test_stop_ends_the_run_and_runs_nothing() -> None:
    loop, model = loop_for([VALID + "\n" + INVALID, "never asked"], protocol="jsonl_call", on_invalid="stop")
    result = loop.run("Draft two.")
    assert result.stopped == "invalid_call" and result.calls == () and drafted.seen == []
    assert len(model.requests) == 1 and len(result.steps) == 1


def test_execute_runs_an_invalid_call_anyway() -> None:
    loop, model = loop_for([INVALID, "Done."], on_invalid="execute")
    result = loop.run("Draft.")
    assert result.stopped == "no_call"
    assert drafted.seen == [{"counterparty": "Acme", "value": -5, "term_months": "ten"}]
    (executed,) = result.calls
    assert executed.ok and not executed.valid


def test_an_unknown_tool_is_invalid_in_every_mode() -> None:
    loop, model = loop_for([UNKNOWN, "Sorry."])
    assert loop.run("Pay Mallory.").stopped == "no_call"
    (line,) = feedback_lines(model.requests[1][-1])
    assert line["ok"] is False and line["tool"] == "send_payment" and line["validation"]["unknown_tool"] is True
    assert loop_for([UNKNOWN], on_invalid="stop")[0].run("Pay.").stopped == "invalid_call"
    loop, model = loop_for([UNKNOWN, "Sorry."], on_invalid="execute")
    result = loop.run("Pay.")
    assert result.calls == () and feedback_lines(model.requests[1][-1])[0]["error"] == "invalid call"


def test_a_policy_refusal_is_an_invalid_call_with_its_rule_id() -> None:
    policy = load_policy("policy: caps\nconstraints:\n  - id: caps.value\n    check: args.value <= 5\n")
    loop, model = loop_for([VALID, "Too much, then."], policy=policy)
    result = loop.run("Draft.")
    (line,) = feedback_lines(model.requests[1][-1])
    assert line["error"] == "invalid call" and line["validation"]["ok"] is False
    assert any("caps.value" in message for message in line["validation"]["constraint_errors"])
    assert result.calls == () and drafted.seen == []


def test_an_executor_that_raises_is_a_failed_call_and_the_loop_goes_on() -> None:
    def broken(**_):
        raise ValueError("the contract store is down")

    loop, model = loop_for([VALID, "It failed."], executors={"legal_draft_v3": broken})
    result = loop.run("Draft.")
    assert result.stopped == "no_call"
    assert feedback_lines(model.requests[1][-1]) == [{"ok": False, "error": "ValueError: the contract store is down"}]
    (call,) = result.calls
    assert not call.ok and call.error == "ValueError: the contract store is down"


def test_no_executors_is_a_dry_run_after_the_first_parse() -> None:
    model = StubClient([VALID, "never asked"])
    result = CallLoop(model, sample_toolset()).run("Draft.")
    assert result.stopped == "dry_run" and len(model.requests) == 1
    assert result.steps[0].parsed.calls[0].valid


def test_max_steps_ends_a_model_that_keeps_calling() -> None:
    loop, model = loop_for([VALID] * 5, max_steps=3)
    result = loop.run("Draft forever.")
    assert result.stopped == "max_steps" and len(result.steps) == 3 and len(result.calls) == 3


@pytest.mark.parametrize("failure", [ClientError("HTTP 500", provider="openai", status=500), TimeoutError("read"),
                                     ConnectionError("refused"), RuntimeError("bug in a custom client")])
def test_a_client_failure_ends_the_run_with_its_message_never_an_exception(failure) -> None:
    loop, _ = loop_for([VALID, failure])
    result = loop.run("Draft.")
    assert result.stopped == "error" and type(failure).__name__ in result.error and str(failure) in result.error
    assert len(result.calls) == 1  # what ran before the failure is kept


def test_the_first_message_carries_the_tools_and_the_protocols_instructions() -> None:
    loop, model = loop_for(["No call needed."], protocol="hermes", system="You draft contracts.")
    loop.run("Hello.")
    system, user = model.requests[0]
    assert system["role"] == "system" and system["content"].startswith("You draft contracts.")
    assert "legal_draft_v3" in system["content"] and "<tool_call>" in system["content"]
    assert RESULT_HEADER in system["content"] and user == {"role": "user", "content": "Hello."}


def test_arguments_reach_the_executor_under_the_schemas_names() -> None:
    loop, _ = loop_for(['{"name": "LegalDraftV3", "arguments": {"Counterparty": "Acme", "value": 1, '
                        '"termMonths": 2, "contractDetails": {"contractId": "C-9"}}}', "Done."])
    loop.run("Draft.")
    assert drafted.seen == [{"counterparty": "Acme", "value": 1, "term_months": 2,
                             "contract_details": {"contract_id": "C-9"}}]


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(["termMonths", "TERM_MONTHS", "value", "Value", "other", "auto-renew"]),
                       st.integers(), max_size=4))
def test_schema_spelling_never_mutates_its_input_and_is_idempotent(arguments: dict) -> None:
    tool = sample_toolset().tools[0]
    before = json.dumps(arguments, sort_keys=True)
    once = schema_spelling(arguments, tool)
    assert json.dumps(arguments, sort_keys=True) == before
    assert schema_spelling(once, tool) == once


def test_reasoning_is_kept_apart_from_the_reply() -> None:
    loop, _ = loop_for(["<think>Should I call it? No.</think>No call needed."])
    result = loop.run("Hi.")
    assert result.final_text == "No call needed." and result.steps[0].reasoning == "Should I call it? No."


def test_the_result_is_json() -> None:
    loop, _ = loop_for([VALID, "Done."], executors={"legal_draft_v3": lambda **_: {1, 2}})
    result = loop.run("Draft.")
    assert json.loads(json.dumps(result.to_dict()))["calls"][0]["result"] == "{1, 2}"


def test_bad_options_are_refused_when_the_loop_is_made() -> None:
    with pytest.raises(ValueError, match="on_invalid"):
        CallLoop(StubClient([]), sample_toolset(), on_invalid="ignore")
    with pytest.raises(ValueError, match="max_steps"):
        CallLoop(StubClient([]), sample_toolset(), max_steps=0)
    with pytest.raises(ValueError, match="native=True"):
        CallLoop(StubClient([]), sample_toolset(), native=True)


# --- native calls ----------------------------------------------------------------------------------------


def native_reply(*calls: NativeCall, text: str = "") -> ChatReply:
    return ChatReply(text=text, tool_calls=calls, finish_reason="tool_calls")


@pytest.mark.parametrize("provider, arguments", [
    ("openai", '{"counterparty": "Acme", "value": 10, "term_months": 12}'),
    ("anthropic", {"counterparty": "Acme", "value": 10, "term_months": 12})])
def test_native_calls_are_validated_executed_and_answered_by_id(provider, arguments) -> None:
    bad = NativeCall("call_1", "legal_draft_v3", '{"value": ' if provider == "openai" else {"value": -1})
    good = NativeCall("call_2", "legal_draft_v3", arguments)
    loop, model = loop_for([native_reply(bad, good, text="Drafting."), "Done."], native=True, provider=provider)
    result = loop.run("Draft.")
    assert result.stopped == "no_call" and len(result.calls) == 1
    assistant, first, second = model.requests[1][-3:]
    assert assistant["role"] == "assistant" and [c.id for c in assistant["tool_calls"]] == ["call_1", "call_2"]
    assert first["role"] == second["role"] == "tool"
    assert (first["tool_call_id"], second["tool_call_id"]) == ("call_1", "call_2")
    assert json.loads(first["content"])["error"] == "invalid call"
    assert json.loads(second["content"]) == {"ok": True, "result": DRAFTED}
    assert model.tools[0] is loop.tools  # the tools went through the provider's tools parameter


def test_parse_native_reads_invalid_json_arguments_as_a_rejected_call_with_a_note() -> None:
    reply = parse_native([NativeCall("c", "legal_draft_v3", '{"counterparty": "Acme",}')], sample_toolset())
    assert reply.calls == () and reply.rejected[0].accepted is False
    assert "not valid JSON" in reply.note and "column 25" in reply.note


# --- async ------------------------------------------------------------------------------------------------


def test_arun_awaits_async_executors_and_clients() -> None:
    seen = []

    async def draft(**arguments):
        await asyncio.sleep(0)
        seen.append(arguments)
        return DRAFTED

    model = StubClient([INVALID, VALID, "Done."])
    result = asyncio.run(CallLoop(model, sample_toolset(), executors={"legal_draft_v3": draft}).arun("Draft."))
    assert result.stopped == "no_call" and seen == [{"counterparty": "Acme", "value": 10, "term_months": 12}]


def test_run_runs_an_async_executor_to_completion() -> None:
    async def draft(**_):
        return DRAFTED

    loop, _ = loop_for([VALID, "Done."], executors={"legal_draft_v3": draft})
    assert loop.run("Draft.").calls[0].result == DRAFTED


# --- audit ------------------------------------------------------------------------------------------------


def test_decisions_get_one_record_per_call_with_its_outcome_and_the_policy() -> None:
    policy = load_policy("policy: caps\nconstraints:\n  - id: caps.value\n    check: args.value <= 50\n")
    stream = io.StringIO()
    big = VALID.replace('"value": 10', '"value": 99')
    with DecisionLog(stream, policy=policy) as log:
        loop, _ = loop_for([INVALID, big, VALID, "Done."], decisions=log)
        assert loop.policy is policy  # the log's policy is the loop's when none is given
        loop.run("Draft.")
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["step"], r["outcome"], r["verdict"]) for r in records] == [
        (1, "refused", "deny"), (2, "refused", "deny"), (3, "executed", "allow")]
    assert records[1]["findings"][0]["rule"] == "caps.value"
    assert all(r["policy"]["name"] == "caps" for r in records)


def test_a_dry_run_records_each_call_as_valid_or_refused() -> None:
    stream = io.StringIO()
    with DecisionLog(stream) as log:
        CallLoop(StubClient([VALID + "\n" + UNKNOWN]), sample_toolset(), protocol="jsonl_call", decisions=log).run("x")
    assert [json.loads(line)["outcome"] for line in stream.getvalue().splitlines()] == ["valid", "refused"]


def test_python_tools_run_with_their_own_functions() -> None:
    tools = load_tools("docs/examples/my_tools.py")
    model = StubClient(['{"name": "get_weather", "arguments": {"city": "Oslo"}}', "Sunny."])
    result = CallLoop(model, tools).run("Weather in Oslo?")
    assert [c.result for c in result.calls] == ["Oslo: sunny for 3 days"]


# --- invariants over scripted runs --------------------------------------------------------------------------

REPLY_KINDS = {"valid": VALID, "invalid": INVALID, "unknown": UNKNOWN, "text": "All done.",
               "garbled": '{"name": "legal_draft_v3", "arguments": {"value": ', "fails": "FAIL"}


@settings(max_examples=150, deadline=None)
@given(kinds=st.lists(st.sampled_from(sorted(REPLY_KINDS)), min_size=1, max_size=6),
       on_invalid=st.sampled_from(["feedback", "stop", "execute"]), max_steps=st.integers(1, 5),
       raises=st.booleans())
def test_any_scripted_run_ends_well(kinds, on_invalid, max_steps, raises) -> None:
    """Whatever the model says and however the executor behaves: no exception, a known ending, no more steps
    than allowed, an executor run only for a valid call (or any known tool's call with "execute"), one line
    sent back per call, and nothing run in a step that stopped the run."""
    from toolform_rules.loop.call_loop import STOPPED

    replies = [ConnectionError("refused") if k == "fails" else REPLY_KINDS[k] for k in kinds]
    ran = []

    def executor(**arguments):
        ran.append(arguments)
        if raises:
            raise RuntimeError("boom")
        return "ok"

    model = StubClient(replies)
    result = CallLoop(model, sample_toolset(), executors={"legal_draft_v3": executor}, on_invalid=on_invalid,
                      max_steps=max_steps).run("Draft.")
    assert result.stopped in STOPPED and len(result.steps) <= max_steps
    assert len(ran) == len(result.calls)
    for step, kind in zip(result.steps, kinds):
        found = len(step.parsed.calls) + len(step.parsed.rejected)
        assert len(step.feedback) in (0, found)
        for executed in step.executed:
            assert executed.valid or on_invalid == "execute"
            assert executed.ok is not raises
    if result.stopped == "invalid_call":
        assert on_invalid == "stop" and result.steps[-1].executed == ()
    if result.stopped == "error":
        assert result.error
    if result.stopped == "no_call":
        assert result.final_text or kinds[len(result.steps) - 1] == "garbled"


NOT_JSON_REPLIES = {
    "nan": '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": NaN, "term_months": 12}}',
    "infinity": '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": Infinity, '
                '"term_months": 12}}',
    "surrogate": '{"name": "legal_draft_v3", "arguments": {"counterparty": "\\ud83d", "value": 1, "term_months": 12}}',
}


@settings(max_examples=150, deadline=None)
@given(kinds=st.lists(st.sampled_from(sorted({**REPLY_KINDS, **NOT_JSON_REPLIES})), min_size=1, max_size=6),
       on_invalid=st.sampled_from(["feedback", "stop", "execute"]), dry=st.booleans())
def test_no_run_gives_an_executor_a_value_json_does_not_hold(kinds, on_invalid, dry) -> None:
    """Whatever the model writes, in a dry run or not: an unknown tool or a value no JSON holds (NaN, Infinity, a
    lone surrogate) never reaches an executor; a dry run stops only at a call that would run; the result and what
    the model is sent are strict JSON in UTF-8."""
    from toolform_rules.jsonvalues import first_not_json
    from toolform_rules.loop.call_loop import STOPPED

    replies = [ConnectionError("refused") if k == "fails" else {**REPLY_KINDS, **NOT_JSON_REPLIES}[k] for k in kinds]
    ran = []
    model = StubClient(replies)
    executors = {} if dry else {"legal_draft_v3": lambda **arguments: ran.append(arguments) or "ok"}
    result = CallLoop(model, sample_toolset(), executors=executors, on_invalid=on_invalid).run("Draft.")
    assert result.stopped in STOPPED
    assert all(first_not_json(arguments) is None for arguments in ran)
    if result.stopped == "error":  # the client failed, or the script ran out
        assert len(result.steps) == len(kinds) or kinds[len(result.steps)] == "fails"
    if result.stopped == "dry_run":
        assert dry and kinds[len(result.steps) - 1] in ("valid", "invalid" if on_invalid == "execute" else "valid")
    json.dumps(result.to_dict(), allow_nan=False).encode("utf-8")
    for request in model.requests:
        for message in request:
            message["content"].encode("utf-8")
