"""Rules are data: the records of ``rules/*.yaml``, their profiles, and where to find them.

A :class:`Rule` names one registered operation (``op``), the phase it runs in, the bucket
its failures land in and the message template they carry.  A :class:`Profile` is an
ordered list of rule ids, optionally extending another profile and replacing some of its
rules.  Each rule keeps the file and line it was declared on, so every finding can say
which line of which file made it.
"""

from __future__ import annotations

import functools
import string
from pathlib import Path
from typing import Any

import attrs

from .convert import structure
from .errors import RuleFileError, UnknownProfileError
from .yamlsource import Located, load_yaml_file

BUCKETS = ("unknown_tool", "missing_required", "unknown_args", "type_errors", "enum_errors", "constraint_errors")
PHASES = ("normalise", "validate")


@attrs.frozen
class SourceLocation:
    """Where something was declared: a file and a 1-based line."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


def _one_of(allowed: tuple[str, ...]) -> Any:
    def check(_: Any, attribute: attrs.Attribute, value: str) -> None:
        if value not in allowed:
            raise ValueError(f"{attribute.name} must be one of {', '.join(allowed)}, not {value!r}")

    return check


@attrs.frozen
class Rule:
    """One rule: an operation applied in a phase, with the bucket and message of its failures.

    ``halts``: when this rule fails on a value, later rules skip that value (the type rule).
    ``unconditional``: this rule runs on a value even after a halting rule failed on it.
    ``order``: findings of a rule with a higher order come after those of lower order.
    ``listed``: ``in argument order`` lists this rule's findings in the order the call
    wrote the arguments, depth first (else as the checks found them).
    ``options``: what the operation reads to behave as this profile wants.
    """

    id: str
    op: str
    phase: str = attrs.field(validator=_one_of(PHASES))
    bucket: str | None = attrs.field(default=None, validator=attrs.validators.optional(_one_of(BUCKETS)))
    message: str | None = None
    halts: bool = False
    unconditional: bool = False
    order: int = 0
    listed: str = attrs.field(default="as found", validator=_one_of(("as found", "in argument order")))
    options: dict[str, Any] = attrs.field(factory=dict)
    description: str = ""
    source: SourceLocation = SourceLocation("<unknown>")

    def render(self, **fields: Any) -> str:
        """The rule's message with ``fields`` filled in (only plain ``{name}`` fields exist)."""
        assert self.message is not None
        return self.message.format_map(fields)

    def message_fields(self) -> list[str]:
        """The names the message template uses."""
        if self.message is None:
            return []
        return [name for _, name, _, _ in string.Formatter().parse(self.message) if name is not None]


@attrs.frozen
class Profile:
    """A named, ordered list of rule ids; ``extends`` another profile, ``replace`` swaps rule ids."""

    name: str
    description: str = ""
    extends: str | None = None
    rules: tuple[str, ...] = ()
    replace: dict[str, str] = attrs.field(factory=dict)
    source: SourceLocation = SourceLocation("<unknown>")


@attrs.frozen
class _RuleFile:
    rules: tuple[dict[str, Any], ...] = ()
    profiles: tuple[dict[str, Any], ...] = ()
    description: str = ""


@attrs.frozen
class RuleSet:
    """Every rule and profile declared in a directory of rule files."""

    rules: dict[str, Rule]
    profiles: dict[str, Profile]

    def profile_rules(self, name: str) -> tuple[Rule, ...]:
        """The rules of profile ``name`` in order, after ``extends`` and ``replace``.

        >>> [r.id for r in builtin_rules().profile_rules("study") if r.phase == "validate"][:2]
        ['study.unknown-tool', 'study.type']
        """
        return _resolve_profile(self, name)

    def profile_names(self) -> list[str]:
        """The declared profile names."""
        return list(self.profiles)


def _located_source(doc: Any, default: SourceLocation) -> SourceLocation:
    if isinstance(doc, Located):
        return SourceLocation(default.file, doc.line)
    return default


def _check_template(rule: Rule, allowed: frozenset[str] | None) -> None:
    if rule.message is None:
        return
    try:
        fields = rule.message_fields()
    except ValueError as err:
        raise RuleFileError(f"message template is malformed: {err}", source=rule.source.file,
                            line=rule.source.line, field=f"{rule.id}.message") from None
    for name in fields:
        if not name.isidentifier():
            raise RuleFileError(
                f"message field {{{name}}} must be a plain name (no attribute access or indexing)",
                source=rule.source.file, line=rule.source.line, field=f"{rule.id}.message")
        if allowed is not None and name not in allowed:
            raise RuleFileError(
                f"message field {{{name}}} is not provided by operation {rule.op!r}; it provides "
                + ", ".join(sorted(allowed)),
                source=rule.source.file, line=rule.source.line, field=f"{rule.id}.message")


