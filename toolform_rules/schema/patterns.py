"""The two ways a schema's ``pattern`` (or ``patternProperties`` key) is read, and whether it compiles.

A pattern is read as Python's ``re`` reads it (the study's rule, the ``sdk`` profile: what
``re`` cannot compile is skipped) or as ECMA-262, as JSON Schema specifies (the ``jsonschema``
profile, rule option ``ecma_regex``).  Either way it is compiled by the ``regex`` engine,
which matches with a timeout; an ECMA-262 pattern is first put in that engine's syntax
(:func:`ecma_to_regex`).  The loader uses :func:`pattern_error` to say, when the tools load,
which patterns will not compile and why; the engine compiles with :func:`compile_pattern`.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from .ir import Schema, Tool

_ECMA_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_"}


def regex_engine() -> Any:
    """The ``regex`` engine, imported when the first pattern is compiled (it costs start-up ~11 ms)."""
    import regex

    return regex


def ecma_to_regex(source: str) -> str:
    """An ECMA-262 pattern (what JSON Schema specifies) in the ``regex`` engine's syntax.

    What differs cheaply is translated: ``$`` ends the input (Python's also matches before
    a final newline), ``.`` excludes every line terminator, ``\\d`` and ``\\w`` are ASCII,
    ``\\u{1F600}`` names a code point, ``\\cJ`` a control character and ``\\k<name>`` the
    text a named group matched.  Unicode properties (``\\p{Letter}``) and named groups
    (``(?<name>...)``) are understood by the ``regex`` engine as they are.

    >>> ecma_to_regex(r"^\\d+.$"), ecma_to_regex(r"[\\w$]\\u{1F600}")
    ('^[0-9]+[^\\\\n\\\\r\\\\u2028\\\\u2029]\\\\Z', '[A-Za-z0-9_$]\\\\U0001f600')
    >>> ecma_to_regex(r"^\\cJ(?<q>[ab])\\k<q>")
    '^\\\\x0a(?<q>[ab])(?P=q)'
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(source):
        if source[i] == "\\" and i + 1 < len(source):
            written, i = _translated_escape(source, i, in_class)
        elif in_class:
            in_class, written, i = source[i] != "]", source[i], i + 1
        else:
            written, i, in_class = _outside_class(source, i)
        out.append(written)
    return "".join(out)


def _translated_escape(source: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``i`` in the ``regex`` engine's syntax, and the offset after it."""
    escaped = source[i + 1]
    end = source.find("}", i + 3) if source.startswith("u{", i + 1) else -1
    if end != -1 and _is_hex(source[i + 3:end]) and int(source[i + 3:end], 16) <= 0x10FFFF:
        return f"\\U{int(source[i + 3:end], 16):08x}", end + 1
    if escaped == "c" and source[i + 2:i + 3].isascii() and source[i + 2:i + 3].isalpha():
        return f"\\x{ord(source[i + 2]) % 32:02x}", i + 3  # ECMA: the letter's code modulo 32
    end = source.find(">", i + 3) if source.startswith("k<", i + 1) and not in_class else -1
    if end != -1 and source[i + 3:end].isidentifier():
        return f"(?P={source[i + 3:end]})", end + 1
    if escaped in _ECMA_CLASSES:
        return _ECMA_CLASSES[escaped] if in_class else f"[{_ECMA_CLASSES[escaped]}]", i + 2
    if escaped in "DW" and not in_class:
        return f"[^{_ECMA_CLASSES[escaped.lower()]}]", i + 2
    return source[i:i + 2], i + 2


def _outside_class(source: str, i: int) -> tuple[str, int, bool]:
    """What the character at ``i`` (outside a class) is in the ``regex`` engine's syntax, the offset after it,
    and whether it opens a class."""
    if source.startswith("[]", i):  # ECMA: matches nothing
        return "(?!)", i + 2, False
    if source.startswith("[^]", i):  # ECMA: matches anything
        return "[\\s\\S]", i + 3, False
    if source[i] == "[":
        return ("[^", i + 2, True) if source.startswith("^", i + 1) else ("[", i + 1, True)
    return _ECMA_OUTSIDE.get(source[i], source[i]), i + 1, False


_ECMA_OUTSIDE = {"$": "\\Z", ".": "[^\\n\\r\\u2028\\u2029]"}


def _is_hex(text: str) -> bool:
    return 0 < len(text) <= 6 and all(c in "0123456789abcdefABCDEF" for c in text)


def compile_pattern(source: str, *, ecma: bool) -> Any:
    """``source`` compiled by the ``regex`` engine; read as ECMA-262 when ``ecma``.

    Raises one of :func:`pattern_exceptions` when it does not compile.

    >>> compile_pattern(r"^\\d+$", ecma=True).search("12\\n") is None
    True
    """
    return regex_engine().compile(ecma_to_regex(source) if ecma else source)


def pattern_exceptions() -> tuple[type[BaseException], ...]:
    """What compiling a pattern raises when it does not compile (the engines' errors, and a pattern too
    deep or too large for them)."""
    return re.error, regex_engine().error, RecursionError, OverflowError, ValueError


def pattern_error(source: str, *, ecma: bool, python_re: bool = True) -> str | None:
    """Why ``source`` does not compile as it is read (``ecma``: as ECMA-262, else as Python does), or ``None``.

    Read as Python does, Python's own ``re`` must compile it too (``python_re``: the ``sdk``
    profile's ``pattern`` rule asks that; a ``patternProperties`` key is compiled by the
    ``regex`` engine alone).

    >>> pattern_error("(unclosed", ecma=False)
    'missing ), unterminated subpattern at position 0'
    >>> pattern_error(r"\\p{L}+", ecma=False), pattern_error(r"\\p{L}+", ecma=True)
    ('bad escape \\\\p at position 0', None)
    """
    try:
        if python_re and not ecma:
            re.compile(source)
        compile_pattern(source, ecma=ecma)
    except pattern_exceptions() as err:
        if isinstance(err, RecursionError):
            return "it is nested too deeply to compile"
        return str(err) or type(err).__name__
    return None


def bad_patterns(tool: Tool, *, ecma: bool) -> Iterator[tuple[str, str, str]]:
    """Each pattern of ``tool`` (``pattern``, ``patternProperties`` keys, in its parameters and its ``$ref``
    targets) that does not compile as read: its JSON pointer in the tool's schema, the pattern, and why.

    >>> from .loaders import load_tools
    >>> tool = load_tools({"name": "f", "parameters": {"type": "object", "properties": {
    ...     "x": {"type": "string", "pattern": "(unclosed"}}}}).tools[0]
    >>> list(bad_patterns(tool, ecma=True))
    [('#/properties/x/pattern', '(unclosed', 'missing ) at position 9')]
    """
    stack = [*reversed(list(tool.definitions.values())), tool.parameters]
    seen: set[int] = set()
    while stack:  # depth first, in document order
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield from _bad_at(node, ecma)
        stack.extend(reversed(list(node.children())))


def _bad_at(node: Schema, ecma: bool) -> Iterator[tuple[str, str, str]]:
    if node.pattern is not None:
        error = pattern_error(node.pattern, ecma=ecma)
        if error is not None:
            yield f"{node.pointer}/pattern", node.pattern, error
    for source, _ in node.pattern_properties:
        error = pattern_error(source, ecma=ecma, python_re=False)
        if error is not None:
            yield f"{node.pointer}/patternProperties/{_escape(source)}", source, error


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
