"""The command line: ``toolform-rules validate | parse | grade | replay | check | test | explain | call | guard | pin |
verify | tools | protocols | demo | rules``.

``validate`` checks calls against a toolset and exits 0 (all valid), 1 (any invalid) or
2 (a usage or input error, reported on one line of stderr); ``parse`` reads a model's
reply in one answer protocol and grades its calls (the same exit codes); both take
``--policy``.  ``check`` lints a policy (against ``--tools`` when given), ``test`` runs
policies' tests with coverage, ``explain`` shows every constraint of a policy on one call.
``call`` runs the call loop against a server; ``guard`` scans tools for hidden instructions (``--sarif``
for code scanning), ``pin``/``verify`` lock tools against later changes; ``tools`` prints a toolset
converted to OpenAI, Anthropic or MCP JSON.  ``grade`` grades a file of replies and ``replay`` replays
recorded calls under a new policy, in parallel (:mod:`toolform_rules.batch`).
``protocols`` lists the answer protocols with an example each; ``demo`` runs the bundled
sample; ``rules`` lists a profile's rules, or writes the rule reference as Markdown
(``docs/rules.md`` is this output).

>>> main(["validate", '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", '
...       '"value": 10, "term_months": 12}}'])
legal_draft_v3: valid (profile sdk)
0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import attrs

from .calls import ToolCall, as_call
from .engine.verbs import NORMALISATION_PROFILES, normalize_call, require_validation_profile, validate_arguments
from .errors import PolicyError, ToolformRulesError
from .jsonvalues import loads_noting_duplicates, strict_json
from .schema.export import SHAPES, tools_to_json
from .schema.loaders import KINDS, load_tools
from .engine.report import ValidationReport, format_path
from .engine.rule_files import builtin_rules, load_rules
from .engine.rules import BUCKETS, Rule, RuleSet
from .samples import sample_tool, sample_toolset
from .version import __version__
from .schema.toolset import Toolset

if TYPE_CHECKING:
    from .policy import Policy

PROG = "toolform-rules"
EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
#: The order of the profiles in the rule reference: study before sdk, which extends it.
REFERENCE_ORDER = ("study", "sdk", "jsonschema", *NORMALISATION_PROFILES)


class UsageError(Exception):
    """A command line or an input the CLI cannot use; ``main`` prints it on one line and returns 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def load_policy(source: Any, **options: Any) -> Policy:
    """:func:`toolform_rules.load_policy`, imported when a command first needs a policy.

    The policy machinery (its expression grammar, Lark, RE2) is most of what this command
    line could import; ``validate`` without ``--policy`` never loads it.

    >>> load_policy("policy: p\\nconstraints:\\n  - id: p.cap\\n    check: args.value <= 10\\n").name
    'p'
    """
    from .policy import load_policy as load

    return load(source, **options)


# --- reading calls ----------------------------------------------------------------------------

