"""Issue 10 for the text and markup protocols: long hostile replies.

Three kinds of test:

* a real call after 500 KB of each hostile shape of ``bench/hostile.py`` is still found, for every
  protocol of the two families (that the work grows linearly is counted in
  tests/test_linear_work.py, and ``bench/hostile.py`` times it);
* the fast readers that replace a character loop (regular expressions written to run in C,
  candidate lines found by a pattern, the sentence finder) read exactly what the slow ones did —
  the old algorithms are kept here as oracles;
* the linear passes over the tag formats stop exactly where their grammar stops, and the bounded
  stretch the grammar is then given ends in the same note as the whole reply.
"""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolform_rules import ToolCall, sample_toolset
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.text_family import cli_call
from toolform_rules.replies.formats.markup_family import shared as markup_family, nl_intent
from toolform_rules.replies.formats.markup_family import nl_intent_structured, react
from toolform_rules.replies.formats.text_family import pipe_call, symbolic_call, table_call, shared as text_family
from toolform_rules.replies.formats.markup_family.shared import Stopped, grammar_stop_note, grammar_terminals

PROTOCOLS = ["function_tags", "xml_call", "xml_generic_call", "react", "yaml_call", "toml_call", "nl_intent",
             "nl_intent_structured", "cli_call", "csv_call", "key_value_call", "pipe_call", "symbolic_call",
             "table_call", "url_call"]
SHAPES = ("prose", "key_value", "open_brackets", "open_tags", "call_like", "huge_argument")
TOOLS = sample_toolset()
CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme Ltd", "value": 5, "term_months": 12})
MB = 1_000_000


