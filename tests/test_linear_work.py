"""Every reader's work grows linearly with the reply (issue 10, "linear and bounded"): counted, never timed.

Each check reads one shape at 2 KB and at 20 KB through the public path (``get_protocol(id).parse``,
``parse_reply``, ``parse_stream``) and asserts that the bigger reply took about 10x the Python
steps at most (16x: ``support.work``; lines run and functions entered, the same count on every
run; a reader that reads the rest of the text again from each candidate takes ~100x).  The
shapes are ``bench/hostile.py``'s six for every protocol, read under the default limits and with
the budgets of characters lifted (the readers are linear by themselves on them, not only cut
short by a budget); then the floods aimed at one part of a family's readers, each of which once
cost quadratic time, under the limits a user gets (a reader may read a candidate again as long as a
budget bounds how often: ``Limits`` holds what one reply may cost).  Work in C (a regular
expression, ``str.find``) is one step however far it reads: ``make bench`` times every protocol
on 1 MB of each hostile shape (docs/performance.md).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from support.work import assert_work_grows_linearly, load_hostile
from toolform_rules import Limits, ToolCall, get_protocol, load_tools, parse_reply, parse_stream, protocol_ids
from toolform_rules import sample_toolset

TOOLS = sample_toolset()
HOSTILE = load_hostile()
#: the budgets of characters, steps and tokens a reply's reading spends, lifted past any size read
#: here (the readers of the six hostile shapes are linear without them); the budgets of how many
#: candidates, call heads and segments are read stay
LIFTED = Limits(reply_grammar_chars=10**9, reply_document_chars=10**9, reply_scan_steps=10**9,
                reply_ast_tokens=10**9, reply_recovery_chars=10**9, syntax_probe_chars=10**9)
DEFAULT = Limits()
LIMITS = {"default limits": DEFAULT, "budgets lifted": LIFTED}


def repeated(before: str, unit: str, after: str = "") -> Callable[[int], str]:
    """Replies of ``size`` characters: ``unit`` repeated between ``before`` and ``after``."""
    return lambda size: before + (unit * (size // len(unit) + 1))[:size] + after


def hostile(shape: str, protocol_id: str) -> Callable[[int], str]:
    """Replies of ``size`` characters of one of ``bench/hostile.py``'s shapes."""
    return lambda size: HOSTILE.hostile_text(shape, size, protocol_id)


def around(before: str, make: Callable[[int], str], after: str) -> Callable[[int], str]:
    """Replies of ``make(size)`` between ``before`` and ``after``."""
    return lambda size: before + make(size) + after


def answered(extraction: Any, context: Any) -> Any:
    """The reading ended in an answer, not in the guard against the reader's own errors."""
    assert not any("internal error" in note for note in extraction.notes), (context, extraction.notes[:3])
    return extraction


def assert_linear(protocol_id: str, make: Callable[[int], str], limits: Limits = DEFAULT, tools: Any = TOOLS,
                  context: Any = None, small: int = 2_000) -> Any:
    """The protocol's reading of ``make(size)`` grows linearly, and answers."""
    protocol = get_protocol(protocol_id)
    extraction = assert_work_grows_linearly(lambda text: protocol.parse(text, tools, limits=limits), make, small,
                                            context=(protocol_id, context))
    return answered(extraction, (protocol_id, context))


# ---------------------------------------------------------------------------------------------
# every protocol, bench/hostile.py's six shapes


@pytest.mark.parametrize("protocol_id", protocol_ids("all"))
def test_every_hostile_shape_is_read_in_linear_work(protocol_id: str) -> None:
    for limits_name, limits in LIMITS.items():
        for shape in HOSTILE.SHAPES:
            extraction = assert_linear(protocol_id, hostile(shape, protocol_id), limits, context=(shape, limits_name))
            if shape != "huge_argument":
                assert not any(call.name == "legal_draft_v3" for call in extraction.calls), (protocol_id, shape)


@pytest.mark.parametrize("limits", LIMITS)
def test_a_reply_with_no_call_is_probed_and_validated_in_linear_work(limits: str) -> None:
    """``parse_reply``: the other protocols' probe of a reply the asked one finds no call in, and the
    validation of a call with a huge argument."""
    for shape in HOSTILE.SHAPES:
        reply = assert_work_grows_linearly(lambda text: parse_reply(text, TOOLS, "json_object", limits=LIMITS[limits]),
                                           hostile(shape, "json_object"), small=1_000, context=shape)
        assert "internal error" not in reply.note, (shape, reply.note[:200])


