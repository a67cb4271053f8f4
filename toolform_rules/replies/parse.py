"""parse_reply: a model's reply text → calls, repaired by the grading rule, normalised, validated.

The flow is one way: the reasoning is removed, the asked protocol reads the text (other
protocols' syntax too, with ``lenient_fallback``), names are resolved against the
toolset, values of text formats are typed from the schema, the grading rule repairs or
refuses, and each accepted call is normalised and validated.  Never an exception for
model text: whatever the text, a :class:`ParsedReply` comes back, its ``note`` saying
what went wrong and where.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Callable, Sequence

import attrs

from ..engine.verbs import normalised_arguments, program_for, validate_arguments
from ..schema.ir import Schema, Tool
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.loaders import load_tools
from ..schema.names import canonical_name
from .formats import REGISTRY, get_protocol, lenient_order
from .formats.base import Extraction, Protocol, RawCall
from .formats.duplicates import repair
from .formats.reading import text_outside
from .formats.text_values import type_values
from ..engine.report import ValidationReport
from ..engine.rules import RuleSet

if TYPE_CHECKING:
    from ..policy import Policy
from ..schema.toolset import Toolset

RULES = ("main", "symmetric", "as_written")
#: ``matched_syntax`` of a reply that holds no call and says that no tool fits.
NO_CALL_SYNTAX = "explicit-no-call"

_REASONING_TAGS = ("think", "thinking", "reasoning")
_REASONING_MARK = re.compile(r"</?(?:think|reasoning)", re.IGNORECASE)
_REASONING_BLOCKS = tuple((re.compile(f"<{tag}>", re.IGNORECASE), re.compile(f"</{tag}>", re.IGNORECASE))
                          for tag in _REASONING_TAGS)
_NO_CALL_PHRASES = (
    "no suitable tool", "no tool is suitable", "no tool is needed", "no tool needed", "no tools are needed",
    "no need to call", "no tool call", "no function call", "none of the tools", "none of the available tools",
    "no appropriate tool", "no relevant tool", "don't need any tool", "do not need any tool",
    "doesn't require a tool", "does not require a tool", "no_call", "cannot be done with the available tools",
    "can't be done with the available tools", "not possible with the available tools",
)


@attrs.frozen(slots=False, eq=False)
class ParsedCall:
    """One call found in a reply, after the grading rule, with its normalised form and verdict.

    ``normalized_arguments`` and ``validation`` (the report as a dict) are computed when first
    read and then kept: a grader that reads only ``valid`` does not pay for them, and either
    way the values are the same.  Two calls are equal when their :meth:`to_dict` are.
    """

    name: str
    arguments: dict[str, Any]
    resolved_name: str | None
    valid: bool
    repairs: tuple[str, ...] = ()
    accepted: bool = True
    reason: str = ""
    report: ValidationReport | None = attrs.field(default=None, repr=False)
    #: computes ``normalized_arguments`` on first read (``None``: the call has none — it was refused)
    normaliser: Callable[[], dict[str, Any]] | None = attrs.field(default=None, repr=False)
    #: the verdict of a call with no report (an unknown tool's), as a dict
    verdict: dict[str, Any] | None = attrs.field(default=None, repr=False)

    @functools.cached_property
    def normalized_arguments(self) -> dict[str, Any] | None:
        return None if self.normaliser is None else self.normaliser()

    @functools.cached_property
    def validation(self) -> dict[str, Any] | None:
        return self.report.to_dict() if self.report is not None else self.verdict

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # a call holds dicts

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, in the reference's key order."""
        return {"name": self.name, "arguments": self.arguments, "resolved_name": self.resolved_name,
                "normalized_arguments": self.normalized_arguments, "valid": self.valid,
                "validation": self.validation, "repairs": list(self.repairs), "accepted": self.accepted,
                "reason": self.reason}


