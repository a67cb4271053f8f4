"""Normalisation operations: one function per step, registered in ``operations``.

Each is called once per schema node as ``operation(rule, node, ctx)`` and returns a
transform ``value -> value`` (or ``None`` when the step has nothing to do at that node).
A transform never modifies its input: it returns the same object when nothing changes,
and a new container when something inside changed.

Steps act on the *kind* a node is read as (``string``, ``integer``, ``number``,
``boolean``, ``array``, ``object``, ``null``, ``enum``, ``union`` or ``any``), the way the
study read tool schemas: a ``null`` member of a type list makes a parameter optional, an
untyped enum takes its members' type, a single non-null ``anyOf`` branch is that branch.

Each function is declared with :func:`~.declarations.operation`: the options it reads
(checked, and their defaults filled in, when a rule file is loaded) and the other
operations it asks the profile about (``consults``: whether the profile folds case).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

import attrs

from .context import NodeContext, Transform
from .declarations import Option, operation
from ..schema.ir import ABSENT, Schema
from ..jsonvalues import shared_type
from ..schema.names import canonical_name
from .rules import Rule


# --- how a node is read ----------------------------------------------------------------------

@attrs.frozen
class Kind:
    """What a schema node is, for normalisation."""

    name: str  # string integer number boolean array object null enum union any
    node: Schema
    base: str = "string"  # for enum: the members' type
    members: tuple[Any, ...] = ()  # for enum
    branches: tuple[Schema, ...] = ()  # for union


def kind_of(node: Schema, ctx: NodeContext) -> Kind:
    """How the study reads ``node`` (``$ref`` and single-branch combinators followed)."""
    seen = 0
    while seen < ctx.limits.max_depth:
        seen += 1
        if node.ref is not None and ctx.tool is not None and not node.types and node.enum is None:
            node = ctx.resolve(node.ref)
            continue
        non_null = tuple(t for t in node.types if t != "null")
        if node.enum is not None or node.const is not ABSENT:
            members = node.enum if node.enum is not None else (node.const,)
            base = non_null[0] if len(non_null) == 1 else shared_type(members)
            return Kind("enum", node, base=base, members=members)
        if len(non_null) == 1:
            return Kind(non_null[0], node)
        if len(non_null) > 1:
            return Kind("union", node, branches=tuple(attrs.evolve(node, types=(t,)) for t in non_null))
        if node.types == ("null",):
            return Kind("null", node)
        branches = tuple(b for b in (node.any_of or node.one_of) if b.types != ("null",))
        if len(branches) == 1:
            node = branches[0]
            continue
        if branches:
            return Kind("union", node, branches=branches)
        if len(node.all_of) == 1:
            node = node.all_of[0]
            continue
        if node.properties:
            return Kind("object", node)
        if node.items is not None:
            return Kind("array", node)
        return Kind("any", node)
    return Kind("any", node)


# --- generic forms ---------------------------------------------------------------------------

def canonical_value(value: Any) -> Any:
    """The canonical form of a value: floats to 9 decimals, then integral ones as ints; keys sorted.

    >>> canonical_value({"b": [1.0, 2.5], "a": float("nan")})
    {'a': 'nan', 'b': [1, 2.5]}
    """
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        rounded = round(value, 9)  # rounded first, so the canonical form of a canonical form is itself
        if rounded.is_integer() and abs(rounded) < 1e15:
            return int(rounded)
        return rounded
    if isinstance(value, dict):
        return {k: canonical_value(v) for k, v in sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0])}
    if isinstance(value, (list, tuple)):
        return [canonical_value(x) for x in value]
    return value


def fold_strings(value: Any) -> Any:
    """Every string inside ``value`` trimmed and case-folded (keys kept)."""
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, dict):
        return {k: fold_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [fold_strings(x) for x in value]
    return value


def generic(value: Any, fold: bool) -> Any:
    """What a value with no usable schema becomes: folded (when folding) and canonical."""
    return canonical_value(fold_strings(value) if fold else value)


def _folds(rule: Rule, ctx: NodeContext) -> bool:
    """Whether the profile folds case (so a generic form folds too): a question declared as ``consults``."""
    return ctx.profile_runs(rule, "casefold")


#: What the operations that may give a value its generic form ask of the profile.
_FOLDING = ("casefold",)


def _kinds(rule: Rule, default: tuple[str, ...]) -> tuple[str, ...]:
    return rule.applies_to or default


def _gate(kind: Kind, rule: Rule, default: tuple[str, ...]) -> bool:
    """Whether ``rule`` applies to ``kind``: its ``applies_to`` (else the step's own default
    kinds) names the kind, or, for an enum, ``enum:<base>``."""
    kinds = _kinds(rule, default)
    return kind.name in kinds or (kind.name == "enum" and f"enum:{kind.base}" in kinds)


# --- numbers and booleans --------------------------------------------------------------------

@operation("normalise")
def bool_to_number(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """``true``/``false`` where a number is wanted become 1/0."""
    if not _gate(kind_of(node, ctx), rule, ("integer", "number", "enum:integer", "enum:number")):
        return None
    return lambda v: int(v) if isinstance(v, bool) else v


@operation("normalise", changes=(float,), changes_only=float.is_integer)
def integral_float_to_integer(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A float with no fraction (``5.0``) where an integer is wanted becomes ``5``.

    In a union, where the first numeric branch is an integer one.
    """
    kind = kind_of(node, ctx)
    if kind.name == "union":
        numeric = [k.name for k in (kind_of(b, ctx) for b in kind.branches) if k.name in ("integer", "number")]
        if not numeric or numeric[0] != "integer":
            return None
    elif not _gate(kind, rule, ("integer", "enum:integer")):
        return None

    def transform(value: Any) -> Any:
        if type(value) is float and value.is_integer():
            return int(value)
        return value

    return transform


