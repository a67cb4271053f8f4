"""python_call: round trips, the fast path against the grammar (the one differential property of the
Python formats' reader, for a call and for a list of calls), model-like replies against the reference,
never raising, where the grammar stopped."""

from __future__ import annotations

import ast
import warnings

import pytest
from code_family_support import (BROKEN_PYTHON, NASTY_INPUTS, OUR_TOOLS, PROPERTY, PYTHON_CALLS, ROUND_TRIP, SAMPLE,
                                 SECOND, THE_EXAMPLE, assert_agrees, assert_answers_nasty_input,
                                 assert_fast_path_reads_as_the_grammar, bfcl_calls, calls_for, damaged, python_call_source,
                                 python_value, ref_render, written)
from hypothesis import assume, event, example, given
from hypothesis import strategies as st

from support.compare import identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls
from toolform_rules import ToolCall
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.code_family.shared import (PY_STRING, PythonValues, decode_python_string, grammar_read,
                                                  py_literal, read_python)
from toolform_rules.grammar import GrammarFailure

P = get_protocol("python_call")


def fast_python(text: str, shape: str = "call"):
    """The calls of ``text`` (a call, or a list of calls, white space around it) as the fast path
    reads them; ``None`` where it declines (the grammar decides)."""
    begin = len(text) - len(text.lstrip())
    read = read_python(text, begin, len(text), shape)
    return read[0] if read is not None and not text[read[1]:].strip() else None


def grammar_calls(text: str, shape: str = "call"):
    """The calls of ``text`` as the grammar reads them (the slow path): python_call's, or for a list of
    calls python_list_call's."""
    return grammar_read("python_call" if shape == "call" else "python_list_call", PythonValues(), text)


def test_registered() -> None:
    assert P.info.id == "python_call" and P.info.parallel and not P.info.text_values


# --- round trips --------------------------------------------------------------------------------

@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_through_the_grammar(calls: list[ToolCall]) -> None:
    """The grammar alone reads every rendered reply exactly too (not only the fast path)."""
    text = P.render_calls(calls)
    found = [(c.name, dict(c.items)) for c in grammar_calls(text)]
    assert_calls(found, [(c.name, dict(c.arguments)) for c in calls], identical, context=text)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_rendered_replies_take_the_fast_path(drawn) -> None:
    """What we write is read by the fast path (the speed of the usual case), as the grammar reads it."""
    _, calls = drawn
    for line in P.render_calls(calls).split("\n"):
        assert_calls(written(fast_python(line)), written(grammar_calls(line)), identical, context=line)


def test_a_keyword_name_continued_over_a_line_is_read_as_python_does() -> None:
    text = 'f(é=1, a \\\n= "日")'
    for read in (fast_python(text), grammar_calls(text)):
        assert_calls(written(read), [("f", [("é", 1), ("a", "日")])], identical, context=text)


def test_the_example_is_the_reference_rendering() -> None:
    text = P.render_calls([THE_EXAMPLE, SECOND])
    assert text == ref_render("python_call", [THE_EXAMPLE, SECOND])
    assert text.splitlines()[0] == ('legal_draft_v3(counterparty="Acme, \\"Ltd\\"", value=1200.5, term_months=12, '
                                    "auto_renew=True, contract_details={'contract_id': 'C-1', 'status': 'draft'})")
    assert P.example(THE_EXAMPLE) == text.splitlines()[0]
    assert_round_trip(P, [THE_EXAMPLE, SECOND], SAMPLE)


def test_values_that_need_care() -> None:
    arguments = {"s": "", "t": "  pad  ", "u": "a\\b\n\"c\"'d'\r\t\x00\u2028é🙂", "n": 1e-07, "m": -0.0, "i": 10**20,
                 "b": False, "z": None, "o": {"": [], "k w": {"x": [{"y": None}]}}, "a": [[], {}, "", 1.5]}
    text = P.render_calls([ToolCall("f", arguments)])
    extraction = P.parse(text)
    assert_calls([(c.name, c.arguments) for c in extraction.calls], [("f", arguments)], identical, context=text)
    assert extraction.compliant
    assert_calls([(c.name, dict(c.items)) for c in grammar_calls(text)], [("f", arguments)], identical, context=text)


