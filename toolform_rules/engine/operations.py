"""The one place where operations are registered: name → :class:`~.declarations.Operation`, per phase.

Adding a kind of rule means writing one function under the ``@operation`` decorator (in
``validation_ops`` or ``normalisation_ops``: its options, message fields and interactions
declared beside it) and adding one line here; a rule file can then name it as ``op``.
"""

from __future__ import annotations

from . import normalisation_ops as n
from . import validation_ops as v
from .declarations import Operation

VALIDATE_OPERATIONS: dict[str, Operation] = {
    "unknown_tool": v.unknown_tool,
    "boolean_schema": v.boolean_schema,
    "type": v.type_,
    "enum": v.enum,
    "const": v.const,
    "minimum": v.minimum,
    "maximum": v.maximum,
    "exclusive_minimum": v.exclusive_minimum,
    "exclusive_maximum": v.exclusive_maximum,
    "multiple_of": v.multiple_of,
    "min_length": v.min_length,
    "max_length": v.max_length,
    "pattern": v.pattern,
    "required": v.required,
    "properties": v.properties,
    "additional_properties": v.additional_properties,
    "pattern_properties": v.pattern_properties,
    "property_names": v.property_names,
    "min_properties": v.min_properties,
    "max_properties": v.max_properties,
    "dependent_required": v.dependent_required,
    "prefix_items": v.prefix_items,
    "items": v.items,
    "min_items": v.min_items,
    "max_items": v.max_items,
    "unique_items": v.unique_items,
    "contains": v.contains,
    "any_of": v.any_of,
    "one_of": v.one_of,
    "all_of": v.all_of,
    "not": v.not_,
    "if_then_else": v.if_then_else,
    "ref": v.ref,
}

NORMALISE_OPERATIONS: dict[str, Operation] = {
    "integral_float_to_integer": n.integral_float_to_integer,
    "object_fields": n.object_fields,
    "array_items": n.array_items,
    "union_first_fit": n.union_first_fit,
    "bool_to_number": n.bool_to_number,
    "numeric_string": n.numeric_string,
    "number_to_boolean": n.number_to_boolean,
    "boolean_word": n.boolean_word,
    "scalar_to_string": n.scalar_to_string,
    "trim": n.trim,
    "casefold": n.casefold,
    "enum_spelling": n.enum_spelling,
    "unwrap_singleton": n.unwrap_singleton,
    "scalar_containers": n.scalar_containers,
    "wrap_in_list": n.wrap_in_list,
    "parse_json_object": n.parse_json_object,
    "json_text": n.json_text,
    "canonical_numbers": n.canonical_numbers,
    "sort_keys": n.sort_keys,
    "drop_empty_optional": n.drop_empty_optional,
    "drop_default_optional": n.drop_default_optional,
}

REGISTRY: dict[str, dict[str, Operation]] = {"validate": VALIDATE_OPERATIONS, "normalise": NORMALISE_OPERATIONS}


def operation_of(phase: str, op: str) -> Operation | None:
    """The operation registered as ``op`` for ``phase``, or ``None``.

    >>> operation_of("validate", "properties").subsumes
    ('additional_properties',)
    >>> operation_of("normalise", "type") is None
    True
    """
    return REGISTRY.get(phase, {}).get(op)


def operation_fields(phase: str, op: str) -> frozenset[str] | None:
    """The message fields ``op`` provides (``path`` always), or ``None`` if no such operation.

    >>> sorted(operation_fields("validate", "minimum"))
    ['limit', 'path', 'value']
    """
    operation = operation_of(phase, op)
    return None if operation is None else operation.message_fields
