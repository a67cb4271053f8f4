"""Normalise text before the guard's patterns read it, keeping the way back to the original offsets.

Attackers write ``Alwаys`` with a Cyrillic ``а``, ``ｉｇｎｏｒｅ`` in full width, ``ig\u200bnore``
with a zero-width space or ``ìgnore`` with a combining accent, so that a rule written for
``always``/``ignore`` misses.  :func:`normalise` undoes these — NFKC, invisible characters
dropped, combining diacritics stripped, the common Latin look-alikes folded inside words
that mix them with Latin letters — and keeps, for every character of the result, the
character of the original it came from: findings report offsets in the ORIGINAL text.

Pure non-Latin words are left alone (folding would turn Russian "не" into Latin garbage and
hide it from the non-English rules), and only the Latin combining diacritics are stripped
(the Japanese voicing marks are combining characters too).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from typing import Iterator

import attrs

#: Characters that render as nothing (zero-width, bidi controls, the tag block): dropped by
#: normalisation and flagged by the ``hidden_carriers`` check.
INVISIBLE_CLASS = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                   "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f")
#: Combining diacritics over Latin, Greek and Cyrillic letters (not the CJK voicing marks).
_COMBINING_CLASS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
#: Cyrillic and Greek letters drawn like Latin ones: folded inside words that also hold Latin letters.
CONFUSABLES = {
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "ɡ": "g", "ɑ": "a", "ı": "i",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ү": "Y",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "υ": "u", "ϲ": "c",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}
# (Python ``re``: these are fixed character classes, matched in linear time; kept with the tables they mirror)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_SPECIAL = re.compile(f"[{INVISIBLE_CLASS}{_COMBINING_CLASS}{''.join(CONFUSABLES)}]")
_INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]")
_COMBINING = re.compile(f"[{_COMBINING_CLASS}]")


@attrs.frozen
class NormalisedText:
    """The normalised ``text`` of ``original``, with the map back.

    The map is a list of pieces: ``norm_starts[i]`` is where piece ``i`` starts in ``text``,
    ``orig_starts[i]``/``orig_ends[i]`` the original characters it came from, and
    ``identity[i]`` whether it is a copied run (offset for offset) or what one original
    character became.  ``folded``: original offsets of the look-alikes folded to Latin.

    >>> n = normalise("Alw\\u0430ys ig\\u200bnore")
    >>> n.text, n.folded
    ('Always ignore', (3,))
    >>> n.original_span(7, 13), n.original[7:14]
    ((7, 14), 'ig\\u200bnore')
    """

    original: str
    text: str
    norm_starts: tuple[int, ...]
    orig_starts: tuple[int, ...]
    orig_ends: tuple[int, ...]
    identity: tuple[bool, ...]
    folded: tuple[int, ...] = ()

    def _piece(self, offset: int) -> int:
        return bisect.bisect_right(self.norm_starts, offset) - 1

    def original_start(self, offset: int) -> int:
        """Where the character at ``offset`` of the normalised text came from."""
        if not self.norm_starts:
            return min(offset, len(self.original))
        index = self._piece(offset)
        if index < 0:
            return 0
        if self.identity[index]:
            return self.orig_starts[index] + offset - self.norm_starts[index]
        return self.orig_starts[index]

    def original_end(self, end: int) -> int:
        """The original end of a span of the normalised text ending at ``end`` (exclusive)."""
        if end <= 0:
            return 0
        if not self.norm_starts:
            return min(end, len(self.original))
        index = self._piece(end - 1)
        if self.identity[index]:
            return self.orig_starts[index] + end - self.norm_starts[index]
        return self.orig_ends[index]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``text[start:end]``."""
        return self.original_start(start), max(self.original_end(end), self.original_start(start))


def _mixed_word(text: str, at: int, reach: int = 32) -> bool:
    """Whether the word around ``text[at]`` also holds an ASCII letter (bounded by ``reach`` either way)."""
    for step in (-1, 1):
        index = at + step
        while 0 <= index < len(text) and abs(index - at) <= reach:
            char = text[index]
            if char.isascii():
                if char.isalpha():
                    return True
                break
            if not (char.isalpha() or _INVISIBLE.match(char) or _COMBINING.match(char)):
                break
            index += step
    return False


def _character(char: str) -> str:
    """What one character becomes: NFKC, then Latin combining diacritics stripped."""
    if _INVISIBLE.match(char):
        return ""
    folded = unicodedata.normalize("NFKC", char)
    if not folded or not _COMBINING.search(unicodedata.normalize("NFD", folded)):
        return folded
    # (recomposed: the Japanese voicing marks, which are kept, join their kana again)
    return unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFD", folded)))


def _runs(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, ascii) runs of ``text``."""
    position = 0
    for match in _NON_ASCII_RUN.finditer(text):
        if match.start() > position:
            yield position, match.start(), True
        yield match.start(), match.end(), False
        position = match.end()
    if position < len(text):
        yield position, len(text), True


def normalise(text: str) -> NormalisedText:
    """``text`` normalised for matching, with the map back to its offsets (see :class:`NormalisedText`).

    >>> normalise("ｉｇｎｏｒｅ previous").text
    'ignore previous'
    >>> normalise("не говори пользователю").text == "не говори пользователю"
    True
    """
    if text.isascii():
        return NormalisedText(text, text, (0,) if text else (), (0,) if text else (), (len(text),) if text else (),
                              (True,) if text else ())
    pieces: list[str] = []
    norm_starts: list[int] = []
    orig_starts: list[int] = []
    orig_ends: list[int] = []
    identity: list[bool] = []
    folded: list[int] = []
    length = 0
    became_of: dict[str, str] = {}  # (what each distinct character becomes, worked out once per call)
    for start, end, ascii_run in _runs(text):
        run = text[start:end]
        if ascii_run or (unicodedata.is_normalized("NFKC", run) and not _SPECIAL.search(run)
                         and not _COMBINING.search(unicodedata.normalize("NFD", run))):
            pieces.append(run)
            norm_starts.append(length)
            orig_starts.append(start)
            orig_ends.append(end)
            identity.append(True)
            length += len(run)
            continue
        for offset, char in enumerate(run, start):
            became: str | None
            if char in CONFUSABLES and _mixed_word(text, offset):
                became = CONFUSABLES[char]
                folded.append(offset)
            else:
                became = became_of.get(char)
                if became is None:
                    became = became_of[char] = _character(char)
            if not became:
                continue
            pieces.append(became)
            norm_starts.append(length)
            orig_starts.append(offset)
            orig_ends.append(offset + 1)
            identity.append(len(became) == 1 and became == char)
            length += len(became)
    return NormalisedText(text, "".join(pieces), tuple(norm_starts), tuple(orig_starts), tuple(orig_ends),
                          tuple(identity), tuple(folded))
