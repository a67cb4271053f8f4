"""Undecorated tools with Google-style docstrings: every public function defined here is a tool."""

from __future__ import annotations

import enum
from typing import Literal, Optional


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


def get_weather(city: str, days: int = 3, unit: Unit = Unit.CELSIUS) -> str:
    """Get the weather forecast
    for a city.

    The forecast comes from a made-up service.

    Args:
        city: The city, e.g. "Paris".
        days: How many days to
            forecast.
        unit (Unit): The temperature unit.
    """
    return f"{city}: sunny for {days} days ({unit.value})"


def search_docs(query: str, max_results: int = 10, exact: bool = False,
                sort: Literal["relevance", "date"] = "relevance") -> list[str]:
    """Search the documentation.

    Args:
        query: The words to look for.
        max_results: At most this many results.
        exact: Match the words exactly.
        sort: The order of the results.
    """
    return [query][:max_results]


def send_message(recipient: str, body: str, tags: list[str] = [], priority: Optional[int] = None) -> bool:
    """Send a message.

    Args:
        recipient: Who gets it.
        body: What it says.
        tags: Labels to attach.
        priority: 1 (high) to 5 (low).
    """
    return True


def scale(factor: float, values: list[float]) -> list[float]:
    """Multiply every value by a factor."""
    return [factor * v for v in values]
