"""The built-in rule set, compiled when the package is built and shipped beside its YAML.

Reading ``rules/*.yaml`` keeps every node's position (a pure-Python YAML composer), checks
every rule, option, template and profile, and takes most of a new process's first
validation (≈ 60 ms).  What comes out is plain data — rules, profiles and where each was
declared — so it is kept as **JSON** (a format that cannot run code when read, unlike
pickle) in one file, ``rules/compiled.json``, beside the YAML it was compiled from:

* it is **built with the package**: the build hook (``hatch_build.py``) compiles it into
  the wheel and, for an editable install, into the checkout's ``rules/``.  No file outside
  the installation is ever read for the built-in rules: whoever can change this one can
  change the YAML that findings cite (and the code that applies it) just as well, so no
  rule can differ from the one a finding cites without the cited file itself changing.
  (A cache in a user's folder, as there was before, let anyone who could write that
  folder apply an edited rule under an unchanged citation: a digest recomputed by the
  same public recipe proves nothing.)
* it is used only when the **key** in its header — a sha256 over the package version,
  this format, each rule file's name and bytes, and the source of the modules that turn
  rule files into a rule set (``toolform_rules/engine/*.py``, ``convert.py``,
  ``yamlsource.py``: a change there changes what a rule set holds, e.g. an option's
  default) — equals the key computed from the files as they are now, and its body matches
  the sha256 in its header (a file cut short is not used).  Otherwise the YAML is read:
  a stale file is detected, never trusted.  Names, not paths, go into the key, so a file
  compiled in a build folder matches the same files installed elsewhere.
* what it holds must decode to the rule classes this module knows (no other class can be
  named), and a rule set is written only if it decodes back equal to itself, so a process
  reads exactly what the YAML gave.  Files are written atomically (a temporary file
  renamed over).

``TOOLFORM_RULES_CACHE=off`` (or ``0``, ``none``, empty) reads the YAML every time (to
measure it, or to rule the compiled file out); no other value means anything any more.

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
from typing import Any, Iterable

import attrs

from .rules import Profile, Rule, RuleSet, SourceLocation

#: Bumped whenever the encoding or the key changes: part of every key.
CACHE_FORMAT = 2
#: The compiled rule set's file name, in the folder of the rule files it was compiled from.
COMPILED_NAME = "compiled.json"
#: The classes a compiled file may name (by these names); nothing else can be built from one.
CACHEABLE_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (RuleSet, Rule, Profile, SourceLocation)}
#: What ``$TOOLFORM_RULES_CACHE`` says to read the YAML instead of the compiled file.
DISABLED = ("", "0", "off", "none")


class Uncacheable(ValueError):
    """A value the JSON encoding cannot carry exactly (the rule set is then simply not written)."""


def compiled_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether the compiled rule set may be used (``TOOLFORM_RULES_CACHE=off`` says no).

    >>> compiled_enabled({}), compiled_enabled({"TOOLFORM_RULES_CACHE": "off"})
    (True, False)
    """
    env = os.environ if environ is None else environ
    chosen = env.get("TOOLFORM_RULES_CACHE")
    return chosen is None or chosen.strip().lower() not in DISABLED


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
    """The sha256 naming one rule set: the version, the format, each file's name and bytes, the code's.

    A file is named by its folder's name and its own (``rules/study.yaml``,
    ``engine/rules.py``): the same files give the same key wherever they are.

    >>> a = cache_key([], "0.1.0")
    >>> a == cache_key([], "0.1.0"), a == cache_key([], "0.1.1"), len(a)
    (True, False, 64)
    """
    digest = hashlib.sha256(f"toolform-rules {version}\0cache format {CACHE_FORMAT}\0".encode())
    for kind, paths in (("rules", rule_files), ("code", code)):
        for path in paths:
            digest.update(f"{kind}\0{path.parent.name}/{path.name}\0".encode())
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
        # sorted: a set's order follows the hash seed, and the shipped file must be the same bytes every build
        return ["frozenset", sorted((encode(item) for item in value), key=json.dumps)]
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


# --- the compiled file -----------------------------------------------------------------------

def compiled_bytes(key: str, ruleset: RuleSet) -> bytes:
    """The compiled file for ``ruleset`` under ``key``: a header line ``{"format", "key", "sha256"}``, then
    the encoded rule set, whose bytes the sha256 is of.  The same rule set gives the same bytes.

    Raises :class:`Uncacheable` when the encoding cannot carry the rule set exactly (it must
    decode equal to itself).

    >>> compiled_bytes("k", RuleSet({}, {}, key="k")).splitlines()[1]
    b'["attrs","RuleSet",{"rules":["dict",[]],"profiles":["dict",[]],"key":"k"}]'
    """
    body = json.dumps(encode(ruleset), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    if decode(json.loads(body)) != ruleset:
        raise Uncacheable("the rule set does not decode back equal to itself")
    header = {"format": CACHE_FORMAT, "key": key, "sha256": hashlib.sha256(body).hexdigest()}
    return json.dumps(header).encode() + b"\n" + body


def read_compiled(path: Path, key: str) -> RuleSet | None:
    """The rule set compiled into ``path`` under ``key``, or ``None`` (absent, stale, cut short, malformed).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / COMPILED_NAME
    >>> read_compiled(path, "k") is None
    True
    >>> write_compiled(path, "k", RuleSet({}, {}, key="k"))
    >>> read_compiled(path, "k") == RuleSet({}, {}, key="k"), read_compiled(path, "another key")
    (True, None)
    """
    try:
        header_line, _, body = path.read_bytes().partition(b"\n")
        header = json.loads(header_line)
        if (type(header) is not dict or header.get("format") != CACHE_FORMAT or header.get("key") != key
                or header.get("sha256") != hashlib.sha256(body).hexdigest()):
            return None
        ruleset = decode(json.loads(body))
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None
    return ruleset if type(ruleset) is RuleSet else None


def write_compiled(path: Path, key: str, ruleset: RuleSet) -> None:
    """Write ``ruleset``'s compiled file to ``path`` under ``key``, atomically (a reader sees the old file or
    the new one, never half of one).  Raises :class:`OSError` or :class:`Uncacheable`."""
    data = compiled_bytes(key, ruleset)
    import tempfile  # (only a process that writes the file pays for importing it)

    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)  # as the files beside it: mkstemp makes it private to its writer
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
