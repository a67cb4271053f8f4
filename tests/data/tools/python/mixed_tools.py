"""An undecorated module mixing tools with helpers, imports and classes."""

import json
from os.path import join  # an imported function is not a tool of this module



class Helper:
    def method(self, x: int) -> int:
        return x


def _private(x: int) -> int:
    return x


def count_words(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


def to_json(value) -> str:
    """Write any value as JSON (the parameter has no hint: it accepts anything)."""
    return json.dumps(value)


def path_of(folder: str, name: str) -> str:
    """Join a folder and a file name."""
    return join(folder, name)


alias = count_words