def test_infinity_reads_back_and_nan_has_no_literal() -> None:
    """No Python literal is NaN; infinity is written 1e999, which reads back as infinity."""
    infinite = P.parse(P.render_calls([ToolCall("f", {"x": float("inf"), "y": float("-inf")})]))
    assert [c.arguments for c in infinite.calls] == [{"x": float("inf"), "y": float("-inf")}]
    not_a_number = P.parse(P.render_calls([ToolCall("f", {"x": float("nan")})]))
    assert [c.arguments for c in not_a_number.calls] == [{"x": "nan"}]


# --- the fast path reads what the grammar reads ----------------------------------------------------

#: what may damage a call: the characters the grammar gives a meaning to
JUNK = st.text(alphabet="'\"\\()[]{},:=#;-+.eE0xN u\n\r", min_size=1, max_size=3)
DIGITS_AND_FORMS = ('math.factorial((1, 2), a=+3, b=r"\\d", c=0x1F, d="a" "b", e=1_000, f=.5e-3)', "math.factorial",
                    [(None, [1, 2]), ("a", 3), ("b", "\\d"), ("c", 31), ("d", "ab"), ("e", 1000), ("f", 0.0005)])
GAPS_AND_WORDS = ("f(a='x', # a comment\n b=u'''y\nz''', c=(('w')), d=- 2, e=celsius, g=(celsius))", "f",
                  [("a", "x"), ("b", "y\nz"), ("c", "w"), ("d", -2), ("e", "celsius"), ("g", "celsius")])


@PROPERTY
@given(drawn=st.lists(python_call_source(), min_size=1, max_size=2), shape=st.sampled_from(["call", "list"]),
       junk=st.one_of(st.just(""), JUNK), where=st.integers(min_value=0))
@example(drawn=[DIGITS_AND_FORMS], shape="call", junk="", where=0)
@example(drawn=[GAPS_AND_WORDS, DIGITS_AND_FORMS], shape="list", junk="", where=0)
def test_the_fast_path_reads_what_the_grammar_reads(drawn, shape: str, junk: str, where: int) -> None:
    """The Python formats' one hand-written reader, held to their grammar: calls as a model writes them
    (one, or a list of calls) it reads, as the grammar reads them; damaged, it reads nothing the grammar
    refuses, and what it reads it reads as the grammar does."""
    sources = [text for text, _, _ in drawn[:1 if shape == "call" else 2]]
    text = sources[0] if shape == "call" else "[" + ", ".join(sources) + "]"
    if not junk:
        assert_calls(written(grammar_calls(text, shape)), [(name, items) for _, name, items in drawn[:len(sources)]],
                     identical, context=text)
    text = damaged(text, junk, where)
    fast = fast_python(text, shape)
    event(f"{shape}{', damaged' if junk else ''}: {'read' if fast is not None else 'declined'}")
    assert_fast_path_reads_as_the_grammar(fast, lambda text: grammar_calls(text, shape), text, must_read=not junk)


@pytest.mark.parametrize("text", ["l. egal_draft_v3()", "math . factorial(number=5)", "f(True=1)", "f(a=[None.x])",
                                  "f(a={1, 2})", "f(a='x\ny')", "f(a=[1] [0])", "f(x)", "f(a=(x, y))", "f(a=-x)"])
def test_the_fast_path_refuses_what_the_grammar_refuses(text: str) -> None:
    with pytest.raises(GrammarFailure):
        grammar_calls(text)
    assert fast_python(text) is None


@PROPERTY
@given(value=python_value())
def test_python_literals_written_by_us_read_back(value) -> None:
    """A value we write reads back exactly, by keyword and by position, through the grammar and the fast path."""
    source = py_literal(value)
    for text, key in ((f"f(x={source})", "x"), (f"f({source})", None)):
        assert_calls(written(grammar_calls(text)), [("f", [(key, value)])], identical, context=text)
        assert_calls(written(fast_python(text)), [("f", [(key, value)])], identical, context=text)


@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
       quote=st.sampled_from(['"', "'", '"""', "'''"]), prefix=st.sampled_from(["", "r", "u", "R"]))
