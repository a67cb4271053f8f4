"""The work count of ``support.work`` (used by tests/test_linear_work.py) tells a quadratic reader
from a linear one, by steps counted, never by a time."""

from __future__ import annotations

import sys

import pytest

from support.work import assert_work_grows_linearly, steps


def quadratic(text: str) -> int:
    """Pairs of 100-character blocks: (n / 100)² steps."""
    blocks = range(len(text) // 100)
    return sum(1 for _ in blocks for _ in blocks)


def linear(text: str) -> int:
    return sum(1 for _ in range(len(text) // 30))


def rescanning(text: str) -> int:
    """From each line, the rest of the text read again a character at a time: no call in the loop,
    only lines, which are counted too."""
    found = 0
    for start in range(0, len(text), 100):
        for char in text[start:]:
            if char == "b":
                found += 1
    return found


def test_a_quadratic_reader_fails_the_check() -> None:
    with pytest.raises(AssertionError, match="super-linear"):
        assert_work_grows_linearly(quadratic, lambda size: "a" * size)


def test_a_loop_that_calls_nothing_is_counted_by_its_lines() -> None:
    with pytest.raises(AssertionError, match="super-linear"):
        assert_work_grows_linearly(rescanning, lambda size: "a" * size)


def test_a_linear_reader_passes_and_its_answer_is_returned() -> None:
    assert assert_work_grows_linearly(linear, lambda size: "a" * size) == 20_000 // 30


def test_a_count_is_the_same_every_time_and_the_tracer_before_is_given_back() -> None:
    before = sys.gettrace()
    assert steps(linear, "a" * 3000) == steps(linear, "a" * 3000) == (steps(linear, "a" * 3000)[0], 100)
    assert sys.gettrace() is before
