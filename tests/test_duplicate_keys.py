"""A call that writes a key twice is ambiguous (issue 28): a reader that keeps the first value sees another call.

Under the default rule (``main``, and ``symmetric``) the call is kept with the last value, as JSON parsers
read it, and says so: a repair line ``duplicate key "value" in the arguments: the last value is used`` (and
a note); under ``as_written`` it is refused, its reason naming the key.  Every syntax with keys does this:
JSON objects (the JSON family, the model-native formats, ReAct's Action Input, a function's JSON body),
repeated parameters and keywords (XML, Python, the text formats), YAML and TOML mappings.
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import ref_sample_toolset
from toolform.sdk import parse_reply as ref_parse_reply
from toolform_rules import ToolCall, get_protocol, parse_reply, parse_stream, protocol_ids, sample_toolset
from toolform_rules.replies.provider_calls import parse_native
from toolform_rules.replies.formats.duplicates import may_repeat, reread

TOOLS = sample_toolset()
NAME = "legal_draft_v3"
#: rendered with this key where "value" should stand a second time, then renamed in the text
_AGAIN = "zzagain"
ARGUMENTS = {"counterparty": "Acme", "value": 5, _AGAIN: 7, "term_months": 12}
REPAIR = 'duplicate key "value" in the arguments: the last value is used'

#: every protocol whose syntax gives an argument by its key (csv_call is positional, table_call starts a new
#: call when a row repeats an argument, url_call reads a repeated query parameter as a list)
KEYED = [p for p in protocol_ids("study") if p not in ("csv_call", "table_call", "url_call")]
NATIVE = ["hermes", "llama3_json", "mistral_name_args", "qwen3_coder_xml", "functionary_v32", "deepseek_v3",
          "json_array_tagged", "mistral_json_array", "granite_json_array", "apertus_name_key", "command_r7b_action",
          "function_tag_json", "minimax_m1_jsonl", "internlm2_action"]
#: the formats whose notes say it in their own words (they noted a repeated key before issue 28)
OWN_WORDS = {"python_call", "python_list_call", "bfcl_python_list", "python_tag", "bracket_call", "sql_call",
             "graphql_call", "sexpr_call", "cli_call", "key_value_call", "pipe_call", "symbolic_call", "nl_intent",
             "nl_intent_structured", "function_tags", "xml_call", "xml_generic_call", "yaml_call", "toml_call"}


def _twice(protocol_id: str) -> str:
    """The sample call in ``protocol_id``'s own rendering, with "value" given twice: 5, then 7."""
    text = get_protocol(protocol_id).render_calls([ToolCall(NAME, ARGUMENTS)])
    assert _AGAIN in text, text
    return text.replace(_AGAIN, "value")


@pytest.mark.parametrize("protocol_id", KEYED + NATIVE)
def test_a_key_given_twice_is_read_last_and_noted_under_the_default_rule(protocol_id: str) -> None:
    for rule in ("main", "symmetric"):
        reply = parse_reply(_twice(protocol_id), TOOLS, protocol_id, rule=rule)
        assert len(reply.calls) == 1 and not reply.rejected, (rule, reply)
        call = reply.calls[0]
        assert str(call.arguments["value"]) == "7" and call.resolved_name == NAME
        assert REPAIR in call.repairs
        assert "value" in reply.note and ("twice" in reply.note or "duplicate" in reply.note
                                          or "more than once" in reply.note), reply.note
        if protocol_id not in OWN_WORDS:
            assert f"{NAME}: {REPAIR}" in reply.note


@pytest.mark.parametrize("protocol_id", KEYED + NATIVE)
def test_a_key_given_twice_is_refused_as_written(protocol_id: str) -> None:
    reply = parse_reply(_twice(protocol_id), TOOLS, protocol_id, rule="as_written")
    assert not reply.calls and len(reply.rejected) == 1 and not reply.ok
    refused = reply.rejected[0]
    assert refused.accepted is False and refused.resolved_name == NAME
    assert refused.reason == 'duplicate key "value" in the arguments: as written the call is ambiguous'