def hostile(shape: str, size: int, protocol_id: str) -> str:
    """``size`` characters of ``shape``, as ``bench/hostile.py`` writes them."""
    if shape == "key_value":
        return "".join(f"key_{i}: value {i}\n" for i in range(size // 10 + 1))[:size]
    if shape == "huge_argument":  # one call of the protocol whose counterparty is the whole size
        call = ToolCall("legal_draft_v3", {"counterparty": "A" * size, "value": 5, "term_months": 12})
        return get_protocol(protocol_id).render_calls([call])
    unit = {"prose": "The quick brown fox jumps over the lazy dog, and then it rests a while. ",
            "open_brackets": "[{", "open_tags": '<tool_call> legal_draft_v3 {"counterparty": ',
            "call_like": "Call legal_draft_v3(counterparty=Acme, value=5, term_months=12 and then "}[shape]
    return (unit * (size // len(unit) + 1))[:size]


# ---------------------------------------------------------------------------------------------
# a real call after 500 KB of each hostile shape


@pytest.mark.parametrize("protocol_id", PROTOCOLS)
def test_a_real_call_after_half_a_megabyte_of_hostile_text_is_found(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    real = protocol.render_calls([CALL])
    for shape in SHAPES:
        text = hostile(shape, MB // 2, protocol_id) + "\n\n" + real + "\n"
        calls = protocol.parse(text, TOOLS).calls
        assert any(c.name == "legal_draft_v3" and c.arguments.get("counterparty") == "Acme Ltd" for c in calls), \
            (protocol_id, shape, calls[-1:])


# ---------------------------------------------------------------------------------------------
# the terminals written to run in C read what the grammar's terminals read

FAST_TERMINALS = [
    (re.compile(text_family.terminal_regex("cli_call", "WORD")), re.compile(cli_call.WORD), "a b'\"\\\n\r\t-="),
    (re.compile(text_family.terminal_regex("pipe_call", "VALUE")), pipe_call._VALUE, "ab |=\\\n\r\t"),
    (re.compile(text_family.terminal_regex("symbolic_call", "TEXT")), symbolic_call._TEXT, "ab ★§\\\n\r\t"),
    (re.compile(text_family.terminal_regex("symbolic_call", "LOOSE")), symbolic_call._LOOSE, "ab ★§\\\n\r\t[{"),
    (re.compile(text_family.terminal_regex("table_call", "CELL")), table_call._CELL, "ab |\\\n\r\t"),
]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fast_terminals_match_what_the_grammar_terminals_match(data) -> None:
    grammar, fast, alphabet = data.draw(st.sampled_from(FAST_TERMINALS))
    text = data.draw(st.text(alphabet, max_size=24))
    for pos in range(len(text) + 1):
        slow, quick = grammar.match(text, pos), fast.match(text, pos)
        assert (slow and slow.end()) == (quick and quick.end()), (grammar.pattern, text, pos)
    assert (grammar.fullmatch(text) is None) == (fast.fullmatch(text) is None), (grammar.pattern, text)


# ---------------------------------------------------------------------------------------------
# the lines a text protocol tests without a pattern are the lines it would judge one by one

LINES = {
    "cli_call": ["legal_draft_v3 --value 5", "f --a 'x", "y'", "f", "legal_draft_v3", "  $ f -x", "f \\", "prose here",
                 "f --a \"q\\\"\"", "```", "", "  ", "x" * 401, " " * 401 + "f --a 1", "f --b 2\r", "f\r",
                 "Sure! legal_draft_v3 --value 5", "Note: f --a 1", "So. legal_draft_v3", "x" * 399 + ". f --a 1"],
    "csv_call": ["legal_draft_v3,Acme,5", "f,a", "Sure, here it is.", "legal_draft_v3", "f", "prose", "", "```",
                 "x" * 401, "Sure! legal_draft_v3,Acme,5", "Ok: f,a", 'f,"a', 'b",c', "g,1\r"],
    "key_value_call": ["TOOL: f", "tool = g", "a: 1", "- b: 2", "c = 3\r", "", "prose", "```yaml", "x" * 401,
                       "TOOL:", "  a: " + "y" * 400, "a" * 401 + ": 1",
                       "Sure! TOOL: legal_draft_v3", "Here: tool = f"],
    "pipe_call": ["f|a=1", "g |b", "legal_draft_v3", "f", "f \\|", "prose", "", "```", "x" * 401, "f|a=\\",
                  "f|=x", "  h|c=3\r", " " * 397 + "```", " " * 398 + "```", "\t~~~", " " * 400 + "x",
                  "Sure! legal_draft_v3|a=1", "Note: f|b", "Ok. legal_draft_v3"],
    "symbolic_call": ["f ★a§x", "legal_draft_v3", "f", "g★b#1", "prose", "", "~~~", "x" * 401, "f ★", "f ★a¿true\r",
                      "Sure! legal_draft_v3 ★a§x", "So: f ★b#1"],
    "table_call": ["| tool | argument | value |", "|---|---|---|", "| f | a | 1 |", "|", "prose", "", "```",
                   "x" * 401, "  | g | b | 2 |\r", "| f | a |",
                   "Sure! | tool | argument | value |", "Here: |---|---|"],
    "url_call": ["POST /f?a=1", "GET /legal-draft-v3", "/g?b", "https://h.example/f?c=2", "prose", "", "```",
                 "x" * 401, "POST /f?a=b c", "/f?a=1\r",
                 "Sure! POST /legal-draft-v3?a=1", "See: /f?b"],
}


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_lines_tested_without_a_pattern_are_the_lines_judged_one_by_one(data) -> None:
    """A text protocol judges (by a pattern) only the lines that hold its ``needle`` (or may be a name
    alone): it reads every reply as it would judging each line."""
    protocol_id = data.draw(st.sampled_from(sorted(LINES)))
    lines = data.draw(st.lists(st.sampled_from(LINES[protocol_id]), max_size=8))
    text = data.draw(st.sampled_from(["\n", "\r\n", "\n\n"])).join(lines)
    protocol = get_protocol(protocol_id)
    fast = protocol.parse(text, TOOLS)
    kept = type(protocol).needle, type(protocol).fold_case
    type(protocol).needle, type(protocol).fold_case = "", False  # every line holds ""
    try:
        slow = protocol.parse(text, TOOLS)
    finally:
        type(protocol).needle, type(protocol).fold_case = kept
    assert fast == slow, (protocol_id, text)


# ---------------------------------------------------------------------------------------------
# the sentence finder of the NL protocols finds what the line-by-line finder found


def _old_in_string_after(text: str, start: int, end: int) -> bool:
    inside = False
    i = start
    while True:
        i = text.find('"', i, end) if not inside else i
        if i < 0 or i >= end:
            return inside
        if not inside:
            inside = True
            i += 1
            continue
        while i < end and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        if i >= end:
            return True
        inside = False
        i += 1


def _old_sentences(text: str, protocol, verbs: tuple[str, ...], repeated: bool) -> list[tuple[int, int]]:
    """The line-by-line sentence finder the NL protocols had (the oracle)."""
    t = grammar_terminals(protocol.grammar)
    the_ = re.compile(r"(?i)the[ \t]+")
    limit = protocol.sentences_limit
    spans: list[tuple[int, int]] = []
    line_start = 0
    n = len(text)
    while line_start <= n and len(spans) < limit:
        line_end = text.find("\n", line_start)
        if line_end < 0:
            line_end = n
        starts: list[int] = []
        for verb, after in markup_family.find_words(text, line_start, line_end, verbs):
            head = text[max(line_start, verb - 24):verb]
            prefix = protocol.frame_prefix.search(head)
            start = verb - (len(prefix.group(0)) if prefix else 0)
            if start > line_start and (text[start - 1].isalnum() or text[start - 1] in "_'"):
                continue
            if repeated and starts and start < starts[-1] + 4:
                continue
            if starts and '"' in text[starts[-1]:start] and _old_in_string_after(text, starts[-1], start):
                continue
            the = the_.match(text, after, line_end)
            tool = t["TOOL"].match(text, the.end() if the else after, line_end)
            if tool is None:
                continue
            rest = tool.end()
            if (rest >= line_end or text[rest:line_end].isspace() or t["WITH"].match(text, rest, line_end)
                    or t["END"].match(text, rest, line_end)):
                starts.append(start)
        for i, start in enumerate(starts[:limit - len(spans)]):
            end = starts[i + 1] if i + 1 < len(starts) else line_end
            while end > start and text[end - 1].isspace():
                end -= 1
            spans.append((start, end))
        line_start = line_end + 1
    return spans


WORDS = ["I will use ", "I'll call ", "Use ", "use the ", "1. ", "2) ", "let me ", "calling ", "run ", "reuse ", "f",
         " with a: 1", " with a = 1", ", b: x", ".", ". ", '"', '\\"', " and ", "\n", " tool", "x", "`g h`", " ",
         "\u0130", "\u212a", "invo\u212ae ", "USE ", "3.", "I am going to use ", "a.", "-", "`use f.` ", "g.use ",
         "the "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=16).map("".join))
def test_sentence_spans_are_the_old_finders(text: str) -> None:
    intent, structured = nl_intent.PROTOCOL, nl_intent_structured.PROTOCOL
    assert intent.spans(text) == _old_sentences(text, intent, intent.verbs, True), text
    assert structured.spans(text) == _old_sentences(text, structured, ("use", "call"), False), text


def test_sentence_spans_stop_at_the_limit() -> None:
    text = "use f. " * 1000
    intent = nl_intent.PROTOCOL
    assert intent.spans(text) == _old_sentences(text, intent, intent.verbs, True)
    assert len(intent.spans(text)) == intent.sentences_limit


# ---------------------------------------------------------------------------------------------
# the tag formats' linear passes read what the grammar reads and stop where it stops


def X(text: str) -> str:
    return text.replace("‹", "<").replace("›", ">")


def _assert_stops_like_the_grammar(text: str, fast, grammar_read, what: str) -> None:
    """``fast`` stopped; the grammar stops too, and every bounded stretch it is given says the same."""
    try:
        grammar_read(text)
    except GrammarFailure as failure:
        whole = f"{what} could not be read: {failure.describe()}"
    else:  # pragma: no cover - a disagreement
        raise AssertionError(("the grammar reads it", text))
    assert grammar_stop_note(text, fast, grammar_read, limit=len(text) + 1, what=what).notes[0] == whole, text
    first = fast.resumes[0]
    if fast.end > fast.end - first > 0:  # the best stretch that does not start at the reply's start
        cut = grammar_stop_note(text, fast, grammar_read, limit=fast.end - first, what=what).notes[0]
        assert cut == whole, (text, fast, cut, whole)


FUNCTION_TAGS = ["‹tool_call›", "‹/tool_call›", "‹function=f›", "‹function=g›", "‹/function›", "‹parameter=a›",
                 "‹parameter=b›", "‹/parameter›", "1", " ", "\n", "‹", "x", '{"a": 1}', "‹function=›",
                 "‹parameter= c ›", "‹function›", "‹/function=", "‹parameter=a\n", "‹tool_call", "‹/parameter x›"]


XML_GENERIC = ["‹call›", "‹/call›", "‹calls›", "‹/calls›", "‹tool›", "‹/tool›", "f", "‹args›", "‹/args›", "‹a›", "‹/a›",
               "‹b›", "‹item›", "‹/item›", "‹c/›", '‹arg name="x y"›', "‹/arg›", "1", " ", "\n", "&amp;", "‹",
               '‹call tool="g"›', "‹/a/›", "‹a x/›", "‹/a x›", "‹CALL›", "‹/Args ›", "‹call/›", "‹callx›", "‹tool",
               '‹calls x="1"›', "‹a ", "‹/calls", "‹args/›", "‹/tool x›", "‹/›"]


XML_CALL = ['‹function_calls›', '‹/function_calls›', '‹invoke name="f"›', '‹invoke›', '‹/invoke›',
            '‹parameter name="a"›', '‹/parameter›', '‹parameter/›', 'text', ' ', '\n', '‹', '‹invoke name="f"',
            '‹/parameter x›', '‹other›', '‹/INVOKE›']


REACT = ["Thought: x", "Action: f", "Action Input: {\"a\": 1}", "Action Input:", "**Action:** f", "Observation: 3",
         "Final Answer: ok", "prose", "", "  action input: {'b': 2}", "Action:", "Thought:"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(REACT), max_size=10).map("\n".join))
def test_react_stops_where_the_grammar_stops(text: str) -> None:
    fast = react._steps_or_stop(text)
    if isinstance(fast, Stopped):
        _assert_stops_like_the_grammar(text, fast, react._steps_by_grammar, "the steps")


def test_a_malformed_tag_late_in_a_long_reply_is_noted_where_it_stands() -> None:
    """The grammar is given a bounded stretch that ends in the same failure, its place moved into the reply."""
    text = X("‹function=f›x‹/function›\n" * 20_000 + "‹/parameter›")
    extraction = get_protocol("function_tags").parse(text)
    assert extraction.calls == ()
    assert extraction.notes[0].startswith("the tags could not be read: line 20001, column 1: expected "), extraction.notes
    steps = get_protocol("react").parse("Thought: x\n" * 50_000 + "Action Input: {}")
    assert steps.notes[0].startswith("the steps could not be read: line 50001, column 1: expected "), steps.notes


def test_the_grammar_budget_bounds_malformed_candidates_of_a_text_format() -> None:
    """Many malformed lines: the grammar reads them until the reply's budget is spent, then each is noted."""
    extraction = get_protocol("pipe_call").parse(("f|" + "a|" * 20 + "=x\n") * 2_000, TOOLS)
    assert extraction.calls == ()
    assert any("could not be read: line 1, column" in note for note in extraction.notes)
    assert any("earlier candidates took" in note for note in extraction.notes), extraction.notes[-1]
