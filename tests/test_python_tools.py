"""Tools from Python functions (``toolform_rules.schema.python_tools``): hints, docstrings, errors, parity.

The fixture modules are under ``tests/data/tools/python/`` (one per docstring style or hint
family, and ``bad/`` with one module per refused construct).  Parity with the reference
(PyPI ``toolform`` 0.0.1) is checked on the tools both read alike; where the reference reads
a function wrongly, a ``test_divergence_*`` test says what it does and why we differ.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import math
import os
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, TypedDict

import annotated_types as at
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callgen import arguments
from reference import ref_load_tools, ref_validate_arguments
from toolform_rules import LoaderError, Limits, load_tools, validate_arguments, validate_instance
from toolform_rules.schema.python_tools import function_tool, json_value, read_python, tool

HERE = Path(__file__).resolve().parent
FIXTURES = "tests/data/tools/python"  # relative: the suite runs from the repository's root
BAD = f"{FIXTURES}/bad"
PARITY = settings(max_examples=int(os.environ.get("PARITY_EXAMPLES", "200")), deadline=None,
                  suppress_health_check=list(HealthCheck))


@pytest.fixture(autouse=True)
def _run_from_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE.parent)


def _tool(path: str, name: str) -> dict[str, Any]:
    return next(entry for _, entry in read_python(path).entries if entry["name"] == name)


def _params(path: str, name: str) -> dict[str, Any]:
    return _tool(path, name)["parameters"]


# --- what each module yields -------------------------------------------------------------------

@pytest.mark.parametrize("module, names", [
    ("google_tools", ["get_weather", "search_docs", "send_message", "scale"]),
    ("numpy_tools", ["book_flight", "convert_currency"]),
    ("rest_tools", ["create_user", "delete_user"]),
    ("structured_tools", ["ship", "plan_route", "label_tree", "place_order", "tally"]),
    ("annotated_tools", ["set_volume", "rename"]),
    ("decorated_tools", ["get_time", "lookup_stock"]),
    ("mixed_tools", ["count_words", "to_json", "path_of"]),
])
def test_load_tools_names_each_modules_tools(module: str, names: list[str]) -> None:
    tools = load_tools(f"{FIXTURES}/{module}.py")
    assert tools.names() == names
    assert list(tools.executors) == names
    assert tools.source == f"{FIXTURES}/{module}.py"


def test_executors_are_the_modules_own_functions_and_callable() -> None:
    tools = load_tools(f"{FIXTURES}/decorated_tools.py")
    stock = tools.executors["lookup_stock"]
    module = sys.modules[stock.__module__]
    assert stock is module.stock and tools.executors["get_time"] is module.get_time
    assert stock("ACME") == 1.0 and tools.executors["get_time"](" paris ") == "Paris"


def test_a_decorated_module_yields_only_its_marked_functions_unless_told_otherwise() -> None:
    path = f"{FIXTURES}/decorated_tools.py"
    assert load_tools(path, only_decorated=False).names() == ["normalise_city", "get_time", "lookup_stock"]
    assert load_tools(f"{FIXTURES}/google_tools.py", only_decorated=True).names() == []


def test_the_decorator_returns_the_function_and_its_name_and_description_win() -> None:
    def plain(x: int) -> int:
        """Its own text."""
        return x + 1

    marked = tool(plain)
    assert marked is plain and marked(1) == 2

    @tool(name="renamed", description="Given text.")
    def other(x: int) -> int:
        """Its own text."""
        return x

    assert other(3) == 3
    entry = read_python([plain, other]).entries[1][1]
    assert (entry["name"], entry["description"]) == ("renamed", "Given text.")
    assert _tool(f"{FIXTURES}/decorated_tools.py", "lookup_stock")["description"] == "Look up a stock price by ticker."
    with pytest.raises(TypeError):
        tool(int)


def test_functions_and_lists_of_functions_read_as_object_sources() -> None:
    def first(a: str) -> None:
        """First."""

    @tool
    def second(b: int) -> None:
        """Second."""

    assert read_python(first).source == "<object>"
    assert load_tools([first, second]).names() == ["first", "second"]
    assert load_tools([first, second], only_decorated=True).names() == ["second"]
    assert load_tools((first,), kind="python").executors["first"] is first


def test_a_module_object_and_a_dotted_name_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE / "data/tools/python"))
    monkeypatch.delitem(sys.modules, "rest_tools", raising=False)
    by_name = load_tools("rest_tools")
    module = sys.modules["rest_tools"]
    by_module = load_tools(module)
    assert by_name.names() == by_module.names() == ["create_user", "delete_user"]
    assert by_module.source == module.__file__ and by_module.executors["delete_user"] is module.delete_user


def test_a_mixed_module_leaves_out_imports_private_functions_classes_and_aliases() -> None:
    params = _params(f"{FIXTURES}/mixed_tools.py", "to_json")
    assert params["properties"]["value"] == {}  # no hint: any value


# --- hints → JSON Schema -----------------------------------------------------------------------

def test_google_docstrings_give_descriptions_and_defaults_make_parameters_optional() -> None:
    entry = _tool(f"{FIXTURES}/google_tools.py", "get_weather")
    assert entry["description"] == "Get the weather forecast for a city."
    assert entry["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": 'The city, e.g. "Paris".'},
            "days": {"type": "integer", "default": 3, "description": "How many days to forecast."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius",
                     "description": "The temperature unit."},
        },
        "required": ["city"],
    }


def test_literal_optional_and_list_hints() -> None:
    props = _params(f"{FIXTURES}/google_tools.py", "search_docs")["properties"]
    assert props["sort"] == {"type": "string", "enum": ["relevance", "date"], "default": "relevance",
                             "description": "The order of the results."}
    props = _params(f"{FIXTURES}/google_tools.py", "send_message")["properties"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "default": [],
                             "description": "Labels to attach."}
    assert props["priority"] == {"type": ["integer", "null"], "default": None, "description": "1 (high) to 5 (low)."}


def test_numpy_and_rest_docstrings_describe_parameters() -> None:
    entry = _tool(f"{FIXTURES}/numpy_tools.py", "book_flight")
    assert entry["description"] == "Book a flight between two airports."
    props = entry["parameters"]["properties"]
    assert props["origin"]["description"] == "The departure airport's IATA code."
    assert props["seats"] == {"type": "array", "items": {"type": "string"}, "default": [],
                              "description": "The seats wanted."}
    assert entry["parameters"]["required"] == ["origin", "destination"]
    entry = _tool(f"{FIXTURES}/rest_tools.py", "create_user")
    assert entry["description"] == "Create a user account."
    assert entry["parameters"]["properties"]["email"] == {"type": "string", "description": "Where to write to."}


def test_annotated_constraints_and_descriptions() -> None:
    props = _params(f"{FIXTURES}/annotated_tools.py", "set_volume")["properties"]
    # the Annotated description wins over the docstring's entry
    assert props["level"] == {"type": "integer", "minimum": 0, "maximum": 11, "description": "The loudness."}
    assert props["step"] == {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 5, "multipleOf": 0.5,
                             "default": 1.0, "description": "How much one press changes it."}
    props = _params(f"{FIXTURES}/annotated_tools.py", "rename")["properties"]
    assert props["name"] == {"type": "string", "minLength": 1, "maxLength": 20}
    assert props["aliases"] == {"type": "array", "items": {"type": "string"}, "maxItems": 3, "default": []}
    assert props["ratio"] == {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5}


def test_typeddicts_total_and_not_with_required_and_not_required() -> None:
    props = _params(f"{FIXTURES}/structured_tools.py", "ship")["properties"]
    assert props["address"] == {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"}, "postcode": {"type": "string"}},
        "required": ["street", "city"], "description": "Where to ship."}
    assert props["filters"] == {"type": ["object", "null"], "properties": {
        "colour": {"type": "string"}, "size": {"type": "integer"}}, "required": ["size"], "default": None,
        "description": "Which parcels."}


def test_nested_dataclasses_with_defaults_and_factories() -> None:
    point = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
             "required": ["x"]}
    assert _params(f"{FIXTURES}/structured_tools.py", "plan_route")["properties"]["route"] == {
        "type": "object", "properties": {"start": point, "stops": {"type": "array", "items": point},
                                         "name": {"type": "string", "default": "route"}},
        "required": ["start"]}


def test_a_recursive_dataclass_becomes_a_def_the_json_reader_resolves() -> None:
    params = _params(f"{FIXTURES}/structured_tools.py", "label_tree")
    assert params["properties"]["tree"] == {"$ref": "#/$defs/TreeNode"}
    assert params["$defs"]["TreeNode"]["properties"]["children"] == {"type": "array",
                                                                     "items": {"$ref": "#/$defs/TreeNode"}}
    tools = load_tools(f"{FIXTURES}/structured_tools.py")
    good = {"tree": {"label": "a", "children": [{"label": "b", "children": []}]}}
    bad = {"tree": {"label": "a", "children": [{"label": 3}]}}
    assert validate_arguments({"name": "label_tree", "arguments": good}, tools).ok
    assert not validate_arguments({"name": "label_tree", "arguments": bad}, tools).ok


def test_a_pydantic_model_uses_its_own_json_schema() -> None:
    order = _params(f"{FIXTURES}/structured_tools.py", "place_order")["properties"]["order"]
    assert order["properties"]["quantity"] == {"minimum": 1, "title": "Quantity", "type": "integer"}
    assert order["required"] == ["product", "quantity"]


def test_a_pydantic_model_is_not_recognised_when_pydantic_is_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    def use(model: Model) -> None:
        """Use a model."""

    assert read_python(use).entries[0][1]["parameters"]["properties"]["model"]["type"] == "object"
    monkeypatch.setitem(sys.modules, "pydantic", None)
    with pytest.raises(LoaderError, match="has no JSON Schema form"):
        read_python(use)


def test_containers_dicts_sets_and_tuples() -> None:
    props = _params(f"{FIXTURES}/structured_tools.py", "tally")["properties"]
    assert props["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["seen"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert props["pair"] == {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                             "minItems": 2, "maxItems": 2}
    assert props["rest"] == {"type": "array", "items": {"type": "number"}, "default": [1.0, 2.0]}


class Model(pydantic.BaseModel):
    x: int


class Colour(enum.Enum):
    RED = 1
    GREEN = 2


class Mixed(enum.Enum):
    A = "a"
    ONE = 1


NO_DEFAULT = object()


def _hinted(hint: Any, default: Any = NO_DEFAULT) -> dict[str, Any]:
    """The schema a parameter hinted ``hint`` gets (with ``default`` when one is given)."""
    def fn(value):  # type: ignore[no-untyped-def]
        return value

    fn.__annotations__ = {"value": hint}
    if default is not NO_DEFAULT:
        fn.__defaults__ = (default,)
    return function_tool(fn)["parameters"]["properties"]["value"]


@pytest.mark.parametrize("hint, schema", [
    (str, {"type": "string"}), (int, {"type": "integer"}), (float, {"type": "number"}),
    (bool, {"type": "boolean"}), (None, {"type": "null"}), (Any, {}),
    (list, {"type": "array"}), (typing.List[int], {"type": "array", "items": {"type": "integer"}}),
    (typing.Sequence[str], {"type": "array", "items": {"type": "string"}}),
    (frozenset[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
    (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (dict, {"type": "object"}),
    (Literal[1, "a"], {"enum": [1, "a"]}), (Literal[True], {"type": "boolean", "enum": [True]}),
    (Colour, {"type": "integer", "enum": [1, 2]}), (Mixed, {"enum": ["a", 1]}),
    (Optional[Colour], {"type": ["integer", "null"], "enum": [1, 2, None]}),
    (int | str, {"type": ["integer", "string"]}),
    (int | list[int], {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]}),
    (Optional[list[int]], {"type": ["array", "null"], "items": {"type": "integer"}}),
    (Any | None, {}),
    (Annotated[str, "Text.", at.MaxLen(3)], {"type": "string", "description": "Text.", "maxLength": 3}),
    (Annotated[dict[str, int], at.MinLen(1)], {"type": "object", "additionalProperties": {"type": "integer"},
                                              "minProperties": 1}),
    (typing.NewType("UserId", int), {"type": "integer"}),
])
def test_each_hint_family(hint: Any, schema: dict[str, Any]) -> None:
    assert _hinted(hint) == schema


@pytest.mark.parametrize("default, shown", [
    ((1, 2), [1, 2]), ({3, 1}, [1, 3]), (Colour.GREEN, 2), ({"a": (1,)}, {"a": [1]}), (None, None),
])
def test_defaults_are_written_as_json(default: Any, shown: Any) -> None:
    assert _hinted(Any, default)["default"] == shown


@pytest.mark.parametrize("default", [object(), float("inf"), {1: "a"}, b"x", [1, object()]])
def test_a_default_json_cannot_express_is_left_out_but_still_makes_the_parameter_optional(default: Any) -> None:
    def fn(x=default):  # type: ignore[no-untyped-def]
        """Anything."""

    params = function_tool(fn)["parameters"]
    assert params["properties"]["x"] == {} and "required" not in params


def test_the_docstrings_first_paragraph_is_the_description_whitespace_normalised() -> None:
    def fn(a: int) -> None:
        """Do   the
        thing.

        Details that are not the description.

        Args:
            a: The   a.
        """

    entry = function_tool(fn)
    assert entry["description"] == "Do the thing." and entry["parameters"]["properties"]["a"]["description"] == "The a."
    assert function_tool(lambda: None)["description"] == ""


# --- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("module, line, tool_name, path, message", [
    ("varargs", 3, "total", "parameters.properties.numbers", "*numbers cannot be given as a named argument"),
    ("kwargs", 1, "configure", "parameters.properties.options", "**options has no schema"),
    ("positional_only", 1, "power", "parameters.properties.base", "positional-only"),
    ("callable_hint", 5, "apply", "parameters.properties.fn", "Callable[[int], int] has no JSON Schema form"),
    ("plain_class", 6, "run", "parameters.properties.config", "the hint Config has no JSON Schema form"),
    ("int_keys", 1, "lookup", "parameters.properties.table", "JSON object keys are strings"),
    ("forward_ref", 6, "fetch", "parameters.properties.session", "names something undefined"),
    ("nested_unsupported", 10, "schedule", "parameters.properties.job.properties.retries.items",
     "complex has no JSON Schema form"),
])
def test_an_unsupported_construct_is_a_located_error(module: str, line: int, tool_name: str, path: str,
                                                      message: str) -> None:
    source = f"{BAD}/{module}.py"
    with pytest.raises(LoaderError) as caught:
        load_tools(source)
    err = caught.value
    assert (err.source, err.line, err.tool, err.path) == (source, line, tool_name, path)
    assert message in err.message


@pytest.mark.parametrize("module, line, message", [
    ("syntax_error", 5, "the module does not parse: expected ':'"),
    ("raises", 5, "importing the module raised KeyError: 'timeout'"),
])
def test_an_import_failure_is_a_located_error(module: str, line: int, message: str) -> None:
    source = f"{BAD}/{module}.py"
    with pytest.raises(LoaderError) as caught:
        load_tools(source)
    assert (caught.value.source, caught.value.line, caught.value.message) == (source, line, message)
    assert not [name for name, mod in sys.modules.items()
                if getattr(mod, "__file__", None) == str((HERE.parent / source).resolve())]


def test_a_missing_path_a_missing_module_and_a_non_function_are_errors() -> None:
    with pytest.raises(LoaderError, match="no such file") as caught:
        load_tools(f"{FIXTURES}/nope.py")
    assert caught.value.source == f"{FIXTURES}/nope.py"
    with pytest.raises(LoaderError, match="no such module"):
        read_python("toolform_rules.no_such_module_here")
    with pytest.raises(LoaderError, match="got int"):
        read_python(3)


def test_two_functions_with_one_tool_name_are_refused() -> None:
    @tool(name="same")
    def a() -> None:
        """A."""

    @tool(name="same")
    def b() -> None:
        """B."""

    with pytest.raises(LoaderError, match="two functions are tools named 'same'"):
        read_python([a, b])


def test_nesting_past_the_depth_limit_is_an_error_not_a_recursion_error() -> None:
    hint: Any = int
    for _ in range(40):
        hint = list[hint]
    assert _hinted(hint)["type"] == "array"
    with pytest.raises(LoaderError, match="nested deeper than 8 levels"):
        def fn(x):  # type: ignore[no-untyped-def]
            """Deep."""

        fn.__annotations__ = {"x": hint}
        function_tool(fn, limits=Limits(max_depth=8))
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]
    assert json_value(deep, 64) == (False, None)


def test_a_length_constraint_on_a_number_is_an_error() -> None:
    with pytest.raises(LoaderError, match="MaxLen constrains a length") as caught:
        _hinted(Annotated[int, at.MaxLen(3)])
    assert caught.value.path == "parameters.properties.value"


# --- properties ------------------------------------------------------------------------------------

@dataclasses.dataclass
class Pair:
    name: str
    weight: float = 1.0


class Row(TypedDict, total=False):
    key: str
    count: int


HINTS = [str, int, float, bool, list[int], tuple[int, str], tuple[bool, ...], set[str], frozenset[int],
         dict[str, float], Literal["a", "b", 3], Colour, Mixed, Optional[int], int | str | None,
         list[Optional[Colour]], Pair, list[Pair], Row, Annotated[int, at.Ge(0), at.Le(10)],
         Annotated[str, at.MaxLen(4)], Annotated[list[int], at.Len(1, 3)]]


def _as_json(value: Any) -> Any:
    """A Python value drawn for a hint, as the JSON a model would write for it."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _as_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_as_json(v) for v in value]
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_values_of_a_hints_type_are_valid_under_its_schema(data: st.DataObject) -> None:
    hint = data.draw(st.sampled_from(HINTS))
    schema = _hinted(hint)
    value = _as_json(data.draw(st.from_type(hint)))
    if _finite(value):  # JSON has no NaN or infinity
        report = validate_instance(value, schema)
        assert report.ok, (hint, value, report.to_dict())


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_value_of_another_type_is_refused(data: st.DataObject) -> None:
    hint, wrong = data.draw(st.sampled_from([(int, "1x"), (str, 3), (list[int], {"a": 1}), (Colour, 3),
                                             (Pair, [1]), (tuple[int, str], [1, 2]), (bool, "maybe")]))
    assert not validate_instance(wrong, _hinted(hint)).ok


