"""The linear-growth check of ``support.growth`` (used by the protocols' linear-time tests) tells
a quadratic reader from a linear one."""

from __future__ import annotations

import pytest

from support.growth import assert_grows_linearly


def quadratic(text: str) -> int:
    """Pairs of 300-character blocks: (n / 300)² steps."""
    blocks = range(len(text) // 300)
    return sum(1 for _ in blocks for _ in blocks)


def linear(text: str) -> int:
    return sum(1 for _ in range(len(text) // 30))


def test_a_quadratic_reader_fails_the_check() -> None:
    with pytest.raises(AssertionError, match="super-linear"):
        assert_grows_linearly(quadratic, lambda size: "a" * size, big=1_000_000)


def test_a_linear_reader_passes_and_its_answer_is_returned() -> None:
    assert assert_grows_linearly(linear, lambda size: "a" * size, big=1_000_000) == 1_000_000 // 30
