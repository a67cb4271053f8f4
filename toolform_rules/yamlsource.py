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


class _LocatingLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences record source positions."""

    source_name = "<string>"

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


def load_yaml(text: str, *, source: str = "<string>", max_bytes: int = 1_000_000) -> Any:
    """Parse YAML text safely; mappings and lists remember their positions.

    >>> doc = load_yaml("a: 1\\nb:\\n  - x\\n", source="demo.yaml")
    >>> doc["b"], doc.position_of("b")
    (['x'], (2, 1))
    """
    if len(text) > max_bytes:
        raise RuleFileError(f"file is larger than {max_bytes} bytes", source=source)
    loader = _LocatingLoader(text)
    loader.source_name = source
    try:
        return loader.get_single_data()
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
    except RecursionError:
        raise RuleFileError("the YAML is nested too deeply to read", source=source) from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | Path, *, max_bytes: int = 1_000_000) -> Any:
    """Read and parse one YAML file (see :func:`load_yaml`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise RuleFileError(f"cannot read the file: {err.strerror}", source=str(path)) from None
    except UnicodeDecodeError:
        raise RuleFileError("the file is not UTF-8 text", source=str(path)) from None
    return load_yaml(text, source=str(path), max_bytes=max_bytes)
