"""nl_intent: "I will use f with a: 1, b: some text." — the call said in words.

Grammar: ``grammars/nl_intent.lark`` (one sentence).  The module finds the sentences — each
starts at an opening ("I will use", "I'll call", "Let me use", "Use", a list number before it)
and runs to the end of its line or to the next opening — and, when the tools are known, reads
the arguments against the tool's parameters: a name that is not one of them ("Note:" inside a
value) is part of the value before it, and a name written in words ("term months") is the
parameter it spells.  Values are text, typed from the schema by the pipeline
(``text_values``); a value the sentence could not hold as it is — with a comma and a name and
a colon after it, a period and a space, a line break, spaces at its ends, a leading quote —
is written as a JSON string.

Fast path: the sentence is read with the grammar's own terminals (compiled regular
expressions), in the order the grammar's parser tries them; the Lark parser runs only when
that reading stops, to say where.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": 'Acme, "Ltd"'})])
>>> print(text)
I will use f with a: 1, b: Acme, "Ltd".
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b': 'Acme, "Ltd"'}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.names import canonical_name
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import parse
from .text_family import grammar_chars
from .markup_family import (SentenceParts, find_words, grammar_terminals, in_string_after, leftover_outside,
                            never_raises, read_sentences, sentence_end, sentence_spans, sentence_value, text_of)

GRAMMAR = "nl_intent"
VERBS = ("use", "call", "invoke", "run", "using", "calling")
_FRAME_PREFIX = re.compile(r"(?i)(?:\d{1,3}[.)][ \t]*)?"
                           r"(?:(?:I(?:'ll| will| would| am going to| shall| want to| need to)"
                           r"|let me)[ \t]+)?\Z")
_NO_TOOL = re.compile(r"(?i)\bno (?:tool|function)\b|\bnone of the tools\b")
_SENTENCES_LIMIT = 200
_FALLBACK_LIMIT = 10  # sentences read by the Lark parser (to say where they break) per reply
_BINDER = re.compile(r"(?i)[ \t]*(?::|=)[ \t]*\Z|[ \t]+(?:set|equal)[ \t]+to[ \t]+\Z")
_SENTENCE_LIMIT = 20_000

# (tool, arguments as (name token, raw value, where the name starts, where the value ends), period, trail)
Sentence = tuple[str, list[tuple[str, str, int, int]], bool, str]


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(value, str):
            return value
    return raw


def name_of(token: str) -> str:
    """The argument name in a NAME token (its binder dropped, a quoted name unquoted).

    >>> name_of("term months: "), name_of("a set to "), name_of('"odd: name" = ')
    ('term months', 'a', 'odd: name')
    """
    if token[-2:] == ": " and token[:1] != '"' and token[-3:-2] not in (" ", "\t"):  # the usual "name: "
        return token[:-2]
    binder = _BINDER.search(token)
    name = token[:binder.start()] if binder else token
    if binder and binder.group(0).strip()[:1] not in (":", "="):
        name = token.split()[0]
    name = name.strip()
    return _unquote(name) if name[:1] == '"' else name


def _read(text: str) -> Sentence | None:
    """The fast path: the grammar's terminals, tried in its parser's order; ``None`` where the grammar stops."""
    t = grammar_terminals(GRAMMAR)
    found = t["INTRO"].match(text)
    if found is None:
        return None
    tool = t["TOOL"].match(text, found.end())
    if tool is None:
        return None
    pos = tool.end()
    arguments: list[tuple[str, str, int, int]] = []
    with_ = t["WITH"].match(text, pos)
    if with_ is not None:
        pos = with_.end()
        nothing = t["NO_ARGUMENTS"].match(text, pos)
        if nothing is not None:
            pos = nothing.end()
        else:
            while True:
                name = t["NAME"].match(text, pos)
                if name is None:
                    return None
                raw, pos = sentence_value(GRAMMAR, text, name.end())
                arguments.append((name.group(0), raw, name.start(), pos))
                separator = t["SEP"].match(text, pos)
                if separator is None:
                    break
                pos = separator.end()
    ending = sentence_end(GRAMMAR, text, pos)
    return None if ending is None else (tool.group(0), arguments, *ending)


class SentenceTree(SentenceParts):
    """An ``nl_intent.lark`` tree → the sentence, as the fast path reads it."""

    def argument(self, items: list) -> tuple[str, str, int, int]:
        raw = str(items[1]) if len(items) > 1 else ""
        return str(items[0]), raw, items[0].start_pos or 0, (items[-1].end_pos or 0)


def _read_by_grammar(text: str) -> Sentence:
    sentence: Sentence = SentenceTree().transform(parse(GRAMMAR, text))
    return sentence


def _sentences(text: str) -> list[tuple[int, int]]:
    """Where the sentences are: from each opening to the next opening or the line's end."""
    return sentence_spans(text, VERBS, _FRAME_PREFIX, GRAMMAR, limit=_SENTENCES_LIMIT, repeated_opening=True)