def read_calls(spec: str) -> tuple[list[Any], bool]:
    """The calls ``spec`` names and whether it held a list: ``-`` is stdin, text starting
    with ``{`` or ``[`` is JSON, anything else a path to a file holding JSON.  A key written
    twice in one object is read as JSON readers do (the last value) and named in a warning:
    a reader that takes the first sees another call.

    >>> read_calls('{"name": "f", "arguments": {}}')
    ([{'name': 'f', 'arguments': {}}], False)
    """
    if spec == "-":
        text, source = sys.stdin.read(), "stdin"
    elif spec.lstrip().startswith(("{", "[")):
        text, source = spec, "CALL"
    else:
        text, source = read_file(spec, "CALL is JSON text, a file holding JSON, or - for stdin"), spec
    try:
        doc, repeated = loads_noting_duplicates(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"{source} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise UsageError(f"{source} is JSON nested too deeply to read") from None
    except ValueError as err:  # an integer longer than Python reads (4,300 digits by default)
        raise UsageError(f"{source} holds a number too long to read: {str(err).split(':')[0]}") from None
    for path, key in repeated:
        print(f"{PROG}: warning: {source}: key {key!r} written twice in {path or 'the top object'}: "
              f"the last value is used (a reader that takes the first sees another call)", file=sys.stderr)
    calls = doc if isinstance(doc, list) else [doc]
    for index, call in enumerate(calls):
        if not isinstance(call, dict):
            where = f"{source} item {index}" if isinstance(doc, list) else source
            raise UsageError(f"{where} is not a call: expected an object with \"name\" and \"arguments\", "
                             f"got {type(call).__name__}")
    return calls, isinstance(doc, list)


def read_file(spec: str, what: str) -> str:
    """The UTF-8 text of the file ``spec`` names; a usage error saying why not (``what``: what the argument may be)."""
    path = _require_file(spec, what)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(f"{spec} is not UTF-8 text (byte {err.start})") from None


def _require_file(spec: str, what: str) -> Path:
    """The path of the file ``spec`` names; a usage error when it names none (``what``: what the argument may be)."""
    if not spec:
        raise UsageError(f"an empty path ({what})")
    path = Path(spec)
    if not path.is_file():
        raise UsageError(f"{spec}: {'is a directory, not a file' if path.is_dir() else 'no such file'} ({what})")
    return path


# --- rendering reports ------------------------------------------------------------------------

def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _columns(rows: Iterable[Sequence[str]], indent: str) -> list[str]:
    rows = [list(r) for r in rows]
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [indent + "  ".join([c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]).rstrip() for r in rows]


def render_report(name: Any, report: ValidationReport, *, profile: str, tools: Toolset | None = None) -> str:
    """A report as text: the verdict, each non-empty bucket's messages, then each finding's
    rule, path and the ``file:line`` that declared the rule.

    >>> report = validate_arguments({"name": "legal_draft_v3", "arguments": {"counterparty": "Acme",
    ...                              "value": -5, "term_months": 12}}, sample_toolset())
    >>> print(render_report("legal_draft_v3", report, profile="sdk"))
    legal_draft_v3: invalid, 1 error (profile sdk)
      constraint_errors  value: -5 < minimum 0
      rules that fired:
        study.minimum  at value  rules/study.yaml:...
    """
    shown = name if isinstance(name, str) else strict_json(name)
    tool = tools.get(name) if tools is not None else None
    if tool is not None and tool.name != name:
        shown = f"{shown} -> {tool.name}"
    warnings = [f"  warning  {f.message}  ({f.rule}, {f.source})" for f in report.warnings]
    if report.ok:
        return "\n".join([f"{shown}: valid (profile {profile})", *warnings])
    lines = [f"{shown}: invalid, {_plural(report.n_errors, 'error')} (profile {profile})"]
    findings = sorted(report.findings, key=lambda f: BUCKETS.index(f.bucket))
    rows: list[tuple[str, str]] = []
    for bucket in BUCKETS:
        messages = [f.message for f in findings if f.bucket == bucket]
        rows.extend((bucket if i == 0 else "", m) for i, m in enumerate(messages))
    lines += _columns(rows, "  ")
    lines.append("  rules that fired:")
    lines += _columns(((f.rule, f"at {format_path(f.path)}", f.source) for f in findings), "    ")
    return "\n".join(lines + warnings)


# --- validate ---------------------------------------------------------------------------------

def _tools(args: argparse.Namespace) -> Toolset:
    tools = sample_toolset() if args.tools is None else load_tools(args.tools, kind=args.kind)
    for warning in tools.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    return tools


def _policy(args: argparse.Namespace, tools: Toolset | None) -> Policy | None:
    """``--policy``, checked against the tools in use."""
    return load_policy(args.policy, tools=tools) if getattr(args, "policy", None) else None


def _rules(args: argparse.Namespace) -> RuleSet | None:
    """The rule set of ``--rules`` (the built-in rules and the user's), checked against ``--profile``."""
    ruleset = load_rules(*args.rules) if getattr(args, "rules", None) else None
    profile = getattr(args, "profile", None)
    if profile is not None:
        require_validation_profile(profile, ruleset)
    return ruleset


def cmd_validate(args: argparse.Namespace) -> int:
    ruleset = _rules(args)
    tools = _tools(args)
    policy = _policy(args, tools)
    calls, many = read_calls(args.call)
    if args.decisions:
        from .policy.records import DecisionLog

        with DecisionLog(args.decisions, policy=policy, mask=args.mask or (), profile=args.profile,
                         rules=ruleset) as log:
            reports = [log.check(call, tools) for call in calls]
    else:
        reports = [validate_arguments(call, tools, profile=args.profile, rules=ruleset, policy=policy)
                   for call in calls]
    if args.json:
        docs = [r.to_json() for r in reports]
        print(_json(docs if many else docs[0]))
    else:
        blocks = []
        for index, (call, report) in enumerate(zip(calls, reports)):
            text = render_report(as_call(call)[0], report, profile=args.profile, tools=tools)
            blocks.append(f"call {index}: {text}" if many else text)
        if many:
            bad = sum(not r.ok for r in reports)
            blocks.append(f"{_plural(len(reports), 'call')}: {len(reports) - bad} valid, {bad} invalid")
        print("\n\n".join(blocks))
    return EXIT_VALID if all(r.ok for r in reports) else EXIT_INVALID


# --- parse and protocols ---------------------------------------------------------------------

def read_text(spec: str | None) -> str:
    """A reply's text: from a file, or stdin for ``-`` (or nothing)."""
    if spec in (None, "-"):
        return sys.stdin.read()
    path = _require_file(spec, "FILE is a file holding the reply, or - for stdin")
    return path.read_text(encoding="utf-8", errors="replace")


def render_loop(result: Any) -> str:
    """A call loop's run as readable lines: each step's reply, its calls' verdicts, what ran, what went back."""
    lines: list[str] = []
    for number, step in enumerate(result.steps, start=1):
        lines.append(f"step {number}: the model wrote")
        lines.append(_indent(step.reply or "(no text)", "  | "))
        if step.reasoning:
            lines.append(f"  (reasoning kept apart: {len(step.reasoning)} characters)")
        lines.append(_indent(render_reply(step.parsed), "  "))
        for executed in step.executed:
            outcome = f"-> {_dump(executed.result)}" if executed.ok else f"failed: {executed.error}"
            lines.append(f"  ran {executed.name}({_dump(executed.arguments)}) {outcome}")
        for line in step.feedback:
            lines.append(f"  sent back: {line}")
    ending = f"stopped: {result.stopped}"
    if result.error:
        ending += f" ({result.error})"
    lines.append(ending)
    if result.final_text:
        lines.append(f"final answer: {result.final_text}")
    return "\n".join(lines)


def render_reply(reply: Any) -> str:
    """A parsed reply as readable lines: each call with its verdict, what was refused, the notes."""
    head = f"{reply.protocol_id} (rule {reply.rule}): {'ok' if reply.ok else 'not ok'}"
    if reply.matched_syntax and reply.matched_syntax != reply.protocol_id:
        head += f", read with {reply.matched_syntax}'s syntax"
    lines = [head]
    for call in reply.calls:
        shown = call.name if call.resolved_name in (None, call.name) else f"{call.name} -> {call.resolved_name}"
        verdict = "valid" if call.valid else "invalid"
        lines.append(f"  call {shown}: {verdict}  {_dump(call.arguments)}")
        for repair in call.repairs:
            lines.append(f"    repair: {repair}")
        if call.report is not None:
            for finding in call.report.findings:
                lines.append(f"    {finding.bucket}: {finding.message}  ({finding.rule}, {finding.source})")
            for finding in call.report.warnings:
                lines.append(f"    warning: {finding.message}  ({finding.rule}, {finding.source})")
    for call in reply.rejected:
        lines.append(f"  refused {call.name}: {call.reason}")
    flags = [name for name in ("no_call_declared", "reasoning_removed") if getattr(reply, name)]
    if reply.hallucinated:
        lines.append(f"  hallucinated: {', '.join(reply.hallucinated)}")
    if flags:
        lines.append(f"  {', '.join(flags)}")
    if not reply.calls and not reply.rejected:
        lines.append("  no call found")
    if reply.note:
        lines.append(f"  note: {reply.note}")
    return "\n".join(lines)


def cmd_parse(args: argparse.Namespace) -> int:
    from .replies import parse_reply

    ruleset = _rules(args)
    tools = _tools(args)
    reply = parse_reply(read_text(args.file), tools, args.protocol, rule=args.rule,
                        lenient_fallback=args.lenient, profile=args.profile, rules=ruleset,
                        policy=_policy(args, tools))
    print(_json(reply.to_dict()) if args.json else render_reply(reply))
    return EXIT_VALID if reply.ok else EXIT_INVALID


# --- policies ---------------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> int:
    tools = load_tools(args.tools, kind=args.kind) if args.tools else None
    _require_file(args.policy, "POLICY is a policy file")  # (no file: nothing to lint, not a policy with problems)
    try:
        policy = load_policy(args.policy, tools=tools)
    except PolicyError as err:
        if args.json:
            print(_json({"ok": False, "problems": [
                {"source": p.source, "line": p.line, "column": p.column, "field": p.field, "message": p.message}
                for p in err.problems]}))
        else:
            print(err, file=sys.stderr)
        return EXIT_INVALID
    summary = {"ok": True, "policy": policy.name, "version": policy.version, "sha256": policy.digest,
               "files": [f.path for f in policy.files], "constraints": len(policy.constraints),
               "lists": len(policy.lists), "tests": len(policy.tests), "checked_against_tools": tools is not None}
    if args.json:
        print(_json(summary))
    else:
        against = f", checked against {_plural(len(tools.tools), 'tool')}" if tools is not None else \
            " (no --tools: arguments and kinds not checked)"
        print(f"{policy.name} v{policy.version}: {_plural(len(policy.constraints), 'constraint')}, "
              f"{_plural(len(policy.lists), 'list')}, {_plural(len(policy.tests), 'test')} in "
              f"{_plural(len(policy.files), 'file')}; no problems{against}\nsha256 {policy.digest}")
    return EXIT_VALID


def cmd_test(args: argparse.Namespace) -> int:
    from .policy.testing import run_tests

    run = run_tests(args.paths, tools=load_tools(args.tools, kind=args.kind) if args.tools else None)
    print(_json(run.to_dict()) if args.json else run.render())
    if not run.results and not run.errors:
        print(f"{PROG}: no policy tests found", file=sys.stderr)
        return EXIT_INVALID
    uncovered = any(c.never_exercised for c in run.coverage)
    return EXIT_VALID if run.ok and not (args.require_coverage and uncovered) else EXIT_INVALID


def cmd_explain(args: argparse.Namespace) -> int:
    from .policy.explain import explain

    tools = _tools(args)
    policy = load_policy(args.policy, tools=tools)
    calls, many = read_calls(args.call)
    explanations = [explain(call, policy, tools) for call in calls]
    if args.json:
        docs = [e.to_dict() for e in explanations]
        print(_json(docs if many else docs[0]))
    else:
        print("\n\n".join(e.render() for e in explanations))
    return EXIT_VALID


def native_markdown() -> str:
    """The model-native formats' reference of ``docs/protocols.md``: generated from the catalogue."""
    from .protocols import get_protocol, protocol_ids

    out: list[str] = []
    for protocol_id in protocol_ids("native"):
        protocol = get_protocol(protocol_id)
        entry = protocol.entry  # type: ignore[attr-defined]
        aliases = ", ".join(f"`{a}`" for a in entry.aliases) or "none"
        values = "text, typed from the tool's schema" if protocol.info.text_values else "JSON"
        out += [f"### `{protocol_id}` — {entry.name}", "", entry.description, "",
                f"- aliases: {aliases}; values: {values}; entry: `rules/native/formats.yaml` line {entry.line}", "",
                "```text", protocol.render_calls([DEMO_NESTED_CALL]), "```", ""]
    return "\n".join(out).rstrip() + "\n"


def protocols_markdown() -> str:
    """The per-protocol reference of ``docs/protocols.md``: generated from the registry."""
    import inspect

    from .protocols import get_protocol, protocol_ids

    out: list[str] = []
    for protocol_id in protocol_ids():
        protocol = get_protocol(protocol_id)
        info = protocol.info
        module = inspect.getmodule(type(protocol))
        doc = inspect.cleandoc(module.__doc__ or "") if module is not None else ""
        body = doc.split("\n\n", 1)[1].strip() if "\n\n" in doc else ""
        # the reference shows what each module says it tolerates; its doctest examples stay in the module
        body = "\n\n".join(part for part in body.split("\n\n") if ">>>" not in part)
        values = "text, typed from the tool's schema" if info.text_values else "typed by the syntax itself"
        out += [f"### `{protocol_id}` — {info.name}", "", info.description, "",
                f"- grammar: [`grammars/{protocol_id}.lark`](../grammars/{protocol_id}.lark); "
                f"module: `toolform_rules/protocols/{protocol_id}.py`",
                f"- values: {values}; several calls in one reply: {'yes' if info.parallel else 'no'}", ""]
        if body:
            out += [body, ""]
        out += ["```text", protocol.render_calls([DEMO_NESTED_CALL]), "```", ""]
    return "\n".join(out).rstrip() + "\n"


def cmd_protocols(args: argparse.Namespace) -> int:
    from .protocols import get_protocol, protocol_ids

    if args.markdown:
        print(native_markdown() if args.native else protocols_markdown(), end="")
        return EXIT_VALID
    call = DEMO_PROTOCOL_CALL
    blocks = []
    for protocol_id in protocol_ids("native" if args.native else "study"):
        protocol = get_protocol(protocol_id)
        blocks.append(f"{protocol_id}: {protocol.info.description}\n{_indent(protocol.example(call), '    ')}")
    print("\n\n".join(blocks))
    return EXIT_VALID


# --- demo -------------------------------------------------------------------------------------

#: The demo's calls: (what it shows, the call, the profiles it is validated under).
DEMO_CALLS: tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...] = (
    ("A valid call",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 12000, "term_months": 24}},
     ("sdk",)),
    ("The seed's invalid call: a negative value, a word for a number, an undeclared argument",
     {"name": "legal_draft_v3",
      "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}},
     ("sdk",)),
    ("A title-cased tool name and a camelCase argument: names resolve across naming conventions",
     {"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", "value": 10, "termMonths": 12}},
     ("sdk",)),
    ("A required argument left out",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10}},
     ("sdk",)),
    ("A nested value outside its enum",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12,
                                              "contract_details": {"status": "approved"}}},
     ("sdk",)),
    ("A tool the toolset does not have",
     {"name": "send_payment", "arguments": {"to": "acme", "amount": 10}},
     ("sdk",)),
    ("An integral float for an integer: sdk accepts 12.0, the study's validator does not",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12.0}},
     ("sdk", "study")),
)

