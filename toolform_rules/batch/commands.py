"""``toolform-rules grade`` and ``toolform-rules replay``: a batch job over a JSON Lines file, on
this machine's cores or on a Dask cluster, with a summary.

Every problem that stops a run before it starts (a missing file, tools or a policy that do not
load, an unknown protocol, flags that do not go together) is found here, before any worker
starts, and reported on one line with exit code 2.
"""

from __future__ import annotations

import argparse
import bz2
import collections
import contextlib
import gzip
import io
import lzma
import os
import sys
import tempfile
import time
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Callable, Iterator

from ..errors import BatchError
from ..jsonvalues import strict_json
from ..limits import DEFAULT_LIMITS

if TYPE_CHECKING:  # the jobs (the engine, the protocols) are imported when a batch runs, not with the CLI
    from .jobs import ChunkResult, GradeJob, ReplayJob, Sources, Tally

EXIT_DONE, EXIT_INPUT = 0, 2
_COMPRESSED: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: how many error lines the command prints (all are in the results)
_SHOWN_ERRORS = 10


def _is_url(path: str) -> bool:
    return "://" in path or "::" in path


def _fsspec_open(path: str, mode: str) -> Any:
    try:
        import fsspec
    except ImportError:
        raise BatchError(f"{path}: a URL needs fsspec (pip install 'toolform-rules[dask]')") from None
    return fsspec.open(path, mode, compression="infer", **({"encoding": "utf-8"} if "b" not in mode else {}))


@contextlib.contextmanager
def open_input(path: str) -> Iterator[BinaryIO]:
    """The input's bytes: a path (``.gz``/``.bz2``/``.xz`` read decompressed), ``-`` for stdin, or an fsspec URL."""
    if path == "-":
        yield sys.stdin.buffer
        return
    if _is_url(path):
        with _fsspec_open(path, "rb") as handle:
            yield handle
        return
    if not os.path.isfile(path):
        raise BatchError(f"{path}: {'a directory, not a file' if os.path.isdir(path) else 'no such file'}")
    opener: Callable[..., Any] = _COMPRESSED.get(os.path.splitext(path)[1], open)
    with opener(path, "rb") as handle:
        yield handle


@contextlib.contextmanager
def open_output(path: str | None) -> Iterator[IO[str] | None]:
    """Where the results go: a path (compressed by its suffix), ``-`` for stdout, an fsspec URL, or nowhere.

    A path is written whole or not at all: into a temporary file beside it, renamed to the
    path when the run ends well, removed when it does not (an error, Ctrl-C), so a file at
    the path is never a truncated one that looks finished.
    """
    if path is None:
        yield None
    elif path == "-":
        yield sys.stdout
    elif _is_url(path):
        with _fsspec_open(path, "w") as handle:
            yield handle
    else:
        opener: Callable[..., Any] = _COMPRESSED.get(os.path.splitext(path)[1], open)
        folder, name = os.path.split(os.path.abspath(path))
        descriptor, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
        os.close(descriptor)
        try:
            with opener(partial, "wt", encoding="utf-8") as handle:
                yield handle
            os.replace(partial, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)


def refuse_output_over_input(source: str, out: str | None) -> None:
    """A :class:`BatchError` when ``out`` is the file ``source`` (by name, through a link, a hard
    link): writing the results would destroy the input before it is read."""
    if out in (None, "-") or source == "-" or _is_url(source) or _is_url(out) or not os.path.exists(out):
        return
    if os.path.exists(source) and os.path.samefile(source, out):
        raise BatchError(f"--out {out} is the input file {source}: the results would overwrite what they are read "
                         f"from; write them to another file")


def _progress(enabled: bool) -> Any:
    """A progress bar on stderr when it is a terminal (tqdm's when installed, else a counter), else nothing."""
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm

        tqdm.monitor_interval = 0  # no monitor thread: worker processes are forked from this one
        return tqdm(unit=" records", file=sys.stderr, leave=False, mininterval=0.5)
    except ImportError:
        return _Counter()


