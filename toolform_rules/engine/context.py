"""What an operation sees and makes while the compiler compiles one schema node.

The types of compiled checks and normalisers, the :class:`Reporter` that turns a rule's
failure into a finding, and the :class:`NodeContext` an operation is handed: the limits,
the tool, and the compiler's services (children, other profiles) — so the operations
depend on this module and never on the compiler itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from ..limits import Limits
from ..schema.ir import Schema, Tool
from .report import Finding, format_path
from .rules import Rule

if TYPE_CHECKING:
    from .compiler import Compiler

#: A linked path: ``None`` at the root, ``(parent, key)`` below (see :func:`flatten`).
Path = Any
#: A compiled check: records findings for ``value`` at ``path`` into ``out``; True when it failed.
#: ``path`` is linked, ``None`` at the root and ``(parent, key)`` below: cheap to extend.
Check = Callable[[Any, Path, list], bool]
#: A compiled normaliser: returns the normalised value (a new container when anything changed).
Transform = Callable[[Any], Any]


def accept(value: Any, path: Path, out: list) -> bool:
    """The check of a node with nothing to check."""
    return False


class Reporter:
    """Makes the findings of one rule: fills its message template, stamps its id and source."""

    __slots__ = ("rule", "rule_id", "bucket", "source", "template")

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.rule_id = rule.id
        self.bucket = rule.bucket
        self.source = str(rule.source)
        self.template = rule.message or ""

    def __call__(self, out: list, path: Path, template: str | None = None, **fields: Any) -> bool:
        flat = flatten(path)
        fields["path"] = format_path(flat)
        message = (template or self.template).format_map(fields)
        out.append(Finding(self.rule_id, self.bucket or "constraint_errors", flat, message, self.source))
        return True


def flatten(path: Path) -> tuple:
    """A linked path ``(((None, "a"), 0), "b")`` as the tuple ``("a", 0, "b")``."""
    parts = []
    while path is not None:
        path, key = path
        parts.append(key)
    parts.reverse()
    return tuple(parts)


@attrs.define
class NodeContext:
    """What an operation sees while it compiles one node."""

    compiler: Compiler
    root: bool

    @property
    def limits(self) -> Limits:
        return self.compiler.limits

    @property
    def tool(self) -> Tool | None:
        return self.compiler.tool

    def compile(self, schema: Schema) -> Check:
        """The check of a child schema."""
        return self.compiler.compile_node(schema)

    def normaliser(self, schema: Schema) -> Transform | None:
        """The normaliser of a child schema (``None`` when it changes nothing)."""
        return self.compiler.normaliser_of(schema)

    def normaliser_under(self, profile: str, schema: Schema) -> Transform | None:
        """The normaliser of ``schema`` under another (normalisation) profile of the built-in rules."""
        return self.compiler.under(profile).normaliser_of(schema)

    def reporter(self, rule: Rule) -> Reporter:
        return Reporter(rule)

    def rule_with_op(self, op: str) -> Rule | None:
        """The profile's validation rule that runs operation ``op``, if it has one."""
        for rule, _ in self.compiler.validate_rules:
            if rule.op == op:
                return rule
        return None

    def resolve(self, ref: str) -> Schema:
        assert self.compiler.tool is not None
        return self.compiler.tool.resolve(ref)
