"""A module that marks its tools with @tool; the other functions are helpers."""

from toolform_rules.schema.python_tools import tool


def normalise_city(city: str) -> str:
    """A helper: not a tool, because the module marks its tools."""
    return city.strip().title()


@tool
def get_time(city: str, utc: bool = False) -> str:
    """Tell the time in a city.

    Args:
        city: The city.
        utc: Give UTC instead.
    """
    return normalise_city(city)


@tool(name="lookup_stock", description="Look up a stock price by ticker.")
def stock(ticker: str) -> float:
    """Not this text: the decorator's description wins."""
    return 1.0
