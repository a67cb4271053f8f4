"""The checks every protocol test makes: round trips, fast path against grammar, never raising.

Calls are compared as ``(name, arguments)`` pairs, the name as the toolset spells it and the
arguments typed from the schema where the protocol writes values as text, which is how
``parse_reply`` hands them on.
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

from toolform_rules import ToolCall, Toolset
from toolform_rules.replies.formats.base import INTERNAL_ERROR, Extraction, Protocol, RawCall
from toolform_rules.replies.formats.text_values import type_values

from .compare import Compare, identical, same_calls

Calls = list[tuple[str, Any]]


def render(protocol: Protocol, calls: Sequence[ToolCall], toolset: Toolset | None = None) -> str:
    """The reply for ``calls``; a positional protocol (csv_call) is given the toolset for its parameter order."""
    if toolset is not None and "tools" in inspect.signature(protocol.render_calls).parameters:
        return protocol.render_calls(calls, tools=toolset)  # type: ignore[call-arg]
    return protocol.render_calls(calls)


def as_pipeline_reads(protocol: Protocol, extraction: Extraction, toolset: Toolset | None = None) -> Calls:
    """The extraction's calls as the pipeline sees them: the tool's own name, text values typed."""
    out: Calls = []
    for call in extraction.calls:
        tool = toolset.get(call.name) if toolset is not None else None
        arguments = call.arguments
        if protocol.info.text_values and tool is not None:
            arguments = type_values(arguments, tool)
        out.append((tool.name if tool is not None else call.name, arguments))
    return out


def read_calls(protocol: Protocol, text: str, toolset: Toolset | None = None) -> Calls:
    """``text`` parsed by ``protocol`` and read as the pipeline reads it (see :func:`as_pipeline_reads`)."""
    return as_pipeline_reads(protocol, protocol.parse(text, toolset), toolset)


def assert_calls(got: Calls | None, want: Calls, values: Compare = identical, context: Any = None) -> None:
    """``got`` (never None: a reader that declined fails here) holds ``want``'s calls by ``values``."""
    assert got is not None, ("the reader declined", context)
    assert same_calls(got, want, values), (context, got, want)


def assert_round_trip(protocol: Protocol, calls: Sequence[ToolCall], toolset: Toolset | None = None, *,
                      values: Compare = identical, notes_allowed: bool = False) -> Extraction:
    """``parse(render(calls))`` gives ``calls`` back, compliant (and with no notes unless ``notes_allowed``)."""
    text = render(protocol, calls, toolset)
    extraction = protocol.parse(text, toolset)
    want = [(call.name, dict(call.arguments)) for call in calls]
    assert_calls(as_pipeline_reads(protocol, extraction, toolset), want, values, context=(text, extraction))
    assert extraction.compliant, (text, extraction)
    assert notes_allowed or not extraction.notes, (text, extraction)
    return extraction


def assert_total(protocol: Protocol, text: Any, toolset: Toolset | None = None, *,
                 malformed: bool = False) -> Extraction:
    """``protocol.parse(text)`` answers, whatever ``text`` is: well-formed calls and notes, the
    last-resort guard unused.  ``malformed``: the text holds no readable call, so the answer
    is no calls and at least one note saying why."""
    extraction = protocol.parse(text, toolset)
    assert isinstance(extraction, Extraction), type(extraction)
    assert isinstance(extraction.calls, tuple) and isinstance(extraction.notes, tuple), extraction
    for call in extraction.calls:
        assert isinstance(call, RawCall) and isinstance(call.name, str) and call.name, call
        assert isinstance(call.arguments, dict) and all(isinstance(k, str) for k in call.arguments), call
    assert all(isinstance(note, str) and note for note in extraction.notes), extraction.notes
    assert not any(INTERNAL_ERROR in note for note in extraction.notes), extraction.notes
    if malformed:
        assert extraction.calls == (), (_excerpt(text), extraction.calls[:2])
        assert extraction.notes, ("no note says why nothing was read", _excerpt(text))
        assert not extraction.compliant, _excerpt(text)
    return extraction


def _excerpt(text: Any) -> Any:
    return text[:80] + f"... ({len(text)} characters)" if isinstance(text, str) and len(text) > 80 else text
