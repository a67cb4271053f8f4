"""The code family's recovery step (``code_family.recover_calls``): calls the fast path and the
grammar refuse, read as the model meant them and noted — a string holding raw line breaks or
unescaped quotes of its own kind (the two LFM2 replies of the engine cases), a set literal — while
valid Python reads exactly as before, the reading stays linear and bounded, and nothing raises.
Every Python-syntax protocol of the family shares the readers, so each test runs for all of them.
"""

from __future__ import annotations

import ast
import re

import pytest
from code_family_support import PROPERTY, SAMPLE, calls_for, python_call_source, written
from hypothesis import given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_total
from toolform_rules import Limits, ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import (RECOVERY_NOTES, RECOVERY_SPENT, Budget, PythonValues, caps,
                                                  grammar_read, recover_calls)

#: the protocols that read Python calls, and how each writes a reply of calls (``body``: the calls
#: as a list of calls, ``[...]``, without the brackets)
WRITE = {
    "python_list_call": lambda body: f"[{body}]",
    "bfcl_python_list": lambda body: f"[{body}]",
    "bracket_call": lambda body: f"[{body}]",
    "python_call": lambda body: body,
    "python_tag": lambda body: f"<|python_tag|>{body}<|eom_id|>",
}
LINE_BREAKS, QUOTES, SET = RECOVERY_NOTES["line breaks"], RECOVERY_NOTES["quotes"], RECOVERY_NOTES["set"]


def read(protocol_id: str, text: str, limits: Limits = Limits()) -> tuple[list[tuple[str, dict]], tuple[str, ...], bool]:
    """``(calls as (name, arguments), notes, compliant)`` of ``text`` read by the protocol."""
    extraction = get_protocol(protocol_id).parse(text, limits=limits)
    return [(c.name, dict(c.arguments)) for c in extraction.calls], extraction.notes, extraction.compliant


def recovery_notes(notes: tuple[str, ...]) -> list[str]:
    return [note for note in notes if any(what in note for what in RECOVERY_NOTES.values())]


@pytest.fixture(scope="module", params=sorted(WRITE))
def protocol_id(request: pytest.FixtureRequest) -> str:
    return request.param


# ---------------------------------------------------------------------------------------------
# the engine cases and what the recovery step forgives

HEREDOC = "cat > f.py << EOF\nimport csv\nprint(1)\nEOF"
SED = "sed -n '360,450p' /testbed/sympy/matrices/common.py"
#: the two LFM2 replies of tests/data/replies/engine_cases.jsonl (("lfm2_pythonic", "d81a8dac325d")
#: and ("lfm2_pythonic", "83521de5a047")), as the engine's test suite writes them
ENGINE_REPLIES = {
    "raw line breaks in a '...' string": (
        "<|tool_call_start|>[exec(command='cat > f.py << EOF\nimport csv\nprint(1)\nEOF')]<|tool_call_end|>",
        [("exec", {"command": HEREDOC})], LINE_BREAKS),
    "a '...' string holding unescaped '": (
        "<|tool_call_start|>[bash(command='sed -n '360,450p' /testbed/sympy/matrices/common.py')]<|tool_call_end|>",
        [("bash", {"command": SED})], QUOTES),
}


@pytest.mark.parametrize("case", ENGINE_REPLIES)
def test_the_engine_replies_are_read_as_the_engine_reads_them(case: str) -> None:
    text, expected, note = ENGINE_REPLIES[case]
    for protocol_id in ("python_list_call", "bfcl_python_list", "bracket_call", "python_call", "python_tag"):
        calls, notes, compliant = read(protocol_id, text)
        assert_calls(calls, expected, identical, context=(protocol_id, text))
        assert recovery_notes(notes) == [f"{expected[0][0]}: {note}"], (protocol_id, notes)
        assert not compliant


