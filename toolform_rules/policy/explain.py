"""``explain``: for one call, every constraint of a policy, whether it applied, and the value of each sub-expression.

It evaluates with the tree-walker (the reference evaluator) recording each node's value,
so what it shows is what the rule computed, not a re-description of it.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from ..calls import as_call
from ..errors import EvaluationError
from .evaluate import Scope, TreeWalker
from .expression import ROOTS, Expression, Literal, Name, Node
from .functions import describe
from .policy import Constraint, Policy, declared_names


@attrs.frozen
class Step:
    """One sub-expression as evaluated: its text and its value (or the error it raised)."""

    text: str
    value: Any = None
    error: str | None = None

    def shown(self) -> str:
        return f"error: {self.error}" if self.error is not None else _json(self.value)

    def to_dict(self) -> dict[str, Any]:
        """The step as JSON: its ``value``, or (past :data:`LONGEST_VALUE` characters) its ``shortened`` text."""
        out: dict[str, Any] = {"text": self.text}
        if self.error is not None:
            out["error"] = self.error
            return out
        text, cut = _encoded(self.value, LONGEST_VALUE)
        if cut:
            out["shortened"] = text
        else:
            out["value"] = self.value
        return out


#: The most characters of one value an explanation writes: every step may show the same large
#: argument (``args.rows`` a thousand times in one expression), and each would be written whole.
LONGEST_VALUE = 10_000


def _json(value: Any, limit: int = 120) -> str:
    return _encoded(value, limit)[0]


def _encoded(value: Any, limit: int) -> tuple[str, bool]:
    """A value as JSON cut at ``limit`` characters, and whether it was cut; only what is shown is
    encoded, however large the value."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]  # a string is one piece of the encoder's: cut it first
    pieces: list[str] = []
    length = 0
    try:
        # the pure-Python encoder yields piece by piece: stop once the text is long enough
        for piece in json.JSONEncoder(ensure_ascii=False).iterencode(value):
            pieces.append(piece)
            length += len(piece)
            if length > limit:
                break
        text = "".join(pieces)
    except (TypeError, ValueError, RecursionError):  # not JSON (a date from YAML), an integer too long to write
        text = describe(value, limit + 1)
    return (text, False) if len(text) <= limit else (text[:limit - 3] + "...", True)


@attrs.frozen
class ConstraintExplanation:
    """What one constraint made of the call."""

    id: str
    source: str
    severity: str
    outcome: str  # not for this tool | when false | held | fired | error | skipped on error
    when: tuple[Step, ...] = ()
    check: tuple[Step, ...] = ()
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "severity": self.severity, "outcome": self.outcome,
                "when": [s.to_dict() for s in self.when], "check": [s.to_dict() for s in self.check],
                "message": self.message}


@attrs.frozen
class Explanation:
    """Every constraint of a policy on one call."""

    policy: str
    version: Any
    digest: str
    tool: str
    constraints: tuple[ConstraintExplanation, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"policy": {"name": self.policy, "version": self.version, "sha256": self.digest}, "tool": self.tool,
                "constraints": [c.to_dict() for c in self.constraints]}

    def render(self) -> str:
        """Text for a terminal: each constraint, its outcome, then its sub-expressions' values."""
        lines = [f"policy {self.policy} v{self.version} (sha256 {self.digest[:12]}) on {self.tool}"]
        for item in self.constraints:
            lines.append(f"{item.id}  {item.outcome.upper()}  ({item.source}, {item.severity})")
            for label, steps in (("when", item.when), ("check", item.check)):
                if not steps:
                    continue
                root, *inner = steps
                lines.append(f"  {label:<5} {root.text}  →  {root.shown()}")
                lines.extend(f"          {step.text}  →  {step.shown()}" for step in inner)
            if item.message:
                lines.append(f"  message: {item.message}")
        return "\n".join(lines)


