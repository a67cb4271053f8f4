"""The tool IR: what every tool source (OpenAI, Anthropic, MCP, BFCL JSON, ...) becomes.

A :class:`Tool` has a name, a description and a :class:`Schema` for its arguments.
``Schema`` is JSON Schema with the dialects already resolved: BFCL's ``dict``/``float``/
``tuple``/``any`` are ``object``/``number``/``array``/no type, ``nullable: true`` is a
``null`` member of ``types``, and every ``$ref`` points into the tool's ``definitions``
table.  The interpreter compiles rules against this IR and never sees source JSON.
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any, Iterator, Mapping

import attrs

from .names import canonical_name

JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")

# JSON Schema keyword → the Schema attribute that holds it (what the loader reads and the export writes):
# numbers, counts, one schema, a list of schemas
NUMBER_KEYWORDS = {
    "minimum": "minimum", "maximum": "maximum", "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum", "multipleOf": "multiple_of",
}
COUNT_KEYWORDS = {
    "minLength": "min_length", "maxLength": "max_length", "minItems": "min_items", "maxItems": "max_items",
    "minProperties": "min_properties", "maxProperties": "max_properties",
    "minContains": "min_contains", "maxContains": "max_contains",
}
SUBSCHEMA_KEYWORDS = {
    "not": "not_", "if": "if_", "then": "then_", "else": "else_", "propertyNames": "property_names",
    "contains": "contains",
}
LIST_KEYWORDS = {"anyOf": "any_of", "oneOf": "one_of", "allOf": "all_of", "prefixItems": "prefix_items"}

# ``absent`` marks a keyword that is not present (``None`` is a legal ``const``/``default``).
_ABSENT_REPR = "<absent>"


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return _ABSENT_REPR

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@attrs.frozen
class Property:
    """One named property of an object schema (kept in declaration order)."""

    name: str
    schema: "Schema"


@attrs.frozen
class Schema:
    """One node of a parameter schema.

    ``types`` is empty when any type is allowed.  ``boolean`` is set only for the
    boolean schemas ``true`` (accept anything) and ``false`` (accept nothing).
    ``pointer`` is the node's JSON pointer inside its tool (``#/properties/x``), used in
    findings and to resolve ``$ref``.

    >>> Schema(types=("integer",), minimum=1).allows("integer")
    True
    """

    types: tuple[str, ...] = ()
    boolean: bool | None = None
    pointer: str = "#"
    description: str | None = None
    title: str | None = None
    default: Any = ABSENT
    # object
    properties: tuple[Property, ...] = ()
    required: tuple[str, ...] = ()
    additional_properties: "bool | Schema | None" = None
    pattern_properties: tuple[tuple[str, "Schema"], ...] = ()
    property_names: "Schema | None" = None
    min_properties: int | None = None
    max_properties: int | None = None
    dependent_required: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # array
    items: "Schema | None" = None
    prefix_items: tuple["Schema", ...] = ()
    contains: "Schema | None" = None
    min_contains: int | None = None
    max_contains: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    # scalars
    enum: tuple[Any, ...] | None = None
    const: Any = ABSENT
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    # combinators
    any_of: tuple["Schema", ...] = ()
    one_of: tuple["Schema", ...] = ()
    all_of: tuple["Schema", ...] = ()
    not_: "Schema | None" = None
    if_: "Schema | None" = None
    then_: "Schema | None" = None
    else_: "Schema | None" = None
    ref: str | None = None
    # where the dialect said "tuple": an array written as a tuple
    tuple_like: bool = False

    def allows(self, type_name: str) -> bool:
        """Whether ``type_name`` is one of this node's declared types (any, when none are)."""
        return not self.types or type_name in self.types

    @property
    def declares_null(self) -> bool:
        """Whether null is declared beside another type: a ``null`` type member, a ``null``
        anyOf/oneOf branch, or a ``None`` member of an untyped-null enum.  The study reads
        such a property as optional."""
        if "null" in self.types and len(self.types) > 1:
            return True
        if self.enum is not None and None in self.enum and "null" not in self.types:
            return True
        return any(b.types == ("null",) for b in (self.any_of or self.one_of))

    def property(self, name: str) -> "Schema | None":
        """The schema of property ``name`` (exact spelling), or ``None``."""
        for prop in self.properties:
            if prop.name == name:
                return prop.schema
        return None

    def children(self) -> Iterator["Schema"]:
        """Every schema directly below this one."""
        for prop in self.properties:
            yield prop.schema
        for _, sub in self.pattern_properties:
            yield sub
        optional: tuple[object, ...] = (self.additional_properties, self.property_names, self.items,
                                         self.contains, self.not_, self.if_, self.then_, self.else_)
        for candidate in optional:
            if isinstance(candidate, Schema):
                yield candidate
        yield from self.prefix_items
        yield from self.any_of
        yield from self.one_of
        yield from self.all_of


