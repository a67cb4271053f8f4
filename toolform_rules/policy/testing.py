"""Policy tests: run every ``tests:`` block (in a policy, or in a ``<stem>_test.yaml`` beside it).

A test makes one call and states what the policy must say: ``ok`` (the whole verdict:
the schema's rules and the policy's errors when a toolset is known — the policy's errors
alone when not), ``fired`` (exactly the policy's constraints that fire, errors and
warnings) and ``not_fired``.  Coverage says which constraints no test exercised (their
``when`` never held for a test's call, or no test called their tools) and which no test
made fire.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

import attrs

from ..convert import structure
from ..errors import LocatedError, ToolformRulesError
from ..schema.toolset import Toolset
from ..yamlsource import Located, load_yaml_file
from .explain import explain
from .document import PolicyFieldError, PolicyTestSpec, TestDocument
from .loading import load_policy
from .policy import Policy

TEST_SUFFIXES = ("_test.yaml", "_test.yml")


@attrs.frozen
class TestResult:
    """One test's outcome."""

    __test__ = False  # not a pytest test class, whatever its name

    policy: str
    file: str
    line: int | None
    name: str
    passed: bool
    fired: tuple[str, ...]
    ok: bool
    problems: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        file = shown(self.file)
        return f"{file}:{self.line}" if self.line is not None else file

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "where": self.where, "name": self.name, "passed": self.passed,
                "ok": self.ok, "fired": list(self.fired), "problems": list(self.problems)}


@attrs.frozen
class Coverage:
    """Which constraints of one policy the tests exercised and made fire."""

    policy: str
    file: str
    constraints: tuple[str, ...]
    exercised: frozenset[str]
    fired: frozenset[str]

    @property
    def never_exercised(self) -> list[str]:
        return [c for c in self.constraints if c not in self.exercised]

    @property
    def never_fired(self) -> list[str]:
        return [c for c in self.constraints if c not in self.fired]

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "file": self.file, "constraints": len(self.constraints),
                "exercised": len([c for c in self.constraints if c in self.exercised]),
                "never_exercised": self.never_exercised, "never_fired": self.never_fired}


@attrs.frozen
class TestRun:
    """Every test of every policy found, the policies' coverage, and the files that could not be used."""

    __test__ = False

    results: tuple[TestResult, ...]
    coverage: tuple[Coverage, ...]
    errors: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        """Every test passed and every file could be read."""
        return not self.failed and not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "passed": self.passed, "failed": self.failed,
                "results": [r.to_dict() for r in self.results], "coverage": [c.to_dict() for c in self.coverage],
                "errors": list(self.errors)}

    def render(self) -> str:
        """A pass/fail table, the problems of each failure, then coverage."""
        lines: list[str] = []
        width = max((len(r.where) for r in self.results), default=0)
        for result in self.results:
            mark = "PASS" if result.passed else "FAIL"
            lines.append(f"{mark}  {result.where:<{width}}  {result.policy}: {result.name}")
            lines.extend(f"        {problem}" for problem in result.problems)
        for error in self.errors:
            lines.append(f"ERROR {error}")
        lines.append(f"{self.passed} passed, {self.failed} failed"
                     + (f", {len(self.errors)} file(s) could not be used" if self.errors else ""))
        for item in self.coverage:
            total = len(item.constraints)
            done = total - len(item.never_exercised)
            line = f"coverage {item.policy} ({shown(item.file)}): {done}/{total} constraints exercised"
            if item.never_exercised:
                line += f"; never exercised: {', '.join(item.never_exercised)}"
            unfired = [c for c in item.never_fired if c not in item.never_exercised]
            if unfired:
                line += f"; never fired: {', '.join(unfired)}"
            lines.append(line)
        return "\n".join(lines)


def _files(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[str]]:
    found: list[Path] = []
    errors: list[str] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()))
        elif path.is_file():
            found.append(path)
            for suffix in TEST_SUFFIXES:  # a policy named on its own brings its tests file
                sibling = path.with_name(path.stem + suffix)
                if not path.name.endswith(TEST_SUFFIXES) and sibling.is_file():
                    found.append(sibling)
        else:
            errors.append(f"{path}: no such file or directory")
    unique = list(dict.fromkeys(Path(os.path.abspath(p)) for p in found))
    return unique, errors


