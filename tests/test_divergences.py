"""Where we differ from the reference on purpose: each divergence named, with its reason.

Each test runs both implementations on the same input and asserts both answers, so a
change on either side shows up here.
"""

from __future__ import annotations

import math

import pytest

from reference import (RefCall, ref_load_tools, ref_normalize, ref_sample_toolset, ref_validate_arguments,
                       ref_validate_call)
from toolform_rules import (CallError, LoaderError, UnknownProfileError, load_tools, normalize_call,
                            sample_tool, sample_toolset, validate_arguments)


def _tool(properties: dict, required: list | None = None, **extra) -> list[dict]:
    return [{"name": "f", "parameters": {"type": "object", "properties": properties, "required": required or [],
                                         **extra}}]


def _both(tool: list[dict], arguments: dict) -> tuple[dict, dict]:
    call = {"name": "f", "arguments": arguments}
    return (validate_arguments(call, load_tools(tool)).to_dict(),
            ref_validate_arguments(call, ref_load_tools(tool)).to_dict())


def test_bfcl_float_is_a_number() -> None:
    """BFCL's ``float`` means a number; the reference reads it as "any value" and passes text."""
    ours, ref = _both(_tool({"x": {"type": "float"}}), {"x": "abc"})
    assert ours["type_errors"] == ["x: expected number, got str"]
    assert ref["ok"] is True


def test_bfcl_nested_dict_keeps_its_properties() -> None:
    """A nested BFCL ``dict`` is an object whose properties are checked; the reference drops them."""
    tool = _tool({"o": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]}})
    ours, ref = _both(tool, {"o": {"n": "x"}})
    assert ours["type_errors"] == ["o.n: expected integer, got str"]
    assert ref["ok"] is True


def test_nullable_true_admits_null() -> None:
    """OpenAPI's ``nullable: true`` admits None; the reference ignores the keyword and rejects it."""
    ours, ref = _both(_tool({"x": {"type": "string", "nullable": True}}, ["x"]), {"x": None})
    assert ours["ok"] is True
    assert ref["type_errors"] == ["x: expected string, got NoneType"]


@pytest.mark.parametrize("keyword, value, message", [
    ("exclusiveMinimum", 0, "x: 0 <= exclusive minimum 0"),
    ("exclusiveMaximum", 10, "x: 10 >= exclusive maximum 10"),
])
def test_exclusive_bounds_exclude_the_bound(keyword: str, value: int, message: str) -> None:
    """An exclusive bound excludes its value; the reference reads it as an inclusive one."""
    ours, ref = _both(_tool({"x": {"type": "integer", keyword: value}}), {"x": value})
    assert ours["constraint_errors"] == [message]
    assert ref["ok"] is True


def test_additional_properties_true_opens_an_object() -> None:
    """``additionalProperties: true`` declares that other arguments are welcome; the reference reports them."""
    ours, ref = _both(_tool({"a": {"type": "string"}}, additionalProperties=True), {"a": "x", "b": 1})
    assert ours["ok"] is True
    assert ref["unknown_args"] == ["b"]


def test_additional_properties_schema_checks_extra_values() -> None:
    tool = _tool({"a": {"type": "string"}}, additionalProperties={"type": "integer"})
    ours, ref = _both(tool, {"a": "x", "b": "not a number"})
    assert ours["type_errors"] == ["b: expected integer, got str"]
    assert ref["unknown_args"] == ["b"]


def test_tuple_form_items_are_positional() -> None:
    """``items: [A, B]`` (and ``prefixItems``) fix each position's type; the reference reads any of them anywhere."""
    tool = _tool({"p": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}})
    ours, ref = _both(tool, {"p": [1, "a"]})
    assert ours["type_errors"] == ["p[0]: expected string, got int", "p[1]: expected integer, got str"]
    assert ref["ok"] is True


def test_an_unknown_type_name_is_a_loader_error() -> None:
    """A type name that is no JSON Schema or BFCL type is a mistake in the tool; the reference accepts any value."""
    tool = _tool({"x": {"type": "strng"}})
    with pytest.raises(LoaderError) as err:
        load_tools(tool)
    assert err.value.path == "$[0].parameters.properties.x.type"
    assert ref_validate_arguments({"name": "f", "arguments": {"x": 1}}, ref_load_tools(tool)).ok


def test_two_tools_one_canonical_name_are_refused() -> None:
    """``get_x`` and ``getX`` are one name to a model; the reference loads both and picks the first."""
    tools = [{"name": "get_x", "parameters": {}}, {"name": "getX", "parameters": {}}]
    with pytest.raises(LoaderError, match="share the canonical name"):
        load_tools(tools)
    assert len(ref_load_tools(tools).names()) == 2


