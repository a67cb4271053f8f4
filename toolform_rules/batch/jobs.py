"""What a batch does to each input line — grade a reply, or replay a call under two policies — as
picklable jobs that every engine runs the same way, chunk by chunk, in any process.

A job holds the *sources* (paths, or text) of its tools, policies and rule files, not the loaded
objects: compiled rules hold closures that do not pickle, and a worker loads each source once
(:func:`loaded`, a small per-process cache keyed by the job's digest).  A chunk's result is its
output lines (JSON, in input order), its :class:`Tally` and the lines it adds to the human report.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
from typing import IO, Any, Callable, Iterable, Iterator, Sequence

import attrs

from ..engine.report import ValidationReport
from ..engine.rule_files import load_rules
from ..engine.rules import RuleSet
from ..engine.verbs import validate_arguments
from ..errors import ToolformRulesError
from ..jsonvalues import strict_json
from ..limits import DEFAULT_LIMITS, Limits
from ..replies.parse import ParsedCall, ParsedReply, parse_reply
from ..schema.loaders import load_tools
from ..schema.toolset import Toolset
from .expected import ExpectedError, match_calls, read_expected
from .lines import Line

#: how many loaded jobs (tools, policies, rules) a worker process keeps; how many record toolsets
_LOADED_JOBS = 4
_RECORD_TOOLSETS = 256

#: how a record may write its verdict, and what it means
VERDICTS: dict[str | bool, str] = {"allow": "allow", "allowed": "allow", "deny": "deny", "denied": "deny",
                                   "refused": "deny", True: "allow", False: "deny"}


def _job_key(kind: str, sources: Sources, policies: Sequence[str | None]) -> str:
    """What names a job in a worker's cache: what it does and with what, and the content of every file
    it names (a long-running worker must not grade with yesterday's tools.json because its path is the same)."""
    whole = hashlib.sha256(repr((kind, sources, tuple(policies))).encode("utf-8", "surrogatepass"))
    for source in (sources.tools, *sources.rules, *policies):
        if source is not None and "\n" not in source and os.path.isabs(source):
            whole.update(_file_digest(source).encode())
    return whole.hexdigest()


def _file_digest(path: str) -> str:
    """The sha256 of a file's bytes, or of a folder's YAML files (names and bytes); ``""`` for neither."""
    whole = hashlib.sha256()
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith((".yaml", ".yml")))
    elif os.path.isfile(path):
        names = [""]
    else:
        return ""
    for name in names:
        with open(os.path.join(path, name) if name else path, "rb") as handle:
            whole.update(name.encode() + b"\0" + hashlib.sha256(handle.read()).digest())
    return whole.hexdigest()


def resolve_source(value: Any) -> str | None:
    """A path made absolute (a worker may run elsewhere), or text as it is."""
    if value is None:
        return None
    if isinstance(value, os.PathLike) or (isinstance(value, str) and "\n" not in value and os.path.exists(value)):
        return os.path.abspath(os.fspath(value))
    return value


def tools_source(tools: Any) -> str | None:
    """What a worker loads the tools from: a path (absolute), JSON text, or a toolset's OpenAI export."""
    if tools is None:
        return None
    if isinstance(tools, Toolset):
        return json.dumps(tools.to_openai(), ensure_ascii=False)
    if isinstance(tools, (list, dict)):
        return json.dumps(tools, ensure_ascii=False)
    if isinstance(tools, (str, os.PathLike)):
        return resolve_source(tools)
    raise TypeError("tools for a batch are a path, JSON text, JSON values or a Toolset; "
                    f"not {type(tools).__name__} (its workers load them)")


@attrs.frozen
class Sources:
    """The tools, rule files and profile every record of a job is checked with.

    ``tools``: a path or JSON text (``None``: each record brings its own ``"tools"``);
    ``kind``: as for :func:`~toolform_rules.load_tools`; ``rules``: rule files (paths).
    """

    tools: str | None
    kind: str = "auto"
    rules: tuple[str, ...] = ()
    profile: str = "sdk"
    limits: Limits = DEFAULT_LIMITS