def _says_no_tool(text: str) -> bool:
    """Whether the reply says no tool fits (``_NO_TOOL``, searched from the first "no" in any case)."""
    first = min((at for at in (text.find(w) for w in ("no", "No", "nO", "NO")) if at >= 0), default=-1)
    return first >= 0 and _NO_TOOL.search(text, first) is not None


def _parameters(name: str, tools: Toolset | None) -> dict[str, tuple[str, bool]] | None:
    """The tool's parameters by canonical name: (their name, whether they take free text), when the tool is known."""
    if tools is None:
        return None
    tool = tools.get(name)
    if tool is None:
        return None
    return {canonical_name(p.name): (p.name, not p.schema.types or "string" in p.schema.types)
            for p in tool.parameters.properties}


def _arguments(sentence: str, read: Sentence, parameters: dict[str, tuple[str, bool]] | None
               ) -> tuple[dict[str, Any], list[str]]:
    """The arguments of a sentence.

    With the tool's parameters known, a name that is none of them, after a value of a text
    parameter, is part of that text ("b: Acme, Note: fragile"); after any other value it is
    an argument of its own (a name the model made up, for validation to report).
    """
    merged: list[list[Any]] = []  # [name, value start, value end, raw (None once merged), takes text]
    for token, raw, start, end in read[1]:
        name = name_of(token)
        known = parameters.get(canonical_name(name)) if parameters is not None else None
        if parameters is not None and known is None and merged and merged[-1][4]:
            merged[-1][2] = end  # the previous value runs on
            merged[-1][3] = None
            continue
        merged.append([known[0] if known else name, end - len(raw), end, raw, bool(known and known[1])])
    values: dict[str, Any] = {}
    notes: list[str] = []
    for name, start, end, raw, _ in merged:
        text = raw if raw is not None else sentence[start:end]
        if name in values:
            notes.append(f"argument {name!r} is given twice; the last one counts")
        values[name] = _unquote(text)
    return values, notes


class NlIntent(Protocol):
    info = ProtocolInfo(
        id="nl_intent",
        name="Natural-language intent",
        description="The model says which tool it will use and with what values ('I will use TOOL with arg: "
                    "value, ...'); values are text, read against the tool's parameters.",
        parallel=True,
        text_values=True,
    )

    @never_raises
    def parse(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        spans = _sentences(text)

        def build(sentence: str, read: Any) -> tuple[str, dict[str, Any], list[str]]:
            tool = read[0].strip("`")
            arguments, notes = _arguments(sentence, read, _parameters(tool, tools))
            return tool, arguments, notes

        calls, notes, clean = read_sentences(text, spans, _read, _read_by_grammar, build,
                                             sentence_limit=_SENTENCE_LIMIT, fallback_limit=_FALLBACK_LIMIT,
                                             grammar_chars=grammar_chars(limits))
        if not calls:
            if _says_no_tool(text):
                return Extraction((), ("the reply says no tool fits",), True)
            if not notes:
                notes.append("no sentence naming a tool ('I will use TOOL with name: value') was found")
        if len(spans) >= _SENTENCES_LIMIT:
            notes.append(f"only the first {_SENTENCES_LIMIT} sentences were read")
            clean = False
        compliant = bool(calls) and clean and not leftover_outside(text, spans)
        return Extraction(tuple(calls), tuple(notes), compliant)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if len(calls) == 1:
            return self._sentence(calls[0])
        return "\n".join(f"{i}. {self._sentence(call)}" for i, call in enumerate(calls, 1))

    def _sentence(self, call: ToolCall) -> str:
        t = grammar_terminals(GRAMMAR)
        name = call.name if t["TOOL"].fullmatch(call.name) else f"`{call.name}`"
        if not call.arguments:
            return f"I will use {name}."
        parts = []
        for key, value in call.arguments.items():
            plain_key = t["NAME"].fullmatch(key + ": ") is not None and key[:1] != '"' and name_of(key + ": ") == key
            written = key if plain_key else json.dumps(key, ensure_ascii=False)
            parts.append(f"{written}: {self._value(text_of(value))}")
        return f"I will use {name} with {', '.join(parts)}."

    @staticmethod
    def _value(text: str) -> str:
        """``text`` as it is when the sentence reads it back unchanged, else as a JSON string."""
        value = grammar_terminals(GRAMMAR)["VALUE"]
        plain = (text and text == text.strip() and text[0] != '"' and "\n" not in text and "\r" not in text
                 and not find_words(text, 0, len(text), VERBS) and not in_string_after(text))
        if plain:
            for after in (".", ", z: 1"):
                found = value.match(text + after)
                if found is None or found.end() != len(text):
                    plain = False
                    break
        return text if plain else json.dumps(text, ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer in plain English: say which tool you will use and give each value it needs as "
                "name: value, for example\n"
                "I will use tool_name with first_argument: some text, second_argument: 3.\n"
                "Use one sentence per call (number them if there are several). Do not write JSON or code, except "
                "that a list or an object may be written as JSON, and a value holding a comma followed by a name "
                "and a colon, or a period followed by a space, goes in double quotes. If no tool fits, say so in "
                "one sentence.")


PROTOCOL = NlIntent()
