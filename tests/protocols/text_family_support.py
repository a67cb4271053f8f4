"""Shared test support for the text-value protocols (cli_call, url_call, key_value_call, pipe_call,
csv_call, table_call, symbolic_call): call strategies from a tool's schema, strict comparison,
the reference oracle, nasty inputs.

What the text formats cannot express is left out of generation here, each with its reason:

* ``None`` — a text format writes it as the text ``null``, and a string parameter may hold
  the string ``"null"``; typing keeps text as text, so null cannot come back.
* parameters with a union of types or no type — the text ``12`` fits both ``12`` and
  ``"12"``; only the schema tells them apart, and here it does not.
* strings with lone surrogates (``Cs``) — not encodable as UTF-8, so no reply can hold them.
"""

from __future__ import annotations

import functools
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from toolform_rules import ToolCall, Toolset, load_tools, sample_toolset
from toolform_rules.ir import Schema
from toolform_rules.protocols.base import Extraction
from toolform_rules.protocols.typing import type_values

#: round-trip examples per test (CI: 300; ``TEXT_FAMILY_EXAMPLES=5000`` for a long run)
EXAMPLES = int(os.environ.get("TEXT_FAMILY_EXAMPLES", "300"))
ROUND_TRIP = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

BFCL = Path(__file__).resolve().parents[3] / "shared" / "data" / "bfcl"

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


@functools.cache
def bfcl_toolsets() -> tuple[Toolset, ...]:
    """One toolset per BFCL record (simple_python and multiple): 2 files, ~600 records."""
    out = []
    for name in ("BFCL_v4_simple_python.json", "BFCL_v4_multiple.json"):
        for line in (BFCL / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(load_tools(json.loads(line)["function"]))
    return tuple(out)


@st.composite
def bfcl_calls(draw: Any, max_calls: int = 3) -> tuple[Toolset, list[ToolCall]]:
    toolset = draw(st.sampled_from(bfcl_toolsets()))
    return toolset, draw(calls_for(toolset, max_calls))


SAMPLE = sample_toolset()


def same(a: Any, b: Any) -> bool:
    """Strict equality: booleans are not numbers, 3 and 3.0 are one number, containers compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def typed(extraction: Extraction, toolset: Toolset) -> list[tuple[str, dict[str, Any]]]:
    """The extraction's calls with their text values typed from the schema (as the pipeline does)."""
    return [(c.name, type_values(c.arguments, toolset.get(c.name))) for c in extraction.calls]


def assert_round_trip(protocol: Any, calls: list[ToolCall], toolset: Toolset) -> None:
    # csv_call is positional: it renders from the schema's parameter order
    text = protocol.render_calls(calls, toolset) if protocol.info.id == "csv_call" else protocol.render_calls(calls)
    extraction = protocol.parse(text, toolset)
    got = typed(extraction, toolset)
    assert [n for n, _ in got] == [c.name for c in calls], (text, extraction)
    for (name, arguments), call in zip(got, calls):
        assert same(arguments, call.arguments), (text, arguments, call.arguments)
    assert extraction.compliant, (text, extraction)
    assert not extraction.notes, (text, extraction)


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ref_protocol(protocol_id).example(RefCall(name=name, arguments=arguments))


def ours(protocol: Any, text: str, toolset: Toolset = SAMPLE) -> list[tuple[str, dict[str, Any]]]:
    """Our reading of ``text``, typed as the pipeline types it, with names as the toolset spells them."""
    out = []
    for name, arguments in typed(protocol.parse(text, toolset), toolset):
        tool = toolset.get(name)
        out.append((tool.name if tool is not None else name, arguments))
    return out


NASTY_INPUTS = ["", "\x00", "[" * 100000, "{" * 50000, "(" * 50000, "'" * 10001, '"' * 10001, "|" * 100000,
                "★" * 50000, "\\" * 100001, "-" * 100000, "\n" * 100000, "a" * 1_000_000,
                ("legal_draft_v3 " * 70000)[:1_000_000], "legal_draft_v3 --a " + "'" * 50001,
                "legal_draft_v3|" + "a=b|" * 100000, "legal_draft_v3," + ",\"" * 100000,
                "| tool | argument | value |\n|---|---|---|\n" + "| legal_draft_v3 | a | b |\n" * 20000,
                "TOOL: legal_draft_v3\n" + "a: b\n" * 100000, "POST /x?" + "a=%" * 100000,
                "legal_draft_v3 " + "★a§" * 100000, "legal_draft_v3 ★a≡" + "[" * 100000,
                "legal_draft_v3 ★a¤" + "{\"a\":" * 30000, "\ud800", "\r\n" * 1000, "```\n```\n" * 1000]
