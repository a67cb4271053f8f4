"""Policy files: their format, loading them (with includes), checking them, and applying them to calls.

A policy file is YAML, structured by the one cattrs converter into the ``*Spec`` classes
below (unknown keys refused).  :func:`load_policy` reads it and every file it includes,
reads every expression, checks them all (against the tools, when given) and raises one
:class:`PolicyError` listing every problem with file, line, column and a caret — or
returns a :class:`Policy`, whose constraints are compiled to closures once.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable

import attrs

from ..convert import FieldValueError, one_of, structure
from ..errors import EvaluationError, LocatedError, PolicyError, RuleFileError
from ..ir import Tool
from ..limits import PolicyLimits
from ..names import canonical_name
from ..report import Finding, PolicyStamp, ValidationReport
from ..rules import BUCKETS, SourceLocation
from ..yamlsource import Located, LocatedDict, load_yaml
from .checker import check_expression, resolve_schema
from .evaluate import Compiled, Scope, compile_expression
from .expression import Expression, ExpressionError, read_expression, reference_path
from .functions import describe, truth

SEVERITIES = ("error", "warning")
ON_ERROR = ("fail", "skip")


def _version(_: Any, attribute: Any, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldValueError(attribute.name, f"version must be an integer or a string, not {value!r}")


def _some_tools(attribute: Any, value: tuple[str, ...] | None) -> None:
    if value is not None and not value:
        raise FieldValueError(attribute.name, "tools must name at least one tool (leave it out for every tool)")


def _identifier(_: Any, attribute: Any, value: str) -> None:
    if not value.strip() or any(c.isspace() for c in value):
        raise FieldValueError(attribute.name, f"{attribute.name} must be a non-empty word without spaces, "
                                              f"not {value!r}")


@attrs.frozen
class ConstraintSpec:
    """One constraint as written: ``check`` must hold for calls of ``tools`` (all tools when absent) when ``when`` holds."""

    id: str = attrs.field(validator=_identifier)
    check: str
    tools: tuple[str, ...] | None = attrs.field(default=None, validator=lambda _, a, v: _some_tools(a, v))
    when: str | None = None
    message: str | None = None
    severity: str = attrs.field(default="error", validator=one_of(SEVERITIES))
    bucket: str = attrs.field(default="constraint_errors", validator=one_of(BUCKETS))
    on_error: str = attrs.field(default="fail", validator=one_of(ON_ERROR))
    description: str = ""


@attrs.frozen
class TestCallSpec:
    """The call a policy test makes."""

    __test__ = False  # not a pytest test class, whatever its name

    name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ExpectSpec:
    """What a policy test expects: the verdict, exactly which constraints fire, which must not."""

    ok: bool | None = None
    fired: tuple[str, ...] | None = None
    not_fired: tuple[str, ...] = ()


@attrs.frozen
class PolicyTestSpec:
    """One test: a call and what the policy must say of it."""

    __test__ = False  # not a pytest test class, whatever its name

    call: TestCallSpec
    expect: ExpectSpec
    name: str = ""


@attrs.frozen
class PolicyDocument:
    """A policy file as written."""

    policy: str = attrs.field(validator=_identifier)
    version: Any = attrs.field(default=1, validator=_version)
    description: str = ""
    include: tuple[str, ...] = ()
    toolset: str | None = None
    lists: dict[str, tuple[Any, ...]] = attrs.field(factory=dict)
    mask: tuple[str, ...] = ()
    constraints: tuple[ConstraintSpec, ...] = ()
    tests: tuple[PolicyTestSpec, ...] = ()


@attrs.frozen
class TestDocument:
    """A ``*_test.yaml`` file: tests of the policy beside it (or the one ``policy`` names)."""

    __test__ = False  # not a pytest test class, whatever its name

    tests: tuple[PolicyTestSpec, ...]
    policy: str | None = None
    toolset: str | None = None


# --- runtime -------------------------------------------------------------------------------

@attrs.frozen
class PolicyFile:
    """One file a policy was read from, and the sha256 of its bytes."""

    path: str
    sha256: str


@attrs.frozen
class ToolPattern:
    """A ``tools:`` entry: a name or a glob (``*``, ``?``), matched on canonical names (case and ``_``/``-`` ignored)."""

    text: str
    parts: tuple[str, ...]  # canonical literal pieces, "*" and "?"

    @classmethod
    def read(cls, text: str) -> ToolPattern:
        parts: list[str] = []
        literal = ""
        for char in text:
            if char in "*?":
                if literal:
                    parts.append(canonical_name(literal))
                    literal = ""
                if not (char == "*" and parts and parts[-1] == "*"):
                    parts.append(char)
            else:
                literal += char
        if literal:
            parts.append(canonical_name(literal))
        return cls(text, tuple(p for p in parts if p))

    def matches(self, name: str) -> bool:
        """Whether a tool name matches (linear in the name for each ``*``: no backtracking blow-up)."""
        subject = canonical_name(name)
        # positions reachable after each part: a set-based NFA walk, O(len(parts) * len(name)).
        reachable = {0}
        for part in self.parts:
            if part == "*":
                start = min(reachable) if reachable else None
                reachable = set(range(start, len(subject) + 1)) if start is not None else set()
            elif part == "?":
                reachable = {i + 1 for i in reachable if i < len(subject)}
            else:
                reachable = {i + len(part) for i in reachable if subject.startswith(part, i)}
            if not reachable:
                return False
        return len(subject) in reachable


@attrs.frozen
class MessageTemplate:
    """A message with ``{expression}`` fields (``{{`` and ``}}`` write braces)."""

    pieces: tuple[str | Expression, ...]
    compiled: tuple[str | Compiled, ...] = attrs.field(eq=False, repr=False)

    def render(self, scope: Scope, budget: int) -> str:
        """The message for the call in ``scope`` (a field that cannot be evaluated shows ``?``)."""
        if len(self.compiled) == 1 and isinstance(self.compiled[0], str):
            return self.compiled[0]
        out: list[str] = []
        for piece in self.compiled:
            if isinstance(piece, str):
                out.append(piece)
                continue
            scope.remaining = budget
            try:
                value = piece(scope)
            except (EvaluationError, RecursionError):
                out.append("?")
                continue
            out.append(shown_value(value))
        return "".join(out)


def shown_value(value: Any, limit: int = 200) -> str:
    """A value as a message shows it: a string as itself, anything else as JSON; control
    characters escaped (a message reaches terminals and logs) and the whole shortened."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = describe(value, limit)
    text = "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def split_template(text: str) -> list[tuple[int, str, bool]]:
    """``(offset, text, is_field)`` pieces of a message template; an unbalanced brace is an error."""
    pieces: list[tuple[int, str, bool]] = []
    literal, i = "", 0
    while i < len(text):
        char = text[i]
        if char in "{}" and text[i:i + 2] in ("{{", "}}"):
            literal += char
            i += 2
        elif char == "{":
            end = text.find("}", i)
            if end < 0:
                raise ExpressionError("a '{' is never closed; write {{ for a brace", offset=i, text=text,
                                      expected=("}",))
            if literal:
                pieces.append((i - len(literal), literal, False))
                literal = ""
            pieces.append((i + 1, text[i + 1:end], True))
            i = end + 1
        elif char == "}":
            raise ExpressionError("a '}' closes nothing; write }} for a brace", offset=i, text=text)
        else:
            literal += char
            i += 1
    if literal:
        pieces.append((len(text) - len(literal), literal, False))
    return pieces


