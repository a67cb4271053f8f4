"""Tools from TypeScript declarations (``toolform_rules.schema.typescript``, ``grammars/typescript.lark``).

The fixtures in ``data/tools/typescript/`` are written in several styles: a ``.d.ts`` of
``declare function``s, a module whose functions have bodies (braces inside strings, template
literals, comments and regular expressions), interfaces and type aliases, the args-object
style and JSDoc variants.  The schemas are checked in full, every unsupported construct and
syntax error is located (file:line:column, what was expected), generated type expressions
are read to the schema their shape says, cut-off files give a ``LoaderError`` and nothing
else, and validation agrees with the reference (PyPI ``toolform`` 0.0.1) on the tools both
read alike; each place where they differ on purpose is a ``test_divergence_*``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgen import arguments
from reference import ref_load_tools, ref_validate_arguments
from toolform_rules import load_tools, validate_arguments
from toolform_rules.errors import LoaderError
from toolform_rules.limits import Limits
from toolform_rules.schema.typescript import read_typescript

FIXTURES = Path(__file__).parent / "data" / "tools" / "typescript"
PARITY = settings(max_examples=int(os.environ.get("PARITY_EXAMPLES", "200")), deadline=None,
                  suppress_health_check=list(HealthCheck))


def tool(path: str, name: str) -> dict[str, Any]:
    """The definition ``read_typescript`` makes for the tool ``name`` of a fixture."""
    file = FIXTURES / path
    for _where, entry in read_typescript(file.read_text(encoding="utf-8"), source=str(file)):
        if entry["name"] == name:
            return entry
    raise KeyError(name)


def params(text: str) -> dict[str, Any]:
    """The parameters schema of the one tool ``text`` declares."""
    [(_where, entry)] = read_typescript(text)
    return entry["parameters"]


def error(text: str, tmp_path: Path, name: str = "tools.ts") -> LoaderError:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LoaderError) as caught:
        load_tools(path)
    return caught.value


# --- the fixtures, read ------------------------------------------------------------------------

def test_the_declare_function_file() -> None:
    tools = load_tools(FIXTURES / "weather.d.ts")
    assert tools.names() == ["get_weather", "convert_currency", "search_flights", "list_tags"]
    assert tool("weather.d.ts", "get_weather") == {
        "name": "get_weather", "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city's name, e.g. \"Paris\"."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The temperature unit."},
            "days": {"type": "number", "description": "How many days of forecast."}},
            "required": ["city", "unit"]}}
    convert = tool("weather.d.ts", "convert_currency")["parameters"]
    assert convert["properties"]["from"] == {"type": "string", "description": "ISO 4217 code of the source currency"}
    assert convert["required"] == ["amount", "from", "to", "round"]
    flights = tool("weather.d.ts", "search_flights")["parameters"]
    assert flights["properties"]["max_stops"] == {"type": "number", "default": 1,
                                                  "description": "At most this many stops."}
    assert flights["required"] == ["origin", "destination"]
    assert tools.get("get_weather").source.endswith("weather.d.ts line:13")


def test_a_module_with_bodies_holding_braces_in_strings_templates_comments_and_regexes() -> None:
    tools = load_tools(str(FIXTURES / "service.ts"))
    # helper() is not exported while the others are: a helper, not a tool
    assert tools.names() == ["get_user", "send_message", "archive"]
    assert tool("service.ts", "get_user")["parameters"] == {
        "type": "object", "properties": {"id": {"type": "number"},
                                         "include_posts": {"type": "boolean", "default": False}},
        "required": ["id"]}
    assert tool("service.ts", "send_message")["parameters"]["required"] == ["channel", "text"]
    assert tool("service.ts", "archive")["parameters"] == {
        "type": "object", "properties": {"ids": {"type": "array", "items": {"type": "number"}},
                                         "reason": {"type": ["string", "null"]}},
        "required": ["ids", "reason"]}


def test_interfaces_and_type_aliases_declared_before_and_after_use() -> None:
    plan = tool("types.ts", "plan_trip")["parameters"]
    assert plan["properties"]["stops"] == {
        "type": "array", "description": "The places to visit, in order.",
        "items": {"type": "object", "properties": {
            "lat": {"type": "number", "description": "Latitude in degrees."}, "lng": {"type": "number"},
            "label": {"type": "string"}, "name": {"type": "string"},
            "kind": {"type": "string", "enum": ["city", "park", "museum"]}},
            "required": ["lat", "lng", "name", "kind"]}}
    assert plan["properties"]["mode"] == {"type": "string", "enum": ["walk", "bike", "car"], "default": "walk"}
    assert plan["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert plan["properties"]["budget"] == {"type": ["number", "null"], "default": None}
    assert plan["required"] == ["stops"]
    record = tool("types.ts", "record")["parameters"]["properties"]
    assert record["readings"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert record["window"] == {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
                                "minItems": 2, "maxItems": 2}
    assert record["meta"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert record["levels"] == {"type": "array", "items": {"type": "number", "enum": [1, 2, 3]}}
    assert record["note"] == {"type": "string"} and record["extra"] == {}
    assert tool("types.ts", "record")["parameters"]["required"] == ["readings", "window", "meta", "levels", "extra"]
    label = tool("types.ts", "label")["parameters"]["properties"]
    assert label["point"]["required"] == ["lat", "lng", "text"]
    assert label["flag"] == {"type": "boolean"}
    assert label["choice"] == {"type": ["string", "number", "null"], "enum": ["a", 1, None]}


def test_the_args_object_is_flattened_and_its_dotted_param_tags_fill_descriptions() -> None:
    assert load_tools(FIXTURES / "args_object.ts").names() == ["create_event", "delete_events", "move_event",
                                                                "echo"]
    assert tool("args_object.ts", "create_event") == {
        "name": "create_event", "description": "Create a calendar event.",
        "parameters": {"type": "object", "properties": {
            "title": {"type": "string", "description": "The event's title."},
            "start": {"type": "string", "description": "When it starts (ISO 8601)."},
            "duration_minutes": {"type": "number", "description": "How long it lasts."},
            "attendees": {"type": "array", "items": {"type": "string"}},
            "visibility": {"type": "string", "enum": ["public", "private"]}},
            "required": ["title", "start", "attendees", "visibility"]}}
    assert tool("args_object.ts", "delete_events")["parameters"]["properties"]["ids"]["description"] == "Which events."
    assert tool("args_object.ts", "move_event")["parameters"] == {
        "type": "object", "properties": {"id": {"type": "number"}, "minutes": {"type": "number", "default": 15}},
        "required": ["id"]}
    assert tool("args_object.ts", "echo")["parameters"] == {
        "type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}


def test_a_recursive_type_is_a_defs_entry_reached_by_ref() -> None:
    schema = tool("recursive.ts", "make_folders")["parameters"]
    folder = {"type": "object", "properties": {"name": {"type": "string"},
                                              "children": {"type": "array", "items": {"$ref": "#/$defs/Folder"}}},
              "required": ["name"]}
    assert schema == {"type": "object", "properties": {"root": folder}, "required": ["root"],
                      "$defs": {"Folder": folder}}
    tools = load_tools(FIXTURES / "recursive.ts")
    bad = {"name": "make_folders", "arguments": {"root": {"name": "a", "children": [{"name": 1}]}}}
    assert not validate_arguments(bad, tools).ok
    good = {"name": "make_folders", "arguments": {"root": {"name": "a", "children": [{"name": "b", "children": []}]}}}
    assert validate_arguments(good, tools).ok


def test_load_tools_detects_typescript_text() -> None:
    tools = load_tools("/** Add two numbers. */\nfunction add(a: number, b: number): number { return a + b }")
    assert tools.names() == ["add"] and tools.get("add").description == "Add two numbers."


# --- types, one by one ----------------------------------------------------------------------------

TYPES = [
    ("string", {"type": "string"}),
    ("number", {"type": "number"}),
    ("boolean", {"type": "boolean"}),
    ("any", {}),
    ("unknown", {}),
    ("null", {"type": "null"}),
    ("object", {"type": "object"}),
    ("string[]", {"type": "array", "items": {"type": "string"}}),
    ("readonly string[]", {"type": "array", "items": {"type": "string"}}),
    ("Array<number>", {"type": "array", "items": {"type": "number"}}),
    ("ReadonlyArray<boolean>", {"type": "array", "items": {"type": "boolean"}}),
    ("number[][]", {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}),
    ("[string, number?]", {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}],
                           "minItems": 1, "maxItems": 2}),
    ("[name: string, ...rest: number[]]", None),
    ("[string, ...number[]]", {"type": "array", "prefixItems": [{"type": "string"}], "minItems": 1,
                               "items": {"type": "number"}}),
    ('"a"', {"type": "string", "enum": ["a"]}),
    ("'a' | \"b\"", {"type": "string", "enum": ["a", "b"]}),
    ("1 | 2 | -3.5", {"type": "number", "enum": [1, 2, -3.5]}),
    ("true", {"type": "boolean", "enum": [True]}),
    ("true | false", {"type": "boolean"}),
    ("string | null", {"type": ["string", "null"]}),
    ('"x" | "y" | null', {"type": ["string", "null"], "enum": ["x", "y", None]}),
    ("string | number", {"anyOf": [{"type": "string"}, {"type": "number"}]}),
    ("string | any", {}),
    ("(string | number)[]", {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}}),
    ("((string))", {"type": "string"}),
    ("{ a: string; b?: number, readonly c: boolean }",
     {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}, "c": {"type": "boolean"}},
      "required": ["a", "c"]}),
    ("{ 'quoted key': string\n  type: number\n  function?: string }",
     {"type": "object", "properties": {"quoted key": {"type": "string"}, "type": {"type": "number"},
                                       "function": {"type": "string"}}, "required": ["quoted key", "type"]}),
    ("{ a: { b: string[] } }", {"type": "object", "properties": {"a": {
        "type": "object", "properties": {"b": {"type": "array", "items": {"type": "string"}}}, "required": ["b"]}},
        "required": ["a"]}),
    ("{ [key: string]: number }", {"type": "object", "additionalProperties": {"type": "number"}}),
    ("Record<string, string[]>", {"type": "object", "additionalProperties": {"type": "array",
                                                                            "items": {"type": "string"}}}),
    ('Record<"a" | "b", number>', {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                                   "required": ["a", "b"]}),
    ("{ a?: string | undefined; b: number | undefined }",
     {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}),
    ("{ a: string } & { b: number }", {"type": "object", "properties": {"a": {"type": "string"},
                                                                      "b": {"type": "number"}},
                                       "required": ["a", "b"]}),
]


@pytest.mark.parametrize("written, expected", [t for t in TYPES if t[1] is not None], ids=[t[0] for t in TYPES
                                                                                           if t[1] is not None])
def test_each_type_reads_to_its_schema(written: str, expected: dict[str, Any]) -> None:
    assert params(f"function f(x: {written}): void {{}}")["properties"]["x"] == expected


def test_parameters_optional_and_with_defaults() -> None:
    schema = params('function f(a: string, b?: number, c: number = 5, d = "x", e = [1], f = {k: -1}, '
                    'g: string | undefined, h = null, i = undefined, j) {}')
    assert schema["properties"] == {
        "a": {"type": "string"}, "b": {"type": "number"}, "c": {"type": "number", "default": 5},
        "d": {"type": "string", "default": "x"}, "e": {"type": "array", "default": [1]},
        "f": {"type": "object", "default": {"k": -1}}, "g": {"type": "string"}, "h": {"default": None},
        "i": {}, "j": {}}
    assert schema["required"] == ["a", "j"]


def test_imports_exports_and_modifiers_are_read() -> None:
    text = ('import x, { a, type B as C } from "m";\nimport * as m from "m"\nexport { a as b } from "m";\n'
            'export type { T } from "t"\nexport * from "z";\n'
            "export async function a(): Promise<void> {}\nexport default function b() {}\n"
            "export declare function c(): void;\ndeclare function d(): void\n")
    assert [entry["name"] for _where, entry in read_typescript(text)] == ["a", "b", "c", "d"]


def test_a_file_that_exports_nothing_makes_every_function_a_tool() -> None:
    text = "function a(): void {}\nasync function b(x: string) { return x }\n"
    assert [(where, entry["name"]) for where, entry in read_typescript(text)] == [("line:1", "a"), ("line:2", "b")]


def test_jsdoc_variants() -> None:
    text = '''
    /**
     * First paragraph,
     *   over two lines.
     *
     * Second paragraph.
     * @param {string} a - The a.
     * @param [b] The b,
     *   continued.
     * @param {number} [c=3] - The c.
     * @param {"x"|"y"} [d='y'] The d.
     * @arg e The e.
     * @returns {void} nothing
     * @example f("a")
     */
    function f(a: string, b: string, c: number, d: "x" | "y", e: string) {}
    '''
    [(_where, entry)] = read_typescript(text)
    assert entry["description"] == "First paragraph, over two lines."
    assert entry["parameters"] == {"type": "object", "properties": {
        "a": {"type": "string", "description": "The a."},
        "b": {"type": "string", "description": "The b, continued."},
        "c": {"type": "number", "default": 3, "description": "The c."},
        "d": {"type": "string", "enum": ["x", "y"], "default": "y", "description": "The d."},
        "e": {"type": "string", "description": "The e."}}, "required": ["a", "e"]}


def test_plain_comments_are_not_descriptions() -> None:
    [(_where, entry)] = read_typescript("// not a description\n/* nor this */\nfunction f(/* x */ a: string) {}")
    assert "description" not in entry and entry["parameters"]["properties"]["a"] == {"type": "string"}


def test_a_jsdoc_then_a_plain_comment_still_describes_the_function() -> None:
    [(_where, entry)] = read_typescript("/** Described. */\n// eslint-disable-next-line\nfunction f() {}")
    assert entry["description"] == "Described."


# --- errors, located -------------------------------------------------------------------------------

UNSUPPORTED = [
    ("function f<T>(x: T) {}", 1, 1, "generic functions are not supported: expected '(' after the function's name"),
    ("class C {}\n", 1, 1, "classes are not read; declare each tool as a function: expected"),
    ("function f() {}\nconst x = 1;\n", 2, 1, "variable statements are not read"),
    ("function f() {}\nexport const g = (x: string) => x;\n", 2, 8, "variable statements are not read"),
    ("enum Color { Red }\n", 1, 1, "enums are not read"),
    ("function f(x: Unknown) {}", 1, 15, "unknown type 'Unknown': expected string, number"),
    ("function f(x: keyof T) {}", 1, 15, "the type operator 'keyof' is not supported"),
    ("function f(x: typeof y) {}", 1, 15, "the type operator 'typeof' is not supported"),
    ("type M = { [K in Keys]: string }\nfunction f(x: M) {}", 1, 15, "mapped types ({ [K in T]: U }) are not supported"),
    ("type C = A extends B ? X : Y\nfunction f(x: C) {}", 1, 12, "conditional types (A extends B ? C : D)"),
    ("function f(x: `a${string}`) {}", 1, 15, "template literal types are not supported"),
    ("function f(x: { m(): void }) {}", 1, 17, "methods are not supported"),
    ("function f(...xs: string[]) {}", 1, 12, "rest parameters (...name) are not supported"),
    ("function f(x: Promise<string>) {}", 1, 15, "unknown type 'Promise'"),
    ("interface G<T> { a: T }\nfunction f(x: G<string>) {}", 2, 15, "generic types are not supported"),
    ("function f(x: void) {}", 1, 15, "a parameter cannot hold void"),
    ("function f(x = Date.now()) {}", 1, 20, "expected"),
    ("function f(x = y) {}", 1, 16, "a parameter's default must be a literal"),
    ("export default function (x: string) {}", 1, 1, "a tool needs a name"),
    ("declare function f(a: string): void;\ndeclare function f(a: number): void;", 2, 1,
     "declared twice (first at line 1); overloads are not read"),
    ("interface A { a: string }\ninterface A { b: string }", 2, 1, "the type 'A' is declared twice"),
    ("function f(x: Record<number, string>) {}", 1, 22, "Record's key type is string"),
    ("namespace N {}", 1, 1, "namespaces and modules are not read"),
]


@pytest.mark.parametrize("text, line, column, message", UNSUPPORTED, ids=[u[3][:40] for u in UNSUPPORTED])
def test_each_unsupported_construct_is_a_located_error(text: str, line: int, column: int, message: str,
                                                       tmp_path: Path) -> None:
    err = error(text, tmp_path)
    assert (err.line, err.column) == (line, column), str(err)
    assert message in err.message
    assert str(err).startswith(f"{tmp_path / 'tools.ts'}:{line}:{column}: ")


def test_a_syntax_error_says_what_was_expected_and_what_was_found(tmp_path: Path) -> None:
    err = error("function f(a: string\n", tmp_path)
    assert (err.line, err.column) == (1, 21)
    assert err.message.startswith("expected ") and "')'" in err.message and "found the end of the text" in err.message
    err = error("function f(a: string;) {}\n", tmp_path)
    assert (err.line, err.column) == (1, 21)
    assert err.message.startswith("expected ") and err.message.endswith("found ';'")
    err = error("/** doc\nfunction f() {}\n", tmp_path)
    assert (err.line, err.column) == (1, 1) and "the comment is not closed: expected '*/'" in err.message
    err = error("export function f() {\n  if (x) {\n", tmp_path)
    assert (err.line, err.column) == (1, 21) and "the function's body is not closed: expected '}'" in err.message


def test_the_tool_is_named_in_errors_about_its_parameters(tmp_path: Path) -> None:
    err = error("\n\nexport function send(x: Mystery) {}\n", tmp_path)
    assert err.tool == "send" and (err.line, err.column) == (3, 25)


DEEP = 10_000


@pytest.mark.parametrize("written", ["Array<" * DEEP + "string" + ">" * DEEP, "(" * DEEP + "string" + ")" * DEEP,
                                     "{a: " * DEEP + "string" + "}" * DEEP, "string" + "[]" * DEEP,
                                     "[" * DEEP + "string" + "]" * DEEP],
                         ids=["Array", "parentheses", "objects", "suffixes", "tuples"])
def test_deep_nesting_is_a_loader_error_never_a_recursion_error(written: str) -> None:
    text = f"function f(x: {written}) {{}}"
    try:
        schema = params(text)
    except LoaderError as err:
        assert "nested deeper than 64 levels" in err.message and err.line == 1
    else:  # parentheses do not nest the schema
        assert schema["properties"]["x"] == {"type": "string"}


def test_types_nested_to_the_depth_limit_are_read() -> None:
    depth = 8
    written = "{a: " * (depth - 1) + "string" + "}" * (depth - 1)
    assert read_typescript(f"function f(x: {written}) {{}}", limits=Limits(max_depth=depth))
    with pytest.raises(LoaderError, match="nested deeper than 8 levels"):
        read_typescript(f"function f(x: {{a: {written}}}) {{}}", limits=Limits(max_depth=depth))


def test_types_that_expand_exponentially_are_refused() -> None:
    lines = ["type T0 = { a: string; b: string }"]
    lines += [f"type T{i} = {{ a: T{i - 1}; b: T{i - 1} }}" for i in range(1, 40)]
    text = "\n".join(lines) + "\nfunction f(x: T39) {}"
    with pytest.raises(LoaderError, match="too many schemas"):
        read_typescript(text, limits=Limits(max_depth=100))


def test_input_larger_than_the_limit_is_refused() -> None:
    with pytest.raises(LoaderError, match="longer than the 10 allowed"):
        read_typescript("function f(a: string) {}", limits=Limits(max_input_bytes=10))


def test_a_large_file_loads(tmp_path: Path) -> None:
    """About 200 KB of tools with bodies, JSDoc and interfaces: it loads (how fast, up to 1 MB, is measured by
    bench/tools.py, not asserted here)."""
    chunk = ('/**\n * Tool {i}: does things.\n * @param a The a.\n */\n'
             'export function tool_{i}(a: string, b: Opts{i}, c: "x" | "y" = "x"): Promise<void> {{\n'
             '  const s = `${{a}} }} {{`; return fetch("/t/{i}", {{ body: JSON.stringify({{ a, b, c }}) }});\n}}\n'
             'interface Opts{i} {{ /** The n. */ n?: number; tags: string[]; mode: [number, number] }}\n')
    pieces: list[str] = []
    while sum(map(len, pieces)) < 200_000:
        pieces.append(chunk.format(i=len(pieces)))
    count = len(pieces)
    path = tmp_path / "big.ts"
    path.write_text("".join(pieces), encoding="utf-8")
    assert path.stat().st_size >= 200_000
    tools = load_tools(path)
    assert len(tools.names()) == count
    assert tools.get(f"tool_{count - 1}").description == f"Tool {count - 1}: does things."


# --- properties ---------------------------------------------------------------------------------------

@st.composite
def type_expressions(draw: Any, depth: int = 0) -> tuple[str, dict[str, Any]]:
    """A TypeScript type expression and the schema it must read to."""
    kinds = ["string", "number", "boolean", "any", "literal", "literals"]
    if depth < 3:
        kinds += ["array", "generic_array", "tuple", "object", "record", "parens", "nullable"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("string", "number", "boolean"):
        return kind, {"type": kind}
    if kind == "any":
        return "any", {}
    if kind == "literal":
        value = draw(st.one_of(st.text(alphabet="abc xyz_-", max_size=6), st.integers(-100, 100)))
        return json.dumps(value), {"type": "string" if isinstance(value, str) else "number", "enum": [value]}
    if kind == "literals":
        values = draw(st.lists(st.text(alphabet="abcdef", min_size=1, max_size=4), min_size=2, max_size=4,
                               unique=True))
        return " | ".join(f"'{v}'" for v in values), {"type": "string", "enum": values}
    inner, schema = draw(type_expressions(depth + 1))
    if kind == "array":
        return f"({inner})[]", {"type": "array", "items": schema}
    if kind == "generic_array":
        return f"Array<{inner}>", {"type": "array", "items": schema}
    if kind == "parens":
        return f"({inner})", schema
    if kind == "nullable":
        if "type" in schema and isinstance(schema["type"], str) and set(schema) <= {"type", "enum"}:
            nullable = {**schema, "type": [schema["type"], "null"]}
            if "enum" in schema:
                nullable["enum"] = schema["enum"] + [None]
            return f"{inner} | null", nullable
        return inner, schema
    if kind == "record":
        return f"Record<string, {inner}>", {"type": "object", "additionalProperties": schema}
    if kind == "tuple":
        other, other_schema = draw(type_expressions(depth + 1))
        return f"[{inner}, {other}]", {"type": "array", "prefixItems": [schema, other_schema], "minItems": 2,
                                       "maxItems": 2}
    names = draw(st.lists(st.sampled_from(["a", "b_c", "type", "default", "readonly"]), min_size=1, max_size=3,
                          unique=True))
    optional = [draw(st.booleans()) for _ in names]
    members = [(inner, schema)] + [draw(type_expressions(depth + 1)) for _ in names[1:]]
    separator = draw(st.sampled_from(["; ", ", ", "\n"]))
    text = "{ " + separator.join(f"{n}{'?' if o else ''}: {m[0]}" for n, o, m in zip(names, optional, members)) + " }"
    expected: dict[str, Any] = {"type": "object", "properties": {n: m[1] for n, m in zip(names, members)}}
    required = [n for n, o in zip(names, optional) if not o]
    if required:
        expected["required"] = required
    return text, expected


@settings(max_examples=300, deadline=None)
@given(type_expressions())
def test_generated_type_expressions_read_to_their_shape(case: tuple[str, dict[str, Any]]) -> None:
    written, expected = case
    assert params(f"export declare function f(x: {written}): void;")["properties"]["x"] == expected


FIXTURE_TEXTS = sorted(FIXTURES.glob("*.ts"))


@settings(max_examples=300, deadline=None)
@given(path=st.sampled_from(FIXTURE_TEXTS), data=st.data())
def test_a_cut_off_file_is_a_loader_error_or_reads(path: Path, data: st.DataObject) -> None:
    text = path.read_text(encoding="utf-8")
    cut = data.draw(st.integers(0, len(text)))
    try:
        read_typescript(text[:cut], source=path.name)
    except LoaderError as err:
        assert err.line is None or 1 <= err.line <= text[:cut].count("\n") + 1
    # a cut may leave a whole file (after a declaration): then it reads


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="fuction(){}[]<>:;,=|&?.'\"`/*\\ \nabxstringumbr0123-", max_size=80))
def test_any_text_is_read_or_refused_with_a_loader_error(text: str) -> None:
    try:
        read_typescript(text)
    except LoaderError:
        pass


# --- parity with the reference --------------------------------------------------------------------------

# The tools both implementations read alike: plain parameters, literal unions, interfaces and
# aliases, arrays, the args object.  The others differ on purpose (test_divergence_* below).
PARITY_TOOLS = [
    ("weather.d.ts", "get_weather"), ("weather.d.ts", "convert_currency"), ("weather.d.ts", "list_tags"),
    ("types.ts", "plan_trip"),
    ("args_object.ts", "create_event"), ("args_object.ts", "delete_events"), ("args_object.ts", "move_event"),
    ("args_object.ts", "echo"),
]


@PARITY
@given(data=st.data())
def test_parity_with_the_reference_on_the_fixtures(data: st.DataObject) -> None:
    path, name = data.draw(st.sampled_from(PARITY_TOOLS))
    file = str(FIXTURES / path)
    args = data.draw(arguments(tool(path, name)["parameters"]))
    call = {"name": name, "arguments": args}
    assert validate_arguments(call, load_tools(file)).to_dict() == ref_validate_arguments(
        call, ref_load_tools(file)).to_dict()


def _both(text: str, tmp_path: Path, args: dict[str, Any], name: str = "f") -> tuple[dict, dict]:
    path = tmp_path / "t.ts"
    path.write_text(text, encoding="utf-8")
    call = {"name": name, "arguments": args}
    return (validate_arguments(call, load_tools(path)).to_dict(),
            ref_validate_arguments(call, ref_load_tools(str(path))).to_dict())


def test_divergence_regex_and_quotes_in_bodies() -> None:
    """The reference refuses service.ts ("unclosed string" at line 28: the regular expression /[}]"/g
    in send_message's body); we skip bodies with a scanner that knows regular expressions, template
    literals and comments, and read the three exported tools.  A body is code, never part of a
    tool's description: a quote inside a regex there must not stop the tools from loading."""
    with pytest.raises(Exception, match="unclosed string"):
        ref_load_tools(str(FIXTURES / "service.ts"))
    assert load_tools(FIXTURES / "service.ts").names() == ["get_user", "send_message", "archive"]


