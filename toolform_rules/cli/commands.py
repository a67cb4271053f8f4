"""The commands: one ``cmd_<name>`` function each, taking the parsed arguments and returning the exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..calls import as_call
from ..engine.rule_files import builtin_rules, load_rules
from ..engine.verbs import validate_arguments
from ..errors import PolicyError
from ..samples import sample_toolset
from ..schema.export import tools_to_json
from ..schema.loaders import load_tools
from .demo import DEMO_PROTOCOL_CALL
from .inputs import (
    EXIT_INVALID,
    EXIT_VALID,
    PROG,
    UsageError,
    _policy,
    _require_file,
    _rules,
    _tools,
    chat_client,
    load_policy,
    read_calls,
    read_text,
)
from .render import (
    _columns,
    _indent,
    _json,
    plural,
    _rule_row,
    render_guard,
    render_loop,
    render_reply,
    render_report,
)


def cmd_validate(args: argparse.Namespace) -> int:
    ruleset = _rules(args)
    tools = _tools(args)
    policy = _policy(args, tools)
    calls, many = read_calls(args.call)
    if args.decisions:
        from ..policy.records import DecisionLog

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
            blocks.append(f"{plural(len(reports), 'call')}: {len(reports) - bad} valid, {bad} invalid")
        print("\n\n".join(blocks))
    return EXIT_VALID if all(r.ok for r in reports) else EXIT_INVALID


def cmd_parse(args: argparse.Namespace) -> int:
    from ..replies.parse import parse_reply

    ruleset = _rules(args)
    tools = _tools(args)
    reply = parse_reply(read_text(args.file), tools, args.protocol, rule=args.rule,
                        lenient_fallback=args.lenient, profile=args.profile, rules=ruleset,
                        policy=_policy(args, tools))
    print(_json(reply.to_dict()) if args.json else render_reply(reply))
    return EXIT_VALID if reply.ok else EXIT_INVALID


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
        against = f", checked against {plural(len(tools.tools), 'tool')}" if tools is not None else \
            " (no --tools: arguments and kinds not checked)"
        print(f"{policy.name} v{policy.version}: {plural(len(policy.constraints), 'constraint')}, "
              f"{plural(len(policy.lists), 'list')}, {plural(len(policy.tests), 'test')} in "
              f"{plural(len(policy.files), 'file')}; no problems{against}\nsha256 {policy.digest}")
    return EXIT_VALID


def cmd_test(args: argparse.Namespace) -> int:
    from ..policy.testing import run_tests

    run = run_tests(args.paths, tools=load_tools(args.tools, kind=args.kind) if args.tools else None)
    print(_json(run.to_dict()) if args.json else run.render())
    if not run.results and not run.errors:
        print(f"{PROG}: no policy tests found", file=sys.stderr)
        return EXIT_INVALID
    uncovered = any(c.never_exercised for c in run.coverage)
    return EXIT_VALID if run.ok and not (args.require_coverage and uncovered) else EXIT_INVALID


def cmd_explain(args: argparse.Namespace) -> int:
    from ..policy.explain import explain

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


def cmd_protocols(args: argparse.Namespace) -> int:
    from ..replies.formats import get_protocol, protocol_ids

    call = DEMO_PROTOCOL_CALL
    blocks = []
    for protocol_id in protocol_ids("native" if args.native else "study"):
        protocol = get_protocol(protocol_id)
        blocks.append(f"{protocol_id}: {protocol.info.description}\n{_indent(protocol.example(call), '    ')}")
    print("\n\n".join(blocks))
    return EXIT_VALID


def cmd_rules(args: argparse.Namespace) -> int:
    ruleset = load_rules(*args.rules) if args.rules else builtin_rules()
    name = args.profile or "sdk"
    rules = ruleset.profile_rules(name)  # raises UnknownProfileError, naming the known ones
    profile = ruleset.profiles[name]
    head = f"profile {name} ({profile.source})"
    if profile.description:
        head += f": {profile.description}"
    print(head)
    extends = f"extends {profile.extends}; " if profile.extends else ""
    print(f"{extends}{plural(len(rules), 'rule')}, in the order they run:")
    print("\n".join(_columns([("id", "phase", "bucket", "source", "message")] + [_rule_row(r) for r in rules],
                             "  ")))
    return EXIT_VALID


def cmd_call(args: argparse.Namespace) -> int:
    from ..loop.call_loop import CallLoop

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


def cmd_guard(args: argparse.Namespace) -> int:
    from ..guard import clean_toolset, scan_toolset

    toolset = load_tools(args.source, kind=args.kind)
    report = scan_toolset(toolset, strictness=args.strictness)
    if args.clean:
        cleaned, _ = clean_toolset(report, toolset, action=args.action)
        Path(args.clean).write_text(_json(cleaned.to_mcp()) + "\n",
                                    encoding="utf-8")
    if args.sarif:
        from ..guard.sarif import to_sarif

        source = args.source if isinstance(args.source, str) and Path(args.source).is_file() else None
        print(_json(to_sarif(report, source=source)))
    elif args.json:
        print(_json(report.to_dict()))
    else:
        print(render_guard(report))
    return EXIT_INVALID if report.findings else EXIT_VALID


def cmd_pin(args: argparse.Namespace) -> int:
    from ..guard.pin import pin_command

    print(pin_command(args.source, kind=args.kind), end="")
    return EXIT_VALID


def cmd_verify(args: argparse.Namespace) -> int:
    from ..guard.pin import verify_command

    code, text = verify_command(args.source, args.lock, kind=args.kind)
    print(text, end="" if text.endswith("\n") else "\n")
    return code


def cmd_tools(args: argparse.Namespace) -> int:
    toolset = load_tools(args.source, kind=args.kind)
    for warning in toolset.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    print(_json(tools_to_json(toolset.tools, args.to)))
    return EXIT_VALID
