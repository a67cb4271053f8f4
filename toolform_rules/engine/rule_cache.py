"""A cache of the built-in rule set, so a new process does not read and check the YAML again.

Reading ``rules/*.yaml`` keeps every node's position (a pure-Python YAML composer), checks
every rule, option, template and profile, and takes most of a new process's first
validation (≈ 60 ms).  What comes out is plain data — rules, profiles and where each was
declared — so it is kept as **JSON** (a format that cannot run code when read, unlike
pickle), in one file per key:

* the **key** is a sha256 over the package version, this cache's format, each rule
  file's path and bytes, and the source of the modules that turn rule files into a rule
  set (``toolform_rules/engine/*.py``, ``convert.py``, ``yamlsource.py``: a change there
  changes what a rule set holds, e.g. an option's default).  A file is used only when the
  key written inside it equals the key computed from the files as they are now: a stale
  cache is detected, never trusted; an edited rule file is read from YAML again.
* a cache file is read only when it belongs to the current user and nobody else may write
  it (nor its folder), and its body matches the sha256 in its header (a file cut short or
  edited is not used); what it holds must decode to the rule classes this module knows
  (no other class can be named); anything else — unreadable, malformed, foreign — is
  ignored and the YAML read instead.  (Someone who may write the user's cache folder may
  as well edit the installed rule files: the cache adds no way in, and never runs code.)
* a rule set is written only if it decodes back equal to itself, so what a later process
  reads is exactly what the YAML gave.  Files are written atomically (a temporary file
  renamed over); at most ``keep`` are kept.

Where: ``$TOOLFORM_RULES_CACHE`` if set (empty, ``0`` or ``off``: no cache at all), else
``$XDG_CACHE_HOME/toolform-rules``, else ``~/.cache/toolform-rules``.

>>> from toolform_rules.engine.rules import Rule, RuleSet
>>> rules = RuleSet({"r": Rule(id="r", op="trim", phase="normalise", applies_to=("string",))}, {})
>>> decode(json.loads(json.dumps(encode(rules)))) == rules
True
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Iterable

import attrs

from .rules import Profile, Rule, RuleSet, SourceLocation

#: Bumped whenever the encoding below changes: part of every key.
CACHE_FORMAT = 1
#: The classes a cache file may name (by these names); nothing else can be built from one.
CACHEABLE_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (RuleSet, Rule, Profile, SourceLocation)}
#: What ``$TOOLFORM_RULES_CACHE`` says to turn the cache off.
DISABLED = ("", "0", "off", "none")
_PREFIX = "builtin-rules-"


class Uncacheable(ValueError):
    """A value the JSON encoding cannot carry exactly (the rule set is then simply not cached)."""


# --- where -----------------------------------------------------------------------------------

def cache_directory(environ: dict[str, str] | None = None) -> Path | None:
    """The folder of the rule-set cache, or ``None`` when ``$TOOLFORM_RULES_CACHE`` turns it off.

    >>> cache_directory({"TOOLFORM_RULES_CACHE": "/tmp/rules-cache"})
    PosixPath('/tmp/rules-cache')
    >>> cache_directory({"TOOLFORM_RULES_CACHE": "off"}) is None
    True
    >>> cache_directory({"XDG_CACHE_HOME": "/var/cache/me"})
    PosixPath('/var/cache/me/toolform-rules')
    """
    env = os.environ if environ is None else environ
    chosen = env.get("TOOLFORM_RULES_CACHE")
    if chosen is not None:
        return None if chosen.strip().lower() in DISABLED else Path(chosen).expanduser()
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolform-rules"


def source_files() -> list[Path]:
    """The modules whose code decides what a rule set read from YAML holds (part of the key).

    >>> sorted({p.name for p in source_files()} & {"rule_files.py", "convert.py", "yamlsource.py"})
    ['convert.py', 'rule_files.py', 'yamlsource.py']
    """
    engine = Path(__file__).resolve().parent
    package = engine.parent
    found = sorted(engine.glob("*.py")) + [package / "convert.py", package / "yamlsource.py"]
    return [path for path in found if path.is_file()]


def cache_key(rule_files: Iterable[Path], version: str, code: Iterable[Path] = ()) -> str:
    """The sha256 naming one rule set: the version, the format, each file's path and bytes, the code's bytes.

    >>> a = cache_key([], "0.1.0")
    >>> a == cache_key([], "0.1.0"), a == cache_key([], "0.1.1"), len(a)
    (True, False, 64)
    """
    digest = hashlib.sha256(f"toolform-rules {version}\0cache format {CACHE_FORMAT}\0".encode())
    for kind, paths in (("rules", rule_files), ("code", code)):
        for path in paths:
            digest.update(f"{kind}\0{path}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


# --- the encoding ----------------------------------------------------------------------------
# Every value becomes a JSON scalar or a two-item list [tag, payload], so a list, a tuple, a
# dict with any keys and an attrs instance stay what they were.

def encode(value: Any) -> Any:
    """``value`` as JSON-ready data that :func:`decode` turns back into an equal value.

    >>> encode({"applies_to": ("string",), "limit": 3})
    ['dict', [['applies_to', ['tuple', ['string']]], ['limit', 3]]]
    """
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise Uncacheable(f"a non-finite number {value!r}")
        return value
    if kind is list:
        return ["list", [encode(item) for item in value]]
    if kind is tuple:
        return ["tuple", [encode(item) for item in value]]
    if kind is frozenset:
        return ["frozenset", [encode(item) for item in value]]
    if kind is dict:
        return ["dict", [[encode(k), encode(v)] for k, v in value.items()]]
    name = kind.__name__
    if CACHEABLE_CLASSES.get(name) is kind:
        return ["attrs", name, {field.name: encode(getattr(value, field.name)) for field in attrs.fields(kind)
                                if field.init}]
    raise Uncacheable(f"a {kind.__module__}.{kind.__qualname__} value")


def decode(data: Any) -> Any:
    """The value :func:`encode` made ``data`` from; :class:`ValueError` for anything else.

    Only the classes of :data:`CACHEABLE_CLASSES` can be named, and only with their fields.

    >>> decode(['dict', [['applies_to', ['tuple', ['string']]]]])
    {'applies_to': ('string',)}
    >>> decode(["attrs", "Popen", {"args": "rm -rf /"}])
    Traceback (most recent call last):
        ...
    ValueError: a cache may not name class 'Popen'
    """
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is not list or not data or type(data[0]) is not str:
        raise ValueError(f"not an encoded value: {data!r:.60}")
    tag = data[0]
    if tag in ("list", "tuple", "frozenset") and len(data) == 2 and type(data[1]) is list:
        items = [decode(item) for item in data[1]]
        return items if tag == "list" else tuple(items) if tag == "tuple" else frozenset(items)
    if tag == "dict" and len(data) == 2 and type(data[1]) is list:
        return dict(_decode_pair(pair) for pair in data[1])
    if tag == "attrs" and len(data) == 3 and type(data[2]) is dict:
        cls = CACHEABLE_CLASSES.get(data[1])
        if cls is None:
            raise ValueError(f"a cache may not name class {data[1]!r}")
        aliases = _init_aliases(cls)
        if not data[2].keys() <= aliases.keys():
            raise ValueError(f"unknown fields for {data[1]}: {sorted(data[2].keys() - aliases.keys())}")
        return cls(**{aliases[name]: decode(value) for name, value in data[2].items()})
    raise ValueError(f"not an encoded value: {data!r:.60}")


@functools.cache
def _init_aliases(cls: type) -> dict[str, str]:
    """The fields ``cls.__init__`` takes, by name: the keyword each is passed as (read once per class)."""
    return {field.name: field.alias for field in attrs.fields(cls) if field.init}


def _decode_pair(pair: Any) -> tuple[Any, Any]:
    if type(pair) is not list or len(pair) != 2:
        raise ValueError(f"not an encoded key and value: {pair!r:.60}")
    return decode(pair[0]), decode(pair[1])


# --- reading and writing ---------------------------------------------------------------------

def _trusted(*paths: Path) -> bool:
    """Whether each of ``paths`` is the current user's and no one else may write it."""
    if not hasattr(os, "geteuid"):  # no POSIX owners (Windows): the user's own profile folder
        return True
    for item in paths:
        status = item.stat()
        if status.st_uid != os.geteuid() or status.st_mode & 0o022:
            return False
    return True


