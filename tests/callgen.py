"""Hypothesis strategies: calls against a tool, right, wrong and sloppy, from its JSON schema.

The strategies read the raw JSON schema (not our IR), so the same call can be handed to
toolform_rules and to the reference implementation.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

WRONG_VALUES = [1, 0, -3, 1.5, 2.0, "x", "", "7", True, False, None, [], [1], ["a"], {}, {"a": 1}]
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _camel(name: str) -> str:
    head, *rest = re.split(r"[_\-\s.]+", name)
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _spellings(name: str) -> list[str]:
    camel = _camel(name)
    return [name, camel, camel[:1].upper() + camel[1:], name.upper(), name.replace("_", "-")]


def _types(schema: dict) -> list[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return [t] if isinstance(t, str) else []


@st.composite
def valid_value(draw: Any, schema: Any, depth: int = 0) -> Any:
    if not isinstance(schema, dict):
        return draw(st.sampled_from(WRONG_VALUES))
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    types = _types(schema) or ["any"]
    kind = draw(st.sampled_from(types))
    if kind == "string":
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", 12)
        return draw(st.text(alphabet="abcXYZ -_,:é\"'|=[]{}", min_size=min(lo, 20), max_size=max(min(hi, 20), min(lo, 20))))
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return draw(st.integers(min_value=int(lo) if isinstance(lo, (int, float)) else -1000,
                                max_value=int(hi) if isinstance(hi, (int, float)) else 1000))
    if kind in ("number", "float"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return draw(st.one_of(
            st.integers(min_value=int(lo) if isinstance(lo, (int, float)) else -1000, max_value=10_000),
            st.floats(min_value=float(lo) if isinstance(lo, (int, float)) else -1e6,
                      max_value=float(hi) if isinstance(hi, (int, float)) else 1e6, allow_nan=False)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind in ("array", "tuple"):
        item = schema.get("items", {})
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", 3)
        return draw(st.lists(valid_value(item, depth + 1) if depth < 4 else st.just(1),
                             min_size=min(lo, 3), max_size=max(min(hi, 3), min(lo, 3))))
    if kind in ("object", "dict"):
        return draw(arguments(schema, depth + 1)) if depth < 4 else {}
    return draw(st.sampled_from(WRONG_VALUES))


@st.composite
def sloppy_value(draw: Any, schema: Any, depth: int = 0) -> Any:
    """What models write instead: numeric strings, words for booleans, other case, a one-element list."""
    value = draw(valid_value(schema, depth))
    choice = draw(st.integers(0, 6))
    if isinstance(value, bool):
        return draw(st.sampled_from(["true", "True", "yes", "no", "false", " FALSE ", "1", "0", "on"]))
    if isinstance(value, (int, float)):
        if choice == 0:
            return [value]
        if choice == 1 and isinstance(value, int):
            return float(value)
        return draw(st.sampled_from([str(value), f" {value} ", f"{value}.0" if isinstance(value, int) else str(value)]))
    if isinstance(value, str):
        if choice == 0:
            return [value]
        return draw(st.sampled_from([value.upper(), value.title(), f"  {value} ", value.swapcase()]))
    return value


@st.composite
def any_value(draw: Any, schema: Any, depth: int = 0) -> Any:
    mode = draw(st.sampled_from(["valid"] * 4 + ["wrong", "sloppy", "none"]))
    if mode == "valid":
        return draw(valid_value(schema, depth))
    if mode == "sloppy":
        return draw(sloppy_value(schema, depth))
    if mode == "none":
        return None
    return draw(st.sampled_from(WRONG_VALUES))


@st.composite
def arguments(draw: Any, schema: Any, depth: int = 0) -> dict:
    """An arguments object for an object schema: each property present or not, spelled one way or another."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        props = {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    out: dict = {}
    for name, sub in props.items():
        present = draw(st.integers(0, 9)) < (9 if name in required else 5)
        if not present:
            continue
        spelling = name if draw(st.integers(0, 5)) else draw(st.sampled_from(_spellings(name)))
        out[spelling] = draw(any_value(sub, depth))
    if draw(st.integers(0, 6)) == 0:
        out[draw(st.sampled_from(["colour", "extra", "Notes", "x"]))] = draw(st.sampled_from(WRONG_VALUES))
    keys = list(out)
    order = draw(st.permutations(keys))
    return {k: out[k] for k in order}


PATTERNS = ["^[a-z]+$", "\\d", "^A", "x$", "(?i)^abc", "[", "^(a+)+$", ""]