class _Recent:
    """The last ``size`` values made, by key (the least recently used goes first): a worker's loaded jobs,
    a job's record toolsets."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: collections.OrderedDict[str, Any] = collections.OrderedDict()

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        value = self._values.get(key)
        if value is None:
            value = self._values[key] = make()
            if len(self._values) > self.size:
                self._values.popitem(last=False)
        else:
            self._values.move_to_end(key)
        return value


@attrs.frozen
class Loaded:
    tools: Toolset | None
    ruleset: RuleSet | None
    policies: tuple[Any, ...]
    record_tools: _Recent = attrs.field(factory=lambda: _Recent(_RECORD_TOOLSETS))

    def tools_for(self, record: dict[str, Any], limits: Limits) -> Toolset:
        """The record's own ``"tools"`` (loaded once per process per distinct value), else the job's."""
        docs = record.get("tools")
        if docs is None:
            if self.tools is None:
                raise RecordError('no tools: give --tools, or a "tools" field in each record')
            return self.tools

        def load() -> Toolset:
            try:
                return load_tools(docs, limits=limits)
            except ToolformRulesError as err:
                raise RecordError(f'its "tools": {err}') from None

        toolset: Toolset = self.record_tools.get(json.dumps(docs, sort_keys=True, ensure_ascii=False), load)
        return toolset


_LOADED = _Recent(_LOADED_JOBS)


def loaded(job: _Job) -> Loaded:
    """The tools, rules and policies of a job, loaded once per process (the last few jobs are kept)."""

    def load() -> Loaded:
        from ..policy import load_policy  # only a job with a policy loads the policy machinery

        sources = job.sources
        ruleset = load_rules(*sources.rules) if sources.rules else None
        tools = load_tools(sources.tools, sources.kind, limits=sources.limits) if sources.tools is not None else None
        return Loaded(tools, ruleset, tuple(None if p is None else load_policy(p) for p in job.policies()))

    found: Loaded = _LOADED.get(job.key, load)
    return found


class RecordError(Exception):
    """A record that cannot be graded; its message becomes the error record's."""


@attrs.frozen
class Tally:
    """Counts a batch keeps, by section (``{"section": {"name": n}}``); tallies of chunks add up."""

    counts: dict[str, collections.Counter[str]] = attrs.field(factory=dict)

    def add(self, section: str, name: str, amount: int = 1) -> None:
        self.section(section)[name] += amount

    def section(self, name: str) -> collections.Counter[str]:
        """The counters of one section (made when first asked for)."""
        counter = self.counts.get(name)
        if counter is None:
            counter = self.counts[name] = collections.Counter()
        return counter

    def merge(self, other: Tally) -> None:
        for section, counter in other.counts.items():
            self.counts.setdefault(section, collections.Counter()).update(counter)

    def get(self, section: str, name: str) -> int:
        return self.counts.get(section, collections.Counter())[name]

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {section: dict(sorted(counter.items())) for section, counter in sorted(self.counts.items())}


@attrs.frozen
class ChunkResult:
    """What a chunk of lines gave: output lines (JSON, in input order), its tally, lines for the human report."""

    lines: list[str]
    tally: Tally
    report: list[str] = attrs.field(factory=list)
    #: ``line N: why`` for each line that gave an error record
    errors: list[str] = attrs.field(factory=list)
    #: when set, ``lines`` is one text holding this many lines, each ending with a line end
    count: int | None = None

    @property
    def records(self) -> int:
        """How many output lines the chunk gave."""
        return len(self.lines) if self.count is None else self.count

    def packed(self) -> ChunkResult:
        """The same result with its lines as one text: what a worker sends back, since one text crosses
        between processes (and is written) at a third of the cost of a list of lines."""
        if self.count is not None:
            return self
        text = "".join(line + "\n" for line in self.lines)
        return attrs.evolve(self, lines=[text] if text else [], count=len(self.lines))

    def write_to(self, out: IO[str]) -> None:
        """Write the output lines, each ending with a line end."""
        for text in self.packed().lines:
            out.write(text)


