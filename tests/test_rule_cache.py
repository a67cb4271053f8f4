"""The built-in rule set's compiled form: shipped beside the YAML, used only when fresh, only data, exactly
what the YAML gives; no file outside the installation can change a rule that findings cite."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolform_rules.engine import rule_cache
from toolform_rules.errors import RuleFileError
from toolform_rules.engine.rule_cache import (COMPILED_NAME, cache_key, compiled_bytes, compiled_enabled, decode,
                                              encode, read_compiled, source_files, write_compiled)
from toolform_rules.engine.rule_files import (_builtin_key, builtin_rules, compile_builtin_rules, read_rule_files,
                                              rules_directory)
from toolform_rules.engine.rules import RuleSet
from toolform_rules.version import __version__

RULE_FILE = """
rules:
  - id: team.short
    op: max_length
    phase: validate
    bucket: constraint_errors
    message: "{path}: longer than {limit}"
profiles:
  - name: team
    rules: [team.short]
"""

CALL = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": 12}}
#: A new process validates CALL under the built-in rules and prints its constraint errors and what it loaded.
SESSION = f"""
import json, sys
from toolform_rules import sample_toolset, validate_arguments
report = validate_arguments({CALL!r}, sample_toolset())
print(json.dumps({{"constraint_errors": report.constraint_errors, "yaml": "yaml" in sys.modules}}))
"""


def run_session(env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", SESSION], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})})
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of rule files named as the built-in ones are (``rules/``)."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "team.yaml").write_text(RULE_FILE, encoding="utf-8")
    return rules


def _key(folder: Path, version: str = "1.0") -> str:
    return cache_key(sorted(folder.glob("*.yaml")), version, source_files())


# --- the compiled file shipped beside the YAML ----------------------------------------------------

def test_the_builtin_rules_round_trip_exactly() -> None:
    fresh = read_rule_files(rules_directory())
    assert decode(json.loads(json.dumps(encode(fresh)))) == fresh
    assert builtin_rules() == fresh


def test_the_compiled_file_is_the_bytes_compiling_the_yaml_gives() -> None:
    """What a new process reads (here, a checkout: compiled by the build hook at install, or again by the
    engine when an edit made it stale) is byte for byte what compiling the YAML gives now."""
    assert run_session()["yaml"] is False  # the compiled file was used: the YAML reader never loaded
    directory = rules_directory()
    key = _builtin_key(directory)
    assert (directory / COMPILED_NAME).read_bytes() == compiled_bytes(key, read_rule_files(directory))
    assert read_compiled(directory / COMPILED_NAME, key) == read_rule_files(directory)


def test_compiling_gives_the_same_bytes_whatever_the_hash_seed(tmp_path: Path) -> None:
    script = ("from toolform_rules.engine.rule_files import _builtin_key, read_rule_files, rules_directory\n"
              "from toolform_rules.engine.rule_cache import compiled_bytes\n"
              "import hashlib\n"
              "d = rules_directory()\n"
              "print(hashlib.sha256(compiled_bytes(_builtin_key(d), read_rule_files(d))).hexdigest())\n")
    digests = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1


def test_compile_builtin_rules_writes_what_reading_gives(folder: Path) -> None:
    path = compile_builtin_rules(folder)
    assert path == folder / COMPILED_NAME
    written = path.read_bytes()
    (folder / "team.yaml").write_text(RULE_FILE.replace("max_length", "no_such_op"), encoding="utf-8")
    with pytest.raises(RuleFileError, match="team.yaml"):  # a malformed rule file: nothing written
        compile_builtin_rules(folder)
    assert path.read_bytes() == written
    (folder / "team.yaml").write_text(RULE_FILE, encoding="utf-8")
    assert read_compiled(path, _builtin_key(folder)) == read_rule_files(folder)
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []  # the temporary file renamed over


def test_the_key_names_files_as_findings_cite_them_not_where_they_are(tmp_path: Path, folder: Path) -> None:
    """A file compiled in a build folder matches the same files installed elsewhere."""
    elsewhere = tmp_path / "site-packages" / "rules"
    elsewhere.mkdir(parents=True)
    (elsewhere / "team.yaml").write_bytes((folder / "team.yaml").read_bytes())
    assert _key(elsewhere) == _key(folder)
    assert read_rule_files(elsewhere) == read_rule_files(folder)  # their RuleSet.key too


def test_an_edited_rule_file_changes_the_key(folder: Path) -> None:
    path = compile_builtin_rules(folder)
    (folder / "team.yaml").write_text(RULE_FILE.replace("longer than", "over"), encoding="utf-8")
    assert read_compiled(path, _builtin_key(folder)) is None  # stale: the YAML is read instead


def test_another_version_or_code_makes_another_key(folder: Path) -> None:
    files = sorted(folder.glob("*.yaml"))
    key = cache_key(files, "1.0", source_files())
    assert key != cache_key(files, "1.1", source_files())
    assert key != cache_key(files, "1.0", [])
    assert key == _key(folder)


def test_a_file_whose_body_was_edited_or_cut_is_not_used(folder: Path) -> None:
    path = compile_builtin_rules(folder)
    key = _builtin_key(folder)
    good = path.read_bytes()
    path.write_bytes(good.replace(b"longer than", b"shorter than"))
    assert read_compiled(path, key) is None
    path.write_bytes(good[:-10])
    assert read_compiled(path, key) is None
    path.write_bytes(good)
    assert read_compiled(path, key) == read_rule_files(folder)


def test_a_file_under_another_key_or_format_is_not_used(folder: Path) -> None:
    path = compile_builtin_rules(folder)
    assert read_compiled(path, _key(folder, "2.0")) is None
    header, _, body = path.read_bytes().partition(b"\n")
    old = json.loads(header)
    path.write_bytes(json.dumps({**old, "format": 1}).encode() + b"\n" + body)
    assert read_compiled(path, old["key"]) is None


def test_the_compiled_file_can_be_ruled_out() -> None:
    for off in ("", "off", "0", "OFF", "none"):
        assert not compiled_enabled({"TOOLFORM_RULES_CACHE": off})
    assert compiled_enabled({}) and compiled_enabled({"TOOLFORM_RULES_CACHE": "/a/folder"})
    session = run_session({"TOOLFORM_RULES_CACHE": "off"})
    assert session == {"constraint_errors": ["value: -5 < minimum 0"], "yaml": True}


# --- the attack: an edited user cache -------------------------------------------------------------

def _tampered_body() -> bytes:
    """The built-in rule set with ``study.minimum`` turned into a maximum, encoded."""
    ruleset = read_rule_files(rules_directory())
    rule = ruleset.rules["study.minimum"]
    edited = attrs.evolve(rule, op="maximum", message="{path}: {value} > maximum {limit}")
    tampered = attrs.evolve(ruleset, rules={**ruleset.rules, "study.minimum": edited})
    return json.dumps(encode(tampered), ensure_ascii=False, separators=(",", ":")).encode()


def _format_1_key(rule_files: list[Path], code: list[Path]) -> str:
    """The cache key as the user cache (cache format 1) computed it: a public recipe, no secret."""
    digest = hashlib.sha256(f"toolform-rules {__version__}\0cache format 1\0".encode())
    for kind, paths in (("rules", rule_files), ("code", code)):
        for path in paths:
            digest.update(f"{kind}\0{path}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()


def test_an_edited_user_cache_with_its_digest_recomputed_changes_no_rule(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache in the user's folder, edited (``study.minimum`` made a maximum) and its digests recomputed
    as the code computed them, under the old key and the current one: the YAML's rule is still applied."""
    home, cache_home = tmp_path / "home", tmp_path / "xdg-cache"
    for folder in (home / ".cache" / "toolform-rules", cache_home / "toolform-rules"):
        folder.mkdir(parents=True, mode=0o700)
        body = _tampered_body()
        rule_files = sorted(rules_directory().glob("*.yaml"))
        for fmt, key in ((1, _format_1_key(rule_files, source_files())), (2, _builtin_key(rules_directory()))):
            header = {"format": fmt, "key": key, "sha256": hashlib.sha256(body).hexdigest()}
            path = folder / f"builtin-rules-{key}.json"
            path.write_bytes(json.dumps(header).encode() + b"\n" + body)
            path.chmod(0o600)
            assert decode(json.loads(body)).rules["study.minimum"].op == "maximum"  # a well-formed tamper
    planted = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    monkeypatch.delenv("TOOLFORM_RULES_CACHE", raising=False)

    assert run_session()["constraint_errors"] == ["value: -5 < minimum 0"]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == planted  # nothing read there, or written


