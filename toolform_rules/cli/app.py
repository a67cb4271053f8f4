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
from typing import Any, Callable, Sequence

from ..errors import PolicyError, ToolformRulesError
from .inputs import EXIT_USAGE, EXIT_VALID, PROG, UsageError
from .parser import build_parser
from .render import plural


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)  # always one line
    return EXIT_USAGE


def _policy_failure(err: PolicyError) -> str:
    """A policy that cannot be used, in one line: its first problem, and how to see them all."""
    first, more = err.problems[0] if err.problems else err, len(err.problems) - 1
    if more <= 0:
        return str(first)
    shown = f" {first.source}" if first.source and not first.source.startswith("<") else " POLICY"
    return f"{first} (and {plural(more, 'more problem')}: {PROG} check{shown} lists them all)"


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
