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

from .convert import one_of, structure
from .errors import RuleFileError, UnknownProfileError
from .yamlsource import Located, LocatedDict, load_yaml_file

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
        return [name for name, _ in _template_fields(self.message)]


def _template_fields(template: str, depth: int = 0) -> list[tuple[str, str | None]]:
    """Every replacement field of ``template`` as (name, conversion), nested ones included.

    >>> _template_fields("{path}: {value!r:>{width}}")
    [('path', None), ('value', 'r'), ('width', None)]
    """
    out: list[tuple[str, str | None]] = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        out.append((name, conversion))
        if spec and depth < 2:  # str.format nests at most two levels
            out.extend(_template_fields(spec, depth + 1))
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
class _RuleFile:
    rules: tuple[Any, ...] | None = ()  # each one is checked, with its position, by load_rules
    profiles: tuple[Any, ...] | None = ()
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


def _check_template(rule: Rule, allowed: frozenset[str] | None, source: str, line: int | None) -> None:
    """Refuse a message template that could not be filled, or could reach past its fields."""
    if rule.message is None:
        return

    def fail(message: str) -> RuleFileError:
        return RuleFileError(message, source=source, line=line, field=f"{rule.id}.message")

    try:
        fields = _template_fields(rule.message)
    except ValueError as err:
        raise fail(f"message template is malformed: {err}") from None
    for name, conversion in fields:
        if not name.isidentifier():
            raise fail(f"message field {{{name}}} must be a plain name (no attribute access or indexing)")
        if conversion not in (None, "r", "s", "a"):
            raise fail(f"message field {{{name}!{conversion}}} has an unknown conversion; use !r, !s or !a")
        if allowed is not None and name not in allowed:
            raise fail(f"message field {{{name}}} is not provided by operation {rule.op!r}; it provides "
                       + ", ".join(sorted(allowed)))


def _with_source(raw: Any, where: SourceLocation, path: Path, field: str) -> LocatedDict:
    """A copy of the rule or profile mapping ``raw`` with its ``source`` added (positions kept)."""
    if not isinstance(raw, dict):
        raise RuleFileError(f"{field} must be a mapping, got {type(raw).__name__} {raw!r}", source=str(path),
                            line=where.line, field=field)
    if "source" in raw:  # set by the loader: a rule file cannot claim another place
        line = raw.position_of("source")[0] if isinstance(raw, Located) else where.line
        raise RuleFileError("unknown key 'source'", source=str(path), line=line, field=f"{field}.source")
    copy = LocatedDict(raw)
    copy.source, copy.line, copy.column = str(path), where.line, getattr(raw, "column", None)
    copy.positions = dict(getattr(raw, "positions", {}))
    copy["source"] = {"file": where.file, "line": where.line}
    return copy


def _key_line(raw: Any, key: Any, default: int | None) -> int | None:
    """The line ``key`` of the YAML mapping (or index of the list) ``raw`` was written on."""
    if isinstance(raw, Located) and key in raw.positions:
        return raw.positions[key][0]
    return default


def load_rules(directory: str | Path) -> RuleSet:
    """Load every ``*.yaml`` file in ``directory`` (not below it) into one :class:`RuleSet`.

    Raises :class:`RuleFileError` naming file, line and field for anything malformed:
    unknown keys, unknown operations, unknown buckets, duplicate ids, bad templates,
    profiles naming rules that do not exist.
    """
    from .operations import operation_fields  # registry of every operation

    directory = Path(directory)
    if not directory.is_dir():
        raise RuleFileError("no such directory of rule files", source=str(directory))
    rules: dict[str, Rule] = {}
    profiles: dict[str, Profile] = {}
    written: dict[str, tuple[Path, Any]] = {}  # profile name -> (file, its YAML mapping)
    for path in sorted(directory.glob("*.yaml")):
        doc = load_yaml_file(path)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise RuleFileError("a rule file is a mapping with 'rules' and/or 'profiles'", source=str(path), line=1)
        structure(doc, _RuleFile, source=str(path))  # refuses unknown top-level keys
        shown = f"{directory.name}/{path.name}"  # findings cite rules/<file>:<line>
        for index, raw in enumerate(doc.get("rules") or ()):
            where = _located_source(raw, SourceLocation(shown, _key_line(doc.get("rules"), index, None)))
            label = raw["id"] if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"rules[{index}]"
            rule = structure(_with_source(raw, where, path, label), Rule, source=str(path), field_prefix=label)
            if rule.id in rules:
                raise RuleFileError(f"rule id {rule.id!r} is declared twice (first at {rules[rule.id].source})",
                                    source=str(path), line=where.line, field=f"{rule.id}.id")
            fields = operation_fields(rule.phase, rule.op)
            if fields is None:
                raise RuleFileError(f"operation {rule.op!r} is not registered for phase {rule.phase!r}",
                                    source=str(path), line=_key_line(raw, "op", where.line), field=f"{rule.id}.op")
            if rule.phase == "validate" and (rule.bucket is None or rule.message is None):
                lacking = "bucket" if rule.bucket is None else "message"
                raise RuleFileError(f"a validation rule needs a bucket and a message; this one has no {lacking}",
                                    source=str(path), line=where.line, field=f"{rule.id}.{lacking}")
            _check_template(rule, fields, str(path), _key_line(raw, "message", where.line))
            rules[rule.id] = rule
        for index, raw in enumerate(doc.get("profiles") or ()):
            where = _located_source(raw, SourceLocation(shown, _key_line(doc.get("profiles"), index, None)))
            label = (raw["name"] if isinstance(raw, dict) and isinstance(raw.get("name"), str)
                     else f"profiles[{index}]")
            profile = structure(_with_source(raw, where, path, label), Profile, source=str(path),
                                field_prefix=label)
            if profile.name in profiles:
                raise RuleFileError(f"profile {profile.name!r} is declared twice (first at "
                                    f"{profiles[profile.name].source})", source=str(path),
                                    line=where.line, field=f"{profile.name}.name")
            profiles[profile.name] = profile
            written[profile.name] = (path, raw)
    ruleset = RuleSet(rules, profiles)

    def locate(profile: Profile, key: str, item: str | None) -> tuple[str, int | None]:
        """The file and line of ``key`` (and of ``item`` in its list) in ``profile``'s mapping."""
        path, raw = written[profile.name]
        line = _key_line(raw, key, profile.source.line)
        value = raw.get(key) if isinstance(raw, dict) else None
        if item is not None and isinstance(value, list) and item in value:
            line = _key_line(value, value.index(item), line)
        return str(path), line

    for name in profiles:  # resolve now so a bad profile fails at load, not at first use
        _resolve_profile(ruleset, name, locate=locate)
    return ruleset


def _resolve_profile(ruleset: RuleSet, name: str, seen: tuple[str, ...] = (),
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
        ids = [r.id for r in _resolve_profile(ruleset, profile.extends, seen + (name,), locate)]
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
