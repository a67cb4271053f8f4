"""What a command prints: reports, replies, loop runs and guard findings as text, and JSON written strictly."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..engine.report import ValidationReport, format_path
from ..engine.rules import BUCKETS, Rule
from ..jsonvalues import strict_json
from ..schema.toolset import Toolset


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _columns(rows: Iterable[Sequence[str]], indent: str) -> list[str]:
    rows = [list(r) for r in rows]
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [indent + "  ".join([c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]).rstrip() for r in rows]


def render_report(name: Any, report: ValidationReport, *, profile: str, tools: Toolset | None = None) -> str:
    """A report as text: the verdict, each non-empty bucket's messages, then each finding's
    rule, path and the ``file:line`` that declared the rule.

    >>> from toolform_rules import sample_toolset, validate_arguments
    >>> report = validate_arguments({"name": "legal_draft_v3", "arguments": {"counterparty": "Acme",
    ...                              "value": -5, "term_months": 12}}, sample_toolset())
    >>> print(render_report("legal_draft_v3", report, profile="sdk"))
    legal_draft_v3: invalid, 1 error (profile sdk)
      constraint_errors  value: -5 < minimum 0
      rules that fired:
        study.minimum  at value  rules/study.yaml:...
    """
    shown = name if isinstance(name, str) else strict_json(name)
    tool = tools.get(name) if tools is not None else None
    if tool is not None and tool.name != name:
        shown = f"{shown} -> {tool.name}"
    warnings = [f"  warning  {f.message}  ({f.rule}, {f.source})" for f in report.warnings]
    if report.ok:
        return "\n".join([f"{shown}: valid (profile {profile})", *warnings])
    lines = [f"{shown}: invalid, {plural(report.n_errors, 'error')} (profile {profile})"]
    findings = sorted(report.findings, key=lambda f: BUCKETS.index(f.bucket))
    rows: list[tuple[str, str]] = []
    for bucket in BUCKETS:
        messages = [f.message for f in findings if f.bucket == bucket]
        rows.extend((bucket if i == 0 else "", m) for i, m in enumerate(messages))
    lines += _columns(rows, "  ")
    lines.append("  rules that fired:")
    lines += _columns(((f.rule, f"at {format_path(f.path)}", f.source) for f in findings), "    ")
    return "\n".join(lines + warnings)


def render_loop(result: Any) -> str:
    """A call loop's run as readable lines: each step's reply, its calls' verdicts, what ran, what went back."""
    lines: list[str] = []
    for number, step in enumerate(result.steps, start=1):
        lines.append(f"step {number}: the model wrote")
        lines.append(_indent(step.reply or "(no text)", "  | "))
        if step.reasoning:
            lines.append(f"  (reasoning kept apart: {len(step.reasoning)} characters)")
        lines.append(_indent(render_reply(step.parsed), "  "))
        for executed in step.executed:
            outcome = f"-> {_dump(executed.result)}" if executed.ok else f"failed: {executed.error}"
            lines.append(f"  ran {executed.name}({_dump(executed.arguments)}) {outcome}")
        for line in step.feedback:
            lines.append(f"  sent back: {line}")
    ending = f"stopped: {result.stopped}"
    if result.error:
        ending += f" ({result.error})"
    lines.append(ending)
    if result.final_text:
        lines.append(f"final answer: {result.final_text}")
    return "\n".join(lines)


def render_reply(reply: Any) -> str:
    """A parsed reply as readable lines: each call with its verdict, what was refused, the notes."""
    head = f"{reply.protocol_id} (rule {reply.rule}): {'ok' if reply.ok else 'not ok'}"
    if reply.matched_syntax and reply.matched_syntax != reply.protocol_id:
        head += f", read with {reply.matched_syntax}'s syntax"
    lines = [head]
    for call in reply.calls:
        shown = call.name if call.resolved_name in (None, call.name) else f"{call.name} -> {call.resolved_name}"
        verdict = "valid" if call.valid else "invalid"
        lines.append(f"  call {shown}: {verdict}  {_dump(call.arguments)}")
        for repair in call.repairs:
            lines.append(f"    repair: {repair}")
        if call.report is not None:
            for finding in call.report.findings:
                lines.append(f"    {finding.bucket}: {finding.message}  ({finding.rule}, {finding.source})")
            for finding in call.report.warnings:
                lines.append(f"    warning: {finding.message}  ({finding.rule}, {finding.source})")
    for call in reply.rejected:
        lines.append(f"  refused {call.name}: {call.reason}")
    flags = [name for name in ("no_call_declared", "reasoning_removed") if getattr(reply, name)]
    if reply.hallucinated:
        lines.append(f"  hallucinated: {', '.join(reply.hallucinated)}")
    if flags:
        lines.append(f"  {', '.join(flags)}")
    if not reply.calls and not reply.rejected:
        lines.append("  no call found")
    if reply.note:
        lines.append(f"  note: {reply.note}")
    return "\n".join(lines)


def _dump(value: Any) -> str:
    return strict_json(value, ensure_ascii=False)


def _json(value: Any) -> str:
    """What ``--json`` prints: strict JSON (no NaN, lone surrogates escaped), indented."""
    return strict_json(value, indent=2, ensure_ascii=False)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _rule_row(rule: Rule) -> tuple[str, ...]:
    return (rule.id, rule.phase, rule.bucket or "-", str(rule.source), rule.message or "")


def render_guard(report: Any) -> str:
    """A guard report as readable lines: each finding with its rule, severity, place and text."""
    if not report.findings:
        return f"no findings (strictness {report.strictness})"
    lines = [f"{len(report.findings)} findings in {len(report.flagged_tools)} tools (strictness {report.strictness})"]
    for finding in report.findings:
        lines.append(f"  {finding.rule_id} {finding.severity:6} {finding.tool} {finding.field} "
                     f"[{finding.start}:{finding.end}] {finding.excerpt!r}")
        lines.append(f"      {finding.message}  ({finding.source})")
    return "\n".join(lines)