def _dumps(value: Any) -> str:
    return strict_json(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _record(line: Line) -> dict[str, Any]:
    """The record a line holds; :class:`RecordError` if it holds none."""
    if line.record is not None:
        return line.record
    if line.problem:
        raise RecordError(line.problem)
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RecordError(f"not UTF-8 text (byte {err.start + 1} of the line)") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"not valid JSON: {err.msg} (column {err.colno})") from None
    except RecursionError:
        raise RecordError("JSON nested too deeply to read") from None
    if not isinstance(record, dict):
        raise RecordError(f"a record is a JSON object, not {type(record).__name__}")
    return record


def _error_record(line: Line, record: dict[str, Any] | None, message: str) -> dict[str, Any]:
    return {"id": record.get("id") if record else None, "line": line.number, "ok": False, "error": message}


def run_job(job: _Job, lines: Iterable[Line]) -> ChunkResult:
    """A chunk of lines through ``job``: its output lines, tally and report lines."""
    setup = loaded(job)
    tally = Tally()
    out: list[str] = []
    report: list[str] = []
    errors: list[str] = []
    for result in job.results(lines, setup, tally):
        out.append(_dumps(result))
        if result.get("change"):
            report.append(render_change(result))
        elif "error" in result:
            errors.append(f"line {result['line']}: {result['error']}")
    return ChunkResult(out, tally, report, errors)


def _call_dict(call: ParsedCall, *, rejected: bool = False) -> dict[str, Any]:
    out = {"name": call.name, "resolved_name": call.resolved_name, "valid": call.valid,
           "arguments": call.arguments, "validation": call.validation}
    if rejected:
        out["reason"] = call.reason
    return out


class _Job:
    """What the two jobs share: a chunk is run line by line; a line that holds no record, or whose record
    fails (a bug of ours included: it must not lose the line, nor the lines after it), gives an error record."""

    sources: Sources
    key: str

    def policies(self) -> tuple[str | None, ...]:
        raise NotImplementedError

    def results_of(self, record: dict[str, Any], number: int, setup: Loaded, tally: Tally) -> list[dict[str, Any]]:
        """The results of one record; :class:`RecordError` when it has none."""
        raise NotImplementedError

    def run(self, lines: Iterable[Line]) -> ChunkResult:
        """A chunk of lines through the job."""
        return run_job(self, lines)

    def results(self, lines: Iterable[Line], setup: Loaded, tally: Tally) -> Iterator[dict[str, Any]]:
        """The results of each line, in order."""
        for line in lines:
            tally.add("records", "lines")
            record = None
            try:
                record = _record(line)
                found = self.results_of(record, line.number, setup, tally)
            except RecordError as err:
                tally.add("records", "errors")
                yield _error_record(line, record, str(err))
                continue
            except Exception as err:
                tally.add("records", "errors")
                yield _error_record(line, record, f"could not be read: {type(err).__name__}: {err}")
                continue
            yield from found