def test_the_issue_s_reply() -> None:
    text = ('{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 5, "value": -1, '
            '"term_months": 12}}')
    main = parse_reply(text, TOOLS, "json_object")
    assert main.calls[0].arguments["value"] == -1 and main.calls[0].repairs == (REPAIR,)
    assert main.note == f"legal_draft_v3: {REPAIR}"
    assert main.calls[0].validation["constraint_errors"] == ["value: -1 < minimum 0"]
    written = parse_reply(text, TOOLS, "json_object", rule="as_written")
    assert written.rejected[0].reason == 'duplicate key "value" in the arguments: as written the call is ambiguous'


@pytest.mark.parametrize("protocol_id", ["json_object", "native", "tool_call_tags", "react", "python_call", "xml_call",
                                         "function_tags", "yaml_call", "toml_call", "key_value_call", "cli_call"])
def test_the_reference_reads_the_last_value_silently(protocol_id: str) -> None:
    """Divergence from the reference: it keeps the last value and says nothing, under every rule (the call is
    accepted as written); we keep the last value with a repair line (and a note) naming the key, and refuse
    the call as written."""
    text = _twice(protocol_id)
    for rule in ("main", "as_written"):
        ref = ref_parse_reply(text, ref_sample_toolset(), protocol_id, rule=rule).to_dict()
        assert len(ref["calls"]) == 1 and not ref["rejected"] and ref["note"] == ""
        assert str(ref["calls"][0]["arguments"]["value"]) in ("7", "7.0") and ref["calls"][0]["repairs"] == []
        ours = parse_reply(text, TOOLS, protocol_id, rule=rule)
        assert (REPAIR in ours.calls[0].repairs) if rule == "main" else (ours.rejected and not ours.calls)


_NESTED = '"contract_details": {"contract_id": "C-1", "status": "draft", "status": "final"}'
NESTED_REPAIR = 'duplicate key "status" in the arguments at contract_details: the last value is used'


@pytest.mark.parametrize("protocol_id, text", [
    ("json_object", '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", %s}}' % _NESTED),
    ("json_array", '[{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", %s}}]' % _NESTED),
    ("tool_call_tags", '<tool_call>\n{"name": "legal_draft_v3", "arguments": {%s}}\n</tool_call>' % _NESTED),
    ("two_step_call", 'legal_draft_v3\n{"counterparty": "Acme", %s}' % _NESTED),
    ("react", 'Action: legal_draft_v3\nAction Input: {"counterparty": "Acme", %s}' % _NESTED),
    ("function_tags", '<function=legal_draft_v3>{"counterparty": "Acme", %s}</function>' % _NESTED),
    ("hermes", '<tool_call>\n{"name": "legal_draft_v3", "arguments": {%s}}\n</tool_call>' % _NESTED),
    ("mistral_name_args", '[TOOL_CALLS]legal_draft_v3{"counterparty": "Acme", %s}' % _NESTED),
    ("native", json.dumps({"tool_calls": [{"type": "function", "function": {
        "name": "legal_draft_v3", "arguments": '{"counterparty": "Acme", %s}' % _NESTED}}]})),
    ("yaml_call", "name: legal_draft_v3\narguments:\n  contract_details:\n    status: draft\n    status: final\n"),
    ("yaml_call", "name: legal_draft_v3\narguments:\n  contract_details: {status: draft, status: final}\n"),
    ("toml_call", '[[call]]\nname = "legal_draft_v3"\n\n[call.arguments]\ncontract_details = {status = "draft", '
                  'status = "final"}\n'),
    ("toml_call", '[[call]]\nname = "legal_draft_v3"\n\n[call.arguments.contract_details]\nstatus = "draft"\n'
                  'status = "final"\n'),
])
def test_a_key_given_twice_inside_a_nested_object_is_named_by_its_path(protocol_id: str, text: str) -> None:
    main = parse_reply(text, TOOLS, protocol_id)
    call = main.calls[0]
    assert call.arguments["contract_details"]["status"] == "final"
    assert NESTED_REPAIR in call.repairs, call.repairs
    written = parse_reply(text, TOOLS, protocol_id, rule="as_written")
    assert written.rejected[0].reason.startswith('duplicate key "status" in the arguments at contract_details')


