"""The JSON-family protocols on long and hostile replies (issue 10).

Each protocol parses the six hostile shapes of ``bench/hostile.py`` at 200 KB and the answer is
checked (no call where the text holds none, the one call where it holds one, no internal error,
short notes).  A real call after 500 KB of open brackets is still found, so speed does not come
from giving up on long input.  That the work grows linearly, on these shapes and on the replies
that once took quadratic time somewhere in the family, is counted in tests/test_linear_work.py;
``bench/hostile.py`` times it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules import ToolCall, get_protocol, sample_toolset
from toolform_rules.limits import Limits
from toolform_rules.replies.formats.base import INTERNAL_ERROR
from toolform_rules.replies.formats.json_family.shared import value_spans
from toolform_rules.replies.formats.values import _LEVELS, GROUP, INNER, TOO_DEEP, Brackets, bracket_groups

from json_family_cases import MALFORMED_INPUTS, NASTY_INPUTS
from support.protocol_checks import assert_total

PROTOCOLS = ["json_object", "json_array", "jsonl_call", "code_block_json", "native", "slot_fill_call",
             "two_step_call", "tool_call_tags"]
SHAPES = ["prose", "key_value", "open_brackets", "open_tags", "call_like", "huge_argument"]
SIZE = 200_000
#: the size of the replies whose blocks are each noted, at most 21 notes whatever the size
LONG = 500_000
TOOLS = sample_toolset()
CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 5, "term_months": 12})


def hostile(shape: str, size: int, protocol_id: str) -> str:
    """``size`` characters of ``shape``, as ``bench/hostile.py`` writes them."""
    units = {"prose": "The quick brown fox jumps over the lazy dog, and then it rests a while. ",
             "open_brackets": "[{", "open_tags": '<tool_call> legal_draft_v3 {"counterparty": ',
             "call_like": "Call legal_draft_v3(counterparty=Acme, value=5, term_months=12 and then "}
    if shape == "key_value":
        return "".join(f"key_{i}: value {i}\n" for i in range(size // 10 + 1))[:size]
    if shape == "huge_argument":
        call = ToolCall("legal_draft_v3", {"counterparty": "A" * size, "value": 5, "term_months": 12})
        return get_protocol(protocol_id).render_calls([call])
    unit = units[shape]
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_hostile_replies_are_answered(protocol_id: str, shape: str) -> None:
    protocol = get_protocol(protocol_id)

    def check(extraction: Any, size: int) -> None:
        assert not any(INTERNAL_ERROR in note for note in extraction.notes), extraction.notes
        assert all(len(note) < 2_000 for note in extraction.notes), [note[:100] for note in extraction.notes]
        if shape == "huge_argument":
            (call,) = extraction.calls
            assert call.name == "legal_draft_v3" and call.arguments["counterparty"] == "A" * size
            assert (call.arguments["value"], call.arguments["term_months"]) == (5, 12)
            assert extraction.compliant, extraction.notes
        else:
            assert extraction.calls == (), [(c.name, c.span) for c in extraction.calls[:3]]
            assert not extraction.compliant

    check(protocol.parse(hostile(shape, SIZE, protocol_id), TOOLS), SIZE)


@pytest.mark.parametrize("text", NASTY_INPUTS + MALFORMED_INPUTS, ids=range(len(NASTY_INPUTS + MALFORMED_INPUTS)))
@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_nasty_and_malformed_replies_are_answered(protocol_id: str, text: str) -> None:
    """Each protocol answers (the per-protocol tests check what)."""
    assert_total(get_protocol(protocol_id), text, malformed=text in MALFORMED_INPUTS)


#: replies of one shape at any size, ``(before, unit, after)``: the unit repeated to the size;
#: once a value has run to the end of the reply, each later block ends at its first marker
GROWING = {"values after a break": ('<tool_call>{"a": </tool_call><tool_call>', "[1] ", "</tool_call>"),
           "tags in strings": ('<tool_call>["', '</tool_call><tool_call>["x', ""),
           "tags in open strings": ('<tool_call>{"a": "', '</tool_call><tool_call>{"a": "x', "")}


def growing(shape: tuple[str, str, str]) -> Any:
    before, unit, after = shape
    return lambda size: before + unit * (size // len(unit)) + after


@pytest.mark.parametrize("shape", ["values after a break", "tags in strings", "tags in open strings"])
def test_tagged_blocks_after_a_value_that_runs_to_the_end_are_noted_briefly(shape: str) -> None:
    extraction = get_protocol("tool_call_tags").parse(growing(GROWING[shape])(LONG))
    assert extraction.calls == () and extraction.notes and len(extraction.notes) <= 21


@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_call_after_500_kb_of_open_brackets_is_found(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    text = "[{" * 250_000 + "\n" + protocol.render_calls([CALL])
    extraction = protocol.parse(text, TOOLS)
    assert [(c.name, c.arguments) for c in extraction.calls] == [(CALL.name, CALL.arguments)], extraction.notes
    assert not extraction.compliant and extraction.notes
    (call,) = extraction.calls
    assert call.span is not None and call.span[0] > 500_000


@pytest.mark.parametrize("protocol_id", ["json_object", "json_array", "jsonl_call", "native", "slot_fill_call"])
def test_a_group_nested_too_deep_is_noted_not_read(protocol_id: str) -> None:
    """Deeper than twice ``Limits.max_depth``: no value, a note that says so; a call beside it still counts."""
    protocol = get_protocol(protocol_id)
    deep = "see " + "[" * 200 + "]" * 200
    extraction = protocol.parse(deep, TOOLS)
    assert extraction.calls == () and not extraction.compliant
    assert any("deeper than 128 levels" in note for note in extraction.notes), extraction.notes
    call = protocol.render_calls([CALL])
    assert [c.name for c in protocol.parse(deep + "\n" + call, TOOLS).calls] == [CALL.name]
    shallow = protocol.parse("[" * 20 + "]" * 20 + "\n" + call, TOOLS,
                             limits=Limits(max_depth=4))  # type: ignore[call-arg]
    assert any("deeper than 8 levels" in note for note in shallow.notes), shallow.notes


def test_the_grammar_reads_a_bounded_part_of_a_reply() -> None:
    """Two thousand malformed tagged calls: the grammar is given some of them (its budget), every one
    is still looked at, and the note says where the first one stops being JSON."""
    text = "<tool_call>{'name': 'f', 'arguments': {'a': 1 2}}</tool_call>\n" * 2_000
    extraction = get_protocol("tool_call_tags").parse(text, TOOLS)
    assert extraction.calls == ()
    assert extraction.notes[-1].startswith("no tagged call could be read: line 1, column "), extraction.notes


# The scanner against the rule it implements, written as the plain loop it replaced.

def _reference_groups(text: str, openers: str, depth: int | None) -> list[tuple[int, int, int]]:
    found, level, begin, quote, highest, i = [], 0, -1, "", 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote or ch == "\n":
                quote = ""
        elif ch in "\"'":
            if level > 0 and (ch == '"' or not (i > 0 and text[i - 1].isalnum())):
                quote = ch
        elif ch in "{[" and (level > 0 or ch in openers):
            if level == 0:
                begin, highest = i, 0
            level += 1
            highest = max(highest, level)
        elif ch in "}]" and level > 0:
            level -= 1
            if level == 0:
                found.append((begin, i + 1, TOO_DEEP if depth is not None and highest > depth else GROUP))
        i += 1
    if level > 0:
        found.append((begin, len(text), TOO_DEEP if depth is not None and highest > depth else GROUP))
    return found


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='{}[]"\'\\\nab: 1é', max_size=80), st.sampled_from(["{[", "{", "["]),
       st.sampled_from([None, 0, 1, 2, 3, 9]))
def test_bracket_groups_follow_the_quote_aware_rule(text: str, openers: str, depth: int | None) -> None:
    got = [group for group in bracket_groups(text, top=openers, depth=depth) if group[2] != INNER]
    assert got == _reference_groups(text, openers, depth)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["{", "[", "}", "]", '"a{"', "'}'", "it's", "x" * 300, '"' + "[" * 300 + '"',
                                 "{" * 20, "]" * 20, "\n", '"\\"']), max_size=40))
def test_long_groups_read_in_pieces_follow_the_same_rule(parts: list[str]) -> None:
    text = "".join(parts)
    for depth in (None, 4, 128):
        got = [group for group in bracket_groups(text, depth=depth) if group[2] != INNER]
        assert got == _reference_groups(text, "{[", depth)


def test_the_groups_inside_a_group_too_deep_are_the_outermost_complete_ones() -> None:
    text = "[" * 10 + '{"a": "]"} [1, [2]] {'
    assert list(bracket_groups(text, depth=4)) == [(0, len(text), TOO_DEEP), (10, 20, INNER), (21, 29, INNER)]
    assert value_spans(text, depth=4) == [(10, 20), (21, 29)]
    assert value_spans(text) == [(0, len(text))]
    closed = text + "]" * 3  # the group from the ninth bracket closes within four levels: it is the one
    assert list(bracket_groups(closed, depth=4)) == [(0, len(closed), TOO_DEEP), (8, len(closed), INNER)]


def test_a_group_pattern_is_compiled_when_first_asked_for_and_kept() -> None:
    """``Brackets.group[k]`` (a group of at most k levels as one match) is compiled on first use (a
    process often needs one of the eight), then the same object every time; ``[0]`` is no pattern."""
    kind = Brackets("{[", "}]")
    assert dict(kind.group) == {0: None}
    deepest = kind.group[_LEVELS]
    assert kind.group[_LEVELS] is deepest and set(kind.group) == {0, _LEVELS}
    for k in range(1, _LEVELS + 1):
        nested = "{" * k + '"}"' + "}" * k
        assert kind.group[k].fullmatch(nested), k
        assert not kind.group[k].fullmatch("[" + nested + "]"), k  # one level too deep
    with pytest.raises(KeyError):
        kind.group[_LEVELS + 1]