@attrs.frozen
class GradeJob(_Job):
    """Grade each record's reply: ``{"id", "reply", "protocol"?, "expected"?, "tools"?}`` → one result.

    ``protocol``: the protocol of records that name none; ``rule``: the grading rule;
    ``policy``: a policy file's path (or its YAML text) applied to every accepted call.
    """

    sources: Sources
    protocol: str | None = None
    rule: str = "main"
    policy: str | None = None
    key: str = attrs.field(init=False, eq=False)

    @key.default
    def _key(self) -> str:
        return _job_key("grade", self.sources, self.policies())

    def policies(self) -> tuple[str | None, ...]:
        return (self.policy,)

    def results_of(self, record: dict[str, Any], number: int, setup: Loaded, tally: Tally) -> list[dict[str, Any]]:
        return [self.grade_record(record, number, setup, tally)]

    def grade_record(self, record: dict[str, Any], number: int | None, setup: Loaded, tally: Tally) -> dict[str, Any]:
        """The result of one record (its reply parsed, graded and matched); :class:`RecordError` if it has none."""
        reply_text = record.get("reply")
        if not isinstance(reply_text, str):
            raise RecordError('a record holds its reply as text, under "reply"')
        protocol = record.get("protocol", self.protocol)
        if not isinstance(protocol, str):
            raise RecordError('no protocol: give --protocol, or a "protocol" field')
        tools = setup.tools_for(record, self.sources.limits)
        expected = None
        if record.get("expected") is not None:
            try:
                expected = read_expected(record["expected"], tools)
            except ExpectedError as err:
                raise RecordError(str(err)) from None
        try:
            reply = parse_reply(reply_text, tools, protocol, rule=self.rule, profile=self.sources.profile,
                                rules=setup.ruleset, policy=setup.policies[0], limits=self.sources.limits)
        except ToolformRulesError as err:  # an unknown protocol
            raise RecordError(str(err)) from None
        out: dict[str, Any] = {"id": record.get("id"), "line": number, "protocol": protocol, "ok": reply.ok,
                               "calls": [_call_dict(c) for c in reply.calls],
                               "rejected": [_call_dict(c, rejected=True) for c in reply.rejected],
                               "notes": [reply.note] if reply.note else []}
        if number is None:
            del out["line"]
        self._count(protocol, reply, tally)
        if expected is not None:
            problems = match_calls(expected, reply.calls)
            out["match"] = not problems
            if problems:
                out["mismatches"] = problems
            tally.add(f"protocol:{protocol}", "expected")
            tally.add(f"protocol:{protocol}", "matched", not problems)
        return out

    @staticmethod
    def _count(protocol: str, reply: ParsedReply, tally: Tally) -> None:
        counts = tally.section(f"protocol:{protocol}")
        calls = reply.calls
        tally.section("records")["graded"] += 1
        counts["replies"] += 1
        counts["calls"] += len(calls)
        if calls:
            counts["with_call"] += 1
            counts["valid"] += reply.ok
        if reply.rejected:
            counts["rejected_calls"] += len(reply.rejected)
        for call in calls:
            if not call.valid:
                counts["invalid_calls"] += 1
                if call.report is not None:
                    buckets = tally.section("buckets")
                    for finding in call.report.findings:
                        buckets[finding.bucket] += 1


def _findings_rules(report: ValidationReport) -> list[str]:
    return sorted({f.rule for f in report.findings})


