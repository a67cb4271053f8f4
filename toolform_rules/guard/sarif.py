"""A guard report as SARIF 2.1.0, the format code-scanning views read (GitHub, GitLab, VS Code's SARIF viewer).

Each finding is a ``result``: its rule id and level (high → ``error``, medium → ``warning``,
low → ``note``), its message, where it is — logically (``tool/field``) and, when the tools
came from a file, physically (the file and the line and column where the flagged text
stands in it, found by searching the file for the finding's text) — and where the rule is
declared.  Each rule that fired is described once in the driver's ``rules``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..version import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
#: a finding's severity as a SARIF level
LEVELS = {"high": "error", "medium": "warning", "low": "note"}
INFORMATION_URI = "https://pypi.org/project/toolform-rules/"


def to_sarif(report: Any, *, source: str | None = None) -> dict[str, Any]:
    """``report`` (a :class:`~toolform_rules.guard.GuardReport`) as a SARIF 2.1.0 log; ``source``: the file the
    tools were read from (its findings then point at lines of it).

    >>> class Finding:  # what the log needs of a finding
    ...     rule_id, severity, tool, field, start, end = "TS101", "high", "notify_user", "description", 0, 6
    ...     excerpt, source, message = "Always", "rules/guard/core.yaml:3", "an order to the model"
    >>> class Report:
    ...     findings = [Finding()]
    >>> log = to_sarif(Report())
    >>> log["version"], log["runs"][0]["results"][0]["level"], log["runs"][0]["tool"]["driver"]["rules"][0]["id"]
    ('2.1.0', 'error', 'TS101')
    """
    findings = list(getattr(report, "findings", ()))
    text = _source_text(source)
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for finding in findings:
        rules.setdefault(finding.rule_id, _rule(finding))
        results.append(_result(finding, source, text))
    driver = {"name": "toolform-rules guard", "version": __version__, "informationUri": INFORMATION_URI,
              "rules": list(rules.values())}
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results}
    if source is not None:
        run["artifacts"] = [{"location": {"uri": _uri(source)}}]
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule(finding: Any) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": finding.rule_id, "shortDescription": {"text": finding.message},
                            "defaultConfiguration": {"level": LEVELS.get(finding.severity, "warning")}}
    declared = getattr(finding, "source", "")
    if declared:
        rule["properties"] = {"declaredAt": declared}
    return rule


def _result(finding: Any, source: str | None, text: str | None) -> dict[str, Any]:
    where = f"{finding.tool}/{finding.field}"
    location: dict[str, Any] = {"logicalLocations": [{"fullyQualifiedName": where, "kind": "member"}]}
    if source is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(source)}}
        region = _region(text, finding.excerpt) if text is not None else None
        physical["region"] = region or {"startLine": 1}
        location["physicalLocation"] = physical
    return {"ruleId": finding.rule_id, "level": LEVELS.get(finding.severity, "warning"),
            "message": {"text": f"{finding.message} ({where}): {finding.excerpt!r}"},
            "locations": [location],
            "properties": {"tool": finding.tool, "field": finding.field, "start": finding.start, "end": finding.end}}


def _region(text: str, excerpt: str) -> dict[str, int] | None:
    """The line and column (1-based) where ``excerpt`` first stands in the file, as JSON escapes it or as it is."""
    for written in dict.fromkeys((excerpt, json.dumps(excerpt, ensure_ascii=False)[1:-1], json.dumps(excerpt)[1:-1])):
        at = text.find(written) if written else -1
        if at >= 0:
            line = text.count("\n", 0, at) + 1
            return {"startLine": line, "startColumn": at - (text.rfind("\n", 0, at) + 1) + 1}
    return None


def _source_text(source: str | None) -> str | None:
    if source is None:
        return None
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _uri(source: str) -> str:
    """A relative path as it is (code-scanning views resolve it against the repository), else a file URI."""
    path = Path(source)
    return path.as_posix() if not path.is_absolute() else path.as_uri()


__all__ = ["LEVELS", "SARIF_VERSION", "to_sarif"]