@pytest.mark.parametrize("protocol_id", ["hermes", "json_object", "xml_generic_call", "pythonic"])
def test_a_stream_fed_a_character_at_a_time_does_linear_work(protocol_id: str) -> None:
    """The looks at the moments a call may close (closing tags, brackets back to balance) are budgeted:
    text that closes a tag or a bracket every few characters still costs work linear in its length."""

    def feed_all(text: str) -> int:
        stream = parse_stream(TOOLS, protocol_id)
        for char in text:
            stream.feed(char)
        return len(stream.close().calls)

    for unit in ("<a></a>", "{}", "}", ">", "[(", "<tool_call>{}</tool_call>"):
        assert_work_grows_linearly(feed_all, repeated("", unit), small=300, context=(protocol_id, unit))


# ---------------------------------------------------------------------------------------------
# the code family: floods aimed at the call heads, the bracket matcher and the last resort

CODE = ("python_call", "python_list_call", "bfcl_python_list", "bracket_call", "graphql_call", "sql_call",
        "sexpr_call", "python_tag")
#: each once read again to the end of the text from every place: runs of openers, alternating
#: brackets, quotes that open no string, candidates that never close
CODE_FLOODS = {"list of calls opened": "[f(", "known call opened": "legal_draft_v3(", "openers": "((",
               "empty parentheses": "()", "escaped single quotes": "'\\", "escaped double quotes": '"\\',
               "apostrophes and a list": "it's [f(a=1) ", "s-expression opened": "(legal_draft_v3 :a ",
               "statement opened": "SELECT legal_draft_v3(", "anonymous operation opened": "\n{ f(",
               "marked bare word": "<|python_tag|>legal_draft_v3(x)\n", "lists of bare words": "[legal_draft_v3(x)] ",
               "digits before parentheses": "9(", "numbers before parentheses": "999("}
#: how each Python-syntax protocol writes a reply of calls: what comes before and after them
WRITE = {"python_list_call": ("[", "]"), "bfcl_python_list": ("[", "]"), "bracket_call": ("[", "]"),
         "python_call": ("", ""), "python_tag": ("<|python_tag|>", "<|eom_id|>")}
#: aimed at the last resort (calls that are not valid Python): quotes that never end a string,
#: calls that never close, a long argument holding raw line breaks and its own quotes
RECOVERY_FLOODS = {
    "unterminated quotes": repeated("legal_draft_v3(a=", "'"),
    "a='x fragments": repeated("legal_draft_v3(", "a='x "),
    "a='x fragments in a list": repeated("[legal_draft_v3(", "a='x, "),
    "line-broken calls": repeated("", "legal_draft_v3(a='x\n"),
    "quotes before a keyword with no =": repeated("legal_draft_v3(a='", "x', b "),
    "heredoc": repeated("legal_draft_v3(counterparty='", "echo 'it's done' >> log\n", "')"),
}
RECOVERY_LIMITS = {"default limits": DEFAULT, "earlier budgets raised": Limits(reply_scan_steps=10**7,
                                                                               reply_ast_tokens=10**8)}


@pytest.mark.parametrize("protocol_id", CODE)
def test_floods_of_call_heads_and_brackets_are_read_in_linear_work(protocol_id: str) -> None:
    for flood, unit in CODE_FLOODS.items():
        assert_linear(protocol_id, repeated("f(", unit), context=flood)


@pytest.mark.parametrize("protocol_id", sorted(WRITE))
def test_floods_of_calls_that_are_not_valid_python_are_read_in_linear_work(protocol_id: str) -> None:
    """Under the default limits, and with the budgets of the readers before the last resort raised, so
    that the last resort reads every size within its own."""
    before, after = WRITE[protocol_id]
    for limits_name, limits in RECOVERY_LIMITS.items():
        for flood, make in RECOVERY_FLOODS.items():
            assert_linear(protocol_id, around(before, make, after), limits, context=(flood, limits_name))
    heredoc = assert_linear(protocol_id, around(before, RECOVERY_FLOODS["heredoc"], after), LIFTED, context="heredoc")
    assert [(call.name, len(call.arguments["counterparty"])) for call in heredoc.calls] == [("legal_draft_v3", 20_000)]


def test_the_text_around_the_calls_is_quoted_in_linear_work() -> None:
    """What a note quotes of the text outside the calls: white space, words, one long word."""
    for filler in (" ", "a ", "x"):
        assert_linear("python_call", repeated("f(a=1) ", filler, " word"), context=filler)


# ---------------------------------------------------------------------------------------------
# the JSON family: runs that once took quadratic time somewhere in the family

JSON = ("json_object", "json_array", "jsonl_call", "code_block_json", "native", "slot_fill_call", "two_step_call",
        "tool_call_tags")
