"""The code family reads long hostile replies in linear time (issue 10, "linear and bounded").

For each protocol of the family and each shape of ``bench/hostile.py`` (prose, key_value,
open_brackets, open_tags, call_like, huge_argument), and for floods aimed at each part of the
readers, the cost of 500 KB is at most a small multiple of ten times the cost of 50 KB
(``support.growth``: a ratio of the process's CPU time, never a speed; ``bench/hostile.py``
measures the speed), and a real call written after 500 KB of open brackets is still found.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.growth import GROWN, assert_grows_linearly
from toolform_rules import Limits, ToolCall, sample_toolset
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import INTERNAL_ERROR
from toolform_rules.protocols.code_family import BLANK, PY_QUOTING, Closer, Quoting, outside
from toolform_rules.protocols.graphql_call import GQL_QUOTING
from toolform_rules.protocols.sexpr_call import SEXPR_QUOTING
from toolform_rules.protocols.sql_call import SQL_QUOTING

PROTOCOLS = ("python_call", "python_list_call", "bfcl_python_list", "bracket_call", "graphql_call", "sql_call",
             "sexpr_call", "python_tag")
MB = 1_000_000
TOOLS = sample_toolset()
CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 5, "term_months": 12})


def _load_hostile() -> Any:
    path = Path(__file__).resolve().parents[2] / "bench" / "hostile.py"
    spec = importlib.util.spec_from_file_location("bench_hostile", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOSTILE = _load_hostile()
SHAPES: tuple[str, ...] = HOSTILE.SHAPES


@functools.cache
def hostile(shape: str, size: int, protocol_id: str) -> str:
    """The shape's text (the same for every protocol, except ``huge_argument``: its own call)."""
    if shape != "huge_argument":
        protocol_id = "python_call"
    return str(HOSTILE.hostile_text(shape, size, protocol_id))


@functools.cache
def warmed(protocol_id: str) -> Any:
    """The protocol, its grammars built (each shape read once, small)."""
    protocol = get_protocol(protocol_id)
    for shape in SHAPES:
        protocol.parse(hostile(shape, 2_000, protocol_id), TOOLS)
        protocol.parse(hostile(shape, 2_000, protocol_id))
    return protocol


def no_internal_error(notes: tuple[str, ...]) -> None:
    assert not any(INTERNAL_ERROR in note for note in notes), notes


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_long_hostile_reply_is_read_in_linear_time(protocol_id: str, shape: str) -> None:
    protocol = warmed(protocol_id)
    extraction = assert_grows_linearly(lambda text: protocol.parse(text, TOOLS),
                                       lambda size: hostile(shape, size, protocol_id), context=(protocol_id, shape))
    no_internal_error(extraction.notes)
    if shape == "huge_argument":  # one real call, its argument the whole reply
        assert [c.name for c in extraction.calls] == ["legal_draft_v3"], extraction.notes
        assert len(extraction.calls[0].arguments["counterparty"]) == GROWN


