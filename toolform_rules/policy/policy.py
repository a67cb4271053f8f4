"""A loaded policy: its constraints compiled, applied to calls, every finding stamped.

:class:`Policy` holds what :func:`~toolform_rules.policy.loading.load_policy` read: its
files and their digests, its lists and masks, and its :class:`Constraint` s, each compiled
once to closures.  ``apply`` adds a policy's findings to a :class:`ValidationReport`.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Iterable

import attrs

from ..errors import EvaluationError, LocatedError
from ..schema.ir import Tool
from ..limits import PolicyLimits
from ..schema.names import canonical_name
from ..engine.report import Finding, PolicyStamp, ValidationReport
from ..engine.rules import SourceLocation
from .checker import check_expression, resolve_schema
from .document import PolicyFieldError, PolicyTestSpec
from .evaluate import Compiled, Scope
from .expression import Expression, ExpressionError, read_expression, reference_path
from .functions import describe, truth
from .places import Mark, locate, place, raise_problems


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
        """A pattern as written in ``tools:``; its literal pieces canonical, so ``Send_*`` is ``send*``.

        >>> pattern = ToolPattern.read("Send_*")
        >>> pattern.parts, pattern.matches("send-payment"), pattern.matches("resend")
        (('send', '*'), True, False)
        """
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
    characters escaped (a message reaches terminals and logs) and the whole shortened.

    >>> print(shown_value("Acme\x1b[2J"), shown_value(["a", 1, None]), shown_value(True))
    Acme\\x1b[2J ["a", 1, null] true
    """
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
    """``(offset, text, is_field)`` pieces of a message template; an unbalanced brace is an error.

    >>> split_template("amount {args.amount} over {{cap}}")
    [(0, 'amount ', False), (8, 'args.amount', True), (20, ' over {cap}', False)]
    """
    pieces: list[tuple[int, str, bool]] = []
    literal, start, i = "", 0, 0
    while i < len(text):
        char = text[i]
        if not literal:
            start = i
        if char in "{}" and text[i:i + 2] in ("{{", "}}"):
            literal += char
            i += 2
        elif char == "{":
            end = text.find("}", i)
            if end < 0:
                raise ExpressionError("a '{' is never closed; write {{ for a brace", offset=i, text=text,
                                      expected=("}",))
            if literal:
                pieces.append((start, literal, False))
                literal = ""
            pieces.append((i + 1, text[i + 1:end], True))
            i = end + 1
        elif char == "}":
            raise ExpressionError("a '}' closes nothing; write }} for a brace", offset=i, text=text)
        else:
            literal += char
            i += 1
    if literal:
        pieces.append((start, literal, False))
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

        >>> from toolform_rules import load_policy
        >>> policy = load_policy("policy: p\\nconstraints:\\n  - id: p.to\\n    check: endswith(args.to, '.example')\\n")
        >>> [(f.rule, f.path, f.message) for f in policy.evaluate("send", {"to": "eve@evil.com"})]
        [('p.to', ('to',), "p.to: endswith(args.to, '.example') does not hold")]
        >>> policy.evaluate("send", {"to": "ann@corp.example"})
        ()
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

        >>> from toolform_rules import load_policy, sample_tool
        >>> from toolform_rules.engine.report import VALID
        >>> policy = load_policy("policy: p\\nconstraints:\\n  - id: p.term\\n    check: args.term_months <= 12\\n")
        >>> policy.apply(VALID, "legal_draft_v3", {"TermMonths": 48}, tool=sample_tool()).constraint_errors
        ['p.term: args.term_months <= 12 does not hold']
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
        """Check every constraint against ``tools``; a :class:`PolicyError` lists every problem.

        >>> from toolform_rules import load_policy, sample_toolset
        >>> load_policy("policy: p\\nconstraints:\\n  - id: p.x\\n    check: args.nope > 1\\n").check_tools(
        ...     sample_toolset().tools)
        Traceback (most recent call last):
        ...
        toolform_rules.errors.PolicyError: 1 problem in the policy:
        <policy>:4:12, field 'p.x.check': unknown argument 'nope': legal_draft_v3 declares auto_renew, ...
        """
        raise_problems(_tool_problems(self, list(tools)), self.texts)