#: ``(before, unit, after)``: the unit repeated to the size
JSON_FLOODS = {
    "open brackets": ("", "[", ""), "open braces": ("", "{", ""), "closers then openers": ("", "][", ""),
    "open names": ("", '{"name": ', ""), "empty tags": ("", "<tool_call>", ""), "empty fences": ("", "```", ""),
    "an open string": ('{"a": "', "x", ""), "open arrays in an object": ("{", '"a": [', ""),
    "tags opening objects": ("", "<tool_call>{", ""), "fences opening objects": ("", "```json\n{", ""),
    "lines opening objects": ("", "a\n{", ""), "open strings": ("", '{"a": "', ""),
    "quotes": ("", "'", ""), "double quotes": ("", '"', ""), "backslashes": ("", "\\", ""),
    "calls": ("", '{"name": "f", "arguments": {"a": 1}}\n', ""),
    # once a value has run to the end of the reply, each later block ends at its first marker
    "values after a break": ('<tool_call>{"a": </tool_call><tool_call>', "[1] ", "</tool_call>"),
    "tags in strings": ('<tool_call>["', '</tool_call><tool_call>["x', ""),
    "tags in open strings": ('<tool_call>{"a": "', '</tool_call><tool_call>{"a": "x', ""),
    # one group of brackets of each hostile kind
    "a group of empty lists": ("{", "[]", ""), "a group of empty strings": ("{", '"",', ""),
    "a group of open objects": ("", '[{"a":', ""), "a group of nested lists": ("{", "[" * 9 + "]" * 9, "}"),
}
#: the same, for code_block_json's fences: each block is read once, and so is each value in it
FENCED_FLOODS = {"fenced values after a break": ('```json\n{"a": ```\n```json\n', "[1] ", "```"),
                 "fences in strings": ('```json\n["', '```\n```json\n["x', "")}


@pytest.mark.parametrize("protocol_id", JSON)
def test_json_floods_are_read_in_linear_work(protocol_id: str) -> None:
    floods = {**JSON_FLOODS, **(FENCED_FLOODS if protocol_id == "code_block_json" else {})}
    for flood, (before, unit, after) in floods.items():
        extraction = assert_linear(protocol_id, repeated(before, unit, after), context=flood)
        if flood in FENCED_FLOODS:
            assert extraction.calls == () and 0 < len(extraction.notes) <= 21, extraction.notes[:3]


#: replies of one shape, each unit a call (or an object) that writes keys twice
DUPLICATES = {
    "json_array": ("[", '{"name": "f", "name": "f", "arguments": {"a": 1, "a": {"b": 2, "b": 3}}}, ', "{}]"),
    "json_object": ("", '{"name": "f", "arguments": {"a": 1, "a": "x:y"}} ', ""),
    "native": ('{"tool_calls": [', '{"function": {"name": "f", "arguments": "{\\"a\\": 1, \\"a\\": 2}"}}, ', "{}]}"),
    "hermes": ("", '<tool_call>\n{"name": "f", "arguments": {"a": 1, "a": 2}}\n</tool_call>\n', ""),
    "qwen3_coder_xml": ("", "<tool_call>\n<function=f>\n<parameter=a>1</parameter>\n<parameter=a>2</parameter>\n"
                            "</function>\n</tool_call>\n", ""),
    "one object": ("[{", '"a": 1, "a": 2, ', '"b": 0}]'),
}