#: The call ``protocols`` and the demo render in every answer protocol.
DEMO_PROTOCOL_CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 12000, "term_months": 24})

#: The call each protocol's reference entry renders: a nested object and a string that needs quoting.
DEMO_NESTED_CALL = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                               "auto_renew": True,
                                               "contract_details": {"contract_id": "C-1", "status": "draft"}})

#: Replies the demo parses: (protocol, the reply a model wrote).
DEMO_REPLIES: tuple[tuple[str, str], ...] = (
    ("json_object", 'Sure, drafting it now: {"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", '
                    '"value": 12000, "termMonths": 24}}'),
    ("python_call", "<think>The user wants a 2-year contract.</think>\n"
                    'legal_draft_v3(counterparty="Acme", value=-5, term_months=24)'),
    ("cli_call", "legal_draft_v3 --counterparty Acme --value 12000 --term-months 24 --auto-renew"),
    ("xml_call", '<function_calls><invoke name="legal_draft_v3"><parameter name="counterparty">Acme</parameter>'
                 '<parameter name="value">12000</parameter><parameter name="term_months">ten</parameter>'
                 "</invoke></function_calls>"),
)

#: The demo's sloppy call, shown before and after normalize_call.
DEMO_POLICY_CALLS = [
    {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 250000, "term_months": 36}},
    {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 9000, "term_months": 48,
                                             "autoRenew": True}},
]
DEMO_SLOPPY = {"name": "legal_draft_v3",
               "arguments": {"counterparty": " Acme ", "value": "5", "term_months": 12, "auto_renew": "yes"}}


