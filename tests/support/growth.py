"""Whether a reader's cost grows linearly with its input.

The check compares the CPU time of one input (500 KB by default) against the time of the same
shape ten times smaller, in the same process (the small one the best of three runs, the big one
of two when the first is over the limit): a ratio, so a loaded machine slows
both alike, and the process's own CPU time, so other processes do not count.  It asserts how the
cost grows (linear: ~10x for 10x the input; a quadratic reader: ~100x), never a speed: the
speed targets are measured by ``bench/`` (``docs/performance.md``).
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable

#: how much faster than 10x-for-10x the cost may grow before it is called super-linear (linear
#: readers measure 5-12x: fixed costs weigh on the small input; a quadratic one ~100x)
SLACK = 3.0
#: the size (characters) of the big input: large enough that a quadratic reader's cost dominates,
#: small enough for the suite's hundreds of these checks to stay within CI's budget
GROWN = 500_000
#: the small input's time is taken as at least this (seconds): below it, timer and allocator
#: noise would decide the ratio
FLOOR = 0.002


def cpu_seconds(read: Callable[[str], Any], text: str, repeats: int) -> tuple[float, Any]:
    """The least CPU time (of this process) of ``repeats`` calls ``read(text)``, and what it read."""
    best, result = float("inf"), None
    for _ in range(repeats):
        # the young generations only: what earlier runs left.  A full collection walks everything the test
        # process holds (0.4 s for two million objects, late in a full run), and timing never needed it
        gc.collect(1)
        # the cyclic collector off while timing (as timeit does): a reader that makes tens of thousands of calls
        # otherwise pays collections whose cost depends on everything the test process holds, not on the reader
        gc.disable()
        try:
            began = time.process_time()
            result = read(text)
            best = min(best, time.process_time() - began)
        finally:
            gc.enable()
    return best, result


def assert_grows_linearly(read: Callable[[str], Any], make: Callable[[int], str], big: int = GROWN,
                          factor: int = 10, context: Any = None) -> Any:
    """``read(make(big))`` costs at most ``SLACK`` times ``factor`` times ``read(make(big // factor))``;
    what it read from the big input is returned (for the caller's checks).

    ``make(size)`` writes about ``size`` characters of one shape.  The reader is warmed first
    (grammars built, caches filled), so the small input pays no one-off cost.
    """
    small = big // factor
    read(make(small // factor))
    small_text, big_text = make(small), make(big)
    small_time = max(cpu_seconds(read, small_text, 3)[0], FLOOR)
    limit = SLACK * factor * small_time
    big_time, result = cpu_seconds(read, big_text, 1)
    if big_time > limit:  # the best of two before calling it super-linear: a burst of noise spoils one run
        big_time = min(big_time, cpu_seconds(read, big_text, 1)[0])
    assert big_time <= limit, (
        f"{len(big_text):,} characters took {big_time:.3f} s, {big_time / small_time:.0f}x the "
        f"{small_time:.4f} s of {len(small_text):,}: super-linear", context)
    return result
