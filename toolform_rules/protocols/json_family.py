"""What the JSON-family protocols share: finding JSON in a reply, reading it, reporting where it broke.

The JSON-family protocols (``json_array``, ``jsonl_call``, ``code_block_json``, ``native``,
``tool_call_tags``, ``two_step_call``, ``slot_fill_call``) all carry calls as JSON; they
differ in what surrounds it.  This module holds the pieces they have in common:

* :func:`value_spans` and :func:`find_outside` locate bracket groups and markers in one
  linear, quote-aware scan (a ``</tool_call>`` or a code fence inside a JSON string is not
  a marker);
* :func:`read_json` reads one value: strict JSON through the C parser, then
  :func:`lenient_json` (JSON as models write it, rewritten token by token with the
  grammar's own readers and checked by the C parser), then the protocol's own grammar,
  which also says where a reply stops being the format; :class:`Values` is the
  transformer base for those grammars;
* :func:`relocate` turns a grammar failure on one candidate into a position in the reply;
* :func:`calls_in` and :func:`native_calls` read call objects out of a JSON value;
* :class:`Reading` collects calls and notes and makes the :class:`Extraction`.

Every grammar of the family imports ``json_values.lark``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Iterable, Sequence

from ..calls import ToolCall
from .base import Extraction, RawCall, internal_error
from ..grammar import GrammarFailure, Transformer, parse
from .json_object import call_from_object
from .values import JsonValues, number, unquote

#: Candidates longer than this are read by the fast path only (the grammar is ~1 µs a character).
MAX_GRAMMAR_CHARS = 200_000
#: At most this many candidates are read from one reply.
MAX_CANDIDATES = 1000

_SPECIAL = re.compile(r"[{}\[\]\"'\\\n]")
_MISSING: Any = object()


def value_spans(text: str, start: int = 0, end: int | None = None, *, openers: str = "{[",
                limit: int = MAX_CANDIDATES) -> list[tuple[int, int]]:
    """The top-level bracket groups of ``text[start:end]`` that open with one of ``openers``.

    One linear scan: ``{}`` and ``[]`` nest together, quotes are respected inside a group
    (a quote ends at a newline, so a stray apostrophe cannot swallow the reply), and a
    group still open at the end is returned up to the end (a truncated reply).

    >>> value_spans('see [1] and {"a": "}"} then [{"b": 2}, ')
    [(4, 7), (12, 22), (28, 39)]
    >>> value_spans('see [1] and [{"a": 1}]', openers="{")
    [(13, 21)]
    """
    n = len(text) if end is None else min(end, len(text))
    spans: list[tuple[int, int]] = []
    depth = 0
    begin = -1
    quote = ""
    i = start
    search = _SPECIAL.search
    while i < n:
        match = search(text, i, n)
        if match is None:
            break
        i = match.start()
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote or ch == "\n":
                quote = ""
        elif ch == '"' or ch == "'":
            if depth > 0 and (ch == '"' or not (i > 0 and text[i - 1].isalnum())):
                quote = ch
        elif ch == "{" or ch == "[":
            if depth == 0:
                if ch not in openers:  # a bracket of the other kind outside any group is prose
                    i += 1
                    continue
                begin = i
            depth += 1
        elif (ch == "}" or ch == "]") and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((begin, i + 1))
                if len(spans) >= limit:
                    return spans
        i += 1
    if depth > 0 and begin >= 0:
        spans.append((begin, n))
    return spans


def find_outside(text: str, needle: "re.Pattern[str]", start: int = 0, end: int | None = None) -> tuple[int, int]:
    """The first match of ``needle`` in ``text[start:end]`` that is not inside a bracket group.

    Returns ``(begin, end)`` of the match, or ``(-1, -1)``.  Linear: the text is scanned once
    for brackets and quotes while the pattern (a literal, ``re`` without backtracking) is
    searched forward.  When a group never closes, a match inside it is not found here; the
    caller falls back to a plain search.

    >>> find_outside('{"a": "</x>"} </x>', re.compile("</x>"))
    (14, 18)
    """
    n = len(text) if end is None else min(end, len(text))
    pos = start
    scan = start
    depth = 0
    quote = ""
    search = _SPECIAL.search
    while pos < n:
        found = needle.search(text, pos, n)
        if found is None:
            return -1, -1
        target = found.start()
        # advance the bracket/quote state up to ``target``
        while scan < target:
            match = search(text, scan, target)
            if match is None:
                scan = target
                break
            i = match.start()
            ch = text[i]
            if quote:
                if ch == "\\":
                    scan = i + 2
                    continue
                if ch == quote or ch == "\n":
                    quote = ""
            elif ch == '"' or ch == "'":
                if depth > 0 and (ch == '"' or not (i > 0 and text[i - 1].isalnum())):
                    quote = ch
            elif ch == "{" or ch == "[":
                depth += 1
            elif (ch == "}" or ch == "]") and depth > 0:
                depth -= 1
            scan = i + 1
        if scan > target:  # an escape stepped over the match's first character
            pos = scan
            continue
        if depth == 0 and not quote:
            return found.start(), found.end()
        pos = target + 1
    return -1, -1


def position(text: str, offset: int) -> tuple[int, int]:
    r"""1-based (line, column) of ``offset`` in ``text``.

    >>> position("ab\ncd", 4)
    (2, 2)
    """
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


_TERMINAL_WORDS = {"json_values__double_quoted": "a double-quoted string",
                   "json_values__single_quoted": "a single-quoted string",
                   "json_values__signed_number": "a number", "json_values__true": "true",
                   "json_values__false": "false", "json_values__null": "null",
                   "<END-OF-FILE>": "the end of the text"}


def relocate(failure: GrammarFailure, text: str, offset: int) -> GrammarFailure:
    r"""``failure`` (on a candidate that starts at ``offset`` of ``text``) with the reply's line and column.

    The names of terminals imported from ``json_values`` are put in words.

    >>> failure = GrammarFailure("g", 1, 3, ("json_values__signed_number",), "'x'")
    >>> relocate(failure, "ab\ncd", 4).describe()
    "line 2, column 4: expected a number, found 'x'"
    """
    expected = tuple(dict.fromkeys(_TERMINAL_WORDS.get(e, e.replace("json_values__", "")) for e in failure.expected))
    line, column = position(text, offset) if offset > 0 else (1, 1)
    if failure.line == 1:
        column += failure.column - 1
    else:
        column = failure.column
    return GrammarFailure(failure.grammar, line + failure.line - 1, column, expected, failure.found)


class Values(JsonValues):
    """Transformer base of the family's grammars: JSON values as Python values, ``start`` as a list."""

    def start(self, items: list) -> list:
        return list(items)


