from __future__ import annotations


def fetch(
    url: str,
    session: Sessoin,
) -> str:
    """Fetch a page (the hint misspells a class that does not exist)."""
    return url
