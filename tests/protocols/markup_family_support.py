"""Shared test helpers of the markup/config/natural-language protocol group.

Strategies for calls on the sample tool and on real BFCL function docs (values generated
from each parameter's JSON type, strings from an alphabet full of the characters formats
trip on), the toolset of a list of docs, the reference oracle (used as a black box) and
the nasty replies every protocol must answer.  Comparing, round trips and the never-raises
check are the shared ones of ``support``.  Values compare with ``support.compare.equal_json``
(``3`` is ``3.0``): the text-value protocols (function_tags, xml_call, xml_generic_call,
nl_intent, nl_intent_structured) write values as text that the schema types back, which
promises the JSON value and not its Python type, and the reference, held against ours, has
types of its own.  react, toml_call and yaml_call write typed literals (JSON, TOML, YAML)
that give every value back with its type and its keys' order, so their round trips and
reader agreements compare with ``identical``.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

from support.bfcl import function_docs
from toolform_rules import load_tools
from toolform_rules.calls import ToolCall
from toolform_rules.grammar import GrammarFailure
from toolform_rules.limits import Limits
from toolform_rules.schema.names import canonical_name
from toolform_rules.samples import SAMPLE_TOOL_JSON
from toolform_rules.schema.toolset import Toolset

#: examples per test that draws calls (CI: 150; ``MARKUP_FAMILY_EXAMPLES=20`` while iterating)
EXAMPLES = int(os.environ.get("MARKUP_FAMILY_EXAMPLES", "150"))
CALL_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# quotes, commas, pipes, brackets, =, :, newlines, tabs, backslashes, markup characters, unicode
ALPHABET = list("ab XZ09\"',|[](){}<>=:;.#&*!?%$@/\\-_+~`\n\t\r") + ["é", "ß", "中", "😀", "\u00a0", "\u2028"]
WORDS = ["true", "false", "null", "None", "yes", "12", "-3", "1e5", "0x1F", "~", "&amp;", "</parameter>",
         "name", "with", ", a: 1", "'", '"', "- x", "# c", "[[call]]", "Action:", "Observation:", " and ", "."]


@st.composite
def texts(draw: Any, max_size: int = 14) -> str:
    """Strings a format has to quote or escape: odd characters, words it reserves, spaces at the ends."""
    body = draw(st.lists(st.one_of(st.sampled_from(ALPHABET), st.sampled_from(WORDS),
                                   st.characters(codec="utf-8", exclude_categories=("Cs",))),
                         max_size=max_size).map("".join))
    left = draw(st.sampled_from(["", "", "", " ", "  ", "\n", "\t "]))
    right = draw(st.sampled_from(["", "", "", " ", "  ", "\n", " \n"]))
    return left + body + right


FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([1e-07, 1200.5, 0.1, -2.5, 1e16, 3.0, 0.0, 123456789.125]))
INTEGERS = st.one_of(st.integers(-1000, 1000), st.integers(-(2 ** 70), 2 ** 70))


def _types(schema: Any) -> list[str]:
    """The JSON type names ``schema`` lists (none for a schema without a type)."""
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return [kind] if isinstance(kind, str) else []


def json_values(depth: int = 0) -> st.SearchStrategy:
    """Any JSON value: scalars, and nested arrays and objects (also arrays of objects)."""
    scalars = st.one_of(texts(8), INTEGERS, FLOATS, st.booleans(), st.none())
    if depth >= 2:
        return scalars
    return st.one_of(scalars, st.lists(json_values(depth + 1), max_size=3),
                     st.dictionaries(texts(6), json_values(depth + 1), max_size=3))


@st.composite
def value_for(draw: Any, schema: Any, *, text_values: bool, depth: int = 0) -> Any:
    """A value of ``schema``'s JSON type.

    For text-value protocols a value whose schema names no type is a string: a format that
    writes values as text cannot say what type it was (``12`` and ``"12"`` read the same).
    """
    if isinstance(schema, dict) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    kinds = _types(schema) or ["any"]
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        return draw(texts())
    if kind == "integer":
        return draw(INTEGERS)
    if kind in ("number", "float"):
        return draw(st.one_of(FLOATS, st.integers(-1000, 1000)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind in ("array", "tuple"):
        items = schema.get("items", {}) if isinstance(schema, dict) else {}
        if depth >= 3:
            return []
        return draw(st.lists(value_for(items, text_values=False, depth=depth + 1), max_size=3))
    if kind in ("object", "dict"):
        if depth >= 3:
            return {}
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict) and props:
            return draw(arguments_for(schema, text_values=False, depth=depth + 1))
        return draw(st.dictionaries(texts(6), json_values(1), max_size=3))
    if kind == "null":
        return None
    return draw(texts()) if text_values else draw(json_values(1))


@st.composite
def arguments_for(draw: Any, schema: Any, *, text_values: bool, depth: int = 0) -> dict:
    """Arguments for an object ``schema``: some of its properties (none when it lists none), each of its type."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    names = draw(st.lists(st.sampled_from(sorted(props)), unique=True, max_size=len(props))) if props else []
    return {name: draw(value_for(props[name], text_values=text_values, depth=depth)) for name in names}


@functools.cache
def _toolset_of(docs_json: str) -> Toolset:
    """The toolset of docs given as JSON text (a hashable key for the cache)."""
    return load_tools(json.loads(docs_json))


def toolset_for(docs: list[dict]) -> Toolset:
    """The toolset of ``docs`` (function docs), loaded once per distinct list."""
    return _toolset_of(json.dumps(docs, sort_keys=True))