@st.composite
def tool_schemas(draw: Any, depth: int = 0) -> dict:
    """A JSON schema built from the constructs the study's validator and ours read alike."""
    kinds = ["string", "integer", "number", "boolean", "enum", "const"]
    if depth < 2:
        kinds += ["array", "object", "union", "nullable"]
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        schema: dict = {"type": "string"}
        if draw(st.booleans()):
            schema["minLength"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            schema["maxLength"] = draw(st.integers(2, 8))
        if draw(st.integers(0, 3)) == 0:
            schema["pattern"] = draw(st.sampled_from(PATTERNS))
        return schema
    if kind in ("integer", "number"):
        schema = {"type": kind}
        if draw(st.booleans()):
            schema["minimum"] = draw(st.sampled_from([0, 1, -5, 0.5] if kind == "number" else [0, 1, -5]))
        if draw(st.booleans()):
            schema["maximum"] = draw(st.sampled_from([10, 600, 2.5] if kind == "number" else [10, 600]))
        return schema
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "enum":
        members = draw(st.sampled_from([["draft", "Review", "signed"], [1, 2, 3], ["a b", "A-B"], [1.5, 2]]))
        schema = {"enum": members}
        if draw(st.booleans()):
            schema["type"] = "string" if isinstance(members[0], str) else ("integer" if isinstance(members[0], int) else "number")
        return schema
    if kind == "const":
        return {"const": draw(st.sampled_from(["fixed", 3, True]))}
    if kind == "array":
        schema = {"type": "array", "items": draw(tool_schemas(depth + 1))}
        if draw(st.booleans()):
            schema["maxItems"] = draw(st.integers(1, 3))
        if draw(st.booleans()):
            schema["minItems"] = draw(st.integers(0, 2))
        return schema
    if kind == "union":
        a, b = draw(st.lists(st.sampled_from(["string", "integer", "number", "boolean"]), min_size=2, max_size=2, unique=True))
        return draw(st.sampled_from([{"anyOf": [{"type": a}, {"type": b}]}, {"type": [a, b]}]))
    if kind == "nullable":
        inner = draw(st.sampled_from(["string", "integer", "boolean"]))
        return draw(st.sampled_from([{"type": [inner, "null"]}, {"anyOf": [{"type": inner}, {"type": "null"}]}]))
    return draw(object_schemas(depth + 1))


@st.composite
def object_schemas(draw: Any, depth: int = 0) -> dict:
    names = draw(st.lists(st.sampled_from(["city", "max_results", "unit", "tags", "options", "query_text", "limit",
                                           "isActive", "start-date"]), min_size=1, max_size=4, unique=True))
    props = {n: draw(tool_schemas(depth)) for n in names}
    required = [n for n in names if draw(st.booleans())]
    return {"type": "object", "properties": props, "required": required}


@st.composite
def tools(draw: Any) -> dict:
    """A whole tool (OpenAI bare shape) with a generated schema."""
    return {"name": draw(st.sampled_from(["get_weather", "search_docs", "legal_draft_v3"])),
            "description": "generated", "parameters": draw(object_schemas())}


SCALAR_TYPES = {"string", "integer", "number", "boolean"}


def unwrap_singletons(value: Any, schema: Any) -> Any:
    """``value`` with one-element lists unwrapped wherever ``schema`` wants a single scalar.

    Our ``normalize_call`` does this (the spec asks for it); the reference does not. Applying
    it to the reference's input isolates that one named divergence.
    """
    if not isinstance(schema, dict):
        return value
    types = set(_types(schema))
    scalar = ("enum" in schema or "const" in schema or (types and types <= SCALAR_TYPES | {"null"}))
    if scalar and isinstance(value, list) and len(value) == 1 and not isinstance(value[0], (list, dict)):
        return value[0]
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        canon = {"".join(c for c in k.lower() if c.isalnum()): k for k in reversed(list(props))}
        out = {}
        for key, item in value.items():
            name = key if key in props else canon.get("".join(c for c in str(key).lower() if c.isalnum()))
            out[key] = unwrap_singletons(item, props.get(name)) if name else item
        return out
    if isinstance(value, list) and "items" in schema:
        return [unwrap_singletons(item, schema["items"]) for item in value]
    for branch in schema.get("anyOf") or []:
        if isinstance(branch, dict) and branch.get("type") != "null":
            return unwrap_singletons(value, branch)
    return value