def _dump(value: Any) -> str:
    return strict_json(value, ensure_ascii=False)


def _json(value: Any) -> str:
    """What ``--json`` prints: strict JSON (no NaN, lone surrogates escaped), indented."""
    return strict_json(value, indent=2, ensure_ascii=False)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def cmd_demo(args: argparse.Namespace) -> int:
    tools = sample_toolset()
    out = [f"{PROG} demo: calls checked against legal_draft_v3, the study's sample tool.", ""]
    number = 0
    for number, (title, call, profiles) in enumerate(DEMO_CALLS, start=1):
        out.append(f"{number}. {title}")
        out.append(f"   call: {_dump(call)}")
        for profile in profiles:
            report = validate_arguments(call, tools, profile=profile)
            out.append(_indent(render_report(call["name"], report, profile=profile, tools=tools), "   "))
        out.append("")
    number += 1
    out.append(f"{number}. normalize_call: the values the study compared after normalising")
    out.append(f"   call:       {_dump(DEMO_SLOPPY)}")
    as_written = validate_arguments(DEMO_SLOPPY, tools)
    out.append(f"   as written: {'valid' if as_written.ok else 'invalid'} "
               f"({'; '.join(f.message for f in as_written.findings) or 'no errors'})")
    for strictness in NORMALISATION_PROFILES:
        normalised = normalize_call(DEMO_SLOPPY, sample_tool(), strictness)
        verdict = "valid" if validate_arguments(normalised, tools).ok else "invalid"
        out.append(f"   {strictness + ':':11} {_dump(normalised.arguments)}  ({verdict})")
    out.append("")
    from .replies import parse_reply

    for protocol_id, text in DEMO_REPLIES:
        number += 1
        out.append(f"{number}. A reply in {protocol_id}")
        out.append(_indent(text, "   | "))
        out.append(_indent(render_reply(parse_reply(text, tools, protocol_id)), "   "))
        out.append("")
    number += 1
    out.extend(_demo_loop(number, tools))
    number += 1
    out.extend(_demo_policy(number, tools))
    out.append(f"Try one yourself: {PROG} validate '{_dump(DEMO_CALLS[1][1])}'")
    out.append(f"              or: echo 'legal_draft_v3(counterparty=\"Acme\", value=1, term_months=2)' | "
               f"{PROG} parse --protocol python_call")
    print("\n".join(out))
    return EXIT_VALID


#: the demo's scripted model: a call the validator refuses, the same call repaired after the feedback, an answer
DEMO_LOOP_REPLIES = (
    '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 12000, "term_months": "two years"}}',
    '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 12000, "term_months": 24}}',
    "Drafted: contract C-1042 with Acme, 24 months, 12,000.",
)


def _demo_loop(number: int, tools: Toolset) -> list[str]:
    """The demo's call loop: a scripted model (StubClient) repairs its call after the validator's feedback."""
    from .clients import StubClient
    from .loop import CallLoop

    def draft(**arguments: Any) -> dict[str, Any]:
        return {"contract_id": "C-1042", "status": "draft", "months": arguments["term_months"]}

    result = CallLoop(StubClient(DEMO_LOOP_REPLIES), tools, executors={"legal_draft_v3": draft}).run(
        "Draft a two-year contract with Acme worth 12,000.")
    return [f"{number}. The call loop (on_invalid=\"feedback\"): a scripted model repairs its call after feedback",
            _indent(render_loop(result), "   "), ""]


def _demo_policy(number: int, tools: Toolset) -> list[str]:
    """The demo's last step: calls the schema accepts, decided by the example policy for the sample tool."""
    from .policy.explain import explain
    from .engine.rule_files import rules_directory

    path = rules_directory() / "examples" / "contracts.yaml"
    relative = os.path.relpath(path)  # findings name the file as it was given: short from the checkout
    policy = load_policy(relative if not relative.startswith("..") else path, tools=tools)
    shown = f"rules/examples/{path.name}"
    out = [f"{number}. A policy: {shown} (v{policy.version}, sha256 {policy.digest[:12]}...), "
           f"{_plural(len(policy.constraints), 'constraint')} the schema cannot say"]
    for call in DEMO_POLICY_CALLS:
        report = validate_arguments(call, tools, policy=policy)
        out.append(f"   call: {_dump(call)}")
        out.append(f"   schema: {'valid' if validate_arguments(call, tools).ok else 'invalid'}; with the policy:")
        out.append(_indent(render_report(call["name"], report, profile="sdk", tools=tools), "   "))
    out.append(f"   {PROG} explain {shown} CALL shows why; for the first call:")
    lines = explain(DEMO_POLICY_CALLS[0], policy, tools).render().splitlines()[1:]
    first = lines[:next((i for i, line in enumerate(lines[1:], 1) if not line.startswith(" ")), len(lines))]
    out.extend(f"   {line}" for line in first)
    out.append("")
    return out


# --- rules ------------------------------------------------------------------------------------

def _rule_row(rule: Rule) -> tuple[str, ...]:
    return (rule.id, rule.phase, rule.bucket or "-", str(rule.source), rule.message or "")