def test_divergence_description_is_the_first_paragraph() -> None:
    """The reference joins every paragraph before the first tag ("Get the current weather for a city. The
    second paragraph is not part of the description."); we keep the first paragraph, the summary that
    JSDoc tools and TypeScript's hover show first — later paragraphs are details a model need not see."""
    ref = ref_load_tools(str(FIXTURES / "weather.d.ts")).get("get_weather").description
    assert ref.endswith("The second paragraph is not part of the description.")
    assert load_tools(FIXTURES / "weather.d.ts").get("get_weather").description == "Get the current weather for a city."


def test_divergence_jsdoc_optional_param_with_default(tmp_path: Path) -> None:
    """``@param [max_stops=1]``: the reference keeps max_stops required (and without a default) because
    the signature has no ``?``; we read the bracket as JSDoc defines it — optional, default 1 — so a call
    without max_stops is valid, as the documentation promises."""
    call = {"name": "search_flights", "arguments": {"origin": "A", "destination": "B"}}
    file = str(FIXTURES / "weather.d.ts")
    assert validate_arguments(call, load_tools(file)).ok
    assert ref_validate_arguments(call, ref_load_tools(file)).to_dict()["missing_required"] == ["max_stops"]


def test_divergence_nullable_is_read_as_required_with_null(tmp_path: Path) -> None:
    """``reason: string | null``: the reference drops ``null`` and reads an optional string; we keep
    TypeScript's meaning — a required argument of which null is one value — as
    ``{"type": ["string", "null"]}``, required.  The verdicts agree (both validators accept a missing
    nullable argument, and null), so the tools differ in their schemas, not in what they accept."""
    path = tmp_path / "t.ts"
    path.write_text("function f(reason: string | null) {}", encoding="utf-8")
    [reason] = ref_load_tools(str(path)).get("f").params
    assert reason.required is False and reason.type.kind.value == "string"
    assert params(path.read_text()) == {"type": "object", "properties": {"reason": {"type": ["string", "null"]}},
                                        "required": ["reason"]}
    for args in ({}, {"reason": None}, {"reason": 1}):
        ours, ref = _both(path.read_text(), tmp_path, args)
        assert ours == ref


