"""What a validation says: six buckets (the seed's ``to_dict``) plus one finding per error."""

from __future__ import annotations

import operator
import string
from typing import Any, Callable, Iterable, NamedTuple

import attrs

from .rules import BUCKETS

Path = tuple  # a JSON path: a tuple of property names (str) and array indices (int)


def format_path(path: tuple[str | int, ...]) -> str:
    """A JSON path as the messages write it: ``a.b[0].c``.

    The root itself is ``$``.

    >>> format_path(("contract_details", "status")), format_path(("tags", 0)), format_path(())
    ('contract_details.status', 'tags[0]', '$')
    """
    if not path:
        return "$"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else part
    return out


def located(path: Any) -> tuple[tuple[str | int, ...], str]:
    """A linked path (``None`` at the root, ``(parent, key)`` below) as a tuple, and as messages write it.

    What every finding needs, in one pass; a top-level argument (the commonest place for a
    finding) costs one comparison.

    >>> located(None), located((None, "value")), located((((None, "tags"), 0), "name"))
    (((), '$'), (('value',), 'value'), (('tags', 0, 'name'), 'tags[0].name'))
    """
    if path is None:
        return (), "$"
    parent, key = path
    if parent is None and type(key) is str:
        return (key,), key
    parts = [key]
    while parent is not None:
        parent, key = parent
        parts.append(key)
    parts.reverse()
    flat = tuple(parts)
    return flat, format_path(flat)


def message_formatter(template: str, names: tuple[str, ...]) -> Callable[[tuple], str]:
    """``template`` filled from a tuple of values, one per name of ``names``, in that order: made once.

    What fills a rule's message on every finding.  A template whose fields are plain names
    with no format spec (every built-in one) is turned into a ``%``-format read at C speed:
    when it names the fields in the order given, the values tuple is its argument as it
    stands, else an item getter picks them.  ``{x}`` is ``%s``, i.e. ``str(x)``, which is
    ``format(x, "")`` for every value a JSON call can hold.  Any other template is filled by
    ``str.format_map``.  A field not in ``names`` is refused here, not when a call fails.

    >>> fill = message_formatter("{path}: {value} < minimum {limit} (100%, {{x}}, {value!r})",
    ...                          ("path", "value", "limit"))
    >>> fill(("n", -5, 0))
    'n: -5 < minimum 0 (100%, {x}, -5)'
    >>> message_formatter("{value:>4}", ("path", "value"))(("n", 7))
    '   7'
    """
    parts: list[str] = []
    used: list[str] = []
    plain = True
    for literal, name, spec, conversion in string.Formatter().parse(template):
        parts.append(literal.replace("%", "%%"))
        if name is None:
            continue
        if name not in names:
            raise LookupError(f"message template {template!r} uses {{{name}}}; the fields are {', '.join(names)}")
        if spec or conversion not in (None, "s", "r", "a"):
            plain = False
        parts.append("%" + (conversion or "s"))
        used.append(name)
    if not plain:
        return lambda values: template.format_map(dict(zip(names, values)))
    percent = "".join(parts)
    if not used:
        text = percent % ()
        return lambda values: text
    if tuple(used) == names:
        return percent.__mod__
    if len(used) == 1:
        index = names.index(used[0])
        return lambda values: percent % (values[index],)
    pick = operator.itemgetter(*(names.index(name) for name in used))
    return lambda values: percent % pick(values)


def json_pointer(path: tuple[str | int, ...]) -> str:
    """A JSON path as an RFC 6901 pointer.

    >>> json_pointer(("a/b", 0, "c~d"))
    '/a~1b/0/c~0d'
    """
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@attrs.frozen
class PolicyStamp:
    """Which policy made a finding: its name, version and the sha256 digest of its files."""

    name: str
    version: Any
    digest: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"name": self.name, "version": self.version, "sha256": self.digest}


