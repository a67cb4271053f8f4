"""Safe YAML loading that remembers where every mapping, key and list item was written.

Rule files and policies are reviewed text; when one is wrong the error must name the
file, line and field.  This loader is PyYAML's ``SafeLoader`` (no object construction
from tags) whose mappings and lists carry their source positions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import RuleFileError


class Located:
    """Mixin for containers that know where they were written (1-based line and column)."""

    source: str = "<string>"
    line: int | None = None
    column: int | None = None
    # For a mapping: key -> (line, column) of the key; for a list: index -> (line, column).
    positions: dict[Any, tuple[int, int]]
    # key or index -> where its scalar value starts (line, column) and its style: None (plain),
    # "'" or '"' (quoted), "|" or ">" (block): what maps an offset in the value to the file.
    value_marks: dict[Any, tuple[int, int, str | None]]

    def value_mark(self, key: Any) -> tuple[int, int, str | None] | None:
        """Where the scalar value of ``key`` starts, and its style; ``None`` when unknown."""
        return getattr(self, "value_marks", {}).get(key)

    def position_of(self, key: Any) -> tuple[int | None, int | None]:
        """Where ``key`` (a mapping key or list index) was written, or the container's own place."""
        return self.positions.get(key, (self.line, self.column))


class LocatedDict(dict, Located):
    """A ``dict`` from YAML that remembers where it and each of its keys were written."""

    def without(self, *keys: Any) -> "LocatedDict":
        """A copy without ``keys``, still knowing where everything was written."""
        copy = LocatedDict((k, v) for k, v in self.items() if k not in keys)
        copy.source, copy.line, copy.column = self.source, self.line, self.column
        copy.positions = {k: v for k, v in self.positions.items() if k not in keys}
        copy.value_marks = {k: v for k, v in getattr(self, "value_marks", {}).items() if k not in keys}
        return copy


class LocatedList(list, Located):
    """A ``list`` from YAML that remembers where it and each of its items were written."""


#: How deeply a document may nest (lists in mappings in lists...): far past what a rule file or a
#: policy needs, well inside what PyYAML's recursive composer and constructor can take.
MAX_YAML_DEPTH = 100
#: How many values (scalars, lists, mappings) a document may hold once its aliases are expanded.
MAX_YAML_VALUES = 1_000_000

# What PyYAML's safe constructors raise, besides their own errors, on a tagged scalar they cannot
# read: ``!!int abc`` (ValueError), ``!!int ''`` (IndexError), ``!!bool maybe`` (KeyError),
# ``!!timestamp x`` (AttributeError), an integer of more digits than Python converts (ValueError).
_CONSTRUCTOR_FAILURES = (ValueError, TypeError, LookupError, AttributeError, ArithmeticError)


class _LocatingLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences record source positions."""

    source_name = "<string>"
    max_depth = MAX_YAML_DEPTH
    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        # PyYAML composes by recursion: a bound of our own, met at the node that passes it,
        # comes before Python's recursion limit (whose RecursionError knows no line)
        if self._depth >= self.max_depth and not self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise RuleFileError(f"the YAML is nested too deeply: more than {self.max_depth} levels",
                                source=self.source_name, line=mark.line + 1, column=mark.column + 1)
        self._depth += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except _CONSTRUCTOR_FAILURES:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            raise yaml.constructor.ConstructorError(None, None, f"cannot read this value as {tag}",
                                                    node.start_mark) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LocatedDict:  # type: ignore[override]
        # The keys written here, before a merge (``<<: *base``) adds the base's keys, which
        # these may override: only a key written twice here is a duplicate.
        written = [(key_node, value_node) for key_node, value_node in node.value
                   if key_node.tag != "tag:yaml.org,2002:merge"]
        plain = super().construct_mapping(node, deep=True)
        located = LocatedDict(plain)
        located.source = self.source_name
        located.line, located.column = node.start_mark.line + 1, node.start_mark.column + 1
        located.positions = {}
        located.value_marks = {}
        seen: set[Any] = set()
        for key_node, value_node in written:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                continue
            if key in seen:
                raise RuleFileError(
                    f"key {key!r} is given twice in one mapping",
                    source=self.source_name,
                    line=key_node.start_mark.line + 1,
                    column=key_node.start_mark.column + 1,
                    field=str(key),
                )
            seen.add(key)
            located.positions[key] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            # a scalar's style maps offsets inside it to the file; a list or mapping is "?": only its start
            located.value_marks[key] = (value_node.start_mark.line + 1, value_node.start_mark.column + 1,
                                        value_node.style if isinstance(value_node, yaml.ScalarNode) else "?")
        return located

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> LocatedList:  # type: ignore[override]
        located = LocatedList(super().construct_sequence(node, deep=True))
        located.source = self.source_name
        located.line, located.column = node.start_mark.line + 1, node.start_mark.column + 1
        located.positions = {
            i: (item.start_mark.line + 1, item.start_mark.column + 1) for i, item in enumerate(node.value)
        }
        located.value_marks = {i: (item.start_mark.line + 1, item.start_mark.column + 1, item.style)
                               for i, item in enumerate(node.value) if isinstance(item, yaml.ScalarNode)}
        return located


_LocatingLoader.add_constructor("tag:yaml.org,2002:map", _LocatingLoader.construct_mapping)
_LocatingLoader.add_constructor("tag:yaml.org,2002:seq", _LocatingLoader.construct_sequence)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, max_values: int, source: str) -> None:
    """Refuse a document whose aliases make it refer to itself or hold more than ``max_values`` values.

    An alias is the node it names, so ``[*a, *a]`` holds ``a`` twice: nine levels of ten aliases
    each ("billion laughs") are a few hundred bytes that read as 10^9 values, which every walk
    of the data (a comparison, a copy, a message) would then pay for.  Each node is sized once
    (the graph is shared, not expanded), without recursion.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes being sized: meeting one again is a cycle
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_sized = stack.pop()
        key = id(node)
        if children_sized:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > max_values:
                raise _node_error(node, f"holds more than {max_values} values once its aliases are expanded", source)
            sizes[key] = size
        elif key in open_nodes:
            raise _node_error(node, "contains itself through an alias", source)
        elif key not in sizes:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))