@pytest.mark.parametrize("protocol_id, text, place, value", [
    ("json_object", '{"name": "legal_draft_v3", "name": "LegalDraftV3", "arguments": {"value": 5}}',
     '"name" in the call object', 5),
    ("json_object", '{"name": "legal_draft_v3", "arguments": {"value": 5}, "arguments": {"value": 6}}',
     '"arguments" in the call object', 6),
    ("json_object", '{"name": "legal_draft_v3", "value": 5, "value": 6}', '"value" in the arguments', 6),
    ("native", '{"type": "function", "function": {"name": "legal_draft_v3", "arguments": "{}", '
               '"arguments": "{\\"value\\": 6}"}}', '"arguments" in the call object', 6),
    ("native", '{"type": "function", "type": "function", "function": {"name": "legal_draft_v3", "arguments": '
               '"{\\"value\\": 6}"}}', '"type" in the call object', 6),
    ("hermes", '<tool_call>\n{"name": "legal_draft_v3", "arguments": {"value": 5}, "arguments": {"value": 6}}\n'
               '</tool_call>', '"arguments" in the call object', 6),
    ("llama3_json", '{"name": "legal_draft_v3", "name": "legal_draft_v3", "parameters": {"value": 6}}',
     '"name" in the call object', 6),
    ("yaml_call", "name: legal_draft_v3\narguments:\n  value: 5\narguments:\n  value: 6\n",
     '"arguments" in the call object', 6),
])
def test_a_key_of_the_call_object_given_twice(protocol_id: str, text: str, place: str, value: int) -> None:
    call = parse_reply(text, TOOLS, protocol_id).calls[0]
    assert call.arguments["value"] == value
    assert f"duplicate key {place}: the last value is used" in call.repairs, call.repairs
    assert parse_reply(text, TOOLS, protocol_id, rule="as_written").rejected[0].reason.startswith(
        f"duplicate key {place}")


@pytest.mark.parametrize("text", [
    "{'name': 'legal_draft_v3', 'arguments': {'value': 5, 'value': 6,},}",  # the lenient reader in C
    "{'name': 'legal_draft_v3', 'arguments': {'value': 5 , 'value': 6 ,}}",  # the grammar
    '{"name": "legal_draft_v3", "arguments": "{\'value\': 5, \'value\': 6}"}',  # arguments as text
])
def test_json_as_models_write_it(text: str) -> None:
    call = parse_reply(text, TOOLS, "json_object").calls[0]
    assert call.arguments["value"] == 6 and call.repairs == (REPAIR,)


def test_colons_inside_strings_are_not_keys() -> None:
    arguments = {"counterparty": "https://acme.example/x?t=10:30", "value": 5, "term_months": 12}
    for protocol_id in ("json_object", "hermes", "native"):
        text = get_protocol(protocol_id).render_calls([ToolCall(NAME, arguments)])
        reply = parse_reply(text, TOOLS, protocol_id, rule="as_written")
        assert reply.calls and not reply.calls[0].repairs and "duplicate" not in reply.note
        twice = text.replace('"value": 5', '"value": 5, "value": 6')
        assert parse_reply(twice, TOOLS, protocol_id).calls[0].repairs == (REPAIR,)


def test_a_colon_written_as_an_escape_does_not_hide_a_key_given_twice() -> None:
    text = '{"name": "legal_draft_v3", "arguments": {"value": 5, "value": "\\u003a"}}'
    assert parse_reply(text, TOOLS, "json_object").calls[0].repairs == (REPAIR,)
    plain = '{"name": "legal_draft_v3", "arguments": {"counterparty": "\\u003a", "value": 5}}'
    assert parse_reply(plain, TOOLS, "json_object").calls[0].repairs == ()


def test_two_calls_each_with_its_own() -> None:
    text = ('[{"name": "legal_draft_v3", "arguments": {"value": 1, "value": 2}}, '
            '{"name": "legal_draft_v3", "arguments": {"value": 3, "term_months": 4, "term_months": 5}}]')
    first, second = parse_reply(text, TOOLS, "json_array").calls
    assert first.repairs == (REPAIR,)
    assert second.repairs == ('duplicate key "term_months" in the arguments: the last value is used',)