@attrs.frozen(slots=False)  # built once per reply: a frozen class with a __dict__ is built 2.5x faster
class ParsedReply:
    """Everything ``parse_reply`` found in one reply.

    ``calls``: accepted calls; ``rejected``: calls refused (an unknown tool, or a repair
    the grading rule refuses); ``hallucinated``: tool names that resolve to no tool;
    ``parsed_strict``: the asked protocol found the calls itself; ``matched_syntax``: the
    protocol whose syntax they were read with (when the asked one found none: the first
    other protocol that finds calls in the reply — without ``lenient_fallback``, in its first
    ``Limits.syntax_probe_chars`` characters); ``format_compliant``: no other protocol's
    syntax was needed; ``note``: what went wrong and where; ``content``: the reply's text
    outside its calls (reasoning apart), trimmed, as an engine returns it beside the calls.
    """

    protocol_id: str
    rule: str
    calls: tuple[ParsedCall, ...] = ()
    rejected: tuple[ParsedCall, ...] = ()
    parsed_strict: bool = False
    parsed_lenient: bool = False
    matched_syntax: str = ""
    format_compliant: bool = True
    no_call_declared: bool = False
    hallucinated: tuple[str, ...] = ()
    reasoning_removed: bool = False
    note: str = ""
    content: str = ""

    @property
    def ok(self) -> bool:
        """Nothing refused or invented, and every call valid — or no call and a declaration that none fits."""
        if self.rejected or self.hallucinated:
            return False
        if self.calls:
            return all(c.valid for c in self.calls)
        return self.no_call_declared

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, in the reference's key order."""
        return {"protocol_id": self.protocol_id, "rule": self.rule, "ok": self.ok,
                "calls": [c.to_dict() for c in self.calls], "rejected": [c.to_dict() for c in self.rejected],
                "parsed_strict": self.parsed_strict, "parsed_lenient": self.parsed_lenient,
                "matched_syntax": self.matched_syntax, "format_compliant": self.format_compliant,
                "no_call_declared": self.no_call_declared, "hallucinated": list(self.hallucinated),
                "reasoning_removed": self.reasoning_removed, "note": self.note, "content": self.content}


# --- the steps -----------------------------------------------------------------------------

def remove_reasoning(text: str, *, blank: bool = False, removed_text: list[str] | None = None) -> tuple[str, bool]:
    """``text`` without ``<think>…</think>`` blocks (also ``thinking``/``reasoning``), and whether any was removed.

    An unclosed block runs to the end of the text (a reply cut off while thinking holds no
    call); a closing tag whose opener the chat template already sent ends the reasoning.
    One scan per tag, whatever the number of blocks.  ``blank``: each removed character
    becomes a space instead, so that what is left keeps its place in the text.
    ``removed_text``: gets what each removed block said (its tags off).

    >>> remove_reasoning("<think>maybe f?</think>f(a=1)")
    ('f(a=1)', True)
    >>> remove_reasoning("<think>maybe f?</think>f(a=1)", blank=True)[0].lstrip()
    'f(a=1)'
    """
    if "<" not in text or _REASONING_MARK.search(text) is None:  # (the membership test: 5x cheaper)
        return text, False
    removed = False
    for opener, closer in _REASONING_BLOCKS:
        kept: list[str] = []
        pos = 0
        while (opened := opener.search(text, pos)) is not None:
            kept.append(text[pos:opened.start()])
            closed = closer.search(text, opened.end())
            end = len(text) if closed is None else closed.end()
            if removed_text is not None:
                removed_text.append(text[opened.end():len(text) if closed is None else closed.start()])
            if blank:
                kept.append(" " * (end - opened.start()))
            pos = end
        if kept:
            kept.append(text[pos:])
            text, removed = "".join(kept), True
        stray = closer.search(text)  # a closing tag whose opener the template already sent
        if stray is not None:
            if removed_text is not None:
                removed_text.insert(0, text[:stray.start()])
            text, removed = (" " * stray.end() if blank else "") + text[stray.end():], True
    return text, removed


def declares_no_call(text: str) -> bool:
    """Whether the text says no tool fits ("no suitable tool", "none of the tools", ...)."""
    folded = " ".join(text.casefold().replace("’", "'").split())
    return any(phrase in folded for phrase in _NO_CALL_PHRASES)


def _object_fields(schema: Schema, tool: Tool) -> dict[str, str]:
    if schema.ref is not None and schema.ref in tool.definitions:
        schema = tool.definitions[schema.ref]
    return {canonical_name(p.name): p.name for p in schema.properties}


@attrs.frozen
class _RenestPlan:
    """What :func:`renest` needs of a tool, worked out once per tool."""

    declared: frozenset[str]  # the parameters' names as declared
    top: frozenset[str]  # and folded
    containers: tuple[tuple[str, dict[str, str]], ...]  # object parameters: (name, folded field -> field)

    @classmethod
    def of(cls, tool: Tool) -> "_RenestPlan":
        plan = tool.programs.get(cls)
        if plan is None:
            properties = tool.parameters.properties
            containers = tuple((p.name, _object_fields(p.schema, tool)) for p in properties
                               if p.schema.properties or (p.schema.ref and tool.definitions.get(p.schema.ref) is not None
                                                          and tool.definitions[p.schema.ref].properties))
            plan = tool.programs[cls] = cls(frozenset(p.name for p in properties),
                                            frozenset(canonical_name(p.name) for p in properties), containers)
        return plan


