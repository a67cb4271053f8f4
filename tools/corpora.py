"""The public conformance corpora the test suite reads, from pinned published artifacts.

    python tools/corpora.py fetch   # download what is missing, verify, unpack into .corpora/
    python tools/corpora.py check   # verify what is there; exit 1 with one message per problem
    python tools/corpora.py where   # the folder of each corpus

Two corpora, each taken from a package on the package index (so ``pip`` fetches it, through
whatever index and proxy the machine is set up with), pinned by version and by the sha256 of
the artifact:

* ``json-schema-test-suite``: the JSON Schema Test Suite as python-jsonschema's source
  distribution carries it (``json/``: the suite's ``tests/draft2020-12`` and its LICENSE);
* ``bfcl``: the Berkeley Function Calling Leaderboard v4 data as the ``bfcl-eval`` wheel
  carries it (``bfcl_eval/data/``: questions, ``possible_answer/``, the function docs).

Only the files a test can read are unpacked, into ``.corpora/<name>-<version>/`` (git
ignores it).  A second pin, the sha256 over those files (their paths and bytes), is checked
on every test run, so a corrupted or half-written copy is never read; a changed pin unpacks
into a new folder and the old one is simply no longer looked at.

Offline: ``TOOLFORM_RULES_CORPORA=/path`` names a folder laid out as ``.corpora/`` is (what
``fetch`` writes, copied from a machine that could fetch it); it is verified the same way
and never written to.  ``fetch --find-links DIR`` installs from artifacts downloaded by hand
(``pip download`` of the two pins) instead of the index.

The test suite imports this module (tests/support/corpora.py) and stops at once, with the
message of :class:`CorpusError`, when a corpus is missing or does not match its pins.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".corpora"
ENVIRONMENT_VARIABLE = "TOOLFORM_RULES_CORPORA"
FETCH_COMMAND = "make corpora   (or: python tools/corpora.py fetch)"


class CorpusError(Exception):
    """A corpus is missing, or its artifact or files do not match the pins."""


@dataclass(frozen=True)
class Corpus:
    """One corpus: which published artifact it comes from, and which of its files it keeps.

    ``members`` maps a member of the artifact to its path in the corpus folder, or to None
    for a member that is not kept.
    """

    name: str
    package: str
    version: str
    artifact: str
    artifact_sha256: str
    files_sha256: str
    binary: bool
    members: Callable[[PurePosixPath], PurePosixPath | None]
    describe: str

    @property
    def folder_name(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def pin(self) -> str:
        return f"{self.package}=={self.version} ({self.artifact}, sha256 {self.artifact_sha256})"


def _json_schema_suite_member(member: PurePosixPath) -> PurePosixPath | None:
    # jsonschema-4.26.0/json/tests/draft2020-12/type.json -> tests/draft2020-12/type.json
    parts = member.parts
    if len(parts) < 3 or parts[1] != "json":
        return None
    inner = PurePosixPath(*parts[2:])
    if inner == PurePosixPath("LICENSE") or inner.parts[:2] == ("tests", "draft2020-12"):
        return inner
    return None


def _bfcl_member(member: PurePosixPath) -> PurePosixPath | None:
    # bfcl_eval/data/possible_answer/BFCL_v4_simple_python.json -> possible_answer/BFCL_v4_simple_python.json
    parts = member.parts
    if parts[:2] != ("bfcl_eval", "data") or len(parts) < 3 or parts[2] == "unused_datasets":
        return None
    return PurePosixPath(*parts[2:])


CORPORA: tuple[Corpus, ...] = (
    Corpus(
        name="json-schema-test-suite",
        package="jsonschema",
        version="4.26.0",
        artifact="jsonschema-4.26.0.tar.gz",
        artifact_sha256="0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326",
        files_sha256="36f92790f0ed6606124c57580bef56caa9ee90af9b72f521d8d982755186328c",
        binary=False,
        members=_json_schema_suite_member,
        describe="the JSON Schema Test Suite (draft 2020-12), from python-jsonschema's source distribution",
    ),
    Corpus(
        name="bfcl",
        package="bfcl-eval",
        version="2026.3.23",
        artifact="bfcl_eval-2026.3.23-py3-none-any.whl",
        artifact_sha256="3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a",
        files_sha256="2264acb437f3b84e123e37316f01c25a947e88ebeffa52f45d921024da6727ea",
        binary=True,
        members=_bfcl_member,
        describe="the Berkeley Function Calling Leaderboard v4 data, from the bfcl-eval wheel",
    ),
)

#: the stamp ``fetch`` writes last: a folder without it was not finished
STAMP = "CORPUS"


def by_name(name: str) -> Corpus:
    for corpus in CORPORA:
        if corpus.name == name:
            return corpus
    raise KeyError(f"no corpus named {name!r}; known: {', '.join(c.name for c in CORPORA)}")


def base_folder() -> Path:
    """Where the corpora are read: ``$TOOLFORM_RULES_CORPORA`` if set, else ``.corpora/``."""
    override = os.environ.get(ENVIRONMENT_VARIABLE)
    return Path(override).expanduser() if override else CACHE


def folder(corpus: Corpus, base: Path | None = None) -> Path:
    return (base if base is not None else base_folder()) / corpus.folder_name


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != STAMP:
            yield path.relative_to(root).as_posix(), path


def files_digest(root: Path) -> str:
    """The sha256 over every kept file: each one's path, its length and its bytes, in path order."""
    digest = hashlib.sha256()
    for relative, path in _files(root):
        data = path.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def verify(corpus: Corpus, base: Path | None = None) -> Path:
    """The corpus folder, after checking it is complete and matches its pins (else :class:`CorpusError`)."""
    where = folder(corpus, base)
    source = (f"${ENVIRONMENT_VARIABLE} ({base_folder()})" if base is None and os.environ.get(ENVIRONMENT_VARIABLE)
              else str(where.parent))
    if not (where / STAMP).is_file():
        raise CorpusError(
            f"corpus {corpus.name!r} ({corpus.describe}) is missing from {source}: expected {where}.\n"
            f"  pinned artifact: {corpus.pin}\n  fetch it with: {FETCH_COMMAND}")
    found = files_digest(where)
    if found != corpus.files_sha256:
        raise CorpusError(
            f"corpus {corpus.name!r} in {where} does not match its pin: its files hash to {found}, "
            f"the pin is {corpus.files_sha256} (a corrupted or edited copy).\n"
            f"  pinned artifact: {corpus.pin}\n"
            f"  delete {where} and fetch it again with: {FETCH_COMMAND}")
    return where


