"""The argument parser: every command, its options and its help."""

from __future__ import annotations

import argparse

from ..schema.export import SHAPES
from ..schema.loaders import KINDS
from ..version import __version__
from .commands import (
    cmd_call,
    cmd_check,
    cmd_explain,
    cmd_guard,
    cmd_parse,
    cmd_pin,
    cmd_protocols,
    cmd_rules,
    cmd_test,
    cmd_tools,
    cmd_validate,
    cmd_verify,
)
from .demo import cmd_demo
from .inputs import PROG, TOOLS_INPUTS, TOOLS_SAFETY, _Parser


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

    from ..batch.commands import add_commands

    add_commands(commands, _batch_common)

    rules = commands.add_parser("rules", help="list a profile's rules",
                                description="List the rules of a profile, in the order they run.")
    rules.add_argument("--profile", metavar="P",
                       help="a profile: study, sdk, jsonschema, normalized or strict (default: sdk)")
    rules.add_argument("--rules", metavar="FILE", action="append", default=[],
                       help="also read these rule files (or folders of them) and list their profiles too")
    rules.set_defaults(run=cmd_rules)
    return parser
