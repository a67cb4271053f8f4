"""The tool IR written back as JSON: JSON Schema 2020-12, in OpenAI's, Anthropic's or MCP's tool shape.

What :func:`~toolform_rules.load_tools` read comes back out in the shape a provider's API
takes, so a toolset loaded from Python functions or TypeScript can be sent to a model, and a
toolset loaded from one provider's JSON converted to another's.  The schema is the IR's:
every keyword the loader kept, dialects resolved (BFCL's ``dict``/``float``/``tuple`` are
``object``/``number``/``array``, ``nullable: true`` a ``null`` type), each ``$ref`` a JSON
pointer into the same schema with its target written there (under ``$defs`` or wherever the
source had it).  Loading an export gives the same tool back.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable, Mapping

from .ir import ABSENT, COUNT_KEYWORDS, LIST_KEYWORDS, NUMBER_KEYWORDS, SUBSCHEMA_KEYWORDS, Schema, Tool

#: the tool shapes :func:`tool_to_json` writes
SHAPES = ("openai", "anthropic", "mcp")

# IR attribute → JSON Schema keyword: the IR's keyword tables turned round (what the loader reads, this writes)
_PLAIN = (("title", "title"), ("description", "description"), ("format", "format"), ("pattern", "pattern"),
          *((attribute, keyword) for keyword, attribute in {**NUMBER_KEYWORDS, **COUNT_KEYWORDS}.items()))
_ONE = (("items", "items"), *((attribute, keyword) for keyword, attribute in SUBSCHEMA_KEYWORDS.items()))
_MANY = tuple((attribute, keyword) for keyword, attribute in LIST_KEYWORDS.items())


def schema_to_json(schema: Schema, definitions: Mapping[str, Schema] | None = None) -> Any:
    """``schema`` as a JSON Schema 2020-12 document (a new dict, or ``True``/``False``); ``definitions``:
    the ``$ref`` targets (a tool's), each written at the pointer its key names.

    >>> from toolform_rules import sample_tool
    >>> schema_to_json(sample_tool().parameters)["properties"]["term_months"]
    {'type': 'integer', 'description': 'Length of the term.', 'minimum': 1, 'maximum': 600}
    """
    out = _node(schema)
    for pointer in sorted(definitions or {}, key=lambda p: p.count("/")):
        if isinstance(out, dict):
            _place(out, pointer, _node((definitions or {})[pointer]))
    return out


def _node(schema: Schema) -> Any:
    if schema.boolean is not None:
        return schema.boolean
    out: dict[str, Any] = {}
    for write in (_values, _object_keywords, _subschemas):  # in this order: the keys' order in the JSON
        write(schema, out)
    return out


def _values(schema: Schema, out: dict[str, Any]) -> None:
    """``$ref``, ``type`` and the keywords that hold values (data copied: the IR's is never shared)."""
    if schema.ref is not None:
        out["$ref"] = schema.ref
    if schema.types:
        out["type"] = schema.types[0] if len(schema.types) == 1 else list(schema.types)
    for attribute, keyword in _PLAIN:
        value = getattr(schema, attribute)
        if value is not None:
            out[keyword] = value
    if schema.default is not ABSENT:
        out["default"] = copy.deepcopy(schema.default)
    if schema.enum is not None:
        out["enum"] = copy.deepcopy(list(schema.enum))
    if schema.const is not ABSENT:
        out["const"] = copy.deepcopy(schema.const)


def _object_keywords(schema: Schema, out: dict[str, Any]) -> None:
    if schema.properties:
        out["properties"] = {prop.name: _node(prop.schema) for prop in schema.properties}
    if schema.required:
        out["required"] = list(schema.required)
    if schema.additional_properties is not None:
        extra = schema.additional_properties
        out["additionalProperties"] = extra if isinstance(extra, bool) else _node(extra)
    if schema.pattern_properties:
        out["patternProperties"] = {pattern: _node(sub) for pattern, sub in schema.pattern_properties}
    if schema.dependent_required:
        out["dependentRequired"] = {name: list(names) for name, names in schema.dependent_required}


def _subschemas(schema: Schema, out: dict[str, Any]) -> None:
    """``uniqueItems``, then the keywords that hold one subschema or a list of them."""
    if schema.unique_items:
        out["uniqueItems"] = True
    for attribute, keyword in _ONE:
        sub = getattr(schema, attribute)
        if sub is not None:
            out[keyword] = _node(sub)
    for attribute, keyword in _MANY:
        subs = getattr(schema, attribute)
        if subs:
            out[keyword] = [_node(sub) for sub in subs]


def _place(root: dict[str, Any], pointer: str, value: Any) -> None:
    """Write ``value`` at the JSON ``pointer`` (``#/$defs/Address``) in ``root`` unless something is there
    already (a target inside the written tree is that tree's own node); maps on the way are made."""
    if pointer in ("#", ""):
        return
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.lstrip("#").lstrip("/").split("/")]
    node: Any = root
    for token in tokens[:-1]:
        if isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node):
                return
            node = node[int(token)]
        elif isinstance(node, dict):
            node = node.setdefault(token, {})
        else:
            return
    if isinstance(node, dict) and tokens[-1] not in node:
        node[tokens[-1]] = value


def tool_to_json(tool: Tool, shape: str = "openai") -> dict[str, Any]:
    """``tool`` in a provider's shape: ``openai`` (``{"type": "function", "function": {...}}``),
    ``anthropic`` (``input_schema``) or ``mcp`` (``inputSchema``).

    >>> from toolform_rules import sample_tool
    >>> exported = tool_to_json(sample_tool(), "anthropic")
    >>> exported["name"], exported["input_schema"]["required"]
    ('legal_draft_v3', ['counterparty', 'value', 'term_months'])
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown tool shape {shape!r}; use one of {', '.join(SHAPES)}")
    schema = schema_to_json(tool.parameters, tool.definitions)
    if not isinstance(schema, dict):  # a boolean schema: an object that takes anything, or nothing
        schema = {"type": "object"} if schema else {"type": "object", "not": {}}
    head: dict[str, Any] = {"name": tool.name}
    if tool.description:
        head["description"] = tool.description
    if shape == "openai":
        return {"type": "function", "function": {**head, "parameters": schema}}
    return {**head, "input_schema" if shape == "anthropic" else "inputSchema": schema}


def tools_to_json(tools: Iterable[Tool], shape: str = "openai") -> list[dict[str, Any]]:
    """Every tool of ``tools`` in ``shape`` (see :func:`tool_to_json`), in order."""
    return [tool_to_json(tool, shape) for tool in tools]


__all__ = ["SHAPES", "schema_to_json", "tool_to_json", "tools_to_json"]
