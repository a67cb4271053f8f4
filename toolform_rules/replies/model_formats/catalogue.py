"""The catalogue of model-native formats: ``rules/native/formats.yaml``, read into attrs classes.

Each entry describes one format as data: a call is a *template*, a list of pieces — literals
(``"<tool_call>"``), slots (``{slot: name}``), optional runs (``{optional: [...]}``), choices
(``{either: [[...], [...]]}``) — that :mod:`.template` reads and renders; nothing here runs code
from the file.  A malformed entry is a :class:`~toolform_rules.errors.RuleFileError` naming the
file, line and field.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Union

import attrs

from ...errors import RuleFileError
from ...yamlsource import Located

#: The slots a template may hold (docs/protocols.md, "Model-native formats", says what each reads).
SLOTS = ("name", "id", "word", "arguments", "call", "calls", "parameters", "key", "value", "input", "dict")


@attrs.frozen
class Slot:
    slot: str
    #: ``protocol``: read the text up to the next literal with this answer protocol
    read_with: str = ""
    #: what the renderer writes for an ``id`` or ``word`` slot (an ``id`` is the call's index when empty)
    text: str = ""
    #: a ``calls`` slot: the renderer writes the call objects one after another with this between them
    #: (JSON lines: "\n"), not as a JSON array
    between: str = ""


@attrs.frozen
class Optional_:
    optional: tuple["Piece", ...]
    #: whether ``render_calls`` writes the run (a run models may omit, or one the renderer leaves out)
    render: bool = True


@attrs.frozen
class Either:
    either: tuple[tuple["Piece", ...], ...]


Piece = Union[str, Slot, Optional_, Either]
for _cls in (Slot, Optional_, Either):
    attrs.resolve_types(_cls, globals())


@attrs.frozen
class FormatEntry:
    """One model-native format (docs/protocols.md, "The catalogue", says what each field means): ``call`` the
    template of one call (with a ``calls`` slot, of all), ``parameter`` of one argument (``parameters`` slot)."""

    id: str
    name: str
    description: str
    call: tuple[Piece, ...]
    aliases: tuple[str, ...] = ()
    parameter: tuple[Piece, ...] = ()
    separator: str = "\n"
    reasoning: tuple[tuple[str, str], ...] = ()
    drop: tuple[str, ...] = ()
    values: str = "json"
    name_keys: tuple[str, ...] = ("name",)
    argument_keys: tuple[str, ...] = ("arguments", "parameters")
    quotes: tuple[str, ...] = ('"',)
    value_trim: str = "newline"
    parallel: bool = True
    instructions: str = ""
    source: str = attrs.field(default="", eq=False)
    line: int = attrs.field(default=0, eq=False)


@attrs.frozen
class Catalogue:
    formats: tuple[FormatEntry, ...]


def _piece(value: Any, _: Any) -> Piece:
    from ...convert import converter
    for key, kind in (("slot", Slot), ("optional", Optional_), ("either", Either)):
        if isinstance(value, dict) and key in value:
            return converter.structure(value, kind)  # type: ignore[return-value]
    if not isinstance(value, str) or not value:
        raise ValueError("a literal piece is empty" if value == "" else "a piece is a literal (a string), "
                         "{slot: ...}, {optional: [...]} or {either: [[...], ...]}")
    return value


def pieces_slots(pieces: tuple[Piece, ...]) -> list[str]:
    """Every slot in ``pieces``, nested runs and choices too."""
    found: list[str] = []
    for piece in pieces:
        if isinstance(piece, Slot):
            found.append(piece.slot)
        elif isinstance(piece, Optional_):
            found += pieces_slots(piece.optional)
        elif isinstance(piece, Either):
            found += [slot for alternative in piece.either for slot in pieces_slots(alternative)]
    return found


def _check(entry: FormatEntry, doc: Any, source: str, index: int) -> None:
    """What the converter cannot see: known slots, a literal after a slot that reads up to one, a name."""

    def fail(message: str, field: str) -> None:
        line = column = None
        if isinstance(doc, Located):
            line, column = doc.position_of(field.split(".")[0])
        raise RuleFileError(message, source=source, line=line, column=column, field=f"formats[{index}].{field}")

    for where, pieces in (("call", entry.call), ("parameter", entry.parameter)):
        for slot in pieces_slots(pieces):
            if slot not in SLOTS:
                fail(f"unknown slot {slot!r}; the slots are {', '.join(SLOTS)}", where)
        _check_until(pieces, where, fail)
    slots = set(pieces_slots(entry.call))
    if not slots & {"name", "call", "calls"} and not any(getattr(piece, "read_with", "") for piece in entry.call):
        fail("a call template needs a name, call or calls slot (or a slot read with another protocol)", "call")
    if "parameters" in slots and not entry.parameter:
        fail("a parameters slot needs a parameter template", "parameter")
    if entry.parameter and set(pieces_slots(entry.parameter)) < {"key", "value"}:
        fail("a parameter template needs a key and a value slot", "parameter")
    if entry.values not in ("json", "text"):  # (values written as JSON, or as text typed from the schema)
        fail("values is one of json, text", "values")
    if entry.value_trim not in ("newline", "none"):
        fail("value_trim is newline or none", "value_trim")
    head = entry.call[0] if entry.call else None
    if not isinstance(head, (str, Either, Optional_)) and not (
            isinstance(head, Slot) and (head.slot in ("name", "calls", "call", "arguments") or head.read_with)):
        fail("a call template starts with a literal, a choice, an optional run, the name, JSON or a slot read "
             "with another protocol", "call")


def following_literals(pieces: tuple[Piece, ...], index: int) -> tuple[tuple[str, ...], bool] | None:
    """The literals one of which comes right after ``pieces[index]`` (a choice's: the first of each alternative)
    and whether they may all be missing (they open an optional run); ``None`` when no literal comes next."""
    if index + 1 >= len(pieces):
        return None
    after = pieces[index + 1]
    if isinstance(after, str):
        return (after,), False
    if isinstance(after, Optional_) and after.optional and isinstance(after.optional[0], str):
        return (after.optional[0],), True
    if isinstance(after, Either) and all(alternative and isinstance(alternative[0], str)
                                         for alternative in after.either):
        return tuple(str(alternative[0]) for alternative in after.either), False
    return None


def _check_until(pieces: tuple[Piece, ...], where: str, fail: Any) -> None:
    """A slot that reads up to the next literal needs one (an input or a protocol, last, reads to the end)."""
    for index, piece in enumerate(pieces):
        last = index + 1 == len(pieces) and getattr(piece, "slot", "") != "value"
        if isinstance(piece, Slot) and (piece.slot in ("value", "input") or piece.read_with) and \
                following_literals(pieces, index) is None and not last:
            fail(f"the {piece.slot} slot reads up to the next literal: give one after it", where)


def catalogue_path() -> Path:
    """``rules/native/formats.yaml`` (inside the installed package, else the source tree)."""
    from ...engine.rule_files import rules_directory
    return rules_directory() / "native" / "formats.yaml"


def read_catalogue(path: str | Path, reserved: frozenset[str] = frozenset()) -> Catalogue:
    """The catalogue in ``path``; a malformed entry raises :class:`RuleFileError` with file, line and field.
    ``reserved``: names no entry may take (the study's protocol ids).

    >>> [entry.id for entry in read_catalogue(catalogue_path()).formats][:2]
    ['hermes', 'llama3_json']
    """
    from ...convert import converter, structure
    from ...yamlsource import load_yaml_file
    converter.register_structure_hook(Piece, _piece)  # type: ignore[arg-type]
    source = str(path)
    doc = load_yaml_file(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("formats"), list):
        raise RuleFileError("the catalogue is a mapping with a list under formats", source=source, field="formats")
    entries = []
    seen: dict[str, int] = {}
    for index, item in enumerate(doc["formats"]):
        entry = structure(item, FormatEntry, source=source, field_prefix=f"formats[{index}]")
        line = item.line if isinstance(item, Located) and item.line else 0
        entry = attrs.evolve(entry, source=source, line=line)
        _check(entry, item, source, index)
        for name in (entry.id, *entry.aliases):
            taken = f"{name!r} is one of the study's protocols" if name in reserved else \
                f"{name!r} names two formats (entries {seen[name]} and {index})" if name in seen else ""
            if taken:
                raise RuleFileError(taken, source=source, line=line or None, field=f"formats[{index}].id")
            seen[name] = index
        entries.append(entry)
    return Catalogue(tuple(entries))


@functools.cache
def builtin_catalogue(reserved: frozenset[str] = frozenset()) -> Catalogue:
    """The catalogue shipped in ``rules/native/formats.yaml``, read once."""
    return read_catalogue(catalogue_path(), reserved)