@attrs.frozen(eq=False)
class Constraint:
    """One compiled constraint of a policy."""

    id: str
    check: Expression
    when: Expression | None
    message: MessageTemplate
    tools: tuple[ToolPattern, ...] | None
    severity: str
    bucket: str
    on_error: str
    description: str
    source: SourceLocation
    path: tuple[str | int, ...]
    check_fn: Compiled = attrs.field(repr=False)
    when_fn: Compiled | None = attrs.field(repr=False)
    #: where ``check``, ``when`` and each ``tools[i]`` were written, for problems found later
    marks: dict[str, Mark | None] = attrs.field(factory=dict, repr=False)

    @property
    def where(self) -> str:
        """``file:line`` of the constraint, as its findings say it."""
        return self._where

    _where: str = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_where", str(self.source))

    def applies_to(self, name: str) -> bool:
        """Whether the constraint is for a tool of this name."""
        return self.tools is None or any(pattern.matches(name) for pattern in self.tools)


@attrs.frozen(eq=False)
class Policy:
    """A loaded, checked policy: apply it with ``validate_arguments(..., policy=)`` or :meth:`evaluate`."""

    name: str
    version: Any
    description: str
    files: tuple[PolicyFile, ...]
    constraints: tuple[Constraint, ...]
    lists: dict[str, list[Any]]
    mask: tuple[tuple[str | int, ...], ...]
    tests: tuple[tuple[PolicyTestSpec, SourceLocation], ...]
    toolset: str | None
    limits: PolicyLimits
    #: each file's lines, for the caret excerpts of problems found later
    texts: dict[str, list[str]] = attrs.field(factory=dict, repr=False)
    _by_name: dict[str, tuple[Constraint, ...]] = attrs.field(factory=dict, init=False, repr=False)
    #: name, version and digest, as every finding of this policy carries them
    stamp: PolicyStamp = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        whole = hashlib.sha256()  # over each file's name and sha256, in reading order
        for file in self.files:
            whole.update(f"{os.path.basename(file.path)}\0{file.sha256}\n".encode())
        object.__setattr__(self, "stamp", PolicyStamp(self.name, self.version, whole.hexdigest()))

    @property
    def digest(self) -> str:
        """The sha256 over the policy's files (each file's name and sha256, in reading order)."""
        return self.stamp.digest

    def constraints_for(self, tool_name: str) -> tuple[Constraint, ...]:
        """The constraints that apply to a tool (decided once per name)."""
        found = self._by_name.get(tool_name)
        if found is None:
            found = tuple(c for c in self.constraints if c.applies_to(tool_name))
            if len(self._by_name) < 10_000:
                self._by_name[tool_name] = found
        return found

    def scope(self, name: str, arguments: dict[str, Any],
              norm: Callable[[], dict[str, Any]] | dict[str, Any] | None = None) -> Scope:
        """What the constraints of one call see."""
        return Scope(arguments, call={"name": name}, lists=self.lists, norm=norm,
                     budget=self.limits.evaluation_budget)

    def evaluate(self, name: str, arguments: dict[str, Any], *,
                 norm: Callable[[], dict[str, Any]] | dict[str, Any] | None = None) -> tuple[Finding, ...]:
        """The findings (errors and warnings) of every constraint that applies to a call of ``name``.

        ``name`` is the tool's name; ``norm`` the normalised arguments (or how to compute
        them), used only by constraints that read ``norm``.
        """
        constraints = self.constraints_for(name)
        if not constraints:
            return ()
        scope = self.scope(name, arguments, norm)
        stamp = self.stamp
        out: list[Finding] = []
        for constraint in constraints:
            finding = self._outcome(constraint, scope, stamp)
            if finding is not None:
                out.append(finding)
        return tuple(out)

    def _outcome(self, constraint: Constraint, scope: Scope, stamp: PolicyStamp) -> Finding | None:
        budget = self.limits.evaluation_budget
        scope.remaining = budget
        try:
            if constraint.when_fn is not None:
                applies = constraint.when_fn(scope)
                if applies is not True and (applies is False or not truth(applies, "when")):
                    return None
            held = constraint.check_fn(scope)
            if held is True or (held is not False and truth(held, "the check")):
                return None
            message = constraint.message.render(scope, budget)
        except (EvaluationError, RecursionError) as err:
            if constraint.on_error == "skip":
                return None
            reason = str(err) if isinstance(err, EvaluationError) else "the value is nested too deeply"
            message = f"{constraint.id}: cannot be checked ({reason})"
        return Finding(constraint.id, constraint.bucket, constraint.path, message, constraint.where,
                       constraint.severity, stamp)

    def apply(self, report: ValidationReport, name: str, arguments: dict[str, Any], *,
              norm: Callable[[], dict[str, Any]] | dict[str, Any] | None = None,
              tool: Tool | None = None) -> ValidationReport:
        """``report`` with this policy's findings added (warnings apart: they never fail the call).

        With ``tool``, ``args`` sees each argument under the name the schema declares (values
        as written): the schema's rules accept ``Memo`` or ``termMonths`` for ``memo`` and
        ``term_months``, so a constraint on ``args.memo`` must see it too, or a model could
        step around the constraint by changing a name's case.
        """
        if tool is not None:
            arguments = declared_names(arguments, tool.parameters, tool)
        findings = self.evaluate(name, arguments, norm=norm)
        if not findings:
            return report
        if all(f.severity == "error" for f in findings):
            return ValidationReport(report.findings + findings, report.warnings)
        errors = tuple(f for f in findings if f.severity == "error")
        warnings = tuple(f for f in findings if f.severity != "error")
        return ValidationReport(report.findings + errors, report.warnings + warnings)

    def check_tools(self, tools: Iterable[Tool]) -> None:
        """Check every constraint against ``tools``; a :class:`PolicyError` lists every problem."""
        raise_problems(_tool_problems(self, list(tools)), self.texts)