@example(text="\\N{BULLET}\\x41\\101\\u00e9\\U0001F642\\q\\\n", quote='"', prefix="")
def test_string_decoding_is_pythons(text: str, quote: str, prefix: str) -> None:
    token = prefix + quote + text + quote
    assume(PY_STRING.fullmatch(token[len(prefix):]))  # one literal (' + '' is two, concatenated)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(token, mode="eval")
        except (SyntaxError, ValueError):
            tree = None
    assume(tree is not None and isinstance(tree.body, ast.Constant) and isinstance(tree.body.value, str))
    assert decode_python_string(token) == tree.body.value


# --- replies as models write them ---------------------------------------------------------------

AGREE = [
    'legal_draft_v3(counterparty="Acme", value=3, term_months=4)',
    'Sure! legal_draft_v3(counterparty="a", value=1) done',
    "```python\nlegal_draft_v3(counterparty='Acme', value=1200.5, term_months=12, auto_renew=True)\n```",
    'legal_draft_v3(counterparty="a")\nprobe_tool(s="b")',
    'legal_draft_v3(counterparty="a"); probe_tool(s="b")',
    'LegalDraftV3(counterparty="a", value=2)',
    "legal_draft_v3(counterparty='it\\'s', value=1e3, term_months=-3, auto_renew=true)",
    'legal_draft_v3(counterparty="""tri\nple""", value=r"\\d")',
    'legal_draft_v3(\n  counterparty="a",\n  value=2,\n)',
    'I will call legal_draft_v3 now: legal_draft_v3(counterparty="a")',
    'x = legal_draft_v3(counterparty="a")',
    'print(legal_draft_v3(counterparty="a"))',
    'legal_draft_v3(counterparty="a" "b", value=+3, term_months=0x1F)',
    'legal_draft_v3(counterparty="\\u00e9\\x41\\N{BULLET}")',
    'legal_draft_v3()',
    'legal_draft_v3(counterparty=Acme)',
    'probe_tool(s="x", o={"k": [1, 2.5, None, True]}, a=[{"k": "v"}])',
    "I'd use legal_draft_v3(counterparty=\"a\") and then probe_tool(s=\"b\") to finish.",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_agrees(P, text)


DIVERGE = [
    # positional values: bound to the schema's parameter order (the reference keeps _pos0, _pos1, ...)
    ('legal_draft_v3("Acme", 5, 12)', [("legal_draft_v3", {"counterparty": "Acme", "value": 5, "term_months": 12})]),
    ('legal_draft_v3("Acme", 5, term_months=12)', [("legal_draft_v3", {"counterparty": "Acme", "value": 5,
                                                                       "term_months": 12})]),
    # a call to a tool the toolset lacks, standing alone, is still the model's call (the reference
    # drops it, so the validator can never report the unknown tool)
    ('ghost(a=1)', [("ghost", {"a": 1})]),
    ('créer_contrat(nom="x")', [("créer_contrat", {"nom": "x"})]),
    ('math.factorial(number=5)', [("math.factorial", {"number": 5})]),
    # null is JSON's None (the reference keeps the text "null")
    ('legal_draft_v3(counterparty=null, value=1)', [("legal_draft_v3", {"counterparty": None, "value": 1})]),
    # a tuple is an array (the reference keeps a Python tuple, which no JSON schema type names)
    ("legal_draft_v3(counterparty=('a', 1))", [("legal_draft_v3", {"counterparty": ["a", 1]})]),
    # an unfinished argument is no call (the reference drops the argument and keeps the call)
    ('legal_draft_v3(counterparty="a", value=)', []),
    # a call, an expression or a bare word inside a list is not a literal (the reference keeps its text)
    ('legal_draft_v3(counterparty=f(x))', []),
    ('legal_draft_v3(counterparty=[1,2,][0])', []),
    # a dotted prefix the toolset does not know is dropped (the reference keeps it and cannot resolve it)
    ('functions.legal_draft_v3(counterparty="a")', [("legal_draft_v3", {"counterparty": "a"})]),
    # **kwargs spread is no literal (the reference drops the arguments silently)
    ('legal_draft_v3(**{"counterparty": "a"})', []),
]


@pytest.mark.parametrize(("text", "expected"), DIVERGE)
def test_replies_where_we_differ_from_the_reference(text: str, expected) -> None:
    """Each case names its divergence and its reason in the comment above it."""
    assert_calls(read_calls(P, text, OUR_TOOLS), expected, identical, context=text)


def test_positional_values_without_a_tool_keep_their_places() -> None:
    assert_calls(read_calls(P, 'f("Acme", 5, x=1)'), [("f", {"_pos0": "Acme", "_pos1": 5, "x": 1})], identical)
    notes = P.parse('legal_draft_v3("a", 1, 2, 3, 4, 5, 6)', SAMPLE).notes
    assert any("no parameter left" in n for n in notes)


def test_prose_calls_to_unknown_tools_are_ignored_with_a_toolset() -> None:
    extraction = P.parse("You could print(x) or use ghost(a=1) here.", SAMPLE)
    assert extraction.calls == () and "ghost(...)" in extraction.notes[-1]
    assert [c.name for c in P.parse("Use ghost(a=1) here.").calls] == ["ghost"]


def test_compliance() -> None:
    assert P.parse('legal_draft_v3(counterparty="a")\n\nprobe_tool(s="b")').compliant
    assert P.parse('```python\nlegal_draft_v3(counterparty="a")\n```').compliant
    assert P.parse('legal-draft-v3(counterparty="a", 2)').compliant  # the grammar reads what ast cannot
    assert not P.parse('Sure: legal_draft_v3(counterparty="a")').compliant
    assert not P.parse("legal_draft_v3(counterparty=Acme)").compliant  # a bare word is not a literal
    assert not P.parse("no call here").compliant


# --- never raises; says where the grammar stopped --------------------------------------------------

@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text)
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize("name", NASTY_INPUTS)
def test_never_raises_on_nasty_inputs(name: str) -> None:
    """A broken call gives no call and a note why, a flood of calls gives calls
    (the linear tests bound the time)."""
    text, broken, holds_calls = NASTY_INPUTS[name], name in BROKEN_PYTHON, name in PYTHON_CALLS
    assert_answers_nasty_input(P, text, SAMPLE, broken=broken, holds_calls=holds_calls)
    assert_answers_nasty_input(P, text, broken=broken, holds_calls=holds_calls)


