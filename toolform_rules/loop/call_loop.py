"""The call loop: prompt, parse, validate, execute, feed back — until the model answers without a call.

:class:`CallLoop` validates every call before it executes it.  What happens to an invalid
call is set by ``on_invalid`` (the seed's three behaviours):

* ``"feedback"`` (the default): the loop sends back ``Tool result:`` with
  ``{"ok": false, "error": "invalid call", "tool": NAME, "validation": {...}}`` for that call
  and lets the model try again;
* ``"stop"``: the loop ends with ``stopped="invalid_call"``, nothing of that reply executed;
* ``"execute"``: the loop runs the call anyway.

An unknown tool counts as invalid, and so does a call a ``policy=`` refuses (its findings,
rule ids in their messages, in the validation).  Every call is validated first, in a dry run
(no executors) too, which ends only at a call that would run.  A value no JSON holds (a NaN,
a lone surrogate) is invalid, and no executor is given one, even with ``"execute"``; what
is sent back is strict JSON (a NaN named ``"NaN"``, a lone surrogate escaped).  An executor
that raises gives ``{"ok": false, "error": "ValueError: ..."}`` and the loop goes on; a
client that fails (an HTTP error, a timeout) ends the run with ``stopped="error"`` and the
message.  Nothing a model, the network or an executor does escapes as an exception.

Text protocols (``protocol="json_object"``, any of :func:`~toolform_rules.protocol_ids`,
native formats included) put the tools and the protocol's instructions in the first
message and send results back as a user message, one JSON object a line.  ``native=True``
passes the tools through the provider's tools parameter, reads its structured calls
(:func:`~toolform_rules.parse_native`) and sends results back the provider's way.

>>> from toolform_rules import load_tools
>>> from toolform_rules.loop.clients import StubClient
>>> tools = load_tools("docs/examples/my_tools.py")
>>> model = StubClient(['{"name": "get_weather", "arguments": {"city": "Paris", "days": 30}}',
...                     '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',
...                     "Sunny in Paris for 3 days."])
>>> result = CallLoop(model, tools).run("Weather in Paris for a month?")
>>> result.stopped, len(result.steps), result.final_text
('no_call', 3, 'Sunny in Paris for 3 days.')
>>> [call.to_dict() for call in result.calls]
[{'name': 'get_weather', 'arguments': {'city': 'Paris', 'days': 3}, 'ok': True, 'result': 'Paris: sunny for 3 days'}]
>>> print(model.requests[1][-1]["content"])
Tool result:
{"ok": false, "error": "invalid call", "tool": "get_weather", "validation": {"ok": false, "unknown_tool": false, "missing_required": [], "unknown_args": [], "type_errors": [], "enum_errors": [], "constraint_errors": ["days: 30 > maximum 14"], "n_errors": 1}}
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Awaitable, Callable, Mapping

import attrs

from .clients import ChatClient, ChatReply, Message, NativeCall, native_call_fields
from ..engine.rules import RuleSet
from ..jsonvalues import first_not_json, strict_json
from ..limits import DEFAULT_LIMITS, Limits
from ..replies.provider_calls import grade_native, native_reply
from ..replies.parse import ParsedCall, ParsedReply, parse_reply
from ..schema.ir import Schema, Tool
from ..schema.loaders import load_tools
from ..schema.names import canonical_name
from ..schema.toolset import Toolset

#: what an invalid call does (the seed's three behaviours)
ON_INVALID = ("feedback", "stop", "execute")
#: why a run ended
STOPPED = ("no_call", "max_steps", "invalid_call", "dry_run", "error")
#: the first line of the message that carries results back in a text protocol
RESULT_HEADER = "Tool result:"
#: the providers whose structured calls ``native=True`` reads
NATIVE_PROVIDERS = ("openai", "anthropic")


@attrs.frozen
class Executed:
    """One call's outcome in a step: the tool's name, the arguments it got (under the schema's names), whether
    it went well, and its result or error; ``valid``: the call passed validation (an invalid one runs only
    with ``on_invalid="execute"``); ``call_id``: the provider's id of a native call."""

    name: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None
    valid: bool = True
    call_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments, "ok": self.ok}
        if self.ok:
            out["result"] = self.result
        else:
            out["error"] = self.error
        return out