class _Counter:
    def __init__(self) -> None:
        self.n = 0
        self.shown = 0.0

    def update(self, count: int) -> None:
        self.n += count
        if time.monotonic() - self.shown > 0.5:
            self.shown = time.monotonic()
            print(f"\r{self.n:,} records", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print("\r", end="", file=sys.stderr, flush=True)


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _sources(args: argparse.Namespace) -> tuple[Sources, Any]:
    """The job's sources, and its tools: each loaded once here, so that a bad one stops the command before
    any worker starts."""
    from ..engine.rule_files import load_rules
    from ..engine.verbs import require_validation_profile
    from ..schema.loaders import load_tools
    from .jobs import Sources, resolve_source

    require_validation_profile(args.profile, load_rules(*args.rules) if args.rules else None)
    tools = None
    if args.tools is not None:
        tools = load_tools(args.tools, kind=args.kind)
        for warning in tools.warnings:
            print(f"toolform-rules: warning: {warning}", file=sys.stderr)
    return Sources(resolve_source(args.tools), args.kind, tuple(str(resolve_source(r)) for r in args.rules),
                   args.profile, DEFAULT_LIMITS), tools


def _check_policy(path: str | None, tools: Any) -> str | None:
    if path is None:
        return None
    from ..policy import load_policy
    from .jobs import resolve_source

    load_policy(path, tools=tools)
    return resolve_source(path)


def _check_engine(args: argparse.Namespace) -> None:
    if args.workers < 1 or args.chunk_lines < 1:
        raise BatchError(f"--workers and --chunk-lines are at least 1, not {min(args.workers, args.chunk_lines)}")
    if args.scheduler and args.engine != "dask":
        raise BatchError("--scheduler is for --engine dask")
    if args.out and "*" in args.out and args.engine != "dask":
        raise BatchError("an --out pattern (with *) writes one file per block: --engine dask")
    if args.engine == "dask" and args.input == "-":
        raise BatchError("--engine dask reads a file or URL, not stdin")
    for out in (args.out, args.summary):
        refuse_output_over_input(args.input, out)


def run(job: GradeJob | ReplayJob, args: argparse.Namespace, on_chunk: Callable[[ChunkResult], None]) -> Tally:
    """``job`` over ``args.input`` with the chosen engine, results to ``args.out``."""
    from .local import run_local

    bar = _progress(not args.quiet)
    errors: list[str] = []
    written = 0

    def chunk_done(result: ChunkResult) -> None:
        nonlocal written
        errors.extend(result.errors[:max(0, _SHOWN_ERRORS - len(errors))])
        written += result.records
        on_chunk(result)
        if bar is not None:
            bar.update(result.records)

    max_line = DEFAULT_LIMITS.max_input_bytes
    try:
        if args.engine == "dask":
            from .dask_engine import client_for, run_dask

            with client_for(args.scheduler, args.workers, timeout=args.connect_timeout) as client:
                pattern = args.out if args.out and "*" in args.out else None
                with open_output(None if pattern else args.out) as out:
                    tally = run_dask(job, args.input, pattern or out or _Discard(), client=client,
                                     workers=args.workers, max_line_bytes=max_line, blocksize=args.blocksize,
                                     on_chunk=chunk_done)
        else:
            with open_input(args.input) as source, open_output(args.out) as out:
                tally = run_local(job, source, out or _Discard(), workers=args.workers, max_line_bytes=max_line,
                                  chunk_lines=args.chunk_lines, on_chunk=chunk_done)
    finally:
        if bar is not None:
            bar.close()
    for line in errors:
        print(f"toolform-rules: {args.input}: {line}", file=sys.stderr)
    more = tally.get("records", "errors") - len(errors)
    if more > 0:
        print(f"toolform-rules: {args.input}: and {more:,} more error records", file=sys.stderr)
    if args.out is not None:
        tally.add("records", "written", written)
    return tally


class _Discard(io.StringIO):
    """Where the results go when no one wants them (``replay`` without ``--out``)."""

    def write(self, _text: str) -> int:
        return 0


# --- grade -------------------------------------------------------------------------------------

#: what the summary counts for each protocol (every one is there, 0 or not)
_PROTOCOL_COUNTS = ("replies", "with_call", "valid", "calls", "invalid_calls", "rejected_calls")


def grade_summary(tally: Tally) -> dict[str, Any]:
    """The summary of a grading run: records, errors, per protocol counts, findings by bucket."""
    protocols = {section.split(":", 1)[1]: {**dict.fromkeys(_PROTOCOL_COUNTS, 0), **dict(sorted(counts.items()))}
                 for section, counts in sorted(tally.counts.items()) if section.startswith("protocol:")}
    return {"records": tally.get("records", "lines"), "graded": tally.get("records", "graded"),
            "errors": tally.get("records", "errors"), "protocols": protocols,
            "buckets": dict(sorted(tally.counts.get("buckets", {}).items()))}


def render_grade_summary(summary: dict[str, Any]) -> str:
    """The summary as a table.

    >>> print(render_grade_summary({"records": 3, "graded": 2, "errors": 1, "buckets": {"type_errors": 1},
    ...     "protocols": {"json_object": {"replies": 2, "with_call": 2, "valid": 1, "expected": 2, "matched": 1}}}))
    3 records: 2 graded, 1 error
    protocol     replies  with call  valid  matched
    json_object        2          2      1      1/2
    findings by bucket: type_errors 1
    """
    lines = [f"{summary['records']:,} records: {summary['graded']:,} graded, {summary['errors']:,} "
             f"error{'s' * (summary['errors'] != 1)}"]
    rows = [("protocol", "replies", "with call", "valid", "matched")]
    for protocol, counts in summary["protocols"].items():
        matched = f"{counts.get('matched', 0):,}/{counts['expected']:,}" if counts.get("expected") else "-"
        rows.append((protocol, f"{counts.get('replies', 0):,}", f"{counts.get('with_call', 0):,}",
                     f"{counts.get('valid', 0):,}", matched))
    if len(rows) > 1:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            lines.append("  ".join([row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:])]))
    if summary["buckets"]:
        lines.append("findings by bucket: " + ", ".join(f"{k} {v:,}" for k, v in summary["buckets"].items()))
    return "\n".join(lines)