@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_call_after_half_a_megabyte_of_open_brackets_is_found(protocol_id: str) -> None:
    protocol = warmed(protocol_id)
    text = hostile("open_brackets", MB // 2, protocol_id) + "\n" + protocol.render_calls([CALL])
    extraction = protocol.parse(text, TOOLS)
    no_internal_error(extraction.notes)
    assert [(c.name, c.arguments) for c in extraction.calls] == [(CALL.name, dict(CALL.arguments))], extraction.notes
    span = extraction.calls[0].span
    assert span is not None and span[0] > MB // 2, span


#: floods beyond the bench's shapes, each aimed at one part of the readers: the call heads,
#: the bracket matcher (runs of openers, alternating brackets, quotes that open no string —
#: each used to be read again to the end of the text), candidates that never close
FLOODS = {"list of calls opened": "[f(", "known call opened": "legal_draft_v3(", "openers": "((",
          "empty parentheses": "()", "escaped single quotes": "'\\", "escaped double quotes": '"\\',
          "apostrophes and a list": "it's [f(a=1) ", "s-expression opened": "(legal_draft_v3 :a ",
          "statement opened": "SELECT legal_draft_v3(", "anonymous operation opened": "\n{ f(",
          "marked bare word": "<|python_tag|>legal_draft_v3(x)\n", "lists of bare words": "[legal_draft_v3(x)] ",
          "digits before parentheses": "9(", "numbers before parentheses": "999("}


@pytest.mark.parametrize("flood", FLOODS)
@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_long_flood_is_read_in_linear_time(protocol_id: str, flood: str) -> None:
    protocol = warmed(protocol_id)
    unit = FLOODS[flood]
    extraction = assert_grows_linearly(lambda text: protocol.parse(text, TOOLS),
                                       lambda size: "f(" + (unit * (size // len(unit) + 1))[:size],
                                       context=(protocol_id, flood))
    no_internal_error(extraction.notes)


def test_a_scan_past_the_budget_is_noted() -> None:
    """Brackets the matcher could not reach within the reply's budget: no call, and a note naming the limit."""
    extraction = warmed("python_call").parse("f(" + "()" * 400_000)
    assert extraction.calls == () and any("Limits.reply_scan_steps" in note for note in extraction.notes), \
        extraction.notes


# ---------------------------------------------------------------------------------------------
# the bracket matcher against a naive one (the same answers, in whatever order it is asked)

def naive_close(text: str, open_pos: int, quoting: Quoting) -> int:
    """Just past the bracket closing the one at ``open_pos`` (-1: never), reading from it one
    character at a time: a quote (with its prefix) opening a complete string skips it, any other
    quote is an apostrophe."""
    quotes = [q for q in "\"'" if quoting.stops.match(q)]
    depth = 0
    pos = open_pos
    while pos < len(text):
        c = text[pos]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return pos + 1
        elif c in quotes or c in quoting.prefixes.get(text[pos + 1:pos + 2], ""):
            closed = quoting.string.match(text, pos)
            if closed is not None:
                pos = closed.end()
                continue
        pos += 1
    return -1


QUOTINGS = {"python": PY_QUOTING, "graphql": GQL_QUOTING, "sql": SQL_QUOTING, "sexpr": SEXPR_QUOTING}


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="(([]{}'''\"\"\\\\\nab eE)", max_size=40), data=st.data())
@pytest.mark.parametrize("syntax", QUOTINGS)
def test_the_bracket_matcher_answers_as_a_naive_one(syntax: str, text: str, data: Any) -> None:
    """Asked about one bracket first, the matcher gives the naive answer (a later question may be
    answered from an earlier scan, which read the text from another place)."""
    opens = [i for i, c in enumerate(text) if c in "([{"]
    if not opens:
        return
    first = data.draw(st.sampled_from(opens))
    quoting = QUOTINGS[syntax]
    assert Closer(text, quoting).close(first) == naive_close(text, first, quoting), (text, first)


def test_the_caps_come_from_the_limits_passed() -> None:
    protocol = warmed("python_call")
    text = "First f(a=1), then g(b=2)."
    assert [c.name for c in protocol.parse(text).calls] == ["f", "g"]
    capped = protocol.parse(text, limits=Limits(reply_candidates=1))
    assert [c.name for c in capped.calls] == ["f"] and "Limits.reply_candidates" in " ".join(capped.notes), capped


# --- the text outside the calls (quoted in a note) ---------------------------------------------------

_WORD_RUN = re.compile(r"\S+")
_PIECES = st.sampled_from(list("ab ;\n\t") + ["\x1c", "\x85", "\xa0", "\u2028", "\u3000", "xyz", "  ", "\x0b"])


def _outside_by_words(text: str, spans: list[tuple[int, int]], start: int, keep: int) -> str:
    """What ``outside`` gives, by its definition: the words of the gaps one by one, until past ``keep``."""
    gaps, pos = [], start
    for first, last in spans:
        if first > pos:
            gaps.append((pos, first))
        pos = max(pos, last)
    if pos < len(text):
        gaps.append((pos, len(text)))
    if all(BLANK.fullmatch(text, first, last) for first, last in gaps):
        return ""
    words: list[str] = []
    length = 0
    for first, last in gaps:
        for word in _WORD_RUN.finditer(text, first, last):
            words.append(word.group())
            length += len(word.group()) + 1
            if length > keep:
                return " ".join(words)
    return " ".join(words)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=80).map("".join), st.data(), st.integers(0, 30))
def test_the_text_outside_the_calls_is_what_its_words_say(text, data, keep):
    """``outside`` splits bounded slices in C and cuts at the first space past ``keep``: the same
    text as taking the gaps' words one by one (Unicode white space, words cut by a slice, white
    space runs longer than a slice)."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    spans = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    start = data.draw(st.integers(0, len(text)))
    assert outside(text, spans, start=start, keep=keep) == _outside_by_words(text, spans, start, keep)


def test_the_text_outside_the_calls_reads_a_megabyte_of_white_space_in_linear_time():
    for make in (lambda size: " " * size + "word", lambda size: "a " * (size // 2), lambda size: "x" * size):
        assert_grows_linearly(lambda text: outside(text, [(0, 1)]), make)
