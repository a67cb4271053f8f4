"""How a reader's work grows with its input: counted, never timed.

``steps(read, text)`` counts the Python steps one call makes: each line run and each function
entered, as ``sys.settrace`` reports them.  A count is the same on every run and on any machine,
loaded or not, so a bound on it is exact where a bound on a time needs slack and still flakes.
``assert_work_grows_linearly`` compares the count of one input with the count of the same shape
ten times larger: a linear reader does at most ~10x the steps (fewer where fixed costs weigh on
the small one), a reader with even a small quadratic part does visibly more.

What the count cannot see is work done in C: a regular expression, ``str.find`` or ``json``
reading the text again from each candidate is one step each time, however far it reads.
``bench/hostile.py`` times every protocol on 1 MB of each hostile shape (``make bench``,
``docs/performance.md``); that is where such a reading shows.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, Callable

#: how much more than ``factor`` times the small input's steps the big input may take: linear
#: readers measure ~10x for 10x, up to 15x where the big input passes a threshold the small one
#: does not (a first look in a bounded window, then a second); a reader that reads the rest of the
#: text again from each candidate measures ~100x
SLACK = 1.6
#: the small input's size (characters) unless a test says otherwise: large enough that the
#: per-character work outweighs the fixed costs, small enough to trace the big one quickly
SMALL = 2_000


def steps(read: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[int, Any]:
    """The Python steps of ``read(*args, **kwargs)`` (lines run and functions entered), and what it returned."""
    count = 0

    def count_step(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return count_step

    before = sys.gettrace()  # a coverage tool's tracer, given back afterwards
    sys.settrace(count_step)
    try:
        result = read(*args, **kwargs)
    finally:
        sys.settrace(before)
    return count, result


def assert_work_grows_linearly(read: Callable[[str], Any], make: Callable[[int], str], small: int = SMALL,
                               factor: int = 10, context: Any = None) -> Any:
    """``read(make(small * factor))`` takes at most ``SLACK * factor`` times the steps of
    ``read(make(small))``; what it read from the big input is returned (for the caller's checks).

    ``make(size)`` writes about ``size`` characters of one shape.  Both inputs are read once
    before they are counted, so grammars are built and every cache the two readings use is
    filled alike, whatever ran before in this process.
    """
    small_text, big_text = make(small), make(small * factor)
    for text in (make(max(1, small // factor)), small_text, big_text):
        read(text)
    small_steps, _ = steps(read, small_text)
    big_steps, result = steps(read, big_text)
    assert big_steps <= SLACK * factor * max(small_steps, 1), (
        f"{len(big_text):,} characters took {big_steps:,} steps, {big_steps / max(small_steps, 1):.1f}x the "
        f"{small_steps:,} of {len(small_text):,}: super-linear", context)
    return result


def load_hostile() -> ModuleType:
    """``bench/hostile.py``, whose shapes (``SHAPES``, ``hostile_text``) the tests read too."""
    path = Path(__file__).resolve().parents[2] / "bench" / "hostile.py"
    spec = importlib.util.spec_from_file_location("bench_hostile", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
