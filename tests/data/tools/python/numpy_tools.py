"""Undecorated tools with NumPy-style docstrings."""

from typing import Sequence


def book_flight(origin: str, destination: str, passengers: int = 1, seats: Sequence[str] = ()):
    """Book a flight between two airports.

    Parameters
    ----------
    origin : str
        The departure airport's IATA code.
    destination : str
        The arrival airport's IATA code.
    passengers : int, optional
        How many people travel.
    seats : sequence of str
        The seats wanted.

    Returns
    -------
    str
        A booking reference.
    """
    return "ABC123"


def convert_currency(amount: float, currency: str):
    """Convert an amount to euros.

    Parameters
    ----------
    amount : float
        The amount to convert.
    currency : str
        Its ISO 4217 code.
    """
    return amount
