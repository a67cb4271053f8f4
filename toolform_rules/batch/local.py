"""The local engine: worker processes over chunks of lines, results written in input order.

The input is read a line at a time and handed out in chunks; at most a few chunks per worker
are in flight, so memory stays flat however large the file.  Results are written as soon as
every chunk before them is written.  One worker grades in this process (no pool to start).
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import threading
from typing import IO, Any, BinaryIO, Callable, Iterator

from ..errors import BatchError
from .jobs import ChunkResult, Tally
from .lines import Line, read_lines


def chunks(lines: Iterator[Line], *, chunk_lines: int, chunk_bytes: int) -> Iterator[list[Line]]:
    """Lines in groups of at most ``chunk_lines`` lines and about ``chunk_bytes`` bytes.

    >>> [len(c) for c in chunks(iter([Line(n, b"x") for n in range(5)]), chunk_lines=2, chunk_bytes=100)]
    [2, 2, 1]
    """
    group: list[Line] = []
    size = 0
    for line in lines:
        group.append(line)
        size += len(line.data)
        if len(group) >= chunk_lines or size >= chunk_bytes:
            yield group
            group, size = [], 0
    if group:
        yield group


def _run(job: Any, lines: list[Line]) -> ChunkResult:
    return job.run(lines).packed()


def _context() -> Any:
    """How worker processes start: forked from this process when it runs one thread (they inherit its
    loaded tools, compiled rules and built grammars, and start at once); else from a clean fork server
    (forking a process with threads can leave a lock held in the child), which imports the calling
    script again — a script that grades in parallel needs ``if __name__ == "__main__":``."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def run_local(job: Any, source: BinaryIO, out: IO[str], *, workers: int = 1, max_line_bytes: int,
              chunk_lines: int = 256, chunk_bytes: int = 1 << 20, in_flight: int = 3,
              on_chunk: Callable[[ChunkResult], None] | None = None) -> Tally:
    """Run ``job`` over every line of ``source``, writing its output lines to ``out`` in input order.

    ``workers``: processes (1: this one); ``in_flight``: chunks per worker handed out ahead;
    ``on_chunk(result)``: called after each chunk is written (the report, progress).
    Returns the whole tally.
    """
    tally = Tally()
    groups = chunks(read_lines(source, max_line_bytes=max_line_bytes), chunk_lines=chunk_lines,
                    chunk_bytes=chunk_bytes)

    def emit(result: ChunkResult) -> None:
        result.write_to(out)
        tally.merge(result.tally)
        if on_chunk is not None:
            on_chunk(result)

    first = next(groups, None)
    if first is None:
        return tally
    # the first chunk here: useful work that also loads the tools and builds what the replies need, which
    # forked workers then inherit instead of each building it again
    emit(job.run(first))
    if workers <= 1:
        for group in groups:
            emit(job.run(group))
        return tally
    out.flush()  # a forked worker must not inherit unwritten output
    pending: collections.deque[concurrent.futures.Future[ChunkResult]] = collections.deque()
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            for group in groups:
                pending.append(pool.submit(_run, job, group))
                if len(pending) >= workers * in_flight:
                    emit(pending.popleft().result())
            while pending:
                emit(pending.popleft().result())
    except concurrent.futures.process.BrokenProcessPool as err:
        raise BatchError(f"a worker process died ({err}); the results before it are written") from None
    return tally

