def total(
        first: int,
        *numbers: int) -> int:
    """Add numbers."""
    return first + sum(numbers)