def declared_names(arguments: dict[str, Any], schema: Any, tool: Tool, depth: int = 0) -> dict[str, Any]:
    """The arguments with every key renamed to the property it resolves to (canonical names), at every
    depth the schema declares; the same dict when nothing needs renaming.

    >>> from toolform_rules import sample_tool
    >>> tool = sample_tool()
    >>> declared_names({"TermMonths": 3, "contract_details": {"Status": "x"}}, tool.parameters, tool)
    {'term_months': 3, 'contract_details': {'status': 'x'}}
    """
    cache_key = ("policy:names", id(schema))
    names = tool.programs.get(cache_key)
    if names is None:  # per schema node, once: its names, their canonical forms, which are objects
        resolved = resolve_schema(schema, tool)
        declared_schemas = {p.name: p.schema for p in resolved.properties}
        objects = frozenset(name for name, sub in declared_schemas.items() if resolve_schema(sub, tool).properties)
        names = (declared_schemas, {canonical_name(p.name): p.name for p in resolved.properties}, objects, schema)
        tool.programs[cache_key] = names
    declared, canonical, objects, _ = names
    if not declared or depth > 64:
        return arguments
    if arguments.keys() <= declared.keys():  # every name as declared: only nested objects may differ
        out: dict[str, Any] | None = None
        for name in objects & arguments.keys():
            value = arguments[name]
            if type(value) is dict:
                renamed = declared_names(value, declared[name], tool, depth + 1)
                if renamed is not value:
                    out = dict(arguments) if out is None else out
                    out[name] = renamed
        return arguments if out is None else out
    out = None
    for index, (key, value) in enumerate(arguments.items()):
        name = key
        if key not in declared:
            found = canonical.get(canonical_name(key)) if isinstance(key, str) else None
            if found is not None and found not in arguments:
                name = found
        child = declared.get(name)
        new_value = declared_names(value, child, tool, depth + 1) \
            if child is not None and type(value) is dict else value
        if out is None and (name != key or new_value is not value):
            out = dict(list(arguments.items())[:index])
        if out is not None:
            out[name] = new_value
    return arguments if out is None else out


