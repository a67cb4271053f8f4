"""Compiled schema nodes are shared by content between tools (compiler.SharedNodes).

What must hold: equal content, one check; different content (a value's type or spelling,
a ``$ref``'s target), different checks and the right findings; annotations never matter;
nothing is kept once no program uses it.
"""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, strategies as st

from toolform_rules import builtin_rules, load_tools, validate_arguments
from toolform_rules.engine.compiler import SharedNodes
from toolform_rules.engine.verbs import program_for
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.schema.ir import content_key


def tool(name: str, properties: dict, *, defs: dict | None = None, description: str = "") -> dict:
    parameters = {"type": "object", "properties": properties}
    if defs is not None:
        parameters["$defs"] = defs
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def prop_check(toolset, tool_name: str, prop: str):
    """The compiled check of one property of a tool (what its root's properties walk calls)."""
    found = toolset.get(tool_name)
    program = program_for(found, "sdk")
    node = found.parameters.property(prop)
    shared = SharedNodes.of(builtin_rules().profile_rules("sdk"), None, DEFAULT_LIMITS)
    return program, shared.checks.get((content_key(node), False))


def test_equal_nodes_of_two_tools_share_one_check_whatever_their_annotations():
    tools = load_tools([
        tool("a", {"n": {"type": "integer", "minimum": 1, "description": "how many"}}),
        tool("b", {"m": {"type": "integer", "minimum": 1, "title": "M", "description": "another"}}),
    ])
    program_a, check_a = prop_check(tools, "a", "n")
    program_b, check_b = prop_check(tools, "b", "m")
    assert check_a is not None and check_a is check_b
    # the shared check reports under each tool's own argument name: the path is the call's
    assert validate_arguments({"name": "a", "arguments": {"n": 0}}, tools).constraint_errors == ["n: 0 < minimum 1"]
    assert validate_arguments({"name": "b", "arguments": {"m": 0}}, tools).constraint_errors == ["m: 0 < minimum 1"]


@pytest.mark.parametrize("first, second, bad, messages, profile", [
    # a limit's spelling is in the message: 1 and 1.0 are two nodes
    ({"type": "number", "minimum": 1}, {"type": "number", "minimum": 1.0}, 0,
     ["x: 0 < minimum 1", "x: 0 < minimum 1.0"], "sdk"),
    ({"type": "number", "maximum": 0.0}, {"type": "number", "maximum": -0.0}, 1,
     ["x: 1 > maximum 0.0", "x: 1 > maximum -0.0"], "sdk"),
    # True and 1 are equal in Python, never in JSON Schema
    ({"enum": [1, 2]}, {"enum": [True, 2]}, 1, [None, "x: 1 is not one of [True, 2]"], "jsonschema"),
])
def test_values_that_python_finds_equal_are_not_shared(first, second, bad, messages, profile):
    tools = load_tools([tool("one", {"x": first}), tool("two", {"x": second})])
    assert content_key(tools.get("one").parameters) != content_key(tools.get("two").parameters)
    got = []
    for name in ("one", "two"):
        report = validate_arguments({"name": name, "arguments": {"x": bad}}, tools, profile=profile)
        errors = report.constraint_errors + report.enum_errors
        got.append(errors[0] if errors else None)
    assert got == messages


def test_a_ref_is_read_in_its_own_tool():
    shape = {"x": {"$ref": "#/$defs/v"}}
    tools = load_tools([tool("ints", shape, defs={"v": {"type": "integer"}}),
                        tool("strs", shape, defs={"v": {"type": "string"}})])
    assert content_key(tools.get("ints").parameters) is None
    assert validate_arguments({"name": "ints", "arguments": {"x": 1}}, tools).ok
    assert validate_arguments({"name": "strs", "arguments": {"x": 1}}, tools).type_errors == [
        "x: expected string, got int"]
    assert validate_arguments({"name": "strs", "arguments": {"x": "s"}}, tools).ok


def test_a_recursive_schema_still_compiles_and_checks():
    tree = {"type": "object", "properties": {"label": {"type": "string"},
                                             "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
    tools = load_tools([tool("t", {"root": {"$ref": "#/$defs/node"}}, defs={"node": tree})])
    deep = {"root": {"label": "a", "children": [{"label": "b", "children": [{"label": 3}]}]}}
    assert validate_arguments({"name": "t", "arguments": deep}, tools).type_errors == [
        "root.children[0].children[0].label: expected string, got int"]


def test_nothing_is_kept_once_no_program_uses_it():
    shared = SharedNodes.of(builtin_rules().profile_rules("sdk"), None, DEFAULT_LIMITS)
    odd = {"type": "string", "pattern": "^only-in-this-test-[0-9]+$", "maxLength": 77}
    tools = load_tools([tool("held", {"s": odd})])
    validate_arguments({"name": "held", "arguments": {"s": "x"}}, tools)
    key = (content_key(tools.get("held").parameters.property("s")), False)
    assert shared.checks.get(key) is not None
    del tools
    gc.collect()
    assert shared.checks.get(key) is None


SCALARS = st.sampled_from([{"type": "integer"}, {"type": "number", "minimum": 0}, {"type": "string", "maxLength": 3},
                           {"type": "boolean"}, {"enum": ["a", "b"]}, {"type": "array", "items": {"type": "integer"}}])
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False),
                   st.text(max_size=5), st.lists(st.integers(-2, 2), max_size=3))


@given(shapes=st.dictionaries(st.sampled_from(["p", "q", "r"]), SCALARS, min_size=1),
       arguments=st.dictionaries(st.sampled_from(["p", "q", "r", "s"]), VALUES))
def test_a_tool_checks_alike_alone_or_beside_tools_that_share_its_nodes(shapes, arguments):
    """Sharing changes no verdict: a tool compiled among look-alikes reports what it reports alone."""
    alone = load_tools([tool("t", shapes)])
    expected = validate_arguments({"name": "t", "arguments": arguments}, alone).to_json()
    described = {k: {**v, "description": "shared"} for k, v in shapes.items()}
    crowd = load_tools([tool("u", described, description="look-alike"), tool("t", shapes),
                        tool("v", {f"{k}_other": v for k, v in shapes.items()})])
    validate_arguments({"name": "u", "arguments": {}}, crowd)
    validate_arguments({"name": "v", "arguments": {}}, crowd)
    assert validate_arguments({"name": "t", "arguments": arguments}, crowd).to_json() == expected


def test_every_keyword_that_holds_nodes_is_read_through_their_digests():
    """A new keyword holding schemas must be listed, or its nodes would be keyed by their repr."""
    import attrs

    from toolform_rules.schema.ir import _SCHEMA_FIELDS, Schema

    holding = {f.name for f in attrs.fields(Schema) if "Schema" in str(f.type) or "Property" in str(f.type)}
    assert holding == set(_SCHEMA_FIELDS)
