"""Gemma's call arguments: ``{key:<escape>text<escape>,count:3,tags:[<escape>a<escape>],on:true}``.

Strings stand between a quote marker (``<escape>``, or ``<|"|>`` in later templates) and
hold any text, unescaped; numbers, ``true``/``false``/``null``, lists in ``[ ]`` and
objects in ``{ }`` are written bare; commas between entries may be missing.  Read by one
forward scan with ``str.find`` for each string's end and bounded patterns for the rest.
"""

from __future__ import annotations

import json
import re
from typing import Any

_WS = re.compile(r"\s*+")
_KEY = re.compile(r"[A-Za-z_][\w\-.]{0,255}")
_BARE = re.compile(r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?|true|false|null")
#: deeper lists and objects than this are refused (a value is read with an explicit stack, not recursion)
MAX_DEPTH = 64


def read_dict(text: str, at: int, quotes: tuple[str, ...]) -> tuple[dict[str, Any], int] | str:
    """The object at ``text[at]`` and where it ends, or what was expected where reading stopped.

    >>> read_dict('{a:<escape>x, y<escape>,n:-7,l:[1,<escape>b<escape>]}', 0, ("<escape>",))
    ({'a': 'x, y', 'n': -7, 'l': [1, 'b']}, 53)
    """
    if not text.startswith("{", at):
        return "'{'"
    root: dict[str, Any] = {}
    stack: list[tuple[Any, str | None]] = [(root, None)]  # (container, key waiting for its value)
    at += 1
    while True:
        at = _WS.match(text, at).end()  # type: ignore[union-attr]
        container, _ = stack[-1]
        if at < len(text) and text[at] == ",":
            at += 1
            continue
        if at < len(text) and text[at] == ("}" if isinstance(container, dict) else "]"):
            at += 1
            stack.pop()
            if not stack:
                return root, at
            continue
        key = None
        if isinstance(container, dict):
            found = _KEY.match(text, at)
            if found is None:
                return "a key or '}'"
            key, at = found.group(), found.end()
            at = _WS.match(text, at).end()  # type: ignore[union-attr]
            if not text.startswith(":", at):
                return "':'"
            at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
        value: Any
        quote = next((q for q in quotes if text.startswith(q, at)), None)
        if quote is not None:
            end = text.find(quote, at + len(quote))
            if end < 0:
                return f"the closing {quote}"
            value, at = text[at + len(quote):end], end + len(quote)
        elif at < len(text) and text[at] in "{[":
            if len(stack) >= MAX_DEPTH:
                return f"at most {MAX_DEPTH} levels of nesting"
            value = {} if text[at] == "{" else []
            _put(container, key, value)
            stack.append((value, None))
            at += 1
            continue
        else:
            found = _BARE.match(text, at)
            if found is None:
                return "a value"
            value, at = json.loads(found.group()), found.end()
        _put(container, key, value)


def _put(container: Any, key: str | None, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    else:
        container.append(value)


def write_dict(value: dict[str, Any], quote: str) -> str:
    """``value`` written as :func:`read_dict` reads it.

    >>> write_dict({"a": "x", "n": 3, "l": [True, "b"]}, "<escape>")
    '{a:<escape>x<escape>,n:3,l:[true,<escape>b<escape>]}'
    """
    return _write(value, quote)


def _write(value: Any, quote: str) -> str:
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_write(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_write(v, quote) for v in value) + "]"
    return json.dumps(value)