def cmd_rules(args: argparse.Namespace) -> int:
    ruleset = load_rules(*args.rules) if args.rules else builtin_rules()
    if args.markdown:
        names = [args.profile] if args.profile else None
        sys.stdout.write(rules_markdown(ruleset, names))
        return EXIT_VALID
    name = args.profile or "sdk"
    rules = ruleset.profile_rules(name)  # raises UnknownProfileError, naming the known ones
    profile = ruleset.profiles[name]
    head = f"profile {name} ({profile.source})"
    if profile.description:
        head += f": {profile.description}"
    print(head)
    extends = f"extends {profile.extends}; " if profile.extends else ""
    print(f"{extends}{_plural(len(rules), 'rule')}, in the order they run:")
    print("\n".join(_columns([("id", "phase", "bucket", "source", "message")] + [_rule_row(r) for r in rules],
                             "  ")))
    return EXIT_VALID


def _profile_order(ruleset: RuleSet) -> list[str]:
    ordered = [n for n in REFERENCE_ORDER if n in ruleset.profiles]
    return ordered + [n for n in ruleset.profile_names() if n not in ordered]


#: Rule fields the reference shows in its own words when they are set.
_FLAG_WORDS = {"halts": "halts (later rules skip a value it rejects)",
               "unconditional": "unconditional (runs even after a halting rule rejected the value)"}
#: Rule fields the reference shows on lines of their own (or not at all).
_SHOWN_APART = frozenset({"id", "op", "phase", "bucket", "message", "options", "description", "source"})


def _md_rule(rule: Rule) -> list[str]:
    facts = [f"phase `{rule.phase}`", f"op `{rule.op}`"]
    if rule.bucket:
        facts.append(f"bucket `{rule.bucket}`")
    for field in attrs.fields(Rule):  # any further field set to other than its default
        value = getattr(rule, field.name)
        default = field.default.factory() if isinstance(field.default, attrs.Factory) else field.default  # type: ignore[arg-type, union-attr]
        if field.name in _SHOWN_APART or value == default:
            continue
        facts.append(_FLAG_WORDS[field.name] if value is True and field.name in _FLAG_WORDS
                     else f"{field.name} `{value}`")
    lines = [f"### `{rule.id}`", "", "- " + ", ".join(facts)]
    if rule.message is not None:
        lines.append(f"- message: `{rule.message}`")
    options = _options_set(rule)
    if options:
        lines.append("- options: " + ", ".join(f"`{k}: {_md_value(v)}`" for k, v in options.items()))
    lines.append(f"- source: `{rule.source}`")
    description = " ".join(rule.description.split())
    if description:
        lines += ["", description]
    return lines + [""]


def _options_set(rule: Rule) -> dict[str, Any]:
    """The options ``rule`` sets to other than its operation's defaults (loading filled in the rest)."""
    from .engine.operations import operation_of

    operation = operation_of(rule.phase, rule.op)
    if operation is None:
        return dict(rule.options)
    defaults = {option.name: option.default for option in operation.options}
    return {k: v for k, v in rule.options.items() if k not in defaults or v != defaults[k]}


def _md_value(value: Any) -> str:
    """A YAML value as JSON text (a tuple as a list)."""
    return strict_json(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)


def _md_cell(text: str) -> str:
    """Text for a Markdown table cell: a ``|`` would end the cell."""
    return text.replace("|", "\\|")


def operations_markdown() -> list[str]:
    """The operations section of the rule reference: every registered operation, its options and fields."""
    from .engine.operations import REGISTRY

    out = ["## Operations", "",
           "Every operation a rule may name as `op`, registered in `toolform_rules/engine/operations.py` and",
           "declared beside its function, with the options a rule may give it (`options:`) and the fields",
           "its findings fill in the rule's `message`. Loading a rule file refuses an option its operation",
           "does not declare (suggesting the closest name), a value of another type, a required option",
           "left out, and a message field the operation does not fill. The rules above show only the",
           "options they set to other than the default.", ""]
    for phase, title in (("validate", "Validation operations"), ("normalise", "Normalisation operations")):
        out += [f"### {title}", ""]
        for name, operation in REGISTRY[phase].items():
            out += [f"#### `{name}`", ""]
            if operation.doc:
                out += [operation.doc.replace("``", "`"), ""]
            facts = []
            if phase == "validate":
                facts.append("message fields: " + ", ".join(f"`{{{f}}}`" for f in sorted(operation.message_fields)))
            if operation.acts_on == "call":
                facts.append("acts on a call whose name resolves to no tool, not on a schema node")
            if operation.subsumes:
                facts.append("subsumes " + ", ".join(f"`{o}`" for o in operation.subsumes)
                             + " (takes over its work at a node where it can, in the same walk)")
            if operation.consults:
                facts.append("consults " + ", ".join(f"`{o}`" for o in operation.consults)
                             + " (whether the profile also runs it)")
            if operation.changes is not None:
                changed = (", ".join(f"`{t.__name__}`" for t in operation.changes) + " values only" if operation.changes
                           else "no value itself, only rebuilds a container whose child changed")
                if operation.changes and operation.changes_only is not None:
                    changed += f", those `{operation.changes_only.__qualname__}` holds for"
                if operation.changes_with:
                    changed += ("; any value when a rule sets " + " or ".join(f"`{o}`" for o in operation.changes_with)
                                + " other than its default")
                facts.append("changes " + changed + " (a profile whose rules repair only rejected values normalises "
                             "a failing call only when a reported value holds what they change)")
            if not operation.options:
                facts.append("options: none")
            out += [f"- {fact}" for fact in facts]
            if not operation.options:
                out.append("")
                continue
            if facts:
                out.append("")
            out += ["| option | type | default | what it does |", "|---|---|---|---|"]
            for option in operation.options:
                kind = option.kind
                if option.template_fields is not None:
                    kind += " (fields " + ", ".join(f"`{{{f}}}`" for f in sorted(option.template_fields)) + ")"
                default = "required" if option.required else f"`{_md_value(option.default)}`"
                out.append(f"| `{option.name}` | {_md_cell(kind)} | {_md_cell(default)} | {_md_cell(option.doc)} |")
            out.append("")
    return out


