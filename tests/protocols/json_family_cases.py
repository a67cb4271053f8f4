"""Shared test helpers of the JSON-family protocols (json_array, jsonl_call, code_block_json, native,
tool_call_tags, two_step_call, slot_fill_call): value and call strategies from JSON types (the
sample tool and the BFCL function docs), JSON as models write it, nasty inputs, and the
reference oracle.  How calls are compared and checked is ``support.compare`` and
``support.protocol_checks`` (the family's values are typed literals: ``identical``).

Imported by the ``test_<id>.py`` files of that group only (pytest puts this folder on the path).
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

from hypothesis import strategies as st

from support.bfcl import function_docs
from support.protocol_checks import as_pipeline_reads
from toolform_rules.calls import ToolCall
from toolform_rules.limits import Limits
from toolform_rules.replies.formats.base import Protocol
from toolform_rules.schema.names import canonical_name
from toolform_rules.samples import SAMPLE_TOOL_JSON

#: Characters every format has to quote or escape somewhere.
SPECIAL = list("\"',|[]{}()=:;\n\t\\ <>/`*#$&%@!?~^") + ["é", "ß", "中", "😀", "\u2028", "\x00", "\x7f"]
NASTY_STRINGS = ["", " ", "  padded  ", "a\nb", "\\", "\\n", "\\\"", '"', "'", "it's", 'say "hi"', "a,b", "a|b",
                 "[x]", "{y}", "k=v", "k: v", "</tool_call>", "<tool_call>", "```", "```json", "<number>", "...",
                 "null", "true", "1", "1e-07", " 12 ", "Acme, \"Ltd\"", "C:\\path\\to", "ü ñ 中文 😀", "\t"]

TEXT = st.one_of(
    st.text(alphabet=st.one_of(st.sampled_from(SPECIAL), st.characters(codec="utf-8", exclude_categories=("Cs",))),
            max_size=16),
    st.sampled_from(NASTY_STRINGS),
)
# NaN and the infinities are left out, and only they: JSON cannot write them (json.dumps would
# emit the non-JSON words NaN/Infinity, and NaN is not even equal to itself).
FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([1e-07, 1200.5, -0.0, 0.1, 1e300, 5e-324, 2.0, -3.5]))
INTEGERS = st.one_of(st.integers(-10**6, 10**6), st.integers(), st.sampled_from([0, -1, 2**63, -(2**70)]))
SCALARS = st.one_of(TEXT, INTEGERS, FLOATS, st.booleans(), st.none())
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)


def value_for(schema: Any, depth: int = 0) -> st.SearchStrategy:
    """Values of a parameter's JSON (or BFCL) type; anything JSON for an unknown type."""
    if not isinstance(schema, dict):
        return JSON_VALUES
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if isinstance(schema.get("enum"), list) and schema["enum"] and depth % 2 == 0:
        return st.sampled_from(schema["enum"])
    if kind == "string":
        return TEXT
    if kind == "integer":
        return INTEGERS
    if kind in ("number", "float"):
        return st.one_of(FLOATS, INTEGERS)
    if kind == "boolean":
        return st.booleans()
    if kind in ("array", "tuple"):
        item = schema.get("items", {}) if depth < 3 else {"type": "string"}
        return st.lists(value_for(item, depth + 1), max_size=3)
    if kind in ("object", "dict"):
        props = schema.get("properties")
        if isinstance(props, dict) and props and depth < 3:
            return arguments_for(schema, depth + 1)
        return st.dictionaries(TEXT, JSON_VALUES, max_size=3) if depth < 3 else st.just({})
    return JSON_VALUES


