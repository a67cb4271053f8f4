"""Rules are data: the records of ``rules/*.yaml``, their profiles, and where to find them.

A :class:`Rule` names one registered operation (``op``), the phase it runs in, the bucket
its failures land in and the message template they carry.  A :class:`Profile` is an
ordered list of rule ids, optionally extending another profile and replacing some of its
rules.  Each rule keeps the file and line it was declared on, so every finding can say
which line of which file made it.
"""

from __future__ import annotations

import string
from typing import Any

import attrs

from ..field_checks import one_of
from ..errors import RuleFileError, UnknownProfileError

BUCKETS = ("unknown_tool", "missing_required", "unknown_args", "type_errors", "enum_errors", "constraint_errors")
PHASES = ("normalise", "validate")


@attrs.frozen
class SourceLocation:
    """Where something was declared: a file and a 1-based line."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


@attrs.frozen
class Rule:
    """One rule: an operation applied in a phase, with the bucket and message of its failures.

    ``halts``: when this rule fails on a value, later rules skip that value (the type rule).
    ``unconditional``: this rule runs on a value even after a halting rule failed on it.
    ``order``: findings of a rule with a higher order come after those of lower order.
    ``listed``: ``in argument order`` lists this rule's findings in the order the call
    wrote the arguments, depth first (else as the checks found them).
    ``repairs_only_rejected``: (normalisation) the rule changes only values the validation
    rules reject as they stand, so a call that passes without it is not normalised at all.
    ``applies_to``: the kinds of schema node the rule applies to (``string``, ``integer``,
    ``enum:string``...); empty means wherever its operation finds what it checks.
    ``options``: what the operation reads to behave as this profile wants.
    """

    id: str
    op: str
    phase: str = attrs.field(validator=one_of(PHASES))
    applies_to: tuple[str, ...] = ()
    bucket: str | None = attrs.field(default=None, validator=attrs.validators.optional(one_of(BUCKETS)))
    message: str | None = None
    halts: bool = False
    unconditional: bool = False
    order: int = 0
    listed: str = attrs.field(default="as found", validator=one_of(("as found", "in argument order")))
    repairs_only_rejected: bool = False
    options: dict[str, Any] = attrs.field(factory=dict)
    description: str = ""
    source: SourceLocation = SourceLocation("<unknown>")

    def render(self, **fields: Any) -> str:
        """The rule's message with ``fields`` filled in (only plain ``{name}`` fields exist)."""
        assert self.message is not None
        return self.message.format_map(fields)

    def message_fields(self) -> list[str]:
        """The names the message template uses (also those nested in a format spec: ``{value:{width}}``)."""
        if self.message is None:
            return []
        return [name for name, _ in template_fields(self.message)]


def template_fields(template: str, depth: int = 0) -> list[tuple[str, str | None]]:
    """Every replacement field of ``template`` as (name, conversion), nested ones included.

    >>> template_fields("{path}: {value!r:>{width}}")
    [('path', None), ('value', 'r'), ('width', None)]
    """
    out: list[tuple[str, str | None]] = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        out.append((name, conversion))
        if spec and depth < 2:  # str.format nests at most two levels
            out.extend(template_fields(spec, depth + 1))
    return out


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
class RuleSet:
    """Every rule and profile of the built-in rule files, or of those and a user's.

    ``key``: names the set by what it was read from, a sha256 over the files' paths and
    bytes (a user's set over the built-in one's key too): compiled programs are cached per key.
    """

    rules: dict[str, Rule]
    profiles: dict[str, Profile]
    key: str = ""
    # what the compiler shares between the tools compiled under each profile (compiler.SharedNodes)
    compiled: dict = attrs.field(factory=dict, init=False, repr=False, eq=False)

    def profile_rules(self, name: str) -> tuple[Rule, ...]:
        """The rules of profile ``name`` in order, after ``extends`` and ``replace``.

        >>> from toolform_rules import builtin_rules
        >>> [r.id for r in builtin_rules().profile_rules("study") if r.phase == "validate"][:2]
        ['study.unknown-tool', 'study.type']
        """
        return resolve_profile(self, name)

    def validates(self, name: str) -> bool:
        """Whether profile ``name`` gives a verdict (it has validation rules); else it only normalises.

        >>> from toolform_rules import builtin_rules
        >>> builtin_rules().validates("sdk"), builtin_rules().validates("normalized")
        (True, False)
        """
        return any(rule.phase == "validate" for rule in self.profile_rules(name))

    def profile_names(self) -> list[str]:
        """The declared profile names."""
        return list(self.profiles)


def resolve_profile(ruleset: RuleSet, name: str, seen: tuple[str, ...] = (),
                     locate: Any = None) -> tuple[Rule, ...]:
    """The rules of profile ``name``; ``locate(profile, key, item)`` places an error (file, line)."""
    profile = ruleset.profiles.get(name)
    if profile is None:
        raise UnknownProfileError(f"unknown profile {name!r}; known: {', '.join(ruleset.profiles)}")

    def fail(message: str, key: str, item: str | None = None) -> RuleFileError:
        source, line = (locate(profile, key, item) if locate is not None
                        else (profile.source.file, profile.source.line))
        return RuleFileError(message, source=source, line=line, field=f"{profile.name}.{key}")

    if name in seen:
        cycle = " -> ".join(seen[seen.index(name):] + (name,))
        raise fail(f"profile {name!r} extends itself: {cycle}", "extends")
    ids: list[str] = []
    if profile.extends is not None:
        if profile.extends not in ruleset.profiles:
            raise fail(f"profile {name!r} extends unknown profile {profile.extends!r}", "extends")
        ids = [r.id for r in resolve_profile(ruleset, profile.extends, seen + (name,), locate)]
    replaced: set[str] = set()
    for old, new in profile.replace.items():
        if old not in ids:
            raise fail(f"profile {name!r} replaces {old!r}, which its base does not have", "replace")
        ids[ids.index(old)] = new
        replaced.add(new)
    ids.extend(profile.rules)
    out = []
    for rule_id in ids:
        rule = ruleset.rules.get(rule_id)
        if rule is None:
            if rule_id in replaced:  # (a base's own rules resolved when the base did)
                raise fail(f"profile {name!r} replaces a rule with unknown rule {rule_id!r}", "replace")
            raise fail(f"profile {name!r} names unknown rule {rule_id!r}", "rules", rule_id)
        out.append(rule)
    return tuple(out)