@attrs.frozen
class ReplayJob(_Job):
    """Check recorded calls under a new policy, against an old one (or the verdict each record holds).

    A record is a call — ``{"id", "name", "arguments", "verdict"?}`` — or a call loop's result
    (``LoopResult.to_dict()``), whose steps' accepted calls are replayed in order.  The old
    verdict is ``against``'s when given, else the record's ``verdict`` (``allow``/``deny``),
    else the schema's alone (no policy).  Each call gives one result line; a changed verdict
    also gives a report line.
    """

    sources: Sources
    policy: str
    against: str | None = None
    key: str = attrs.field(init=False, eq=False)

    @key.default
    def _key(self) -> str:
        return _job_key("replay", self.sources, self.policies())

    def policies(self) -> tuple[str | None, ...]:
        return (self.policy, self.against)

    def results_of(self, record: dict[str, Any], number: int, setup: Loaded, tally: Tally) -> list[dict[str, Any]]:
        """One result per call (a record may hold several)."""
        results = []
        for call_id, call in self.calls_of(record, number):
            try:
                results.append(self.replay_call(call_id, number, call, record, setup, tally))
            except (RecordError, ToolformRulesError) as err:
                tally.add("records", "errors")
                results.append({"id": call_id, "line": number, "ok": False, "error": str(err)})
        return results

    @staticmethod
    def calls_of(record: dict[str, Any], number: int) -> list[tuple[Any, dict[str, Any]]]:
        """The calls a record holds, each with its id."""
        record_id = record.get("id", number)
        if "arguments" in record:
            name = record.get("name", record.get("tool"))
            if not isinstance(name, str) or not isinstance(record["arguments"], dict):
                raise RecordError('a call has "name" (text) and "arguments" (an object)')
            return [(record_id, record)]
        if isinstance(record.get("steps"), list):
            calls = []
            for step_index, step in enumerate(record["steps"]):
                parsed = step.get("parsed") if isinstance(step, dict) else None
                for call_index, call in enumerate((parsed or {}).get("calls") or []):
                    calls.append((f"{record_id}/{step_index}.{call_index}", call))
            return calls
        if "arguments_sha256" in record:
            raise RecordError("a decision record keeps a digest of the arguments, not the arguments; "
                              "replay the calls themselves (a call loop's results, or a log of calls)")
        raise RecordError('a record is a call ({"id", "name", "arguments"}) or a call loop\'s result ("steps")')

    def replay_call(self, call_id: Any, number: int, call: dict[str, Any], record: dict[str, Any], setup: Loaded,
                    tally: Tally) -> dict[str, Any]:
        name = call.get("name", call.get("tool"))
        arguments = call.get("arguments")
        tools = setup.tools_for(record, self.sources.limits)
        check = functools.partial(validate_arguments, {"name": name, "arguments": arguments}, tools,
                                  profile=self.sources.profile, rules=setup.ruleset, limits=self.sources.limits)
        new = check(policy=setup.policies[0])
        recorded = call.get("verdict")
        if self.against is not None:
            old_report = check(policy=setup.policies[1])
            old, old_rules, basis = ("allow" if old_report.ok else "deny"), _findings_rules(old_report), "against"
        elif isinstance(recorded, (str, bool)) and recorded in VERDICTS:
            old, basis = VERDICTS[recorded], "recorded"
            old_rules = sorted({str(f["rule"]) for f in call.get("findings") or [] if isinstance(f, dict) and "rule" in f})
        else:
            old_report = check()
            old, old_rules, basis = ("allow" if old_report.ok else "deny"), _findings_rules(old_report), "schema"
        verdict = "allow" if new.ok else "deny"
        new_rules = _findings_rules(new)
        change = None if verdict == old else ("refused_now" if verdict == "deny" else "allowed_now")
        tally.add("calls", "replayed")
        tally.add("calls", change or "unchanged")
        tally.add("calls", f"{verdict}ed" if verdict == "allow" else "denied")
        result = {"id": call_id, "line": number, "name": name, "old": old, "new": verdict, "old_from": basis,
                  "change": change, "new_rules": new_rules, "old_rules": old_rules}
        if change == "refused_now":
            result["messages"] = [f.message for f in new.findings if f.rule not in old_rules]
        return result


def render_change(result: dict[str, Any]) -> str:
    """One report line for a changed verdict.

    >>> render_change({"id": 7, "name": "pay", "change": "refused_now", "new_rules": ["caps.amount"],
    ...                "old_rules": [], "messages": ["amount 900 is over 500"]})
    'refused now   7  pay  by caps.amount: amount 900 is over 500'
    """
    if result["change"] == "refused_now":
        rules = [r for r in result["new_rules"] if r not in result["old_rules"]] or result["new_rules"]
        why = f"by {', '.join(rules)}"
        if result.get("messages"):
            why += f": {'; '.join(result['messages'])}"
    else:
        rules = [r for r in result["old_rules"] if r not in result["new_rules"]] or result["old_rules"]
        why = f"no longer {', '.join(rules)}" if rules else "was refused"
    return f"{result['change'].replace('_', ' '):<13} {result['id']}  {result['name']}  {why}"
