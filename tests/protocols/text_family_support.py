"""Shared test support for the text-value protocols (cli_call, url_call, key_value_call, pipe_call,
csv_call, table_call, symbolic_call): call strategies from a tool's schema, the reference
oracle, nasty inputs, and the fast reader checked against the grammar.

Comparing, round trips and the never-raises check are the shared ones of ``support``.  These
formats write values as text that the schema types back, so the family compares values with
``support.compare.equal_json`` (``3`` and ``3.0`` are one number, keys in any order).

What the text formats cannot express is left out of generation here, each with its reason:

* ``None`` — a text format writes it as the text ``null``, and a string parameter may hold
  the string ``"null"``; typing keeps text as text, so null cannot come back.
* parameters with a union of types or no type — the text ``12`` fits both ``12`` and
  ``"12"``; only the schema tells them apart, and here it does not.
* strings with lone surrogates (``Cs``) — not encodable as UTF-8, so no reply can hold them.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Iterable

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from support.bfcl import record_toolsets
from support.compare import equal_json, identical
from support.protocol_checks import assert_calls, read_calls
from toolform_rules import ToolCall, Toolset, sample_toolset
from toolform_rules.grammar import GrammarFailure
from toolform_rules.schema.ir import Schema
from toolform_rules.replies.formats.base import Protocol

#: round-trip examples per test (CI: 300; ``TEXT_FAMILY_EXAMPLES=5000`` for a long run)
EXAMPLES = int(os.environ.get("TEXT_FAMILY_EXAMPLES", "300"))
ROUND_TRIP = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

#: the characters that break naive text formats, plus ordinary ones
NASTY = ("abcXYZ019 -_.,:;=|&+%?/#$`*!~<>()[]{}\"'\\\n\t\r"
         "é中🙂★§¿≡¤\u00a0\u2028\x0b\x0c\x85")
TEXT = st.one_of(
    st.text(alphabet=NASTY, max_size=16),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
    st.sampled_from(["", " ", "  lead", "trail  ", " both ", "null", "true", "12", "-3", "--x", "-x", "1e-07",
                     '"quoted"', "'single'", "a|b", "a=b", "a: b", "a,b", "TOOL: x", "★a§b", "\\", "\\n", "x\\",
                     "| tool | argument | value |", "|---|", "{\"a\": 1}", "[1, 2]", "&b=c", "%20", "+"]),
)
FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([1e-07, 1200.5, 3.0, -0.5, 1e16, 2.5e-300]))


def _typed(schema: Schema | None) -> bool:
    """Whether ``schema`` declares exactly one type, and not null."""
    return schema is not None and len([t for t in schema.types if t != "null"]) == 1 and "null" not in schema.types


def expressible(schema: Schema | None) -> bool:
    """Whether a text format can bring a value of this schema back exactly (see the module note)."""
    return _typed(schema) or bool(schema is not None and schema.enum)


@st.composite
def value_for(draw: Any, schema: Schema | None, depth: int = 0) -> Any:
    """A value of ``schema``'s one type (enums from the enum)."""
    if schema is not None and schema.enum:
        choices = [v for v in schema.enum if v is not None]
        if choices:
            return draw(st.sampled_from(choices))
    kind = schema.types[0] if schema is not None and schema.types else "string"
    if kind == "string":
        return draw(TEXT)
    if kind == "integer":
        return draw(st.integers(min_value=-10**12, max_value=10**12))
    if kind == "number":
        return draw(st.one_of(FLOATS, st.integers(min_value=-10**6, max_value=10**6)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        items = schema.items if schema is not None else None
        if depth >= 3:
            return []
        if items is None or not _typed(items):
            return draw(st.lists(json_scalar(), max_size=3))
        return draw(st.lists(value_for(items, depth + 1), max_size=3))
    if kind == "object":
        if depth >= 3:
            return {}
        if schema is not None and schema.properties:
            return draw(arguments_for(schema, depth + 1))
        return draw(st.dictionaries(TEXT, json_scalar(), max_size=3))
    return draw(TEXT)


def json_scalar() -> st.SearchStrategy[Any]:
    """A text, number or boolean (what an untyped array or object holds here)."""
    return st.one_of(TEXT, st.integers(-1000, 1000), FLOATS, st.booleans())


@st.composite
def arguments_for(draw: Any, schema: Schema, depth: int = 0) -> dict[str, Any]:
    """Arguments for an object schema: every required parameter, some optional ones."""
    out: dict[str, Any] = {}
    for prop in schema.properties:
        if not expressible(prop.schema):
            continue
        if prop.name in schema.required or draw(st.booleans()):
            out[prop.name] = draw(value_for(prop.schema, depth))
    return out


def calls_for(toolset: Toolset, max_calls: int = 3) -> st.SearchStrategy[list[ToolCall]]:
    """1..``max_calls`` calls on the tools of ``toolset``."""
    @st.composite
    def one(draw: Any) -> ToolCall:
        tool = draw(st.sampled_from(list(toolset.tools)))
        return ToolCall(tool.name, draw(arguments_for(tool.parameters)))

    return st.lists(one(), min_size=1, max_size=max_calls)


@st.composite
def bfcl_calls(draw: Any, max_calls: int = 3) -> tuple[Toolset, list[ToolCall]]:
    """A BFCL record's toolset (simple_python and multiple: ~600 records) and 1..``max_calls`` calls on it."""
    toolset = draw(st.sampled_from(record_toolsets()))
    return toolset, draw(calls_for(toolset, max_calls))


SAMPLE = sample_toolset()


def single_calls() -> st.SearchStrategy[tuple[Toolset, list[ToolCall]]]:
    """One call, on the sample tool or on a BFCL record's tools, with its toolset: one call's text
    is what a fast path is given."""
    return st.one_of(calls_for(SAMPLE, 1).map(lambda calls: (SAMPLE, calls)), bfcl_calls(max_calls=1))


# ---------------------------------------------------------------------------------------------
# the reference (PyPI toolform 0.0.1) as a black box

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from toolform.ir import ToolCall as RefCall
    from toolform.protocols import get_protocol as ref_protocol
    from toolform.sdk import sample_toolset as ref_sample_toolset

REF_UNIVERSE = ref_sample_toolset().universe


def ref_parse(protocol_id: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    """The reference's reading of ``text`` on the sample tool (typed by its own schema pass)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ref_protocol(protocol_id).parse(text, REF_UNIVERSE)
    return [(c.name, dict(c.arguments)) for c in result.calls]


def ref_example(protocol_id: str, name: str, arguments: dict[str, Any]) -> str:
    """The reference's rendering of one call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ref_protocol(protocol_id).example(RefCall(name=name, arguments=arguments))


def assert_reads_as_the_reference(protocol: Protocol, text: str) -> None:
    """Our reading of ``text`` on the sample tool (typed as the pipeline types it) holds the
    reference's calls, values equal as JSON — and there is at least one, or agreeing proves nothing."""
    want = ref_parse(protocol.info.id, text)
    assert want, ("the reference reads no call in this reply", text)
    assert_calls(read_calls(protocol, text, SAMPLE), want, equal_json, context=text)


# ---------------------------------------------------------------------------------------------
# nasty inputs

#: replies that break naive readers (huge, deeply nested, unclosed, not UTF-8), by what they are
NASTY_INPUTS = {
    "empty": "",
    "NUL": "\x00",
    "100000 [": "[" * 100000,
    "50000 {": "{" * 50000,
    "50000 (": "(" * 50000,
    "10001 single quotes": "'" * 10001,
    "10001 double quotes": '"' * 10001,
    "100000 pipes": "|" * 100000,
    "50000 stars": "★" * 50000,
    "100001 backslashes": "\\" * 100001,
    "100000 hyphens": "-" * 100000,
    "100000 line feeds": "\n" * 100000,
    "a million a": "a" * 1_000_000,
    "a million characters of the tool name": ("legal_draft_v3 " * 70000)[:1_000_000],
    "cli: option then 50001 single quotes": "legal_draft_v3 --a " + "'" * 50001,
    "pipe: 100000 fields": "legal_draft_v3|" + "a=b|" * 100000,
    "csv: 100000 quoted commas": "legal_draft_v3," + ",\"" * 100000,
    "table: 20000 rows": "| tool | argument | value |\n|---|---|---|\n" + "| legal_draft_v3 | a | b |\n" * 20000,
    "key_value: 100000 lines": "TOOL: legal_draft_v3\n" + "a: b\n" * 100000,
    "url: 100000 bare percent signs": "POST /x?" + "a=%" * 100000,
    "symbolic: 100000 arguments": "legal_draft_v3 " + "★a§" * 100000,
    "symbolic: list of 100000 [": "legal_draft_v3 ★a≡" + "[" * 100000,
    "symbolic: object nested 30000 deep": "legal_draft_v3 ★a¤" + "{\"a\":" * 30000,
    "lone surrogate": "\ud800",
    "1000 CRLF": "\r\n" * 1000,
    "1000 empty fences": "```\n```\n" * 1000,
}


def nasty_cases(malformed: Iterable[str] = ()) -> list[Any]:
    """:data:`NASTY_INPUTS` as pytest parameters ``(text, malformed)``, one id each: ``malformed``
    is true for the named inputs that hold a call of the format under test that cannot be read
    (an unclosed quote, a broken literal).  A name not in :data:`NASTY_INPUTS` is an error, so a
    typo cannot quietly drop the malformed check."""
    malformed = set(malformed)
    unknown = malformed - NASTY_INPUTS.keys()
    if unknown:
        raise KeyError(f"not nasty inputs: {sorted(unknown)}")
    return [pytest.param(text, name in malformed, id=name) for name, text in NASTY_INPUTS.items()]


# ---------------------------------------------------------------------------------------------
# the fast reader against the grammar


def assert_fast_path_agrees(fast_read: Callable[[str], Any], grammar_read: Callable[[str], Any], segment: str, *,
                            reads: bool | None = None) -> tuple[Any, Any]:
    """Where the fast reader reads ``segment``, the grammar reads it identically (the same tokens,
    types and order); ``reads``: whether the fast reader must read it (``True``: a rendered,
    well-formed call) or must decline it (``False``); ``None``: either.
    Returns both readings: ``None`` for the fast reader's decline and for where the grammar stops."""
    fast = fast_read(segment)
    try:
        slow = grammar_read(segment)
    except GrammarFailure:
        slow = None
    assert reads is None or (fast is not None) == reads, (
        "the fast reader declined a well-formed call" if reads else "the fast reader read what it should decline",
        segment, fast, slow)
    assert fast is None or identical(fast, slow), (segment, fast, slow)
    return fast, slow
