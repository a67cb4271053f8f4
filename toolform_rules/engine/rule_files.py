"""Reading rule files: ``rules/*.yaml`` and a user's own, checked as they are read.

Every rule names a registered operation (so this module reads the registry, which the
rule data in :mod:`.rules` must not), every message template only fields that operation
provides, every profile only rules that exist; anything else is a :class:`RuleFileError`
naming the file, the line and the field.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import attrs

from ..convert import structure
from ..errors import RuleFileError
from ..yamlsource import Located, LocatedDict, load_yaml_file
from .operations import operation_fields
from .rules import Profile, Rule, RuleSet, SourceLocation, resolve_profile, template_fields


@attrs.frozen
class _RuleFile:
    rules: tuple[Any, ...] | None = ()  # each one is checked, with its position, by load_rules
    profiles: tuple[Any, ...] | None = ()
    description: str = ""


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
        fields = template_fields(rule.message)
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
        resolve_profile(ruleset, name, locate=locate)
    return ruleset


def rules_directory() -> Path:
    """Where the built-in rule files are: inside the installed package, else the source tree."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "rules", package.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise RuleFileError("the built-in rules directory is missing from the installation", source=str(package))


@functools.cache
def builtin_rules() -> RuleSet:
    """The rule set shipped in ``rules/`` (loaded once)."""
    return load_rules(rules_directory())
