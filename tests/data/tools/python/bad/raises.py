"""Importing this module fails."""

SETTINGS = {}

TIMEOUT = SETTINGS["timeout"]


def never(x: int) -> int:
    return x
