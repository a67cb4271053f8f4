"""Shared value readers and writers: JSON as models write it, and Python literals.

``JsonValues`` turns a ``grammars/json_values.lark`` tree into Python values; protocols
whose grammar imports those rules reuse it (by subclassing or ``merge_transformers``).
``loads_lenient`` is the fast path: strict JSON through the C parser, the grammar only
when that fails — a property test checks that both agree on strict JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..grammar import GrammarFailure, Transformer, parse

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"', "'": "'",
            "0": "\0"}


def unquote(token: str) -> str:
    """The text of a quoted string token (either quote; JSON and Python escapes, ``\\uXXXX`` included).

    >>> unquote('"a\\\\"b"'), unquote("'it\\\\'s'"), unquote('"\\\\u00e9"')
    ('a"b', "it's", 'é')
    """
    body = token[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u" and i + 6 <= len(body):
            try:
                code = int(body[i + 2:i + 6], 16)
            except ValueError:
                out.append(nxt)
                i += 2
                continue
            i += 6
            if 0xD800 <= code < 0xDC00 and body[i:i + 2] == "\\u":  # a surrogate pair
                try:
                    low = int(body[i + 2:i + 6], 16)
                except ValueError:
                    low = 0
                if 0xDC00 <= low < 0xE000:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            out.append(chr(code))
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def number(text: str) -> int | float:
    """A number token as int (when it has no fraction or exponent) or float."""
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


class JsonValues(Transformer):
    """A ``json_values.lark`` tree → Python values (dict, list, str, int, float, bool, None)."""

    def object(self, pairs: list) -> dict:
        return dict(p for p in pairs if p is not None)

    def pair(self, items: list) -> tuple:
        return items[0], items[1]

    def array(self, items: list) -> list:
        return [item for item in items]

    def string(self, items: list) -> str:
        return unquote(str(items[0]))

    def number(self, items: list) -> int | float:
        return number(str(items[0]))

    def true(self, _: list) -> bool:
        return True

    def false(self, _: list) -> bool:
        return False

    def null(self, _: list) -> None:
        return None

    def start(self, items: list) -> Any:
        return items[0]


def loads_lenient(text: str, grammar: str = "json_object", *, max_grammar_bytes: int = 200_000) -> Any:
    """A JSON value as models write it: strict JSON through ``json``, else the grammar.

    Raises :class:`GrammarFailure` when neither reads it.  Text longer than
    ``max_grammar_bytes`` is given to the C parser only.

    >>> loads_lenient("{'a': True, 'b': [1, 2,],}")
    {'a': True, 'b': [1, 2]}
    """
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > max_grammar_bytes:
        raise GrammarFailure(grammar, 1, 1, (), f"text longer than {max_grammar_bytes} characters that is not "
                                                "strict JSON")
    tree = parse(grammar, text)
    try:
        return JsonValues().transform(tree)
    except Exception:  # a value the grammar reads but Python cannot hold (too deep, too long a number)
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply or too large") from None


_SPAN_MARKS = re.compile(r"""[{}\[\]()"'\\\n]""")


def balanced_spans(text: str, opener: str = "{", closer: str = "}", *, limit: int = 1000) -> list[tuple[int, int]]:
    """The top-level ``opener…closer`` groups of ``text`` (quotes respected), in one linear scan.

    A group still open at the end of the text is returned too, ending there (a truncated
    reply); at most ``limit`` groups.  The scan jumps from one bracket, quote, backslash or
    newline to the next (a single-character class: no backtracking).

    >>> balanced_spans('x {"a": "}"} y {"b": {}} {"c"')
    [(2, 12), (15, 24), (25, 29)]
    """
    spans: list[tuple[int, int]] = []
    depth = 0
    start = -1
    quote = ""
    escaped_at = -1
    for match in _SPAN_MARKS.finditer(text):
        i = match.start()
        ch = text[i]
        if quote:
            if i == escaped_at:
                continue
            if ch == "\\":
                escaped_at = i + 1
            elif ch == quote or ch == "\n":
                quote = ""
            continue
        if depth == 0 and ch != opener:
            continue
        if ch == '"' or (ch == "'" and not (i > 0 and text[i - 1].isalnum())):
            quote = ch
        elif ch == opener:
            if depth == 0:
                start = i
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
                if len(spans) >= limit:
                    return spans
    if depth > 0 and start >= 0:
        spans.append((start, len(text)))
    return spans


def strip_code_fence(text: str) -> tuple[str, bool]:
    r"""``text`` without one surrounding Markdown code fence (and whether there was one).

    >>> strip_code_fence("```json\n{}\n```")
    ('{}', True)
    """
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        body = stripped[3:-3]
        newline = body.find("\n")
        if newline >= 0 and body[:newline].strip().isidentifier() or (newline >= 0 and not body[:newline].strip()):
            body = body[newline + 1:]
        return body.strip(), True
    return stripped, False


__all__ = ["JsonValues", "balanced_spans", "loads_lenient", "number", "strip_code_fence", "unquote"]