def _snapshot(module: Any) -> dict[str, Any]:
    out = {}
    for name, value in vars(module).items():
        if callable(value) and hasattr(value, "__code__"):
            out[name] = (value, dict(value.__dict__), copy.copy(value.__annotations__), value.__defaults__,
                         value.__kwdefaults__, value.__doc__)
    return {"names": list(vars(module)), "functions": out}


@pytest.mark.parametrize("module", ["google_tools", "structured_tools", "decorated_tools", "annotated_tools"])
def test_reading_a_module_never_changes_it_or_its_functions(module: str) -> None:
    loaded = sys.modules[load_tools(f"{FIXTURES}/{module}.py").tools and
                         next(iter(load_tools(f"{FIXTURES}/{module}.py").executors.values())).__module__]
    before = _snapshot(loaded)
    first = read_python(loaded)
    second = read_python(loaded)
    assert _snapshot(loaded) == before
    assert first == second


# --- parity with the reference ---------------------------------------------------------------------

# The tools both implementations read alike.  Left out: decorated_tools (the reference has a
# @tool decorator of its own and fails on ours), mixed_tools (the reference counts an alias as a
# second tool), and the tools of the divergences below (Annotated constraints, TypedDict
# Required/NotRequired, tuple positions and dict values).
PARITY_TOOLS = [
    ("google_tools", "get_weather"), ("google_tools", "search_docs"), ("google_tools", "send_message"),
    ("google_tools", "scale"), ("numpy_tools", "book_flight"), ("numpy_tools", "convert_currency"),
    ("rest_tools", "create_user"), ("rest_tools", "delete_user"), ("structured_tools", "plan_route"),
    ("structured_tools", "label_tree"), ("structured_tools", "place_order"),
]