def read_cached(directory: Path, key: str) -> RuleSet | None:
    """The rule set cached under ``key`` in ``directory``, or ``None`` (absent, stale, foreign, malformed).

    A cache file is a header line — ``{"format", "key", "sha256"}`` — then the encoded rule
    set, whose bytes the header's sha256 must match (a file cut short or edited by hand is
    not used).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> read_cached(folder, "k") is None, write_cached(folder, "k", RuleSet({}, {}, key="k"))
    (True, True)
    >>> read_cached(folder, "k") == RuleSet({}, {}, key="k")
    True
    """
    path = directory / f"{_PREFIX}{key}.json"
    try:
        if not _trusted(path, directory):
            return None
        header_line, _, body = path.read_bytes().partition(b"\n")
        header = json.loads(header_line)
        if (type(header) is not dict or header.get("format") != CACHE_FORMAT or header.get("key") != key
                or header.get("sha256") != hashlib.sha256(body).hexdigest()):
            return None
        ruleset = decode(json.loads(body))
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None
    return ruleset if type(ruleset) is RuleSet else None


def write_cached(directory: Path, key: str, ruleset: RuleSet, *, keep: int = 8) -> bool:
    """Cache ``ruleset`` under ``key`` (atomically), keeping the ``keep`` newest files; whether it was written.

    Not written when the encoding cannot carry it exactly (it must decode equal to itself)
    or the folder cannot be written; neither is an error: the YAML is read next time.
    """
    try:
        body = json.dumps(encode(ruleset), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        if decode(json.loads(body)) != ruleset:
            return False
        header = {"format": CACHE_FORMAT, "key": key, "sha256": hashlib.sha256(body).hexdigest()}
        import tempfile  # (only a process that writes the cache pays for importing it)

        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted(directory):
            return False
        handle, temporary = tempfile.mkstemp(prefix=_PREFIX, suffix=".tmp", dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(json.dumps(header).encode() + b"\n" + body)
            os.replace(temporary, directory / f"{_PREFIX}{key}.json")
        except BaseException:
            os.unlink(temporary)
            raise
        _prune(directory, keep)
    except (OSError, ValueError, TypeError, RecursionError):
        return False
    return True


def _prune(directory: Path, keep: int) -> None:
    """Remove all but the ``keep`` newest cache files (old keys: rule files or versions since changed)."""
    found = sorted(directory.glob(f"{_PREFIX}*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in found[keep:]:
        try:
            old.unlink()
        except OSError:
            pass


def cached_rule_set(rule_files: list[Path], read: Callable[[], RuleSet], *, version: str,
                    directory: Path | None, code: Iterable[Path] = ()) -> RuleSet:
    """The rule set ``read()`` returns for ``rule_files``, from the cache in ``directory`` when fresh.

    ``directory`` ``None``: no cache (``read()`` every time).  A miss (or a stale or
    unusable file) reads and caches.

    >>> import tempfile
    >>> folder, calls = Path(tempfile.mkdtemp()), []
    >>> def read():
    ...     calls.append(1)
    ...     return RuleSet({}, {}, key="k")
    >>> first = cached_rule_set([], read, version="1", directory=folder)
    >>> second = cached_rule_set([], read, version="1", directory=folder)
    >>> first == second, len(calls)
    (True, 1)
    """
    if directory is None:
        return read()
    try:
        key = cache_key(rule_files, version, code)
    except OSError:
        return read()
    cached = read_cached(directory, key)
    if cached is not None:
        return cached
    ruleset = read()
    write_cached(directory, key, ruleset)
    return ruleset
