"""The loaders: every input shape reads to one IR, and every malformed input is a located LoaderError."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolform_rules import (Limits, LoaderError, Property, Schema, Tool, Toolset, load_tools, normalize_call,
                            validate_arguments)
from toolform_rules.schema.ir import ABSENT

# --- one tool, every shape ----------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city."},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
    },
    "required": ["city"],
}
BFCL_SCHEMA = {**SCHEMA, "type": "dict"}
NAME, DESCRIPTION = "get_forecast", "The weather for the coming days."

#: The IR the schema above must read to, written out by hand.
EXPECTED = Tool(
    name=NAME,
    description=DESCRIPTION,
    parameters=Schema(
        types=("object",),
        pointer="#",
        properties=(
            Property("city", Schema(types=("string",), pointer="#/properties/city", description="The city.")),
            Property("days", Schema(types=("integer",), pointer="#/properties/days", minimum=1, maximum=14)),
            Property("units", Schema(types=("string",), pointer="#/properties/units", enum=("metric", "imperial"),
                                     default="metric")),
        ),
        required=("city",),
    ),
)

BARE = {"name": NAME, "description": DESCRIPTION, "parameters": SCHEMA}
WRAPPED = {"type": "function", "function": BARE}
RESPONSES = {"type": "function", "name": NAME, "description": DESCRIPTION, "parameters": SCHEMA}
ANTHROPIC = {"name": NAME, "description": DESCRIPTION, "input_schema": SCHEMA}
MCP = {"name": NAME, "description": DESCRIPTION, "inputSchema": SCHEMA}
BFCL_FUNCTION = {"name": NAME, "description": DESCRIPTION, "parameters": BFCL_SCHEMA}
BFCL_RECORD = {"id": "simple_0", "question": [[{"role": "user", "content": "Weather?"}]], "function": [BFCL_FUNCTION]}

SHAPES: dict[str, tuple[Any, str]] = {  # shape -> (input, the JSON path the tool's source names)
    "openai wrapped list": ([WRAPPED], "$[0].function"),
    "openai wrapped single": (WRAPPED, "$.function"),
    "openai bare single": (BARE, "$"),
    "openai bare list": ([BARE], "$[0]"),
    "openai responses": (RESPONSES, "$"),
    "tools key": ({"model": "gpt", "tools": [WRAPPED]}, "$.tools[0].function"),
    "tools key, responses": ({"tools": [RESPONSES]}, "$.tools[0]"),
    "anthropic": ([ANTHROPIC], "$[0]"),
    "anthropic, tools key": ({"tools": [ANTHROPIC]}, "$.tools[0]"),
    "mcp": (MCP, "$"),
    "mcp list": ([MCP], "$[0]"),
    "mcp json-rpc result": ({"jsonrpc": "2.0", "id": 7, "result": {"tools": [MCP]}}, "$.result.tools[0]"),
    "bfcl record": (BFCL_RECORD, "$.function[0]"),
    "bfcl records": ([BFCL_RECORD], "$[0].function[0]"),
}


def _assert_is_expected(tools: Toolset) -> Tool:
    assert isinstance(tools, Toolset)
    assert tools.names() == [NAME]
    (tool,) = tools
    assert tool == EXPECTED
    assert tool.parameters == EXPECTED.parameters  # Tool equality covers this; said twice for clarity
    assert tool.description == DESCRIPTION
    assert dict(tool.definitions) == {}
    assert tools.warnings == ()
    return tool


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_reads_to_the_same_ir(shape):
    obj, where = SHAPES[shape]
    before = copy.deepcopy(obj)
    tools = load_tools(obj)
    tool = _assert_is_expected(tools)
    assert tool.source == f"<object> {where}"
    assert tools.source == "<object>"
    assert obj == before  # never mutated


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_reads_the_same_from_json_text_bytes_and_files(shape, tmp_path):
    obj, where = SHAPES[shape]
    text = json.dumps(obj)
    tool = _assert_is_expected(load_tools(text))
    assert tool.source == f"<string> {where}"
    _assert_is_expected(load_tools(text.encode("utf-8")))
    _assert_is_expected(load_tools("\n  " + text))  # leading whitespace: still JSON text
    file = tmp_path / "tools.json"
    file.write_text(text, encoding="utf-8")
    for given_path in (file, str(file)):
        tools = load_tools(given_path)
        assert _assert_is_expected(tools).source == f"{file} {where}"
        assert tools.source == str(file)


def test_a_bfcl_json_lines_file(tmp_path):
    # BFCL files: one record a line; the records repeat the functions they offer.
    other = {"name": "math.hypot", "parameters": {"type": "dict", "properties": {
        "x": {"type": "float"}, "y": {"type": "float"}}, "required": ["x", "y"]}}
    lines = [
        {"id": "simple_0", "function": [BFCL_FUNCTION]},
        {"id": "simple_1", "function": [BFCL_FUNCTION, other]},
    ]
    file = tmp_path / "BFCL_v3_simple.json"
    file.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    tools = load_tools(file)
    assert tools.names() == [NAME, "math.hypot"]
    assert tools.get(NAME) == EXPECTED
    assert tools.get(NAME).source == f"{file} $[0].function[0]"  # the first definition is the one kept
    assert tools.get("math.hypot").source == f"{file} $[1].function[1]"
    assert tools.get("math.hypot").parameters.property("x").types == ("number",)
    # CRLF line ends and a U+2028 inside a string (legal in JSON, a line break to str.splitlines)
    odd = dict(BFCL_FUNCTION, description="one\u2028two")
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_text(json.dumps({"function": [odd]}, ensure_ascii=False) + "\r\n"
                    + json.dumps({"function": [odd]}, ensure_ascii=False) + "\r\n", encoding="utf-8")
    assert load_tools(crlf).get(NAME).description == "one\u2028two"


def test_a_toolset_or_a_tool_is_returned_as_it_is():
    tools = load_tools([BARE])
    assert load_tools(tools) is tools
    assert load_tools(EXPECTED).tools == (EXPECTED,)


# --- kind= --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, obj", [
    ("openai", [WRAPPED]), ("openai", [BARE]), ("openai", RESPONSES), ("openai", [BFCL_FUNCTION]),
    ("anthropic", [ANTHROPIC]), ("mcp", [MCP]), ("mcp", {"result": {"tools": [MCP]}}),
    ("bfcl", BFCL_RECORD), ("bfcl", [BARE]), ("bfcl", [WRAPPED]),
])
def test_kind_can_be_forced(kind, obj):
    _assert_is_expected(load_tools(obj, kind=kind))


@pytest.mark.parametrize("kind, obj, path, found", [
    ("anthropic", [BARE], "$[0].parameters", "parameters"),
    ("anthropic", [WRAPPED], "$[0].function.parameters", "parameters"),
    ("mcp", [ANTHROPIC], "$[0].input_schema", "input_schema"),
    ("openai", [MCP], "$[0].inputSchema", "inputSchema"),
    ("bfcl", [ANTHROPIC], "$[0].input_schema", "input_schema"),
])
def test_a_forced_kind_refuses_another_shape(kind, obj, path, found):
    with pytest.raises(LoaderError) as info:
        load_tools(obj, kind=kind)
    err = info.value
    assert (err.source, err.tool, err.path) == ("<object>", NAME, path)
    assert f"kind {kind!r} reads the schema from" in err.message and repr(found) in err.message
    assert str(err).startswith(f"<object>: tool {NAME!r} at {path}: ")


@pytest.mark.parametrize("kind", ["bogus", "OpenAI", "", None])
def test_an_unknown_kind_is_refused(kind):
    with pytest.raises(LoaderError) as info:
        load_tools([BARE], kind=kind)
    assert info.value.source == "<arguments>"
    assert "unknown kind" in str(info.value) and "auto, openai, anthropic, mcp, bfcl" in str(info.value)


# --- reading schemas ----------------------------------------------------------------------------

def _one(parameters: dict, **options: Any) -> Tool:
    (tool,) = load_tools([{"name": "f", "parameters": parameters}], **options)
    return tool


def _validate(tool: Tool, arguments: dict, profile: str = "jsonschema"):
    return validate_arguments({"name": tool.name, "arguments": arguments}, Toolset([tool]), profile=profile)


ADDRESS = {"type": "object", "properties": {"zip": {"type": "string"}}, "required": ["zip"]}


@pytest.mark.parametrize("table", ["$defs", "definitions"])
def test_ref_into_defs_or_definitions(table):
    tool = _one({"type": "object", "properties": {"home": {"$ref": f"#/{table}/Address"}},
                 table: {"Address": ADDRESS}})
    home = tool.parameters.property("home")
    assert home.ref == f"#/{table}/Address"
    assert home.pointer == "#/properties/home"
    target = tool.resolve(home.ref)
    assert target.types == ("object",) and target.required == ("zip",)
    assert target.property("zip").types == ("string",)
    assert target.pointer == f"#/{table}/Address"
    assert set(tool.definitions) == {f"#/{table}/Address"}
    assert _validate(tool, {"home": {"zip": "80202"}}).ok
    report = _validate(tool, {"home": {"zip": 80202}})
    assert report.type_errors == ["home.zip: expected string, got int"]


def test_refs_to_one_target_share_one_definition_and_pointers_are_escaped():
    tool = _one({"type": "object", "properties": {
        "a": {"$ref": "#/$defs/a~1b"}, "b": {"$ref": "#/$defs/a%7E1b"}, "c": {"$ref": "#/$defs/t~0"}},
        "$defs": {"a/b": {"type": "integer"}, "t~": {"type": "boolean"}}})
    assert tool.parameters.property("a").ref == tool.parameters.property("b").ref == "#/$defs/a~1b"
    assert set(tool.definitions) == {"#/$defs/a~1b", "#/$defs/t~0"}
    assert tool.resolve("#/$defs/t~0").types == ("boolean",)


TREE = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/node"}},
    "required": ["tree"],
    "$defs": {"node": {
        "type": "object",
        "properties": {"label": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["label"],
        "additionalProperties": False,
    }},
}


def _tree(depth: int, leaf: Any = "leaf") -> dict:
    node: dict = {"label": leaf}
    for i in range(depth):
        node = {"label": f"level {i}", "children": [node]}
    return node


@pytest.mark.parametrize("profile", ["jsonschema", "sdk", "study"])
def test_a_recursive_ref_loads_and_validates_deep_finite_values(profile):
    tool = _one(TREE)
    node = tool.resolve("#/$defs/node")
    assert node.property("children").items.ref == "#/$defs/node"  # the cycle is a reference, not a loop
    assert set(tool.definitions) == {"#/$defs/node"}
    assert _validate(tool, {"tree": _tree(20)}, profile).ok
    report = _validate(tool, {"tree": _tree(20, leaf=5)}, profile)
    assert not report.ok
    assert report.type_errors == ["tree" + ".children[0]" * 20 + ".label: expected string, got int"]


def test_a_ref_to_the_root_is_a_cycle_too():
    tool = _one({"type": "object", "properties": {"next": {"$ref": "#"}, "n": {"type": "integer"}}})
    assert tool.resolve("#").property("next").ref == "#"
    value: dict = {"n": 0}
    for i in range(1, 15):
        value = {"n": i, "next": value}
    assert _validate(tool, value).ok
    value["next"]["next"]["n"] = "x"
    assert _validate(tool, value).type_errors == ["next.next.n: expected integer, got str"]


def test_unions():
    tool = _one({"type": "object", "properties": {
        "id": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
        "shape": {"oneOf": [{"$ref": "#/$defs/circle"}, {"type": "null"}]},
        "both": {"allOf": [{"minimum": 0}, {"maximum": 9}]},
    }, "$defs": {"circle": {"type": "object", "properties": {"r": {"type": "number"}}}}})
    id_ = tool.parameters.property("id")
    assert [s.types for s in id_.any_of] == [("string",), ("integer",)]
    assert id_.any_of[1].minimum == 0 and id_.any_of[1].pointer == "#/properties/id/anyOf/1"
    shape = tool.parameters.property("shape")
    assert shape.one_of[0].ref == "#/$defs/circle" and shape.one_of[1].types == ("null",)
    assert [s.minimum for s in tool.parameters.property("both").all_of] == [0, None]
    assert _validate(tool, {"id": "x", "shape": None, "both": 3}).ok
    assert not _validate(tool, {"id": -1}).ok


@pytest.mark.parametrize("schema, types", [
    ({"type": ["string", "null"]}, ("string", "null")),
    ({"type": "string", "nullable": True}, ("string", "null")),
    ({"type": ["string", "null"], "nullable": True}, ("string", "null")),
    ({"type": "integer", "nullable": False}, ("integer",)),
    ({"type": ["integer", "string", "integer"]}, ("integer", "string")),
    ({"type": ["float", "null"]}, ("number", "null")),
    ({"type": ["string", "any"]}, ()),
    ({}, ()),
])
def test_nullable_and_type_lists(schema, types):
    tool = _one({"type": "object", "properties": {"x": schema}})
    assert tool.parameters.property("x").types == types
    if "null" in types:
        assert _validate(tool, {"x": None}).ok


def test_enums():
    tool = _one({"type": "object", "properties": {
        "colour": {"type": "string", "enum": ["red", "green"]},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "mixed": {"enum": ["a", 1, None, [1], {"k": "v"}]},
        "fixed": {"const": {"k": [1]}},
    }})
    props = tool.parameters
    assert props.property("colour").enum == ("red", "green")
    assert props.property("level").enum == (1, 2, 3) and props.property("level").types == ("integer",)
    assert props.property("mixed").enum == ("a", 1, None, [1], {"k": "v"})
    assert props.property("fixed").const == {"k": [1]}
    assert props.property("colour").const is ABSENT
    assert _validate(tool, {"colour": "red", "level": 2, "mixed": [1], "fixed": {"k": [1]}}).ok
    assert _validate(tool, {"colour": "blue", "level": 4}).enum_errors


def test_nested_objects_and_arrays_of_objects():
    tool = _one({"type": "object", "properties": {
        "order": {"type": "object", "properties": {
            "customer": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}},
                         "required": ["email"]},
            "lines": {"type": "array", "minItems": 1, "items": {
                "type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
                "required": ["sku", "qty"]}},
        }, "required": ["customer", "lines"]},
    }, "required": ["order"]})
    order = tool.parameters.property("order")
    assert order.required == ("customer", "lines")
    assert order.property("customer").property("email").format == "email"
    lines = order.property("lines")
    assert lines.types == ("array",) and lines.min_items == 1
    assert lines.items.required == ("sku", "qty")
    assert lines.items.property("qty").minimum == 1
    assert lines.items.property("qty").pointer == "#/properties/order/properties/lines/items/properties/qty"
    good = {"order": {"customer": {"email": "a@b.c"}, "lines": [{"sku": "x", "qty": 2}]}}
    assert _validate(tool, good).ok
    bad = {"order": {"customer": {"email": "a@b.c"}, "lines": [{"sku": "x", "qty": 2}, {"sku": "y"}]}}
    assert _validate(tool, bad).missing_required == ["order.lines[1].qty"]


def test_bfcl_type_names():
    tool = _one({"type": "dict", "properties": {
        "config": {"type": "dict", "properties": {"depth": {"type": "integer"}}},
        "ratio": {"type": "float"},
        "point": {"type": "tuple", "items": {"type": "float"}},
        "anything": {"type": "any"},
    }})
    params = tool.parameters
    assert params.types == ("object",)
    assert params.property("config").types == ("object",)
    assert params.property("ratio").types == ("number",)
    point = params.property("point")
    assert point.types == ("array",) and point.tuple_like and point.items.types == ("number",)
    assert params.property("anything").types == ()
    assert not params.property("ratio").tuple_like


def test_java_and_javascript_type_names_read_as_any_with_a_warning():
    tools = load_tools({"function": [{"name": "Cache.put", "parameters": {"type": "dict", "properties": {
        "key": {"type": "String"}, "map": {"type": "HashMap"}, "blank": {"type": ""}}}}]})
    params = tools.get("Cache.put").parameters
    assert [params.property(n).types for n in ("key", "map", "blank")] == [(), (), ()]
    assert tools.warnings == (
        "tool 'Cache.put' at $.function[0].parameters.properties.key.type: the source-language type 'String', "
        "read as any value",
        "tool 'Cache.put' at $.function[0].parameters.properties.map.type: the source-language type 'HashMap', "
        "read as any value",
        "tool 'Cache.put' at $.function[0].parameters.properties.blank.type: an empty type, read as any value",
    )


def test_draft_3_required_true_on_a_property():
    tool = _one({"type": "object", "required": ["b"], "properties": {
        "a": {"type": "string", "required": True},
        "b": {"type": "string"},
        "c": {"type": "string", "required": False},
        "d": {"type": "object", "required": True, "properties": {"e": {"type": "integer", "required": True}}},
    }})
    assert tool.parameters.required == ("b", "a", "d")
    assert tool.parameters.property("d").required == ("e",)
    assert tool.parameters.property("a").required == ()
    assert _validate(tool, {"b": "x"}).missing_required == ["a", "d"]


def test_items_as_a_list_is_read_as_prefix_items():
    tool = _one({"type": "object", "properties": {"pair": {
        "type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}}})
    pair = tool.parameters.property("pair")
    assert [s.types for s in pair.prefix_items] == [("string",), ("integer",)]
    assert pair.items == Schema(boolean=False, pointer="#/properties/pair/additionalItems")


def test_no_parameters_is_an_empty_object():
    (tool,) = load_tools([{"name": "ping"}, ])
    assert tool.parameters.types == ("object",) and tool.parameters.properties == ()
    assert _one({"properties": {"x": {"type": "string"}}}).parameters.types == ("object",)  # no type: an object


# --- names --------------------------------------------------------------------------------------

LEGAL = {"name": "legal_draft_v3", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}


@pytest.mark.parametrize("spelling", ["legal_draft_v3", "LegalDraftV3", "legal-draft-v3", "legal.draft.v3",
                                      "LEGAL_DRAFT_V3", "legalDraftV3"])
def test_one_tool_under_every_naming_convention(spelling):
    tools = load_tools([LEGAL])
    assert tools.get(spelling) is tools.tools[0]
    assert spelling in tools
    assert load_tools([dict(LEGAL, name=spelling)]).get("legal_draft_v3").name == spelling


def test_names_that_do_not_resolve():
    tools = load_tools([LEGAL])
    for name in ("legal_draft", "legal_draft_v4", "", "---", None, 3, ["legal_draft_v3"]):
        assert tools.get(name) is None


@pytest.mark.parametrize("first, second", [
    ("legal_draft_v3", "LegalDraftV3"), ("legal_draft_v3", "legal-draft-v3"), ("legal.draft.v3", "legal_draft_v3"),
])
def test_two_different_tools_with_one_canonical_name_are_refused(first, second):
    other = {"name": second, "parameters": {"type": "object", "properties": {"n": {"type": "string"}}}}
    with pytest.raises(LoaderError) as info:
        load_tools([dict(LEGAL, name=first), other])
    err = info.value
    assert err.source == "<object>" and err.tool == second
    assert repr(first) in err.message and repr(second) in err.message
    assert "share the canonical name 'legaldraftv3'" in err.message


def test_two_different_tools_with_one_name_are_refused_naming_both_places():
    other = {"name": "legal_draft_v3", "description": "another", "parameters": LEGAL["parameters"]}
    with pytest.raises(LoaderError) as info:
        load_tools({"tools": [LEGAL, {"name": "x"}, other]})
    assert info.value.tool == "legal_draft_v3"
    assert "(at $.tools[0] and $.tools[2])" in info.value.message


def test_tools_whose_refs_lead_to_different_schemas_are_different_tools():
    def tool(target_type: str) -> dict:
        return {"name": "f", "parameters": {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}},
                                            "$defs": {"X": {"type": target_type}}}}

    assert len(load_tools([tool("string"), tool("string")])) == 1
    with pytest.raises(LoaderError, match=r"two different tools are named 'f' \(at \$\[0\] and \$\[1\]\)"):
        load_tools([tool("string"), tool("integer")])


def test_the_identical_tool_repeated_is_kept_once():
    tools = load_tools([BFCL_RECORD, BFCL_RECORD, {"function": [BFCL_FUNCTION, dict(LEGAL)]}])
    assert tools.names() == [NAME, "legal_draft_v3"]
    assert tools.get(NAME).source == "<object> $[0].function[0]"
    # the same tool in another shape is the same tool
    assert load_tools({"tools": [WRAPPED, ANTHROPIC, MCP, RESPONSES, BFCL_FUNCTION]}).names() == [NAME]


# --- errors -------------------------------------------------------------------------------------

def _f(**properties: Any) -> list[dict]:
    """A one-tool list whose parameters hold ``properties``."""
    return [{"name": "f", "parameters": {"type": "object", "properties": properties}}]


X = "$[0].parameters.properties.x"
DEEP = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {
    "c": {"type": "string"}}}}}}}

MALFORMED: list[tuple[str, Any, dict, str | None, str | None, str]] = [
    # (case, input, load options, tool, path, message fragment)
    ("missing name", [{"parameters": {}}], {}, None, "$[0].name", "a tool needs a non-empty string 'name'"),
    ("blank name", [{"name": "  ", "parameters": {}}], {}, None, "$[0].name", "non-empty string 'name'"),
    ("name is a number", [{"name": 5, "parameters": {}}], {}, None, "$[0].name", "got number 5"),
    ("name is a list", [{"name": ["f"], "parameters": {}}], {}, None, "$[0].name", "got array ['f']"),
    ("wrapped, missing name", [{"type": "function", "function": {"parameters": {}}}], {}, None,
     "$[0].function.name", "non-empty string 'name'"),
    ("description not a string", [{"name": "f", "description": 3}], {}, "f", "$[0].description",
     "description must be a string, got number"),
    ("parameters a string", [{"name": "f", "parameters": "city"}], {}, "f", "$[0].parameters",
     "parameters must be a JSON object, got string"),
    ("parameters a list", [{"name": "f", "parameters": []}], {}, "f", "$[0].parameters",
     "parameters must be a JSON object, got array"),
    ("input_schema a number", [{"name": "f", "input_schema": 1}], {}, "f", "$[0].input_schema",
     "input_schema must be a JSON object, got number"),
    ("parameters not an object type", [{"name": "f", "parameters": {"type": "array"}}], {}, "f",
     "$[0].parameters.type", "a tool's arguments are an object, but parameters.type says array"),
    ("properties a list", [{"name": "f", "parameters": {"type": "object", "properties": ["x"]}}], {}, "f",
     "$[0].parameters.properties", "properties must be an object, got array"),
    ("nested properties a string", _f(x={"type": "object", "properties": "y"}), {}, "f", f"{X}.properties",
     "properties must be an object, got string"),
    ("property names not strings", [{"name": "f", "parameters": {"properties": {1: {}}}}], {}, "f",
     "$[0].parameters.properties", "property names must be strings, got number 1"),
    ("required a string", [{"name": "f", "parameters": {"type": "object", "required": "x"}}], {}, "f",
     "$[0].parameters.required", "required must be an array of property names"),
    ("required holds a number", [{"name": "f", "parameters": {"type": "object", "required": ["x", 1]}}], {}, "f",
     "$[0].parameters.required", "required must be an array of property names"),
    ("minimum a string", _f(x={"type": "integer", "minimum": "0"}), {}, "f", f"{X}.minimum",
     "minimum must be a finite number, got string"),
    ("minimum a boolean", _f(x={"type": "integer", "minimum": True}), {}, "f", f"{X}.minimum",
     "minimum must be a finite number, got boolean"),
    ("minimum infinite", _f(x={"type": "number", "minimum": float("inf")}), {}, "f", f"{X}.minimum",
     "minimum must be a finite number"),
    ("maximum NaN", _f(x={"type": "number", "maximum": float("nan")}), {}, "f", f"{X}.maximum",
     "maximum must be a finite number"),
    ("exclusiveMinimum a list", _f(x={"exclusiveMinimum": [0]}), {}, "f", f"{X}.exclusiveMinimum",
     "exclusiveMinimum must be a finite number, got array"),
    ("multipleOf zero", _f(x={"multipleOf": 0}), {}, "f", f"{X}.multipleOf", "multipleOf must be greater than 0"),
    ("negative minLength", _f(x={"type": "string", "minLength": -1}), {}, "f", f"{X}.minLength",
     "minLength must be a non-negative integer, got -1"),
    ("fractional maxItems", _f(x={"type": "array", "maxItems": 1.5}), {}, "f", f"{X}.maxItems",
     "maxItems must be a non-negative integer, got 1.5"),
    ("boolean minProperties", _f(x={"minProperties": True}), {}, "f", f"{X}.minProperties",
     "minProperties must be a non-negative integer, got True"),
    ("unknown type name", _f(x={"type": "decimal"}), {}, "f", f"{X}.type", "unknown type 'decimal'"),
    ("type not a string", _f(x={"type": ["string", 5]}), {}, "f", f"{X}.type",
     "type must be a string or an array of strings, got number"),
    ("schema not an object", _f(x="string"), {}, "f", X, "a schema must be a JSON object or a boolean, got string"),
    ("pattern not a string", _f(x={"pattern": 5}), {}, "f", f"{X}.pattern", "pattern must be a string, got number"),
    ("uniqueItems not a boolean", _f(x={"uniqueItems": "yes"}), {}, "f", f"{X}.uniqueItems",
     "uniqueItems must be true or false"),
    ("anyOf not a list", _f(x={"anyOf": {"type": "string"}}), {}, "f", f"{X}.anyOf",
     "anyOf must be an array of schemas, got object"),
    ("bad schema inside oneOf", _f(x={"oneOf": [{"type": "string"}, {"type": "strin"}]}), {}, "f",
     f"{X}.oneOf[1].type", "unknown type 'strin'"),
    ("bad schema inside items", _f(x={"type": "array", "items": {"minimum": "1"}}), {}, "f", f"{X}.items.minimum",
     "minimum must be a finite number"),
    ("ref to nothing", _f(x={"$ref": "#/$defs/missing"}), {}, "f", "$[0].parameters",
     "$ref '#/$defs/missing' points to nothing in this tool's schema"),
    ("ref through a missing key", _f(x={"$ref": "#/properties/y/items"}), {}, "f", "$[0].parameters",
     "$ref '#/properties/y/items' points to nothing"),
    ("ref to a missing anchor", _f(x={"$ref": "#nowhere"}), {}, "f", f"{X}.$ref",
     "names the anchor 'nowhere', which no schema here declares"),
    ("remote ref", _f(x={"$ref": "https://example.com/schemas/address.json"}), {}, "f", f"{X}.$ref",
     "only local references (to this schema or a schema inside it) are supported, "
     "got 'https://example.com/schemas/address.json'"),
    ("relative file ref", _f(x={"$ref": "address.json#/$defs/a"}), {}, "f", f"{X}.$ref",
     "only local references"),
    ("ref not a string", _f(x={"$ref": 5}), {}, "f", f"{X}.$ref", "$ref must be a string, got number"),
    ("bad schema behind a ref", [{"name": "f", "parameters": {
        "properties": {"x": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "object", "properties": {
            "y": {"minimum": "0"}}}}}}], {}, "f", "$[0].parameters.$defs.X.properties.y.minimum",
     "minimum must be a finite number, got string"),
    ("bad schema behind a ref into a list", [{"name": "f", "parameters": {
        "properties": {"x": {"$ref": "#/$defs/X/anyOf/1"}}, "$defs": {"X": {"anyOf": [{}, {"type": "nope"}]}}}}],
     {}, "f", "$[0].parameters.$defs.X.anyOf[1].type", "unknown type 'nope'"),
    ("enum a string", _f(x={"enum": "a b"}), {}, "f", f"{X}.enum", "enum must be an array, got string"),
    ("enum an object", _f(x={"enum": {"a": 1}}), {}, "f", f"{X}.enum", "enum must be an array, got object"),
    ("tool a number", [{"name": "g"}, 5], {}, None, "$[1]", "a tool definition must be a JSON object, got number"),
    ("tool a string", {"tools": ["get_weather"]}, {}, None, "$.tools[0]",
     "a tool definition must be a JSON object, got string"),
    ("tool null in a BFCL record", {"function": [None]}, {}, None, "$.function[0]",
     "a tool definition must be a JSON object, got null"),
    ("tools not a list", {"tools": "get_weather"}, {}, None, "$.tools", "'tools' must be an array, got string"),
    ("json-rpc tools not a list", {"result": {"tools": {}}}, {}, None, "$.result.tools",
     "'tools' must be an array, got object"),
    ("not tools at all", 42, {}, None, "$", "expected a tool, a list of tools or an object with 'tools', got number"),
    ("a tuple is not JSON", (BARE,), {}, None, "$", "got tuple"),
    ("nested too deep", [{"name": "f", "parameters": DEEP}], {"limits": Limits(max_depth=2)}, "f",
     "$[0].parameters.properties.a.properties.b.properties.c", "the schema is nested deeper than 2 levels"),
    ("nested too deep behind a ref", [{"name": "f", "parameters": {"properties": {"x": {"$ref": "#/$defs/D"}},
                                                                   "$defs": {"D": DEEP}}}],
     {"limits": Limits(max_depth=2)}, "f", "$[0].parameters.$defs.D.properties.a.properties.b.properties.c",
     "nested deeper than 2 levels"),
    ("too many tools", [BARE, ANTHROPIC, LEGAL], {"limits": Limits(max_tools=2)}, None, None,
     "3 tools, more than the 2 allowed"),
]


@pytest.mark.parametrize("case, obj, options, tool, path, fragment", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_definitions_are_located_loader_errors(case, obj, options, tool, path, fragment):
    before = copy.deepcopy(obj)
    with pytest.raises(LoaderError) as info:
        load_tools(obj, **options)
    err = info.value
    assert (err.source, err.tool, err.path) == ("<object>", tool, path)
    assert fragment in err.message
    assert err.field == path
    text = str(err)
    assert text.startswith("<object>")
    if tool is not None:
        assert f"tool {tool!r}" in text
    if path is not None:
        assert f" at {path}: " in text
    assert text.endswith(err.message)
    assert repr(obj) == repr(before)  # not mutated, even on failure


def test_every_malformed_definition_is_located_in_a_file_too(tmp_path):
    for case, obj, options, tool, path, fragment in MALFORMED:
        text = json.dumps(obj)
        if repr(json.loads(text)) != repr(obj):  # int keys and tuples: JSON cannot hold them
            continue
        file = tmp_path / "tools.json"
        file.write_text(text, encoding="utf-8")
        with pytest.raises(LoaderError) as info:
            load_tools(file, **options)
        err = info.value
        assert (err.source, err.tool, err.path) == (str(file), tool, path), case
        assert str(err).startswith(f"{file}: "), case
        if path is not None:
            assert f"at {path}: " in str(err), case


def test_invalid_json_text_names_line_and_column():
    with pytest.raises(LoaderError) as info:
        load_tools('{"name": "get_weather",\n  "parameters": {oops}}')
    err = info.value
    assert (err.source, err.line, err.column, err.tool, err.path) == ("<string>", 2, 18, None, None)
    assert str(err) == "<string>:2:18: not valid JSON: Expecting property name enclosed in double quotes"


def test_invalid_json_in_a_file_names_the_file_line_and_column(tmp_path):
    file = tmp_path / "tools.json"
    file.write_text('[\n  {"name": "f",\n   "parameters": {"type": "object",}}\n]\n', encoding="utf-8")
    with pytest.raises(LoaderError) as info:
        load_tools(file)
    err = info.value
    assert (err.source, err.line, err.column) == (str(file), 3, 36)
    assert str(err).startswith(f"{file}:3:36: not valid JSON: ")


def test_invalid_json_lines_name_the_line(tmp_path):
    file = tmp_path / "records.jsonl"
    file.write_text(json.dumps(BFCL_RECORD) + "\n" + json.dumps(BFCL_RECORD) + "\n{\"id\": 3,}\n", encoding="utf-8")
    with pytest.raises(LoaderError) as info:
        load_tools(file)
    err = info.value
    assert (err.source, err.line, err.column) == (str(file), 3, 10)
    assert str(err) == f"{file}:3:10: not valid JSON Lines: Expecting property name enclosed in double quotes"


@pytest.mark.parametrize("content", ["", "   \n\t\n"])
def test_an_empty_file(tmp_path, content):
    file = tmp_path / "empty.json"
    file.write_text(content, encoding="utf-8")
    with pytest.raises(LoaderError) as info:
        load_tools(file)
    assert info.value.source == str(file)
    assert str(info.value) == f"{file}: the file is empty: it holds no JSON"


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_text(text):
    with pytest.raises(LoaderError) as info:
        load_tools(text)
    assert str(info.value) == "<string>: the text is empty: it holds no JSON"


def test_a_missing_file_and_a_directory(tmp_path):
    for where in (tmp_path / "missing.json", str(tmp_path / "missing.json"), tmp_path):
        with pytest.raises(LoaderError) as info:
            load_tools(where)
        assert info.value.source == str(where)
        why = "is a directory, not a file" if where == tmp_path else "no such file (and not JSON text: JSON starts with '{' or '[')"
        assert str(info.value) == f"{where}: {why}"


@pytest.mark.parametrize("name", ["x" * 5000, "nul\x00byte.json"])
def test_a_path_the_system_cannot_open(name):
    with pytest.raises(LoaderError) as info:
        load_tools(name)
    assert info.value.source == name


def test_a_file_that_is_not_utf8(tmp_path):
    file = tmp_path / "latin1.json"
    file.write_bytes(json.dumps([BARE]).replace("days", "d\u00e4ys").encode("latin-1"))
    with pytest.raises(LoaderError, match="the file is not UTF-8 text"):
        load_tools(file)
    with pytest.raises(LoaderError) as info:
        load_tools(b"[\xff]")
    assert str(info.value) == "<bytes>: the bytes are not UTF-8 text (byte 1)"


def test_a_file_larger_than_max_input_bytes(tmp_path):
    file = tmp_path / "big.json"
    text = json.dumps([BARE])
    file.write_text(text, encoding="utf-8")
    size = file.stat().st_size
    _assert_is_expected(load_tools(file, limits=Limits(max_input_bytes=size)))
    with pytest.raises(LoaderError) as info:
        load_tools(file, limits=Limits(max_input_bytes=size - 1))
    assert info.value.source == str(file)
    assert str(info.value) == f"{file}: the file is {size} bytes, more than the {size - 1} allowed"
    with pytest.raises(LoaderError, match=f"the text is longer than the {size - 1} allowed"):
        load_tools(text, limits=Limits(max_input_bytes=size - 1))


def test_more_tools_than_max_tools_from_a_file(tmp_path):
    file = tmp_path / "tools.json"
    file.write_text(json.dumps([BARE, LEGAL]), encoding="utf-8")
    assert len(load_tools(file, limits=Limits(max_tools=2))) == 2
    with pytest.raises(LoaderError) as info:
        load_tools(file, limits=Limits(max_tools=1))
    assert str(info.value) == f"{file}: 2 tools, more than the 1 allowed"


def test_json_nested_past_what_python_parses():
    with pytest.raises(LoaderError) as info:
        load_tools("[" * 200_000 + "]" * 200_000)
    assert str(info.value) == "<string>: the JSON is nested too deeply"


def test_an_integer_too_long_for_python():
    text = '[{"name": "f", "parameters": {"properties": {"x": {"maximum": ' + "9" * 5000 + "}}}}]"
    with pytest.raises(LoaderError) as info:
        load_tools(text)
    assert info.value.source == "<string>" and "not valid JSON" in info.value.message


def test_huge_but_finite_numbers_are_read():
    tool = _one({"type": "object", "properties": {
        "x": {"type": "integer", "maximum": 10 ** 400, "minimum": -10 ** 400}}})
    assert tool.parameters.property("x").maximum == 10 ** 400


def test_a_schema_deeper_than_the_python_stack_with_raised_limits():
    schema: dict = {"type": "object"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(LoaderError) as info:
        load_tools([{"name": "f", "parameters": schema}], limits=Limits(max_depth=1_000_000))
    assert (info.value.tool, info.value.path) == ("f", "$[0].parameters")
    with pytest.raises(LoaderError, match="nested deeper than 64 levels"):
        load_tools([{"name": "f", "parameters": schema}])


# --- never mutated, never a stray exception -----------------------------------------------------

@pytest.mark.parametrize("shape", list(SHAPES))
def test_loading_validating_and_normalising_never_mutate_the_input(shape):
    obj, _ = SHAPES[shape]
    obj = copy.deepcopy(obj)
    before = copy.deepcopy(obj)
    tools = load_tools(obj)
    for profile in ("sdk", "study", "jsonschema"):
        validate_arguments({"name": NAME, "arguments": {"city": " Paris ", "days": "3"}}, tools, profile=profile)
    for strictness in ("normalized", "strict"):
        normalize_call({"name": NAME, "arguments": {"city": " Paris ", "days": "3", "units": "metric"}},
                       tools.get(NAME), strictness)
    assert obj == before


def test_the_ir_shares_no_mutable_value_with_the_input():
    params = {"type": "object", "properties": {
        "tags": {"type": "array", "default": ["a"], "enum": [["a"], ["b"]]},
        "opts": {"type": "object", "const": {"k": [1]}},
    }}
    (tool,) = load_tools([{"name": "f", "parameters": params}])
    params["properties"]["tags"]["default"].append("mutated later")
    params["properties"]["tags"]["enum"][0].append("mutated later")
    params["properties"]["opts"]["const"]["k"].append("mutated later")
    tags = tool.parameters.property("tags")
    assert tags.default == ["a"] and tags.enum == (["a"], ["b"])
    assert tool.parameters.property("opts").const == {"k": [1]}


_KEYWORDS = ["type", "properties", "required", "items", "prefixItems", "additionalProperties", "anyOf", "oneOf",
             "allOf", "not", "enum", "const", "default", "minimum", "maximum", "exclusiveMinimum", "multipleOf",
             "minLength", "maxItems", "pattern", "format", "nullable", "$ref", "$defs", "definitions", "$id",
             "$anchor", "patternProperties", "dependentRequired", "description", "title", "if", "then", "else",
             "contains", "propertyNames", "uniqueItems", "additionalItems", "name", "parameters", "input_schema",
             "inputSchema", "function", "tools", "result"]
_TYPE_NAMES = ["string", "integer", "number", "object", "array", "boolean", "null", "dict", "float", "tuple",
               "any", "String", "HashMap", "decimal", ""]
_REFS = ["#", "#/properties/a", "#/$defs/a", "#/$defs/a/properties/a", "#/definitions/a", "#/items/0", "#a",
         "#/$defs/missing", "a.json", "http://example.com/s.json#/$defs/a", "urn:x#/$defs/a", "#/$defs/%61",
         "#/properties/a/anyOf/0"]

_EDGES = [0, -1, 1.5, 10 ** 400, -(10 ** 400), float("inf"), float("nan"), "", " ", "0"]
_scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
            | st.sampled_from(_TYPE_NAMES) | st.sampled_from(_REFS) | st.sampled_from(_EDGES))
_key = st.sampled_from(_KEYWORDS) | st.sampled_from(["a", "b"]) | st.text(max_size=4)
json_ish = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_key, children, max_size=5),
    max_leaves=25,
)
# schema-shaped values: JSON Schema keywords holding schemas, maps of schemas, lists of schemas or scalars
schema_like = st.recursive(
    st.booleans() | st.fixed_dictionaries({}, optional={"type": st.sampled_from(_TYPE_NAMES)}),
    lambda children: st.dictionaries(
        st.sampled_from(_KEYWORDS[:36]),
        children | _scalars | st.lists(children | _scalars, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "a/b", "~"]) | st.text(max_size=3), children, max_size=3)
        | st.lists(st.sampled_from(_TYPE_NAMES), max_size=3),
        max_size=6),
    max_leaves=30,
)
_names = st.sampled_from(["f", "F", "g", "legal_draft_v3", "LegalDraftV3"])
tool_like = st.fixed_dictionaries(
    {"name": st.one_of(*[_names] * 7, json_ish)},
    optional={"parameters": st.one_of(*[schema_like] * 7, json_ish), "description": st.text(max_size=5)},
)
tool_like = tool_like | st.fixed_dictionaries(
    {"name": _names, "type": st.just("function")},
    optional={"parameters": schema_like, "input_schema": schema_like, "inputSchema": schema_like,
              "description": json_ish},
)
wrapped_like = st.fixed_dictionaries({"type": st.just("function"), "function": tool_like})
tools_like = st.lists(st.one_of(*[tool_like] * 4, wrapped_like, json_ish), max_size=3)
inputs = (json_ish | tool_like | tools_like | st.fixed_dictionaries({"tools": tools_like})
          | st.fixed_dictionaries({"function": tools_like})
          | st.fixed_dictionaries({"result": st.fixed_dictionaries({"tools": tools_like})}))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=inputs, kind=st.sampled_from(["auto", "auto", "openai", "anthropic", "mcp", "bfcl"]))
# found before: an OverflowError, a KeyError, an AttributeError, an OSError, a RecursionError
@example(obj=[{"name": "f", "parameters": {"properties": {"x": {"minimum": 10 ** 400}}}}], kind="auto")
@example(obj=[{"name": "f", "parameters": {"properties": {1: {"required": True}}}}], kind="auto")
@example(obj=[{"name": "f", "parameters": {"patternProperties": {None: {}}}}], kind="auto")
@example(obj={"name": "f", "parameters": {"$ref": "#/$defs/a", "$defs": {"a": {"items": {"$ref": "#"}}}}},
         kind="openai")
@example(obj=[{"type": "function", "function": {"name": "f", "input_schema": {}}}], kind="anthropic")
@example(obj=b"\xff", kind="auto")
@example(obj="", kind="auto")
def test_any_input_gives_a_toolset_or_a_loader_error_and_is_never_mutated(obj, kind):
    before = copy.deepcopy(obj)
    if isinstance(obj, str) and not obj.lstrip().startswith(("{", "[")):
        obj = "{" + obj  # a bare string would be read as a file name: make it (bad) JSON text
        before = obj
    try:
        result = load_tools(obj, kind=kind)
    except LoaderError as err:
        assert err.source is not None
        assert str(err)
    else:
        assert isinstance(result, Toolset)
        for tool in result:
            assert tool.parameters.allows("object")
            assert isinstance(tool.name, str)
    assert repr(obj) == repr(before)  # repr: NaN is not equal to itself


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=40) | json_ish.map(lambda v: json.dumps(v)[:-1]) | json_ish.map(json.dumps))
def test_any_text_gives_a_toolset_or_a_loader_error(text):
    if not text.lstrip().startswith(("{", "[")):
        text = "[" + text
    try:
        assert isinstance(load_tools(text), Toolset)
    except LoaderError as err:
        assert err.source == "<string>"



# --- which reader an input goes to (kind="auto") ----------------------------------------------

from toolform_rules.schema import loaders as _loaders  # noqa: E402


@pytest.mark.parametrize("obj, expected", [
    ("tools.py", "python"), ("pkg/Tools.PY", "python"), ("api.d.ts", "typescript"), ("api.ts", "typescript"),
    ("api.mts", "typescript"), ("tools.json", "json"), ('{"name": "f"}', "json"), ("[]", "json"),
    ("json", "python"),  # an importable module's dotted name
    ("no_such_module_here", "json"),  # not importable, not a file: the JSON reader says "no such file"
    ("function get_weather(city: string): string;", "typescript"),
    ("/** Docs. */\nexport declare function f(): void;", "typescript"),
    ("interface A { x: string }", "typescript"),
    ("the weather in Paris", "json"),
])
def test_auto_tells_python_typescript_and_json_apart(obj, expected) -> None:
    assert _loaders._source_kind(obj) == expected


def test_auto_takes_modules_and_functions_as_python() -> None:
    import json as a_module

    def f(x: int) -> int:
        return x

    assert _loaders._source_kind(a_module) == "python"
    assert _loaders._source_kind(f) == "python"
    assert _loaders._source_kind([f, f]) == "python"
    assert _loaders._source_kind([{"name": "f"}]) == "json"
    assert _loaders._source_kind(dict) == "json"  # a class is not a tool function


def test_a_missing_file_of_any_kind_is_a_located_error() -> None:
    for name in ("missing.ts", "missing.json"):
        with pytest.raises(LoaderError, match="no such file") as caught:
            load_tools(name)
        assert caught.value.source == name
