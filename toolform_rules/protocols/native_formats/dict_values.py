"""Gemma's call arguments: ``{key:<escape>text<escape>,count:3,tags:[<escape>a<escape>],on:true}``.

Strings stand between a quote marker (``<escape>``, or ``<|"|>`` in later templates) and
hold any text, unescaped; numbers, ``true``/``false``/``null``, lists in ``[ ]`` and
objects in ``{ }`` are written bare; commas between entries may be missing.  Read by one
forward scan with ``str.find`` for each string's end and bounded patterns for the rest; an
object written as the renderer writes it (a comma between entries, JSON's white space) is
first rewritten as JSON for the C decoder, which reads it the same in half the time.
"""

from __future__ import annotations

import json
import re
# (C: a str as a JSON string, non-ASCII kept as it is, so a surrogate pair stays two characters)
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from ..reading import JSON_VALUES

_WS = re.compile(r"\s*+")
#: the longest key the scan reads
_MAX_KEY = 256
_KEY = re.compile(rf"[A-Za-z_][\w\-.]{{0,{_MAX_KEY - 1}}}")
_BARE = re.compile(r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?|true|false|null")
#: deeper lists and objects than this are refused (a value is read with an explicit stack, not recursion)
MAX_DEPTH = 64


def read_dict(text: str, at: int, quotes: tuple[str, ...]) -> tuple[dict[str, Any], int] | str:
    """The object at ``text[at]`` and where it ends, or what was expected where reading stopped.

    >>> read_dict('{a:<escape>x, y<escape>,n:-7,l:[1,<escape>b<escape>]}', 0, ("<escape>",))
    ({'a': 'x, y', 'n': -7, 'l': [1, 'b']}, 53)
    >>> read_dict('{a:1 b:<escape>x<escape>,,}', 0, ("<escape>",))  # (read by the scan: no JSON)
    ({'a': 1, 'b': 'x'}, 27)
    """
    as_json = read_dict_as_json(text, at, quotes)
    return as_json if as_json is not None else scan_dict(text, at, quotes)


#: what the scan would read as a key, where JSON wants a name in quotes: after "{" or "," (the white
#: space between, which JSON does not need, dropped by the split that finds them), before ":"
_JSON_KEY = re.compile(rf"(?<=[{{,])[ \t\n\r]*+([A-Za-z_][\w\-.]{{0,{_MAX_KEY - 1}}}+)(?=[ \t\n\r]*+:)")
_IN_QUOTES = '"{}"'.format
#: a string (:data:`_HOLE`) where a key would stand: the scan refuses it, JSON would not
_STRING_KEY = re.compile("\x01[ \t\n\r]*+:")
_BRACKET = re.compile(r"[{}\[\]]")
#: how much of the text the first look for an object's end reads (then four times more, and so on): a
#: call's arguments fit, and many calls in one reply cost no more than their own text each
_WINDOW = 1024
#: where a string stands in the object's text outside its strings
_HOLE = "\x01"


def read_dict_as_json(text: str, at: int, quotes: tuple[str, ...]) -> tuple[dict[str, Any], int] | None:
    """What :func:`scan_dict` reads at ``at``, read as JSON; ``None`` when the object is not
    written so that JSON reads it as the scan does (the scan then reads it, and says where it stops).

    The object's end is found by its brackets outside its strings (each string from one quote
    marker to the next of the same, as the scan pairs them); the text outside the strings gets
    its keys quoted, each string is put back as a JSON string, and the C decoder reads the
    whole.  JSON reads less than the scan (no missing or doubled commas, no Unicode white
    space, no key after a value without a comma, no NaN); what it does read, it reads to the
    same values.  Deeper than :data:`MAX_DEPTH`, or with a string of another quote marker,
    it declines.

    >>> read_dict_as_json('{a:<escape>x<escape>, n:[1, {b:null}]}!', 0, ("<escape>",))
    ({'a': 'x', 'n': [1, {'b': None}]}, 38)
    >>> read_dict_as_json('{a:1 b:2}', 0, ("<escape>",)) is None
    True
    """
    if not text.startswith("{", at):
        return None
    window = _WINDOW
    written: str | None
    while True:  # a window of the text from the "{", four times wider until the object closes in it
        stop = min(len(text), at + window)
        region = text[at:stop]
        if _HOLE in region:
            return None  # (the placeholder written in the reply: rare, and left to the scan)
        quote = _first_marker(text, at, stop, quotes)
        pieces = region.split(quote) if quote else [region]
        skeleton = _HOLE.join(pieces[0::2])  # the text outside the strings (a string the window cuts left out)
        plain = _plain_keys_quoted(skeleton)
        closed, written = plain if plain is not None else (_closing(skeleton), None)
        if closed is not None:
            break
        if stop == len(text):
            return None  # never closed
        window *= 4
    if closed < 0:
        return None  # too deep
    skeleton = skeleton[:closed]
    held = skeleton.count(_HOLE)
    strings = pieces[1:2 * held:2]
    end = at + closed + sum(map(len, strings)) + held * (2 * len(quote or "") - len(_HOLE))
    if '"' in skeleton or _STRING_KEY.search(skeleton) is not None or any(map(skeleton.__contains__, quotes)):
        return None  # a string or a marker where the scan reads none, or a string as a key
    if written is None:
        keyed = _JSON_KEY.split(skeleton)  # (in C, as every step here: no call per key or string)
        keyed[1::2] = map(_IN_QUOTES, keyed[1::2])
        written = "".join(keyed)
    if strings:
        parts: list[str] = [""] * (2 * len(strings) + 1)
        parts[0::2] = written.split(_HOLE)
        parts[1::2] = map(encode_basestring, strings)
        written = "".join(parts)
    try:
        value, stop = JSON_VALUES.raw_decode(written, 0)  # (no NaN: the scan reads none)
    except (ValueError, RecursionError):
        return None
    if stop != len(written) or type(value) is not dict:
        return None
    return value, end


#: an object (objects in it to three levels, no lists) from its "{" to its "}"
_BRACED = re.compile(r"\{[^{}\[\]]*+(?:\{[^{}\[\]]*+(?:\{[^{}\[\]]*+\}[^{}\[\]]*+)*+\}[^{}\[\]]*+)*+\}")
#: the characters of an object as the renderer writes it outside its strings, and of its keys
_PLAIN_CHARACTERS = re.compile(r"[A-Za-z0-9_\-.{}:,\x01]*+")
_NOT_A_KEY_AFTER = re.compile(r"[{,](?![A-Za-z_])")


def _plain_keys_quoted(skeleton: str) -> tuple[int, str] | None:
    r"""Where the object that ``skeleton`` opens closes, and its text with the keys in JSON's
    quotes, when it is written as the renderer writes it (objects in objects, no lists, no white
    space, ASCII); else ``None``, and the general way finds both (:func:`_closing`, :data:`_JSON_KEY`).

    Written so, every ``{`` and ``,`` opens a key and every ``:`` ends one, so three plain
    replacements quote the keys where the general way tries a pattern at every character: the
    same end and, wherever JSON reads the result, the same value (a property test holds both),
    at a fraction of the cost.

    >>> _plain_keys_quoted('{a:\x01,b:{c:-1.5e3,d:true}}<end>')
    (25, '{"a":\x01,"b":{"c":-1.5e3,"d":true}}')
    >>> _plain_keys_quoted('{a: 1}'), _plain_keys_quoted('{a:[1]}'), _plain_keys_quoted('{1a:1}')
    (None, None, None)
    """
    braced = _BRACED.match(skeleton)
    if braced is None:
        return None
    head = braced.group()
    if (_PLAIN_CHARACTERS.fullmatch(head) is None or _NOT_A_KEY_AFTER.search(head) is not None
            or len(head) > _MAX_KEY and max(map(len, head.replace("{", ",").split(","))) > _MAX_KEY):
        return None
    return len(head), head.replace("{", '{"').replace(",", ',"').replace(":", '":')


def _first_marker(text: str, start: int, stop: int, quotes: tuple[str, ...]) -> str | None:
    """The quote marker written first in ``text[start:stop]`` (the first listed, where two start together)."""
    quote, opened = None, -1
    for marker in quotes:
        where = text.find(marker, start, stop)
        if where >= 0 and (opened < 0 or where < opened):
            quote, opened = marker, where
    return quote


def _closing(skeleton: str) -> int | None:
    """Where the object that ``skeleton`` opens closes (just past it), by its brackets; ``None``
    when it does not close there, -1 when it is nested deeper than :data:`MAX_DEPTH`."""
    depth = 0
    for bracket in _BRACKET.finditer(skeleton):
        if bracket.group() in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return -1
        else:
            depth -= 1
            if not depth:
                return bracket.end()
    return None


def scan_dict(text: str, at: int, quotes: tuple[str, ...]) -> tuple[dict[str, Any], int] | str:
    """:func:`read_dict` token by token: every form the format allows, and where a malformed one stops.

    >>> scan_dict('{a:<escape>x<escape> n:2,}', 0, ("<escape>",))
    ({'a': 'x', 'n': 2}, 26)
    >>> scan_dict('{a:<escape>x}', 0, ("<escape>",))
    'the closing <escape>'
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
