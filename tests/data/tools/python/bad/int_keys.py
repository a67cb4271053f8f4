def lookup(table: dict[int, str], key: int) -> str:
    """Look a key up."""
    return table[key]