def test_the_same_tool_twice_is_one_tool() -> None:
    """BFCL files repeat identical definitions; we keep one, the reference refuses the list."""
    tools = [{"name": "f", "parameters": {}}] * 2
    assert load_tools(tools).names() == ["f"]
    with pytest.raises(Exception, match="duplicate tool name"):
        ref_load_tools(tools)


def test_an_openai_tool_calls_entry_is_read_as_a_call() -> None:
    """Provider ``tool_calls`` entries nest name and arguments under ``function``; the reference sees no name."""
    call = {"id": "c1", "type": "function",
            "function": {"name": "legal_draft_v3", "arguments": '{"counterparty": "A", "value": 1, "term_months": 2}'}}
    assert validate_arguments(call, sample_toolset()).ok
    assert ref_validate_arguments(call, ref_sample_toolset()).unknown_tool


def test_a_call_that_is_not_a_mapping_is_our_error() -> None:
    """A clear ``CallError`` rather than ``dict()``'s ValueError from inside the reference."""
    with pytest.raises(CallError, match="got str"):
        validate_arguments("legal_draft_v3", sample_toolset())
    with pytest.raises(ValueError):
        ref_validate_arguments("legal_draft_v3", ref_sample_toolset())


def test_a_normalisation_profile_cannot_validate() -> None:
    """A profile with no validation rules would call everything valid; it is refused."""
    with pytest.raises(UnknownProfileError, match="only normalises"):
        validate_arguments({"name": "legal_draft_v3", "arguments": {}}, sample_toolset(), profile="strict")


# --- normalize_call --------------------------------------------------------------------------

def _normalise_both(arguments: dict, strictness: str = "normalized") -> tuple[dict, object]:
    call = {"name": "legal_draft_v3", "arguments": arguments}
    try:
        ref = ref_normalize(call, ref_sample_toolset(), strictness)
    except Exception as err:  # the reference raises where we do not
        ref = err
    return normalize_call(call, sample_tool(), strictness).arguments, ref


def test_a_one_element_list_becomes_the_scalar_the_schema_wants() -> None:
    """The spec: "a one-element list becomes a scalar where the schema wants a scalar"; the reference keeps the list."""
    ours, ref = _normalise_both({"counterparty": ["Acme"], "value": ["5"], "term_months": [12]})
    assert ours == {"counterparty": "acme", "value": 5.0, "term_months": 12}
    assert ref == {"counterparty": ["acme"], "value": ["5"], "term_months": [12]}


def test_commas_are_thousands_separators_only_in_groups_of_three() -> None:
    """``"7,000"`` is 7000, but ``"7,5"`` is not 75 (it may be 7.5 in a decimal-comma locale): it is left alone."""
    ours, ref = _normalise_both({"counterparty": "A", "value": "7,5", "term_months": "1,200"})
    assert ours == {"counterparty": "a", "value": "7,5", "term_months": 1200}
    assert ref == {"counterparty": "a", "value": 75.0, "term_months": 1200}


def test_nan_where_a_string_is_wanted_becomes_text() -> None:
    """A NaN given for a string parameter becomes ``"nan"``; the reference raises ValueError from inside."""
    ours, ref = _normalise_both({"counterparty": math.nan, "value": 1, "term_months": 2})
    assert ours["counterparty"] == "nan"
    assert isinstance(ref, ValueError)


def test_an_unknown_strictness_is_refused() -> None:
    """The reference silently runs a third, undocumented mode for any other string."""
    with pytest.raises(UnknownProfileError, match="unknown strictness"):
        normalize_call({"name": "legal_draft_v3", "arguments": {}}, sample_tool(), "STRICT")
    assert ref_normalize({"name": "legal_draft_v3", "arguments": {"counterparty": " A "}}, ref_sample_toolset(),
                         "STRICT") == {"counterparty": "A"}


def test_the_study_validator_also_reads_exclusive_bounds_correctly() -> None:
    tool = _tool({"x": {"type": "number", "exclusiveMinimum": 0}})
    assert ref_validate_call({"name": "f", "arguments": {"x": 0}}, ref_load_tools(tool)) ["ok"] is True
    from toolform_rules import validate_call

    assert validate_call({"name": "f", "arguments": {"x": 0}}, load_tools(tool).tools[0]).constraint_errors == [
        "x: 0 <= exclusive minimum 0"]


def test_refcall_is_importable() -> None:  # keeps the oracle module's surface honest
    assert RefCall("f", {}).name == "f"


def test_the_canonical_form_of_a_canonical_form_is_itself() -> None:
    """Floats are rounded to 9 decimals *before* the integral test, so strict normalisation is
    idempotent; the reference tests first and rounds after (3.0000000001 → 3.0, then → 3)."""
    ours, ref = _normalise_both({"counterparty": "A", "value": 3.0000000001, "term_months": 2}, "strict")
    assert ours["value"] == 3 and type(ours["value"]) is int
    assert ref["value"] == 3.0 and type(ref["value"]) is float