SAMPLE_DOC = SAMPLE_TOOL_JSON


@st.composite
def calls_on(draw: Any, *, text_values: bool, several: bool = True, bfcl: bool = True
             ) -> tuple[list[ToolCall], list[dict]]:
    """1 (or, when ``several``, up to 3) calls on the sample tool or BFCL functions, and their docs."""
    pool = draw(st.sampled_from(["sample", "bfcl"])) if bfcl else "sample"
    count = draw(st.integers(1, 3)) if several else 1
    docs: list[dict] = []
    calls: list[ToolCall] = []
    for _ in range(count):
        doc = SAMPLE_DOC if pool == "sample" else draw(st.sampled_from(function_docs()))
        if doc not in docs:
            # one tool per name, as a toolset has it (BFCL repeats names, and car_rental meets car.rental)
            twin = next((d for d in docs if canonical_name(d["name"]) == canonical_name(doc["name"])), None)
            if twin is not None:
                doc = twin
            else:
                docs.append(doc)
        arguments = draw(arguments_for(doc["parameters"], text_values=text_values))
        calls.append(ToolCall(doc["name"], arguments))
    return calls, docs


# ---------------------------------------------------------------------------------------------
# the reference, as a black box

@functools.cache
def _reference_universe(docs_json: str) -> Any:
    """The reference's tool universe for docs given as JSON text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.sdk import load_tools as ref_load_tools
        docs = json.loads(docs_json)
        return ref_load_tools([{"type": "function", "function": d} for d in docs]).universe


def reference_calls(protocol_id: str, text: str, docs: list[dict]) -> list[tuple[str, dict]]:
    """What the reference's ``get_protocol(id).parse`` extracts (names and arguments)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from toolform.protocols import get_protocol as ref_get_protocol
        result = ref_get_protocol(protocol_id).parse(text, _reference_universe(json.dumps(docs, sort_keys=True)))
    toolset = toolset_for(docs)
    out = []
    for call in result.calls:  # names as the pipeline resolves them (the reference keeps some as written)
        tool = toolset.get(call.name)
        out.append((tool.name if tool is not None else call.name, dict(call.arguments)))
    return out


#: replies that break careless readers (huge, deeply nested, unclosed, not encodable), by name;
#: none holds a call a protocol of the family can read, but for the few each test file names
NASTY = {
    "empty": "", "space": " ", "nul": "\x00", "nuls": "\x00" * 50, "brackets": "[" * 100_000,
    "braces": "{" * 100_000, "angles": "<" * 100_000, "invoke_openings": "<invoke" * 20_000,
    "a_million_letters": "a" * 1_000_000, "keys": "x: " * 50_000, "line_breaks": "\n" * 100_000,
    "fences": "```" * 10_000, "lone_surrogate": "\ud800", "cdata_openings": "<![CDATA[" * 20_000,
    "ampersands": "&" * 50_000, "reference_openings": "&#" * 50_000, "action_labels": "Action:" * 30_000,
    "dashes": "- " * 50_000, "intents": "I will use " * 30_000, "use_f_with": "Use f with " * 30_000,
    "call_tables": "[[call]]\n" * 20_000, "function_openings": "<function=" * 20_000,
    "call_openings": "<call>" * 20_000, "triple_quotes": '"""' * 20_000, "single_quotes": "'" * 100_000,
    "colons": ":" * 100_000, "block_scalars": "|\n" * 50_000,
}

# ---------------------------------------------------------------------------------------------
# a fast path held to its grammar


def assert_reads_as_the_grammar(protocol: Any, text: str, limit: int, tools: Any = None) -> None:
    """The fast path of a tag format or of react (``protocol.parse``) gives what the grammar alone gives
    (``protocol.by_grammar``): the same calls and notes, the same note where the grammar stops; when the grammar
    may read only ``limit`` characters of the reply, a note on the same place (from a stretch that starts later,
    where what it expects may differ, or the fast reader's own)."""
    limits = Limits(reply_grammar_chars=limit)
    fast, spec = protocol.parse(text, tools, limits=limits), protocol.by_grammar(text, tools, limits=limits)
    event("the grammar stops" if not spec.calls and "could not be read" in "".join(spec.notes) else "read")
    if fast != spec:
        assert fast.calls == () and len(fast.notes) == 1 and not fast.compliant, (text, fast, spec)
        assert spec.notes[0].split(": ")[1] == fast.notes[0].split(": ")[1], (text, fast, spec)  # (the same place)


@st.composite
def sentences(draw: Any, protocol: Any, words: list[str]) -> str:
    """Words of a sentence format in any order, or a rendered call (one sentence its fast path takes whole)."""
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(words), max_size=14))).rstrip()
    return protocol.render_calls(draw(calls_on(text_values=True, several=False))[0])


def assert_sentence_reads_as_the_grammar(protocol: Any, text: str) -> None:
    """The terminal-by-terminal reading of a sentence gives what the Lark parser gives, and stops where it stops."""
    fast = protocol.read_fast(text)
    try:
        slow = protocol.read_by_grammar(text)
    except GrammarFailure:
        slow = None
    event("fast path: " + ("declined" if fast is None else "answered"))
    assert fast == slow, (text, fast, slow)


__all__ = ["ALPHABET", "CALL_SETTINGS", "EXAMPLES", "NASTY", "SAMPLE_DOC", "arguments_for",
           "assert_reads_as_the_grammar", "assert_sentence_reads_as_the_grammar", "calls_on", "json_values",
           "reference_calls", "sentences", "texts", "toolset_for", "value_for"]