@attrs.frozen
class LoopStep:
    """One round: the model's reply (text and reasoning), the calls read from it, what ran, the lines sent
    back, the tokens it cost and how long the model took (seconds)."""

    reply: str
    parsed: ParsedReply
    executed: tuple[Executed, ...] = ()
    feedback: tuple[str, ...] = ()
    reasoning: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"reply": self.reply, "reasoning": self.reasoning, "parsed": self.parsed.to_dict(),
                "executed": [e.to_dict() for e in self.executed], "feedback": list(self.feedback),
                "tokens": {"input": self.input_tokens, "output": self.output_tokens}, "latency": self.latency}


@attrs.frozen
class LoopResult:
    """How a run ended (``stopped``: one of :data:`STOPPED`), its steps, the calls executed (in order), the
    model's last text when it answered without a call, and the error that ended it, if one did."""

    stopped: str
    steps: tuple[LoopStep, ...] = ()
    calls: tuple[Executed, ...] = ()
    final_text: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: results that are not JSON are written as their ``str``, a NaN or an infinity a model
        wrote as its name (``"NaN"``), so ``json.dumps(..., allow_nan=False)`` writes it; a lone surrogate a
        model wrote stays as it was (``json.dumps`` escapes it)."""
        out = {"stopped": self.stopped, "steps": [s.to_dict() for s in self.steps],
               "calls": [c.to_dict() for c in self.calls], "final_text": self.final_text, "error": self.error}
        return json.loads(strict_json(out, default=str))


@attrs.frozen
class _Pending:
    """A call to answer in this step: what was read, its executor (``None``: none runs), whether it is valid,
    and whether it would run given an executor (``runs``: a dry run ends at such a call)."""

    call: ParsedCall
    call_id: str
    executor: Callable[..., Any] | None
    arguments: dict[str, Any]
    valid: bool
    runs: bool


class CallLoop:
    """Ask a model, validate its calls, run them, send the results back, until it answers without a call.

    ``client``: a :class:`~toolform_rules.loop.clients.ChatClient` (``OpenAIChat``, ``AnthropicChat``,
    ``StubClient`` or yours).  ``tools``: anything :func:`~toolform_rules.load_tools` reads.
    ``executors``: tool name → function (default: the toolset's, for tools read from Python);
    none at all makes a dry run, which stops at the first reply with a call that would run
    (an invalid call, an unknown tool's too, is handled before as ``on_invalid`` says).
    ``protocol``: the answer protocol of a text run; ``native``: the provider's own tool
    calls instead.  ``rule``, ``profile``, ``rules``, ``policy``: as for
    :func:`~toolform_rules.parse_reply`.
    ``decisions``: a :class:`~toolform_rules.policy.records.DecisionLog` that gets one
    record per call with its outcome.  ``system``: text put before the tools in the first
    message.  ``guard``: a strictness (``lenient``, ``standard``, ``strict``): the guard scans
    the tools first and cleans what the model sees with ``guard_action`` (by default the
    flagged descriptions are dropped whole: a description that hides one order may hide
    another the rules missed; ``strip`` takes out only the flagged text, ``quarantine`` the
    flagged tools).  The report is ``guard_report``; the executors are the tools' own.
    """

    def __init__(self, client: ChatClient, tools: Any, *, protocol: str = "json_object", native: bool = False,
                 rule: str = "main", executors: Mapping[str, Callable[..., Any]] | None = None, max_steps: int = 8,
                 on_invalid: str = "feedback", policy: Any = None, decisions: Any = None, profile: str = "sdk",
                 rules: RuleSet | None = None, system: str = "", guard: str | None = None,
                 guard_action: str = "drop_descriptions", limits: Limits = DEFAULT_LIMITS) -> None:
        from ..replies.formats import get_protocol

        if on_invalid not in ON_INVALID:
            raise ValueError(f"on_invalid must be one of {', '.join(ON_INVALID)}, not {on_invalid!r}")
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, not {max_steps!r}")
        provider = getattr(client, "provider", "")
        if native and provider not in NATIVE_PROVIDERS:
            raise ValueError(f"native=True needs a client whose provider is one of {', '.join(NATIVE_PROVIDERS)}; "
                             f"this one's is {provider!r}")
        self.client, self.native, self.rule, self.max_steps = client, native, rule, max_steps
        self.on_invalid, self.profile, self.rules, self.system, self.limits = on_invalid, profile, rules, system, limits
        self.protocol = None if native else get_protocol(protocol)
        self.tools = tools if isinstance(tools, Toolset) else load_tools(tools, limits=limits)
        self.executors = dict(self.tools.executors if executors is None else executors)
        #: what the guard found in the tools (``guard=`` a strictness), before the model saw them
        self.guard_report: Any = None
        if guard is not None:
            from ..guard import clean_toolset, scan_toolset

            self.guard_report = scan_toolset(self.tools, strictness=guard)
            self.tools, _ = clean_toolset(self.guard_report, self.tools, action=guard_action)
        self.decisions = decisions
        self.policy = policy if policy is not None else getattr(decisions, "policy", None)

    # --- the run ---------------------------------------------------------------------------------------

    def run(self, request: str) -> LoopResult:
        """Run the loop on ``request`` (the user's message); never raises for what a model, the network or an
        executor does.  An ``async def`` executor is run to completion here (use :meth:`arun` inside an event
        loop)."""
        session = _Session(self, request)
        while True:
            try:
                reply = self.client.complete(session.messages, tools=self.tools if self.native else None)
            except Exception as err:  # noqa: BLE001  (a client's failure ends the run, described)
                return session.failed(err)
            pending = session.read(reply)
            if isinstance(pending, LoopResult):
                return pending
            done = session.answer([_run_sync(p) for p in pending])
            if done is not None:
                return done

    async def arun(self, request: str) -> LoopResult:
        """:meth:`run` for async clients (``acomplete``; a client without it runs in a thread) and ``async def``
        executors (awaited; plain ones are called as they are)."""
        session = _Session(self, request)
        complete = getattr(self.client, "acomplete", None)
        while True:
            try:
                tools = self.tools if self.native else None
                if complete is not None:
                    reply = await complete(session.messages, tools=tools)
                else:
                    reply = await asyncio.to_thread(self.client.complete, session.messages, tools=tools)
            except Exception as err:  # noqa: BLE001
                return session.failed(err)
            pending = session.read(reply)
            if isinstance(pending, LoopResult):
                return pending
            done = session.answer([await _run_async(p) for p in pending])
            if done is not None:
                return done

    # --- the first messages --------------------------------------------------------------------------

    def first_messages(self, request: str) -> list[Message]:
        """The messages that open a run: in a text protocol, a system message with the tools (name, description,
        parameters as JSON Schema) and the protocol's instructions, then the request; natively, the request
        (and ``system``, if given): the tools go through the provider's tools parameter."""
        messages: list[Message] = []
        if self.protocol is not None:
            listing = strict_json([t["function"] for t in self.tools.to_openai()], ensure_ascii=False, indent=1)
            instructions = self.protocol.instructions(self.tools)
            text = (f"{self.system}\n\n" if self.system else "") + (
                f"You can use these tools (each with its parameters as JSON Schema):\n{listing}\n\n"
                f"To call a tool: {instructions}\n"
                f"Each result comes back in a message that starts with \"{RESULT_HEADER}\", one JSON object a line. "
                "When you need no tool, answer in plain text, without a call.")
            messages.append({"role": "system", "content": text})
        elif self.system:
            messages.append({"role": "system", "content": self.system})
        messages.append({"role": "user", "content": request})
        return messages


class _Session:
    """One run's state: its messages, steps and executed calls; what each reply leads to."""

    def __init__(self, loop: CallLoop, request: str) -> None:
        self.loop = loop
        self.messages = loop.first_messages(request)
        self.steps: list[LoopStep] = []
        self.calls: list[Executed] = []
        self.reply: ChatReply | None = None
        self.parsed: ParsedReply | None = None
        self.pending: list[_Pending] = []

    def failed(self, err: BaseException) -> LoopResult:
        return self.result("error", error=f"{type(err).__name__}: {err}")

    def result(self, stopped: str, *, final_text: str = "", error: str | None = None) -> LoopResult:
        return LoopResult(stopped, tuple(self.steps), tuple(self.calls), final_text, error)

    def read(self, reply: ChatReply) -> list[_Pending] | LoopResult:
        """The calls of ``reply`` to answer, or how the run ends with it."""
        loop = self.loop
        try:
            parsed, found, ids = self._parse(reply)
        except Exception as err:  # noqa: BLE001  (a reply no reader can take: described, not raised)
            return self.failed(err)
        self.reply, self.parsed = reply, parsed
        if not found:
            self._step(())
            return self.result("no_call", final_text=parsed.content or reply.text)
        # Every call is validated before anything is decided: an invalid call (an unknown tool too) is handled
        # as on_invalid says, in a dry run as in any other; the dry run ends only at a call that would run.
        pending = [self._pending(call, call_id) for call, call_id in zip(found, ids)]
        if loop.on_invalid == "stop" and not all(item.valid for item in pending):
            for item in pending:
                self._record(item, "refused" if not item.valid else "valid")
            self._step(())
            return self.result("invalid_call")
        if not loop.executors and any(item.runs for item in pending):
            for item in pending:
                self._record(item, "valid" if item.valid else "refused")
            self._step(())
            return self.result("dry_run")
        self.pending = pending
        return pending

    def answer(self, outcomes: list[Executed | None]) -> LoopResult | None:
        """Record what ran, send the results back; the result when the run ends here (``max_steps``)."""
        lines: list[str] = []
        executed: list[Executed] = []
        for item, outcome in zip(self.pending, outcomes):
            if outcome is None:  # invalid, fed back
                self._record(item, "refused")
                line = {"ok": False, "error": "invalid call", "tool": item.call.name,
                        "validation": _validation(item.call)}
            else:
                executed.append(outcome)
                self._record(item, "executed" if outcome.ok else "failed", outcome)
                line = {"ok": True, "result": outcome.result} if outcome.ok else {"ok": False, "error": outcome.error}
            lines.append(strict_json(line, ensure_ascii=False, default=str))
        self.calls.extend(executed)
        self._step(tuple(executed), tuple(lines))
        self._send_back(lines)
        if len(self.steps) >= self.loop.max_steps:
            return self.result("max_steps")
        return None

    # --- one reply ------------------------------------------------------------------------------------

    def _parse(self, reply: ChatReply) -> tuple[ParsedReply, list[ParsedCall], list[str]]:
        """The reply read, and the calls to answer with their provider ids: natively, in the provider's order,
        each with its id; a text reply's accepted calls first, then its rejected ones, with no ids."""
        loop = self.loop
        if loop.native:
            graded, notes = grade_native(reply.tool_calls, loop.tools, rule=loop.rule, profile=loop.profile,
                                         rules=loop.rules, policy=loop.policy, limits=loop.limits)
            ids = [native_call_fields(native)[0] for native in reply.tool_calls]
            return native_reply(graded, notes, rule=loop.rule, text=reply.text), graded, ids
        assert loop.protocol is not None
        parsed = parse_reply(reply.text, loop.tools, loop.protocol.info.id, rule=loop.rule, profile=loop.profile,
                             rules=loop.rules, policy=loop.policy, limits=loop.limits)
        found = list(parsed.calls) + list(parsed.rejected)
        return parsed, found, [""] * len(found)

    def _pending(self, call: ParsedCall, call_id: str) -> _Pending:
        loop = self.loop
        tool = loop.tools.get(call.resolved_name) if call.resolved_name else None
        valid = call.accepted and call.valid and tool is not None
        # "execute" runs an invalid call, but never one holding a value no JSON holds (a NaN, a lone surrogate):
        # no tool called over JSON could be given it
        runs = tool is not None and (valid or loop.on_invalid == "execute" and first_not_json(call.arguments) is None)
        executor = _executor(loop.executors, tool.name) if runs and tool is not None else None
        arguments = schema_spelling(call.arguments, tool) if tool is not None else dict(call.arguments)
        return _Pending(call, call_id, executor, arguments, valid, runs)

    def _step(self, executed: tuple[Executed, ...], feedback: tuple[str, ...] = ()) -> None:
        reply, parsed = self.reply, self.parsed
        assert reply is not None and parsed is not None
        self.steps.append(LoopStep(reply.text, parsed, executed, feedback, reply.reasoning, reply.input_tokens,
                                   reply.output_tokens, reply.latency))

    def _send_back(self, lines: list[str]) -> None:
        reply = self.reply
        assert reply is not None
        if self.loop.native:
            calls = [NativeCall(*native_call_fields(c)) for c in reply.tool_calls]
            self.messages.append({"role": "assistant", "content": reply.text, "tool_calls": calls})
            for item, line in zip(self.pending, lines):
                self.messages.append({"role": "tool", "tool_call_id": item.call_id, "name": item.call.name,
                                      "content": line})
        else:
            self.messages.append({"role": "assistant", "content": reply.text})
            self.messages.append({"role": "user", "content": "\n".join([RESULT_HEADER, *lines])})

    def _record(self, item: _Pending, outcome: str, executed: Executed | None = None) -> None:
        """One decision record for ``item`` (with ``decisions=``): the policy's record, and the outcome."""
        log = self.loop.decisions
        if log is None:
            return
        from ..engine.verbs import validate_arguments
        from ..policy.records import decision_record

        call = {"name": item.call.name, "arguments": item.call.arguments}
        report = item.call.report or validate_arguments(call, self.loop.tools, profile=self.loop.profile,
                                                        rules=self.loop.rules)
        record = decision_record(call, report, self.loop.policy, duration=0.0, mask=log.mask)
        record["outcome"] = outcome
        record["step"] = len(self.steps) + 1
        if executed is not None and not executed.ok:
            record["error"] = executed.error
        log.write(record)


def _validation(call: ParsedCall) -> dict[str, Any] | None:
    """The validation sent back for an invalid call: the report's dict (the seed's buckets), and when a policy
    refused the call, its findings with their rule ids (a policy's message need not name its rule)."""
    validation = call.validation
    report = call.report
    if report is None or validation is None or not any(f.policy for f in report.findings):
        return validation
    found = [f.to_dict() for f in report.findings]
    return {**validation, "findings": [{key: f[key] for key in ("rule", "path", "message")} for f in found]}


def _executor(executors: Mapping[str, Callable[..., Any]], name: str) -> Callable[..., Any] | None:
    found = executors.get(name)
    if found is None:
        key = canonical_name(name)
        found = next((fn for known, fn in executors.items() if canonical_name(known) == key), None)
    return found


def _run_sync(item: _Pending) -> Executed | None:
    """Run one pending call (``None``: it is not run, and is fed back as invalid)."""
    if item.executor is None:
        return _not_run(item)
    try:
        value = item.executor(**item.arguments)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
    except Exception as err:  # noqa: BLE001  (an executor's failure is the call's result, not the run's end)
        return _outcome(item, False, error=f"{type(err).__name__}: {err}")
    return _outcome(item, True, result=value)


async def _run_async(item: _Pending) -> Executed | None:
    if item.executor is None:
        return _not_run(item)
    try:
        value = item.executor(**item.arguments)
        if inspect.isawaitable(value):
            value = await value
    except Exception as err:  # noqa: BLE001
        return _outcome(item, False, error=f"{type(err).__name__}: {err}")
    return _outcome(item, True, result=value)


def _not_run(item: _Pending) -> Executed | None:
    """A call with no executor: an invalid one is fed back as such; a valid one (a tool nobody runs) failed."""
    if not item.valid:
        return None
    return _outcome(item, False, error=f"no executor for the tool {item.call.resolved_name!r}")


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _outcome(item: _Pending, ok: bool, *, result: Any = None, error: str | None = None) -> Executed:
    return Executed(item.call.resolved_name or item.call.name, item.arguments, ok, result, error, item.valid,
                    item.call_id)


def schema_spelling(arguments: Mapping[str, Any], tool: Tool) -> dict[str, Any]:
    """``arguments`` with each key spelt as the tool's schema spells it (``termMonths`` → ``term_months``), in
    nested objects too; keys the schema does not know stay as written.  A new dict: the input is kept.

    >>> from toolform_rules import sample_tool
    >>> schema_spelling({"termMonths": 12, "ContractDetails": {"contractId": "C-1"}}, sample_tool())
    {'term_months': 12, 'contract_details': {'contract_id': 'C-1'}}
    """
    return _spelt(arguments, tool.parameters, tool)


def _spelt(value: Any, schema: Schema | None, tool: Tool) -> Any:
    if schema is not None and schema.ref is not None and schema.ref in tool.definitions:
        schema = tool.definitions[schema.ref]
    if isinstance(value, Mapping):
        names = {canonical_name(p.name): p for p in schema.properties} if schema is not None else {}
        out = {}
        for key, item in value.items():
            prop = schema.property(key) if schema is not None else None
            if prop is None and isinstance(key, str) and canonical_name(key) in names:
                found = names[canonical_name(key)]
                key, prop = found.name, found.schema
            out[key] = _spelt(item, prop, tool)
        return out
    if isinstance(value, list):
        items = schema.items if schema is not None else None
        return [_spelt(item, items, tool) for item in value]
    return value


__all__ = ["CallLoop", "Executed", "LoopResult", "LoopStep", "ON_INVALID", "RESULT_HEADER", "STOPPED",
           "schema_spelling"]
