"""What the JSON-family protocols share: finding JSON in a reply, reading it, reporting where it broke.

The JSON-family protocols (``json_array``, ``jsonl_call``, ``code_block_json``, ``native``,
``tool_call_tags``, ``two_step_call``, ``slot_fill_call``) all carry calls as JSON; they
differ in what surrounds it.  This module holds the pieces they have in common:

* :func:`scan_values` (:func:`value_spans`) and :func:`find_outside` locate bracket groups
  and markers in one linear, quote-aware scan at C speed (a ``</tool_call>`` or a code fence
  inside a JSON string is not a marker; a group nested deeper than :func:`bracket_depth`
  gives the complete groups inside it instead, noted);
* :func:`read_json` reads one value once: strict JSON through the C parser, then
  :func:`lenient_json` (JSON as models write it, rewritten token by token with the
  grammar's own readers and checked by the C parser), then the protocol's own grammar,
  which also says where a reply stops being the format, within the reply's
  :class:`GrammarBudget` (so Lark never reads more than a bounded part of a hostile
  reply); :class:`Values` is the transformer base for those grammars;
* :func:`relocate` turns a grammar failure on one candidate into a position in the reply;
* :func:`calls_in` and :func:`native_calls` read call objects out of a JSON value;
* :class:`Reading` collects calls and notes and makes the :class:`Extraction`.

Every grammar of the family imports ``json_values.lark``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable, Sequence

from ..calls import ToolCall
from .base import Extraction, RawCall, internal_error
from ..grammar import GrammarFailure, Transformer, parse
from .json_object import call_from_object
from ..limits import DEFAULT_LIMITS, Limits
from .values import (_MISSING, TOO_DEEP, GrammarBudget, JsonValues, _any_of, bracket_groups, brackets, fast_json,
                     group_end, json_value, lenient_json)

#: At most this many candidates are read from one reply.
MAX_CANDIDATES = 1000


def bracket_depth(limits: Limits = DEFAULT_LIMITS) -> int:
    """How deep a bracket group may nest and still be read as a value: ``2 * limits.max_depth``.

    A call's arguments nest at most ``Limits.max_depth`` levels (validation walks no deeper),
    inside at most as many levels of envelope (an array of calls, a provider's response); a
    deeper group is hostile or broken, and is not read as a whole (its complete inner groups are).

    >>> bracket_depth()
    128
    """
    return 2 * limits.max_depth


class Spans:
    """The bracket groups :func:`scan_values` found: ``spans`` to read, and where groups too deep to read begin."""

    __slots__ = ("spans", "too_deep", "depth")

    def __init__(self, spans: list[tuple[int, int]], too_deep: list[int], depth: int | None) -> None:
        self.spans, self.too_deep, self.depth = spans, too_deep, depth

    def note(self, reading: "Reading", offset: int = 0) -> None:
        """Note the first group too deep to read (``offset``: where the scanned text starts in the reply)."""
        if self.too_deep:
            line = position(reading.text, offset + self.too_deep[0])[0]
            more = f" (and {len(self.too_deep) - 1} more)" if len(self.too_deep) > 1 else ""
            reading.note(f"the bracket group at line {line}{more} nests deeper than {self.depth} levels (twice "
                         "Limits.max_depth): not read as a whole; the complete groups inside it were read")


def scan_values(text: str, start: int = 0, end: int | None = None, *, openers: str = "{[",
                limit: int = MAX_CANDIDATES, depth: int | None = None) -> Spans:
    """The top-level bracket groups of ``text[start:end]`` that open with one of ``openers``.

    ``{}`` and ``[]`` nest together, quotes are respected inside a group (a quote ends at a
    newline, so a stray apostrophe cannot swallow the reply), and a group still open at the
    end is returned up to the end (a truncated reply).  A group nested deeper than ``depth``
    is not returned; the complete groups inside it are, in its place (see
    :func:`~toolform_rules.protocols.values.bracket_groups`, which scans: linear, C speed).

    >>> found = scan_values('[[[{"a": [1]}]]] [2]', depth=3)
    >>> found.spans, found.too_deep
    ([(2, 14), (17, 20)], [0])
    """
    spans: list[tuple[int, int]] = []
    too_deep: list[int] = []
    for begin, stop, what in bracket_groups(text, start, end, top=openers, depth=depth):
        if what == TOO_DEEP:
            too_deep.append(begin)
            continue
        spans.append((begin, stop))
        if len(spans) >= limit:
            break
    return Spans(spans, too_deep, depth)


def value_spans(text: str, start: int = 0, end: int | None = None, *, openers: str = "{[",
                limit: int = MAX_CANDIDATES, depth: int | None = None) -> list[tuple[int, int]]:
    """The spans of :func:`scan_values`.

    >>> value_spans('see [1] and {"a": "}"} then [{"b": 2}, ')
    [(4, 7), (12, 22), (28, 39)]
    >>> value_spans('see [1] and [{"a": 1}]', openers="{")
    [(13, 21)]
    """
    return scan_values(text, start, end, openers=openers, limit=limit, depth=depth).spans


def find_outside(text: str, needle: "re.Pattern[str]", start: int = 0, end: int | None = None) -> tuple[int, int]:
    """The first match of ``needle`` in ``text[start:end]`` that is not inside a bracket group.

    Returns ``(begin, end)`` of the match, or ``(-1, -1)``.  Linear: the groups (found as
    :func:`value_spans` finds them) and the pattern (a literal, ``re`` without backtracking)
    are searched forward together, each once.  When a group never closes, a match inside it
    is not found here; the caller falls back to a plain search.

    >>> find_outside('{"a": "</x>"} </x>', re.compile("</x>"))
    (14, 18)
    """
    n = len(text) if end is None else min(end, len(text))
    kind = brackets("{[", "}]")
    opener = _any_of("{[").search
    pos = scanned = start  # where to look for the needle; where the groups are known up to (outside them)
    while pos < n:
        found = needle.search(text, pos, n)
        if found is None:
            break
        target = found.start()
        while True:
            group = opener(text, scanned, target)  # a group that opens before the match?
            if group is None:
                return found.start(), found.end()
            scanned, closed, _ = group_end(text, group.start(), n, kind)
            if not closed:
                return -1, -1  # it runs to the end, the match and any other inside it
            if scanned > target:
                pos = scanned  # the match is inside the group: look again after it
                break
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


def read_grammar(grammar: str, text: str, transformer: Transformer, start: str = "start", *,
                 budget: GrammarBudget | None = None) -> Any:
    """``text`` through ``grammar`` (from ``start``) and ``transformer``; a :class:`GrammarFailure` otherwise.

    ``budget``: the reply's :class:`GrammarBudget` (a fresh one of the default limits when none).
    """
    (GrammarBudget.of(DEFAULT_LIMITS) if budget is None else budget).spend(grammar, text)
    tree = parse(grammar, text, start)
    try:
        return transformer.transform(tree)
    except RecursionError:
        raise GrammarFailure(grammar, 1, 1, (), "a value nested too deeply") from None
    except Exception as err:  # a callback failed (Lark wraps it): a number Python cannot hold, say
        raise GrammarFailure(grammar, 1, 1, (), f"a value that cannot be read ({err.__class__.__name__})") from None


def read_json(grammar: str, text: str, transformer: Transformer, start: str = "start",
              kinds: tuple[type, ...] = (dict, list), *, budget: GrammarBudget | None = None, fast: bool = True) -> Any:
    """One JSON object or array as models write it: strict JSON, then :func:`lenient_json`, else ``grammar``.

    ``grammar``'s rule ``start`` reads the value (``transformer`` returns it); it also has the
    last word on anything the fast paths read as another kind of value.  ``fast=False``: the
    fast paths already declined this text (it is read once by each reader).
    """
    value = json_value(text) if fast else _MISSING
    if isinstance(value, kinds):
        return value
    return read_grammar(grammar, text, transformer, start, budget=budget)


def call_of(obj: Any, budget: GrammarBudget | None = None) -> tuple[str, dict[str, Any]] | None:
    """:func:`~toolform_rules.protocols.json_object.call_from_object`, never raising (``None`` then).

    ``budget``: the reply's :class:`GrammarBudget`, for arguments written as a JSON string.
    """
    try:
        return call_from_object(obj, budget=budget)
    except (GrammarFailure, RecursionError):
        return None
    except Exception:  # arguments text that the shared reader chokes on (a 5,000-digit number)
        return None


def calls_in(value: Any, budget: GrammarBudget | None = None) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """The calls a JSON value holds (an object, or an array of them) and how many elements were not calls.

    >>> calls_in([{"name": "f", "arguments": {"a": 1}}, 5])
    ([('f', {'a': 1})], 1)
    """
    if isinstance(value, dict):
        found = call_of(value, budget)
        return ([found], 0) if found is not None else ([], 1)
    if isinstance(value, list):
        calls = []
        other = 0
        for item in value:
            found = call_of(item, budget)
            if found is None:
                other += 1
            else:
                calls.append(found)
        return calls, other
    return [], 1


#: Keys under which provider responses nest their calls (OpenAI, Anthropic, Gemini, Responses API).
ENVELOPE_KEYS = ("tool_calls", "choices", "message", "delta", "content", "parts", "candidates", "output",
                 "functionCall", "function_call", "tool_use", "calls")


def native_calls(value: Any, depth: int = 0, budget: GrammarBudget | None = None) -> list[tuple[str, dict[str, Any]]]:
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
            out.extend(native_calls(item, depth + 1, budget))
        return out
    if not isinstance(value, dict):
        return []
    out = []
    for key in ENVELOPE_KEYS:
        inner = value.get(key)
        if isinstance(inner, (dict, list)):
            out.extend(native_calls(inner, depth + 1, budget))
    if out:  # an envelope ({"role": "assistant", "name": "bot", "tool_calls": [...]}: the calls, not "bot")
        return out
    if value.get("type") not in ("text", "thinking", "reasoning"):
        found = call_of(value, budget)
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
                    spans: Sequence[tuple[int, int]] | None = None, *, budget: GrammarBudget | None = None,
                    declined: tuple[int, int] | None = None
                    ) -> tuple[list[tuple[tuple[int, int], Any]], list[tuple[GrammarFailure, int, bool]]]:
    """Each bracket group of ``body`` read once, as one value (fast paths, then ``grammar`` from ``start``).

    Returns the values with their spans in the reply (``body`` starts at ``offset``), and the
    failures as :func:`report_failure` takes them.  ``budget``: the reply's :class:`GrammarBudget`;
    ``declined``: a span of ``body`` the fast paths have already declined (the whole reply, say).
    """
    budget = GrammarBudget.of(DEFAULT_LIMITS) if budget is None else budget
    values: list[tuple[tuple[int, int], Any]] = []
    failures: list[tuple[GrammarFailure, int, bool]] = []
    for s, e in value_spans(body) if spans is None else spans:
        candidate = body[s:e]
        try:
            value = read_json(grammar, candidate, transformer, start, budget=budget, fast=(s, e) != declined)
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


__all__ = ["ENVELOPE_KEYS", "MAX_CANDIDATES", "GrammarBudget", "Reading", "Spans", "Values", "bracket_depth",
           "call_json", "call_of", "calls_in", "fast_json", "find_outside", "guarded", "lenient_json", "native_calls",
           "only_whitespace", "position", "read_candidates", "read_grammar", "read_json", "relocate", "report_failure",
           "scan_values", "value_spans"]
