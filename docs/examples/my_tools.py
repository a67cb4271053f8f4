"""Example tools for docs/python-tools.md (loading this file imports it)."""

from typing import Annotated, Literal

import annotated_types as at

from toolform_rules import tool


@tool
def get_weather(city: str, days: Annotated[int, at.Ge(1), at.Le(14)] = 3,
                unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the weather forecast for a city.

    Args:
        city: The city, e.g. "Paris".
        days: How many days to forecast.
        unit: The temperature unit.
    """
    return f"{city}: sunny for {days} days"


def format_reply(text: str) -> str:
    """A helper, not a tool: the module marks its tools with @tool."""
    return text.strip()