#: a numeric string longer than this is not read as a number (int() of thousands of digits is slow, then refused)
_MAX_NUMBER_CHARS = 400
_RAW_DECODE = json.JSONDecoder().raw_decode
_JSON_BLANKS = " \t\n\r"


def json_loads(text: str) -> Any:
    """``json.loads(text)``: the same value, and a ``ValueError`` where it raises one; without its wrapper's two
    white-space patterns when the text begins with its value, as a model writes it (a microsecond per value).

    >>> json_loads('{"a": [1, NaN]} '), json_loads(' [true]')
    ({'a': [1, nan]}, [True])
    """
    if not text or text[0] in _JSON_BLANKS:
        return json.loads(text)
    value, end = _RAW_DECODE(text)
    if end != len(text) and text[end:].strip(_JSON_BLANKS):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,6})?")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")


def parse_number(text: str, *, separators: str = "_", grouping: bool = True) -> float | None:
    """The number a string spells (trimmed; ``_`` separators and ``1,000`` grouping allowed), or None.

    >>> parse_number(" 7,000 "), parse_number("1e3"), parse_number("7,5"), parse_number("0x10")
    (7000.0, 1000.0, None, None)
    """
    candidate = text.strip()
    if len(candidate) > _MAX_NUMBER_CHARS:
        return None
    if grouping and "," in candidate:
        if not _GROUPED.fullmatch(candidate):
            return None
        candidate = candidate.replace(",", "")
    for mark in separators:
        candidate = candidate.replace(mark, "")
    if not _NUMBER.fullmatch(candidate):
        return None
    return float(candidate)


