"""JSON Lines input, read the same way by every engine: numbered, bounded, never decoded in bulk.

A line is its bytes without the line end (``\\n``, or ``\\r\\n``); blank lines hold no record and
are skipped, but keep their number, so a record's ``line`` is its line in the file.  A line longer
than the limit is not kept in memory: it becomes a problem, and the reader goes on at the next line.
"""

from __future__ import annotations

from typing import Any, BinaryIO, Iterator

import attrs

#: how much of an over-long line is read at a time while skipping it
_SKIP_BLOCK = 1 << 20


@attrs.frozen
class Line:
    """One input line: its 1-based number, its bytes (line end removed), and why it cannot be read (or ``""``);
    or, for records that are values already (a Dask bag's dicts), the record itself."""

    number: int
    data: bytes
    problem: str = ""
    record: dict[str, Any] | None = None


def _too_long(number: int, size: int, max_line_bytes: int) -> Line:
    return Line(number, b"", f"the line is longer than {max_line_bytes} bytes ({size}); it was not read")


def _line(number: int, data: bytes, max_line_bytes: int) -> Line | None:
    """The line ``data`` (its ``\\n`` already removed) is, or ``None`` for a blank one."""
    if data.endswith(b"\r"):
        data = data[:-1]
    if len(data) > max_line_bytes:
        return _too_long(number, len(data), max_line_bytes)
    return Line(number, data) if data.strip() else None


def read_lines(handle: BinaryIO, *, max_line_bytes: int, first_number: int = 1) -> Iterator[Line]:
    """The non-blank lines of a binary stream, numbered from ``first_number``, one at a time.

    >>> import io
    >>> [(l.number, l.data, l.problem) for l in read_lines(io.BytesIO(b'a\\n\\nbb\\r\\nccc'), max_line_bytes=2)]
    [(1, b'a', ''), (3, b'bb', ''), (4, b'', 'the line is longer than 2 bytes (3); it was not read')]
    """
    number = first_number - 1
    while True:
        data = handle.readline(max_line_bytes + 2)  # room for the line end
        if not data:
            return
        number += 1
        if not data.endswith(b"\n") and len(data) > max_line_bytes:
            size = len(data)
            while True:  # drain the rest of the line without holding it
                more = handle.readline(_SKIP_BLOCK)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    break
            yield _too_long(number, size - (1 if more.endswith(b"\n") else 0), max_line_bytes)
            continue
        line = _line(number, data[:-1] if data.endswith(b"\n") else data, max_line_bytes)
        if line is not None:
            yield line


def split_block(block: bytes, *, first_number: int, max_line_bytes: int) -> list[Line]:
    """The lines of a block of whole lines (a partition of a file), as :func:`read_lines` reads them.

    >>> [(l.number, l.data) for l in split_block(b'x\\n\\ny\\n', first_number=10, max_line_bytes=100)]
    [(10, b'x'), (12, b'y')]
    """
    lines: list[Line] = []
    pieces = block.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()  # the block's last line end
    for offset, piece in enumerate(pieces):
        line = _line(first_number + offset, piece, max_line_bytes)
        if line is not None:
            lines.append(line)
    return lines


def count_lines(block: bytes) -> int:
    """How many lines a block holds (its last line need not end with a line end).

    >>> count_lines(b'a\\nb\\n'), count_lines(b'a\\nb'), count_lines(b'')
    (2, 2, 0)
    """
    return block.count(b"\n") + (1 if block and not block.endswith(b"\n") else 0)
