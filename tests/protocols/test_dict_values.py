"""Gemma's call arguments (``{key:<escape>text<escape>,n:3}``): the JSON reading and the scan agree.

``read_dict`` first rewrites an object as JSON for the C decoder (``read_dict_as_json``) and
falls back to the token-by-token scan (``scan_dict``) when JSON would not read it as the scan
does.  The property: on any text, ``read_dict`` answers exactly what the scan answers — the
same values, the same end, the same message where reading stops.  The texts are written as
the format allows and as models damage it: missing, doubled and spaced commas, Unicode white
space, keys JSON would not take, bare words, NaN, strings holding either quote marker,
brackets, quotes and the JSON reader's own placeholder, surrogate pairs written as two
characters, nesting to the depth limit and past it, cut anywhere.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolform_rules.protocols.native_formats import dict_values
from toolform_rules.protocols.native_formats.dict_values import (
    MAX_DEPTH, read_dict, read_dict_as_json, scan_dict, write_dict)

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


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(["a", "n", "b_c", "x-y.z", "ключ"]), _VALUES, max_size=5), st.data())
def test_reading_as_json_answers_what_the_scan_answers(value: dict, data: st.DataObject) -> None:
    text = _damaged(_written(value, data), data)
    before = data.draw(st.sampled_from(["", "call:f", "x<escape>"]))
    after = data.draw(st.sampled_from(["", "<end_function_call>", "}", " {b:1}", "<escape>"]))
    whole = before + text + after
    assert read_dict(whole, len(before), QUOTES) == scan_dict(whole, len(before), QUOTES)
    as_json = read_dict_as_json(whole, len(before), QUOTES)
    assert as_json is None or as_json == scan_dict(whole, len(before), QUOTES)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(["a", "n", "b_c", "x-y.z", "_k9"]), _VALUES, max_size=5),
       st.sampled_from(QUOTES))
def test_what_the_renderer_writes_is_read_as_json(value: dict, quote: str) -> None:
    """The fast reading is the one taken for the format as written: every object ``write_dict``
    writes that the scan reads back whole is read as JSON (a key the format's names do not
    allow, like ``ключ``, or a string holding its own quote marker, the scan does not read back),
    but for a text holding the JSON reading's placeholder (``\\x01``, a control character), which
    it leaves to the scan."""
    text = write_dict(value, quote)
    suffix = "<end_function_call>"
    if scan_dict(text + suffix, 0, QUOTES) != (value, len(text)) or "\x01" in text:
        return
    assert read_dict_as_json(text + suffix, 0, QUOTES) == (value, len(text))


_SKELETON_PIECES = ["{", "}", "[", "]", ",", ":", "a", "b_c", "x-y.z", "ключ", "1a", "1", "-2.5e+3", "01", "true",
                    "nul", "\x01", " ", "\n", "'", "k" * 256, "a:", ",b_c:", "1a:", "ключ:", "-x:", ",k:", ".k:"]


def _decoded(written: str) -> Any:
    """The value JSON reads in a skeleton (each string an empty one), or None where it reads none."""
    text = written.replace("\x01", '""')
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return value if end == len(text) else None


def _general(skeleton: str) -> tuple[int, str] | None:
    closed = dict_values._closing(skeleton)
    if closed is None or closed < 0:
        return None
    keyed = dict_values._JSON_KEY.split(skeleton[:closed])
    keyed[1::2] = map(dict_values._IN_QUOTES, keyed[1::2])
    return closed, "".join(keyed)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.lists(st.sampled_from(_SKELETON_PIECES), max_size=24).map(lambda pieces: "{" + "".join(pieces)),
                 st.builds(lambda value, data: _damaged(_written(value, data), data),
                           st.dictionaries(st.sampled_from(["a", "n", "b_c", "x-y.z", "ключ"]), _VALUES, max_size=5),
                           st.data())
                 .map(lambda text: "\x01".join(text.replace('<|"|>', "<escape>").split("<escape>")[0::2]))
                 .filter(lambda skeleton: skeleton.startswith("{"))))
def test_the_plain_way_reads_what_the_general_way_reads(skeleton: str) -> None:
    """An object written as the renderer writes it has its keys quoted by three replacements; where
    that way answers, the general way (the brackets counted one by one, each key found by a pattern)
    finds the same end and quotes keys that JSON reads to the same value.  The skeletons (the text
    outside the strings, each string ``\x01``): pieces at random, and the texts of the test above."""
    plain = dict_values._plain_keys_quoted(skeleton)
    if plain is None:
        return
    general = _general(skeleton)
    assert general is not None and plain[0] == general[0]
    assert _decoded(plain[1]) == _decoded(general[1])


@pytest.mark.parametrize("skeleton", ["{a:\x01,n:-1.5e3,t:true,o:{b:null,c:{d:\x01}},e:0}", "{_k9:1}",
                                      "{a:{b:{c:1}},d:2}", "{" + ",".join(f"k{i}:{i}" for i in range(60)) + "}"])
def test_what_the_renderer_writes_goes_the_plain_way(skeleton: str) -> None:
    plain = dict_values._plain_keys_quoted(skeleton + "<end_function_call> and after, {x:1}")
    assert plain is not None and plain[0] == len(skeleton)
    assert _decoded(plain[1]) == _decoded(_general(skeleton)[1]) is not None


@pytest.mark.parametrize("skeleton", ["{a:[1]}", "{a: 1}", "{a:{b:{c:{d:1}}}}", "{a:1,}", "{}", "{a:{}}", "{1a:1}",
                                      "{a+b:1}", "{é:1}", "{" + "k" * 257 + ":1}", "{a:1"])
def test_anything_else_goes_the_general_way(skeleton: str) -> None:
    assert dict_values._plain_keys_quoted(skeleton) is None


@pytest.mark.parametrize("text", ["{a:<e>x<e>,n:1}", "{n:1,a:<e>x<e>}", "{a:[<e>x<e>,1]}"])
def test_a_marker_written_outside_the_strings_is_left_to_the_scan(text: str) -> None:
    """Where a quote marker is also JSON (here ``1``), the scan opens a string at it: JSON must not
    read it as a number."""
    quotes = ("<e>", "1")
    assert read_dict_as_json(text, 0, quotes) is None
    assert read_dict(text, 0, quotes) == scan_dict(text, 0, quotes) == "the closing 1"


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_the_depth_limit_is_the_scans(depth: int) -> None:
    text = "{a:" + "[" * (depth - 1) + "1" + "]" * (depth - 1) + "}"
    assert read_dict(text, 0, QUOTES) == scan_dict(text, 0, QUOTES)
    if depth > MAX_DEPTH:
        assert read_dict(text, 0, QUOTES) == f"at most {MAX_DEPTH} levels of nesting"
        assert read_dict_as_json(text, 0, QUOTES) is None
    else:
        assert read_dict_as_json(text, 0, QUOTES) is not None