def test_divergence_mixed_literal_union(tmp_path: Path) -> None:
    """``choice: "a" | 1 | null``: the reference reads an enum of base type string (so 1 is a type error)
    and drops null; we read ``{"type": ["string", "number", "null"], "enum": ["a", 1, null]}`` — every
    member is a value."""
    ours, ref = _both('function f(choice: "a" | 1 | null) {}', tmp_path, {"choice": 1})
    assert ours["ok"] and ref["type_errors"] == ["choice: expected string, got int"]


def test_divergence_record_and_index_signature_values_are_checked(tmp_path: Path) -> None:
    """``Record<string, number>`` and ``{ [key: string]: string }``: the reference reads a bare object and
    accepts any values; we check each value against the value type (additionalProperties)."""
    ours, ref = _both("function f(r: Record<string, number>, m: { [key: string]: string }) {}", tmp_path,
                      {"r": {"a": "x"}, "m": {"b": 1}})
    assert not ours["ok"] and ref["ok"]
    assert ours["type_errors"] == ["r.a: expected number, got str", "m.b: expected string, got int"]


def test_divergence_tuples_are_checked_by_position(tmp_path: Path) -> None:
    """``[string, number]``: the reference reads an array of (string | number) with two items, so
    ``[1, "a"]`` passes; we read prefixItems, so each position has its own type."""
    ours, ref = _both("function f(t: [string, number]) {}", tmp_path, {"t": [1, "a"]})
    assert not ours["ok"] and ref["ok"]


