"""Shared test support for the code family (python_call, python_list_call, bfcl_python_list,
python_tag, bracket_call, sql_call, graphql_call, sexpr_call): call strategies from a tool's
schema, the reference oracle, nasty inputs, call text as models write it.

Round trips, comparisons and the never-raises check are the suite's (``tests/support``).  The
code formats write typed literals, so nearly every value comes back exactly and values are
compared with :func:`support.compare.identical` (types kept apart, keys in order, the sign of
zero kept): strings with any character (quotes, commas, pipes, brackets, ``=``, ``:``, line
ends, spaces at both ends, unicode, backslashes, the empty string), ints, floats, booleans,
``None``, objects and arrays nested.  What is left out of generation, each with its reason:

* NaN and ±infinity — no format here has a literal for them (nor has JSON);
* strings with lone surrogates (``Cs``) — not encodable as UTF-8, so no reply holds them;
* for ``sql_call`` only, an object or array for a parameter with no declared type:
  SQL writes nested values as JSON text in a string, and only the schema says to read
  that text back as JSON (``type_values`` keeps text as text where no type is declared).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from typing import Any, Sequence

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from support.bfcl import record_toolsets
from support.compare import identical
from support.protocol_checks import assert_calls, assert_total, read_calls
from toolform_rules import ToolCall, Toolset, load_tools, sample_toolset
from toolform_rules.schema.ir import Schema
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.base import Protocol
from toolform_rules.replies.formats.code_family.shared import CallSyntax

#: round-trip examples per test (CI: 300; ``CODE_FAMILY_EXAMPLES=5000`` for a long run)
EXAMPLES = int(os.environ.get("CODE_FAMILY_EXAMPLES", "300"))
ROUND_TRIP = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
PROPERTY = settings(max_examples=max(100, EXAMPLES // 3), deadline=None, suppress_health_check=list(HealthCheck))

#: the characters that break naive code formats, plus ordinary ones
NASTY = ("abcXYZ019 -_.,:;=|&+%?/#$`*!~<>()[]{}\"'\\\n\t\r"
         "é中🙂★§¿≡¤\u00a0\u2028\x0b\x0c\x85\x00\x7f")
TEXT = st.one_of(
    st.text(alphabet=NASTY, max_size=16),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
    st.sampled_from(["", " ", "  lead", "trail  ", " both ", "null", "None", "true", "True", "12", "-3", "1e-07",
                     '"quoted"', "'single'", "it's", 'say "hi"', "a|b", "a=b", "a: b", "a,b", "a => b", "'';",
                     "\\", "\\n", "x\\", "\\'", '\\"', '"""', "'''", "```", "{\"a\": 1}", "[1, 2]", "(x)", "f(a=1)",
                     "SELECT f(a => 'x');", "mutation { f }", "(f :a 1)", "<|python_tag|>", "<|eom_id|>",
                     "# not a comment",
                     "-- not a comment", "; not a comment", "$x", "\\u00e9", "\\N{BULLET}", "\r\n", "E'x'"]),
)
FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([1e-07, 1200.5, 3.0, -0.5, -0.0, 1e16, 2.5e-300, 5e-324, 1.7976931348623157e308]))
INTS = st.one_of(st.integers(min_value=-10**12, max_value=10**12), st.sampled_from([0, -1, 10**20, -(10**30)]))


def json_scalar() -> st.SearchStrategy[Any]:
    """A text, number, boolean or ``None``."""
    return st.one_of(TEXT, INTS, FLOATS, st.booleans(), st.none())


def json_value(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (objects keyed by any text, arrays, scalars), nested."""
    return st.recursive(json_scalar(), lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=max_leaves)


def _kind(schema: Schema | None) -> str:
    """The first non-null type ``schema`` declares, ``"any"`` when it declares none."""
    if schema is None or not schema.types:
        return "any"
    kinds = [t for t in schema.types if t != "null"]
    return kinds[0] if kinds else "any"


@st.composite
def value_for(draw: Any, schema: Schema | None, depth: int = 0, text_values: bool = False) -> Any:
    """A value of ``schema``'s type (enums from the enum; now and then ``None``, which the code
    formats can write)."""
    if draw(st.integers(0, 19)) == 0:
        return None
    if schema is not None and schema.enum:
        return draw(st.sampled_from(list(schema.enum)))
    kind = _kind(schema)
    if kind == "string":
        return draw(TEXT)
    if kind == "integer":
        return draw(INTS)
    if kind == "number":
        return draw(st.one_of(FLOATS, INTS))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        if depth >= 3:
            return []
        items = schema.items if schema is not None else None
        return draw(st.lists(value_for(items, depth + 1, text_values), max_size=3))
    if kind == "object":
        if depth >= 3:
            return {}
        if schema is not None and schema.properties:
            return draw(arguments_for(schema, depth + 1, text_values))
        return draw(st.dictionaries(TEXT, json_value(4), max_size=3))
    # no declared type: anything (SQL: scalars only, see the module note)
    return draw(json_scalar() if text_values else json_value(6))


@st.composite
def arguments_for(draw: Any, schema: Schema, depth: int = 0, text_values: bool = False) -> dict[str, Any]:
    """Arguments for an object schema: every required parameter, some optional ones."""
    out: dict[str, Any] = {}
    for prop in schema.properties:
        if prop.name in schema.required or draw(st.booleans()):
            out[prop.name] = draw(value_for(prop.schema, depth, text_values))
    return out


def calls_for(toolset: Toolset, max_calls: int = 3, text_values: bool = False) -> st.SearchStrategy[list[ToolCall]]:
    """1..``max_calls`` calls on the tools of ``toolset``."""
    @st.composite
    def one(draw: Any) -> ToolCall:
        tool = draw(st.sampled_from(list(toolset.tools)))
        return ToolCall(tool.name, draw(arguments_for(tool.parameters, text_values=text_values)))

    return st.lists(one(), min_size=1, max_size=max_calls)


@st.composite
def bfcl_calls(draw: Any, max_calls: int = 3, text_values: bool = False) -> tuple[Toolset, list[ToolCall]]:
    """A BFCL record's toolset (simple_python and multiple) and 1..``max_calls`` calls on it."""
    toolset = draw(st.sampled_from(record_toolsets()))
    return toolset, draw(calls_for(toolset, max_calls, text_values))


SAMPLE = sample_toolset()
THE_EXAMPLE = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                          "auto_renew": True,
                                          "contract_details": {"contract_id": "C-1", "status": "draft"}})
SECOND = ToolCall("legal_draft_v3", {"counterparty": "Beta", "value": 3, "term_months": 6})


def written(calls: Sequence[CallSyntax] | None) -> list[tuple[str, Any]] | None:
    """Calls as a reader wrote them down, ``(name, items)`` with items ``(keyword or None, value)``
    in order, for :func:`support.protocol_checks.assert_calls`; ``None`` (the reader declined)
    stays ``None``."""
    return None if calls is None else [(call.name, call.items) for call in calls]


def fast_path(protocol_id: str, text: str, between: str = r"[ \t\r\n,]*") -> list[CallSyntax] | None:
    """The calls of ``text`` as the protocol's fast path (its reader's ``read_at``) reads them, when its
    candidates, ``between`` apart, make up all of it; ``None`` where it declines (the grammar decides)."""
    reader, gap = get_protocol(protocol_id).reader, re.compile(between)  # type: ignore[attr-defined]
    calls: list[CallSyntax] = []
    pos = gap.match(text).end()  # type: ignore[union-attr]
    while pos < len(text):
        read = reader.read_at(text, pos, pos, len(text))
        if read is None:
            return None
        calls += read[0]
        pos = gap.match(text, read[1]).end()  # type: ignore[union-attr]
    return calls or None


def assert_fast_path_reads_as_the_grammar(fast: list[CallSyntax] | None, grammar_calls: Any, text: str,
                                          must_read: bool) -> None:
    """The one differential property of a format's fast path: it reads nothing the grammar refuses, and
    what it reads, it reads as the grammar does; where it ``must_read`` (a text as models write it,
    in its subset), it reads."""
    from toolform_rules.grammar import GrammarFailure

    assert fast is not None or not must_read, ("the fast path declined", text)
    if fast is None:
        return
    try:
        by_grammar = grammar_calls(text)
    except GrammarFailure:
        raise AssertionError(f"the fast path read what the grammar refuses: {text!r}") from None
    assert_calls(written(fast), written(by_grammar), identical, context=text)


def damaged(text: str, junk: str, where: int) -> str:
    """``text`` with ``junk`` put in at ``where`` (modulo its length)."""
    where %= len(text) + 1
    return text[:where] + junk + text[where:]


def unbound(items: Sequence[tuple[str | None, Any]]) -> dict[str, Any]:
    """The arguments a call's items give when there is no toolset to bind positional values to:
    keywords by name, positional values in their places as ``_pos0``, ``_pos1``, ..."""
    positions = iter(range(len(items)))
    return {key if key is not None else f"_pos{next(positions)}": value for key, value in items}


# ---------------------------------------------------------------------------------------------
# the reference (PyPI toolform 0.0.1) as a black box

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from toolform.ir import ToolCall as RefCall
    from toolform.protocols import get_protocol as ref_protocol
    from toolform.sdk import load_tools as ref_load_tools
    from toolform.sdk import sample_toolset as ref_sample_toolset

#: the sample tool and a second tool, for replies with two different calls
PROBE_TOOL = {"type": "function", "function": {"name": "probe_tool", "description": "probe", "parameters": {
    "type": "object", "properties": {"s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
                                     "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": "array"}},
    "required": ["s"]}}}


def _ref_universe() -> Any:
    """The reference's universe of the sample tool and ``probe_tool``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sample = ref_sample_toolset()
        return ref_load_tools(sample.to_openai() + [PROBE_TOOL]).universe


REF_UNIVERSE = _ref_universe()


def _our_tools() -> Toolset:
    """Our toolset of the same two tools."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_tools(ref_sample_toolset().to_openai() + [PROBE_TOOL])


OUR_TOOLS = _our_tools()


def ref_parse(protocol_id: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    """The reference's reading of ``text`` (sample tool and ``probe_tool``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ref_protocol(protocol_id).parse(text, REF_UNIVERSE)
    return [(c.name, dict(c.arguments)) for c in result.calls]


def ref_render(protocol_id: str, calls: list[ToolCall]) -> str:
    """The reference's reply for ``calls``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_calls = [RefCall(name=c.name, arguments=dict(c.arguments)) for c in calls]
        return ref_protocol(protocol_id).render_calls(ref_calls)


def canonical(name: str, toolset: Toolset = OUR_TOOLS) -> str:
    """``name`` as ``toolset`` spells its tool (the reference may keep another spelling)."""
    tool = toolset.get(name)
    return tool.name if tool is not None else name


def assert_agrees(protocol: Protocol, text: str) -> None:
    """Our calls for ``text`` are the reference's, exactly (its names as our toolset resolves them)."""
    want = [(canonical(name), arguments) for name, arguments in ref_parse(protocol.info.id, text)]
    assert_calls(read_calls(protocol, text, OUR_TOOLS), want, identical, context=text)


#: replies that break naive readers, by name: floods of openers and quotes, huge numbers, deep
#: nesting, many calls, in each of the family's formats
NASTY_INPUTS = {
    "empty": "", "NUL": "\x00", "white space": " \n\t ", "[ x100000": "[" * 100000, "{ x50000": "{" * 50000,
    "( x50000": "(" * 50000, "' x10001": "'" * 10001, '" x10001': '"' * 10001, "\\ x100001": "\\" * 100001,
    "a x1000000": "a" * 1_000_000, "x x999999 (": "x" * 999_999 + "(", "lone surrogate": "\ud800",
    "CRLF x1000": "\r\n" * 1000, "empty fences x1000": "```\n```\n" * 1000,
    # Python calls
    "f( x100000": "f(" * 100000, "f( x50000 ) x50000": "f(" * 50000 + ")" * 50000, "[f( x50000": "[f(" * 50000,
    "legal_draft_v3( x60000": "legal_draft_v3(" * 60000, "[legal_draft_v3( x30000": "[legal_draft_v3(" * 30000,
    "legal_draft_v3(a=[ [ x100000": "legal_draft_v3(a=[" + "[" * 100000,
    "legal_draft_v3(a= {'a': x50000": "legal_draft_v3(a=" + "{'a':" * 50000,
    "legal_draft_v3(a=1) lines x20000": "legal_draft_v3(a=1)\n" * 20000,
    "[legal_draft_v3(a=1)] x20000": "[legal_draft_v3(a=1)] " * 20000,
    "legal_draft_v3(a=<100000 digits>)": "legal_draft_v3(a=" + "9" * 100000 + ")",
    "legal_draft_v3(a=1e<1000 digits>)": "legal_draft_v3(a=1e" + "9" * 1000 + ")",
    "legal_draft_v3(a='\\x x1000')": "legal_draft_v3(a='" + "\\x" * 1000 + "')", 'f(a="\\N{': 'f(a="\\N{',
    '""" x30000': '"""' * 30000, "''' x30000": "'''" * 30000,
    "<|python_tag|> x50000": "<|python_tag|>" * 50000,
    "<|python_tag|>legal_draft_v3(a=1) x20000": "<|python_tag|>legal_draft_v3(a=1)" * 20000,
    # SQL statements
    "SELECT f( x50000": "SELECT f(" * 50000,
    "SELECT legal_draft_v3(a => ' then ' x100001": "SELECT legal_draft_v3(a => '" + "'" * 100001,
    "SELECT legal_draft_v3(a => 1); x20000": "SELECT legal_draft_v3(a => 1);" * 20000,
    "SELECT f(a => <100000 digits>);": "SELECT f(a => " + "9" * 100000 + ");",
    "SELECT f(a => E' then \\ x100001": "SELECT f(a => E'" + "\\" * 100001,
    # GraphQL operations
    "mutation { x50000": "mutation {" * 50000, "mutation { f( x50000": "mutation { f(" * 50000,
    "mutation { legal_draft_v3(a: then [ x100000": "mutation { legal_draft_v3(a: " + "[" * 100000,
    "mutation { legal_draft_v3(a: 1) } x20000": "mutation { legal_draft_v3(a: 1) }" * 20000,
    'mutation { f(a: """ then " x100000': 'mutation { f(a: """' + '"' * 100000,
    # s-expressions
    "(f :a  x50000": "(f :a " * 50000, "(legal_draft_v3 :a  x30000": "(legal_draft_v3 :a " * 30000,
    "(legal_draft_v3 :a then [ x100000": "(legal_draft_v3 :a " + "[" * 100000,
    "(legal_draft_v3 :a 1) x20000": "(legal_draft_v3 :a 1)" * 20000,
    "(f :a <100000 digits>)": "(f :a " + "9" * 100000 + ")",
    '(legal_draft_v3 :a {"k": x30000': "(legal_draft_v3 :a {\"k\":" * 30000,
}

# For each format: the nasty inputs holding a candidate of it that cannot be read (unclosed, a
# call as a value, nested past the grammar's reach, a number or an escape the format refuses),
# which must give no calls and a note saying why; and those holding calls that can be read.
# The rest hold neither.

#: a name directly followed by "(" starts a Python call (here never one that can be read)
BROKEN_PYTHON = frozenset({
    "x x999999 (", "f( x100000", "f( x50000 ) x50000", "[f( x50000", "legal_draft_v3( x60000",
    "[legal_draft_v3( x30000", "legal_draft_v3(a=[ [ x100000", "legal_draft_v3(a= {'a': x50000",
    "legal_draft_v3(a=<100000 digits>)", "legal_draft_v3(a='\\x x1000')", 'f(a="\\N{', "SELECT f( x50000",
    "SELECT legal_draft_v3(a => ' then ' x100001", "SELECT legal_draft_v3(a => 1); x20000",
    "SELECT f(a => <100000 digits>);", "SELECT f(a => E' then \\ x100001", "mutation { f( x50000",
    "mutation { legal_draft_v3(a: then [ x100000", "mutation { legal_draft_v3(a: 1) } x20000",
    'mutation { f(a: """ then " x100000'})
#: (1e<1000 digits> is a float Python reads: infinity)
PYTHON_CALLS = frozenset({"legal_draft_v3(a=1) lines x20000", "[legal_draft_v3(a=1)] x20000",
                          "legal_draft_v3(a=1e<1000 digits>)", "<|python_tag|>legal_draft_v3(a=1) x20000"})
BROKEN_SQL = frozenset({"SELECT f( x50000", "SELECT legal_draft_v3(a => ' then ' x100001",
                        "SELECT f(a => <100000 digits>);", "SELECT f(a => E' then \\ x100001"})
SQL_CALLS = frozenset({"SELECT legal_draft_v3(a => 1); x20000"})
BROKEN_GRAPHQL = frozenset({"mutation { x50000", "mutation { f( x50000", "mutation { legal_draft_v3(a: then [ x100000",
                            'mutation { f(a: """ then " x100000'})
GRAPHQL_CALLS = frozenset({"mutation { legal_draft_v3(a: 1) } x20000"})
#: "(" and a symbol start an s-expression: the s-expression floods, and the other formats'
#: inputs in which such a start is never closed ("f(f(" holds "(f(f(...")
BROKEN_SEXPR = frozenset({
    "(f :a  x50000", "(legal_draft_v3 :a  x30000", "(legal_draft_v3 :a then [ x100000", "(f :a <100000 digits>)",
    '(legal_draft_v3 :a {"k": x30000', "f( x100000", "legal_draft_v3( x60000", "legal_draft_v3(a=[ [ x100000",
    "legal_draft_v3(a= {'a': x50000", 'f(a="\\N{', "SELECT f( x50000", "SELECT legal_draft_v3(a => ' then ' x100001",
    "SELECT f(a => E' then \\ x100001", "mutation { f( x50000", "mutation { legal_draft_v3(a: then [ x100000",
    'mutation { f(a: """ then " x100000'})
SEXPR_CALLS = frozenset({"(legal_draft_v3 :a 1) x20000"})
assert (BROKEN_PYTHON | PYTHON_CALLS | BROKEN_SQL | SQL_CALLS | BROKEN_GRAPHQL | GRAPHQL_CALLS | BROKEN_SEXPR
        | SEXPR_CALLS) <= NASTY_INPUTS.keys(), "a format's list names an input that is not there"


def assert_answers_nasty_input(protocol: Protocol, text: str, toolset: Toolset | None = None, *, broken: bool,
                               holds_calls: bool) -> None:
    """``protocol`` answers ``text`` with its guard unused (:func:`support.protocol_checks.assert_total`):
    no calls and a note saying why when ``text`` is ``broken``, and calls exactly when it ``holds_calls``."""
    extraction = assert_total(protocol, text, toolset, malformed=broken)
    assert bool(extraction.calls) == holds_calls, (text[:80], extraction.calls[:2], extraction.notes[:2])


# ---------------------------------------------------------------------------------------------
# Python call text as models write it, for the fast-path-versus-grammar properties

@st.composite
def python_source(draw: Any, value: Any, top: bool = True) -> str:
    """``value`` written as a Python literal, one of the ways a model might (quotes, spacing,
    trailing commas, tuples, JSON spellings); it reads back as ``value`` (tuples as lists)."""
    if isinstance(value, bool):
        return draw(st.sampled_from(["True", "true"] if value else ["False", "false"]))
    if value is None:
        return draw(st.sampled_from(["None", "null"]))
    if isinstance(value, int):
        return draw(st.sampled_from([repr(value), "+" + repr(value) if value >= 0 else repr(value)]))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        styles = [json.dumps(value, ensure_ascii=False), repr(value)]
        if all(ord(c) < 0x10000 for c in value):  # beyond, JSON writes surrogate pairs: two characters in Python
            styles.append(json.dumps(value))
        return draw(st.sampled_from(styles))
    if isinstance(value, list):
        parts = [draw(python_source(v, False)) for v in value]
        sep = draw(st.sampled_from([", ", ",", ",\n  "]))
        if draw(st.integers(0, 3)) == 0:
            if not parts:
                return "()"
            return "(" + sep.join(parts) + ("," if len(parts) == 1 or draw(st.booleans()) else "") + ")"
        return "[" + sep.join(parts) + ("," if parts and draw(st.booleans()) else "") + "]"
    if isinstance(value, dict):
        sep = draw(st.sampled_from([", ", ",", ",\n  "]))
        colon = draw(st.sampled_from([": ", ":", " : "]))
        parts = [draw(python_source(k, False)) + colon + draw(python_source(v, False)) for k, v in value.items()]
        return "{" + sep.join(parts) + ("," if parts and draw(st.booleans()) else "") + "}"
    raise TypeError(type(value))


def python_value() -> st.SearchStrategy[Any]:
    """Values a Python literal can hold exactly (dict keys: text, numbers, booleans, None)."""
    key = st.one_of(TEXT, st.integers(-100, 100), st.booleans(), st.none())
    return st.recursive(json_scalar(), lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(key, inner, max_size=3)), max_leaves=8)


@st.composite
def python_call_source(draw: Any) -> tuple[str, str, list[tuple[str | None, Any]]]:
    """``(text, name, items)``: one call as a model might write it, and what it holds."""
    name = draw(st.sampled_from(["f", "legal_draft_v3", "math.factorial", "LegalDraftV3", "get_5_day_forecast"]))
    positional = draw(st.lists(python_value(), max_size=2))
    keywords = draw(st.dictionaries(st.sampled_from(["a", "b", "counterparty", "from", "value_2", "x_y"]),
                                    python_value(), max_size=3))
    items: list[tuple[str | None, Any]] = [(None, v) for v in positional] + list(keywords.items())
    sep = draw(st.sampled_from([", ", ",", ",\n    "]))
    eq = draw(st.sampled_from(["=", " = "]))
    parts = [draw(python_source(v)) for v in positional]
    parts += [k + eq + draw(python_source(v)) for k, v in keywords.items()]
    trailing = "," if parts and draw(st.integers(0, 4)) == 0 else ""
    return f"{name}({sep.join(parts)}{trailing})", name, items