def _finish(args: argparse.Namespace, tally: Tally, summary: dict[str, Any], text: str, started: float) -> int:
    summary["engine"], summary["workers"] = args.engine, args.workers
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if args.out is not None:
        summary["written"] = tally.get("records", "written")
        first, *rest = text.split("\n")  # (the counts' first line: a report above it ends with the counts)
        text = "\n".join([f"{first}; {summary['written']:,} result{'s' * (summary['written'] != 1)} written to "
                           f"{args.out}", *rest])
    if args.summary:
        with open_output(args.summary) as handle:
            assert handle is not None
            handle.write(strict_json(summary, indent=2) + "\n")
    print(text, file=sys.stderr if args.out == "-" else sys.stdout)
    return EXIT_DONE if summary["errors"] == 0 else EXIT_INPUT


def cmd_grade(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    _check_engine(args)
    sources, tools = _sources(args)
    if args.protocol is not None:
        from ..replies.formats import get_protocol

        get_protocol(args.protocol)
    from .jobs import GradeJob

    job = GradeJob(sources, args.protocol, args.rule, _check_policy(args.policy, tools))
    tally = run(job, args, lambda result: None)
    summary = grade_summary(tally)
    return _finish(args, tally, summary, render_grade_summary(summary), started)


# --- replay ------------------------------------------------------------------------------------

def replay_summary(tally: Tally) -> dict[str, Any]:
    calls = tally.counts.get("calls", collections.Counter())
    return {"records": tally.get("records", "lines"), "errors": tally.get("records", "errors"),
            "calls": calls.get("replayed", 0), "unchanged": calls.get("unchanged", 0),
            "refused_now": calls.get("refused_now", 0), "allowed_now": calls.get("allowed_now", 0),
            "allowed": calls.get("allowed", 0), "denied": calls.get("denied", 0)}


def render_replay_summary(summary: dict[str, Any]) -> str:
    """
    >>> print(render_replay_summary({"records": 4, "errors": 0, "calls": 4, "unchanged": 2, "refused_now": 1,
    ...                              "allowed_now": 1, "allowed": 2, "denied": 2}))
    4 calls replayed: 2 unchanged, 1 refused now, 1 allowed now (now 2 allowed, 2 denied); 0 error records
    """
    return (f"{summary['calls']:,} calls replayed: {summary['unchanged']:,} unchanged, "
            f"{summary['refused_now']:,} refused now, {summary['allowed_now']:,} allowed now "
            f"(now {summary['allowed']:,} allowed, {summary['denied']:,} denied); "
            f"{summary['errors']:,} error record{'s' * (summary['errors'] != 1)}")


def cmd_replay(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    _check_engine(args)
    sources, tools = _sources(args)
    from .jobs import ReplayJob

    job = ReplayJob(sources, str(_check_policy(args.policy, tools)), _check_policy(args.against, tools))
    shown = sys.stderr if args.out == "-" else sys.stdout

    def report(result: ChunkResult) -> None:
        for line in result.report:
            print(line, file=shown)

    tally = run(job, args, report)
    summary = replay_summary(tally)
    return _finish(args, tally, summary, render_replay_summary(summary), started)


# --- the command line --------------------------------------------------------------------------

def _engine_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--workers", type=int, default=default_workers(), metavar="N",
                         help="worker processes (default: the cores, here %(default)s)")
    command.add_argument("--engine", choices=("local", "dask"), default="local",
                         help="local: processes on this machine (default); dask: a Dask cluster")
    command.add_argument("--scheduler", metavar="ADDRESS",
                         help="the Dask scheduler (tcp://host:8786); default: a LocalCluster of --workers processes")
    command.add_argument("--blocksize", type=int, metavar="BYTES",
                         help="(dask) the size of the blocks the input is cut into (default: a few per worker, "
                              "256 KiB to 64 MiB)")
    command.add_argument("--connect-timeout", type=float, default=10.0, metavar="S",
                         help="(dask) seconds to wait for the scheduler (default: %(default)s)")
    command.add_argument("--summary", metavar="FILE", help="also write the summary as JSON to FILE")
    command.add_argument("--chunk-lines", type=int, default=256, metavar="N",
                         help="lines a local worker takes at a time (default: %(default)s)")
    command.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def add_commands(commands: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``grade`` and ``replay`` to the command line's subcommands (``common`` adds --tools, --kind,
    --profile and --rules)."""
    grade = commands.add_parser(
        "grade", help="grade a file of model replies (JSON Lines), in parallel",
        description='Grade replies: each input line {"id", "reply", "protocol"?, "expected"?, "tools"?} gives one '
                    'output line {"id", "line", "protocol", "ok", "calls", "rejected", "notes", "match"?}, in input '
                    "order. Exit 0 when every line was graded, 2 on a usage error or when a line could not be "
                    "graded (it gets an error record naming its line).")
    grade.add_argument("input", metavar="INPUT", help="the replies: a .jsonl file (.gz/.bz2/.xz too), - for stdin, "
                                                      "or an fsspec URL")
    grade.add_argument("--out", metavar="RESULTS", required=True,
                       help="where the results go: a .jsonl path, - for stdout, an fsspec URL, or (dask) a pattern "
                            "with * for one file per block")
    common(grade)
    grade.add_argument("--protocol", "-p", metavar="P", help="the protocol of records that name none")
    grade.add_argument("--rule", choices=("main", "symmetric", "as_written"), default="main",
                       help="the grading rule (default: main)")
    grade.add_argument("--policy", metavar="POLICY", help="also apply this policy's constraints (a YAML file)")
    _engine_arguments(grade)
    grade.set_defaults(run=cmd_grade)

    replay = commands.add_parser(
        "replay", help="which recorded calls a new policy would decide differently",
        description='Replay calls ({"id", "name", "arguments", "verdict"?}, or a call loop\'s results) under '
                    "--policy and report each call whose verdict changes against --against (or the recorded "
                    "verdict, or the schema alone). Exit 0 when every line was read, 2 otherwise.")
    replay.add_argument("input", metavar="CALLS", help="the calls: a .jsonl file, - for stdin, or an fsspec URL")
    common(replay)
    replay.add_argument("--policy", metavar="NEW", required=True, help="the policy to replay under (a YAML file)")
    replay.add_argument("--against", metavar="OLD", help="the policy to compare with (default: each call's recorded "
                                                         "verdict, else the schema alone)")
    replay.add_argument("--out", metavar="RESULTS", help="also write every call's result (JSON Lines)")
    _engine_arguments(replay)
    replay.set_defaults(run=cmd_replay)
