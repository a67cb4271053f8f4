"""Tool calls a provider returned as structured data, graded like the calls of a text reply.

OpenAI's Chat Completions returns ``tool_calls`` whose arguments are JSON *text* — which a
model may get wrong; Anthropic's Messages API returns ``tool_use`` blocks whose ``input`` is
an object.  :func:`parse_native` reads either (or the :class:`~toolform_rules.loop.clients.NativeCall`
records the clients make) into the same :class:`~toolform_rules.ParsedReply` that
:func:`~toolform_rules.parse_reply` gives for text, with the same grading, validation and
policy: a caller treats both alike.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ..loop.clients import native_call_fields
from ..engine.rules import RuleSet
from ..limits import DEFAULT_LIMITS, Limits
from .formats.base import RawCall
from .formats.duplicates import places, repair
from .parse import RULES, ParsedCall, ParsedReply, _grade
from ..schema.loaders import load_tools
from ..schema.toolset import Toolset

#: the ``protocol_id`` of a ParsedReply read from structured calls
NATIVE_PROTOCOL = "native_tool_calls"
#: the reason of a call whose arguments are not a JSON object
UNREADABLE = "the arguments are not a JSON object"


def parse_native(tool_calls: Iterable[Any], tools: Any, *, text: str = "", rule: str = "main",
                 validate: bool = True, profile: str = "sdk", rules: RuleSet | None = None, policy: Any = None,
                 limits: Limits = DEFAULT_LIMITS) -> ParsedReply:
    """The structured ``tool_calls`` of a provider's reply, graded and validated as :func:`parse_reply` does for
    text; ``text`` is the reply's text beside them (its ``content``).  Arguments written as JSON text are read
    as JSON; text that is not a JSON object makes the call rejected, with a note saying where the JSON stops.

    >>> from toolform_rules import sample_toolset
    >>> reply = parse_native([{"id": "c1", "type": "function", "function": {"name": "legal_draft_v3",
    ...     "arguments": '{"counterparty": "Acme", "value": -5, "term_months": 12}'}},
    ...     {"id": "c2", "type": "function", "function": {"name": "legal_draft_v3", "arguments": '{"value": '}}],
    ...     sample_toolset())
    >>> reply.calls[0].valid, reply.calls[0].validation["constraint_errors"]
    (False, ['value: -5 < minimum 0'])
    >>> reply.rejected[0].reason, reply.note
    ('the arguments are not a JSON object', "call 2 ('legal_draft_v3'): the arguments are not valid JSON: Expecting value at line 1, column 11")
    """
    toolset = tools if isinstance(tools, Toolset) else load_tools(tools, limits=limits)
    graded, notes = grade_native(tool_calls, toolset, rule=rule, validate=validate, profile=profile, rules=rules,
                                 policy=policy, limits=limits)
    return native_reply(graded, notes, rule=rule, text=text)


def grade_native(tool_calls: Iterable[Any], toolset: Toolset, *, rule: str = "main", validate: bool = True,
                 profile: str = "sdk", rules: RuleSet | None = None, policy: Any = None,
                 limits: Limits = DEFAULT_LIMITS) -> tuple[list[ParsedCall], list[str]]:
    """Each structured call graded, in the provider's order (accepted or not), and the notes: what
    :func:`parse_native` sorts into a reply, for a caller that answers each call by its id."""
    if rule not in RULES:
        raise ValueError(f"unknown grading rule {rule!r}; use one of {', '.join(RULES)}")
    graded: list[ParsedCall] = []
    notes: list[str] = []
    for number, item in enumerate(tool_calls, 1):
        _, name, arguments = native_call_fields(item)
        written = arguments
        arguments, problem = _arguments(arguments, limits)
        if problem:
            notes.append(f"call {number} ({name!r}): {problem}")
            tool = toolset.get(name)
            graded.append(ParsedCall(name, {}, tool.name if tool is not None else None, False, accepted=False,
                                     reason=UNREADABLE))
            continue
        # arguments written as JSON text may write a key twice: json keeps the last value, and so does the call
        twice = places(arguments, written) if isinstance(written, str) else ()
        if twice:
            notes.append(f"call {number} ({name!r}): " + "; ".join(map(repair, twice)))
        graded.append(_grade(RawCall(name, arguments, None, twice), toolset, rule=rule, text_values=False, lenient="",
                             validate=validate, profile=profile, rules=rules, limits=limits, policy=policy))
    return graded, notes


def native_reply(graded: list[ParsedCall], notes: list[str], *, rule: str = "main", text: str = "") -> ParsedReply:
    """The :class:`ParsedReply` of graded structured calls (:func:`grade_native`) and the reply's ``text``."""
    calls = tuple(call for call in graded if call.accepted)
    rejected = tuple(call for call in graded if not call.accepted)
    # (a call whose arguments could not be read was not graded: its name is not counted as made up)
    hallucinated = tuple(call.name for call in graded if call.resolved_name is None and call.reason != UNREADABLE)
    found = bool(graded)
    return ParsedReply(NATIVE_PROTOCOL, rule, calls, rejected, found, found, NATIVE_PROTOCOL if found else "", True,
                       False, hallucinated, False, "; ".join(notes), (text or "").strip())


def _arguments(arguments: Any, limits: Limits) -> tuple[dict[str, Any], str]:
    """The arguments as an object, and what is wrong with them ("" when nothing)."""
    if arguments is None or arguments == "":
        return {}, ""
    if isinstance(arguments, (str, bytes)):
        if len(arguments) > limits.max_input_bytes:
            return {}, f"the arguments are longer than {limits.max_input_bytes} characters"
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as err:
            return {}, f"the arguments are not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}"
        except (ValueError, RecursionError) as err:
            return {}, f"the arguments are not valid JSON: {err}"
    if not isinstance(arguments, dict):
        return {}, f"the arguments are not an object (a {type(arguments).__name__})"
    return arguments, ""


__all__ = ["NATIVE_PROTOCOL", "grade_native", "native_reply", "parse_native"]