#: What a schema node says only to a reader: two nodes differing only here check alike.
ANNOTATIONS = frozenset({"pointer", "description", "title"})


def content_key(node: Schema, memo: dict[int, Any] | None = None) -> bytes | None:
    """What ``node`` asks of a value, as a digest: equal digests, equal checks.

    A sha256 over the keywords the node sets (annotations, :data:`ANNOTATIONS`, left out)
    with each value's type and spelling (``5`` and ``5.0``, ``0.0`` and ``-0.0`` differ: a
    message shows them) and, for a node below, its own digest: 32 bytes whatever the size
    of the schema.  ``None`` when the node or one below it has a ``$ref``: what it means
    depends on the definitions of its tool.  ``memo`` (by ``id``) spares a subtree met again.

    >>> a = Schema(types=("integer",), minimum=1, pointer="#/properties/a", description="a count")
    >>> content_key(a) == content_key(Schema(types=("integer",), minimum=1, pointer="#/properties/b"))
    True
    >>> content_key(a) == content_key(Schema(types=("integer",), minimum=1.0))
    False
    >>> content_key(Schema(items=Schema(ref="#/$defs/x"))) is None
    True
    """
    memo = {} if memo is None else memo
    found = memo.get(id(node), False)
    if found is not False:
        return found
    key = None
    if node.ref is None:
        values = list(_content_of(node))
        try:
            for index in _SCHEMA_INDEXES:
                if values[index]:  # (a node below is its digest)
                    values[index] = _frozen(values[index], memo)
            # a JSON value's repr tells its type: 1, 1.0, True, '1'
            key = hashlib.sha256(repr(values).encode()).digest()
        except _HasRef:
            pass
    memo[id(node)] = key
    return key


class _HasRef(Exception):
    """A node below has a ``$ref``."""


def _frozen(value: Any, memo: dict[int, Any]) -> Any:
    """A keyword's value that holds nodes, with each node replaced by its digest."""
    kind = type(value)
    if kind is Schema:
        key = content_key(value, memo)
        if key is None:
            raise _HasRef
        return key
    if kind is Property:
        return value.name, _frozen(value.schema, memo)
    if kind is tuple:
        return tuple(_frozen(item, memo) for item in value)
    return value  # a name, a bool (additionalProperties: false)


@attrs.frozen
class Tool:
    """A tool: its name, description and argument schema, plus the ``$ref`` targets.

    ``definitions`` maps a JSON pointer (``#/$defs/Address``) to the schema found there.
    ``source`` says where the tool was loaded from (file and JSON path).

    >>> from toolform_rules import sample_tool
    >>> sample_tool().parameters.required
    ('counterparty', 'value', 'term_months')
    """

    name: str
    parameters: Schema
    description: str = ""
    definitions: Mapping[str, Schema] = attrs.field(factory=dict, eq=False)
    source: str = attrs.field(default="<object>", eq=False)
    # compiled programs, per (profile, limits), and other plans worked out once per tool: filled by the
    # engine and parse_reply, never part of equality
    programs: dict = attrs.field(factory=dict, init=False, repr=False, eq=False)

    @property
    def canonical_name(self) -> str:
        """The key this tool is found under whatever naming convention a model uses."""
        return canonical_name(self.name)

    def resolve(self, ref: str) -> Schema:
        """The schema a ``$ref`` of this tool points to."""
        return self.definitions[ref]


_CONTENT_NAMES = tuple(f.name for f in attrs.fields(Schema) if f.name not in ANNOTATIONS)
_content_of = operator.attrgetter(*_CONTENT_NAMES)
#: the keywords whose values hold nodes (a node, a tuple of them, properties, (pattern, node) pairs)
_SCHEMA_FIELDS = frozenset({"properties", "additional_properties", "pattern_properties", "property_names", "items",
                            "prefix_items", "contains", "any_of", "one_of", "all_of", "not_", "if_", "then_",
                            "else_"})
_SCHEMA_INDEXES = tuple(i for i, name in enumerate(_CONTENT_NAMES) if name in _SCHEMA_FIELDS)  # every keyword of a node at once, read at C speed
