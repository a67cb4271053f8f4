"""Gemma's call arguments: ``{key:<escape>text<escape>,count:3,tags:[<escape>a<escape>],on:true}``.

Strings stand between a quote marker (``<escape>``, or ``<|"|>`` in later templates), unescaped;
numbers, ``true``/``false``/``null``, lists and objects are bare; commas may be missing or doubled.
Read by one forward scan: a bounded pattern per entry, ``str.find`` for a string's end, a stack.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

#: the longest key read
_MAX_KEY = 256
_BARE = r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?|true|false|null"
_WORDS = {"true": True, "false": False, "null": None}
#: deeper lists and objects than this are refused
MAX_DEPTH = 64


@functools.cache
def _patterns(quotes: tuple[str, ...]) -> tuple["re.Pattern[str]", "re.Pattern[str]"]:
    """An object's next entry and a list's next item: the closing bracket, or (an object's) the key and colon,
    and how the value opens — a quote marker (the first listed), a bracket or a bare value (else ``None``)."""
    value = "(?:(" + "|".join(map(re.escape, quotes)) + r")|([\[{])|(" + _BARE + "))?"
    entry = rf"[\s,]*+(?:(\}})|([A-Za-z_][\w\-.]{{0,{_MAX_KEY - 1}}}+)\s*+(?:(:)\s*+{value})?)?"
    return re.compile(entry), re.compile(r"[\s,]*+(?:(\])|" + value + ")")


def read_dict(text: str, at: int, quotes: tuple[str, ...]) -> tuple[dict[str, Any], int] | str:
    """The object at ``text[at]`` and where it ends, or what was expected where reading stopped.

    >>> read_dict('{a:<escape>x, y<escape>,n:-7,l:[1,<escape>b<escape>]}', 0, ("<escape>",))
    ({'a': 'x, y', 'n': -7, 'l': [1, 'b']}, 53)
    >>> read_dict('{a:1 b:<escape>x<escape>,,}', 0, ("<escape>",))
    ({'a': 1, 'b': 'x'}, 27)
    >>> read_dict('{a:<escape>x}', 0, ("<escape>",)), read_dict('{a 1}', 0, ("<escape>",))
    ('the closing <escape>', "':'")
    """
    if not text.startswith("{", at):
        return "'{'"
    entry, item = _patterns(quotes)
    root: dict[str, Any] = {}
    stack: list[Any] = [root]  # the objects and lists open, innermost last
    at += 1
    while stack:
        container = stack[-1]
        key = None
        if container.__class__ is dict:
            found = entry.match(text, at)
            closing, key, colon, quote, opening, bare = found.groups()  # type: ignore[union-attr]
            if closing is None and colon is None:
                return "a key or '}'" if key is None else "':'"
        else:
            found = item.match(text, at)
            closing, quote, opening, bare = found.groups()  # type: ignore[union-attr]
        at = found.end()  # type: ignore[union-attr]
        value: Any
        if closing is not None:
            stack.pop()
            continue
        if quote is not None:
            end = text.find(quote, at)
            if end < 0:
                return f"the closing {quote}"
            value, at = text[at:end], end + len(quote)
        elif opening is not None:
            if len(stack) >= MAX_DEPTH:
                return f"at most {MAX_DEPTH} levels of nesting"
            value = {} if opening == "{" else []
            stack.append(value)
        elif bare is not None:
            value = _WORDS[bare] if bare in _WORDS else json.loads(bare)
        else:
            return "a value"
        if key is None:
            container.append(value)
        else:
            container[key] = value
    return root, at


def write_dict(value: Any, quote: str) -> str:
    """``value`` written as :func:`read_dict` reads it.

    >>> write_dict({"a": "x", "n": 3, "l": [True, "b"]}, "<escape>")
    '{a:<escape>x<escape>,n:3,l:[true,<escape>b<escape>]}'
    """
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{write_dict(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(write_dict(v, quote) for v in value) + "]"
    return json.dumps(value)