class Finding(NamedTuple):
    """One error (or warning): the rule that fired, its bucket, the argument's path, the message, the rule's source.

    ``source`` is ``file:line`` of the rule's declaration (``rules/*.yaml`` or a policy
    file); ``policy`` names the policy a custom constraint came from; ``severity`` is
    ``error`` or (policies only) ``warning``.  (An immutable named tuple rather than an
    attrs class: findings are made on the error path of every invalid call, and a tuple
    is made three times faster.)
    """

    rule: str
    bucket: str
    path: tuple[str | int, ...]
    message: str
    source: str
    severity: str = "error"
    policy: PolicyStamp | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the path as a JSON pointer (and the policy, for a custom constraint)."""
        out: dict[str, Any] = {"rule": self.rule, "bucket": self.bucket, "path": json_pointer(self.path),
               "message": self.message, "source": self.source}
        if self.policy is not None:
            out["severity"] = self.severity
            out["policy"] = self.policy.to_dict()
        return out


_RULE_FIELD = operator.itemgetter(0)


def rule_ids(findings: Iterable[Finding]) -> list[str]:
    """The rule id of each finding, in order (read at C speed: a finding's rule is its first field).

    >>> rule_ids([Finding("a.rule", "type_errors", (), "$: bad", "x.yaml:1")])
    ['a.rule']
    """
    return list(map(_RULE_FIELD, findings))


@attrs.frozen
class ValidationReport:
    """The verdict on one call.

    The six buckets hold messages; ``to_dict()`` is exactly the seed's shape.  ``findings``
    holds one :class:`Finding` per error, with the rule and where it was declared.

    >>> from toolform_rules import sample_toolset, validate_arguments
    >>> report = validate_arguments({"name": "legal_draft_v3", "arguments": {"counterparty": "Acme"}},
    ...                             sample_toolset())
    >>> report.ok, report.missing_required
    (False, ['value', 'term_months'])
    >>> report.findings[0].rule
    'study.required'
    """

    findings: tuple[Finding, ...] = ()
    #: findings of policy constraints of severity ``warning``: reported, never failing the call
    warnings: tuple[Finding, ...] = ()

    @property
    def unknown_tool(self) -> bool:
        """The call's name resolves to no tool."""
        return any(f.bucket == "unknown_tool" for f in self.findings)

    def _bucket(self, name: str) -> list[str]:
        return [f.message for f in self.findings if f.bucket == name]

    @property
    def missing_required(self) -> list[str]:
        """Required parameters that are absent, at any depth."""
        return self._bucket("missing_required")

    @property
    def unknown_args(self) -> list[str]:
        """Arguments the tool does not declare."""
        return self._bucket("unknown_args")

    @property
    def type_errors(self) -> list[str]:
        """Values of the wrong type."""
        return self._bucket("type_errors")

    @property
    def enum_errors(self) -> list[str]:
        """Values outside their declared enum."""
        return self._bucket("enum_errors")

    @property
    def constraint_errors(self) -> list[str]:
        """Values outside a bound, a length or a pattern."""
        return self._bucket("constraint_errors")

    @property
    def n_errors(self) -> int:
        """How many errors in all."""
        return len(self.findings)

    @property
    def ok(self) -> bool:
        """No errors at all."""
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        """The seed's report: exactly these keys, in this order."""
        out: dict[str, Any] = {"ok": not self.findings, "unknown_tool": False}
        for bucket in BUCKETS[1:]:
            out[bucket] = []
        for finding in self.findings:
            if finding.bucket == "unknown_tool":
                out["unknown_tool"] = True
            else:
                out[finding.bucket].append(finding.message)
        out["n_errors"] = len(self.findings)
        return out

    def to_json(self) -> dict[str, Any]:
        """``to_dict()`` plus the findings (and warnings, when there are any), JSON-ready."""
        out = {**self.to_dict(), "findings": [f.to_dict() for f in self.findings]}
        if self.warnings:
            out["warnings"] = [f.to_dict() for f in self.warnings]
        return out


VALID = ValidationReport()

_new = object.__new__
_set_findings = ValidationReport.findings.__set__  # type: ignore[attr-defined]  # (a slot)
_set_warnings = ValidationReport.warnings.__set__  # type: ignore[attr-defined]


def report_of(findings: tuple[Finding, ...]) -> ValidationReport:
    """``ValidationReport(findings)`` at a third less of the cost: set through its slots, as its ``__init__`` would.

    >>> report_of(()) == ValidationReport(())
    True
    """
    report = _new(ValidationReport)
    _set_findings(report, findings)
    _set_warnings(report, ())
    return report