def rules_markdown(ruleset: RuleSet | None = None, names: list[str] | None = None) -> str:
    """The rule reference (``docs/rules.md``): every rule, grouped by the profile that lists it, then
    every operation with its options (the whole reference only)."""
    ruleset = ruleset or builtin_rules()
    whole = names is None
    names = _profile_order(ruleset) if names is None else names
    for name in names:
        ruleset.profile_rules(name)  # an unknown name raises UnknownProfileError
    out = []
    if whole:
        out += [
            "# Rule reference",
            "",
            "<!-- Generated from rules/*.yaml by `python tools/gen_docs.py` (or",
            "     `toolform-rules rules --markdown`). Do not edit by hand: tests/test_docs.py",
            "     fails when this file differs from the generated text. -->",
            "",
            "Every built-in rule, grouped by the profile that lists it, in the order the profile runs",
            "them. A rule's `source` is the file and line that declare it; every finding a rule makes",
            "carries that same `source`. See [profiles.md](profiles.md) for what the profiles are for.",
            "The operations the rules name, with the options each declares, are listed at the end",
            "([Operations](#operations)).",
            "",
            "Profiles: " + ", ".join(f"`{n}`" for n in names) + ".",
            "",
        ]
    described: dict[str, str] = {}
    for name in names:
        profile = ruleset.profiles[name]
        out += [f"## Profile `{name}`", ""]
        if profile.description:
            out += [" ".join(profile.description.split()), ""]
        out.append(f"Declared at `{profile.source}`.")
        if profile.extends:
            base = len(ruleset.profile_rules(profile.extends))
            out.append(f"Extends `{profile.extends}`: its {_plural(base, 'rule')} run first, then the ones below.")
        for old, new in profile.replace.items():
            out.append(f"Replaces `{old}` with `{new}`.")
        out.append("")
        own = [*profile.replace.values(), *profile.rules]
        for rule_id in own:
            if rule_id in described:
                out += [f"### `{rule_id}`", "", f"As in profile `{described[rule_id]}` "
                        f"(`{ruleset.rules[rule_id].source}`).", ""]
                continue
            described[rule_id] = name
            out += _md_rule(ruleset.rules[rule_id])
    if whole:
        unlisted = [r for r in ruleset.rules.values() if r.id not in described]
        if unlisted:
            out += ["## Rules no profile lists", ""]
            for rule in unlisted:
                out += _md_rule(rule)
        out += operations_markdown()
    return "\n".join(out).rstrip("\n") + "\n"


# --- tools ------------------------------------------------------------------------------------

#: what every --tools takes
TOOLS_INPUTS = ("a JSON or JSON Lines file (or JSON text) in the OpenAI, Anthropic, MCP or BFCL shape, a Python file "
                "(.py) or module name whose functions are the tools, or a TypeScript file (.ts, .d.ts)")
TOOLS_SAFETY = "A Python file or module is imported to read it, which runs its code; JSON and TypeScript never are."


def _tools_arguments(command: argparse.ArgumentParser, default: str) -> None:
    """``--tools`` and ``--kind``, alike in every command that reads tools."""
    command.add_argument("--tools", metavar="T", help=f"the tools: {TOOLS_INPUTS} {default}. {TOOLS_SAFETY}")
    command.add_argument("--kind", choices=KINDS, default="auto", help="what the tools are written in (default: auto)")


def _profile_arguments(command: argparse.ArgumentParser) -> None:
    """``--profile`` and ``--rules``, alike in every command that validates."""
    command.add_argument("--profile", default="sdk",
                         help="the validation profile: sdk (default), study, jsonschema, or one of --rules")
    command.add_argument("--rules", metavar="FILE", action="append", default=[],
                         help="also read these rule files (or folders of them), whose profiles may extend "
                              "the built-in ones (repeatable)")


def _batch_common(command: argparse.ArgumentParser) -> None:
    """``--tools``, ``--kind``, ``--profile`` and ``--rules`` of ``grade`` and ``replay``."""
    _tools_arguments(command, '(default: each record\'s own "tools")')
    _profile_arguments(command)


def cmd_call(args: argparse.Namespace) -> int:
    from .loop import CallLoop

    tools = sample_toolset() if args.tools is None else load_tools(args.tools, kind=args.kind)
    policy = load_policy(args.policy) if args.policy else None
    client = chat_client(args.provider, args.model, base_url=args.base_url, timeout=args.timeout,
                         api_key_env=args.api_key_env)
    if args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    loop = CallLoop(client, tools, protocol=args.protocol, native=args.native, on_invalid=args.on_invalid,
                    max_steps=args.max_steps, policy=policy)
    result = loop.run(args.request)
    print(_json(result.to_dict()) if args.json else render_loop(result))
    return EXIT_VALID if result.stopped == "no_call" else EXIT_INVALID


def chat_client(provider: str, model: str, *, base_url: str | None, timeout: float, api_key_env: str | None) -> Any:
    """An ``OpenAIChat`` or ``AnthropicChat`` over the provider's SDK (an optional extra: a usage error without it)."""
    variable = api_key_env or ("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY")
    key = os.environ.get(variable) or "none"  # a local server takes any key
    try:
        if provider == "anthropic":
            import anthropic

            from .clients.anthropic_chat import AnthropicChat

            return AnthropicChat(anthropic.Anthropic(base_url=base_url, api_key=key, timeout=timeout, max_retries=1),
                                 model)
        import openai

        from .clients.openai_chat import OpenAIChat

        return OpenAIChat(openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=1), model)
    except ImportError:
        raise UsageError(f"the {provider} SDK is not installed: pip install 'toolform-rules[{provider}]'") from None


def cmd_guard(args: argparse.Namespace) -> int:
    from .guard import clean_toolset, scan_toolset

    toolset = load_tools(args.source, kind=args.kind)
    report = scan_toolset(toolset, strictness=args.strictness)
    if args.clean:
        cleaned, _ = clean_toolset(report, toolset, action=args.action)
        Path(args.clean).write_text(_json(cleaned.to_mcp()) + "\n",
                                    encoding="utf-8")
    if args.sarif:
        from .guard.sarif import to_sarif

        source = args.source if isinstance(args.source, str) and Path(args.source).is_file() else None
        print(_json(to_sarif(report, source=source)))
    elif args.json:
        print(_json(report.to_dict()))
    else:
        print(render_guard(report))
    return EXIT_INVALID if report.findings else EXIT_VALID


def render_guard(report: Any) -> str:
    """A guard report as readable lines: each finding with its rule, severity, place and text."""
    if not report.findings:
        return f"no findings (strictness {report.strictness})"
    lines = [f"{len(report.findings)} findings in {len(report.flagged_tools)} tools (strictness {report.strictness})"]
    for finding in report.findings:
        lines.append(f"  {finding.rule_id} {finding.severity:6} {finding.tool} {finding.field} "
                     f"[{finding.start}:{finding.end}] {finding.excerpt!r}")
        lines.append(f"      {finding.message}  ({finding.source})")
    return "\n".join(lines)


def cmd_pin(args: argparse.Namespace) -> int:
    from .guard.pin import pin_command

    print(pin_command(args.source, kind=args.kind), end="")
    return EXIT_VALID