# --- loading ---------------------------------------------------------------------------------

@attrs.define
class _Reading:
    """The state of one load: files read, problems found."""

    limits: PolicyLimits
    files: list[PolicyFile] = attrs.Factory(list)
    texts: dict[str, list[str]] = attrs.Factory(dict)
    problems: list[LocatedError] = attrs.Factory(list)
    documents: list[tuple[PolicyDocument, Any, str, list[Any], list[Any]]] = attrs.Factory(list)
    reading: list[str] = attrs.Factory(list)

    def read(self, text: str, source: str, base: Path | None, depth: int, raw: bytes | None = None) -> None:
        raw = text.encode("utf-8") if raw is None else raw
        if len(raw) > self.limits.max_file_bytes:
            self.problems.append(RuleFileError(f"the policy is larger than {self.limits.max_file_bytes} bytes",
                                               source=source))
            return
        self.files.append(PolicyFile(source, hashlib.sha256(raw).hexdigest()))  # the bytes, as sha256sum sees them
        self.texts[source] = text.split("\n")
        try:
            data = load_yaml(text, source=source, max_bytes=self.limits.max_file_bytes)
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
        key = str(path.resolve())
        if key in self.reading:
            self.problems.append(RuleFileError(f"{name} includes itself (through {' -> '.join(self.reading)})",
                                               **where))
            return
        try:
            raw = path.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            reason = err.strerror if isinstance(err, OSError) else "it is not UTF-8 text"
            self.problems.append(RuleFileError(f"cannot include {name}: {reason}", **where))
            return
        self.reading.append(key)
        try:
            self.read(text, str(path), path.parent, depth, raw)
        finally:
            self.reading.pop()