@pytest.mark.parametrize("shape", DUPLICATES)
def test_keys_given_twice_are_found_in_linear_work(shape: str) -> None:
    before, unit, after = DUPLICATES[shape]
    extraction = assert_linear("json_array" if shape == "one object" else shape,
                               lambda size: before + unit * (size // len(unit)) + after, context=shape)
    if shape != "one object":
        assert extraction.calls and all(call.duplicates for call in extraction.calls[:-1])


# ---------------------------------------------------------------------------------------------
# the text and markup families

TEXT = ("cli_call", "csv_call", "key_value_call", "pipe_call", "symbolic_call", "table_call", "url_call")
#: lines that make the text formats look for a call after a prose lead-in (``Sure! tool_name|...``)
LEAD_INS = {"marks on one line": "Sure! so. legal_draft_v3 x: ",
            "marks on short lines": "Sure! so. legal_draft_v3 x: y\n",
            "unknown calls after a lead-in": "Note: other_tool|a=1 ★b§c --d e,f | g |\n",
            "known calls after a lead-in": "Sure! legal_draft_v3|counterparty=A ★a§b --c d,e | f |\n"}
#: ``(protocol, before, unit, after)``: unclosed functions and stray closes of the tag formats, and
#: the other spellings xml_call reads (MiniCPM's, the legacy one) left open or full of sections
MARKUP_FLOODS = {
    "unclosed functions": ("function_tags", "", "<function=x>", ""),
    "unclosed parameters": ("function_tags", "", "<function=x>\n<parameter=a>\n1\n</tool_call>\n", ""),
    "stray closes": ("function_tags", "", "<tool_call><function=x></tool_call></tool_call>", ""),
    "parameters before functions": ("function_tags", "", "  <parameter=a><function=x>", ""),
    "unclosed MiniCPM calls": ("xml_call", "", '<function name="x"><param name="y">', "</param>"),
    "unclosed sections in values": ("xml_call", "", '<invoke name="x"><parameter name="y"><![CDATA[', "</param>"),
    "sections in one value": ("xml_call", '<function name="x"><param name="y">', "<![CDATA[", "</param>"),
    "unclosed legacy calls": ("xml_call", "", "<invoke><tool_name>x</tool_name><parameters><a>", "</param>"),
    "legacy arguments": ("xml_call", "<invoke><tool_name>x</tool_name><parameters>", "<a>1</a><![CDATA[</a>]]>",
                         "</param>"),
}


@pytest.mark.parametrize("protocol_id", TEXT)
def test_a_long_run_of_lead_ins_is_read_in_linear_work(protocol_id: str) -> None:
    for shape, unit in LEAD_INS.items():
        assert_linear(protocol_id, repeated("", unit), context=shape)


@pytest.mark.parametrize("flood", MARKUP_FLOODS)
def test_markup_floods_are_read_in_linear_work(flood: str) -> None:
    protocol_id, before, unit, after = MARKUP_FLOODS[flood]
    assert_linear(protocol_id, repeated(before, unit, after), context=flood)


def test_xml_call_s_grammar_reads_unended_sections_in_linear_work() -> None:
    """Given all of a malformed reply (its budget lifted), the grammar takes a section no further than the
    next opening."""
    _, before, unit, after = MARKUP_FLOODS["sections in one value"]
    assert_linear("xml_call", repeated(before, unit, after), LIFTED)


# ---------------------------------------------------------------------------------------------
# the model-native formats

NATIVE = protocol_ids("native")
NATIVE_TOOLS = load_tools([{"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}}}}])


def _rendered(protocol_id: str, city: str) -> str:
    return get_protocol(protocol_id).render_calls([ToolCall("get_weather", {"city": city})])


@pytest.mark.parametrize("protocol_id", NATIVE)
def test_native_floods_are_read_in_linear_work(protocol_id: str) -> None:
    """Many calls begun and never finished; many starts of a JSON object that never closes (each failure
    costs what it read, not a count of the lines before it); for the formats whose values run to a closing
    tag, many values begun that all run to one closing tag at the end (each read once)."""
    opening = _rendered(protocol_id, "x")[:40]
    floods = {"unfinished calls": repeated("", opening),
              "unclosed tags and objects": repeated("", '<tool_call> get_weather {"city": ')}
    before, _, after = _rendered(protocol_id, "VALUE").partition("VALUE")
    if after.startswith("<"):
        floods["values run to a far closing tag"] = repeated("", before, after[:after.index(">") + 1])
    for flood, make in floods.items():
        assert_linear(protocol_id, make, tools=NATIVE_TOOLS, context=flood)


#: Gemma's dicts: one call's arguments, long in each way the reader scans them
GEMMA_DICTS = {
    "entries": lambda size: "{" + ",".join(f"k{i}:{i}" for i in range(size // 8)) + "}",
    "strings": lambda size: "{" + ",".join(f"k{i}:<escape>{i}<escape>" for i in range(size // 20)) + "}",
    "lists": lambda size: "{a:[" + "[],{}," * (size // 6) + "1]}",
    "unclosed string": lambda size: "{a:<escape>" + "x" * size,
    "unclosed list": lambda size: "{a:[" + "1," * (size // 2),
    "missing commas": lambda size: "{" + " ".join(f"k{i}:{i}" for i in range(size // 8)) + "}",
}


def test_gemma_s_dicts_are_read_in_linear_work() -> None:
    for shape, make in GEMMA_DICTS.items():
        assert_linear("gemma_call_dict", around("<start_function_call>call:f", make, "<end_function_call>"),
                      context=shape)
    call = ("<start_function_call>call:legal_draft_v3{counterparty:<escape>Acme<escape>,value:1,"
            "term_months:2}<end_function_call>\n")
    many = assert_linear("gemma_call_dict", lambda size: call * (size // len(call)), context="many calls")
    assert many.calls and many.calls[0].arguments == {"counterparty": "Acme", "value": 1, "term_months": 2}
