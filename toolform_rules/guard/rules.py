"""The guard's rules: ``rules/guard/*.yaml``, read into attrs classes and checked.

A rule is data: an id, a name, a severity, the fields of a tool it reads, the lowest
strictness it applies at, RE2 patterns (matched on the normalised text) or the name of one
registered check (:data:`toolform_rules.guard.checks.CHECKS`) for what a pattern cannot say,
and examples that must and must not fire (run by the tests).  Several entries may share an
id when they differ in severity: the reference's TS101 is high for "ignore the previous
instructions" and low for "never run DELETE", one rule in three tiers.

A malformed rule is a :class:`~toolform_rules.errors.RuleFileError` naming the file, line
and field, raised when the file is read.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import attrs

from ..errors import RuleFileError
from ..yamlsource import Located

#: The strictness levels, from the fewest findings to the most.
STRICTNESS = ("lenient", "standard", "strict")
#: Severities, from the most to the least serious.
SEVERITIES = ("high", "medium", "low")
#: The fields of a tool a rule may read (``fields:``), and what each is.
FIELD_KINDS = {
    "description": "the tool's description",
    "parameter_description": "the description of a parameter, at any depth of the schema (and of its definitions)",
    "title": "the title of a parameter or nested schema",
    "enum": "each string member of an enum",
    "default": "each string inside a default value",
    "examples": "each string inside examples (where the source keeps them)",
    "name": "the tool's name and each property name, with _ - . read as spaces",
}
#: What a finding's span covers: the sentence around the match (``sentence``) or the match itself.
SPANS = ("sentence", "match")


@attrs.frozen
class Examples:
    """Texts the rule must fire on, and texts it must stay quiet on (run by the tests)."""

    fire: tuple[str, ...] = ()
    quiet: tuple[str, ...] = ()


@attrs.frozen
class GuardRule:
    """One guard rule (or one severity tier of a rule: entries may share an ``id``).

    ``patterns``: RE2 patterns, case-insensitive (``(?-i:...)`` for a case-sensitive part),
    matched on the normalised text; ``check``: instead, the name of one registered check,
    which may read the patterns too; ``span``: ``sentence`` or ``match``.
    """

    id: str
    name: str
    severity: str
    summary: str
    fields: tuple[str, ...]
    examples: Examples
    strictness: str = "standard"
    patterns: tuple[str, ...] = ()
    check: str = ""
    span: str = "sentence"
    source: str = attrs.field(default="", eq=False)
    line: int = attrs.field(default=0, eq=False)

    @property
    def where(self) -> str:
        """The rule's ``file:line``."""
        return f"{self.source}:{self.line}"

    def applies_at(self, strictness: str) -> bool:
        """Whether the rule runs at ``strictness`` (it runs at its own level and above)."""
        return STRICTNESS.index(self.strictness) <= STRICTNESS.index(strictness)


@attrs.frozen
class GuardRuleFile:
    rules: tuple[GuardRule, ...]


@attrs.frozen(eq=False)  # (compared and hashed by identity: plans are cached per rule tuple)
class CompiledRule:
    """A rule with its patterns compiled by RE2 (one alternation: one pass over the text)."""

    rule: GuardRule
    pattern: Any  # re2 pattern, or None for a check without patterns


def compile_patterns(patterns: tuple[str, ...]) -> Any:
    """One case-insensitive RE2 pattern matching any of ``patterns``; ``ValueError`` naming the bad one.

    >>> compile_patterns((r"ignore\\s+previous", r"(?-i:IMPORTANT)")).search("Ignore  previous") is not None
    True
    """
    import re2  # google-re2: linear-time matching, whatever the text

    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    for index, pattern in enumerate(patterns):
        try:
            re2.compile(pattern, options)
        except re2.error as err:
            reason = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
            raise ValueError(f"patterns[{index}]: not a pattern RE2 can match in linear time: {reason}") from None
    return re2.compile("|".join(f"(?:{pattern})" for pattern in patterns), options) if patterns else None


