"""Exports: a toolset written as OpenAI, Anthropic or MCP JSON (JSON Schema 2020-12) loads back as the same tools.

The same tool means equal IR: every keyword, every pointer, the ``$ref`` targets
(``definitions``, which Tool equality leaves out, compared on their own).  Checked on
generated schemas, on every function doc of BFCL v4, on every schema of the JSON Schema Test
Suite (draft 2020-12) that our loader reads, and on the shapes a dialect rewrites.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import callgen
from support import bfcl, corpora
from toolform_rules import LoaderError, load_tools, sample_toolset
from toolform_rules.schema.export import SHAPES, schema_to_json, tool_to_json
from toolform_rules.schema.loaders import read_schema


def _same_tools(ours, back) -> None:
    assert back.names() == ours.names()
    for tool, again in zip(ours.tools, back.tools):
        assert again == tool
        assert dict(again.definitions) == dict(tool.definitions)


def _exports(toolset):
    return {"openai": toolset.to_openai(), "anthropic": toolset.to_anthropic(), "mcp": toolset.to_mcp()}


def _round_trips(toolset) -> None:
    for shape, exported in _exports(toolset).items():
        text = json.dumps(exported)  # what is sent over the wire: JSON, nothing Python-only
        back = load_tools(text, kind=shape)
        _same_tools(toolset, back)
        assert json.loads(text) == tool_export(back, shape), shape  # a second export writes the same JSON


def tool_export(toolset, shape):
    return [tool_to_json(tool, shape) for tool in toolset.tools]


def test_the_sample_toolset_round_trips_in_every_shape() -> None:
    _round_trips(sample_toolset())


def test_each_shape_is_the_providers() -> None:
    tools = sample_toolset()
    openai, = tools.to_openai()
    assert openai["type"] == "function" and set(openai["function"]) == {"name", "description", "parameters"}
    anthropic, = tools.to_anthropic()
    assert set(anthropic) == {"name", "description", "input_schema"}
    mcp, = tools.to_mcp()
    assert set(mcp) == {"name", "description", "inputSchema"}
    assert openai["function"]["parameters"] == anthropic["input_schema"] == mcp["inputSchema"]


@settings(max_examples=150, deadline=None)
@given(doc=callgen.tools())
def test_generated_tools_round_trip(doc: dict) -> None:
    _round_trips(load_tools([doc]))


def test_every_bfcl_question_toolset_round_trips() -> None:
    """Every single-turn question's function docs (Python, Java and JavaScript ones, live ones): BFCL's dialect
    (dict, float, tuple, any) and all, written as JSON Schema and read back."""
    seen = 0
    for category in bfcl.SINGLE_TURN:
        for record in bfcl.records(category):
            toolset = load_tools(record["function"])
            for shape, exported in _exports(toolset).items():
                again = load_tools(exported, kind=shape)
                assert tool_export(again, shape) == exported  # the export is a fixed point
                if not _has_tuple(record["function"]):  # (a tuple is written as the array it is: see below)
                    _same_tools(toolset, again)
            seen += len(toolset)
    assert seen > 5000


def _has_tuple(value) -> bool:
    if isinstance(value, dict):
        return value.get("type") == "tuple" or any(_has_tuple(v) for v in value.values())
    return isinstance(value, list) and any(_has_tuple(v) for v in value)


def _suite_schemas():
    for path in sorted(corpora.json_schema_suite().glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            yield f"{path.stem}: {group['description']}", group["schema"]


def test_every_json_schema_suite_schema_we_read_round_trips() -> None:
    """Booleans, $ref to $defs, to definitions, to the root, to anchors and $ids (their targets written at the
    pointers the loader resolved them to), every keyword the IR keeps."""
    read, keywords = 0, set()
    for name, raw in _suite_schemas():
        try:
            root, definitions, _ = read_schema(raw)
        except LoaderError:  # remote references, which the loader refuses
            continue
        exported = schema_to_json(root, definitions)
        keywords |= _keywords(exported)
        again, again_definitions, _ = read_schema(json.loads(json.dumps(exported)))
        assert again == root, name
        assert again_definitions == definitions, name
        read += 1
    assert read > 300
    # every keyword the IR keeps was written (and read back) by at least one schema of the suite
    assert {"$ref", "$defs", "uniqueItems", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "dependentRequired",
            "patternProperties", "propertyNames", "prefixItems", "contains", "minContains", "maxContains", "if",
            "then", "else", "not", "const", "enum", "oneOf", "allOf", "anyOf", "additionalProperties",
            "minProperties", "maxProperties", "format", "pattern", "default"} <= keywords


def _keywords(value) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keywords(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keywords(v) for v in value))
    return set()


@pytest.mark.parametrize("dialect, written", [
    ({"type": "dict", "properties": {"x": {"type": "float"}, "y": {"type": "any"}}}, {"x": "number", "y": None}),
    ({"type": "object", "properties": {"x": {"type": "string", "nullable": True}}}, {"x": ["string", "null"]}),
])
def test_a_dialect_is_written_as_json_schema_and_then_round_trips(dialect: dict, written: dict) -> None:
    toolset = load_tools({"name": "f", "parameters": dialect})
    parameters = toolset.to_openai()[0]["function"]["parameters"]
    assert parameters["type"] == "object"
    for name, type_ in written.items():
        assert parameters["properties"][name].get("type") == type_
    again = load_tools(toolset.to_openai())
    assert tool_export(again, "openai") == toolset.to_openai()


def test_a_bfcl_tuple_is_an_array_once_exported() -> None:
    """Divergence from the IR, by necessity: JSON Schema has no "tuple" type; the export writes an array (what
    the tuple's values are), so the reloaded tool lacks the dialect's mark but validates alike."""
    toolset = load_tools({"name": "f", "parameters": {"type": "dict", "properties": {"p": {"type": "tuple"}}}})
    exported = toolset.to_openai()
    assert exported[0]["function"]["parameters"]["properties"]["p"] == {"type": "array"}
    again = load_tools(exported)
    assert tool_export(again, "openai") == exported


def test_an_export_shares_nothing_with_the_tools() -> None:
    toolset = load_tools({"name": "f", "parameters": {"type": "object", "properties": {
        "tags": {"type": "array", "default": ["a"], "items": {"enum": [{"k": 1}, [2]]}}}}})
    before = copy.deepcopy(toolset.to_openai())
    exported = toolset.to_openai()
    exported[0]["function"]["parameters"]["properties"]["tags"]["default"].append("b")
    exported[0]["function"]["parameters"]["properties"]["tags"]["items"]["enum"][0]["k"] = 2
    assert toolset.to_openai() == before


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool shape"):
        tool_to_json(sample_toolset().tools[0], "gemini")
    assert set(SHAPES) == {"openai", "anthropic", "mcp"}


@settings(max_examples=80, deadline=None)
@given(data=st.data(), doc=callgen.tools(), shape=st.sampled_from(SHAPES))
def test_a_round_trip_keeps_the_verdicts(data: st.DataObject, doc: dict, shape: str) -> None:
    """Equal IR gives equal verdicts; checked on right, wrong and sloppy calls all the same."""
    from toolform_rules import validate_arguments

    ours = load_tools([doc])
    back = load_tools(_exports(ours)[shape])
    call = {"name": doc["name"], "arguments": data.draw(callgen.arguments(doc["parameters"]))}
    assert validate_arguments(call, back).to_dict() == validate_arguments(call, ours).to_dict()