def _node_error(node: yaml.Node, problem: str, source: str) -> RuleFileError:
    kind = {"sequence": "list", "mapping": "mapping"}.get(node.id, "value")
    return RuleFileError(f"this {kind} {problem}", source=source, line=node.start_mark.line + 1,
                         column=node.start_mark.column + 1)


def _line_and_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of character ``offset`` of ``text``."""
    start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - start + 1


def load_yaml(text: str, *, source: str = "<string>", max_bytes: int = 1_000_000,
              max_values: int = MAX_YAML_VALUES, max_depth: int = MAX_YAML_DEPTH) -> Any:
    """Parse YAML text safely; mappings and lists remember their positions.

    Every failure is a :class:`RuleFileError` naming ``source`` and, when the text has one,
    the line and column: a character YAML does not allow (a NUL, a control character), a
    syntax error, a tag that cannot be constructed, nesting deeper than ``max_depth``, and
    aliases that expand the document past ``max_values`` values or make it contain itself.

    >>> doc = load_yaml("a: 1\\nb:\\n  - x\\n", source="demo.yaml")
    >>> doc["b"], doc.position_of("b")
    (['x'], (2, 1))
    >>> load_yaml("a: 1\\nb: [x\\x00]\\n", source="demo.yaml")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.RuleFileError: demo.yaml:2:6: not valid YAML: the character #x0000 is not allowed ...
    """
    if len(text) > max_bytes:
        raise RuleFileError(f"file is larger than {max_bytes} bytes", source=source)
    loader = None
    try:
        loader = _LocatingLoader(text)  # the reader refuses a character YAML does not allow here
        loader.source_name = source
        loader.max_depth = max_depth
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, max_values, source)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as err:
        line, column = _line_and_column(text, err.position)
        what = f"#x{err.character:04x}" if isinstance(err.character, int) else repr(err.character)
        raise RuleFileError(f"not valid YAML: the character {what} is not allowed ({err.reason})",
                            source=source, line=line, column=column) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        what = err.problem or err.context
        if err.problem and err.context and err.context_mark and err.context_mark.line != getattr(mark, "line", None):
            # where the unfinished construct began: "while parsing a flow sequence (from line 3, column 12)"
            what = (f"{err.context} (from line {err.context_mark.line + 1}, column {err.context_mark.column + 1}): "
                    f"{err.problem}")
        raise RuleFileError(
            f"not valid YAML: {what}",
            source=source,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as err:
        raise RuleFileError(f"not valid YAML: {err}", source=source) from None
    except RecursionError:  # only when the caller's own stack is already deep: max_depth comes first
        mark = loader.get_mark() if loader is not None else None
        raise RuleFileError("the YAML is nested too deeply to read", source=source,
                            line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None) from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml_bytes(path: str | Path, *, max_bytes: int = 1_000_000, unreadable: str = "cannot read the file",
                    where: dict[str, Any] | None = None) -> bytes:
    """The bytes of a file, reading no more than ``max_bytes`` of them.

    A file that cannot be read (missing, a directory, no permission, a NUL in its name) or
    is larger is a :class:`RuleFileError` ``"{unreadable}: {why}"``, placed at ``where``
    (``source=``, ``line=``...: an ``include:`` names its own line) or else at the path.
    """
    place = where if where is not None else {"source": str(path)}
    try:
        with open(path, "rb") as stream:
            raw = stream.read(max_bytes + 1)  # never the whole of a huge file (or of /dev/zero)
    except OSError as err:
        raise RuleFileError(f"{unreadable}: {err.strerror or err}", **place) from None
    except ValueError:  # open() refuses a name holding a NUL character
        raise RuleFileError(f"{unreadable}: its name holds a NUL character", **place) from None
    if len(raw) > max_bytes:
        raise RuleFileError(f"{unreadable}: it is larger than {max_bytes} bytes", **place)
    return raw


def decode_yaml_bytes(raw: bytes, *, source: str) -> str:
    """A file's bytes as text: UTF-8, without the byte order mark an editor may have written first.

    >>> decode_yaml_bytes(b"a: 1\\nb: caf\\xe9\\n", source="demo.yaml")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.RuleFileError: demo.yaml:2:7: the file is not UTF-8 text: byte 0xe9 is ...
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        read = err.object  # (after the byte order mark, when there is one: err.start counts from there)
        line_start = read.rfind(b"\n", 0, err.start) + 1
        column = len(read[line_start:err.start].decode("utf-8", "replace")) + 1
        raise RuleFileError(f"the file is not UTF-8 text: byte 0x{read[err.start]:02x} is {err.reason}",
                            source=source, line=read.count(b"\n", 0, err.start) + 1, column=column) from None


def load_yaml_file(path: str | Path, *, max_bytes: int = 1_000_000) -> Any:
    """Read and parse one YAML file (see :func:`load_yaml`)."""
    path = Path(path)
    text = decode_yaml_bytes(read_yaml_bytes(path, max_bytes=max_bytes), source=str(path))
    return load_yaml(text, source=str(path), max_bytes=max_bytes)