def test_a_union_value_keeps_its_own_type() -> None:
    """``true`` for ``integer | boolean`` is a boolean already; the reference turns it into 1
    (and ``5`` for ``string | integer`` into ``"5"``) by trying the branches in order."""
    tool = _tool({"a": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                  "b": {"type": ["string", "integer"]}})
    call = {"name": "f", "arguments": {"a": True, "b": 5}}
    assert normalize_call(call, load_tools(tool).tools[0]).arguments == {"a": True, "b": 5}
    assert ref_normalize(call, ref_load_tools(tool), "normalized") == {"a": 1, "b": "5"}


def test_an_enum_on_an_array_node_is_checked_as_declared() -> None:
    """BFCL's get_sensor_readings_latest puts a string enum on the array itself. The value
    must then be one of the members (an enum error); the reference instead reads the node as
    a string enum and reports the list as a type error."""
    tool = _tool({"m": {"type": "array", "items": {"type": "string"}, "enum": ["temperature", "humidity"]}})
    ours, ref = _both(tool, {"m": ["temperature"]})
    assert ours["enum_errors"] == ["m: ['temperature'] not in ['temperature', 'humidity']"]
    assert ref["type_errors"] == ["m: expected string, got list"]


# --- parse_reply -----------------------------------------------------------------------------

def test_json_object_reads_every_object_of_a_reply_and_notes_it() -> None:
    """Llama 3 models write several calls as ``{…}; {…}``, and the engines serving them read
    them all; json_object does too, with a note that the protocol asks for one. The
    reference reads the first and drops the rest."""
    from reference import ref_load_tools as _load
    from toolform.sdk import parse_reply as ref_parse_reply

    from toolform_rules import parse_reply

    text = ('{"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 1, "term_months": 2}}; '
            '{"name": "legal_draft_v3", "arguments": {"counterparty": "B", "value": 3, "term_months": 4}}')
    ours = parse_reply(text, sample_toolset(), "json_object")
    assert [c.arguments["counterparty"] for c in ours.calls] == ["A", "B"] and "2 JSON values" in ours.note
    ref = ref_parse_reply(text, ref_sample_toolset(), "json_object")
    assert [c.arguments["counterparty"] for c in ref.calls] == ["A"]
    assert _load  # the oracle module is the only way the reference is reached


# --- values JSON cannot hold, and tools that cannot be used as written (issue 28) --------------

@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_number_that_is_not_finite_is_a_type_error(bad: float) -> None:
    """NaN and infinity are no JSON numbers: refused, never compared with a bound. The reference passes
    them, and ``value: NaN`` or ``Infinity`` satisfies its ``minimum: 0``."""
    call = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": bad, "term_months": 12}}
    ours = validate_arguments(call, sample_toolset()).to_dict()
    ref = ref_validate_arguments(call, ref_sample_toolset()).to_dict()
    assert ours["type_errors"] == ["value: expected number, got float (not a finite number)"]
    assert ref["ok"] is True


def test_a_string_that_is_not_unicode_is_a_type_error() -> None:
    """A lone surrogate (``"\\ud800"`` in JSON) is no Unicode text, so no executor may receive it; the
    reference passes it as a string."""
    call = {"name": "legal_draft_v3", "arguments": {"counterparty": "\ud800", "value": 1, "term_months": 12}}
    ours = validate_arguments(call, sample_toolset()).to_dict()
    ref = ref_validate_arguments(call, ref_sample_toolset()).to_dict()
    assert ours["type_errors"] == ["counterparty: expected string, got str (not valid Unicode text)"]
    assert ref["ok"] is True


def test_a_pattern_that_does_not_compile_is_announced() -> None:
    """The spec skips a pattern that cannot compile, and so do we under sdk — but the toolset says so
    (a warning naming the tool and path), and the jsonschema profile refuses the tool. The reference
    skips it in silence."""
    tool = _tool({"x": {"type": "string", "pattern": "(unclosed"}})
    ours = load_tools(tool)
    assert any("(unclosed" in warning and "properties.x.pattern" in warning for warning in ours.warnings)
    assert validate_arguments({"name": "f", "arguments": {"x": "y"}}, ours).ok
    with pytest.raises(LoaderError):
        validate_arguments({"name": "f", "arguments": {"x": "y"}}, ours, profile="jsonschema")
    ref_tools = ref_load_tools(tool)
    assert not getattr(ref_tools, "warnings", None)
    assert ref_validate_arguments({"name": "f", "arguments": {"x": "y"}}, ref_tools).to_dict()["ok"] is True