class PolicyFieldError(LocatedError):
    """One problem of a policy file's structure (a key, a value of the wrong kind)."""


Mark = tuple[int, int, "str | None"]


def _mark(container: Any, key: Any) -> Mark | None:
    """Where ``container[key]``'s scalar starts (line, column, style), from the YAML reader."""
    if not isinstance(container, Located):
        return None
    mark = container.value_mark(key)
    if mark is not None:
        return mark
    line, column = container.position_of(key)
    return (line, column, "?") if line is not None and column is not None else None


def _place(mark: Mark | None, offset: int, text: str, lines: list[str]) -> tuple[int | None, int | None]:
    """Where offset ``offset`` of a scalar that starts at ``mark`` is in its file (line, column)."""
    if mark is None:
        return None, None
    line, column, style = mark
    if style == "?":  # not a scalar: the key's own place
        return line, column
    if style in ("|", ">"):  # the block's text starts on the next line; its first line sets the indentation
        following = lines[line:]
        indent = next((len(c) - len(c.lstrip(" ")) for c in following if c.strip()), 0)
        consumed = 0
        for number, content in enumerate(following, start=line):
            piece = len(content[indent:]) if content.strip() else 0
            if offset <= consumed + piece:
                return number + 1, indent + offset - consumed + 1
            consumed += piece + 1
        return line, column
    if "\n" in text[:offset]:  # a plain or quoted scalar folded over lines: its first line
        return line, column
    if style in ("'", '"') and 0 < line <= len(lines):
        return line, column + 1 + _raw_width(lines[line - 1][column:], offset, style)
    return line, column + offset


def _raw_width(raw: str, offset: int, style: str) -> int:
    """How many characters of a quoted scalar's source (after its opening quote) write its first
    ``offset`` characters: an escape (``\\"``, ``\\x41``, ``''``) is several characters of source for one."""
    position = 0
    for _ in range(offset):
        if position >= len(raw):
            break
        if style == '"' and raw[position] == "\\":
            position += {"x": 4, "u": 6, "U": 10}.get(raw[position + 1:position + 2], 2)
        elif style == "'" and raw.startswith("''", position):
            position += 2
        else:
            position += 1
    return position


def _read(text: Any, container: Any, key: Any, source: str, field: str, reading: _Reading,
          limits: PolicyLimits) -> Expression | None:
    try:
        return read_expression(text, limits)
    except ExpressionError as err:
        reading.problems.append(_locate(err, _mark(container, key), source, field, reading.texts.get(source, [])))
        return None


def _locate(err: ExpressionError, mark: Mark | None, source: str, field: str, lines: list[str],
            offset_shift: int = 0, whole: str | None = None) -> LocatedError:
    line, column = _place(mark, err.offset + offset_shift, whole if whole is not None else err.text, lines)
    return PolicyFieldError(err.message, source=source, line=line, column=column, field=field)


def _compile_message(spec: ConstraintSpec, container: Any, source: str, reading: _Reading,
                     lists: dict[str, Any]) -> MessageTemplate | None:
    if spec.message is None:
        text = f"{spec.id}: {spec.check} does not hold"
        return MessageTemplate((text,), (text,))
    mark, lines, field = _mark(container, "message"), reading.texts.get(source, []), f"{spec.id}.message"
    try:
        pieces = split_template(spec.message)
    except ExpressionError as err:
        reading.problems.append(_locate(err, mark, source, field, lines))
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
            problems.append(_locate(err, mark, source, field, lines, offset, spec.message))
            continue
        problems.extend(_locate(problem, mark, source, field, lines, offset, spec.message)
                        for problem in check_expression(expression, None, lists, want_boolean=False))
        parts.append(expression)
    reading.problems.extend(problems)
    if problems:
        return None
    compiled = tuple(p if isinstance(p, str) else compile_expression(p, lists) for p in parts)
    return MessageTemplate(tuple(parts), compiled)


