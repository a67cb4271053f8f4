"""Shared test support for the code family (python_call, python_list_call, bfcl_python_list,
python_tag, bracket_call, sql_call, graphql_call, sexpr_call): call strategies from a tool's
schema, strict comparison, the reference oracle, nasty inputs.

The code formats write typed literals, so nearly every value comes back exactly: strings
with any character (quotes, commas, pipes, brackets, ``=``, ``:``, line ends, spaces at
both ends, unicode, backslashes, the empty string), ints, floats, booleans, ``None``,
objects and arrays nested.  What is left out of generation, each with its reason:

* NaN and ±infinity — no format here has a literal for them (nor has JSON);
* strings with lone surrogates (``Cs``) — not encodable as UTF-8, so no reply holds them;
* for ``sql_call`` only, an object or array for a parameter with no declared type:
  SQL writes nested values as JSON text in a string, and only the schema says to read
  that text back as JSON (``type_values`` keeps text as text where no type is declared).
"""

from __future__ import annotations

import functools
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from toolform_rules import ToolCall, Toolset, load_tools, sample_toolset
from toolform_rules.ir import Schema
from toolform_rules.protocols.base import Extraction, Protocol
from toolform_rules.protocols.typing import type_values

#: round-trip examples per test (CI: 300; ``CODE_FAMILY_EXAMPLES=5000`` for a long run)
EXAMPLES = int(os.environ.get("CODE_FAMILY_EXAMPLES", "300"))
ROUND_TRIP = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
PROPERTY = settings(max_examples=max(100, EXAMPLES // 2), deadline=None, suppress_health_check=list(HealthCheck))

BFCL = Path(__file__).resolve().parents[3] / "shared" / "data" / "bfcl"

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
    return st.one_of(TEXT, INTS, FLOATS, st.booleans(), st.none())


def json_value(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (objects keyed by any text, arrays, scalars), nested."""
    return st.recursive(json_scalar(), lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=max_leaves)


def _kind(schema: Schema | None) -> str:
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


@functools.cache
def bfcl_toolsets() -> tuple[Toolset, ...]:
    """One toolset per BFCL record (simple_python and multiple)."""
    out = []
    for name in ("BFCL_v4_simple_python.json", "BFCL_v4_multiple.json"):
        for line in (BFCL / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(load_tools(json.loads(line)["function"]))
    return tuple(out)


@st.composite
def bfcl_calls(draw: Any, max_calls: int = 3, text_values: bool = False) -> tuple[Toolset, list[ToolCall]]:
    toolset = draw(st.sampled_from(bfcl_toolsets()))
    return toolset, draw(calls_for(toolset, max_calls, text_values))


SAMPLE = sample_toolset()
THE_EXAMPLE = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                          "auto_renew": True,
                                          "contract_details": {"contract_id": "C-1", "status": "draft"}})
SECOND = ToolCall("legal_draft_v3", {"counterparty": "Beta", "value": 3, "term_months": 6})


def same(a: Any, b: Any) -> bool:
    """Exact equality: types kept apart (``True`` is not ``1``, ``3`` is not ``3.0``), the sign
    of zero kept, containers compared deeply and in order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def typed(protocol: Protocol, extraction: Extraction, toolset: Toolset | None) -> list[tuple[str, dict[str, Any]]]:
    """The extraction's calls, typed from the schema when the protocol writes text values."""
    out = []
    for call in extraction.calls:
        arguments = call.arguments
        if protocol.info.text_values and toolset is not None:
            arguments = type_values(arguments, toolset.get(call.name))
        out.append((call.name, arguments))
    return out


def assert_round_trip(protocol: Protocol, calls: list[ToolCall], toolset: Toolset) -> None:
    text = protocol.render_calls(calls)
    extraction = protocol.parse(text, toolset)
    got = typed(protocol, extraction, toolset)
    assert [n for n, _ in got] == [c.name for c in calls], (text, extraction)
    for (_, arguments), call in zip(got, calls):
        assert same(arguments, dict(call.arguments)), (text, arguments, call.arguments)
    assert extraction.compliant, (text, extraction)
    assert not extraction.notes, (text, extraction)


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sample = ref_sample_toolset()
        return ref_load_tools(sample.to_openai() + [PROBE_TOOL]).universe


REF_UNIVERSE = _ref_universe()


def _our_tools() -> Toolset:
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_calls = [RefCall(name=c.name, arguments=dict(c.arguments)) for c in calls]
        return ref_protocol(protocol_id).render_calls(ref_calls)


def canonical(name: str, toolset: Toolset = OUR_TOOLS) -> str:
    tool = toolset.get(name)
    return tool.name if tool is not None else name


def ours(protocol: Protocol, text: str, toolset: Toolset = OUR_TOOLS) -> list[tuple[str, dict[str, Any]]]:
    """Our reading of ``text``, typed as the pipeline types it."""
    return typed(protocol, protocol.parse(text, toolset), toolset)


def assert_agrees(protocol: Protocol, text: str) -> None:
    """Our calls for ``text`` are the reference's (names compared as the toolset resolves them)."""
    got, want = ours(protocol, text), ref_parse(protocol.info.id, text)
    assert [canonical(n) for n, _ in got] == [canonical(n) for n, _ in want], (text, got, want)
    for (_, args), (_, ref_args) in zip(got, want):
        assert same(args, ref_args), (text, got, want)


def assert_calls(protocol: Protocol, text: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    got = ours(protocol, text)
    assert [canonical(n) for n, _ in got] == [canonical(n) for n, _ in expected], (text, got)
    for (_, args), (_, want) in zip(got, expected):
        assert same(args, want), (text, got, expected)


NASTY_INPUTS = [
    "", "\x00", " \n\t ", "[" * 100000, "{" * 50000, "(" * 50000, "'" * 10001, '"' * 10001, "\\" * 100001,
    "a" * 1_000_000, "x" * 999_999 + "(", "\ud800", "\r\n" * 1000, "```\n```\n" * 1000,
    "f(" * 100000, "f(" * 50000 + ")" * 50000, "[f(" * 50000, "legal_draft_v3(" * 60000,
    "[legal_draft_v3(" * 30000, "legal_draft_v3(a=[" + "[" * 100000, "legal_draft_v3(a=" + "{'a':" * 50000,
    "legal_draft_v3(a=1)\n" * 20000, "[legal_draft_v3(a=1)] " * 20000, "legal_draft_v3(a=" + "9" * 100000 + ")",
    "legal_draft_v3(a=1e" + "9" * 1000 + ")", "legal_draft_v3(a='" + "\\x" * 1000 + "')", 'f(a="\\N{',
    '"""' * 30000, "'''" * 30000, "<|python_tag|>" * 50000, "<|python_tag|>legal_draft_v3(a=1)" * 20000,
    "SELECT f(" * 50000, "SELECT legal_draft_v3(a => '" + "'" * 100001, "SELECT legal_draft_v3(a => 1);" * 20000,
    "SELECT f(a => " + "9" * 100000 + ");", "SELECT f(a => E'" + "\\" * 100001,
    "mutation {" * 50000, "mutation { f(" * 50000, "mutation { legal_draft_v3(a: " + "[" * 100000,
    "mutation { legal_draft_v3(a: 1) }" * 20000, 'mutation { f(a: """' + '"' * 100000,
    "(f :a " * 50000, "(legal_draft_v3 :a " * 30000, "(legal_draft_v3 :a " + "[" * 100000,
    "(legal_draft_v3 :a 1)" * 20000, "(f :a " + "9" * 100000 + ")", "(legal_draft_v3 :a {\"k\":" * 30000,
]


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


def plain(value: Any) -> Any:
    """``value`` with tuples as lists (what every reader returns)."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def same_items(a: list[tuple[str | None, Any]], b: list[tuple[str | None, Any]]) -> bool:
    return len(a) == len(b) and all(ka == kb and same(plain(va), plain(vb)) for (ka, va), (kb, vb) in zip(a, b))