@st.composite
def arguments_for(draw: Any, schema: dict, depth: int = 0) -> dict:
    """An arguments object: each property present or not; now and then a null or an extra key."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    out: dict = {}
    for name, sub in (props or {}).items():
        if draw(st.integers(0, 4)):
            out[name] = draw(st.one_of(value_for(sub, depth), st.none()) if draw(st.integers(0, 9)) == 0
                             else value_for(sub, depth))
    if draw(st.integers(0, 8)) == 0:
        out[draw(TEXT)] = draw(JSON_VALUES)
    return out


@st.composite
def sample_calls(draw: Any, max_calls: int = 1) -> list[ToolCall]:
    """1..max_calls calls on the sample tool."""
    count = draw(st.integers(1, max_calls))
    return [ToolCall(SAMPLE_TOOL_JSON["name"], draw(arguments_for(SAMPLE_TOOL_JSON["parameters"])))
            for _ in range(count)]


@st.composite
def bfcl_calls(draw: Any, max_calls: int = 1) -> list[ToolCall]:
    """1..max_calls calls on BFCL function docs (each call on a doc of its own)."""
    docs = function_docs()
    count = draw(st.integers(1, max_calls))
    calls = []
    for _ in range(count):
        doc = docs[draw(st.integers(0, len(docs) - 1))]
        calls.append(ToolCall(doc["name"], draw(arguments_for(doc.get("parameters", {})))))
    return calls


#: Large or odd replies that hold no broken JSON: nothing, prose, runs of quotes or backslashes, and
#: replies with calls in them (28,000 lines of calls; arguments that are a 6,000-digit array as text).
NASTY_INPUTS = ["", " ", "\x00", "\n" * 1000, "'" * 50000, '"' * 50000, "\\" * 50000, "x" * 1_000_000,
                ('{"name": "f", "arguments": {"a": 1}}\n' * 28_000),
                '{"name":"f","arguments":"[' + "1" * 6000 + ']"}']

#: Large replies whose every JSON candidate is one no reader of the family can take, so each
#: protocol gives no call and a note saying why: brackets or strings that never close, runs of
#: the family's markers with nothing in them (empty ``<tool_call>`` tags, empty code fences:
#: prose to the other formats, which read no call from them either), and values past what a
#: reader takes (nesting 5,000 deep, a 6,000-digit number).
MALFORMED_INPUTS = ["[" * 100_000, "{" * 100_000, "]" * 5000 + "[" * 5000, '{"a": "' + "x" * 200_000,
                    "[" * 5000 + "]" * 5000, "{\"name\": " * 20000, "<tool_call>" * 20000, "```" * 30000,
                    ("{" + '"a": [' * 3000), '{"name": "f", "arguments": ' + "[" * 50_000 + "]" * 50_000 + "}",
                    # each a case that once took quadratic time somewhere in the family
                    "<tool_call>{" * 30_000, "```json\n{" * 30_000, "a\n{" * 100_000, '{"a": "' * 30_000,
                    '{"name":"f","arguments":{"a":' + "1" * 6000 + ',"b":\'x\'}}']


#: Limits under which no grammar reads anything: what a reply gives then is what the fast readers
#: (strict JSON, then the lenient reader) give alone.
FAST_ONLY = Limits(reply_grammar_chars=0)


def fast_calls(protocol: Protocol, text: str) -> list[tuple[str, Any]] | None:
    """The calls the fast readers alone read from ``text`` (as the pipeline reads them), or ``None`` when some
    JSON of the reply needed the grammar (its note then names ``Limits.reply_grammar_chars``)."""
    extraction = protocol.parse(text, limits=FAST_ONLY)
    if any("Limits.reply_grammar_chars" in note for note in extraction.notes):
        return None
    return as_pipeline_reads(protocol, extraction)


def grammar_calls(protocol: Any, text: str) -> list[tuple[str, Any]]:
    """The calls of a whole reply in the protocol's format, read by its grammar alone."""
    return protocol.grammar_calls(text)


@functools.cache
def _reference() -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.protocols import get_protocol
        from toolform.sdk import sample_toolset
        return get_protocol, sample_toolset().universe


def reference_pairs(protocol_id: str, text: str) -> list[tuple[str, dict]]:
    """What the reference implementation (black box) extracts from ``text``."""
    get_protocol, universe = _reference()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = get_protocol(protocol_id).parse(text, universe)
    return [(c.name, c.arguments) for c in result.calls]


def canonical_pairs(found: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """``found`` with each name in its canonical form (``Legal_Draft_V3`` and ``legal_draft_v3`` alike)."""
    return [(canonical_name(n), a) for n, a in found]


#: the white space :func:`lenient_text` puts between tokens; ``ONE_LINE`` keeps a value on one line
SPACES = ("", " ", "\n  ", "\t")
ONE_LINE = ("", " ", "\t")


@st.composite
def lenient_text(draw: Any, value: Any, spaces: tuple[str, ...] = SPACES) -> str:
    """``value`` written the way models write JSON: either quote, Python words, trailing commas, odd numbers,
    any of ``spaces`` between tokens."""
    space = draw(st.sampled_from(spaces))
    if isinstance(value, bool):
        return draw(st.sampled_from(["true", "True"] if value else ["false", "False"]))
    if value is None:
        return draw(st.sampled_from(["null", "None"]))
    if isinstance(value, int):
        return draw(st.sampled_from([str(value), f"+{value}" if value >= 0 else str(value),
                                     f"{value}." if value >= 0 else str(value)]))
    if isinstance(value, float):
        text = repr(value)
        return draw(st.sampled_from([text, text.replace("e-0", "E-0"), text.upper().replace("E+", "e")]))
    if isinstance(value, str):
        if draw(st.booleans()):
            return json.dumps(value, ensure_ascii=draw(st.booleans()))
        body = json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'")
        return f"'{body}'"
    if isinstance(value, list):
        items = [draw(lenient_text(v, spaces)) for v in value]
        trailing = "," if items and draw(st.booleans()) else ""
        return "[" + space + ("," + space).join(items) + trailing + space + "]"
    members = [f"{draw(lenient_text(k, spaces))}{space}:{space}{draw(lenient_text(v, spaces))}"
               for k, v in value.items()]
    trailing = "," if members and draw(st.booleans()) else ""
    return "{" + space + ("," + space).join(members) + trailing + space + "}"


@st.composite
def lenient_reply(draw: Any, calls: list[ToolCall], container: str = "array",
                  spaces: tuple[str, ...] = SPACES) -> str:
    """``calls`` written as models write JSON (see :func:`lenient_text`): an array, or one object per line
    (an object may still run over several lines unless ``spaces`` is ``ONE_LINE``)."""
    objects = [{"name": c.name, "arguments": c.arguments} for c in calls]
    if container == "array":
        return draw(lenient_text(objects, spaces))
    return "\n".join(draw(lenient_text(o, spaces)) for o in objects)


__all__ = ["FAST_ONLY", "JSON_VALUES", "MALFORMED_INPUTS", "NASTY_INPUTS", "NASTY_STRINGS", "ONE_LINE", "SPACES", "TEXT",
           "arguments_for", "bfcl_calls", "canonical_pairs", "fast_calls", "grammar_calls", "lenient_reply",
           "lenient_text", "reference_pairs", "sample_calls", "value_for"]
