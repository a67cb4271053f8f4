"""parse_reply: a model's reply text → calls, repaired by the grading rule, normalised, validated.

The flow is one way: the reasoning is removed, the asked protocol reads the text (other
protocols' syntax too, with ``lenient_fallback``), names are resolved against the
toolset, values of text formats are typed from the schema, the grading rule repairs or
refuses, and each accepted call is normalised and validated.  Never an exception for
model text: whatever the text, a :class:`ParsedReply` comes back, its ``note`` saying
what went wrong and where.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from .engine.verbs import normalised_arguments, program_for, validate_arguments
from .schema.ir import Schema, Tool
from .limits import DEFAULT_LIMITS, Limits
from .schema.loaders import load_tools
from .schema.names import canonical_name
from .protocols import get_protocol, protocol_ids
from .protocols.base import Extraction, Protocol, RawCall
from .protocols.typing import type_values
from .engine.report import ValidationReport
from .engine.rules import RuleSet

if TYPE_CHECKING:
    from .policy import Policy
from .schema.toolset import Toolset

RULES = ("main", "symmetric", "as_written")
#: ``matched_syntax`` of a reply that holds no call and says that no tool fits.
NO_CALL_SYNTAX = "explicit-no-call"

#: The order in which ``lenient_fallback`` tries other protocols' syntax: the most
#: distinctive markers first (provider JSON, tags), free text last.
LENIENT_ORDER = (
    "native", "tool_call_tags", "function_tags", "xml_call", "code_block_json", "json_object", "json_array",
    "jsonl_call", "python_tag", "python_list_call", "python_call", "bracket_call", "react", "yaml_call",
    "toml_call", "sexpr_call", "sql_call", "graphql_call", "url_call", "cli_call", "two_step_call", "table_call",
    "key_value_call", "pipe_call", "symbolic_call", "csv_call", "slot_fill_call", "xml_generic_call",
    "nl_intent_structured", "nl_intent",
)

_REASONING_TAGS = ("think", "thinking", "reasoning")
_NO_CALL_PHRASES = (
    "no suitable tool", "no tool is suitable", "no tool is needed", "no tool needed", "no tools are needed",
    "no need to call", "no tool call", "no function call", "none of the tools", "none of the available tools",
    "no appropriate tool", "no relevant tool", "don't need any tool", "do not need any tool",
    "doesn't require a tool", "does not require a tool", "no_call", "cannot be done with the available tools",
    "can't be done with the available tools", "not possible with the available tools",
)


@attrs.frozen
class ParsedCall:
    """One call found in a reply, after the grading rule, with its normalised form and verdict."""

    name: str
    arguments: dict[str, Any]
    resolved_name: str | None
    normalized_arguments: dict[str, Any] | None
    valid: bool
    validation: dict[str, Any] | None
    repairs: tuple[str, ...] = ()
    accepted: bool = True
    reason: str = ""
    report: ValidationReport | None = attrs.field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, in the reference's key order."""
        return {"name": self.name, "arguments": self.arguments, "resolved_name": self.resolved_name,
                "normalized_arguments": self.normalized_arguments, "valid": self.valid,
                "validation": self.validation, "repairs": list(self.repairs), "accepted": self.accepted,
                "reason": self.reason}


@attrs.frozen
class ParsedReply:
    """Everything ``parse_reply`` found in one reply.

    ``calls``: accepted calls; ``rejected``: calls refused (an unknown tool, or a repair
    the grading rule refuses); ``hallucinated``: tool names that resolve to no tool;
    ``parsed_strict``: the asked protocol found the calls itself; ``matched_syntax``: the
    protocol whose syntax they were read with (when the asked one found none: the first
    other protocol that finds calls in the reply — without ``lenient_fallback``, in its first
    ``Limits.syntax_probe_chars`` characters); ``format_compliant``: no other protocol's
    syntax was needed; ``note``: what went wrong and where.
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
                "reasoning_removed": self.reasoning_removed, "note": self.note}


# --- the steps -----------------------------------------------------------------------------

def remove_reasoning(text: str) -> tuple[str, bool]:
    """``text`` without ``<think>…</think>`` blocks (also ``thinking``/``reasoning``), and whether any was removed.

    An unclosed block runs to the end of the text (a reply cut off while thinking holds no
    call); a closing tag whose opener the chat template already sent ends the reasoning.

    >>> remove_reasoning("<think>maybe f?</think>f(a=1)")
    ('f(a=1)', True)
    """
    lowered = text.lower()
    if not any(marker in lowered for marker in ("<think", "</think", "<reasoning", "</reasoning")):
        return text, False
    removed = False
    for tag in _REASONING_TAGS:
        opener, closer = f"<{tag}>", f"</{tag}>"
        while True:
            start = lowered.find(opener)
            if start < 0:
                break
            end = lowered.find(closer, start)
            cut_end = end + len(closer) if end >= 0 else len(text)
            text = text[:start] + text[cut_end:]
            lowered = lowered[:start] + lowered[cut_end:]
            removed = True
        stray = lowered.find(closer)  # a closing tag whose opener the template already sent
        if stray >= 0:
            text, lowered = text[stray + len(closer):], lowered[stray + len(closer):]
            removed = True
    return text, removed


def declares_no_call(text: str) -> bool:
    """Whether the text says no tool fits ("no suitable tool", "none of the tools", ...)."""
    folded = " ".join(text.casefold().replace("’", "'").split())
    return any(phrase in folded for phrase in _NO_CALL_PHRASES)


def _object_fields(schema: Schema, tool: Tool) -> dict[str, str]:
    if schema.ref is not None and schema.ref in tool.definitions:
        schema = tool.definitions[schema.ref]
    return {canonical_name(p.name): p.name for p in schema.properties}


def renest(arguments: dict[str, Any], tool: Tool) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Move each argument written flat into the one object parameter that declares it.

    ``{"name": "Ann", "date": "…"}`` for ``book_flight(passenger: {name, age}, date)``
    becomes ``{"passenger": {"name": "Ann"}, "date": "…"}``.  Returns the new arguments and
    a repair line per moved argument; the input is not modified.
    """
    top = {canonical_name(p.name) for p in tool.parameters.properties}
    containers = [(p.name, _object_fields(p.schema, tool)) for p in tool.parameters.properties
                  if p.schema.properties or (p.schema.ref and tool.definitions.get(p.schema.ref) is not None
                                              and tool.definitions[p.schema.ref].properties)]
    if not containers:
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


