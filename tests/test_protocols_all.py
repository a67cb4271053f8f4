"""Every answer protocol, the same checks: registered, never raises, exact round trips.

Round trips: ``parse(render_calls(calls))`` gives back the same calls — names, arguments
and their types (through ``type_values`` for the formats that write values as text) — for
generated calls on the sample tool and on BFCL function docs, with strings holding quotes,
commas, pipes, brackets, ``=``, ``:``, newlines, spaces at both ends and unicode; nested
objects; arrays; numbers; booleans; several calls where the protocol allows them.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from support import bfcl
from support.compare import identical
from support.protocol_checks import assert_round_trip, assert_total
from toolform_rules import ToolCall, get_protocol, load_tools, protocol_ids, sample_toolset
from toolform_rules.replies.formats.json_family.slot_fill_call import TYPE_PLACEHOLDERS
from toolform_rules.samples import SAMPLE_TOOL_JSON

EXAMPLES = int(os.environ.get("ROUND_TRIP_EXAMPLES", "150"))
TRICKY = st.text(alphabet=st.sampled_from(list("aZ09 ,|=:;'\"[](){}<>&\\\n\t#%★§¿é日-_.+*/`~$!?")) |
                 st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=14)


def test_all_31_protocols_are_registered_and_load() -> None:
    ids = protocol_ids()
    assert len(ids) == 31 and len(set(ids)) == 31
    for protocol_id in ids:
        assert get_protocol(protocol_id).info.id == protocol_id


def _value(draw: Any, schema: Any, depth: int = 0) -> Any:
    if not isinstance(schema, dict):
        return draw(TRICKY)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    kind = schema.get("type")
    if kind == "string" or kind is None:
        return draw(TRICKY)
    if kind == "integer":
        return draw(st.integers(-10**6, 10**6))
    if kind in ("number", "float"):
        return draw(st.one_of(st.integers(-10**6, 10**6),
                              st.floats(-1e7, 1e7, allow_nan=False, allow_infinity=False)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind in ("array", "tuple"):
        return [_value(draw, schema.get("items", {"type": "string"}), depth + 1)
                for _ in range(draw(st.integers(0, 2 if depth < 2 else 0)))]
    if kind in ("object", "dict"):
        return _arguments(draw, schema, depth + 1) if depth < 3 else {}
    return draw(TRICKY)


def _arguments(draw: Any, schema: dict, depth: int = 0) -> dict:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {name: _value(draw, sub, depth) for name, sub in props.items()
            if name in required or draw(st.booleans())}


BFCL_TOOLS = bfcl.function_docs()


# function_tags has no escaping: a value holding its own markup cannot be written (the
# protocol's tests name this exclusion too).
_UNWRITABLE = {"function_tags": ("<tool_call>", "</tool_call>", "<function", "</function", "<parameter",
                                 "</parameter")}


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _texts(k) + _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


#: a positional format (csv_call) writes arguments in the schema's order, so key order is not compared
_SAME_VALUES = functools.partial(identical, key_order=False)


# slot_fill_call reads a value that is one of its skeleton's placeholders ("<value>") as given
# but notes it: a model that copied the skeleton's slot most likely did not fill it.
_NOTED = {"slot_fill_call": TYPE_PLACEHOLDERS}


def _round_trip(protocol_id: str, tool_json: dict, calls: list[ToolCall]) -> None:
    texts = [t for c in calls for t in _texts(c.arguments)]
    markup = _UNWRITABLE.get(protocol_id, ())
    assume(not any(m in t for t in texts for m in markup))
    noted = any(t in _NOTED.get(protocol_id, ()) for t in texts)
    assert_round_trip(get_protocol(protocol_id), calls, load_tools([tool_json]), values=_SAME_VALUES,
                      notes_allowed=noted)


@pytest.mark.parametrize("protocol_id", protocol_ids())
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_round_trip_on_the_sample_tool(protocol_id: str, data: st.DataObject) -> None:
    parallel = get_protocol(protocol_id).info.parallel
    count = data.draw(st.integers(1, 3 if parallel else 1))
    schema = SAMPLE_TOOL_JSON["parameters"]
    calls = [ToolCall("legal_draft_v3", _arguments(data.draw, schema)) for _ in range(count)]
    _round_trip(protocol_id, SAMPLE_TOOL_JSON, calls)


@pytest.mark.parametrize("protocol_id", protocol_ids())
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_round_trip_on_bfcl_function_docs(protocol_id: str, data: st.DataObject) -> None:
    doc = data.draw(st.sampled_from(BFCL_TOOLS))
    parallel = get_protocol(protocol_id).info.parallel
    count = data.draw(st.integers(1, 2 if parallel else 1))
    calls = [ToolCall(doc["name"], _arguments(data.draw, doc["parameters"])) for _ in range(count)]
    _round_trip(protocol_id, doc, calls)


NASTY = ["", " ", "\x00\xff", "{" * 50_000, "[" * 50_000, "(" * 50_000, "<" * 10_000, "a" * 1_000_000,
         '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme",', "```\n", "<tool_call>", "\n" * 1000]


@pytest.mark.parametrize("protocol_id", protocol_ids())
def test_nasty_text_never_raises(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    for text in NASTY:
        assert_total(protocol, text, sample_toolset())


@pytest.mark.parametrize("protocol_id", protocol_ids())
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text())
def test_any_text_never_raises(protocol_id: str, text: str) -> None:
    assert_total(get_protocol(protocol_id), text, sample_toolset())


@pytest.mark.parametrize("protocol_id", protocol_ids())
def test_instructions_and_example_render(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    call = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 5, "term_months": 12})
    assert protocol.instructions(sample_toolset()).strip()
    assert protocol.example(call).strip()
