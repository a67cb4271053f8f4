"""tools/corpora.py: the pinned corpora are verified, and a missing or corrupt one stops the run
with one message (naming the corpus, its pin and the command that fetches it), never a traceback."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from support import corpora as support

ROOT = Path(__file__).resolve().parent.parent
corpora = support.tool()


def test_the_pinned_corpora_are_present_and_verified() -> None:
    found = corpora.verify_all()
    assert set(found) == {"json-schema-test-suite", "bfcl"}
    assert (found["bfcl"] / "possible_answer" / "BFCL_v4_simple_python.json").is_file()
    assert (support.json_schema_suite() / "type.json").is_file()


def test_a_missing_corpus_names_itself_its_pin_and_the_fetch_command(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(corpora.ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(corpora.CorpusError) as caught:
        corpora.verify_all()
    message = str(caught.value)
    for corpus in corpora.CORPORA:  # every problem in the one message
        assert f"corpus {corpus.name!r}" in message and corpus.pin in message
    assert "is missing from $TOOLFORM_RULES_CORPORA" in message and "make corpora" in message


def test_a_corrupted_copy_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = corpora.by_name("json-schema-test-suite")
    shutil.copytree(corpora.folder(corpus), tmp_path / corpus.folder_name)
    monkeypatch.setenv(corpora.ENVIRONMENT_VARIABLE, str(tmp_path))
    assert corpora.verify(corpus) == tmp_path / corpus.folder_name  # an intact copy elsewhere is read
    victim = tmp_path / corpus.folder_name / "tests" / "draft2020-12" / "type.json"
    victim.write_bytes(victim.read_bytes().replace(b'"valid": true', b'"valid": false', 1))
    with pytest.raises(corpora.CorpusError, match="does not match its pin") as caught:
        corpora.verify(corpus)
    assert corpus.pin in str(caught.value) and "make corpora" in str(caught.value)


def test_a_half_written_copy_is_missing_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = corpora.by_name("json-schema-test-suite")
    shutil.copytree(corpora.folder(corpus), tmp_path / corpus.folder_name)
    (tmp_path / corpus.folder_name / corpora.STAMP).unlink()  # fetch writes the stamp last
    monkeypatch.setenv(corpora.ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(corpora.CorpusError, match="is missing"):
        corpora.verify(corpus)


def test_the_files_digest_covers_names_and_bytes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.json").write_bytes(b"[1]")
    first = corpora.files_digest(tmp_path)
    (tmp_path / corpora.STAMP).write_text("stamp")  # the stamp is not content
    assert corpora.files_digest(tmp_path) == first
    (tmp_path / "a" / "x.json").rename(tmp_path / "a" / "y.json")
    assert corpora.files_digest(tmp_path) != first
    (tmp_path / "a" / "y.json").rename(tmp_path / "a" / "x.json")
    (tmp_path / "a" / "x.json").write_bytes(b"[2]")
    assert corpora.files_digest(tmp_path) != first


def _wheel(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
    return buffer.getvalue()


def _corpus_for(artifact: Path, kept: Path) -> object:
    bfcl = corpora.by_name("bfcl")
    return dataclasses.replace(bfcl, artifact=artifact.name,
                               artifact_sha256=hashlib.sha256(artifact.read_bytes()).hexdigest(),
                               files_sha256=corpora.files_digest(kept))


def test_unpack_keeps_the_data_members_and_checks_both_pins(tmp_path: Path) -> None:
    artifact = tmp_path / "fake-1-py3-none-any.whl"
    artifact.write_bytes(_wheel({"bfcl_eval/data/BFCL_v4_x.json": b'{"id": 1}\n',
                                 "bfcl_eval/data/unused_datasets/y.json": b"{}", "bfcl_eval/code.py": b"",
                                 "bfcl_eval/data/possible_answer/BFCL_v4_x.json": b"{}"}))
    expected = tmp_path / "expected"
    (expected / "possible_answer").mkdir(parents=True)
    (expected / "BFCL_v4_x.json").write_bytes(b'{"id": 1}\n')
    (expected / "possible_answer" / "BFCL_v4_x.json").write_bytes(b"{}")
    corpus = _corpus_for(artifact, expected)
    where = corpora.unpack(corpus, artifact, tmp_path / "cache")
    assert sorted(p.relative_to(where).as_posix() for p in where.rglob("*") if p.is_file()) == [
        "BFCL_v4_x.json", "CORPUS", "possible_answer/BFCL_v4_x.json"]
    assert corpora.verify(corpus, tmp_path / "cache") == where

    artifact.write_bytes(artifact.read_bytes() + b"\0")  # the index served another file
    with pytest.raises(corpora.CorpusError, match="is not the pinned"):
        corpora.unpack(corpus, artifact, tmp_path / "cache")


def test_unpack_refuses_a_member_outside_the_corpus_folder(tmp_path: Path) -> None:
    artifact = tmp_path / "evil-1-py3-none-any.whl"
    artifact.write_bytes(_wheel({"bfcl_eval/data/../../escape.json": b"{}"}))
    corpus = dataclasses.replace(_corpus_for(artifact, tmp_path), files_sha256="unused")
    (tmp_path / "cache").mkdir()
    with pytest.raises(corpora.CorpusError, match="outside the corpus folder"):
        corpora.unpack(corpus, artifact, tmp_path / "cache")
    assert not (tmp_path / "escape.json").exists() and list((tmp_path / "cache").iterdir()) == []
    assert corpora._bfcl_member(PurePosixPath("bfcl_eval/data/unused_datasets/q.json")) is None


def test_a_run_without_the_corpora_stops_with_one_message_and_no_traceback(tmp_path: Path) -> None:
    env = {**os.environ, corpora.ENVIRONMENT_VARIABLE: str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "tests/test_seed.py"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "the test corpora are not ready" in output and "make corpora" in output
    assert "jsonschema==4.26.0" in output and "bfcl-eval==2026.3.23" in output
    assert "Traceback" not in output and "INTERNALERROR" not in output


def test_the_command_line_checks_and_reports(tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, "tools/corpora.py", "check"], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0 and "bfcl ok" in ok.stdout, ok.stderr
    env = {**os.environ, corpora.ENVIRONMENT_VARIABLE: str(tmp_path)}
    for command in ("check", "fetch"):  # fetch never writes into someone else's copy
        missing = subprocess.run([sys.executable, "tools/corpora.py", command], cwd=ROOT, env=env,
                                 capture_output=True, text=True)
        assert missing.returncode == 1 and "is missing" in missing.stderr and "Traceback" not in missing.stderr
    assert list(tmp_path.iterdir()) == []


def test_nothing_in_the_project_reads_the_data_folder_beside_it() -> None:
    sibling = "shared"  # spelled apart so that this file does not find itself
    patterns = ("../" + sibling, f'parent / "{sibling}"', f'parents[3] / "{sibling}"', f'"{sibling}" / "data"')
    files = [p for p in (ROOT / "tests").rglob("*") if p.suffix in (".py", ".md", ".json", ".jsonl", ".yaml")]
    files += [ROOT / "Makefile", ROOT / ".ci" / "run", ROOT / "pyproject.toml"]
    files += [p for p in (ROOT / "tools").glob("*.py")] + [p for p in (ROOT / "bench").glob("*")]
    offenders = [str(p.relative_to(ROOT)) for p in files if p.is_file()
                 and any(pattern in p.read_text(encoding="utf-8", errors="replace") for pattern in patterns)]
    assert offenders == []
