"""Tool sources → the tool IR.

``load_tools`` reads OpenAI (wrapped and bare, Chat Completions and Responses), Anthropic
(``input_schema``), MCP (``inputSchema``, also a JSON-RPC ``tools/list`` result) and BFCL
(``"type": "dict"``, ``float``, ``tuple``, ``any``; JSON Lines records with a ``function``
list) from a path, a JSON string or Python objects.  Schemas are read faithfully: every
JSON Schema keyword a tool schema can use is kept, dialect type names are mapped to JSON
Schema types, and ``$ref`` targets are collected into the tool's ``definitions``.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import attrs

from ..errors import LoaderError
from ..jsonvalues import json_type_of
from .ir import COUNT_KEYWORDS, JSON_TYPES, LIST_KEYWORDS, NUMBER_KEYWORDS, SUBSCHEMA_KEYWORDS, Property, Schema, Tool
from ..limits import DEFAULT_LIMITS, Limits
from .patterns import pattern_error
from .toolset import Toolset

KINDS = ("auto", "openai", "anthropic", "mcp", "bfcl", "python", "typescript")
#: the kinds read from JSON documents (the others from Python objects or TypeScript source)
JSON_KINDS = ("openai", "anthropic", "mcp", "bfcl")
#: file name endings read as TypeScript, and as Python
TYPESCRIPT_SUFFIXES = (".ts", ".d.ts", ".mts", ".cts", ".d.mts", ".d.cts")
PYTHON_SUFFIXES = (".py",)

# BFCL's Python docs write dict/float/tuple/any for JSON Schema's object/number/array/(any).
DIALECT_TYPES: dict[str, tuple[str, ...]] = {
    "dict": ("object",), "float": ("number",), "tuple": ("array",), "any": (),
}
# BFCL's Java and JavaScript docs name the languages' own types, and their answers are
# source text in those languages ("new HashMap<>()", "userProfile"): such a parameter is
# read as accepting any value, with a warning.
SOURCE_LANGUAGE_TYPES = frozenset({
    "String", "char", "Boolean", "long", "int", "Integer", "short", "byte", "double", "Double",
    "Float", "HashMap", "Map", "ArrayList", "List", "Array", "Set", "Object", "str", "bool", "list",
})


class _At(NamedTuple):
    """Where a node's subschemas are: its JSON pointer and path, and their depth."""

    pointer: str
    path: str
    depth: int


