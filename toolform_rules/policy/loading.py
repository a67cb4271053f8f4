"""Loading a policy: reading its files and includes, checking every expression, compiling the constraints.

:func:`load_policy` reads a policy file (or text) and every file it includes, structures
each with the one cattrs converter (one constraint or test at a time, so that one bad
entry does not hide another's problems), reads and checks every expression — against the
tools, when given — and raises one :class:`PolicyError` listing every problem, or returns
a :class:`Policy`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import attrs

from ..convert import structure
from ..errors import LocatedError, PolicyError, RuleFileError
from ..schema.ir import Tool
from ..limits import PolicyLimits
from ..engine.rules import SourceLocation
from ..yamlsource import Located, LocatedDict, decode_yaml_bytes, load_yaml, read_yaml_bytes
from .checker import check_expression
from .document import ConstraintSpec, PolicyDocument, PolicyFieldError, PolicyTestSpec
from .evaluate import compile_expression
from .expression import Expression, ExpressionError, read_expression
from .places import Mark, locate, place, raise_problems, value_mark
from .policy import (Constraint, MessageTemplate, Policy, PolicyFile, ToolPattern, mask_path, split_template,
                     unmatched_tools)


@attrs.define
class _Reading:
    """The state of one load: files read, problems found."""

    limits: PolicyLimits
    files: list[PolicyFile] = attrs.Factory(list)
    texts: dict[str, list[str]] = attrs.Factory(dict)
    problems: list[LocatedError] = attrs.Factory(list)
    documents: list[tuple[PolicyDocument, Any, str, list[Any], list[Any]]] = attrs.Factory(list)
    reading: list[str] = attrs.Factory(list)
    #: every file read so far (resolved path -> where it was included), so that none is read twice
    included: dict[str, str] = attrs.Factory(dict)

    def read(self, text: str, source: str, base: Path | None, depth: int, raw: bytes | None = None) -> None:
        # (surrogatepass: a text given to the API may hold a lone surrogate, which the YAML reader then places)
        raw = text.encode("utf-8", "surrogatepass") if raw is None else raw
        if len(raw) > self.limits.max_file_bytes:
            self.problems.append(RuleFileError(f"the policy is larger than {self.limits.max_file_bytes} bytes",
                                               source=source))
            return
        self.files.append(PolicyFile(source, hashlib.sha256(raw).hexdigest()))  # the bytes, as sha256sum sees them
        self.texts[source] = _excerpt_lines(text)
        try:
            data = load_yaml(text, source=source, max_bytes=self.limits.max_file_bytes,
                             max_values=self.limits.max_yaml_values, max_depth=self.limits.max_yaml_depth)
        except RuleFileError as err:
            self.problems.append(err)
            return
        if not isinstance(data, dict):
            self.problems.append(RuleFileError("a policy file is a mapping with policy:, constraints:...",
                                               source=source, line=1, column=1))
            return
        # each constraint and test apart, so that one bad entry does not hide the others' problems
        shell = data.without("constraints", "tests") if isinstance(data, LocatedDict) else data
        try:
            document = structure(shell, PolicyDocument, error=PolicyFieldError, source=source)
        except PolicyFieldError as err:
            self.problems.append(err)
            # read on without the keys the format does not know, so that their problem does not
            # hide the constraints' own
            known = {field.name for field in attrs.fields(PolicyDocument)}
            if not isinstance(shell, LocatedDict) or set(shell) <= known:
                return
            try:
                document = structure(shell.without(*(set(shell) - known)), PolicyDocument,
                                     error=PolicyFieldError, source=source)
            except PolicyFieldError:
                return
        constraints = self.entries(data, "constraints", ConstraintSpec, source)
        tests = self.entries(data, "tests", PolicyTestSpec, source)
        document = attrs.evolve(document, constraints=tuple(c for c, _ in constraints),
                                tests=tuple(t for t, _ in tests))
        self.documents.append((document, data, source, [c for _, c in constraints],  # type: ignore[arg-type]
                               [t for _, t in tests]))
        for index, included in enumerate(document.include):
            line, column = data["include"].position_of(index) if isinstance(data.get("include"), Located) \
                else (None, None)
            self.include(included, source, base, depth + 1, line, column)

    def entries(self, data: dict[str, Any], key: str, cls: type[Any], source: str) -> list[tuple[Any, Any]]:
        """The entries of list ``key`` that structure, each with its YAML mapping; problems for the others."""
        raw = data.get(key, [])
        if not isinstance(raw, list):
            line, column = data.position_of(key) if isinstance(data, Located) else (None, None)
            self.problems.append(PolicyFieldError(f"{key} must be a list", source=source, line=line, column=column,
                                                  field=key))
            return []
        out = []
        for index, entry in enumerate(raw):
            if key == "constraints" and isinstance(entry, LocatedDict):
                # ``check: false`` (a constraint that always fires) is YAML's boolean; read it as the expression
                booleans = [k for k in ("check", "when") if isinstance(entry.get(k), bool)]
                if booleans:
                    entry = entry.without()
                    for name in booleans:
                        entry[name] = "true" if entry[name] else "false"
                    raw[index] = entry
            try:
                out.append((structure(entry, cls, error=PolicyFieldError, source=source,
                                      field_prefix=f"{key}[{index}]"), entry))
            except PolicyFieldError as err:
                if err.line is None and isinstance(raw, Located):
                    err = PolicyFieldError(err.message, source=source, line=raw.position_of(index)[0],
                                           column=raw.position_of(index)[1], field=err.field)
                self.problems.append(err)
        return out

    def include(self, name: str, parent: str, base: Path | None, depth: int, line: Any, column: Any) -> None:
        where = {"source": parent, "line": line, "column": column, "field": "include"}
        if depth > self.limits.max_include_depth:
            self.problems.append(RuleFileError(f"includes nest deeper than {self.limits.max_include_depth}", **where))
            return
        if base is None:
            base = Path.cwd()
        path = (base / name)
        try:
            key = str(path.resolve())
        except (OSError, ValueError, RuntimeError):  # a NUL in the name, a loop of links: read below says what
            key = str(path)
        if key in self.reading:
            self.problems.append(RuleFileError(f"{name} includes itself (through {' -> '.join(self.reading)})",
                                               **where))
            return
        if key in self.included:
            # a second time would declare its constraints and lists again; and includes that each
            # include one file several times would read it exponentially often
            self.problems.append(RuleFileError(f"{name} is already included (at {self.included[key]})", **where))
            return
        self.included[key] = f"{parent}:{line}" if line is not None else parent
        try:
            text, raw = _read_file(path, self.limits, f"cannot include {name}", where)
        except RuleFileError as err:
            self.problems.append(err)
            return
        self.reading.append(key)
        try:
            self.read(text, str(path), path.parent, depth, raw)
        finally:
            self.reading.pop()


def _read_file(path: Path, limits: PolicyLimits, unreadable: str, where: dict[str, Any]) -> tuple[str, bytes]:
    """A policy file's text and bytes; a :class:`RuleFileError` placed at ``where`` when it cannot be read or
    is too large, in the file itself when it is not UTF-8."""
    raw = read_yaml_bytes(path, max_bytes=limits.max_file_bytes, unreadable=unreadable, where=where)
    return decode_yaml_bytes(raw, source=str(path)), raw


def _excerpt_lines(text: str) -> list[str]:
    """A file's lines as problems quote them: a control character (a NUL, an escape that would
    drive the terminal) shown as one replacement character, so that the caret below still lines up."""
    return [line if line.isprintable() else
            "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in line.removesuffix("\r"))
            for line in text.split("\n")]


def _read(text: Any, container: Any, key: Any, source: str, field: str, reading: _Reading,
          limits: PolicyLimits) -> Expression | None:
    try:
        return read_expression(text, limits)
    except ExpressionError as err:
        reading.problems.append(locate(err, value_mark(container, key), source, field, reading.texts.get(source, [])))
        return None


def _compile_message(spec: ConstraintSpec, container: Any, source: str, reading: _Reading,
                     lists: dict[str, Any]) -> MessageTemplate | None:
    if spec.message is None:
        text = f"{spec.id}: {spec.check} does not hold"
        return MessageTemplate((text,), (text,))
    mark, lines, field = value_mark(container, "message"), reading.texts.get(source, []), f"{spec.id}.message"
    try:
        pieces = split_template(spec.message)
    except ExpressionError as err:
        reading.problems.append(locate(err, mark, source, field, lines))
        return None
    parts: list[str | Expression] = []
    problems: list[LocatedError] = []
    for offset, piece, is_field in pieces:
        if not is_field:
            parts.append(piece)
            continue
        try:
            expression = read_expression(piece, reading.limits)
        except ExpressionError as err:
            problems.append(locate(err, mark, source, field, lines, offset, spec.message))
            continue
        problems.extend(locate(problem, mark, source, field, lines, offset, spec.message)
                        for problem in check_expression(expression, None, lists, want_boolean=False))
        parts.append(expression)
    reading.problems.extend(problems)
    if problems:
        return None
    fold = reading.limits.fold_budget
    compiled = tuple(p if isinstance(p, str) else compile_expression(p, lists, fold_budget=fold) for p in parts)
    return MessageTemplate(tuple(parts), compiled)


def _looks_like_text(source: str) -> bool:
    return "\n" in source or ": " in source or source.lstrip().startswith("{")


def load_policy(source: str | os.PathLike[str], *, tools: Any = None, limits: PolicyLimits = PolicyLimits(),
                base: str | os.PathLike[str] | None = None) -> Policy:
    """Read, check and compile a policy: a file's path, or the YAML text itself.

    ``tools`` (anything :func:`~toolform_rules.load_tools` reads): also check the policy
    against them — every ``tools:`` entry must match a tool, every argument must exist,
    every comparison must be able to hold.  ``base``: where a text's ``include:`` paths
    start (default: the file's directory, or the working directory for a text).  All
    problems are raised together as one :class:`PolicyError`.

    >>> policy = load_policy('''
    ... policy: caps
    ... version: 2
    ... constraints:
    ...   - id: caps.value
    ...     tools: [legal_draft_v3]
    ...     check: args.value <= 1000
    ...     message: "value {args.value} is over 1000"
    ... ''')
    >>> [f.message for f in policy.evaluate("legal_draft_v3", {"value": 5000})]
    ['value 5000 is over 1000']
    """
    reading = _Reading(limits)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and not _looks_like_text(source)):
        path = Path(source)
        try:
            text, raw = _read_file(path, limits, "cannot read the policy", {"source": str(path)})
        except RuleFileError as err:
            raise PolicyError([err]) from None
        reading.reading.append(str(path.resolve()))
        reading.included[str(path.resolve())] = str(path)
        reading.read(text, str(path), Path(base) if base is not None else path.parent, 0, raw)
    elif isinstance(source, str):
        reading.read(source, "<policy>", Path(base) if base is not None else None, 0)
    else:
        raise PolicyError([RuleFileError(f"a policy is a path or YAML text, not {type(source).__name__}")])
    toolset = None
    if tools is not None:
        from ..engine.verbs import as_toolset
        toolset = as_toolset(tools)
    policy = _build(reading, list(toolset.tools) if toolset is not None else None)
    return policy


def _build(reading: _Reading, tools: list[Tool] | None) -> Policy:
    if not reading.documents:
        raise_problems(reading.problems or [RuleFileError("no policy was read")], reading.texts)
    top = reading.documents[0][0]
    lists = _lists(reading)
    constraints: list[Constraint] = []
    seen: dict[str, str] = {}  # each constraint id, and where it is declared
    mask: list[tuple[str | int, ...]] = []
    tests: list[tuple[PolicyTestSpec, SourceLocation]] = []
    named: list[tuple[Any, str, tuple[int | None, int | None]]] = []  # ids the tests name, and where
    for document, data, source, raw_constraints, raw_tests in reading.documents:
        mask.extend(_masks(document, data, source, reading))
        for spec, container in zip(document.constraints, raw_constraints):
            constraint = _declared_once(spec, container, source, reading, lists, tools, seen)
            if constraint is not None:
                constraints.append(constraint)
        for test, container in zip(document.tests, raw_tests):
            tests.append((test, SourceLocation(source, container.line if isinstance(container, Located) else None)))
            named.extend((name, source, place(mark, 0, "", reading.texts.get(source, [])))
                         for name, mark in _named_constraints(container))
    for name, source, (line, column) in named:  # once every file is read: a test may name an included constraint
        if name not in seen:
            reading.problems.append(PolicyFieldError(f"the test names constraint {name!r}, which the policy does "
                                                     f"not declare", source=source, line=line, column=column,
                                                     field="expect"))
    if len(constraints) > reading.limits.max_constraints:
        reading.problems.append(RuleFileError(f"the policy has {len(constraints)} constraints; the limit is "
                                              f"{reading.limits.max_constraints}", source=reading.files[0].path))
    policy = Policy(top.policy, top.version, top.description, tuple(reading.files), tuple(constraints), lists,
                    tuple(mask), tuple(tests), top.toolset, reading.limits, reading.texts)
    raise_problems(reading.problems, reading.texts)
    return policy


def _lists(reading: _Reading) -> dict[str, list[Any]]:
    """The lists every file declares (a name declared twice is a problem)."""
    lists: dict[str, list[Any]] = {}
    for document, data, source, _, _ in reading.documents:
        for name, values in document.lists.items():
            if name in lists:
                line, column = data["lists"].position_of(name)
                reading.problems.append(PolicyFieldError(f"list {name!r} is declared twice", source=source,
                                                         line=line, column=column, field=f"lists.{name}"))
            lists[name] = list(values)
    return lists


def _masks(document: PolicyDocument, data: Any, source: str, reading: _Reading) -> list[tuple[str | int, ...]]:
    """The argument paths a document's ``mask:`` names (an entry that is no such path is a problem)."""
    paths = []
    for index, text in enumerate(document.mask):
        path = mask_path(text)
        if path is None:
            line, column = data["mask"].position_of(index)
            reading.problems.append(PolicyFieldError(
                f"a mask is a path into the arguments, like args.card.number; not {text!r}",
                source=source, line=line, column=column, field=f"mask[{index}]"))
        else:
            paths.append(path)
    return paths


def _declared_once(spec: ConstraintSpec, container: Any, source: str, reading: _Reading, lists: dict[str, Any],
                   tools: list[Tool] | None, seen: dict[str, str]) -> Constraint | None:
    """One constraint, read and checked; ``None`` when it has problems or its id is already used."""
    line = container.line if isinstance(container, Located) else None
    constraint = _constraint(spec, container, source, line, reading, lists, tools)
    if spec.id in seen:
        id_line, id_column = container.position_of("id") if isinstance(container, Located) else (line, None)
        reading.problems.append(PolicyFieldError(f"constraint id {spec.id!r} is already used at {seen[spec.id]}",
                                                 source=source, line=id_line, column=id_column,
                                                 field=f"{spec.id}.id"))
        return None
    seen[spec.id] = f"{source}:{line}" if line is not None else source
    return constraint


def _named_constraints(test: Any) -> list[tuple[Any, Mark | None]]:
    """The constraint ids a test's ``expect:`` names (``fired``, ``not_fired``), each with where it is."""
    expect = test.get("expect") if isinstance(test, dict) else None
    named: list[tuple[Any, Mark | None]] = []
    for key in ("fired", "not_fired"):
        listed = expect.get(key) if isinstance(expect, dict) else None
        named.extend((name, value_mark(listed, position))
                     for position, name in enumerate(listed if isinstance(listed, list) else []))
    return named


def _constraint(spec: ConstraintSpec, container: Any, source: str, line: int | None, reading: _Reading,
                lists: dict[str, Any], tools: list[Tool] | None) -> Constraint | None:
    """Read, check and compile one constraint (its problems go to ``reading``)."""
    patterns = tuple(ToolPattern.read(t) for t in spec.tools) if spec.tools is not None else None
    marks: dict[str, Mark | None] = {"check": value_mark(container, "check"), "when": value_mark(container, "when")}
    raw_tools = container.get("tools") if isinstance(container, dict) else None
    for index in range(len(spec.tools or ())):
        marks[f"tools[{index}]"] = value_mark(raw_tools, index)
    matched = None if tools is None else _matched(spec.id, patterns, tools, marks, source, line, reading)
    check = _read(spec.check, container, "check", source, f"{spec.id}.check", reading, reading.limits)
    when = _read(spec.when, container, "when", source, f"{spec.id}.when", reading, reading.limits) \
        if spec.when is not None else None
    ok = check is not None and (spec.when is None or when is not None)
    for label, expression in (("check", check), ("when", when)):
        if expression is not None and not _usable(expression, label, spec, container, source, line, reading,
                                                  lists, matched):
            ok = False
    message = _compile_message(spec, container, source, reading, lists)
    if not ok or check is None or message is None:
        return None
    return Constraint(spec.id, check, when, message, patterns, spec.severity, spec.bucket, spec.on_error,
                      spec.description, SourceLocation(source, line), check.argument_path(),
                      compile_expression(check, lists, fold_budget=reading.limits.fold_budget),
                      compile_expression(when, lists, fold_budget=reading.limits.fold_budget) if when else None, marks)


def _matched(constraint: str, patterns: tuple[ToolPattern, ...] | None, tools: list[Tool],
             marks: dict[str, Mark | None], source: str, line: int | None, reading: _Reading) -> list[Tool] | None:
    """The tools a constraint applies to (``None``: none); each ``tools:`` entry that matches none is a problem."""
    names = [t.name for t in tools]
    reading.problems.extend(unmatched_tools(patterns or (), names, marks, reading.texts.get(source, []), source,
                                            line, constraint))
    return [t for t in tools if patterns is None or any(p.matches(t.name) for p in patterns)] or None


def _usable(expression: Expression, label: str, spec: ConstraintSpec, container: Any, source: str,
            line: int | None, reading: _Reading, lists: dict[str, Any], tools: list[Tool] | None) -> bool:
    """Whether the constraint's ``label`` expression has no problem: names, functions, lists and kinds
    (arguments too when the tools are known), and its cost within the evaluation budget."""
    problems: list[LocatedError] = [
        locate(problem, value_mark(container, label), source, f"{spec.id}.{label}", reading.texts.get(source, []))
        for problem in check_expression(expression, tools, lists)]
    if expression.cost > reading.limits.evaluation_budget:
        problems.append(PolicyFieldError(f"the expression costs {expression.cost} steps; the evaluation budget is "
                                         f"{reading.limits.evaluation_budget}", source=source, line=line,
                                         field=f"{spec.id}.{label}"))
    reading.problems.extend(problems)
    return not problems