#: (the calls as written, what they hold, what the recovery step notes)
LENIENT = [
    # several arguments: a quote ends the string only before a keyword argument or the ")"
    ("bash(command='echo 'hi'\nls', timeout=5)", [("bash", {"command": "echo 'hi'\nls", "timeout": 5})],
     [LINE_BREAKS, QUOTES]),
    ('say(text="He said "no"", loud=True)', [("say", {"text": 'He said "no"', "loud": True})], [QUOTES]),
    # a "," not followed by a keyword argument does not end a keyword argument's value
    ("f(a='x', b c')", [("f", {"a": "x', b c"})], [QUOTES]),
    # a string in a list, a dict and a tuple ends before its item's end
    ("f(a=['it's', 'x\ny'], b={'k': 'v's'}, c=('o'k',))", [("f", {"a": ["it's", "x\ny"], "b": {"k": "v's"},
                                                                  "c": ["o'k"]})], [LINE_BREAKS, QUOTES]),
    # positional values end as a tuple's items do (at a ","); a trailing comma
    ("f('a', 'b\nc',)", [("f", {"_pos0": "a", "_pos1": "b\nc"})], [LINE_BREAKS]),
    ("f('it's', k='v')", [("f", {"_pos0": "it's", "k": "v"})], [QUOTES]),
    # escapes are read as Python reads them; a raw \r\n is one line break, as in a source file
    (r"f(a='x\ty\'s' z" + "\r\n" + "w')", [("f", {"a": "x\ty's' z\nw"})], [LINE_BREAKS, QUOTES]),
    # strings side by side are joined, as Python joins them
    ("f(a='x' 'y\nz')", [("f", {"a": "xy\nz"})], [LINE_BREAKS]),
    # sets (valid Python, outside the literal subset): a list in order of first appearance, equal
    # items once (True == 1, as in a set)
    ("tag(labels={'urgent', 'bug', 'urgent'})", [("tag", {"labels": ["urgent", "bug"]})], [SET]),
    ("f(a={3, 1, True, 2.0, None}, b={'k': {'x'}})", [("f", {"a": [3, 1, 2.0, None], "b": {"k": ["x"]}})], [SET]),
    # two calls, each with its own notes
    ("f(a='x\ny'), g(b={1})", [("f", {"a": "x\ny"}), ("g", {"b": [1]})], [LINE_BREAKS, SET]),
]


@pytest.mark.parametrize(("body", "expected", "noted"), LENIENT)
def test_what_the_last_resort_forgives(body: str, expected: list, noted: list[str], protocol_id: str) -> None:
    if protocol_id == "python_call" or protocol_id == "python_tag":
        body = body.replace("), ", ")\n")  # calls one a line
    calls, notes, compliant = read(protocol_id, WRITE[protocol_id](body))
    assert_calls(calls, expected, identical, context=(protocol_id, body))
    assert sorted(note.split(": ", 1)[1] for note in recovery_notes(notes)) == sorted(noted), notes
    assert not compliant


#: calls the recovery step leaves unread (the grammar's failure stands), each with its reason
UNREAD = [
    # valid Python outside the literal subset: its strings are read as Python reads them
    "f(a='x' + 'y')",
    # a set holding a list: no set in Python
    "f(a={'x', [1]})",
    # a string that never ends, or whose quotes are never followed by the end of its argument
    "f(a='x\ny)",
    "f(a='x'y)",
    # what the grammar refuses besides: a bare word as a positional value, an expression
    "f(celsius, b='x\ny')",
    "f(b='x\ny', a=1 + 2)",
]


@pytest.mark.parametrize("body", UNREAD)
def test_what_the_last_resort_leaves_unread(body: str, protocol_id: str) -> None:
    calls, notes, _ = read(protocol_id, WRITE[protocol_id](body))
    assert calls == [] and notes and not recovery_notes(notes), (body, calls, notes)


def test_a_list_missing_a_comma_is_not_misread(protocol_id: str) -> None:
    """The quote before ``) g(`` ends the string (a ``)`` follows it): the list then fails as before,
    and the calls are read one by one (or not at all) — never one string swallowing the next call."""
    calls, notes, _ = read(protocol_id, WRITE[protocol_id]('f(a="x") g(b="y\nz")'))
    assert ("f", {"a": 'x") g(b="y\nz'}) not in calls
    assert not any(QUOTES in note for note in notes), notes


def test_the_python_tag_segment_grammar_runs_before_the_last_resort() -> None:
    """After a marker, the fast path and the segment's grammar read a dashed name and a hexadecimal
    number; only what the grammar refuses goes to the recovery step."""
    calls, notes, compliant = read("python_tag", "<|python_tag|>get-weather(city='Paris', n=0x1F)<|eom_id|>")
    assert calls == [("get-weather", {"city": "Paris", "n": 31})] and compliant and not notes
    calls, notes, _ = read("python_tag", "<|python_tag|>get-weather(city='Martha's Vineyard')\nf(a=1)<|eom_id|>")
    assert calls == [("get-weather", {"city": "Martha's Vineyard"}), ("f", {"a": 1})]
    assert recovery_notes(notes) == [f"get-weather: {QUOTES}"], notes