@PARITY
@given(data=st.data())
def test_parity_with_the_reference_on_the_fixture_modules(data: st.DataObject) -> None:
    module, name = data.draw(st.sampled_from(PARITY_TOOLS))
    path = f"{FIXTURES}/{module}.py"
    args = data.draw(arguments(_params(path, name)))
    call = {"name": data.draw(st.sampled_from([name, name.upper(), name.replace("_", "-")])), "arguments": args}
    before = copy.deepcopy(call)
    assert validate_arguments(call, load_tools(path)).to_dict() == ref_validate_arguments(
        call, ref_load_tools(path)).to_dict()
    assert call == before


def _both(path: str, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    call = {"name": name, "arguments": args}
    return (validate_arguments(call, load_tools(path)).to_dict(),
            ref_validate_arguments(call, ref_load_tools(path)).to_dict())


def test_divergence_annotated_constraints_are_kept() -> None:
    """The reference reads ``Annotated[int, Ge(0), Le(11)]`` as a bare ``int`` and accepts 99;
    we keep the constraints as ``minimum``/``maximum`` (and Gt/Lt/MultipleOf/MinLen/MaxLen/Len/
    Interval), so 99 is refused: the author wrote the bound into the signature for exactly that."""
    ours, ref = _both(f"{FIXTURES}/annotated_tools.py", "set_volume", {"level": 99})
    assert ref["ok"] and ours["constraint_errors"] == ["level: 99 > maximum 11"]
    ours, ref = _both(f"{FIXTURES}/annotated_tools.py", "rename", {"name": "", "ratio": 2})
    assert ref["ok"] and not ours["ok"]


def test_divergence_numpy_and_rest_docstrings_describe_parameters() -> None:
    """The reference reads parameter descriptions only from Google ``Args:`` sections: under
    NumPy ``Parameters`` and reST ``:param:`` every description is empty.  We read all styles
    (through docstring_parser): the text is there, and a model choosing arguments needs it."""
    ref = ref_load_tools(f"{FIXTURES}/numpy_tools.py").get("book_flight")
    assert [p.description for p in ref.params] == ["", "", "", ""]
    ours = load_tools(f"{FIXTURES}/numpy_tools.py").get("book_flight").parameters
    assert ours.property("origin").description == "The departure airport's IATA code."
    ref = ref_load_tools(f"{FIXTURES}/rest_tools.py").get("create_user")
    assert [p.description for p in ref.params] == ["", "", ""]
    assert _params(f"{FIXTURES}/rest_tools.py", "create_user")["properties"]["admin"]["description"] == (
        "Whether the user may manage others.")


def test_divergence_typeddict_required_and_not_required() -> None:
    """The reference reads a ``Required[T]`` or ``NotRequired[T]`` key as "any value", required as
    the class's totality says: it demands ``postcode`` (``NotRequired[str]``) yet accepts ``0``
    for it, and neither demands ``size`` (``Required[int]`` in a ``total=False`` class) nor
    checks its type.  We follow the TypedDict (PEP 655): ``postcode`` is optional and a string,
    ``size`` is required and an integer — what the function's own type checker demands."""
    path = f"{FIXTURES}/structured_tools.py"
    address = {"street": "Main St", "city": "Paris"}
    ours, ref = _both(path, "ship", {"address": {**address, "postcode": 0}})
    assert ref["ok"] and ours["type_errors"] == ["address.postcode: expected string, got int"]
    ours, ref = _both(path, "ship", {"address": address, "filters": {"size": 1}})
    assert ours["ok"] and ref["missing_required"] == ["address.postcode"]
    ours, ref = _both(path, "ship", {"address": {**address, "postcode": "75001"}, "filters": {"colour": "red"}})
    assert ref["ok"] and ours["missing_required"] == ["filters.size"]
    ours, ref = _both(path, "ship", {"address": {**address, "postcode": "75001"}, "filters": {"size": "x"}})
    assert ref["ok"] and ours["type_errors"] == ["filters.size: expected integer, got str"]


def test_divergence_tuple_positions_and_dict_values_are_typed() -> None:
    """The reference reads ``tuple[int, str]`` as a list of two ``int | str`` items (so ``[1, 1]``
    passes) and ``dict[str, int]`` as an object of anything (so ``{"a": "x"}`` passes).  We keep
    each position's type (``prefixItems``) and the values' type (``additionalProperties``)."""
    path = f"{FIXTURES}/structured_tools.py"
    ours, ref = _both(path, "tally", {"counts": {"a": "x"}, "seen": [], "pair": [1, 1]})
    assert ref["ok"]
    assert ours["type_errors"] == ["counts.a: expected integer, got str", "pair[1]: expected string, got int"]


def test_divergence_unexpressible_hints_are_refused() -> None:
    """The reference loads ``Callable``, a plain class, ``dict[int, str]``, a misspelt forward
    reference and a list of ``complex`` without a word (reading them as some loose type).  We
    refuse each with the file, line, tool and parameter: a schema that cannot say what the
    function takes would pass calls that crash it."""
    for module in ("callable_hint", "plain_class", "int_keys", "forward_ref", "nested_unsupported"):
        path = f"{BAD}/{module}.py"
        assert len(ref_load_tools(path).tools) == 1
        with pytest.raises(LoaderError):
            load_tools(path)


def test_divergence_an_alias_is_one_tool() -> None:
    """The reference refuses ``mixed_tools.py`` ("duplicate tool name 'count_words'") because the
    module also binds ``alias = count_words``.  One function is one tool, whatever names point
    at it, so we read it once."""
    with pytest.raises(Exception, match="duplicate tool name"):
        ref_load_tools(f"{FIXTURES}/mixed_tools.py")
    assert load_tools(f"{FIXTURES}/mixed_tools.py").names().count("count_words") == 1


def test_optional_float_and_set_read_alike_for_verdicts() -> None:
    """Where the schemas differ but the verdicts agree: ``Optional[int]`` (we say ``null`` is
    allowed, the reference drops ``None`` from the type; the sdk profile accepts null for an
    optional argument anyway), an int for a ``float`` (both accept it), and a repeated member of
    a ``set[str]`` (the sdk profile does not judge ``uniqueItems``)."""
    ours, ref = _both(f"{FIXTURES}/google_tools.py", "send_message",
                      {"recipient": "a", "body": "b", "priority": None})
    assert ours == ref and ours["ok"]
    ours, ref = _both(f"{FIXTURES}/google_tools.py", "scale", {"factor": 2, "values": [1, 2.5]})
    assert ours == ref and ours["ok"]
    ours, ref = _both(f"{FIXTURES}/structured_tools.py", "tally", {"counts": {}, "seen": ["a", "a"], "pair": [1, "x"]})
    assert ours == ref and ours["ok"]


# --- the examples run after a plain install ----------------------------------------------------------------


def _imported_modules(source: str) -> set[str]:
    """The top-level modules ``source`` imports (a doctest's ``>>>`` lines read as code)."""
    import ast
    import textwrap

    lines = [line[4:] for line in source.splitlines() if line.startswith((">>> ", "... "))] or source.splitlines()
    tree = ast.parse(textwrap.dedent("\n".join(lines)))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def _distribution_of(module: str) -> set[str]:
    import importlib.metadata
    import re

    names = importlib.metadata.packages_distributions().get(module, [])
    return {re.sub(r"[-_.]+", "-", name).lower() for name in names}


def _requirement_names(requirements: list[str]) -> set[str]:
    import re

    return {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", r).group()).lower() for r in requirements}


def test_the_documented_examples_import_only_what_the_install_they_name_brings() -> None:
    """README and docs examples (and docs/examples/*.py, which they load) import the standard library, this
    package and its core dependencies; a module of an extra only where the page names that extra
    (``[openai]``).  ``load_tools("docs/examples/my_tools.py")`` after a plain ``pip install`` once failed on
    ``annotated_types``, a dev dependency only."""
    import re
    import tomllib

    project = tomllib.loads((HERE.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = _requirement_names(project["dependencies"])
    extras = {name: _requirement_names(reqs) for name, reqs in project["optional-dependencies"].items()
              if name != "dev"}
    pages = [HERE.parent / "README.md", *sorted((HERE.parent / "docs").glob("*.md"))]
    sources = [(page, block, page.read_text(encoding="utf-8")) for page in pages
               for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)]
    sources += [(path, path.read_text(encoding="utf-8"), "") for path in sorted((HERE.parent / "docs" / "examples")
                                                                                 .glob("*.py"))]
    assert len(sources) > 50
    for path, source, page in sources:
        for module in _imported_modules(source):
            if module in sys.stdlib_module_names or module == "toolform_rules":
                continue
            dists = _distribution_of(module)
            assert dists, f"{path.name}: {module} is installed by nothing here"
            if dists & core:
                continue
            named = [extra for extra, names in extras.items() if dists & names and f"[{extra}]" in page]
            assert named, f"{path.name} imports {module}, which no core dependency (nor an extra the page names) brings"