def mask_path(text: str) -> tuple[str | int, ...] | None:
    """``args.card.number`` as the path ``("card", "number")``; ``None`` for anything but such a path."""
    try:
        found = reference_path(read_expression(text).root)
    except ExpressionError:
        return None
    if found is None or found[0] != "args" or not found[1]:
        return None
    return found[1]


def _tool_problems(policy: Policy, tools: list[Tool]) -> list[LocatedError]:
    """Problems of the policy against a toolset: unmatched ``tools`` entries, unknown arguments, kinds."""
    problems: list[LocatedError] = []
    names = [t.name for t in tools]
    for constraint in policy.constraints:
        source = constraint.source.file
        lines = policy.texts.get(source, [])
        for index, pattern in enumerate(constraint.tools or ()):
            if not any(pattern.matches(n) for n in names):
                line, column = _place(constraint.marks.get(f"tools[{index}]"), 0, "", lines)
                problems.append(PolicyFieldError(
                    f"no tool matches {pattern.text!r}; the tools are: {', '.join(sorted(names)) or 'none'}",
                    source=source, line=line or constraint.source.line, column=column,
                    field=f"{constraint.id}.tools"))
        matched = [t for t in tools if constraint.applies_to(t.name)]
        if not matched:
            continue
        for label, expression in (("when", constraint.when), ("check", constraint.check)):
            if expression is not None:
                problems.extend(_locate(problem, constraint.marks.get(label), source, f"{constraint.id}.{label}",
                                        lines) for problem in check_expression(expression, matched, policy.lists))
    return problems


def raise_problems(problems: list[LocatedError], files: Iterable[PolicyFile] | dict[str, list[str]]) -> None:
    """Raise one :class:`PolicyError` for all ``problems`` (nothing when there are none)."""
    if not problems:
        return
    excerpts: dict[str, list[str]] = {}
    if isinstance(files, dict):
        excerpts = files
    else:
        for file in files:
            try:
                excerpts[file.path] = Path(file.path).read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                continue
    problems = sorted(problems, key=lambda p: (p.source or "", p.line or 0, p.column or 0))
    raise PolicyError(problems, excerpts=excerpts)


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
            raw = path.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            reason = err.strerror if isinstance(err, OSError) else "it is not UTF-8 text"
            raise PolicyError([RuleFileError(f"cannot read the policy: {reason}", source=str(path))]) from None
        reading.reading.append(str(path.resolve()))
        reading.read(text, str(path), Path(base) if base is not None else path.parent, 0, raw)
    elif isinstance(source, str):
        reading.read(source, "<policy>", Path(base) if base is not None else None, 0)
    else:
        raise PolicyError([RuleFileError(f"a policy is a path or YAML text, not {type(source).__name__}")])
    toolset = None
    if tools is not None:
        from ..engine import _toolset
        toolset = _toolset(tools)
    policy = _build(reading, list(toolset.tools) if toolset is not None else None)
    return policy