def cmd_verify(args: argparse.Namespace) -> int:
    from .guard.pin import verify_command

    code, text = verify_command(args.source, args.lock, kind=args.kind)
    print(text, end="" if text.endswith("\n") else "\n")
    return code


def cmd_tools(args: argparse.Namespace) -> int:
    toolset = load_tools(args.source, kind=args.kind)
    for warning in toolset.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    print(_json(tools_to_json(toolset.tools, args.to)))
    return EXIT_VALID


# --- entry point ------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``toolform-rules``."""
    parser = _Parser(prog=PROG, description="Decide whether a language model's tool call fits its tool.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    validate = commands.add_parser(
        "validate", help="validate one call or a list of calls",
        description="Validate calls; exit 0 when every call is valid, 1 when any is invalid, 2 on an input error.")
    validate.add_argument("call", metavar="CALL",
                          help='a call as JSON ({"name": ..., "arguments": {...}}) or a list of calls; '
                               "a file holding that JSON; or - to read it from stdin")
    _tools_arguments(validate, "(default: the bundled sample, legal_draft_v3)")
    _profile_arguments(validate)
    validate.add_argument("--json", action="store_true", help="print the report(s) as JSON, with the findings")
    validate.add_argument("--policy", metavar="POLICY", help="also apply this policy's constraints (a YAML file)")
    validate.add_argument("--decisions", metavar="FILE",
                          help="append one decision record per call to FILE (JSON Lines)")
    validate.add_argument("--mask", metavar="PATH", action="append",
                          help="an argument path (args.x.y) whose value never reaches the decision records; "
                               "repeatable")
    validate.set_defaults(run=cmd_validate)

    demo = commands.add_parser("demo", help="validate the bundled sample's right and wrong calls",
                               description="Validate right and wrong calls against the bundled sample tool.")
    demo.set_defaults(run=cmd_demo)

    parse = commands.add_parser(
        "parse", help="read a model's reply in an answer protocol and grade its calls",
        description="Parse a reply; exit 0 when it holds calls and every one is valid, 1 otherwise, 2 on an "
                    "input error.")
    parse.add_argument("file", metavar="FILE", nargs="?", default="-",
                       help="a file holding the reply's text, or - for stdin (default)")
    parse.add_argument("--protocol", "-p", required=True, metavar="P",
                       help="the answer protocol (see: toolform-rules protocols)")
    _tools_arguments(parse, "(default: the bundled sample, legal_draft_v3)")
    parse.add_argument("--rule", choices=("main", "symmetric", "as_written"), default="main",
                       help="the grading rule (default: main)")
    parse.add_argument("--lenient", action="store_true",
                       help="when the protocol finds nothing, read any protocol's syntax")
    _profile_arguments(parse)
    parse.add_argument("--json", action="store_true", help="print the parsed reply as JSON")
    parse.add_argument("--policy", metavar="POLICY", help="also apply this policy's constraints (a YAML file)")
    parse.set_defaults(run=cmd_parse)

    check = commands.add_parser(
        "check", help="lint a policy file (against the tools, with --tools)",
        description="Read and check a policy; exit 0 when it has no problems, 1 when it has (all listed, each with "
                    "file, line, column and a caret), 2 on a usage error.")
    check.add_argument("policy", metavar="POLICY", help="the policy file")
    _tools_arguments(check, "(tool names, arguments and kinds are checked against them)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.set_defaults(run=cmd_check)

    test = commands.add_parser(
        "test", help="run policies' tests, with coverage",
        description="Run the tests: blocks of policy files (and <stem>_test.yaml files beside them); exit 0 when "
                    "every test passes, 1 otherwise.")
    test.add_argument("paths", metavar="PATH", nargs="+", help="policy files, test files or directories")
    _tools_arguments(test, "(for the files that name no toolset)")
    test.add_argument("--json", action="store_true", help="print the results as JSON")
    test.add_argument("--require-coverage", action="store_true",
                      help="also fail when a constraint is exercised by no test")
    test.set_defaults(run=cmd_test)

    explain = commands.add_parser(
        "explain", help="show every constraint of a policy on one call, with each sub-expression's value",
        description="Evaluate a policy on a call and show, for each constraint, whether it applied, held or "
                    "fired, and the value of every sub-expression.")
    explain.add_argument("policy", metavar="POLICY", help="the policy file")
    explain.add_argument("call", metavar="CALL", help="a call as JSON, a file holding it, or - for stdin")
    _tools_arguments(explain, "(default: the bundled sample, legal_draft_v3)")
    explain.add_argument("--json", action="store_true", help="print the explanation as JSON")
    explain.set_defaults(run=cmd_explain)

    protocols = commands.add_parser("protocols", help="list the answer protocols, with an example each",
                                    description="List the answer protocols, each with an example call.")
    protocols.add_argument("--markdown", action="store_true",
                           help="write the per-protocol reference (the generated part of docs/protocols.md)")
    protocols.add_argument("--native", action="store_true",
                           help="the model-native formats of the catalogue (rules/native/formats.yaml) instead")
    protocols.set_defaults(run=cmd_protocols)

    call = commands.add_parser(
        "call", help="run the call loop against an OpenAI-compatible (or Anthropic) server",
        description="Ask a model (any server that speaks OpenAI's Chat Completions: vLLM, llama.cpp, Ollama, ...; "
                    "or Anthropic's Messages API with --provider anthropic) to answer REQUEST with the tools; "
                    "validate every call before it runs, feed results back, and print each step. Exit 0 when the "
                    "model answered without a call, 1 when the run stopped otherwise (invalid_call, max_steps, "
                    "dry_run, error), 2 on a usage or input error. " + TOOLS_SAFETY)
    call.add_argument("request", metavar="REQUEST", help="the user's request")
    _tools_arguments(call, "(default: the bundled sample, legal_draft_v3, which has no executor: a dry run)")
    call.add_argument("--base-url", metavar="URL", help="the server's base URL (e.g. http://127.0.0.1:8000/v1)")
    call.add_argument("--model", "-m", required=True, metavar="M", help="the model's name on the server")
    call.add_argument("--provider", choices=("openai", "anthropic"), default="openai",
                      help="the wire format (default: openai)")
    call.add_argument("--api-key-env", metavar="VAR", default=None,
                      help="the environment variable holding the API key (default: OPENAI_API_KEY or "
                           "ANTHROPIC_API_KEY; a local server needs none)")
    mode = call.add_mutually_exclusive_group()
    mode.add_argument("--protocol", "-p", default="json_object", metavar="P",
                      help="the answer protocol the model is asked to write (default: json_object)")
    mode.add_argument("--native", action="store_true", help="the provider's own tool calls instead")
    call.add_argument("--policy", metavar="POLICY", help="also refuse calls this policy refuses (a YAML file)")
    call.add_argument("--on-invalid", choices=("feedback", "stop", "execute"), default="feedback",
                      help="what an invalid call does (default: feedback)")
    call.add_argument("--max-steps", type=int, default=8, metavar="N", help="at most this many replies (default 8)")
    call.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per request (default 60)")
    call.add_argument("--json", action="store_true", help="print the run as JSON")
    call.set_defaults(run=cmd_call)

    guard = commands.add_parser(
        "guard", help="scan tools for instructions hidden in their descriptions",
        description="Scan every tool's descriptions, parameter descriptions, titles, enum values, defaults and "
                    "examples with the guard's rules (rules/guard/*.yaml); exit 0 when nothing is flagged, 1 when "
                    "anything is, 2 on an input error. " + TOOLS_SAFETY)
    guard.add_argument("source", metavar="TOOLS", help="the tools: " + TOOLS_INPUTS)
    guard.add_argument("--kind", choices=KINDS, default="auto", help="what the tools are written in (default: auto)")
    guard.add_argument("--strictness", choices=("lenient", "standard", "strict"), default="standard",
                       help="which rules apply (default: standard)")
    output = guard.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report as JSON")
    output.add_argument("--sarif", action="store_true", help="print the report as SARIF 2.1.0 (code scanning)")
    guard.add_argument("--clean", metavar="OUT", help="also write the cleaned tools (MCP JSON) to OUT")
    guard.add_argument("--action", choices=("strip", "drop_descriptions", "quarantine"), default="strip",
                       help="how --clean cleans: strip the flagged text (default), drop flagged descriptions, "
                            "or leave flagged tools out")
    guard.set_defaults(run=cmd_guard)

    pin = commands.add_parser(
        "pin", help="print a lock of the tools (sha256 per tool and per reviewed field)",
        description="Print a lock recording a digest of every tool, to verify later that none changed (a rug "
                    "pull): toolform-rules pin TOOLS > tools.lock. " + TOOLS_SAFETY)
    pin.add_argument("source", metavar="TOOLS", help="the tools: " + TOOLS_INPUTS)
    pin.add_argument("--kind", choices=KINDS, default="auto", help="what the tools are written in (default: auto)")
    pin.set_defaults(run=cmd_pin)

    verify = commands.add_parser(
        "verify", help="compare tools with a lock: the tools added, removed or changed",
        description="Compare the tools with a lock made by toolform-rules pin; exit 0 when nothing changed, 1 when "
                    "a tool was added, removed or changed (with the changed fields), 2 on an input error.")
    verify.add_argument("source", metavar="TOOLS", help="the tools: " + TOOLS_INPUTS)
    verify.add_argument("--lock", required=True, metavar="FILE", help="the lock file")
    verify.add_argument("--kind", choices=KINDS, default="auto", help="what the tools are written in (default: auto)")
    verify.set_defaults(run=cmd_verify)

    tools = commands.add_parser(
        "tools", help="print a toolset converted to OpenAI, Anthropic or MCP JSON",
        description="Read tools (JSON in any supported shape, Python functions, TypeScript declarations) and print "
                    "them as JSON Schema 2020-12 in a provider's tool shape; exit 0, or 2 on an input error. "
                    + TOOLS_SAFETY)
    tools.add_argument("source", metavar="TOOLS", help="the tools: " + TOOLS_INPUTS)
    tools.add_argument("--kind", choices=KINDS, default="auto", help="what the tools are written in (default: auto)")
    tools.add_argument("--to", choices=SHAPES, default="openai", help="the shape to write (default: openai)")
    tools.set_defaults(run=cmd_tools)

    from .batch.commands import add_commands

    add_commands(commands, _batch_common)

    rules = commands.add_parser("rules", help="list a profile's rules",
                                description="List the rules of a profile, in the order they run.")
    rules.add_argument("--profile", metavar="P",
                       help="a profile: study, sdk, jsonschema, normalized or strict (default: sdk; "
                            "with --markdown, every profile)")
    rules.add_argument("--rules", metavar="FILE", action="append", default=[],
                       help="also read these rule files (or folders of them) and list their profiles too")
    rules.add_argument("--markdown", action="store_true", help="write the rule reference (docs/rules.md)")
    rules.set_defaults(run=cmd_rules)
    return parser


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)  # always one line
    return EXIT_USAGE