def verify_all(base: Path | None = None) -> dict[str, Path]:
    """Every corpus's folder, checked; one :class:`CorpusError` naming every problem."""
    found, problems = {}, []
    for corpus in CORPORA:
        try:
            found[corpus.name] = verify(corpus, base)
        except CorpusError as err:
            problems.append(str(err))
    if problems:
        raise CorpusError("\n".join(problems))
    return found


# ---------------------------------------------------------------------------------------------
# fetching

def _members(corpus: Corpus, artifact: Path) -> Iterator[tuple[PurePosixPath, bytes]]:
    """``(path in the corpus, bytes)`` for each kept member of the artifact."""
    if corpus.binary:
        with zipfile.ZipFile(artifact) as wheel:
            for info in wheel.infolist():
                target = corpus.members(PurePosixPath(info.filename))
                if target is not None and not info.is_dir():
                    yield target, wheel.read(info)
        return
    with tarfile.open(artifact, mode="r:gz") as archive:
        for member in archive:
            target = corpus.members(PurePosixPath(member.name))
            if target is not None and member.isfile():
                handle = archive.extractfile(member)
                assert handle is not None
                yield target, handle.read()


def _safe(target: PurePosixPath) -> bool:
    return not target.is_absolute() and ".." not in target.parts


def unpack(corpus: Corpus, artifact: Path, base: Path) -> Path:
    """Unpack the kept files of ``artifact`` into ``base``, after checking the artifact's sha256."""
    data = artifact.read_bytes()
    if _sha256(data) != corpus.artifact_sha256:
        raise CorpusError(f"{artifact.name}: sha256 {_sha256(data)} is not the pinned {corpus.artifact_sha256} "
                          f"({corpus.pin}); the index served another file")
    where = folder(corpus, base)
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{corpus.folder_name}-", dir=base))
    try:
        for target, content in _members(corpus, artifact):
            if not _safe(target):
                raise CorpusError(f"{artifact.name}: member {target} would land outside the corpus folder")
            path = staging.joinpath(*target.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        found = files_digest(staging)
        if found != corpus.files_sha256:
            raise CorpusError(f"{artifact.name}: the kept files hash to {found}, not the pinned "
                              f"{corpus.files_sha256}")
        (staging / STAMP).write_text(f"{corpus.pin}\nfiles sha256 {found}\n", encoding="utf-8")
        if where.exists():
            shutil.rmtree(where)
        staging.rename(where)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return where


def download(corpus: Corpus, into: Path, find_links: str | None = None) -> Path:
    """``pip download`` the pinned artifact into ``into`` (the index, or ``find_links`` only)."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(into),
               f"{corpus.package}=={corpus.version}",
               "--only-binary" if corpus.binary else "--no-binary", ":all:"]
    if find_links:
        command += ["--no-index", "--find-links", find_links]
    result = subprocess.run(command, capture_output=True, text=True)
    artifact = into / corpus.artifact
    if result.returncode != 0 or not artifact.is_file():
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise CorpusError(f"could not download {corpus.pin}: pip exited {result.returncode}"
                          + ("\n  " + "\n  ".join(tail) if tail else ""))
    return artifact


def fetch(find_links: str | None = None, log: Callable[[str], None] = print) -> dict[str, Path]:
    """Make every corpus present and verified; download only what is missing or does not match."""
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return verify_all()  # someone else's copy: read, never written
    for corpus in CORPORA:
        try:
            verify(corpus, CACHE)
            continue
        except CorpusError:
            pass
        log(f"corpora: fetching {corpus.pin}")
        with tempfile.TemporaryDirectory(prefix="corpora-") as scratch:
            unpack(corpus, download(corpus, Path(scratch), find_links), CACHE)
    return verify_all(CACHE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/corpora.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_command = commands.add_parser("fetch", help="download, verify and unpack what is missing")
    fetch_command.add_argument("--find-links", metavar="DIR", help="install from artifacts in DIR, not the index")
    commands.add_parser("check", help="verify the corpora; exit 1 if any is missing or corrupt")
    commands.add_parser("where", help="print each corpus's folder")
    args = parser.parse_args(argv)
    try:
        if args.command == "fetch":
            found = fetch(args.find_links)
        elif args.command == "check":
            found = verify_all()
        else:
            for corpus in CORPORA:
                print(f"{corpus.name}\t{folder(corpus)}")
            return 0
    except CorpusError as err:
        print(f"corpora: {err}", file=sys.stderr)
        return 1
    for name, where in found.items():
        print(f"corpora: {name} ok ({where.relative_to(ROOT) if where.is_relative_to(ROOT) else where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
