"""Gemma's call arguments (``{key:<escape>text<escape>,n:3}``): one scan reads them, ``write_dict`` writes them.

The texts are written as the format allows and as models damage it: missing, doubled and
spaced commas, Unicode white space, keys the format does not take, bare words, NaN, strings
holding either quote marker, brackets, surrogate pairs written as two characters, nesting to
the depth limit and past it, cut anywhere.  Whatever the text, ``read_dict`` answers an
object and where it ends, or what was expected where reading stopped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.work import assert_work_grows_linearly as assert_grows_linearly
from toolform_rules.replies.model_formats.dict_values import MAX_DEPTH, read_dict, write_dict

QUOTES = ("<escape>", '<|"|>')
_TRICKY = ["a", "Acme Holdings", " ", "\n", "\t", "\u00a0", "\x01", "\x00", '"', "\\", "'", ",", ":", "{", "}",
           "[", "]", "<escape>", '<|"|>', "<esc", "NaN", "true", "ключ", "\ud83d\ude00", "\ud83d", "é"]
_TEXTS = st.lists(st.sampled_from(_TRICKY), max_size=5).map("".join)
_VALUES = st.recursive(
    st.one_of(_TEXTS, st.integers(-10**20, 10**20), st.floats(allow_nan=False, allow_infinity=False),
              st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["a", "n", "b_c", "x-y.z", "true", "ключ"]), inner,
                                            max_size=4)),
    max_leaves=12)
_SEPARATORS = [",", ",", ", ", ",\n  ", "", " ", ",,", "\u00a0,", ",\u2003"]
_AROUND_COLON = ["", "", " ", "\n", "\u00a0"]
_KEYS = ["a", "value", "b_c", "x-y.z", "true", "ключ", "1a", '"q"', "", "k" * 260, "<escape>a<escape>"]
_BARE = ["NaN", "Infinity", "-Infinity", "-0", "01", "1e5", "+1", "1.", "tru", "null"]


def _written(value: Any, data: st.DataObject) -> str:
    """``value`` written as models write Gemma's arguments, with the format's freedoms and its faults."""
    if isinstance(value, str):
        quote = data.draw(st.sampled_from(QUOTES))
        return quote + value + quote
    if isinstance(value, dict):
        entries = []
        for key, item in value.items():
            key = data.draw(st.sampled_from([key] * 4 + _KEYS))
            entries.append(key + data.draw(st.sampled_from(_AROUND_COLON)) + ":"
                           + data.draw(st.sampled_from(_AROUND_COLON)) + _written(item, data))
        return "{" + _joined(entries, data) + "}"
    if isinstance(value, list):
        return "[" + _joined([_written(item, data) for item in value], data) + "]"
    if data.draw(st.integers(0, 9)) == 0:
        return data.draw(st.sampled_from(_BARE))
    return json.dumps(value)


def _joined(entries: list[str], data: st.DataObject) -> str:
    out = ""
    for index, entry in enumerate(entries):
        out += (data.draw(st.sampled_from(_SEPARATORS)) if index else "") + entry
    if entries and data.draw(st.integers(0, 5)) == 0:
        out += ","  # a trailing comma
    return out


def _damaged(text: str, data: st.DataObject) -> str:
    kind = data.draw(st.sampled_from(["none", "none", "cut", "insert", "drop"]))
    if kind == "none" or not text:
        return text
    at = data.draw(st.integers(0, len(text) - 1))
    if kind == "cut":
        return text[:at]
    if kind == "insert":
        return text[:at] + data.draw(st.sampled_from(["{", "}", "[", "]", ",", ":", "<escape>", '"', "x", " "])) \
            + text[at:]
    return text[:at] + text[at + 1:]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(["a", "n", "b_c", "x-y.z", "ключ"]), _VALUES, max_size=5), st.data())
def test_any_text_is_read_or_says_where_it_stops(value: dict, data: st.DataObject) -> None:
    text = _damaged(_written(value, data), data)
    before = data.draw(st.sampled_from(["", "call:f", "x<escape>"]))
    after = data.draw(st.sampled_from(["", "<end_function_call>", "}", " {b:1}", "<escape>"]))
    whole = before + text + after
    read = read_dict(whole, len(before), QUOTES)
    if isinstance(read, str):
        assert read in ("'{'", "a key or '}'", "':'", "a value", f"at most {MAX_DEPTH} levels of nesting") \
            or read.startswith("the closing "), read
    else:
        assert isinstance(read[0], dict) and whole[read[1] - 1] == "}" and len(before) < read[1] <= len(whole)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [string for item in items for string in _strings(item)]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(["a", "n", "b_c", "x-y.z", "_k9"]), _VALUES, max_size=5),
       st.sampled_from(QUOTES))
def test_what_the_renderer_writes_is_read_back(value: dict, quote: str) -> None:
    """Every object ``write_dict`` writes is read back whole, but for a string holding a quote marker (no
    escape exists for it) or a key the format's names do not allow (``ключ``)."""
    text = write_dict(value, quote)
    if "ключ" in text or any(marker in string for string in _strings(value) for marker in QUOTES):
        return
    assert read_dict(text + "<end_function_call>", 0, QUOTES) == (value, len(text))


