"""The catalogue of model-native formats: ``rules/native/formats.yaml``, read into attrs classes.

Each entry describes one format a serving engine parses — the markers around a call, where
its name and arguments stand, how its values are written — as data.  A call is a
*template*: a list of pieces, each a literal (``"<tool_call>"``), a slot (``{slot: name}``),
an optional run (``{optional: [...]}``) or a choice (``{either: [[...], [...]]}``).
:mod:`.template` reads and renders calls from it; nothing here runs code from the file.

A malformed entry is a :class:`~toolform_rules.errors.RuleFileError` naming the file,
line and field, raised when the catalogue is read.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Union

import attrs

from ...errors import RuleFileError
from ...yamlsource import Located

#: The slots a template may hold, and what each reads (see docs/protocols.md, "Model-native formats").
SLOTS = {
    "name": "the tool's name (a letter or _, then letters, digits, _ . - :, at most 256 characters)",
    "id": "a call id or counter (letters, digits, _ and -), read and dropped",
    "word": "one word (a channel or content type), read and dropped",
    "arguments": "a JSON object: the call's arguments",
    "call": "a JSON call object: its name and arguments under the entry's name_keys and argument_keys (more "
            "objects right after it are calls too; one is rendered)",
    "calls": "JSON call objects: an array of them, or objects one after another (white space or ';' between)",
    "parameters": "the call's arguments, each written with the entry's parameter template",
    "key": "a parameter's name (in a parameter template)",
    "value": "a parameter's value: the text up to the next literal, typed from the tool's schema",
    "input": "free text up to the next literal: a JSON object, or the value of the tool's one text parameter",
    "dict": "the arguments as {key: value, ...} with strings between the entry's quotes (Gemma's call syntax)",
}
#: Slots that read up to the next literal piece: a template must give one after them.
UNTIL_LITERAL = frozenset({"value", "input"})
#: How values are written: ``json`` as JSON, ``text`` as text typed from the tool's schema.
VALUE_KINDS = ("json", "text")


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
    """One model-native format.

    ``id``: the engines' label (a protocol id); ``aliases``: model families that write it;
    ``call``: the template of one call (or, with a ``calls`` slot, of all of them);
    ``parameter``: the template of one argument, for a ``parameters`` slot; ``separator``:
    what ``render_calls`` writes between calls; ``reasoning``: the (opening, closing) markers
    of the model's reasoning, whose text is neither content nor read for calls (a closing
    marker alone ends reasoning that began before the reply); ``drop``: markers that are
    neither content nor calls (section and channel markers); ``values``: ``json`` or
    ``text``; ``quotes``: the string quotes of a ``dict`` slot; ``value_trim``: what is
    cut from each end of a ``value``: ``newline`` (one line break), ``none``.
    """

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

    if isinstance(value, str):
        if not value:
            raise ValueError("a literal piece is empty")
        return value
    if isinstance(value, dict):
        if "slot" in value:
            return converter.structure(value, Slot)
        if "optional" in value:
            return converter.structure(value, Optional_)
        if "either" in value:
            return converter.structure(value, Either)
    raise ValueError("a piece is a literal (a string), {slot: ...}, {optional: [...]} or {either: [[...], ...]}")


def _register_hooks() -> None:
    from ...convert import converter

    converter.register_structure_hook(Piece, _piece)  # type: ignore[arg-type]


def _pieces_slots(pieces: tuple[Piece, ...]) -> list[tuple[str, int]]:
    """Every slot in ``pieces`` (nested runs and choices too), with its index at the top level."""
    found: list[tuple[str, int]] = []
    for index, piece in enumerate(pieces):
        if isinstance(piece, Slot):
            found.append((piece.slot, index))
        elif isinstance(piece, Optional_):
            found.extend((slot, index) for slot, _ in _pieces_slots(piece.optional))
        elif isinstance(piece, Either):
            for alternative in piece.either:
                found.extend((slot, index) for slot, _ in _pieces_slots(alternative))
    return found


def _check(entry: FormatEntry, doc: Any, source: str, index: int) -> None:
    """What the converter cannot see: known slots, a literal after a slot that reads up to one, a name."""

    def fail(message: str, field: str) -> None:
        line = column = None
        if isinstance(doc, Located):
            line, column = doc.position_of(field.split(".")[0])
        raise RuleFileError(message, source=source, line=line, column=column, field=f"formats[{index}].{field}")

    for where, pieces in (("call", entry.call), ("parameter", entry.parameter)):
        for slot, _ in _pieces_slots(pieces):
            if slot not in SLOTS:
                fail(f"unknown slot {slot!r}; the slots are {', '.join(SLOTS)}", where)
        _check_until(pieces, where, fail)
    slots = {slot for slot, _ in _pieces_slots(entry.call)}
    if not slots & {"name", "call", "calls"} and not _reads_with(entry.call):
        fail("a call template needs a name, call or calls slot (or a slot read with another protocol)", "call")
    if "parameters" in slots and not entry.parameter:
        fail("a parameters slot needs a parameter template", "parameter")
    if entry.parameter and {slot for slot, _ in _pieces_slots(entry.parameter)} < {"key", "value"}:
        fail("a parameter template needs a key and a value slot", "parameter")
    if entry.values not in VALUE_KINDS:
        fail(f"values is one of {', '.join(VALUE_KINDS)}", "values")
    if entry.value_trim not in ("newline", "none"):
        fail("value_trim is newline or none", "value_trim")
    head = entry.call[0] if entry.call else None
    if not isinstance(head, (str, Either, Optional_)) and not (
            isinstance(head, Slot) and (head.slot in ("name", "calls", "call", "arguments") or head.read_with)):
        fail("a call template starts with a literal, a choice, an optional run, the name, JSON or a slot read "
             "with another protocol", "call")


def _reads_with(pieces: tuple[Piece, ...]) -> bool:
    return any(isinstance(p, Slot) and p.read_with for p in pieces)


def following_literals(pieces: tuple[Piece, ...], index: int) -> tuple[tuple[str, ...], bool] | None:
    """The literals one of which comes right after ``pieces[index]`` (one, or the first of each alternative of
    a choice), and whether they may all be missing (they open an optional run); ``None`` when no literal
    comes next."""
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
    for index, piece in enumerate(pieces):
        last = isinstance(piece, Slot) and index + 1 == len(pieces) and piece.slot != "value"  # (input and protocols may read to the end)
        if isinstance(piece, Slot) and (piece.slot in UNTIL_LITERAL or piece.read_with) and \
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
    from ...convert import structure
    from ...yamlsource import load_yaml_file

    _register_hooks()
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
            if name in reserved:
                raise RuleFileError(f"{name!r} is one of the study's protocols", source=source, line=line or None,
                                    field=f"formats[{index}].id")
            if name in seen:
                raise RuleFileError(f"{name!r} names two formats (entries {seen[name]} and {index})", source=source,
                                    line=line or None, field=f"formats[{index}].id")
            seen[name] = index
        entries.append(entry)
    return Catalogue(tuple(entries))


@functools.cache
def builtin_catalogue(reserved: frozenset[str] = frozenset()) -> Catalogue:
    """The catalogue shipped in ``rules/native/formats.yaml``, read once."""
    return read_catalogue(catalogue_path(), reserved)