def shown(path: str | Path) -> str:
    """A path as the table shows it: relative to the working directory when it is below it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _policy_of(test_file: Path, document: TestDocument) -> Path:
    if document.policy is not None:
        return Path(os.path.abspath(test_file.parent / document.policy))
    stem = test_file.name
    for suffix in TEST_SUFFIXES:
        if stem.endswith(suffix):
            return Path(os.path.abspath(test_file.with_name(stem[:-len(suffix)] + ".yaml")))
    return Path(os.path.abspath(test_file))


def _load_tools(spec: str | None, relative_to: Path) -> Toolset | None:
    if spec is None:
        return None
    from ..schema.loaders import load_tools

    return load_tools(str((relative_to / spec)))


def run_tests(paths: Iterable[str | os.PathLike[str]], *, tools: Any = None) -> TestRun:
    """Run the tests of every policy in ``paths`` (files or directories).

    ``tools``: the toolset to test against when a file names none (``toolset:``).

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "cap.yaml").write_text('''
    ... policy: cap
    ... constraints:
    ...   - id: cap.value
    ...     check: args.value <= 10
    ... tests:
    ...   - name: too much
    ...     call: {name: legal_draft_v3, arguments: {value: 50}}
    ...     expect: {ok: false, fired: [cap.value]}
    ... ''')
    >>> run = run_tests([folder])
    >>> run.ok, run.passed, run.coverage[0].never_exercised
    (True, 1, [])
    """
    files, errors = _files(paths)
    policies: dict[Path, Policy] = {}
    suites: dict[Path, list[tuple[PolicyTestSpec, str, int | None, Toolset | None]]] = {}
    default_tools = None
    if tools is not None:
        from ..engine.verbs import as_toolset

        default_tools = as_toolset(tools)

    def policy_at(path: Path) -> Policy | None:
        if path not in policies:
            try:
                policies[path] = load_policy(path)
            except ToolformRulesError as err:
                errors.append(str(err))
                return None
        return policies[path]

    for path in files:
        if path.name.endswith(TEST_SUFFIXES):
            try:
                data = load_yaml_file(path)
                document = structure(data, TestDocument, error=PolicyFieldError, source=str(path))
                target = _policy_of(path, document)
                toolset = _load_tools(document.toolset, path.parent)
            except (LocatedError, ToolformRulesError) as err:
                errors.append(str(err))
                continue
            raw = data.get("tests", []) if isinstance(data, dict) else []
            entries = suites.setdefault(target, [])
            for index, test in enumerate(document.tests):
                line = raw[index].line if index < len(raw) and isinstance(raw[index], Located) else None
                entries.append((test, str(path), line, toolset))
            continue
        try:
            head = load_yaml_file(path)
        except LocatedError as err:
            errors.append(str(err))
            continue
        if not isinstance(head, dict) or "policy" not in head:
            continue  # not a policy (a tools file written in YAML, say)
        suites.setdefault(path, [])
    results: list[TestResult] = []
    coverage: list[Coverage] = []
    for policy_path, external in suites.items():
        policy = policy_at(policy_path)
        if policy is None:
            continue
        try:
            own_tools = _load_tools(policy.toolset, policy_path.parent)
        except ToolformRulesError as err:
            errors.append(str(err))
            continue
        cases = [(test, where.file, where.line, own_tools) for test, where in policy.tests] + external
        exercised: set[str] = set()
        fired_any: set[str] = set()
        for test, file, line, toolset in cases:
            toolset = toolset or own_tools or default_tools
            result, touched, fired = _run_one(policy, test, file, line, toolset)
            results.append(result)
            exercised |= touched
            fired_any |= fired
        coverage.append(Coverage(policy.name, str(policy_path), tuple(c.id for c in policy.constraints),
                                 frozenset(exercised), frozenset(fired_any)))
    return TestRun(tuple(results), tuple(coverage), tuple(errors))


def _run_one(policy: Policy, test: PolicyTestSpec, file: str, line: int | None,
             toolset: Toolset | None) -> tuple[TestResult, set[str], set[str]]:
    from ..engine.verbs import validate_arguments

    call = {"name": test.call.name, "arguments": test.call.arguments}
    if toolset is not None:
        report = validate_arguments(call, toolset, policy=policy)
        ok = report.ok
        fired = [f.rule for f in (*report.findings, *report.warnings) if f.policy is not None]
    else:
        findings = policy.evaluate(test.call.name, test.call.arguments)
        ok = not any(f.severity == "error" for f in findings)
        fired = [f.rule for f in findings]
    problems: list[str] = []
    expect = test.expect
    if expect.ok is not None and expect.ok != ok:
        problems.append(f"expected ok {str(expect.ok).lower()}, got {str(ok).lower()}")
    if expect.fired is not None and set(expect.fired) != set(fired):
        problems.append(f"expected fired [{', '.join(sorted(set(expect.fired)))}], got "
                        f"[{', '.join(sorted(set(fired)))}]")
    wrongly = sorted(set(expect.not_fired) & set(fired))
    if wrongly:
        problems.append(f"expected not to fire: {', '.join(wrongly)}")
    outcomes = explain(call, policy, toolset).constraints
    touched = {c.id for c in outcomes if c.outcome in ("held", "fired", "error")}
    name = test.name or f"{test.call.name} call"
    return (TestResult(policy.name, file, line, name, not problems, tuple(fired), ok, tuple(problems)),
            touched, set(fired))