def declared_names(arguments: dict[str, Any], schema: Any, tool: Tool, depth: int = 0) -> dict[str, Any]:
    """The arguments with every key renamed to the property it resolves to (canonical names), at every
    depth the schema declares; the same dict when nothing needs renaming.

    >>> from toolform_rules import sample_tool
    >>> tool = sample_tool()
    >>> declared_names({"TermMonths": 3, "contract_details": {"Status": "x"}}, tool.parameters, tool)
    {'term_months': 3, 'contract_details': {'status': 'x'}}
    """
    declared, canonical, objects = _names_of(schema, tool)
    if not declared or depth > 64:
        return arguments
    if arguments.keys() <= declared.keys():  # every name as declared: only nested objects may differ
        out: dict[str, Any] | None = None
        for name in objects & arguments.keys():
            value = arguments[name]
            renamed = declared_names(value, declared[name], tool, depth + 1) if type(value) is dict else value
            if renamed is not value:
                out = dict(arguments) if out is None else out
                out[name] = renamed
        return arguments if out is None else out
    return _renamed(arguments, declared, canonical, tool, depth)


def _names_of(schema: Any, tool: Tool) -> tuple[dict[str, Any], dict[str, str], frozenset[str]]:
    """A schema node's properties by name, their names by canonical name, and which of them are objects
    (worked out once per node)."""
    cache_key = ("policy:names", id(schema))
    names = tool.programs.get(cache_key)
    if names is None:
        resolved = resolve_schema(schema, tool)
        declared = {p.name: p.schema for p in resolved.properties}
        objects = frozenset(name for name, sub in declared.items() if resolve_schema(sub, tool).properties)
        # (the node is kept with its names: its id is theirs only while it lives)
        names = tool.programs[cache_key] = (declared, {canonical_name(p.name): p.name for p in resolved.properties},
                                            objects, schema)
    return names[:3]  # type: ignore[no-any-return]


def _renamed(arguments: dict[str, Any], declared: dict[str, Any], canonical: dict[str, str], tool: Tool,
             depth: int) -> dict[str, Any]:
    """:func:`declared_names` where some key is not written as declared."""
    out: dict[str, Any] | None = None
    for index, (key, value) in enumerate(arguments.items()):
        name = key
        if key not in declared:
            found = canonical.get(canonical_name(key)) if isinstance(key, str) else None
            if found is not None and found not in arguments:
                name = found
        child = declared.get(name)
        new_value = declared_names(value, child, tool, depth + 1) if child is not None and type(value) is dict \
            else value
        if out is None and (name != key or new_value is not value):
            out = dict(list(arguments.items())[:index])
        if out is not None:
            out[name] = new_value
    return arguments if out is None else out


def mask_path(text: str) -> tuple[str | int, ...] | None:
    """``args.card.number`` as the path ``("card", "number")``; ``None`` for anything but such a path.

    >>> mask_path("args.card.number"), mask_path("args.items[0]"), mask_path("lower(args.x)")
    (('card', 'number'), ('items', 0), None)
    """
    try:
        found = reference_path(read_expression(text).root)
    except ExpressionError:
        return None
    if found is None or found[0] != "args" or not found[1]:
        return None
    return found[1]


def unmatched_tools(patterns: Iterable[ToolPattern], names: list[str], marks: dict[str, Mark | None],
                    lines: list[str], source: str, line: int | None, constraint: str) -> list[LocatedError]:
    """A problem for each ``tools:`` entry of a constraint (at ``marks``) that matches none of ``names``."""
    return [PolicyFieldError(f"no tool matches {pattern.text!r}; the tools are: {', '.join(sorted(names)) or 'none'}",
                             source=source, line=at_line or line, column=at_column, field=f"{constraint}.tools")
            for index, pattern in enumerate(patterns) if not any(pattern.matches(n) for n in names)
            for at_line, at_column in (place(marks.get(f"tools[{index}]"), 0, "", lines),)]


def _tool_problems(policy: Policy, tools: list[Tool]) -> list[LocatedError]:
    """Problems of the policy against a toolset: unmatched ``tools`` entries, unknown arguments, kinds."""
    problems: list[LocatedError] = []
    names = [t.name for t in tools]
    for constraint in policy.constraints:
        source = constraint.source.file
        lines = policy.texts.get(source, [])
        problems.extend(unmatched_tools(constraint.tools or (), names, constraint.marks, lines, source,
                                        constraint.source.line, constraint.id))
        matched = [t for t in tools if constraint.applies_to(t.name)]
        if not matched:
            continue
        for label, expression in (("when", constraint.when), ("check", constraint.check)):
            if expression is not None:
                problems.extend(locate(problem, constraint.marks.get(label), source, f"{constraint.id}.{label}",
                                        lines) for problem in check_expression(expression, matched, policy.lists))
    return problems