def fast_json(text: str) -> Any:
    """``json.loads(text)``, or ``_MISSING`` when strict JSON does not read it."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _MISSING


# json_values.lark's tokens as one pattern, alternatives disjoint (no backtracking): a double-
# quoted string, a single-quoted string, a word (true/True/...), SIGNED_NUMBER, a trailing comma
# (after the end of a value, before a closing bracket), and any character no token starts with.
# Punctuation and white space are not matched: they stay as they are.
_LENIENT_TOKEN = re.compile(r"""
    ("(?:[^"\\\n]|\\.)*")
  | ('(?:[^'\\\n]|\\.)*')
  | ([A-Za-z_][A-Za-z0-9_]*)
  | ([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?<=[\]}"'\w.]),(?=[ \t\f\r\n]*[}\]])
  | ([^ \t\f\r\n{}\[\],:])
""", re.VERBOSE)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORDS = {"true": " true ", "True": " true ", "false": " false ", "False": " false ", "null": " null ",
          "None": " null "}
_LENIENT_DECODER = json.JSONDecoder(strict=False)


class _NotLenientJson(Exception):
    """A token the grammar has no terminal for."""


def _strict_token(match: "re.Match[str]") -> str:
    """One token of ``json_values.lark`` as strict JSON (read with the grammar's own readers)."""
    double, single, word, numeral, stray = match.groups()
    if double is not None:
        return double if "\\" not in double else json.dumps(unquote(double))
    if single is not None:
        if "\\" in single or '"' in single:
            return json.dumps(unquote(single))
        return f'"{single[1:-1]}"'
    if word is not None:
        strict = _WORDS.get(word)
        if strict is None:
            raise _NotLenientJson
        return strict
    if numeral is not None:
        if _JSON_NUMBER.fullmatch(numeral):
            return f" {numeral} "
        value = number(numeral)
        if isinstance(value, float) and not math.isfinite(value):
            return " Infinity " if value > 0 else " -Infinity "
        return f" {value!r} "
    if stray is not None:
        raise _NotLenientJson
    return ""  # a trailing comma


def lenient_json(text: str) -> Any:
    r"""JSON as models write it (``json_values.lark``) through the C parser, or ``_MISSING``.

    Each token of the grammar is rewritten as strict JSON with the grammar's own readers
    (:func:`~toolform_rules.protocols.values.unquote` for strings in either quote,
    :func:`~toolform_rules.protocols.values.number` for ``1.``, ``+2``, ``007``), Python's
    ``True``/``False``/``None`` become JSON's words, a trailing comma after a value goes,
    and ``json`` checks the structure.  Anything else (a stray word, a quote that never
    closes, a comma after white space) is ``_MISSING``: the grammar then reads it or says
    where it stops.  A property test checks that this path and the grammar agree.

    >>> lenient_json("{'a': True, 'b': [1., +2, None,], 'c': 'it\\'s',}")
    {'a': True, 'b': [1.0, 2, None], 'c': "it's"}
    >>> lenient_json("{'a': yes}") is _MISSING
    True
    """
    try:
        strict = _LENIENT_TOKEN.sub(_strict_token, text)
    except (_NotLenientJson, ValueError):
        return _MISSING
    try:
        return _LENIENT_DECODER.decode(strict)
    except (ValueError, RecursionError):
        return _MISSING


def read_grammar(grammar: str, text: str, transformer: Transformer, start: str = "start") -> Any:
    """``text`` through ``grammar`` (from ``start``) and ``transformer``; a :class:`GrammarFailure` otherwise."""
    if len(text) > MAX_GRAMMAR_CHARS:
        raise GrammarFailure(grammar, 1, 1, (), f"a candidate of {len(text)} characters, more than the grammar "
                                                 f"reads ({MAX_GRAMMAR_CHARS})")
    tree = parse(grammar, text, start)
    try:
        return transformer.transform(tree)
    except RecursionError:
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply") from None
    except Exception as err:  # a callback failed (Lark wraps it): a number Python cannot hold, say
        raise GrammarFailure(grammar, 1, 1, (), f"a value that cannot be read ({err.__class__.__name__})") from None


def read_json(grammar: str, text: str, transformer: Transformer, start: str = "start",
              kinds: tuple[type, ...] = (dict, list)) -> Any:
    """One JSON object or array as models write it: strict JSON, then :func:`lenient_json`, else ``grammar``.

    ``grammar``'s rule ``start`` reads the value (``transformer`` returns it); it also has the
    last word on anything the fast paths read as another kind of value.
    """
    value = fast_json(text)
    if value is _MISSING:
        value = lenient_json(text)
    if isinstance(value, kinds):
        return value
    return read_grammar(grammar, text, transformer, start)


def call_of(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """:func:`~toolform_rules.protocols.json_object.call_from_object`, never raising (``None`` then)."""
    try:
        return call_from_object(obj)
    except (GrammarFailure, RecursionError):
        return None
    except Exception:  # arguments text that the shared reader chokes on (a 5,000-digit number)
        return None


def calls_in(value: Any) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """The calls a JSON value holds (an object, or an array of them) and how many elements were not calls.

    >>> calls_in([{"name": "f", "arguments": {"a": 1}}, 5])
    ([('f', {'a': 1})], 1)
    """
    if isinstance(value, dict):
        found = call_of(value)
        return ([found], 0) if found is not None else ([], 1)
    if isinstance(value, list):
        calls = []
        other = 0
        for item in value:
            found = call_of(item)
            if found is None:
                other += 1
            else:
                calls.append(found)
        return calls, other
    return [], 1


#: Keys under which provider responses nest their calls (OpenAI, Anthropic, Gemini, Responses API).
ENVELOPE_KEYS = ("tool_calls", "choices", "message", "delta", "content", "parts", "candidates", "output",
                 "functionCall", "function_call", "tool_use", "calls")


def native_calls(value: Any, depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a provider response, wherever its envelope puts them.

    >>> native_calls({"tool_calls": [{"id": "c1", "type": "function",
    ...                               "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]})
    [('f', {'a': 1})]
    >>> native_calls({"candidates": [{"content": {"parts": [{"functionCall": {"name": "g", "args": {}}}]}}]})
    [('g', {})]
    >>> native_calls({"role": "assistant", "name": "bot", "content": None,
    ...               "tool_calls": [{"type": "function", "function": {"name": "h", "arguments": ""}}]})
    [('h', {})]
    """
    if depth > 12:
        return []
    if isinstance(value, list):
        out: list[tuple[str, dict[str, Any]]] = []
        for item in value[:MAX_CANDIDATES]:
            out.extend(native_calls(item, depth + 1))
        return out
    if not isinstance(value, dict):
        return []
    out = []
    for key in ENVELOPE_KEYS:
        inner = value.get(key)
        if isinstance(inner, (dict, list)):
            out.extend(native_calls(inner, depth + 1))
    if out:  # an envelope ({"role": "assistant", "name": "bot", "tool_calls": [...]}: the calls, not "bot")
        return out
    if value.get("type") not in ("text", "thinking", "reasoning"):
        found = call_of(value)
        if found is not None:
            return [found]
    return []


def call_json(call: ToolCall, *, indent: int | None = None) -> str:
    """``{"name": ..., "arguments": {...}}`` as JSON text (non-ASCII written as is)."""
    return json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False, indent=indent)


class Reading:
    """What a parse has found so far: calls (with spans), notes, and whether the reply kept to the format."""

    __slots__ = ("text", "calls", "notes", "compliant")

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[RawCall] = []
        self.notes: list[str] = []
        self.compliant = True

    def add(self, found: Iterable[tuple[str, dict[str, Any]]], span: tuple[int, int] | None) -> int:
        count = 0
        for name, arguments in found:
            self.calls.append(RawCall(name, arguments, span))
            count += 1
        return count

    def note(self, sentence: str, *, breaks_format: bool = True) -> None:
        if len(self.notes) < 20:
            self.notes.append(sentence)
        if breaks_format:
            self.compliant = False

    def failed(self, what: str, failure: GrammarFailure, offset: int) -> None:
        self.note(f"{what}: {relocate(failure, self.text, offset).describe()}")

    def extraction(self, *, empty_ok: bool = False) -> Extraction:
        """The result; a reply without calls is compliant only when ``empty_ok`` (an empty list, say)."""
        return Extraction(tuple(self.calls), tuple(self.notes), self.compliant and (bool(self.calls) or empty_ok))


def guarded(protocol_id: str, parse: Callable[[str], Extraction], text: Any) -> Extraction:
    """``parse(text)``, but never an exception: a non-string or an internal failure is a note."""
    if not isinstance(text, str):
        return Extraction((), (f"{protocol_id}: the reply is not text ({type(text).__name__})",), False)
    try:
        return parse(text)
    except RecursionError:
        return Extraction((), (f"{protocol_id}: the reply is nested too deeply to read",), False)
    except GrammarFailure as failure:
        return Extraction((), (f"{protocol_id}: {failure.describe()}",), False)
    except Exception as err:  # a safety net: a reply is never a crash (the tests assert it is unused)
        return internal_error(protocol_id, err)


def report_failure(reading: Reading, failures: Sequence[tuple[GrammarFailure, int, bool]], when_none: str,
                   when_some: str) -> None:
    """Note the first candidate that did not read: any when no call was found, else one that looked like JSON.

    ``failures`` holds (failure, offset in the reply, whether the candidate looked like JSON).
    """
    for failure, offset, json_like in failures:
        if not reading.calls:
            reading.failed(when_none, failure, offset)
            return
        if json_like:
            reading.failed(when_some, failure, offset)
            return


def read_candidates(body: str, offset: int, grammar: str, transformer: Transformer, start: str = "candidate",
                    spans: Sequence[tuple[int, int]] | None = None
                    ) -> tuple[list[tuple[tuple[int, int], Any]], list[tuple[GrammarFailure, int, bool]]]:
    """Each bracket group of ``body`` read as one value (fast paths, then ``grammar`` from ``start``).

    Returns the values with their spans in the reply (``body`` starts at ``offset``), and the
    failures as :func:`report_failure` takes them.
    """
    values: list[tuple[tuple[int, int], Any]] = []
    failures: list[tuple[GrammarFailure, int, bool]] = []
    for s, e in value_spans(body) if spans is None else spans:
        candidate = body[s:e]
        try:
            value = read_json(grammar, candidate, transformer, start)
        except GrammarFailure as failure:
            failures.append((failure, offset + s, ":" in candidate))
            continue
        values.append(((offset + s, offset + e), value))
    return values, failures


def only_whitespace(text: str, spans: Sequence[tuple[int, int]], start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` holds nothing but ``spans`` and white space."""
    end = len(text) if end is None else end
    pos = start
    for s, e in spans:
        if text[pos:s].strip():
            return False
        pos = max(pos, e)
    return not text[pos:end].strip()


__all__ = ["ENVELOPE_KEYS", "MAX_CANDIDATES", "MAX_GRAMMAR_CHARS", "Reading", "Values", "call_json", "call_of",
           "calls_in", "fast_json", "find_outside", "guarded", "lenient_json", "native_calls", "only_whitespace",
           "position", "read_candidates", "read_grammar", "read_json", "relocate", "report_failure", "value_spans"]