def test_divergence_recursive_types(tmp_path: Path) -> None:
    """``interface Folder { children?: Folder[] }``: the reference cuts the recursion to a bare object, so
    a child's missing name goes unseen; we make Folder a ``$defs`` entry and check every level."""
    args = {"root": {"name": "a", "children": [{}]}}
    file = str(FIXTURES / "recursive.ts")
    call = {"name": "make_folders", "arguments": args}
    assert validate_arguments(call, load_tools(file)).to_dict()["missing_required"] == ["root.children[0].name"]
    assert ref_validate_arguments(call, ref_load_tools(file)).ok


def test_divergence_type_inferred_from_a_default(tmp_path: Path) -> None:
    """``n = 5`` with no annotation: the reference reads any value; TypeScript infers ``number`` from
    the default, and so do we ("x" is an error)."""
    ours, ref = _both("function f(n = 5) {}", tmp_path, {"n": "x"})
    assert not ours["ok"] and ref["ok"]


def test_divergence_const_statements_are_refused(tmp_path: Path) -> None:
    """``export const g = (x: string) => x``: the reference skips the statement silently, so the tool g
    vanishes; we refuse it at its line and column — a tool written as an arrow function must not be
    dropped without a word."""
    text = "export const g = (x: string) => x;\nexport function f(a: string) {}\n"
    path = tmp_path / "t.ts"
    path.write_text(text, encoding="utf-8")
    assert ref_load_tools(str(path)).names() == ["f"]
    with pytest.raises(LoaderError, match="variable statements are not read") as caught:
        load_tools(path)
    assert (caught.value.line, caught.value.column) == (1, 8)