@operation("normalise", options=(
    Option("as_written", bool, False,
           "a number is typed as written (`\"7\"` is 7, `\"7.0\"` is 7.0) wherever a number is wanted; else a "
           "number is a float, an integer an int when it has no fraction"),
))
def numeric_string(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A numeric string where a number is wanted becomes that number (an int for an integer)."""
    kind = kind_of(node, ctx)
    if not _gate(kind, rule, ("integer", "number", "enum:integer", "enum:number")):
        return None
    integer = kind.name == "integer" or kind.base == "integer"
    # as_written: "7" is 7 and "7.0" is 7.0 wherever a number is wanted (typing a text format);
    # otherwise a number is a float, an integer an int when it has no fraction (the study's rule)
    as_written = rule.options["as_written"]

    plain_int = as_written or integer  # where digits alone ("24") are read as an int without parse_number

    def transform(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if plain_int and value.isdigit() and value.isascii() and len(value) <= _MAX_NUMBER_CHARS:
            return int(value)
        number = parse_number(value)
        if number is None:
            return value
        if as_written:
            text = value.strip()
            if not any(c in text for c in ".eE") and number.is_integer():
                return int(text.replace(",", "").replace("_", ""))
            return number
        if integer and number.is_integer():
            return int(number)
        return number

    return transform


@operation("normalise")
def number_to_boolean(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A number where a boolean is wanted becomes its truth (``1`` → ``true``)."""
    if not _gate(kind_of(node, ctx), rule, ("boolean", "enum:boolean")):
        return None
    return lambda v: bool(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


@operation("normalise", options=(
    Option("true", tuple[str, ...], ("true", "yes", "1", "on", "y", "enabled"),
           "the words (trimmed, any case) read as true; quote the key in YAML: `\"true\":`"),
    Option("false", tuple[str, ...], ("false", "no", "0", "off", "n", "disabled"),
           "the words (trimmed, any case) read as false; quote the key in YAML: `\"false\":`"),
))
def boolean_word(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """``"true"``, ``"yes"``, ``"on"``... where a boolean is wanted become booleans."""
    if not _gate(kind_of(node, ctx), rule, ("boolean", "enum:boolean")):
        return None
    true_words = frozenset(word.lower() for word in rule.options["true"])
    false_words = frozenset(word.lower() for word in rule.options["false"])

    def transform(value: Any) -> Any:
        if isinstance(value, str):
            word = value.strip().lower()
            if word in true_words:
                return True
            if word in false_words:
                return False
        return value

    return transform


# --- strings ---------------------------------------------------------------------------------

@operation("normalise")
def scalar_to_string(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A number or boolean where a string is wanted becomes its text (``7.0`` → ``"7"``)."""
    if not _gate(kind_of(node, ctx), rule, ("string", "enum:string")):
        return None

    def transform(value: Any) -> Any:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            if value.is_integer():
                return str(int(value))
            return str(value)
        if isinstance(value, int):
            return str(value)
        return value

    return transform


@operation("normalise")
def trim(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """Leading and trailing white space is removed from strings."""
    if not _gate(kind_of(node, ctx), rule, ("string", "enum:string")):
        return None
    return lambda v: v.strip() if isinstance(v, str) else v


@operation("normalise")
def casefold(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """Strings are case-folded (``Denver`` → ``denver``); an enum's own spelling is kept."""
    kind = kind_of(node, ctx)
    if not _gate(kind, rule, ("string", "enum:string", "enum:integer", "enum:number", "enum:boolean", "null")):
        return None
    if kind.name == "enum" and kind.base == "string":
        keep = frozenset(m for m in kind.members if isinstance(m, str))
        return lambda v: v.casefold() if isinstance(v, str) and v not in keep else v
    if kind.name == "enum" or kind.name == "null":
        return lambda v: v.strip().casefold() if isinstance(v, str) else v
    return lambda v: v.casefold() if isinstance(v, str) else v


@operation("normalise")
def enum_spelling(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A string matching an enum member case-insensitively becomes the member's own spelling."""
    kind = kind_of(node, ctx)
    if kind.name != "enum" or kind.base != "string":
        return None
    spelling: dict[str, str] = {}
    for member in kind.members:
        if isinstance(member, str):
            spelling.setdefault(member.lower(), member)

    def transform(value: Any) -> Any:
        if isinstance(value, str):
            return spelling.get(value.lower(), value)
        return value

    return transform


# --- containers ------------------------------------------------------------------------------

@operation("normalise")
def unwrap_singleton(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A one-element list where the schema wants a single value becomes that value."""
    if not _gate(kind_of(node, ctx), rule, ("any",)):
        return None

    def transform(value: Any) -> Any:
        if isinstance(value, (list, tuple)) and len(value) == 1 and not isinstance(value[0], (list, tuple, dict)):
            return value[0]
        return value

    return transform


@operation("normalise", consults=_FOLDING)
def scalar_containers(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A list or object where a single value is wanted is kept, in its generic form."""
    kind = kind_of(node, ctx)
    if not _gate(kind, rule, ("string", "integer", "number", "boolean", "any", "null")):
        return None
    fold = _folds(rule, ctx)

    def transform(value: Any) -> Any:
        if isinstance(value, (list, dict)) or (kind.name == "any" and isinstance(value, tuple)):
            return generic(value, fold)
        if kind.name == "any":
            return generic(value, fold)
        return value

    return transform


@operation("normalise", options=(
    Option("split_commas", bool, True, "text with commas becomes one item per comma-separated part"),
))
def wrap_in_list(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A single value where a list is wanted becomes a list (``"a, b"`` → ``["a", "b"]``)."""
    if kind_of(node, ctx).name != "array":
        return None
    split = rule.options["split_commas"]

    def transform(value: Any) -> Any:
        if isinstance(value, list):
            return value
        if isinstance(value, tuple):
            return list(value)
        if isinstance(value, str):
            return [part.strip() for part in value.split(",")] if split and "," in value else [value]
        return [value]

    return transform


@operation("normalise", consults=_FOLDING, changes=(), changes_with=("untyped_items",), options=(
    Option("copy", bool, False, "the list is always copied, even when no item changes"),
    Option("untyped_items", str, "keep", "items of a list with no items schema: kept as they are, or given "
           "their generic form (canonical, folded when the profile folds case)", choices=("keep", "generic")),
))
def array_items(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """Each item of a list is normalised by the item schema."""
    kind = kind_of(node, ctx)
    if kind.name != "array":
        return None
    item_schema = kind.node.items
    copy = rule.options["copy"]
    sub = ctx.normaliser(item_schema) if item_schema is not None else None
    if sub is None and rule.options["untyped_items"] == "generic":
        fold = _folds(rule, ctx)
        sub = lambda x: generic(x, fold)  # noqa: E731
    if sub is None:
        return (lambda v: list(v) if isinstance(v, list) else v) if copy else None

    def transform(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        items = [sub(x) for x in value]
        if copy or any(a is not b for a, b in zip(items, value)):
            return items
        return value

    return transform


@operation("normalise", consults=_FOLDING)
def parse_json_object(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A string holding a JSON object where an object is wanted becomes that object."""
    if kind_of(node, ctx).name != "object":
        return None
    fold = _folds(rule, ctx)
    limit = ctx.limits.max_input_bytes

    def transform(value: Any) -> Any:
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and len(value) <= limit:
            try:
                parsed = json_loads(value)
            except (ValueError, RecursionError):
                return generic(value, fold)
            return parsed if isinstance(parsed, dict) else generic(parsed, fold)
        return generic(value, fold)

    return transform


@operation("normalise")
def json_text(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """Text holding a JSON object or array where the schema wants one becomes that value.

    For formats that write every value as text (command lines, query strings, XML
    parameters): a nested value is written as JSON there.  Text that is not JSON of the
    wanted kind is left as written, for validation to report.
    """
    kind = kind_of(node, ctx).name
    if kind not in ("object", "array"):
        return None
    wanted = dict if kind == "object" else list
    opener = "{" if kind == "object" else "["
    limit = ctx.limits.max_input_bytes

    def transform(value: Any) -> Any:
        if isinstance(value, str) and value.lstrip().startswith(opener) and len(value) <= limit:
            try:
                parsed = json_loads(value)
            except (ValueError, RecursionError):
                return value
            return parsed if isinstance(parsed, wanted) else value
        return value

    return transform


def _field_resolver(node: Schema, *, last_wins: bool) -> Callable[[Any], str | None]:
    exact = {p.name for p in node.properties}
    by_canonical: dict[str, str] = {}
    for prop in node.properties:
        key = canonical_name(prop.name)
        if last_wins or key not in by_canonical:
            by_canonical[key] = prop.name

    def resolve(key: Any) -> str | None:
        if key in exact:
            return key
        if isinstance(key, str):
            folded = canonical_name(key)
            return by_canonical.get(folded) if folded else None
        return None

    return resolve


@operation("normalise", consults=_FOLDING, changes=(), changes_with=("rename", "unknown", "sort_nested"), options=(
    Option("rename", bool, False, "a key written under another naming convention (`termMonths`) is renamed to "
           "the declared name (`term_months`)"),
    Option("unknown", str, "keep", "undeclared arguments: kept as they are, or given their generic form",
           choices=("keep", "generic")),
    Option("sort_nested", bool, False, "objects below the top level come out key-sorted and canonical"),
))
def object_fields(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """Each argument of an object is normalised by its property's schema.

    ``sort_nested``: objects below the top level come out as the study compared them.
    """
    kind = kind_of(node, ctx)
    if kind.name != "object":
        return None
    target = kind.node
    subs = {p.name: ctx.normaliser(p.schema) for p in target.properties}
    rename = rule.options["rename"]
    unknown_generic = rule.options["unknown"] == "generic"
    sort_nested = rule.options["sort_nested"] and not ctx.root
    if not rename and not unknown_generic and not sort_nested and not any(subs.values()):
        return None
    resolve = _field_resolver(target, last_wins=not ctx.root and rename)
    fold = _folds(rule, ctx)
    if not rename and not unknown_generic and not sort_nested:
        return _normalise_fields_in_place(subs, resolve)

    def transform(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[Any, Any] = {}
        for key, item in value.items():
            name = resolve(key)
            if name is None:
                out[key] = generic(item, fold) if unknown_generic else item
            else:
                sub = subs[name]
                out[name if rename else key] = sub(item) if sub is not None else item
        return canonical_value(out) if sort_nested else out

    return transform


def _normalise_fields_in_place(subs: dict[str, Transform | None], resolve: Callable[[Any], str | None]) -> Transform:
    """Normalise the fields that have a normaliser, keeping keys as written; copy only on change."""
    active: dict[str, Transform] = {name: sub for name, sub in subs.items() if sub is not None}
    active_items = tuple(active.items())
    declared = frozenset(subs)

    def transform(value: Any) -> Any:
        if type(value) is not dict:
            return value
        out = None
        for name, step in active_items:  # the keys spelled as declared: visit only what may change
            if name in value:
                item = value[name]
                new = step(item)
                if new is not item:
                    if out is None:
                        out = dict(value)
                    out[name] = new
        if not value.keys() <= declared:  # some key spelled otherwise: by the declared name it resolves to
            for key in value.keys() - declared:
                declared_name = resolve(key)
                sub = active.get(declared_name) if declared_name is not None else None
                if sub is not None:
                    item = value[key]
                    new = sub(item)
                    if new is not item:
                        if out is None:
                            out = dict(value)
                        out[key] = new
        return value if out is None else out

    return transform


@operation("normalise", consults=_FOLDING, options=(
    Option("prefer_own_type", bool, False, "a value that already has one of the branches' types is normalised "
           "by that branch first (`true` for `integer | boolean` stays `true`)"),
))
def union_first_fit(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """A union's value is normalised by the first branch whose result has that branch's type.

    With ``prefer_own_type``, ``5`` for ``string | integer`` stays ``5``.
    """
    kind = kind_of(node, ctx)
    if kind.name != "union":
        return None
    fold = _folds(rule, ctx)
    prefer_own = rule.options["prefer_own_type"]
    branches = []
    for branch in kind.branches:
        sub = ctx.normaliser(branch)
        branches.append((sub, kind_of(branch, ctx)))

    def fits(value: Any, branch: Kind) -> bool:
        name = branch.name
        if name in ("any", "enum", "union"):
            return True
        if name == "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if name == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if name == "string":
            return isinstance(value, str)
        if name == "boolean":
            return isinstance(value, bool)
        if name == "array":
            return isinstance(value, list)
        if name == "object":
            return isinstance(value, dict)
        return value is None

    typed = [(sub, branch) for sub, branch in branches if branch.name not in ("any", "enum", "union")]

    def transform(value: Any) -> Any:
        if prefer_own:
            for sub, branch in typed:
                if fits(value, branch):
                    result = sub(value) if sub is not None else value
                    if fits(result, branch):
                        return result
        for sub, branch in branches:
            result = sub(value) if sub is not None else value
            if fits(result, branch):
                return result
        return generic(value, fold)

    return transform


# --- top level -------------------------------------------------------------------------------

@operation("normalise")
def canonical_numbers(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """At the top level, every argument value takes its canonical form (``7.0`` → ``7``)."""
    if not ctx.root:
        return None

    def transform(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: canonical_value(v) for k, v in value.items()}

    return transform


@operation("normalise")
def sort_keys(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """Objects come out with their keys sorted."""
    if kind_of(node, ctx).name != "object":
        return None
    return lambda v: {k: v[k] for k in sorted(v, key=str)} if isinstance(v, dict) else v


def _optional_params(node: Schema) -> list[tuple[str, Schema]]:
    """The properties a call may leave out: not required, or (as the study read them) nullable."""
    required = set(node.required)
    return [(p.name, p.schema) for p in node.properties if p.name not in required or p.schema.declares_null]


@operation("normalise")
def drop_empty_optional(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """An optional argument that is empty (``None``, ``""``, ``[]``, ``{}``) is left out."""
    if not ctx.root:
        return None
    optional = [name for name, _ in _optional_params(node)]
    if not optional:
        return None

    def transform(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        drop = [n for n in optional if n in value and (value[n] is None or (
            isinstance(value[n], (str, list, dict)) and len(value[n]) == 0))]
        if not drop:
            return value
        return {k: v for k, v in value.items() if k not in drop}

    return transform


@operation("normalise", options=(
    Option("defaults_read_by", str, None, "the normalisation profile that reads each default as its type says "
           "(default: this profile)"),
))
def drop_default_optional(rule: Rule, node: Schema, ctx: NodeContext) -> Transform | None:
    """An optional argument equal to its declared default is left out.

    The default is read as the schema's type says (``"false"`` for a boolean is false), by
    the normalisation profile named in the ``defaults_read_by`` option (default: this one).
    """
    if not ctx.root:
        return None
    reader = rule.options["defaults_read_by"]
    defaults = []
    for name, schema in _optional_params(node):
        if schema.default is ABSENT or schema.default is None:
            continue
        sub = ctx.normaliser_under(reader, schema) if reader else ctx.normaliser(schema)
        default = sub(schema.default) if sub is not None else schema.default
        defaults.append((name, _canonical_json(default), canonical_value(default)))
    if not defaults:
        return None

    def same(value: Any, text: str, canonical: Any) -> bool:
        if type(value) in _SCALARS:  # a scalar's canonical JSON text is its canonical value and its type
            mine = canonical_value(value)
            return type(mine) is type(canonical) and mine == canonical
        return _canonical_json(value) == text

    def transform(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        drop = [n for n, text, canonical in defaults if n in value and same(value[n], text, canonical)]
        if not drop:
            return value
        return {k: v for k, v in value.items() if k not in drop}

    return transform


_SCALARS = frozenset({bool, int, str, type(None)})


def _canonical_json(value: Any) -> str:
    return json.dumps(canonical_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