# --- the encoding ---------------------------------------------------------------------------------

def test_a_compiled_file_names_only_the_rule_classes() -> None:
    with pytest.raises(ValueError, match="may not name class"):
        decode(["attrs", "Popen", {"args": "true"}])
    with pytest.raises(ValueError):
        decode({"__class__": "Rule"})
    with pytest.raises(rule_cache.Uncacheable):
        encode(object())


def test_a_compiled_file_names_only_the_fields_a_rule_class_takes() -> None:
    """A field the class does not take is refused, naming it."""
    location = encode(builtin_rules().rules["study.minimum"].source)
    assert decode(location) == builtin_rules().rules["study.minimum"].source
    with pytest.raises(ValueError, match=r"unknown fields for SourceLocation: \['nope'\]"):
        decode([*location[:2], {**location[2], "nope": 1}])


def test_what_cannot_round_trip_is_not_written(tmp_path: Path) -> None:
    ruleset = RuleSet({}, {}, key="k")
    odd = attrs.evolve(ruleset, rules={"r": object()})  # type: ignore[dict-item]
    with pytest.raises(rule_cache.Uncacheable):
        write_compiled(tmp_path / COMPILED_NAME, "k", odd)
    assert list(tmp_path.iterdir()) == []
    write_compiled(tmp_path / COMPILED_NAME, "k", ruleset)
    assert read_compiled(tmp_path / COMPILED_NAME, "k") == ruleset


JSON_KEYS = st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.none())
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=4).map(tuple),
                            st.frozensets(st.one_of(st.integers(), st.text(max_size=4)), max_size=4),
                            st.dictionaries(JSON_KEYS, inner, max_size=4)),
    max_leaves=20)


def _typed(value: object) -> object:
    """``value`` with every container's type written out: equal only when the types are equal too."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, frozenset):
        return ("frozenset", sorted(map(repr, value)))
    return (type(value).__name__, value)


@given(VALUES)
def test_the_encoding_keeps_every_value_and_type(value: object) -> None:
    assert _typed(decode(json.loads(json.dumps(encode(value))))) == _typed(value)


@given(st.frozensets(st.one_of(st.integers(), st.text(max_size=4)), max_size=6))
def test_a_set_is_encoded_in_one_order(value: frozenset) -> None:
    assert encode(value) == encode(frozenset(reversed(list(value))))