def load_rules(directory: str | Path) -> RuleSet:
    """Load every ``*.yaml`` file in ``directory`` (not below it) into one :class:`RuleSet`.

    Raises :class:`RuleFileError` naming file, line and field for anything malformed:
    unknown keys, unknown operations, unknown buckets, duplicate ids, bad templates,
    profiles naming rules that do not exist.
    """
    from .operations import operation_fields  # registry of every operation

    directory = Path(directory)
    rules: dict[str, Rule] = {}
    profiles: dict[str, Profile] = {}
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml_file(path)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise RuleFileError("a rule file is a mapping with 'rules' and/or 'profiles'", source=str(path), line=1)
        structure(doc, _RuleFile, source=str(path))  # refuses unknown top-level keys
        shown = f"{directory.name}/{path.name}"  # findings cite rules/<file>:<line>
        for index, raw in enumerate(doc.get("rules") or ()):
            where = _located_source(raw, SourceLocation(shown))
            if not isinstance(raw, dict):
                raise RuleFileError("a rule is a mapping", source=str(path), line=where.line, field=f"rules[{index}]")
            rule = structure({**raw, "source": {"file": where.file, "line": where.line}}, Rule, source=str(path))
            if rule.id in rules:
                raise RuleFileError(f"rule id {rule.id!r} is declared twice (first at {rules[rule.id].source})",
                                    source=str(path), line=where.line, field="id")
            fields = operation_fields(rule.phase, rule.op)
            if fields is None:
                raise RuleFileError(f"operation {rule.op!r} is not registered for phase {rule.phase!r}",
                                    source=str(path), line=where.line, field=f"{rule.id}.op")
            if rule.phase == "validate" and (rule.bucket is None or rule.message is None):
                raise RuleFileError("a validation rule needs a bucket and a message", source=str(path),
                                    line=where.line, field=rule.id)
            _check_template(rule, fields)
            rules[rule.id] = rule
        for raw in doc.get("profiles") or ():
            where = _located_source(raw, SourceLocation(shown))
            profile = structure({**raw, "source": {"file": where.file, "line": where.line}}, Profile,
                                source=str(path))
            if profile.name in profiles:
                raise RuleFileError(f"profile {profile.name!r} is declared twice", source=str(path),
                                    line=where.line, field="name")
            profiles[profile.name] = profile
    ruleset = RuleSet(rules, profiles)
    for name in profiles:  # resolve now so a bad profile fails at load, not at first use
        _resolve_profile(ruleset, name)
    return ruleset


def _resolve_profile(ruleset: RuleSet, name: str, seen: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    profile = ruleset.profiles.get(name)
    if profile is None:
        raise UnknownProfileError(f"unknown profile {name!r}; known: {', '.join(ruleset.profiles)}")
    if name in seen:
        raise RuleFileError(f"profile {name!r} extends itself", source=profile.source.file,
                            line=profile.source.line, field="extends")
    ids: list[str] = []
    if profile.extends is not None:
        if profile.extends not in ruleset.profiles:
            raise RuleFileError(f"profile {name!r} extends unknown profile {profile.extends!r}",
                                source=profile.source.file, line=profile.source.line, field="extends")
        ids = [r.id for r in _resolve_profile(ruleset, profile.extends, seen + (name,))]
    for old, new in profile.replace.items():
        if old not in ids:
            raise RuleFileError(f"profile {name!r} replaces {old!r}, which its base does not have",
                                source=profile.source.file, line=profile.source.line, field="replace")
        ids[ids.index(old)] = new
    ids.extend(profile.rules)
    out = []
    for rule_id in ids:
        rule = ruleset.rules.get(rule_id)
        if rule is None:
            raise RuleFileError(f"profile {name!r} names unknown rule {rule_id!r}", source=profile.source.file,
                                line=profile.source.line, field="rules")
        out.append(rule)
    return tuple(out)


def rules_directory() -> Path:
    """Where the built-in rule files are: inside the installed package, else the source tree."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "rules", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise RuleFileError("the built-in rules directory is missing from the installation", source=str(here))


@functools.cache
def builtin_rules() -> RuleSet:
    """The rule set shipped in ``rules/`` (loaded once)."""
    return load_rules(rules_directory())
