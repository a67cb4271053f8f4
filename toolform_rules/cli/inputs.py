"""What a command is given: exit codes, usage errors, and the files, calls, tools, policies and rules it reads."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.rule_files import load_rules
from ..engine.rules import RuleSet
from ..engine.verbs import require_validation_profile
from ..jsonvalues import loads_noting_duplicates
from ..samples import sample_toolset
from ..schema.loaders import load_tools
from ..schema.toolset import Toolset

if TYPE_CHECKING:
    from ..policy import Policy


PROG = "toolform-rules"

EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

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
    from ..policy import load_policy as load

    return load(source, **options)


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


def read_text(spec: str | None) -> str:
    """A reply's text: from a file, or stdin for ``-`` (or nothing)."""
    if spec in (None, "-"):
        return sys.stdin.read()
    path = _require_file(spec, "FILE is a file holding the reply, or - for stdin")
    return path.read_text(encoding="utf-8", errors="replace")

#: what every --tools takes
TOOLS_INPUTS = ("a JSON or JSON Lines file (or JSON text) in the OpenAI, Anthropic, MCP or BFCL shape, a Python file "
                "(.py) or module name whose functions are the tools, or a TypeScript file (.ts, .d.ts)")

TOOLS_SAFETY = "A Python file or module is imported to read it, which runs its code; JSON and TypeScript never are."


def chat_client(provider: str, model: str, *, base_url: str | None, timeout: float, api_key_env: str | None) -> Any:
    """An ``OpenAIChat`` or ``AnthropicChat`` over the provider's SDK (an optional extra: a usage error without it)."""
    variable = api_key_env or ("ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY")
    key = os.environ.get(variable) or "none"  # a local server takes any key
    try:
        if provider == "anthropic":
            import anthropic

            from ..loop.clients.anthropic_chat import AnthropicChat

            return AnthropicChat(anthropic.Anthropic(base_url=base_url, api_key=key, timeout=timeout, max_retries=1),
                                 model)
        import openai

        from ..loop.clients.openai_chat import OpenAIChat

        return OpenAIChat(openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=1), model)
    except ImportError:
        raise UsageError(f"the {provider} SDK is not installed: pip install 'toolform-rules[{provider}]'") from None