class _Reader:
    """Reads one tool's schema; collects ``$ref`` targets and warnings as it goes."""

    def __init__(self, root: Any, *, tool: str, source: str, where: str, limits: Limits) -> None:
        self.root = root
        self.tool = tool
        self.source = source
        self.where = where  # JSON path of the schema's root within the input, e.g. $[0].parameters
        self.limits = limits
        self.definitions: dict[str, Schema] = {}
        self.pending: list[str] = []
        self.warnings: list[str] = []
        self.index: _SchemaIndex | None = None  # the $id/$anchor table, built at the first $ref

    def fail(self, message: str, path: str) -> LoaderError:
        return LoaderError(message, source=self.source, tool=self.tool, path=self.where + path)

    def read(self, raw: Any, pointer: str, path: str, depth: int) -> Schema:
        if depth > self.limits.max_depth:
            raise self.fail(f"the schema is nested deeper than {self.limits.max_depth} levels", path)
        if isinstance(raw, bool):
            return Schema(boolean=raw, pointer=pointer)
        if not isinstance(raw, Mapping):
            raise self.fail(f"a schema must be a JSON object or a boolean, got {_json_type(raw)}", path)
        fields: dict[str, Any] = {"pointer": pointer}
        self._types(raw, path, fields)
        for read_values in (self._strings, self._default, self._numbers, self._counts, self._values):
            read_values(raw, path, fields)
        at = _At(pointer, path, depth + 1)
        for read_subschemas in (self._object_keywords, self._array_keywords, self._subschemas):
            read_subschemas(raw, at, fields)
        if "$ref" in raw:
            fields["ref"] = self._ref(raw["$ref"], pointer, f"{path}.$ref")
        return Schema(**fields)

    # --- a node's own values ---

    def _types(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        """``types`` (dialect names mapped, ``nullable: true`` a ``null`` member) and ``tuple_like``."""
        declared = raw.get("type")
        types: tuple[str, ...] = ()
        for name in (() if declared is None else declared if isinstance(declared, list) else [declared]):
            mapped = self._type(name, path, fields)
            if not mapped:  # "any" anywhere in a list of types allows every type
                types = ()
                break
            types += tuple(t for t in mapped if t not in types)
        if raw.get("nullable") is True and types and "null" not in types:
            types += ("null",)
        fields["types"] = types

    def _type(self, name: Any, path: str, fields: dict[str, Any]) -> tuple[str, ...]:
        """The JSON Schema types one declared type name stands for (none: any value)."""
        if not isinstance(name, str):
            raise self.fail(f"type must be a string or an array of strings, got {_json_type(name)}", f"{path}.type")
        if name in JSON_TYPES:
            return (name,)
        if name in DIALECT_TYPES:
            if name == "tuple":
                fields["tuple_like"] = True
            return DIALECT_TYPES[name]
        if name.strip() and name not in SOURCE_LANGUAGE_TYPES:
            raise self.fail(f"unknown type {name!r}; expected one of {', '.join(JSON_TYPES)} "
                            f"(or a BFCL name: dict, float, tuple, any)", f"{path}.type")
        what = f"the source-language type {name!r}" if name.strip() else "an empty type"
        self.warnings.append(f"tool {self.tool!r} at {self.where}{path}.type: {what}, read as any value")
        return ()

    def _strings(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        for key in ("description", "title", "pattern", "format"):
            value = raw.get(key)
            if value is not None and not isinstance(value, str):
                raise self.fail(f"{key} must be a string, got {_json_type(value)}", f"{path}.{key}")
            if value is not None:
                fields[key] = value
        if "pattern" in fields:
            self._check_pattern(fields["pattern"], f"{path}.pattern", "pattern", python_re=True)

    def _numbers(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        for key, attr in NUMBER_KEYWORDS.items():
            value = raw.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    isinstance(value, float) and not math.isfinite(value)):
                raise self.fail(f"{key} must be a finite number, got {_json_type(value)}", f"{path}.{key}")
            if key == "multipleOf" and value <= 0:
                raise self.fail("multipleOf must be greater than 0", f"{path}.{key}")
            fields[attr] = value

    def _counts(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        for key, attr in COUNT_KEYWORDS.items():
            value = raw.get(key)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise self.fail(f"{key} must be a non-negative integer, got {value!r}", f"{path}.{key}")
            if value is not None:
                fields[attr] = value

    def _default(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        if "default" in raw:  # data, copied: the IR never shares a mutable value with the input
            fields["default"] = copy.deepcopy(raw["default"])

    def _values(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        """``uniqueItems``, ``enum`` and ``const`` (data, copied)."""
        if "uniqueItems" in raw:
            if not isinstance(raw["uniqueItems"], bool):
                raise self.fail("uniqueItems must be true or false", f"{path}.uniqueItems")
            fields["unique_items"] = raw["uniqueItems"]
        enum = raw.get("enum")
        if enum is not None and not isinstance(enum, list):
            raise self.fail(f"enum must be an array, got {_json_type(enum)}", f"{path}.enum")
        if enum is not None:
            fields["enum"] = tuple(copy.deepcopy(enum))
        if "const" in raw:
            fields["const"] = copy.deepcopy(raw["const"])

    # --- subschemas ---

    def _one(self, raw: Any, at: _At, key: str) -> Schema:
        """The subschema under ``key``."""
        return self.read(raw, f"{at.pointer}/{key}", f"{at.path}.{key}", at.depth)

    def _each(self, items: Any, at: _At, key: str) -> tuple[Schema, ...]:
        """The array of subschemas under ``key``."""
        if not isinstance(items, list):
            raise self.fail(f"{key} must be an array of schemas, got {_json_type(items)}", f"{at.path}.{key}")
        return tuple(self.read(sub, f"{at.pointer}/{key}/{i}", f"{at.path}.{key}[{i}]", at.depth)
                     for i, sub in enumerate(items))

    def _named(self, mapping: Mapping[str, Any], at: _At, key: str) -> tuple[tuple[str, Schema], ...]:
        """The object of named subschemas under ``key`` (``properties``, ``patternProperties``)."""
        return tuple((name, self.read(sub, f"{at.pointer}/{key}/{_escape(name)}", f"{at.path}.{key}.{name}",
                                      at.depth)) for name, sub in mapping.items())

    def _object_keywords(self, raw: Mapping[str, Any], at: _At, fields: dict[str, Any]) -> None:
        properties = raw.get("properties")
        if properties is not None and not isinstance(properties, Mapping):
            raise self.fail(f"properties must be an object, got {_json_type(properties)}", f"{at.path}.properties")
        if properties is not None:
            self._string_keys(properties, f"{at.path}.properties")
            fields["properties"] = tuple(Property(*pair) for pair in self._named(properties, at, "properties"))
        self._required(raw, at.path, fields)
        extra = raw.get("additionalProperties")
        if extra is not None:
            fields["additional_properties"] = extra if isinstance(extra, bool) else self._one(
                extra, at, "additionalProperties")
        if "patternProperties" in raw:
            fields["pattern_properties"] = self._pattern_properties(raw["patternProperties"], at)
        if "dependentRequired" in raw:
            fields["dependent_required"] = self._dependent_required(raw["dependentRequired"], at.path)

    def _required(self, raw: Mapping[str, Any], path: str, fields: dict[str, Any]) -> None:
        required = raw.get("required")
        if required is not None:
            if isinstance(required, bool):
                # draft 3 wrote "required": true on the property itself; the enclosing object reads it
                required = []
            if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
                raise self.fail("required must be an array of property names", f"{path}.required")
            fields["required"] = tuple(dict.fromkeys(required))
        draft3 = tuple(name for name, sub in (raw.get("properties") or {}).items()
                       if isinstance(sub, Mapping) and sub.get("required") is True)
        if draft3:
            fields["required"] = tuple(dict.fromkeys(fields.get("required", ()) + draft3))

    def _pattern_properties(self, patterns: Any, at: _At) -> tuple[tuple[str, Schema], ...]:
        if not isinstance(patterns, Mapping):
            raise self.fail("patternProperties must be an object", f"{at.path}.patternProperties")
        self._string_keys(patterns, f"{at.path}.patternProperties")
        for name in patterns:
            self._check_pattern(name, f"{at.path}.patternProperties.{name}", "patternProperties key",
                                python_re=False)
        return self._named(patterns, at, "patternProperties")

    def _dependent_required(self, deps: Any, path: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if not isinstance(deps, Mapping) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in deps.values()):
            raise self.fail("dependentRequired must map names to arrays of names", f"{path}.dependentRequired")
        return tuple((k, tuple(v)) for k, v in deps.items())

    def _array_keywords(self, raw: Mapping[str, Any], at: _At, fields: dict[str, Any]) -> None:
        items = raw.get("items")
        if isinstance(items, list):  # the draft-4 tuple form: one schema per position
            fields["prefix_items"] = self._each(items, at, "items")
            if "additionalItems" in raw:
                fields["items"] = self._one(raw["additionalItems"], at, "additionalItems")
        elif items is not None:
            fields["items"] = self._one(items, at, "items")
        if "prefixItems" in raw:
            if not isinstance(raw["prefixItems"], list):
                raise self.fail("prefixItems must be an array of schemas", f"{at.path}.prefixItems")
            fields["prefix_items"] = self._each(raw["prefixItems"], at, "prefixItems")

    def _subschemas(self, raw: Mapping[str, Any], at: _At, fields: dict[str, Any]) -> None:
        """``not``, ``if``/``then``/``else``, ``propertyNames``, ``contains`` and the combinators."""
        for key, attr in SUBSCHEMA_KEYWORDS.items():
            if key in raw:
                fields[attr] = self._one(raw[key], at, key)
        for key, attr in LIST_KEYWORDS.items():
            if key in raw and key != "prefixItems":
                fields[attr] = self._each(raw[key], at, key)

    def _check_pattern(self, source: str, path: str, what: str, *, python_re: bool) -> None:
        """Warn of a pattern that does not compile, as Python reads it or as ECMA-262: the profiles that read it
        so skip it, and it checks nothing, which nobody would notice unless told."""
        python = pattern_error(source, ecma=False, python_re=python_re)
        ecma = pattern_error(source, ecma=True)
        if python is None and ecma is None:
            return
        # (the study profile reads no pattern, only patternProperties keys, to tell an undeclared argument)
        readers = "the sdk profile skips it" if python_re else "the sdk and study profiles skip it"
        where = f"tool {self.tool!r} at {self.where}{path}: the {what} {source!r} does not compile"
        if python is not None and ecma is not None:
            self.warnings.append(f"{where} ({python}): {readers}, so it checks nothing; the jsonschema profile, "
                                 "which reads it as ECMA-262, refuses the tool")
        elif python is not None:
            self.warnings.append(f"{where} as Python reads it ({python}): {readers}, so it checks nothing "
                                 "(the jsonschema profile reads it as ECMA-262, and it compiles so)")
        else:
            self.warnings.append(f"{where} as ECMA-262 ({ecma}): the jsonschema profile, which reads it so, "
                                 "refuses the tool (as Python reads it, it compiles)")

    def _string_keys(self, mapping: Mapping[Any, Any], path: str) -> None:
        """Refuse a key that is not a string (JSON has none; a Python dict may)."""
        for key in mapping:
            if not isinstance(key, str):
                raise self.fail(f"property names must be strings, got {_json_type(key)} {key!r}", path)

    def _ref(self, ref: Any, pointer: str, path: str) -> str:
        """The ``definitions`` key of the schema ``ref`` (written at ``pointer``) names.

        The reference is resolved as JSON Schema 2020-12 says: against the base URI the
        ``$id``s around ``pointer`` set, to a schema of this document (its root or one
        that declares that ``$id``), then to the JSON pointer or ``$anchor`` in the
        fragment.  The key is that schema's canonical pointer from the document's root
        (``#/$defs/a~1b``), so equal targets share one key.  A reference to any other
        document is refused: only local references are supported.
        """
        from urllib.parse import unquote

        if not isinstance(ref, str):
            raise self.fail(f"$ref must be a string, got {_json_type(ref)}", path)
        if self.index is None:
            self.index = _SchemaIndex(self.root, self.limits.max_depth)
        uri, _, fragment = _resolve_uri(self.index.base_at(pointer), ref).partition("#")
        resource = self.index.resources.get(uri)
        if resource is None:
            raise self.fail(f"only local references (to this schema or a schema inside it) are supported, "
                            f"got {ref!r}", path)
        fragment = unquote(fragment)
        if fragment == "":
            key = resource
        elif fragment.startswith("/"):
            tokens = (t.replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/"))
            key = resource + "".join("/" + _escape(t) for t in tokens)
        else:
            found = self.index.anchors.get(f"{uri}#{fragment}")
            if found is None:
                raise self.fail(f"$ref {ref!r} names the anchor {fragment!r}, which no schema here declares", path)
            key = found
        if key not in self.definitions and key not in self.pending:
            self.pending.append(key)
        return key

    def resolve_pending(self) -> None:
        """Read every schema a ``$ref`` points to (and the refs inside those)."""
        while self.pending:
            ref = self.pending.pop()
            target = _follow_pointer(self.root, ref)
            if target is _MISSING:
                raise self.fail(f"$ref {ref!r} points to nothing in this tool's schema", "")
            self.definitions[ref] = Schema()  # placeholder: a cycle back to it is legal
            self.definitions[ref] = self.read(target, ref, _pointer_path(self.root, ref), 0)


_MISSING = object()


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


# --- $ref resolution: base URIs, embedded resources ($id) and anchors --------------------------

#: The base URI of a schema that declares no ``$id`` (RFC 3986 resolution needs one).
_DEFAULT_BASE = "urn:toolform:schema"
# Where a schema holds subschemas: maps of them, one of them, arrays of them.
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_ONE = ("additionalProperties", "unevaluatedProperties", "propertyNames", "items", "additionalItems",
                  "unevaluatedItems", "contains", "not", "if", "then", "else", "contentSchema")
_SUBSCHEMA_ARRAYS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


class _SchemaIndex:
    """Every subschema's base URI, and the schemas ``$id``s and ``$anchor``s name, by URI.

    Only subschema positions are walked, so an ``$id`` inside ``enum``, ``const`` or
    ``default`` (data, not a schema) identifies nothing.

    >>> index = _SchemaIndex({"$id": "http://x.org/a.json", "$defs": {"b": {"$id": "b.json", "$anchor": "t"}}}, 64)
    >>> index.resources["http://x.org/b.json"], index.anchors["http://x.org/b.json#t"], index.base_at("#/$defs/b/x")
    ('#/$defs/b', '#/$defs/b', 'http://x.org/b.json')
    """

    def __init__(self, root: Any, max_depth: int) -> None:
        self.bases: dict[str, str] = {}
        self.resources: dict[str, str] = {}  # absolute URI (no fragment) → pointer
        self.anchors: dict[str, str] = {}  # absolute URI#name → pointer
        if not (isinstance(root, Mapping) and isinstance(root.get("$id"), str)):
            self.resources[_DEFAULT_BASE] = "#"
        stack: list[tuple[Any, str, str, int]] = [(root, "#", _DEFAULT_BASE, 0)]
        while stack:
            node, pointer, base, depth = stack.pop()
            if not isinstance(node, Mapping) or depth > max_depth:
                continue
            if isinstance(node.get("$id"), str):
                base = _resolve_uri(base, node["$id"]).partition("#")[0]
                self.resources.setdefault(base, pointer)
            self.bases[pointer] = base
            for key in ("$anchor", "$dynamicAnchor"):
                if isinstance(node.get(key), str):
                    self.anchors.setdefault(f"{base}#{node[key]}", pointer)
            for key in _SUBSCHEMA_MAPS:
                if isinstance(node.get(key), Mapping):
                    stack.extend((sub, f"{pointer}/{key}/{_escape(str(name))}", base, depth + 1)
                                 for name, sub in node[key].items())
            for key in _SUBSCHEMA_ONE:
                if isinstance(node.get(key), Mapping):
                    stack.append((node[key], f"{pointer}/{key}", base, depth + 1))
            for key in _SUBSCHEMA_ARRAYS:
                if isinstance(node.get(key), list):
                    stack.extend((sub, f"{pointer}/{key}/{i}", base, depth + 1) for i, sub in enumerate(node[key]))

    def base_at(self, pointer: str) -> str:
        """The base URI in force at ``pointer`` (that of the nearest indexed schema above it)."""
        while pointer not in self.bases and "/" in pointer:
            pointer = pointer.rpartition("/")[0]
        return self.bases.get(pointer, _DEFAULT_BASE)


_URI = re.compile(r"(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)


def _resolve_uri(base: str, ref: str) -> str:
    """``ref`` resolved against the absolute URI ``base`` (RFC 3986, section 5.2).

    >>> _resolve_uri("http://a/b/c/d;p?q", "../g?y#s"), _resolve_uri("urn:uuid:1234", "#/$defs/x")
    ('http://a/b/g?y#s', 'urn:uuid:1234#/$defs/x')
    """
    scheme, authority, path, query, fragment = _URI.fullmatch(ref).groups()  # type: ignore[union-attr]
    if scheme is None:
        scheme, base_authority, base_path, base_query, _ = _URI.fullmatch(base).groups()  # type: ignore[union-attr]
        if authority is None:
            authority = base_authority
            if path == "":
                path, query = base_path, base_query if query is None else query
            elif not path.startswith("/"):
                path = ("/" if base_authority is not None and base_path == "" else
                        base_path[:base_path.rfind("/") + 1]) + path
    path = _remove_dot_segments(path)
    return "".join((f"{scheme}:" if scheme is not None else "", f"//{authority}" if authority is not None else "",
                    path, f"?{query}" if query is not None else "", f"#{fragment}" if fragment is not None else ""))


def _remove_dot_segments(path: str) -> str:
    """RFC 3986, section 5.2.4: ``/a/b/../c/./d`` is ``/a/c/d``."""
    if "." not in path:
        return path
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                out.append("")
        elif segment == "..":
            if len(out) > 1 or (out and out[0] != ""):
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    result = "/".join(out)
    return "/" + result if path.startswith("/") and not result.startswith("/") else result


def _follow_pointer(root: Any, ref: str) -> Any:
    """The node at canonical pointer ``ref`` (``#/a~1b/0``, already percent-decoded by ``_ref``)."""
    node = root
    fragment = ref[1:]
    if fragment == "":
        return node
    if not fragment.startswith("/"):
        return _MISSING
    for part in fragment[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _pointer_path(root: Any, ref: str) -> str:
    """The JSON path (after the schema's own) of the node at canonical pointer ``ref``.

    >>> _pointer_path({"$defs": {"a/b": {"items": [{}, {}]}}}, "#/$defs/a~1b/items/1")
    '.$defs.a/b.items[1]'
    """
    node, out = root, []
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            out.append(f"[{part}]")
            node = node[int(part)]
        else:
            out.append(f".{part}")
            node = node.get(part) if isinstance(node, Mapping) else None
    return "".join(out)


def _json_type(value: Any) -> str:
    """What ``value`` is, in JSON's words (every number a number), for a message."""
    if isinstance(value, Mapping):
        return "object"
    kind = json_type_of(value)
    return "number" if kind == "integer" else kind


def read_schema(raw: Any, *, tool: str = "<schema>", source: str = "<object>", where: str = "$",
                limits: Limits = DEFAULT_LIMITS) -> tuple[Schema, dict[str, Schema], list[str]]:
    """Read one JSON schema into the IR: the root node, its ``$ref`` targets and any warnings.

    >>> root, defs, _ = read_schema({"type": "dict", "properties": {"x": {"type": "float"}}})
    >>> root.types, root.property("x").types
    (('object',), ('number',))
    """
    reader = _Reader(raw, tool=tool, source=source, where=where, limits=limits)
    schema = reader.read(raw, "#", "", 0)
    reader.resolve_pending()
    return schema, reader.definitions, reader.warnings


# --- where the tools are in the input -------------------------------------------------------

def _tool_entries(doc: Any, source: str) -> list[tuple[str, Any]]:
    """The tool definitions in ``doc`` with their JSON paths."""
    if isinstance(doc, Mapping):
        if isinstance(doc.get("result"), Mapping) and "tools" in doc["result"]:  # JSON-RPC tools/list
            return _tool_entries_list(doc["result"]["tools"], "$.result.tools", source)
        if "tools" in doc and not _looks_like_tool(doc):
            return _tool_entries_list(doc["tools"], "$.tools", source)
        if isinstance(doc.get("function"), list):  # a BFCL record
            return _tool_entries_list(doc["function"], "$.function", source)
        return [("$", doc)]
    if isinstance(doc, list):
        out: list[tuple[str, Any]] = []
        for i, item in enumerate(doc):
            if isinstance(item, Mapping) and isinstance(item.get("function"), list):
                out.extend((f"$[{i}].function[{j}]", t) for j, t in enumerate(item["function"]))
            else:
                out.append((f"$[{i}]", item))
        return out
    raise LoaderError(f"expected a tool, a list of tools or an object with 'tools', got {_json_type(doc)}",
                      source=source, path="$")


def _tool_entries_list(tools: Any, where: str, source: str) -> list[tuple[str, Any]]:
    if not isinstance(tools, list):
        raise LoaderError(f"'tools' must be an array, got {_json_type(tools)}", source=source, path=where)
    return [(f"{where}[{i}]", t) for i, t in enumerate(tools)]


def _looks_like_tool(doc: Mapping[str, Any]) -> bool:
    return "name" in doc and any(k in doc for k in ("parameters", "input_schema", "inputSchema"))


def _is_wrapped(entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is OpenAI's ``{"type": "function", "function": {...}}``."""
    return entry.get("type") == "function" and isinstance(entry.get("function"), Mapping)


def _shape(entry: Mapping[str, Any]) -> str:
    if _is_wrapped(entry):
        return "openai"
    if "input_schema" in entry:
        return "anthropic"
    if "inputSchema" in entry:
        return "mcp"
    params = entry.get("parameters")
    if isinstance(params, Mapping) and params.get("type") == "dict":
        return "bfcl"
    return "openai"


_SCHEMA_KEY = {"openai": "parameters", "bfcl": "parameters", "anthropic": "input_schema", "mcp": "inputSchema"}


def _read_tool(where: str, entry: Any, kind: str, source: str, limits: Limits) -> tuple[Tool, list[str]]:
    if not isinstance(entry, Mapping):
        raise LoaderError(f"a tool definition must be a JSON object, got {_json_type(entry)}", source=source,
                          path=where)
    shape = _shape(entry) if kind == "auto" else kind
    body = entry
    if _is_wrapped(entry):  # whatever the kind
        body, where = entry["function"], f"{where}.function"
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise LoaderError("a tool needs a non-empty string 'name'"
                          + ("" if name is None else f", got {_json_type(name)} {name!r}"),
                          source=source, path=f"{where}.name")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise LoaderError(f"description must be a string, got {_json_type(description)}", source=source,
                          tool=name, path=f"{where}.description")
    key = _SCHEMA_KEY[shape]
    found = next((k for k in _SCHEMA_KEY.values() if k in body), key)
    if key not in body and found != key:
        raise LoaderError(f"kind {kind!r} reads the schema from {key!r}, but this tool has {found!r}",
                          source=source, tool=name, path=f"{where}.{found}")
    schema, definitions, warnings = _tool_parameters(body.get(key), key, name, f"{where}.{key}", source, limits)
    return Tool(name=name, description=description or "", parameters=schema, definitions=definitions,
                source=f"{source} {where}"), warnings


def _tool_parameters(raw: Any, key: str, name: str, where: str, source: str,
                     limits: Limits) -> tuple[Schema, dict[str, Schema], list[str]]:
    """The tool's argument schema (an object, when it says no type) read from ``raw`` (at ``where``)."""
    if raw is None:
        raw = {"type": "object", "properties": {}}
    if not isinstance(raw, Mapping):
        raise LoaderError(f"{key} must be a JSON object, got {_json_type(raw)}", source=source, tool=name,
                          path=where)
    try:
        schema, definitions, warnings = read_schema(raw, tool=name, source=source, where=where, limits=limits)
    except RecursionError:  # only when limits.max_depth is raised past what Python's stack holds
        raise LoaderError(f"the schema is nested too deeply to read (limits.max_depth is {limits.max_depth})",
                          source=source, tool=name, path=where) from None
    if schema.types and "object" not in schema.types:
        raise LoaderError(f"a tool's arguments are an object, but {key}.type says {'/'.join(schema.types)}",
                          source=source, tool=name, path=f"{where}.type")
    if not schema.types:
        schema = attrs.evolve(schema, types=("object",))
    return schema, definitions, warnings


# --- entry point ----------------------------------------------------------------------------

def _names_a_file(obj: Any) -> bool:
    """Whether ``obj`` is a path, or text that is not JSON (which starts with '{' or '[') and so names one."""
    return isinstance(obj, Path) or isinstance(obj, str) and bool(obj.strip()) and not obj.lstrip().startswith(
        ("{", "["))


def _decoded(obj: Any) -> Any:
    """``obj`` as text when it is bytes (UTF-8 only), else as it is."""
    if not isinstance(obj, (bytes, bytearray)):
        return obj
    try:
        return bytes(obj).decode("utf-8")
    except UnicodeDecodeError as err:
        raise LoaderError(f"the bytes are not UTF-8 text (byte {err.start})", source="<bytes>") from None


def _checked_text(text: str, limits: Limits, source: str = "<string>") -> str:
    if len(text) > limits.max_input_bytes:
        raise LoaderError(f"the text is longer than the {limits.max_input_bytes} allowed", source=source)
    return text


def _read_input(obj: Any, limits: Limits) -> tuple[Any, str]:
    """Turn a path, JSON text or Python objects into (document, source name)."""
    if _names_a_file(obj):
        path = Path(obj)
        text = _read_text_file(path, limits, missing="no such file (and not JSON text: JSON starts with '{' or '[')")
        if not text.strip():
            raise LoaderError("the file is empty: it holds no JSON", source=str(path))
        return _parse_json(text, str(path)), str(path)
    obj = _decoded(obj)
    if not isinstance(obj, str):
        return obj, "<object>"
    if not obj.strip():
        raise LoaderError("the text is empty: it holds no JSON", source="<string>")
    return _parse_json(_checked_text(obj, limits), "<string>"), "<string>"


def _read_text_file(path: Path, limits: Limits, missing: str = "no such file") -> str:
    """A UTF-8 text file's contents, every failure (missing, too large, not UTF-8) a :class:`LoaderError`."""
    try:
        if not path.is_file():
            raise LoaderError("is a directory, not a file" if path.is_dir() else missing, source=str(path))
        size = path.stat().st_size
        if size > limits.max_input_bytes:
            raise LoaderError(f"the file is {size} bytes, more than the {limits.max_input_bytes} allowed",
                              source=str(path))
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise LoaderError(f"the file is not UTF-8 text (byte {err.start})", source=str(path)) from None
    except (OSError, ValueError) as err:  # a name too long, a NUL in it, no permission, ...
        raise LoaderError(f"cannot read the file: {getattr(err, 'strerror', None) or err}",
                          source=str(path)) from None


def _parse_json(text: str, source: str) -> Any:
    try:
        return _json_loads(text, source, "JSON")
    except LoaderError as first:
        if first.message != "not valid JSON: Extra data":
            raise
    # JSON Lines: one document a line (BFCL's files).  Split at "\n" only: a JSON string may
    # hold U+2028 or a form feed unescaped, where str.splitlines would cut it.
    docs = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            docs.append(_json_loads(line, source, "JSON Lines", number))
    return docs


def _json_loads(text: str, source: str, what: str, line: int | None = None) -> Any:
    """``json.loads``, every failure a :class:`LoaderError` (with line and column where known)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise LoaderError(f"not valid {what}: {err.msg}", source=source,
                          line=err.lineno if line is None else line, column=err.colno) from None
    except RecursionError:
        raise LoaderError(f"the {what} is nested too deeply", source=source, line=line) from None
    except ValueError as err:  # e.g. an integer longer than Python's int_max_str_digits
        raise LoaderError(f"not valid {what}: {err}", source=source, line=line) from None


def load_tools(obj: Any, kind: str = "auto", *, only_decorated: bool | None = None,
               limits: Limits = DEFAULT_LIMITS) -> Toolset:
    """Load tools from a path, a JSON string, Python objects or TypeScript into a :class:`Toolset`.

    ``kind`` is ``auto`` (detected per input, and per tool for JSON), ``openai``,
    ``anthropic``, ``mcp``, ``bfcl`` (JSON shapes), ``python`` (a module, a dotted module
    name, a ``.py`` path, a function or a list of functions: see
    :mod:`toolform_rules.schema.python_tools`) or ``typescript`` (a ``.ts``/``.d.ts`` path or
    TypeScript source text: see :mod:`toolform_rules.schema.typescript`).  Loading a ``.py``
    path or a dotted name imports it, which runs its code; reading JSON or TypeScript never
    runs anything.  ``only_decorated`` (Python): only the functions marked with
    :func:`~toolform_rules.tool` (default: those when the module marks any, else every
    public function it defines).  Raises :class:`LoaderError` naming the source, the tool
    and the JSON path (or line) of a bad field, and when two tools share one canonical
    name.  The input is never modified.

    >>> tools = load_tools('[{"name": "get_weather", "input_schema": {"type": "object", '
    ...                    '"properties": {"city": {"type": "string"}}, "required": ["city"]}}]')
    >>> tools.names(), tools.get("GetWeather").parameters.required
    (['get_weather'], ('city',))
    """
    if kind not in KINDS:
        raise LoaderError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}", source="<arguments>")
    if isinstance(obj, Toolset):
        return obj
    if isinstance(obj, Tool):
        return Toolset([obj])
    source_kind = kind if kind in ("python", "typescript") else _source_kind(obj) if kind == "auto" else "json"
    executors: dict[str, Any] = {}
    if source_kind == "python":
        from .python_tools import read_python

        read = read_python(obj, only_decorated=only_decorated, limits=limits)
        entries, source, executors, kind = read.entries, read.source, read.executors, "openai"
    elif source_kind == "typescript":
        from .typescript import read_typescript

        text, source = _typescript_text(obj, limits)
        entries, kind = read_typescript(text, source=source, limits=limits), "openai"
    else:
        doc, source = _read_input(obj, limits)
        entries = _tool_entries(doc, source)
    if len(entries) > limits.max_tools:
        raise LoaderError(f"{len(entries)} tools, more than the {limits.max_tools} allowed", source=source)
    tools: list[Tool] = []
    warnings: list[str] = []
    for where, entry in entries:
        tool, tool_warnings = _read_tool(where, entry, kind, source, limits)
        tools.append(tool)
        warnings.extend(tool_warnings)
    return Toolset(tools, warnings=tuple(warnings), source=source, executors=executors)


_DOTTED_NAME = re.compile(r"[A-Za-z_]\w{0,99}(?:\.[A-Za-z_]\w{0,99}){0,20}")
_TYPESCRIPT_TEXT = re.compile(r"(?:^|[\s;{}])(?:function|interface|type)\s+[A-Za-z_$]")


def _source_kind(obj: Any) -> str:
    """``python``, ``typescript`` or ``json``: what ``obj`` is, for ``kind="auto"``."""
    import types

    if isinstance(obj, types.ModuleType) or callable(obj) and not isinstance(obj, type):
        return "python"
    if isinstance(obj, (list, tuple)) and obj and all(callable(item) and not isinstance(item, Mapping)
                                                      for item in obj):
        return "python"
    return _named_source_kind(obj) if _names_a_file(obj) else "json"


def _named_source_kind(obj: str | Path) -> str:
    """What a path, or text that is not JSON, names: a file by its ending, a module, or TypeScript source."""
    name = str(obj).strip()
    if name.lower().endswith(PYTHON_SUFFIXES):
        return "python"
    if name.lower().endswith(TYPESCRIPT_SUFFIXES):
        return "typescript"
    if not isinstance(obj, str):
        return "json"
    if "\n" not in name and len(name) < 4096 and not Path(name).exists() and _DOTTED_NAME.fullmatch(name):
        if _module_exists(name):
            return "python"
    if _TYPESCRIPT_TEXT.search(obj[:65536]) and not _is_file(name):
        return "typescript"
    return "json"


def _module_exists(name: str) -> bool:
    """Whether ``name`` names a module (finding it imports its parent packages; one that fails to import counts,
    so that its error is reported where it is, not as a missing file)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # no such parent package ("tools.json" is no module "json" in a package "tools")
        return False
    except (Exception, SystemExit):  # a parent package whose import fails: the Python reader says where
        return True


def _is_file(name: str) -> bool:
    try:
        return len(name) < 4096 and "\n" not in name and Path(name).is_file()
    except (OSError, ValueError):
        return False


def _typescript_text(obj: Any, limits: Limits) -> tuple[str, str]:
    """(the TypeScript source, its name): ``obj`` is a path to a ``.ts`` file or the source itself."""
    obj = _decoded(obj)
    if isinstance(obj, Path) or isinstance(obj, str) and _is_file(obj.strip()):
        path = Path(obj if isinstance(obj, Path) else obj.strip())
        return _read_text_file(path, limits), str(path)
    if isinstance(obj, str) and obj.strip().lower().endswith(TYPESCRIPT_SUFFIXES) and "\n" not in obj.strip():
        raise LoaderError("no such file", source=obj.strip())
    if not isinstance(obj, str):
        raise LoaderError(f"TypeScript tools come from a .ts path or source text, got {type(obj).__name__}",
                          source="<object>")
    return _checked_text(obj, limits), "<string>"
