"""Values JSON cannot hold, in the engine: refused in every profile, written as strict JSON (issue 28).

A ``str`` with a lone surrogate is no Unicode text and a ``float`` NaN or infinity no JSON
number (``json.loads`` makes both, from ``"\\ud800"``, ``NaN``, ``Infinity``, ``1e400``).
Wherever one stands in a call's arguments, typed or not, the call is invalid with a type
finding, so no executor receives it.  Divergence from the reference: ``toolform`` 0.0.1
accepts all of them (``"value": NaN`` and ``Infinity`` pass ``minimum: 0``; a lone surrogate
passes ``type: string``) — a validator that lets NaN past a bound is wrong.
"""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules import sample_toolset, validate_arguments, validate_instance
from toolform_rules.jsonvalues import first_not_json, is_text, loads_noting_duplicates, strict_json

PROFILES = ("study", "sdk", "jsonschema")
VALID = {"counterparty": "Acme", "value": 12000, "term_months": 24, "auto_renew": False,
         "contract_details": {"contract_id": "C-1", "status": "draft"}}
NOT_JSON = st.sampled_from([float("nan"), float("inf"), float("-inf"), "\ud800", "a\udfffb", "Zürich\udc80"])
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=10)


def _places(value: object, path: tuple = ()):  # every place a value may stand: (container, key)
    if isinstance(value, dict):
        for key, item in value.items():
            yield value, key
            yield from _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield value, index
            yield from _places(item, (*path, index))


@settings(max_examples=150, deadline=None)
@given(extra=JSON_VALUES, bad=NOT_JSON, where=st.integers(0, 50), profile=st.sampled_from(PROFILES))
def test_a_value_json_cannot_hold_is_refused_wherever_it_stands(extra, bad, where, profile):
    arguments = copy.deepcopy(VALID)
    arguments["contract_details"]["notes"] = extra  # an undeclared member: open in jsonschema, unknown elsewhere
    places = list(_places(arguments))
    container, key = places[where % len(places)]
    container[key] = bad
    before = copy.deepcopy(arguments)
    report = validate_arguments({"name": "legal_draft_v3", "arguments": arguments}, sample_toolset(), profile=profile)
    assert not report.ok
    assert report.type_errors or report.unknown_args  # (study and sdk close the object: its extra key is unknown)
    assert repr(arguments) == repr(before)  # never mutated (repr: NaN is not equal to itself)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("bad, says", [(float("nan"), "not a finite number"), (float("inf"), "not a finite number"),
                                       (float("-inf"), "not a finite number")])
def test_a_number_that_is_not_finite_is_never_compared_with_a_bound(profile, bad, says):
    report = validate_arguments({"name": "legal_draft_v3", "arguments": {**VALID, "value": bad}}, sample_toolset(),
                                profile=profile)
    assert report.type_errors == [f"value: expected number, got float ({says})"]
    assert report.constraint_errors == []


@pytest.mark.parametrize("profile", PROFILES)
def test_a_string_that_is_not_unicode_is_a_type_error(profile):
    report = validate_arguments({"name": "legal_draft_v3", "arguments": {**VALID, "counterparty": "\ud800"}},
                                sample_toolset(), profile=profile)
    assert report.type_errors == ["counterparty: expected string, got str (not valid Unicode text)"]


@pytest.mark.parametrize("schema", [{}, True, {"type": "object"}, {"type": "array"},
                                    {"type": "array", "prefixItems": [{"type": "integer"}]},
                                    {"type": "object", "properties": {"b": {"type": "string"}}},
                                    {"anyOf": [{"type": "object"}, {"type": "string"}]}])
def test_where_no_type_looks_everything_must_be_a_json_value(schema):
    instance = {"a": [1, {"k": float("nan")}]} if schema != {"type": "array"} and "prefixItems" not in str(schema) \
        else [1, float("nan")]
    report = validate_instance(instance, schema)
    assert not report.ok and "not a finite number" in report.type_errors[0]
    assert validate_instance(json.loads(strict_json(instance)), schema).ok or schema == {
        "type": "array", "prefixItems": [{"type": "integer"}]}


def test_an_integer_too_long_to_write_is_named_by_its_size_in_messages():
    report = validate_arguments({"name": "legal_draft_v3", "arguments": {**VALID, "value": -10 ** 5000}},
                                sample_toolset())
    assert report.constraint_errors == ["value: <an integer of about 5,000 digits> < minimum 0"]


def test_valid_unicode_text_and_finite_numbers_pass():
    arguments = {**VALID, "counterparty": "Zürich 😀 ﬁ", "value": 1e308}
    assert validate_arguments({"name": "legal_draft_v3", "arguments": arguments}, sample_toolset()).ok


# --- strict JSON out ------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_strict_json_of_a_json_value_reads_back_the_same(value):
    assert json.loads(strict_json(value)) == value


@settings(max_examples=200, deadline=None)
@given(st.recursive(JSON_SCALARS | NOT_JSON | st.floats(), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4) | st.just("\ud801"), inner, max_size=3), max_leaves=10),
       st.booleans())
def test_strict_json_is_always_strict_json_and_utf8(value, ascii_only):
    text = strict_json(value, ensure_ascii=ascii_only)
    text.encode("utf-8")
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))


def test_is_text_and_first_not_json():
    assert is_text("plain") and is_text("😀") and not is_text("\ud83d")
    assert first_not_json({"a": {"\udc00": 1}}) == (("a", "\udc00"), "\udc00", "not valid Unicode text")
    assert first_not_json([1.5, "x", {"y": math.inf}])[0] == (2, "y")


def test_duplicate_keys_are_found_with_their_object():
    doc, repeated = loads_noting_duplicates('[{"a": 1, "a": 2, "b": {"c": 1, "c": 1, "c": 3}}]')
    assert doc == [{"a": 2, "b": {"c": 3}}]
    assert repeated == [("[0]", "a"), ("[0].b", "c")]
    assert loads_noting_duplicates('{"a": {"a": 1}}')[1] == []
