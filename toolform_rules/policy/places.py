"""Where a problem is in a policy file: from an offset in an expression to a file's line and column.

The YAML reader records where each scalar starts and its style; an expression's offset
maps to the file through it — past the opening quote and each escape of a quoted scalar,
down the lines of a block scalar at its indentation.  ``raise_problems`` gathers every
problem into one :class:`PolicyError`, each with its line and a caret.
"""

from __future__ import annotations

from typing import Any

from ..errors import LocatedError, PolicyError
from ..yamlsource import Located
from .document import PolicyFieldError
from .expression import ExpressionError

Mark = tuple[int, int, "str | None"]


def value_mark(container: Any, key: Any) -> Mark | None:
    """Where ``container[key]``'s scalar starts (line, column, style), from the YAML reader."""
    if not isinstance(container, Located):
        return None
    mark = container.value_mark(key)
    if mark is not None:
        return mark
    line, column = container.position_of(key)
    return (line, column, "?") if line is not None and column is not None else None


def place(mark: Mark | None, offset: int, text: str, lines: list[str]) -> tuple[int | None, int | None]:
    """Where offset ``offset`` of a scalar that starts at ``mark`` is in its file (line, column)."""
    if mark is None:
        return None, None
    line, column, style = mark
    if style == "?":  # not a scalar: the key's own place
        return line, column
    if style in ("|", ">"):  # the block's text starts on the next line; its first line sets the indentation
        following = lines[line:]
        indent = next((len(c) - len(c.lstrip(" ")) for c in following if c.strip()), 0)
        consumed = 0
        for number, content in enumerate(following, start=line):
            piece = len(content[indent:]) if content.strip() else 0
            if offset <= consumed + piece:
                return number + 1, indent + offset - consumed + 1
            consumed += piece + 1
        return line, column
    if "\n" in text[:offset]:  # a plain or quoted scalar folded over lines: its first line
        return line, column
    if style in ("'", '"') and 0 < line <= len(lines):
        return line, column + 1 + _raw_width(lines[line - 1][column:], offset, style)
    return line, column + offset


def _raw_width(raw: str, offset: int, style: str) -> int:
    """How many characters of a quoted scalar's source (after its opening quote) write its first
    ``offset`` characters: an escape (``\\"``, ``\\x41``, ``''``) is several characters of source for one."""
    position = 0
    for _ in range(offset):
        if position >= len(raw):
            break
        if style == '"' and raw[position] == "\\":
            position += {"x": 4, "u": 6, "U": 10}.get(raw[position + 1:position + 2], 2)
        elif style == "'" and raw.startswith("''", position):
            position += 2
        else:
            position += 1
    return position


def locate(err: ExpressionError, mark: Mark | None, source: str, field: str, lines: list[str],
            offset_shift: int = 0, whole: str | None = None) -> LocatedError:
    line, column = place(mark, err.offset + offset_shift, whole if whole is not None else err.text, lines)
    return PolicyFieldError(err.message, source=source, line=line, column=column, field=field)


def raise_problems(problems: list[LocatedError], texts: dict[str, list[str]]) -> None:
    """Raise one :class:`PolicyError` for all ``problems`` (nothing when there are none), each shown
    with its line of ``texts`` (the files' lines, by source) and a caret."""
    if not problems:
        return
    problems = sorted(problems, key=lambda p: (p.source or "", p.line or 0, p.column or 0))
    raise PolicyError(problems, excerpts=texts)