def test_the_budget_comes_from_the_limits_and_is_noted_when_spent(protocol_id: str) -> None:
    assert caps(Limits(reply_recovery_chars=7))[-1] == 7 and Budget(Limits(reply_recovery_chars=7)).recovery == 7
    text = WRITE[protocol_id]("f(a='" + "x\n" * 500 + "')")
    assert read(protocol_id, text)[0] == [("f", {"a": "x\n" * 500})]
    calls, notes, _ = read(protocol_id, text, Limits(reply_recovery_chars=200))
    assert calls == [] and RECOVERY_SPENT in notes, notes


# ---------------------------------------------------------------------------------------------
# valid Python reads as before

def _valid_python(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


@PROPERTY
@given(drawn=st.lists(python_call_source(), min_size=1, max_size=3))
def test_valid_python_reads_as_the_grammar_reads_it_and_nothing_is_noted(drawn, protocol_id: str) -> None:
    """Calls as models write them in valid Python: what every protocol reads is what the grammar
    reads, with no note of the recovery step; the recovery step itself, asked, reads nothing."""
    body = ", ".join(text for text, _, _ in drawn)
    text = "[" + body + "]"
    by_grammar = written(grammar_read("python_list_call", PythonValues(), text))
    assert_calls(by_grammar, [(name, items) for _, name, items in drawn], identical, context=text)
    assert recover_calls(text, 0, len(text), Budget(), [], "list", len(text)) is None
    for one, _, _ in drawn:
        assert recover_calls(one, 0, len(one), Budget(), [], "call", len(one)) is None
    if protocol_id in ("python_call", "python_tag"):
        body = "\n".join(text for text, _, _ in drawn)
    if protocol_id == "python_tag" and "<|" in body:
        return  # a marker inside a string starts a segment (its renderer escapes it)
    extraction = get_protocol(protocol_id).parse(WRITE[protocol_id](body))
    assert not recovery_notes(extraction.notes), extraction.notes
    assert len(extraction.calls) == len(drawn), (body, extraction.notes)


@PROPERTY
@given(calls=calls_for(SAMPLE))
def test_rendered_calls_round_trip_with_nothing_noted(calls: list[ToolCall], protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    extraction = protocol.parse(protocol.render_calls(calls), SAMPLE)
    assert extraction.compliant and not recovery_notes(extraction.notes), extraction.notes
    assert_calls([(c.name, dict(c.arguments)) for c in extraction.calls],
                 [(c.name, dict(c.arguments)) for c in calls], identical)


#: text a model might put inside '...' without escaping it: quotes, line breaks, brackets — no
#: "," or ")" (after a quote, they would end the argument) and no backslash (an escape)
LOOSE_TEXT = st.text(alphabet="ab '\n\t=([]{}#é\"", max_size=12)
#: a quote followed by another string's opening: Python's 'a' 'b' (two strings joined)
JOINED = re.compile(r"'[ \t\n]*['\"]")


@PROPERTY
@given(a=LOOSE_TEXT, b=LOOSE_TEXT)
def test_a_model_s_unescaped_quotes_and_line_breaks_read_back(a: str, b: str, protocol_id: str) -> None:
    """``f(a='<a>', b='<b>')`` written without escaping reads back ``a`` and ``b`` — by the fast
    path when it is valid Python, else by the recovery step with its notes."""
    body = f"f(a='{a}', b='{b}')"
    if JOINED.search(a + "'") or JOINED.search(b + "'") or _valid_python(body) and ("'" in a + b or "\n" in a + b):
        return  # Python's own reading ('x' 'y' is "xy", a quote may open a comment)
    calls, notes, _ = read(protocol_id, WRITE[protocol_id](body))
    assert_calls(calls, [("f", {"a": a, "b": b})], identical, context=(protocol_id, body, notes))
    noted = {note.split(": ", 1)[1] for note in recovery_notes(notes)}
    assert (QUOTES in noted) == ("'" in a + b), notes
    assert (LINE_BREAKS in noted) == ("\n" in a + b), notes
    assert bool(noted) != _valid_python(body), (body, notes)


# ---------------------------------------------------------------------------------------------
# never raising; linear and bounded

FRAGMENTS = "'\"\\\n()[]{},:=#ab fxrR-+.01é"


@PROPERTY
@given(text=st.one_of(st.text(alphabet=FRAGMENTS, max_size=40), st.text(max_size=20)),
       prefix=st.sampled_from(["", "f(", "[f(", "f(a='", "[f(a=", "<|python_tag|>f(a='"]),
       limit=st.sampled_from([1, 10, 65_536]))
def test_never_raises_on_any_text(text: str, prefix: str, limit: int, protocol_id: str) -> None:
    text = prefix + text
    budget = Budget(Limits(reply_recovery_chars=limit))
    for shape in ("call", "list"):
        for closed_at in (None, len(text)):
            found = recover_calls(text, 0, len(text), budget, [], shape, closed_at)
            if found is not None:
                calls, end = found
                assert 0 < end <= len(text) and calls and any(call.notes for call in calls), (text, found)
    assert_total(get_protocol(protocol_id), text)
    assert_total(get_protocol(protocol_id), text, SAMPLE)


#: floods aimed at the recovery step: quotes that never end a string, calls that never close (a
#: known tool's name, so that a toolset does not pass them over)
FLOODS = {
    "unterminated quotes": lambda size: "legal_draft_v3(a=" + "'" * size,
    "a='x fragments": lambda size: "legal_draft_v3(" + ("a='x " * (size // 5 + 1))[:size],
    "a='x fragments in a list": lambda size: "[legal_draft_v3(" + ("a='x, " * (size // 6 + 1))[:size],
    "line-broken calls": lambda size: ("legal_draft_v3(a='x\n" * (size // 20 + 1))[:size],
    "quotes before a keyword with no =": lambda size: "legal_draft_v3(a='" + ("x', b " * (size // 6 + 1))[:size],
}


def heredoc(size: int) -> str:
    """One call whose argument is ``size`` characters of a file written with raw line breaks and
    apostrophes (what the recovery step reads, as far as its budget allows)."""
    line = "echo 'it's done' >> log\n"
    return "legal_draft_v3(counterparty='" + (line * (size // len(line) + 1))[:size] + "')"


#: how long a flood or an argument is here (how the reading's cost grows is bench/'s to show)
SIZE = 100_000
#: the default limits (where these floods stop at the bracket matcher's budget), and the budgets
#: before the recovery step raised (so that it reads every size, within its own)
FLOOD_LIMITS = {"default limits": Limits(),
                "earlier budgets raised": Limits(reply_scan_steps=10**7, reply_ast_tokens=10**8)}


@pytest.mark.parametrize("limits", FLOOD_LIMITS)
@pytest.mark.parametrize("flood", FLOODS)
def test_a_flood_is_not_repaired(flood: str, limits: str, protocol_id: str) -> None:
    protocol, make, chosen = get_protocol(protocol_id), FLOODS[flood], FLOOD_LIMITS[limits]
    text = WRITE[protocol_id](make(SIZE))
    for extraction in (protocol.parse(text, SAMPLE, limits=chosen), protocol.parse(text, limits=chosen)):
        assert not recovery_notes(extraction.notes), extraction.notes
    assert_total(protocol, WRITE[protocol_id](make(1000)), malformed=True)


def test_a_long_call_is_read_as_far_as_the_budget_allows(protocol_id: str) -> None:
    """A long argument: read within budgets that allow it (the recovery step's, the bracket
    matcher's, and ``ast``'s that says whether it is valid Python); past the default budgets not
    read, with a note naming the limit."""
    protocol, text = get_protocol(protocol_id), WRITE[protocol_id](heredoc(SIZE))
    big = protocol.parse(text, SAMPLE, limits=Limits(reply_recovery_chars=10**7, reply_scan_steps=10**7,
                                                     reply_ast_tokens=10**8))
    assert [(c.name, len(c.arguments["counterparty"])) for c in big.calls] == [("legal_draft_v3", SIZE)], big.notes
    assert recovery_notes(big.notes) == [f"legal_draft_v3: {note}" for note in (LINE_BREAKS, QUOTES)], big.notes
    capped = protocol.parse(text, SAMPLE, limits=Limits(reply_scan_steps=10**7, reply_ast_tokens=10**8))
    assert capped.calls == () and RECOVERY_SPENT in capped.notes, capped.notes
    unread = protocol.parse(text, SAMPLE)  # the default limits: stopped before
    assert unread.calls == () and "Limits." in " ".join(unread.notes), unread.notes


@pytest.mark.parametrize("flood", [*FLOODS, "heredoc"])
def test_the_recovery_step_reads_a_flood_within_its_text(flood: str) -> None:
    """With a budget larger than the text, the recovery step reads each flood to its end at most (what
    it spends is what it looked at), and repairs only the one call."""
    text = FLOODS.get(flood, heredoc)(SIZE)
    budget = Budget(Limits(reply_recovery_chars=10**8))
    found = recover_calls(text, 0, len(text), budget, [], "list" if text.startswith("[") else "call")
    assert (found is not None) == (flood == "heredoc"), found
    assert 0 < 10**8 - budget.recovery <= len(text)
