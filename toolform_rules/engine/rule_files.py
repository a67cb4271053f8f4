"""Reading rule files: ``rules/*.yaml`` and a user's own, checked as they are read.

Every rule names a registered operation (so this module reads the registry, which the
rule data in :mod:`.rules` must not), every message template only fields that operation
provides, every profile only rules that exist; anything else is a :class:`RuleFileError`
naming the file, the line and the field.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import RuleFileError
from .operations import operation_fields
from .option_checks import checked_options, template_problem
from .rules import Profile, Rule, RuleSet, SourceLocation, resolve_profile

if TYPE_CHECKING:
    from ..yamlsource import LocatedDict

# The YAML reader and the converter (PyYAML, cattrs) are imported by the functions that read
# rule files: a process that takes the built-in rules from their cache never loads them.


@attrs.frozen
class _RuleFile:
    rules: tuple[Any, ...] | None = ()  # each one is checked, with its position, by load_rules
    profiles: tuple[Any, ...] | None = ()
    description: str = ""


def _located_source(doc: Any, default: SourceLocation) -> SourceLocation:
    from ..yamlsource import Located

    if isinstance(doc, Located):
        return SourceLocation(default.file, doc.line)
    return default


def _check_template(rule: Rule, allowed: frozenset[str] | None, source: str, line: int | None) -> None:
    """Refuse a message template that could not be filled, or could reach past its fields."""
    if rule.message is None:
        return
    problem = template_problem(rule.message, allowed, f"operation {rule.op!r}")
    if problem is not None:
        raise RuleFileError(problem, source=source, line=line, field=f"{rule.id}.message")


def _with_source(raw: Any, where: SourceLocation, path: Path, field: str) -> LocatedDict:
    """A copy of the rule or profile mapping ``raw`` with its ``source`` added (positions kept)."""
    from ..yamlsource import Located, LocatedDict

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
    from ..yamlsource import Located

    if isinstance(raw, Located) and key in raw.positions:
        return raw.positions[key][0]
    return default


def load_rules(*paths: str | Path) -> RuleSet:
    """The built-in rules and profiles, and those of the user's rule files.

    Each path is a rule file or a folder (its ``*.yaml`` files, not those below it), in the
    format of ``rules/*.yaml``.  A user profile may ``extends:`` a built-in one (``sdk``,
    ``study``, ``jsonschema``...) and add or ``replace`` rules; its rules may use any
    registered operation.  A user's rule id or profile name that is already taken is an
    error, as is anything malformed: a :class:`RuleFileError` names the file, the line and
    the field.  Pass the result as ``rules=`` wherever a profile is chosen.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "team.yaml").write_text('''
    ... rules:
    ...   - id: team.short-names
    ...     op: max_length
    ...     phase: validate
    ...     applies_to: [string]
    ...     bucket: constraint_errors
    ...     message: "{path}: longer than {limit} characters"
    ... profiles:
    ...   - name: team
    ...     extends: sdk
    ...     rules: [team.short-names]
    ... ''')
    >>> rules = load_rules(folder)
    >>> [r.id for r in rules.profile_rules("team")][-1], "sdk" in rules.profiles
    ('team.short-names', True)
    """
    return read_rule_files(*paths, base=builtin_rules())


def read_rule_files(*paths: str | Path, base: RuleSet | None = None) -> RuleSet:
    """The rules and profiles of ``paths`` (files, or folders of ``*.yaml``), over those of ``base``.

    Raises :class:`RuleFileError` naming file, line and field for anything malformed:
    unknown keys, unknown operations, unknown buckets, duplicate ids (also against
    ``base``), bad templates, profiles naming rules that do not exist.
    """
    from ..convert import structure
    from ..yamlsource import load_yaml_file

    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files.extend(sorted(path.glob("*.yaml")))
        elif path.is_file():
            files.append(path)
        else:
            raise RuleFileError("no such rule file or folder of rule files", source=str(path))
    base_rules = base.rules if base is not None else {}
    base_profiles = base.profiles if base is not None else {}
    rules: dict[str, Rule] = {}
    profiles: dict[str, Profile] = {}
    written: dict[str, tuple[Path, Any]] = {}  # profile name -> (file, its YAML mapping)
    digest = hashlib.sha256(base.key.encode() if base is not None else b"")
    for path in files:
        doc = load_yaml_file(path)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise RuleFileError("a rule file is a mapping with 'rules' and/or 'profiles'", source=str(path), line=1)
        structure(doc, _RuleFile, source=str(path))  # refuses unknown top-level keys
        shown = f"{path.parent.name}/{path.name}"  # findings cite rules/<file>:<line>
        # the name findings cite, not the path: the same files give the same set wherever they are
        # (the built-in set compiled in a build folder equals the one read where it is installed)
        digest.update(f"{shown}\0".encode() + path.read_bytes() + b"\0")
        for index, raw in enumerate(doc.get("rules") or ()):
            where = _located_source(raw, SourceLocation(shown, _key_line(doc.get("rules"), index, None)))
            label = raw["id"] if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"rules[{index}]"
            rule = structure(_with_source(raw, where, path, label), Rule, source=str(path), field_prefix=label)
            if rule.id in rules or rule.id in base_rules:
                first = (rules.get(rule.id) or base_rules[rule.id]).source
                raise RuleFileError(f"rule id {rule.id!r} is declared twice (first at {first})",
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
            rule = checked_options(rule, raw, str(path))  # options as the operation declares them, defaults filled
            rules[rule.id] = rule
        for index, raw in enumerate(doc.get("profiles") or ()):
            where = _located_source(raw, SourceLocation(shown, _key_line(doc.get("profiles"), index, None)))
            label = (raw["name"] if isinstance(raw, dict) and isinstance(raw.get("name"), str)
                     else f"profiles[{index}]")
            profile = structure(_with_source(raw, where, path, label), Profile, source=str(path),
                                field_prefix=label)
            if profile.name in profiles or profile.name in base_profiles:
                first = (profiles.get(profile.name) or base_profiles[profile.name]).source
                hint = "; name yours apart and extend it" if profile.name in base_profiles else ""
                raise RuleFileError(f"profile {profile.name!r} is declared twice (first at {first}){hint}",
                                    source=str(path),
                                    line=where.line, field=f"{profile.name}.name")
            profiles[profile.name] = profile
            written[profile.name] = (path, raw)
    ruleset = RuleSet({**base_rules, **rules}, {**base_profiles, **profiles},
                      key=digest.hexdigest() if base is not None or files else "")

    def locate(profile: Profile, key: str, item: str | None) -> tuple[str, int | None]:
        """The file and line of ``key`` (and of ``item`` in its list) in ``profile``'s mapping."""
        if profile.name not in written:  # a base profile: resolved, and placed, when the base was read
            return profile.source.file, profile.source.line
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


def _builtin_key(directory: Path) -> str:
    """The key of the built-in rule set in ``directory`` as its files and the engine's code are now."""
    from ..version import __version__
    from .rule_cache import cache_key, source_files

    return cache_key(sorted(directory.glob("*.yaml")), __version__, source_files())


def compile_builtin_rules(directory: Path | None = None) -> Path:
    """Compile the built-in rule files (``rules/*.yaml``) into ``rules/compiled.json`` beside them; its path.

    The build hook (``hatch_build.py``) runs this for the wheel and the editable install.
    Raises :class:`RuleFileError` for a malformed rule file or one that changed while being
    read (nothing is written then), :class:`OSError` when the folder cannot be written.

    >>> import shutil, tempfile
    >>> from toolform_rules.engine.rule_cache import read_compiled
    >>> folder = Path(tempfile.mkdtemp()) / "rules"
    >>> _ = shutil.copytree(rules_directory(), folder)
    >>> path = compile_builtin_rules(folder)
    >>> path.name, read_compiled(path, _builtin_key(folder)) == read_rule_files(rules_directory())
    ('compiled.json', True)
    """
    from .rule_cache import COMPILED_NAME, write_compiled

    folder = rules_directory() if directory is None else directory
    key = _builtin_key(folder)
    ruleset = read_rule_files(folder, base=None)
    if _builtin_key(folder) != key:  # the key would name what was not read
        raise RuleFileError("a rule file changed while the rules were compiled: compile again", source=str(folder))
    write_compiled(folder / COMPILED_NAME, key, ruleset)
    return folder / COMPILED_NAME


@functools.cache
def builtin_rules() -> RuleSet:
    """The rule set shipped in ``rules/``: read once per process, from its compiled form when that is fresh.

    Reading and checking the YAML takes most of a new process's first validation, so the
    package ships the result, compiled when it was built, as ``rules/compiled.json`` beside
    the YAML (:mod:`.rule_cache`).  It is used only when its key — the sha256 of the rule
    files, the package version and the code that reads them — is the key of the files as
    they are; else the YAML is read (and, in a source checkout, compiled again).  Nothing
    outside the installation is read: no rule can be changed but by changing the files
    findings cite.  ``TOOLFORM_RULES_CACHE=off`` always reads the YAML.

    >>> builtin_rules() is builtin_rules(), "sdk" in builtin_rules().profiles
    (True, True)
    """
    from .rule_cache import COMPILED_NAME, Uncacheable, compiled_enabled, read_compiled, write_compiled

    directory = rules_directory()
    if not compiled_enabled():
        return read_rule_files(directory, base=None)
    try:
        key: str | None = _builtin_key(directory)
    except OSError:
        key = None
    compiled = read_compiled(directory / COMPILED_NAME, key) if key is not None else None
    if compiled is not None:
        return compiled
    ruleset = read_rule_files(directory, base=None)
    # An installed package is never written to (its files are the installer's); a checkout's rules/ is
    # the developer's own, where an edited rule or engine module would otherwise make every process read
    # the YAML until the next install.
    if key is not None and directory.parent != Path(__file__).resolve().parent.parent:
        try:
            if _builtin_key(directory) == key:  # else edited meanwhile: the key would name what was not read
                write_compiled(directory / COMPILED_NAME, key, ruleset)
        except (OSError, Uncacheable):
            pass
    return ruleset