@pytest.mark.parametrize("text, expected", [
    ("{a:1 b:2}", ({"a": 1, "b": 2}, 9)),  # a missing comma
    ("{a:1,,b:2,}", ({"a": 1, "b": 2}, 11)),  # doubled and trailing commas
    ("{a :\u00a0<escape>x, y<escape>}", ({"a": "x, y"}, 26)),  # Unicode white space; a comma inside a string
    ('{a:<|"|>say <escape><|"|>}', ({"a": "say <escape>"}, 26)),  # a string holds the other quote marker
    ("{a:[1,{b:null}],c:-2.5e3,d:true}", ({"a": [1, {"b": None}], "c": -2500.0, "d": True}, 32)),
    ("{a:01}", "a key or '}'"),  # "0", then "1" where a key should stand
    ("{a:NaN}", "a value"), ('{"a":1}', "a key or '}'"), ("{a 1}", "':'"), ("{a:[1}", "a value"),
    ("{a:<escape>x}", "the closing <escape>"), ("[1]", "'{'"),
])
def test_what_the_format_allows_and_where_reading_stops(text: str, expected: object) -> None:
    assert read_dict(text, 0, QUOTES) == expected


@pytest.mark.parametrize("text", ["{a:<e>x<e>,n:1}", "{n:1,a:<e>x<e>}", "{a:[<e>x<e>,1]}"])
def test_a_quote_marker_opens_a_string_even_where_a_value_could_stand(text: str) -> None:
    """Where a quote marker is also a value (here ``1``), the scan opens a string at it."""
    quotes = ("<e>", "1")
    assert read_dict(text, 0, quotes) == "the closing 1"


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_nesting_deeper_than_the_limit_is_refused(depth: int) -> None:
    text = "{a:" + "[" * (depth - 1) + "1" + "]" * (depth - 1) + "}"
    nested: object = 1
    for _ in range(depth - 1):
        nested = [nested]
    expected = f"at most {MAX_DEPTH} levels of nesting" if depth > MAX_DEPTH else ({"a": nested}, len(text))
    assert read_dict(text, 0, QUOTES) == expected


@pytest.mark.parametrize("shape", ["entries", "strings", "lists", "unclosed string", "unclosed list",
                                   "missing commas"])
def test_a_long_object_is_read_in_linear_time(shape: str) -> None:
    make = {
        "entries": lambda size: "{" + ",".join(f"k{i}:{i}" for i in range(size // 8)) + "}",
        "strings": lambda size: "{" + ",".join(f"k{i}:<escape>{i}<escape>" for i in range(size // 20)) + "}",
        "lists": lambda size: "{a:[" + "[],{}," * (size // 6) + "1]}",
        "unclosed string": lambda size: "{a:<escape>" + "x" * size,
        "unclosed list": lambda size: "{a:[" + "1," * (size // 2),
        "missing commas": lambda size: "{" + " ".join(f"k{i}:{i}" for i in range(size // 8)) + "}",
    }[shape]
    read = assert_grows_linearly(lambda text: read_dict(text, 0, QUOTES), make)
    assert isinstance(read, str) == shape.startswith("unclosed")


def test_a_reply_of_many_calls_is_read_in_linear_time() -> None:
    """Each object's end is looked for in a bounded window first: a reply of many small calls
    does not read the rest of the reply once per call."""
    from toolform_rules import get_protocol, sample_toolset

    protocol, tools = get_protocol("gemma_call_dict"), sample_toolset()
    call = ("<start_function_call>call:legal_draft_v3{counterparty:<escape>Acme<escape>,value:1,"
            "term_months:2}<end_function_call>\n")
    extraction = assert_grows_linearly(lambda text: protocol.parse(text, tools),
                                       lambda size: call * (size // len(call)))
    assert extraction.calls and extraction.calls[0].arguments == {"counterparty": "Acme", "value": 1, "term_months": 2}