def test_a_malformed_call_says_where_the_grammar_stopped() -> None:
    extraction = P.parse('legal_draft_v3(counterparty="Acme", value=12 term_months=3)', SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    assert "line 1, column 46" in extraction.notes[0] and "expected" in extraction.notes[0]
    assert "found 'term_months'" in extraction.notes[0]
    truncated = P.parse('legal_draft_v3(counterparty="Acme", value=', SAMPLE)
    assert truncated.calls == () and "the end of the text" in truncated.notes[0]


def test_instructions() -> None:
    text = P.instructions(SAMPLE)
    assert "legal_draft_v3(" in text and "Python" in text
    assert P.instructions() and "tool_name(" in P.instructions()


# --- calls_in: what a model-native format (olmo3_pythonic) hands this protocol ------------------------

_AROUND_CALLS = st.sampled_from(["", "\n", " ", ";", "; ", "Sure.\n", "```python\n", "\n```", "f(a=1)", "g('x')",
                                 "(", ")", "'", '"', "[f(1)]", "x = ", "# note\n", "legal_draft_v3()"])


@given(st.lists(st.one_of(_AROUND_CALLS, python_call_source().map(lambda source: source[0])), max_size=5)
       .map("".join))
def test_calls_in_gives_the_calls_parse_gives(text: str) -> None:
    """``calls_in`` reads a text of plain calls alone directly; on any text it answers as ``parse`` does (with and
    without a toolset: the full reading keeps only known tools' calls in running text)."""
    for tools in (OUR_TOOLS, None):
        expected = [(call.name, call.arguments) for call in P.parse(text, tools).calls]
        assert P.calls_in(text, tools) == expected, text


def test_calls_in_gives_the_calls_parse_gives_on_the_engine_corpus_and_nasty_input() -> None:
    from engine_cases import all_cases

    texts = [case["reply"] for case in all_cases()] + list(NASTY_INPUTS.values())
    texts += ["f(a=1)\n" * 20, "f(a=1); g(b='x');", 'legal_draft_v3(counterparty="A", value=5)']
    taken = 0
    for text in texts:
        expected = [(call.name, call.arguments) for call in P.parse(text, OUR_TOOLS).calls]
        assert P.calls_in(text, OUR_TOOLS) == expected, text[:200]
        taken += bool(expected)
    assert taken > 5
