"""The code family on long hostile replies (issue 10, "linear and bounded"): a real call written
after 500 KB of open brackets is still found, and the budgets come from the limits passed.  That
the work grows linearly is counted in tests/test_linear_work.py (the hostile shapes of
``bench/hostile.py`` and floods aimed at each part of the readers); ``bench/hostile.py`` times it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.work import load_hostile
from toolform_rules import Limits, ToolCall, sample_toolset
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.base import INTERNAL_ERROR
from toolform_rules.replies.formats.code_family.shared import BLANK, PY_QUOTING, Closer, Quoting, outside
from toolform_rules.replies.formats.code_family.graphql_call import GQL_QUOTING
from toolform_rules.replies.formats.code_family.sexpr_call import SEXPR_QUOTING
from toolform_rules.replies.formats.code_family.sql_call import SQL_QUOTING

PROTOCOLS = ("python_call", "python_list_call", "bfcl_python_list", "bracket_call", "graphql_call", "sql_call",
             "sexpr_call", "python_tag")
MB = 1_000_000
TOOLS = sample_toolset()
CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 5, "term_months": 12})
HOSTILE = load_hostile()
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


@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_call_after_half_a_megabyte_of_open_brackets_is_found(protocol_id: str) -> None:
    protocol = warmed(protocol_id)
    text = hostile("open_brackets", MB // 2, protocol_id) + "\n" + protocol.render_calls([CALL])
    extraction = protocol.parse(text, TOOLS)
    no_internal_error(extraction.notes)
    assert [(c.name, c.arguments) for c in extraction.calls] == [(CALL.name, dict(CALL.arguments))], extraction.notes
    span = extraction.calls[0].span
    assert span is not None and span[0] > MB // 2, span


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