def _policy_failure(err: PolicyError) -> str:
    """A policy that cannot be used, in one line: its first problem, and how to see them all."""
    first, more = err.problems[0] if err.problems else err, len(err.problems) - 1
    if more <= 0:
        return str(first)
    shown = f" {first.source}" if first.source and not first.source.startswith("<") else " POLICY"
    return f"{first} (and {_plural(more, 'more problem')}: {PROG} check{shown} lists them all)"


def _escaping(stream: Any) -> None:
    """Text that is not Unicode (a lone surrogate in a reply or a file name) printed as its escape, not a crash."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    0: every call valid; 1: a call invalid (or a policy with problems, for ``check``); 2: the
    command could not decide, with exactly one line on stderr saying why.
    """
    _escaping(sys.stdout)
    _escaping(sys.stderr)
    try:
        return _run(argv)
    except BrokenPipeError:  # the reader went away (| head): quiet, as Unix tools are
        _quiet_stdout()
        return EXIT_VALID


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of a closed pipe says nothing."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (a test's captured stdout): nothing to flush
        pass


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as err:
        return _fail(f"{err} (see {PROG} --help)")
    except SystemExit as done:  # --help, --version
        return done.code if isinstance(done.code, int) else EXIT_VALID
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return run(args)
    except UsageError as err:
        return _fail(str(err))
    except PolicyError as err:
        return _fail(_policy_failure(err))
    except ToolformRulesError as err:
        return _fail(str(err))
    except json.JSONDecodeError as err:
        return _fail(f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})")
    except OSError as err:
        if isinstance(err, BrokenPipeError):
            raise
        where = f"{err.filename}: " if err.filename else ""
        return _fail(f"{where}{err.strerror or err}")
    except RecursionError:
        return _fail("the input is nested too deeply to read")
    except MemoryError:
        return _fail("the input needs more memory than this machine has")
    except KeyboardInterrupt:
        return _fail("interrupted")


if __name__ == "__main__":
    sys.exit(main())
