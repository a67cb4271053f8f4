from typing import Callable


def apply(value: int,
          fn: Callable[[int], int]) -> int:
    """Apply a function."""
    return fn(value)
