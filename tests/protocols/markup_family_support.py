"""Shared test helpers of the markup/config/natural-language protocol group.

Strategies for calls on the sample tool and on real BFCL function docs (values generated
from each parameter's JSON type, strings from an alphabet full of the characters formats
trip on), an exact comparison of values, the round-trip check (through ``type_values`` for
text-value protocols) and the reference oracle, used as a black box.
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from toolform_rules import load_tools, sample_tool
from toolform_rules.calls import ToolCall
from toolform_rules.names import canonical_name
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import Extraction
from toolform_rules.protocols.typing import type_values
from toolform_rules.samples import SAMPLE_TOOL_JSON
from toolform_rules.toolset import Toolset

ROOT = Path(__file__).resolve().parents[2]
BFCL = ROOT.parent / "shared" / "data" / "bfcl"

# quotes, commas, pipes, brackets, =, :, newlines, tabs, backslashes, markup characters, unicode
ALPHABET = list("ab XZ09\"',|[](){}<>=:;.#&*!?%$@/\\-_+~`\n\t\r") + ["é", "ß", "中", "😀", "\u00a0", "\u2028"]
WORDS = ["true", "false", "null", "None", "yes", "12", "-3", "1e5", "0x1F", "~", "&amp;", "</parameter>",
         "name", "with", ", a: 1", "'", '"', "- x", "# c", "[[call]]", "Action:", "Observation:", " and ", "."]


@st.composite
def texts(draw: Any, max_size: int = 14) -> str:
    """Strings a format has to quote or escape: odd characters, words it reserves, spaces at the ends."""
    body = draw(st.lists(st.one_of(st.sampled_from(ALPHABET), st.sampled_from(WORDS),
                                   st.characters(codec="utf-8", exclude_categories=("Cs",))),
                         max_size=max_size).map("".join))
    left = draw(st.sampled_from(["", "", "", " ", "  ", "\n", "\t "]))
    right = draw(st.sampled_from(["", "", "", " ", "  ", "\n", " \n"]))
    return left + body + right


FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([1e-07, 1200.5, 0.1, -2.5, 1e16, 3.0, 0.0, 123456789.125]))
INTEGERS = st.one_of(st.integers(-1000, 1000), st.integers(-(2 ** 70), 2 ** 70))


def _types(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return [kind] if isinstance(kind, str) else []


def json_values(depth: int = 0) -> st.SearchStrategy:
    """Any JSON value: scalars, and nested arrays and objects (also arrays of objects)."""
    scalars = st.one_of(texts(8), INTEGERS, FLOATS, st.booleans(), st.none())
    if depth >= 2:
        return scalars
    return st.one_of(scalars, st.lists(json_values(depth + 1), max_size=3),
                     st.dictionaries(texts(6), json_values(depth + 1), max_size=3))


@st.composite
def value_for(draw: Any, schema: Any, *, text_values: bool, depth: int = 0) -> Any:
    """A value of ``schema``'s JSON type.

    For text-value protocols a value whose schema names no type is a string: a format that
    writes values as text cannot say what type it was (``12`` and ``"12"`` read the same).
    """
    if isinstance(schema, dict) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    kinds = _types(schema) or ["any"]
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        return draw(texts())
    if kind == "integer":
        return draw(INTEGERS)
    if kind in ("number", "float"):
        return draw(st.one_of(FLOATS, st.integers(-1000, 1000)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind in ("array", "tuple"):
        items = schema.get("items", {}) if isinstance(schema, dict) else {}
        if depth >= 3:
            return []
        return draw(st.lists(value_for(items, text_values=False, depth=depth + 1), max_size=3))
    if kind in ("object", "dict"):
        if depth >= 3:
            return {}
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict) and props:
            return draw(arguments_for(schema, text_values=False, depth=depth + 1))
        return draw(st.dictionaries(texts(6), json_values(1), max_size=3))
    if kind == "null":
        return None
    return draw(texts()) if text_values else draw(json_values(1))


@st.composite
def arguments_for(draw: Any, schema: Any, *, text_values: bool, depth: int = 0) -> dict:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    names = draw(st.lists(st.sampled_from(sorted(props)), unique=True, max_size=len(props))) if props else []
    return {name: draw(value_for(props[name], text_values=text_values, depth=depth)) for name in names}


@functools.cache
def bfcl_functions() -> tuple[dict, ...]:
    """Every distinct function doc of BFCL v4 simple_python and multiple."""
    seen: dict[str, dict] = {}
    for file in ("BFCL_v4_simple_python.json", "BFCL_v4_multiple.json"):
        with open(BFCL / file, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    for function in json.loads(line)["function"]:
                        seen.setdefault(json.dumps(function, sort_keys=True), function)
    return tuple(seen.values())


@functools.cache
def toolset_of(docs_json: str) -> Toolset:
    return load_tools(json.loads(docs_json))


def toolset_for(docs: list[dict]) -> Toolset:
    return toolset_of(json.dumps(docs, sort_keys=True))


SAMPLE_DOC = SAMPLE_TOOL_JSON


@st.composite
def calls_on(draw: Any, *, text_values: bool, several: bool = True, bfcl: bool = True
             ) -> tuple[list[ToolCall], list[dict]]:
    """1 (or, when ``several``, up to 3) calls on the sample tool or BFCL functions, and their docs."""
    pool = draw(st.sampled_from(["sample", "bfcl"])) if bfcl else "sample"
    count = draw(st.integers(1, 3)) if several else 1
    docs: list[dict] = []
    calls: list[ToolCall] = []
    for _ in range(count):
        doc = SAMPLE_DOC if pool == "sample" else draw(st.sampled_from(bfcl_functions()))
        if doc not in docs:
            # one tool per name, as a toolset has it (BFCL repeats names, and car_rental meets car.rental)
            twin = next((d for d in docs if canonical_name(d["name"]) == canonical_name(doc["name"])), None)
            if twin is not None:
                doc = twin
            else:
                docs.append(doc)
        arguments = draw(arguments_for(doc["parameters"], text_values=text_values))
        calls.append(ToolCall(doc["name"], arguments))
    return calls, docs


def same(a: Any, b: Any) -> bool:
    """Exact equality of JSON values: booleans are not numbers, numbers compare by value, -0.0 == 0.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):  # objects are unordered
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a is None and b is None


