"""The built-in rule set's cache: used only when fresh, only data, exactly what the YAML gives."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolform_rules.engine import rule_cache
from toolform_rules.engine.rule_cache import (cache_directory, cache_key, cached_rule_set, decode, encode,
                                              read_cached, source_files, write_cached)
from toolform_rules.engine.rule_files import builtin_rules, read_rule_files, rules_directory
from toolform_rules.engine.rules import RuleSet

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


class Reader:
    """Reads a folder of rule files, counting how often it was asked to."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.calls = folder, 0

    def __call__(self) -> RuleSet:
        self.calls += 1
        return read_rule_files(self.folder)

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("*.yaml"))


@pytest.fixture
def reader(tmp_path: Path) -> Reader:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "team.yaml").write_text(RULE_FILE, encoding="utf-8")
    return Reader(folder)


def cached(reader: Reader, cache: Path, version: str = "1.0") -> RuleSet:
    return cached_rule_set(reader.files(), reader, version=version, directory=cache)


def test_the_builtin_rules_round_trip_exactly() -> None:
    fresh = read_rule_files(rules_directory())
    assert decode(json.loads(json.dumps(encode(fresh)))) == fresh
    assert builtin_rules() == fresh


def test_a_second_read_comes_from_the_cache_and_equals_the_first(reader: Reader, tmp_path: Path) -> None:
    first = cached(reader, tmp_path / "cache")
    second = cached(reader, tmp_path / "cache")
    assert reader.calls == 1
    assert second == first == read_rule_files(reader.folder)
    assert [r.id for r in second.profile_rules("team")] == ["team.short"]


def test_an_edited_rule_file_is_read_again(reader: Reader, tmp_path: Path) -> None:
    before = cached(reader, tmp_path / "cache")
    (reader.folder / "team.yaml").write_text(RULE_FILE.replace("longer than", "over"), encoding="utf-8")
    after = cached(reader, tmp_path / "cache")
    assert reader.calls == 2
    assert after.rules["team.short"].message == "{path}: over {limit}" != before.rules["team.short"].message


def test_another_version_or_code_makes_another_key(reader: Reader, tmp_path: Path) -> None:
    files = reader.files()
    key = cache_key(files, "1.0", source_files())
    assert key != cache_key(files, "1.1", source_files())
    assert key != cache_key(files, "1.0", [])
    cached(reader, tmp_path / "cache", version="1.0")
    cached(reader, tmp_path / "cache", version="1.1")
    assert reader.calls == 2


def _cache_file(cache: Path) -> Path:
    (path,) = cache.glob("builtin-rules-*.json")
    return path


def test_a_file_whose_body_was_edited_is_not_used(reader: Reader, tmp_path: Path) -> None:
    cached(reader, tmp_path / "cache")
    path = _cache_file(tmp_path / "cache")
    path.write_bytes(path.read_bytes().replace(b"longer than", b"shorter than"))
    assert cached(reader, tmp_path / "cache").rules["team.short"].message == "{path}: longer than {limit}"
    assert reader.calls == 2


def test_a_file_under_another_key_is_not_used(reader: Reader, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cached(reader, cache)
    path = _cache_file(cache)
    other = cache_key(reader.files(), "2.0")
    path.rename(cache / f"builtin-rules-{other}.json")  # right name, wrong key inside
    assert read_cached(cache, other) is None


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")
def test_a_file_others_may_write_is_not_used(reader: Reader, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cached(reader, cache)
    path = _cache_file(cache)
    path.chmod(0o666)
    cached(reader, cache)
    assert reader.calls == 2


def test_a_cache_names_only_the_rule_classes() -> None:
    with pytest.raises(ValueError, match="may not name class"):
        decode(["attrs", "Popen", {"args": "true"}])
    with pytest.raises(ValueError):
        decode({"__class__": "Rule"})
    with pytest.raises(rule_cache.Uncacheable):
        encode(object())


def test_a_cache_names_only_the_fields_a_rule_class_takes() -> None:
    """A field the class does not take is refused, naming it."""
    location = encode(builtin_rules().rules["study.minimum"].source)
    assert decode(location) == builtin_rules().rules["study.minimum"].source
    with pytest.raises(ValueError, match=r"unknown fields for SourceLocation: \['nope'\]"):
        decode([*location[:2], {**location[2], "nope": 1}])


def test_what_cannot_round_trip_is_not_written(tmp_path: Path) -> None:
    ruleset = RuleSet({}, {}, key="k")
    odd = attrs.evolve(ruleset, rules={"r": object()})  # type: ignore[dict-item]
    assert not write_cached(tmp_path, "k", odd)
    assert list(tmp_path.iterdir()) == []
    assert write_cached(tmp_path, "k", ruleset)
    assert read_cached(tmp_path, "k") == ruleset


def test_only_the_newest_files_are_kept(tmp_path: Path) -> None:
    for index in range(5):
        assert write_cached(tmp_path, f"key{index}", RuleSet({}, {}, key=str(index)), keep=3)
    assert len(list(tmp_path.glob("builtin-rules-*.json"))) == 3


def test_the_cache_can_be_moved_or_turned_off(reader: Reader, tmp_path: Path) -> None:
    assert cache_directory({"TOOLFORM_RULES_CACHE": str(tmp_path)}) == tmp_path
    for off in ("", "off", "0", "OFF"):
        assert cache_directory({"TOOLFORM_RULES_CACHE": off}) is None
    assert cache_directory({"HOME": "/home/x"}) in (Path("/home/x/.cache/toolform-rules"),
                                                    Path(os.path.expanduser("~/.cache/toolform-rules")))
    cached_rule_set(reader.files(), reader, version="1", directory=None)
    cached_rule_set(reader.files(), reader, version="1", directory=None)
    assert reader.calls == 2


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