def test_structured_tool_calls_with_arguments_as_json_text() -> None:
    tool_calls = [{"id": "c1", "type": "function", "function": {
        "name": NAME, "arguments": '{"counterparty": "Acme", "value": 5, "value": 7, "term_months": 12}'}}]
    main = parse_native(tool_calls, TOOLS)
    assert main.calls[0].arguments["value"] == 7 and main.calls[0].repairs == (REPAIR,)
    assert main.note == f"call 1 ('{NAME}'): {REPAIR}"
    assert parse_native(tool_calls, TOOLS, rule="as_written").rejected[0].reason.startswith('duplicate key "value"')


@pytest.mark.parametrize("protocol_id", ["json_object", "tool_call_tags", "hermes", "qwen3_coder_xml", "python_call",
                                         "yaml_call"])
def test_a_stream_closes_as_the_whole_reply(protocol_id: str) -> None:
    text = "Sure.\n" + _twice(protocol_id) + "\nDone."
    for rule in ("main", "as_written"):
        stream = parse_stream(TOOLS, protocol_id, rule=rule)
        events = [event for character in text for event in stream.feed(character)]
        closed = stream.close()
        assert closed == parse_reply(text, TOOLS, protocol_id, rule=rule)
        done = [e.call for e in events + stream.final_events if e.kind == "call_done"]
        assert [c.to_dict() for c in done] == [c.to_dict() for c in closed.calls + closed.rejected]


# --- no key given twice, no word of it --------------------------------------------------------

_KEYS = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8).filter(lambda k: k[0] != "_")
_SCALARS = st.one_of(st.integers(-10**6, 10**6), st.booleans(),
                     st.text(string.ascii_letters + string.digits + " :/.-", min_size=1, max_size=12))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=6)


@pytest.mark.parametrize("protocol_id", KEYED + NATIVE)
@settings(max_examples=15, deadline=None)
@given(arguments=st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4))
def test_a_rendered_call_is_never_said_to_give_a_key_twice(protocol_id: str, arguments: dict) -> None:
    text = get_protocol(protocol_id).render_calls([ToolCall(NAME, arguments)])
    for rule in ("main", "as_written"):
        reply = parse_reply(text, TOOLS, protocol_id, rule=rule)
        assert "duplicate key" not in reply.note and "twice" not in reply.note, (text, reply.note)
        for call in reply.calls + reply.rejected:
            assert not any(r.startswith("duplicate key") for r in call.repairs), (text, call.repairs)
            assert "duplicate key" not in call.reason


# --- the look that finds them ------------------------------------------------------------------

_PAIRS = st.lists(st.tuples(st.sampled_from(["a", "b", "c:d", "e", "u://v"]),
                            st.one_of(st.integers(0, 9), st.sampled_from(["x", ":", "a:b", "\\u003a", "\\u003A",
                                                                          "http://x", "://"]))),
                  max_size=5)


def _object(pairs: list[tuple[str, object]]) -> str:
    return "{" + ", ".join(f'"{k}": ' + (f'"{v}"' if isinstance(v, str) else str(v)) for k, v in pairs) + "}"


@settings(max_examples=300, deadline=None)
@given(outer=_PAIRS, inner=_PAIRS, listed=st.booleans())
def test_the_look_never_misses_a_key_given_twice(outer: list, inner: list, listed: bool) -> None:
    """``may_repeat`` is a sound test: when it says no, no object of the text gives a key twice (colons in
    strings, escaped or not, in keys or values, whatever their number)."""
    text = _object(outer)[:-1] + (", " if outer else "") + '"arguments": ' + _object(inner) + "}"
    text = f"[{text}, {text}]" if listed else text
    value = json.loads(text)
    written_twice = len({k for k, _ in outer} | {"arguments"}) < len(outer) + 1 or \
        len({k for k, _ in inner}) < len(inner)
    if written_twice:
        assert may_repeat(value, text)
        again = reread(text)
        assert again is not None and again[0] == value and again[1]