def _build(reading: _Reading, tools: list[Tool] | None) -> Policy:
    if not reading.documents:
        raise_problems(reading.problems or [RuleFileError("no policy was read")], reading.texts)
    top = reading.documents[0][0]
    lists: dict[str, list[Any]] = {}
    for document, data, source, _, _ in reading.documents:
        for name, values in document.lists.items():
            if name in lists:
                line, column = data["lists"].position_of(name)
                reading.problems.append(PolicyFieldError(f"list {name!r} is declared twice", source=source,
                                                         line=line, column=column, field=f"lists.{name}"))
            lists[name] = list(values)
    constraints: list[Constraint] = []
    seen: dict[str, str] = {}
    mask: list[tuple[str | int, ...]] = []
    tests: list[tuple[PolicyTestSpec, SourceLocation]] = []
    named: list[tuple[Any, str, tuple[int | None, int | None]]] = []  # ids the tests name, and where
    for document, data, source, raw_constraints, raw_tests in reading.documents:
        for index, text in enumerate(document.mask):
            path = mask_path(text)
            if path is None:
                line, column = data["mask"].position_of(index)
                reading.problems.append(PolicyFieldError(
                    f"a mask is a path into the arguments, like args.card.number; not {text!r}",
                    source=source, line=line, column=column, field=f"mask[{index}]"))
            else:
                mask.append(path)
        for index, spec in enumerate(document.constraints):
            container = raw_constraints[index]
            line = container.line if isinstance(container, Located) else None
            where = f"{source}:{line}" if line is not None else source
            constraint = _constraint(spec, container, source, line, reading, lists, tools)
            if spec.id in seen:
                id_line, id_column = container.position_of("id") if isinstance(container, Located) else (line, None)
                reading.problems.append(PolicyFieldError(f"constraint id {spec.id!r} is already used at "
                                                         f"{seen[spec.id]}", source=source, line=id_line,
                                                         column=id_column, field=f"{spec.id}.id"))
                continue
            seen[spec.id] = where
            if constraint is not None:
                constraints.append(constraint)
        for index, test in enumerate(document.tests):
            container = raw_tests[index]
            tests.append((test, SourceLocation(source, container.line if isinstance(container, Located) else None)))
            expect = container.get("expect") if isinstance(container, dict) else None
            for key in ("fired", "not_fired"):
                listed = expect.get(key) if isinstance(expect, dict) else None
                for position, name in enumerate(listed if isinstance(listed, list) else []):
                    named.append((name, source, _place(_mark(listed, position), 0, "", reading.texts.get(source, []))))
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


def _constraint(spec: ConstraintSpec, container: Any, source: str, line: int | None, reading: _Reading,
                lists: dict[str, Any], tools: list[Tool] | None) -> Constraint | None:
    """Read, check and compile one constraint (its problems go to ``reading``)."""
    lines = reading.texts.get(source, [])
    patterns = tuple(ToolPattern.read(t) for t in spec.tools) if spec.tools is not None else None
    marks: dict[str, Mark | None] = {"check": _mark(container, "check"), "when": _mark(container, "when")}
    raw_tools = container.get("tools") if isinstance(container, dict) else None
    for index in range(len(spec.tools or ())):
        marks[f"tools[{index}]"] = _mark(raw_tools, index)
    matched = None
    if tools is not None:
        names = [t.name for t in tools]
        for index, pattern in enumerate(patterns or ()):
            if not any(pattern.matches(n) for n in names):
                at_line, at_column = _place(marks[f"tools[{index}]"], 0, "", lines)
                reading.problems.append(PolicyFieldError(
                    f"no tool matches {pattern.text!r}; the tools are: {', '.join(sorted(names)) or 'none'}",
                    source=source, line=at_line or line, column=at_column, field=f"{spec.id}.tools"))
        matched = [t for t in tools if patterns is None or any(p.matches(t.name) for p in patterns)] or None
    check = _read(spec.check, container, "check", source, f"{spec.id}.check", reading, reading.limits)
    when = _read(spec.when, container, "when", source, f"{spec.id}.when", reading, reading.limits) \
        if spec.when is not None else None
    ok = check is not None and (spec.when is None or when is not None)
    for label, expression in (("check", check), ("when", when)):
        if expression is None:
            continue
        # names, functions, lists and kinds; arguments too when the tools are known
        for problem in check_expression(expression, matched, lists):
            reading.problems.append(_locate(problem, _mark(container, label), source, f"{spec.id}.{label}", lines))
            ok = False
        if expression.cost > reading.limits.evaluation_budget:
            reading.problems.append(PolicyFieldError(
                f"the expression costs {expression.cost} steps; the evaluation budget is "
                f"{reading.limits.evaluation_budget}", source=source, line=line, field=f"{spec.id}.{label}"))
            ok = False
    message = _compile_message(spec, container, source, reading, lists)
    if not ok or check is None or message is None:
        return None
    return Constraint(spec.id, check, when, message, patterns, spec.severity, spec.bucket, spec.on_error,
                      spec.description, SourceLocation(source, line), check.argument_path(),
                      compile_expression(check, lists), compile_expression(when, lists) if when else None, marks)