def typed(extraction: Extraction, toolset: Toolset, text_values: bool) -> list[tuple[str, dict]]:
    """The calls as the pipeline sees them: the tool's own name, values typed for text-value protocols."""
    out = []
    for call in extraction.calls:
        tool = toolset.get(call.name)
        arguments = type_values(call.arguments, tool) if text_values and tool is not None else call.arguments
        out.append((tool.name if tool is not None else call.name, arguments))
    return out


def assert_round_trip(protocol_id: str, calls: list[ToolCall], docs: list[dict]) -> None:
    protocol = get_protocol(protocol_id)
    text = protocol.render_calls(calls)
    extraction = protocol.parse(text, toolset_for(docs))
    got = typed(extraction, toolset_for(docs), protocol.info.text_values)
    want = [(c.name, c.arguments) for c in calls]
    assert len(got) == len(want), (text, extraction)
    for (gname, gargs), (wname, wargs) in zip(got, want):
        assert gname == wname, (text, extraction)
        assert same(gargs, wargs), (text, gargs, wargs)
    assert extraction.compliant, (text, extraction)


# ---------------------------------------------------------------------------------------------
# the reference, as a black box

@functools.cache
def _reference_universe(docs_json: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.sdk import load_tools as ref_load_tools
        docs = json.loads(docs_json)
        return ref_load_tools([{"type": "function", "function": d} for d in docs]).universe


def reference_calls(protocol_id: str, text: str, docs: list[dict]) -> list[tuple[str, dict]]:
    """What the reference's ``get_protocol(id).parse`` extracts (names and arguments)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.protocols import get_protocol as ref_get_protocol
        result = ref_get_protocol(protocol_id).parse(text, _reference_universe(json.dumps(docs, sort_keys=True)))
    toolset = toolset_for(docs)
    out = []
    for call in result.calls:  # names as the pipeline resolves them (the reference keeps some as written)
        tool = toolset.get(call.name)
        out.append((tool.name if tool is not None else call.name, dict(call.arguments)))
    return out


def our_calls(protocol_id: str, text: str, docs: list[dict]) -> list[tuple[str, dict]]:
    protocol = get_protocol(protocol_id)
    toolset = toolset_for(docs)
    return typed(protocol.parse(text, toolset), toolset, protocol.info.text_values)


def same_calls(a: list[tuple[str, dict]], b: list[tuple[str, dict]]) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] and same(x[1], y[1]) for x, y in zip(a, b))


NASTY = ["", " ", "\x00", "\x00" * 50, "[" * 100_000, "{" * 100_000, "<" * 100_000, "<invoke" * 20_000,
         "a" * 1_000_000, ("x: " * 50_000), "\n" * 100_000, "```" * 10_000, "\ud800", "<![CDATA[" * 20_000,
         "&" * 50_000, "&#" * 50_000, "Action:" * 30_000, "- " * 50_000, "I will use " * 30_000,
         "Use f with " * 30_000, "[[call]]\n" * 20_000, "<function=" * 20_000, "<call>" * 20_000,
         '"""' * 20_000, "'" * 100_000, ":" * 100_000, "|\n" * 50_000]

SAMPLE_TOOLSET = Toolset([sample_tool()])

__all__ = ["ALPHABET", "NASTY", "SAMPLE_DOC", "SAMPLE_TOOLSET", "arguments_for", "assert_round_trip",
           "bfcl_functions", "calls_on", "json_values", "our_calls", "reference_calls", "same", "same_calls",
           "texts", "toolset_for", "typed", "value_for"]
