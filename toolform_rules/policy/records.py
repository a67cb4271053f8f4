"""Decision records: one JSON object per checked call, written as JSON Lines, with masked values kept out.

A record says when a call was checked, which tool it called, a digest of its arguments
(not the arguments), which policy decided (name, version, sha256), the verdict, every
finding and warning, and how long the check took.  Values under a ``mask:`` path (the
policy's, plus any the log adds) never reach the log: they are replaced by ``***`` before
the digest is taken — so a digest cannot confirm a guessed secret — and wherever their
text appears in a finding's message.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import time
from pathlib import Path
from typing import IO, Any, Iterable

from ..calls import as_call
from ..schema.names import canonical_name
from ..engine.report import Finding, ValidationReport
from ..engine.rules import RuleSet
from ..jsonvalues import strict_json
from .policy import Policy, mask_path

MASKED = "***"


def _masked_arguments(arguments: Any, paths: Iterable[tuple[str | int, ...]]) -> tuple[Any, list[Any]]:
    """A copy of ``arguments`` with each masked path's value replaced; and the values replaced."""
    copy = json.loads(strict_json(arguments, default=str))
    hidden: list[Any] = []
    for path in paths:
        nodes = [copy]
        for key in path[:-1]:
            nodes = [child for node in nodes for child in _children(node, key)]
        for node in nodes:
            for key in _keys(node, path[-1]):
                hidden.append(node[key])
                node[key] = MASKED
    return copy, hidden


def _keys(node: Any, key: str | int) -> list[Any]:
    """The keys of ``node`` a mask's ``key`` covers: for an object, every key with its canonical
    name (the schema's rules accept ``Body`` for ``body``, so the mask must too)."""
    if isinstance(node, dict) and isinstance(key, str):
        wanted = canonical_name(key)
        return [k for k in node if isinstance(k, str) and (k == key or canonical_name(k) == wanted)]
    if isinstance(node, list) and isinstance(key, int) and -len(node) <= key < len(node):
        return [key]
    return []


def _children(node: Any, key: str | int) -> list[Any]:
    return [node[k] for k in _keys(node, key)]


def _texts(value: Any) -> set[str]:
    """Every text form a hidden value could take in a message: as itself, quoted, as JSON; its leaves too."""
    found: set[str] = set()
    if isinstance(value, dict):
        for member in value.values():
            found |= _texts(member)
    elif isinstance(value, list):
        for member in value:
            found |= _texts(member)
    elif isinstance(value, str):
        found |= {value, repr(value)}
    if value is not None and not isinstance(value, bool):
        found.add(json.dumps(value, ensure_ascii=False))
    return {text for text in found if text}


def _scrub(message: str, hidden: set[str]) -> str:
    for text in sorted(hidden, key=len, reverse=True):  # longest first: a value's JSON before its parts
        message = message.replace(text, MASKED)
    return message


def _finding(finding: Finding, hidden: set[str]) -> dict[str, Any]:
    out = finding.to_dict()
    out["message"] = _scrub(out["message"], hidden)
    return out


def decision_record(call: Any, report: ValidationReport, policy: Policy | None, *, duration: float,
                    when: datetime.datetime | None = None, mask: Iterable[str] = ()) -> dict[str, Any]:
    """The record of one decision (see the module's docstring for the fields).

    >>> from toolform_rules import load_policy, sample_toolset, validate_arguments
    >>> policy = load_policy("policy: p\\nmask: [args.counterparty]\\nconstraints:\\n"
    ...                      "  - id: p.party\\n    check: args.counterparty != 'Evil Corp'\\n"
    ...                      "    message: 'no deals with {args.counterparty}'\\n")
    >>> call = {"name": "legal_draft_v3", "arguments": {"counterparty": "Evil Corp", "value": 1, "term_months": 1}}
    >>> record = decision_record(call, validate_arguments(call, sample_toolset(), policy=policy), policy,
    ...                          duration=0.000012)
    >>> record["verdict"], record["findings"][0]["message"], record["duration_us"]
    ('deny', 'no deals with ***', 12.0)
    >>> "Evil" in json.dumps(record)
    False
    """
    name, arguments, _ = as_call(call)
    paths = list(policy.mask if policy is not None else ())
    for text in mask:
        path = mask_path(text)
        if path is None:
            raise ValueError(f"a mask is a path into the arguments, like args.card.number; not {text!r}")
        paths.append(path)
    masked, hidden_values = _masked_arguments(arguments, paths)
    hidden: set[str] = set()
    for value in hidden_values:
        hidden |= _texts(value)
    canonical = strict_json(masked, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    moment = when or datetime.datetime.now(datetime.timezone.utc)
    return {
        "time": moment.isoformat(timespec="microseconds").replace("+00:00", "Z"),
        "tool": _scrub(str(name), hidden),
        "arguments_sha256": hashlib.sha256(canonical.encode("utf-8")).hexdigest(),
        "policy": policy.stamp.to_dict() if policy is not None else None,
        "verdict": "allow" if report.ok else "deny",
        "findings": [_finding(f, hidden) for f in report.findings],
        "warnings": [_finding(f, hidden) for f in report.warnings],
        "duration_us": round(duration * 1e6, 1),
    }


class DecisionLog:
    """Check calls and write one decision record per call as a JSON line.

    ``target``: a path (appended to) or an open text stream.  ``mask``: more argument
    paths to keep out of the log, beyond the policy's own ``mask:``.

    >>> import io
    >>> from toolform_rules import load_policy, sample_toolset
    >>> stream = io.StringIO()
    >>> policy = load_policy("policy: p\\nconstraints:\\n  - id: p.cap\\n    check: args.value <= 10\\n")
    >>> call = {"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 50, "term_months": 3}}
    >>> with DecisionLog(stream, policy=policy) as log:
    ...     report = log.check(call, sample_toolset())
    >>> record = json.loads(stream.getvalue())
    >>> record["verdict"], record["findings"][0]["rule"], record["policy"]["name"]
    ('deny', 'p.cap', 'p')
    """

    def __init__(self, target: str | os.PathLike[str] | IO[str], *, policy: Policy | None = None,
                 mask: Iterable[str] = (), profile: str = "sdk", rules: RuleSet | None = None) -> None:
        self.policy, self.mask, self.profile, self.rules = policy, tuple(mask), profile, rules
        for text in self.mask:
            if mask_path(text) is None:
                raise ValueError(f"a mask is a path into the arguments, like args.card.number; not {text!r}")
        if isinstance(target, (str, os.PathLike)):
            self._stream: IO[str] = Path(target).open("a", encoding="utf-8")
            self._owned = True
        else:
            self._stream, self._owned = target, False

    def check(self, call: Any, tools: Any) -> ValidationReport:
        """Validate ``call`` (schema and policy), write its record, return its report."""
        from ..engine.verbs import validate_arguments

        started = time.perf_counter()
        report = validate_arguments(call, tools, profile=self.profile, rules=self.rules, policy=self.policy)
        duration = time.perf_counter() - started
        self.write(decision_record(call, report, self.policy, duration=duration, mask=self.mask))
        return report

    def write(self, record: dict[str, Any]) -> None:
        """Append one record as a JSON line (flushed: a crash loses no decision already made)."""
        self._stream.write(strict_json(record, ensure_ascii=False, default=str) + "\n")
        self._stream.flush()

    def close(self) -> None:
        """Close the file (a stream given by the caller stays open)."""
        if self._owned:
            self._stream.close()

    def __enter__(self) -> DecisionLog:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