def _check(rule: GuardRule, doc: Any, source: str, index: int) -> CompiledRule:
    """What the converter cannot see: known levels and fields, compilable patterns, a known check."""
    from .checks import CHECKS

    def fail(message: str, field: str) -> None:
        line = column = None
        if isinstance(doc, Located):
            line, column = doc.position_of(field)
        raise RuleFileError(message, source=source, line=line, column=column, field=f"rules[{index}].{field}")

    if rule.severity not in SEVERITIES:
        fail(f"severity is one of {', '.join(SEVERITIES)}, not {rule.severity!r}", "severity")
    if rule.strictness not in STRICTNESS:
        fail(f"strictness is one of {', '.join(STRICTNESS)}, not {rule.strictness!r}", "strictness")
    if rule.span not in SPANS:
        fail(f"span is one of {', '.join(SPANS)}, not {rule.span!r}", "span")
    if not rule.fields:
        fail("a rule reads at least one field", "fields")
    for field in rule.fields:
        if field not in FIELD_KINDS:
            fail(f"unknown field {field!r}; the fields are {', '.join(FIELD_KINDS)}", "fields")
    if not rule.patterns and not rule.check:
        fail("a rule has patterns or a check", "patterns")
    if rule.check and rule.check not in CHECKS:
        fail(f"unknown check {rule.check!r}; the checks are {', '.join(sorted(CHECKS))}", "check")
    if not rule.examples.fire:
        fail("a rule gives at least one example it fires on", "examples")
    try:
        pattern = compile_patterns(rule.patterns)
    except ValueError as err:
        fail(str(err), "patterns")
        raise  # (unreachable: fail raises)
    return CompiledRule(rule, pattern)


def read_guard_rules(path: str | Path) -> tuple[CompiledRule, ...]:
    """The rules in one guard rule file; a malformed rule raises :class:`RuleFileError` with file, line and field.

    >>> rules = read_guard_rules(rules_path() / "reference.yaml")
    >>> rules[0].rule.id, rules[0].rule.severity
    ('TS101', 'high')
    """
    from ..convert import structure
    from ..yamlsource import load_yaml_file

    source = str(path)
    doc = load_yaml_file(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
        raise RuleFileError("a guard rule file is a mapping with a list under rules", source=source, field="rules")
    if set(doc) - {"rules"}:
        raise RuleFileError(f"unknown key {sorted(set(doc) - {'rules'})[0]!r}; a guard rule file has only rules",
                            source=source, field=str(sorted(set(doc) - {"rules"})[0]))
    compiled = []
    for index, item in enumerate(doc["rules"]):
        rule = structure(item, GuardRule, source=source, field_prefix=f"rules[{index}]")
        line = item.line if isinstance(item, Located) and item.line else 0
        compiled.append(_check(attrs.evolve(rule, source=_shown(path), line=line), item, source, index))
    return tuple(compiled)


def _shown(path: str | Path) -> str:
    """How a finding names a rule file: ``rules/guard/x.yaml`` for the built-in ones, else the path given."""
    try:
        return f"rules/guard/{Path(path).resolve().relative_to(rules_path().resolve())}"
    except ValueError:
        return str(path)


def rules_path() -> Path:
    """``rules/guard`` (inside the installed package, else the source tree)."""
    from ..engine.rule_files import rules_directory

    return rules_directory() / "guard"


def read_guard_directory(directory: str | Path) -> tuple[CompiledRule, ...]:
    """Every ``*.yaml`` in ``directory`` (in name order); an (id, severity) given twice is refused."""
    compiled: list[CompiledRule] = []
    seen: dict[tuple[str, str], str] = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        for entry in read_guard_rules(path):
            key = (entry.rule.id, entry.rule.severity)
            if key in seen:
                raise RuleFileError(f"rule {entry.rule.id} at severity {entry.rule.severity} is given twice "
                                    f"({seen[key]} and {entry.rule.where})", source=entry.rule.source,
                                    line=entry.rule.line or None, field="id")
            seen[key] = entry.rule.where
            compiled.append(entry)
    return tuple(compiled)


@functools.cache
def builtin_guard_rules() -> tuple[CompiledRule, ...]:
    """The rules shipped in ``rules/guard/``, read once."""
    return read_guard_directory(rules_path())