def _steps(expression: Expression, scope: Scope) -> tuple[tuple[Step, ...], Any, EvaluationError | None]:
    trace: list[tuple[Node, Any]] = []
    walker = TreeWalker(expression, scope, trace)
    value: Any = None
    failure: EvaluationError | None = None
    try:
        value = walker.run()
    except EvaluationError as err:
        failure = err
    except RecursionError:
        failure = EvaluationError("the value is nested too deeply", kind="budget")
    seen: set[tuple[int, int]] = set()
    steps: list[Step] = []
    root = expression.root
    for node, result in reversed(trace):  # the root finishes last: show it first
        span = (node.start, node.end)
        if isinstance(node, Literal) or (isinstance(node, Name) and node.name in ROOTS) or span in seen:
            continue
        seen.add(span)
        text = expression.source_of(node)
        if isinstance(result, EvaluationError):
            steps.append(Step(text, error=str(result)))
        else:
            steps.append(Step(text, value=result))
    if not steps or (steps[0].text != expression.source_of(root)):
        shown = Step(expression.text, error=str(failure)) if failure else Step(expression.text, value=value)
        steps.insert(0, shown)
    head, rest = steps[0], steps[1:]
    rest.reverse()  # the sub-expressions in the order they were computed
    return (head, *rest), value, failure


def explain_constraint(constraint: Constraint, scope: Scope, budget: int) -> ConstraintExplanation:
    """One constraint on the call in ``scope``."""
    base: dict[str, Any] = {"id": constraint.id, "source": str(constraint.source),
                            "severity": constraint.severity}
    when_steps: tuple[Step, ...] = ()
    if constraint.when is not None:
        scope.remaining = budget
        when_steps, applies, failure = _steps(constraint.when, scope)
        if failure is not None:
            outcome = "skipped on error" if constraint.on_error == "skip" else "error"
            return ConstraintExplanation(**base, outcome=outcome, when=when_steps, message=str(failure))
        if applies is not True:
            outcome = "when false" if applies is False else "error"
            return ConstraintExplanation(**base, outcome=outcome, when=when_steps)
    scope.remaining = budget
    check_steps, held, failure = _steps(constraint.check, scope)
    if failure is not None:
        outcome = "skipped on error" if constraint.on_error == "skip" else "error"
        return ConstraintExplanation(**base, outcome=outcome, when=when_steps, check=check_steps,
                                     message=str(failure))
    if held is True:
        return ConstraintExplanation(**base, outcome="held", when=when_steps, check=check_steps)
    if held is not False:
        return ConstraintExplanation(**base, outcome="error", when=when_steps, check=check_steps,
                                     message=f"the check gave {describe(held)}, not true or false")
    return ConstraintExplanation(**base, outcome="fired", when=when_steps, check=check_steps,
                                 message=constraint.message.render(scope, budget))


def explain(call: Any, policy: Policy, tools: Any = None) -> Explanation:
    """Every constraint of ``policy`` on ``call``, with the value of each sub-expression.

    ``tools``: when given, the call's name is resolved to its tool and ``norm`` is the
    normalised arguments; without, the name is taken as written.

    >>> from toolform_rules import load_policy, sample_toolset
    >>> policy = load_policy("policy: p\\nconstraints:\\n  - id: p.cap\\n    check: args.value * 2 <= 100\\n")
    >>> print(explain({"name": "LegalDraftV3", "arguments": {"value": 70}}, policy, sample_toolset()).render())
    policy p v1 (sha256 ...) on legal_draft_v3
    p.cap  FIRED  (<policy>:3, error)
      check args.value * 2 <= 100  →  false
              args.value  →  70
              args.value * 2  →  140
      message: p.cap: args.value * 2 <= 100 does not hold
    """
    name, arguments, _ = as_call(call)
    norm: Any = None
    if tools is not None:
        from ..engine.verbs import as_toolset, normalised_arguments

        tool = as_toolset(tools).get(name)
        if tool is not None and isinstance(arguments, dict):
            name = tool.name
            written = arguments
            norm = (lambda: normalised_arguments(written, tool))  # noqa: E731
            arguments = declared_names(written, tool.parameters, tool)  # as validation's policy sees them
    scope = policy.scope(str(name), arguments if isinstance(arguments, dict) else {}, norm)
    budget = policy.limits.evaluation_budget
    out = []
    for constraint in policy.constraints:
        if not constraint.applies_to(str(name)):
            out.append(ConstraintExplanation(constraint.id, str(constraint.source), constraint.severity,
                                             "not for this tool"))
            continue
        out.append(explain_constraint(constraint, scope, budget))
    return Explanation(policy.name, policy.version, policy.digest, str(name), tuple(out))
