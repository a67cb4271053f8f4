def power(base: float, exponent: float, /) -> float:
    """Raise a number to a power."""
    return base ** exponent
