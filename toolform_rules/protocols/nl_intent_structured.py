"""nl_intent_structured: ``Use TOOL with arg = value, arg = value.`` — one framed sentence per call.

Grammar: ``grammars/nl_intent_structured.lark`` (one sentence).  The module finds the
sentences: each starts at the frame's first word ("Use", "Call", "I will use", with a list
number before it) and runs to the end of its line or to the next frame on the line.  Values
are text, typed from the tool's schema by the pipeline (``text_values``); a value the frame
could not hold as it is — with a comma and a name and ``=`` after it, a period and a space, a
line break, spaces at its ends, a leading quote — is written as a JSON string.
``No tool is needed.`` is the frame's way of calling nothing.

Fast path: the sentence is read with the grammar's own terminals (compiled regular
expressions), in the order the grammar's parser tries them; the Lark parser runs only when
that reading stops, to say where.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": "Acme, Ltd", "c": "x, d = y"})])
>>> print(text)
Use f with a = 1, b = Acme, Ltd, c = "x, d = y".
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b': 'Acme, Ltd', 'c': 'x, d = y'}
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import parse
from .text_family import grammar_chars
from .markup_family import (SentenceParts, grammar_terminals, in_string_after, leftover_outside, never_raises,
                            read_sentences, sentence_end, sentence_spans, sentence_value, text_of)

GRAMMAR = "nl_intent_structured"
_FRAME_START = re.compile(r"(?i)(?<![\w'])(?:\d{1,3}[.)][ \t]*)?(?:I(?:'ll| will| would| am going to| shall)[ \t]+)?"
                          r"(?:use|call)[ \t]+")
_FRAME_PREFIX = re.compile(r"(?i)(?:\d{1,3}[.)][ \t]*)?(?:I(?:'ll| will| would| am going to| shall)[ \t]+)?\Z")
_NO_TOOL = re.compile(r"(?i)\s*no tool is needed\.?\s*")
_SENTENCES_LIMIT = 200
_FALLBACK_LIMIT = 10  # sentences read by the Lark parser (to say where they break) per reply
_SENTENCE_LIMIT = 20_000


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(value, str):
            return value
    return raw


Sentence = tuple[str, list[tuple[str, str, int]], bool, str]  # tool, arguments (key, value, at), period, trail


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
    arguments: list[tuple[str, str, int]] = []
    with_ = t["WITH"].match(text, pos)
    if with_ is not None:
        pos = with_.end()
        while True:
            key = t["KEY"].match(text, pos)
            if key is None:
                return None
            equals = t["EQUALS"].match(text, key.end())
            if equals is None:
                return None
            raw, pos = sentence_value(GRAMMAR, text, equals.end())
            arguments.append((key.group(0), raw, key.start()))
            separator = t["SEP"].match(text, pos)
            if separator is None:
                break
            pos = separator.end()
    ending = sentence_end(GRAMMAR, text, pos)
    return None if ending is None else (tool.group(0), arguments, *ending)


class SentenceTree(SentenceParts):
    """An ``nl_intent_structured.lark`` tree → the sentence, as the fast path reads it."""

    def argument(self, items: list) -> tuple[str, str, int]:
        raw = str(items[2]) if len(items) > 2 else ""
        return str(items[0]), raw, items[0].start_pos or 0


def _read_by_grammar(text: str) -> Sentence:
    sentence: Sentence = SentenceTree().transform(parse(GRAMMAR, text))
    return sentence


def _sentences(text: str) -> list[tuple[int, int]]:
    """Where the framed sentences are: from each frame's first word to the next frame or the line's end
    (the frame starts at the verb, or before it at "I will" and a list number)."""
    return sentence_spans(text, ("use", "call"), _FRAME_PREFIX, GRAMMAR, limit=_SENTENCES_LIMIT)


def _call(sentence: str, read: Any) -> tuple[str, dict[str, Any], list[str]]:
    """A read sentence's tool and arguments (each key and value unquoted; a key given twice noted)."""
    tool, arguments = read[0], read[1]
    values: dict[str, Any] = {}
    notes: list[str] = []
    for key, raw, _ in arguments:
        key = _unquote(key)
        if key in values:
            notes.append(f"argument {key!r} is given twice; the last one counts")
        values[key] = _unquote(raw)
    return tool.strip("`"), values, notes


class NlIntentStructured(Protocol):
    info = ProtocolInfo(
        id="nl_intent_structured",
        name="Natural-language intent in a fixed sentence frame",
        description="One sentence per call in the frame 'Use TOOL with arg = value, arg = value.'; values are text.",
        parallel=True,
        text_values=True,
    )

    @never_raises
    def parse(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        if _NO_TOOL.fullmatch(text):
            return Extraction((), ("the reply says no tool is needed",), True)
        spans = _sentences(text)
        calls, notes, clean = read_sentences(text, spans, _read, _read_by_grammar, _call,
                                             sentence_limit=_SENTENCE_LIMIT, fallback_limit=_FALLBACK_LIMIT,
                                             grammar_chars=grammar_chars(limits))
        if not calls and not notes:
            notes.append("no sentence in the frame 'Use TOOL with arg = value.' was found")
        if len(spans) >= _SENTENCES_LIMIT:
            notes.append(f"only the first {_SENTENCES_LIMIT} sentences were read")
            clean = False
        compliant = bool(calls) and clean and not leftover_outside(text, spans)
        return Extraction(tuple(calls), tuple(notes), compliant)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self._sentence(call) for call in calls)

    def _sentence(self, call: ToolCall) -> str:
        t = grammar_terminals(GRAMMAR)
        name = call.name if t["TOOL"].fullmatch(call.name) else f"`{call.name}`"
        if not call.arguments:
            return f"Use {name}."
        parts = []
        for key, value in call.arguments.items():
            written_key = key if t["KEY"].fullmatch(key) and key[0] != '"' else json.dumps(key, ensure_ascii=False)
            parts.append(f"{written_key} = {self._value(text_of(value))}")
        return f"Use {name} with {', '.join(parts)}."

    @staticmethod
    def _value(text: str) -> str:
        """``text`` as it is when the frame reads it back unchanged, else as a JSON string."""
        value = grammar_terminals(GRAMMAR)["VALUE"]
        plain = (text and text == text.strip() and text[0] != '"' and "\n" not in text and "\r" not in text
                 and not _FRAME_START.search(text) and not in_string_after(text))
        if plain:
            for after in (".", ", z = 1"):
                found = value.match(text + after)
                if found is None or found.end() != len(text):
                    plain = False
                    break
        return text if plain else json.dumps(text, ensure_ascii=False)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer with one sentence per call, in exactly this frame, and nothing else:\n"
                "Use <tool name> with <argument> = <value>, <argument> = <value>.\n"
                "Write values as plain text; put a value in double quotes if it contains a comma followed by "
                "another argument, a period followed by a space, or a line break. If no tool fits, answer "
                "exactly: No tool is needed.")


PROTOCOL = NlIntentStructured()