def renest(arguments: dict[str, Any], tool: Tool) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Move each argument written flat into the one object parameter that declares it.

    ``{"name": "Ann", "date": "…"}`` for ``book_flight(passenger: {name, age}, date)``
    becomes ``{"passenger": {"name": "Ann"}, "date": "…"}``.  Returns the new arguments and
    a repair line per moved argument; the input is not modified.
    """
    plan = _RenestPlan.of(tool)
    containers, top = plan.containers, plan.top
    if not containers or arguments.keys() <= plan.declared:  # nothing written flat
        return arguments, ()
    out: dict[str, Any] = {}
    moved: list[str] = []
    for key, value in arguments.items():
        folded = canonical_name(key) if isinstance(key, str) else ""
        homes = [(parent, fields[folded]) for parent, fields in containers if folded and folded in fields]
        if folded in top or len(homes) != 1:
            out[key] = value
            continue
        parent, field = homes[0]
        nested = out.get(parent)
        if nested is None and parent in arguments and isinstance(arguments[parent], dict):
            nested = dict(arguments[parent])
        if nested is not None and not isinstance(nested, dict):
            out[key] = value
            continue
        nested = dict(nested or {})
        if field in nested:
            out[key] = value
            continue
        nested[field] = value
        out[parent] = nested
        moved.append(f"re-nested {key} into {parent}")
    return (out, tuple(moved)) if moved else (arguments, ())


def _extract(protocol: Protocol, text: str, tools: Toolset, limits: Limits) -> Extraction:
    try:
        return protocol.parse(text, tools, limits=limits)
    except Exception as err:  # a protocol bug must not become the caller's exception
        return Extraction((), (f"{protocol.info.id} failed on this reply ({type(err).__name__})",), False)


def _lenient(text: str, tools: Toolset, asked: str, limits: Limits) -> tuple[str, Extraction] | None:
    """The first other protocol (most distinctive syntax first) that finds calls in ``text``."""
    for protocol_id in lenient_order():
        if protocol_id == asked or not REGISTRY[protocol_id].may_hold_calls(text):
            continue
        try:
            protocol = get_protocol(protocol_id)
        except Exception:  # a protocol not yet available is skipped
            continue
        found = _extract(protocol, text, tools, limits)
        if found.calls:
            return protocol_id, found
    return None


def _coerce_text(text: Any) -> tuple[str, str]:
    if isinstance(text, str):
        return text, ""
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("utf-8", errors="replace"), "the reply was bytes, decoded as UTF-8"
    if text is None:
        return "", "the reply was None"
    return str(text), f"the reply was a {type(text).__name__}, read as its text"


def parse_reply(text: Any, tools: Any, protocol_id: str, *, rule: str = "main", validate: bool = True,
                lenient_fallback: bool = False, profile: str = "sdk", rules: RuleSet | None = None,
                policy: Policy | None = None, limits: Limits = DEFAULT_LIMITS) -> ParsedReply:
    """The calls a reply holds, in ``protocol_id``'s syntax, graded under ``rule``.

    ``rule``: ``main`` (each protocol's own parser; text formats re-nest an argument written
    flat that belongs inside an object), ``symmetric`` (that repair under every protocol) or
    ``as_written`` (a call that would need it is refused).  A call that writes a key twice
    (``{"value": 5, "value": -1}``) is ambiguous: it keeps the last value, as JSON parsers do,
    with a repair line naming the key (``duplicate key "value" in the arguments: the last value
    is used``), and is refused as written.  ``lenient_fallback``: when the
    asked protocol finds nothing, any protocol's syntax, each call marked
    ``lenient:<protocol>`` (refused under ``as_written``).  ``policy``: each accepted
    call's report also holds the policy's findings (with ``validate``; ``norm`` is the
    call's normalised arguments).  ``profile`` and ``rules`` choose the validation rules as
    for :func:`validate_arguments`.  Never raises for model text.

    >>> from toolform_rules import sample_toolset
    >>> reply = parse_reply('Sure. {"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", '
    ...                     '"value": -5, "term_months": 12}}', sample_toolset(), "json_object")
    >>> call = reply.calls[0]
    >>> call.resolved_name, call.valid, call.validation["constraint_errors"]
    ('legal_draft_v3', False, ['value: -5 < minimum 0'])
    """
    if rule not in RULES:
        raise ValueError(f"unknown grading rule {rule!r}; use one of {', '.join(RULES)}")
    toolset = tools if isinstance(tools, Toolset) else load_tools(tools, limits=limits)
    protocol = get_protocol(protocol_id)
    text, input_note = _coerce_text(text)
    notes = [input_note] if input_note else []
    if len(text) > limits.max_input_bytes:
        notes.append(f"the reply is longer than {limits.max_input_bytes} characters; only that much is read")
        text = text[:limits.max_input_bytes]
    text, reasoning_removed = remove_reasoning(text)

    extraction = _extract(protocol, text, toolset, limits)
    notes.extend(extraction.notes)
    matched = protocol_id if extraction.calls else ""
    lenient_calls = False
    if not extraction.calls:
        # which syntax the reply was written in: the whole reply when its calls are wanted, else a
        # bounded probe of its start (the name of the syntax, at a cost that does not grow with the reply)
        probed = text if lenient_fallback else text[:limits.syntax_probe_chars]
        found = _lenient(probed, toolset, protocol_id, limits)
        if found is not None:
            matched = found[0]
            if lenient_fallback:
                extraction, lenient_calls = found[1], True
    no_call = declares_no_call(text) if not extraction.calls else False
    if no_call:  # a declaration, not another protocol's (junk) call
        matched = NO_CALL_SYNTAX

    calls: list[ParsedCall] = []
    rejected: list[ParsedCall] = []
    hallucinated: list[str] = []
    text_values = (get_protocol(matched).info.text_values if lenient_calls else protocol.info.text_values)
    for raw in extraction.calls:
        graded = _grade(raw, toolset, rule=rule, text_values=text_values, lenient=matched if lenient_calls else "",
                        validate=validate, profile=profile, rules=rules, limits=limits, policy=policy)
        if graded.resolved_name is None:
            hallucinated.append(raw.name)
        (calls if graded.accepted else rejected).append(graded)
    content = extraction.content if extraction.content is not None else outside_calls(text, extraction.calls)
    # positional, in the fields' order (protocol_id, rule, calls, rejected, parsed_strict, parsed_lenient,
    # matched_syntax, format_compliant, no_call_declared, hallucinated, reasoning_removed, note, content):
    # keywords cost a microsecond more on the hot path
    return ParsedReply(protocol_id, rule, tuple(calls), tuple(rejected), bool(extraction.calls) and not lenient_calls,
                       bool(matched) and matched != NO_CALL_SYNTAX, matched,
                       matched in ("", protocol_id, NO_CALL_SYNTAX), no_call, tuple(hallucinated),
                       reasoning_removed, "; ".join(notes), content)


def outside_calls(text: str, calls: Sequence[RawCall]) -> str:
    """``text`` without the spans of ``calls`` (a call without a span is not cut out), trimmed.

    >>> outside_calls("Sure. f(a=1) Done.", [RawCall("f", {"a": 1}, (6, 12))])
    'Sure.  Done.'
    """
    return text_outside(text, [c.span for c in calls if c.span is not None]).strip() if calls else text.strip()


def _grade(raw: RawCall, toolset: Toolset, *, rule: str, text_values: bool, lenient: str, validate: bool,
           profile: str, rules: RuleSet | None, limits: Limits, policy: Policy | None = None) -> ParsedCall:
    tool = toolset.get(raw.name)
    if tool is None:
        return ParsedCall(raw.name, raw.arguments, None, False, accepted=False, reason="unknown tool",
                          verdict=_unknown(raw, toolset, profile, rules, validate))
    arguments = type_values(raw.arguments, tool, limits=limits) if text_values else raw.arguments
    repairs: list[str] = []
    if lenient:
        repairs.append(f"lenient:{lenient}")
    if raw.duplicates:  # the last value is read, as JSON parsers read it; a reader of the first sees another call
        repairs.extend(repair(place) for place in raw.duplicates)
        if rule == "as_written":
            return ParsedCall(raw.name, arguments, tool.name, False, tuple(repairs), False,
                              "; ".join(f"duplicate key {place}" for place in raw.duplicates)
                              + ": as written the call is ambiguous")
    if rule == "symmetric" or (rule in ("main", "as_written") and text_values):
        renested, moved = renest(arguments, tool)
        if moved and rule == "as_written":
            return ParsedCall(raw.name, arguments, tool.name, False, tuple(moved), False,
                              "written flat; as written it needs a repair: " + ", ".join(moved))
        if moved:
            arguments = renested
            repairs.extend(moved)
    if lenient and rule == "as_written":
        return ParsedCall(raw.name, arguments, tool.name, False, tuple(repairs), False,
                          f"read with {lenient}'s syntax, not the asked protocol's")
    normalise = functools.partial(normalised_arguments, arguments, tool, limits, rules)
    report = program_for(tool, profile, limits, rules).run(arguments) if validate else None
    if report is not None and policy is not None:
        report = policy.apply(report, tool.name, arguments, norm=normalise, tool=tool)
    return ParsedCall(raw.name, arguments, tool.name, report.ok if report is not None else True, tuple(repairs),
                      True, "", report, normalise)


def _unknown(raw: RawCall, toolset: Toolset, profile: str, rules: RuleSet | None,
             validate: bool) -> dict[str, Any] | None:
    if not validate:
        return None
    return validate_arguments({"name": raw.name, "arguments": raw.arguments}, toolset, profile=profile,
                              rules=rules).to_dict()