def _extract(protocol: Protocol, text: str, tools: Toolset) -> Extraction:
    try:
        return protocol.parse(text, tools)
    except Exception as err:  # a protocol bug must not become the caller's exception
        return Extraction((), (f"{protocol.info.id} failed on this reply ({type(err).__name__})",), False)


def lenient_order() -> list[str]:
    """Every registered protocol, in the order the lenient fallback tries them: :data:`LENIENT_ORDER`'s
    ranking, then any protocol it does not rank (in registry order), so none is ever skipped.

    >>> sorted(lenient_order()) == sorted(protocol_ids())
    True
    """
    registered = protocol_ids()
    return [*(p for p in LENIENT_ORDER if p in registered), *(p for p in registered if p not in LENIENT_ORDER)]


def _lenient(text: str, tools: Toolset, asked: str) -> tuple[str, Extraction] | None:
    """The first other protocol (most distinctive syntax first) that finds calls in ``text``."""
    for protocol_id in lenient_order():
        if protocol_id == asked:
            continue
        try:
            protocol = get_protocol(protocol_id)
        except Exception:  # a protocol not yet available is skipped
            continue
        found = _extract(protocol, text, tools)
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
    ``as_written`` (a call that would need it is refused).  ``lenient_fallback``: when the
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

    extraction = _extract(protocol, text, toolset)
    notes.extend(extraction.notes)
    matched = protocol_id if extraction.calls else ""
    lenient_calls = False
    if not extraction.calls:
        # which syntax the reply was written in: the whole reply when its calls are wanted, else a
        # bounded probe of its start (the name of the syntax, at a cost that does not grow with the reply)
        probed = text if lenient_fallback else text[:limits.syntax_probe_chars]
        found = _lenient(probed, toolset, protocol_id)
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
    return ParsedReply(
        protocol_id=protocol_id, rule=rule, calls=tuple(calls), rejected=tuple(rejected),
        parsed_strict=bool(extraction.calls) and not lenient_calls,
        parsed_lenient=bool(matched) and matched != NO_CALL_SYNTAX,
        matched_syntax=matched, format_compliant=matched in ("", protocol_id, NO_CALL_SYNTAX),
        no_call_declared=no_call,
        hallucinated=tuple(hallucinated), reasoning_removed=reasoning_removed, note="; ".join(notes))


def _grade(raw: RawCall, toolset: Toolset, *, rule: str, text_values: bool, lenient: str, validate: bool,
           profile: str, rules: RuleSet | None, limits: Limits, policy: Policy | None = None) -> ParsedCall:
    tool = toolset.get(raw.name)
    if tool is None:
        return ParsedCall(raw.name, raw.arguments, None, None, False,
                          _unknown(raw, toolset, profile, rules, validate),
                          accepted=False, reason="unknown tool")
    arguments = type_values(raw.arguments, tool, limits=limits) if text_values else raw.arguments
    repairs: list[str] = []
    if lenient:
        repairs.append(f"lenient:{lenient}")
    if rule == "symmetric" or (rule in ("main", "as_written") and text_values):
        renested, moved = renest(arguments, tool)
        if moved and rule == "as_written":
            return ParsedCall(raw.name, arguments, tool.name, None, False, None, tuple(moved), False,
                              "written flat; as written it needs a repair: " + ", ".join(moved))
        if moved:
            arguments = renested
            repairs.extend(moved)
    if lenient and rule == "as_written":
        return ParsedCall(raw.name, arguments, tool.name, None, False, None, tuple(repairs), False,
                          f"read with {lenient}'s syntax, not the asked protocol's")
    normalized = normalised_arguments(arguments, tool, limits, rules)
    report = program_for(tool, profile, limits, rules).run(arguments) if validate else None
    if report is not None and policy is not None:
        report = policy.apply(report, tool.name, arguments, norm=normalized, tool=tool)
    return ParsedCall(raw.name, arguments, tool.name, normalized, report.ok if report is not None else True,
                      report.to_dict() if report is not None else None, tuple(repairs), True, "", report)


def _unknown(raw: RawCall, toolset: Toolset, profile: str, rules: RuleSet | None,
             validate: bool) -> dict[str, Any] | None:
    if not validate:
        return None
    return validate_arguments({"name": raw.name, "arguments": raw.arguments}, toolset, profile=profile,
                              rules=rules).to_dict()
