"""What every family's reader shares: the code-fence stripper, the reply's grammar budget, the look-up of
a tool (:func:`tool_of`), the cap on a reply's notes (:data:`MAX_NOTES`) and JSON's C decoder without the
constants no format writes (:data:`JSON_VALUES`).

The grammar reads what a family's fast path cannot, at microseconds a character, so each reply gets
one :class:`GrammarBudget` (``Limits.reply_grammar_chars``) and says the same when it is spent.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Iterable, NamedTuple

from ...grammar import GrammarFailure
from ...limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from ...schema.ir import Tool
    from ...schema.toolset import Toolset


def _refuse_constant(name: str) -> None:
    raise ValueError(name)


#: JSON's C decoder refusing NaN and Infinity (no value a format writes): ``raw_decode`` raises ValueError on them
JSON_VALUES = json.JSONDecoder(parse_constant=_refuse_constant)

#: the most notes one reply's reading keeps (a reply of thousands of broken pieces is not as many notes)
MAX_NOTES = 20


def tool_of(tools: "Toolset | None", name: str) -> "Tool | None":
    """The tool ``name`` stands for (``Toolset.get``: any naming convention), when a toolset is given: the one
    place a protocol looks a tool up, where its syntax needs it (names in its calls stay as written).

    >>> from toolform_rules import sample_toolset
    >>> tool_of(sample_toolset(), "LegalDraftV3").name, tool_of(None, "f"), tool_of(sample_toolset(), "")
    ('legal_draft_v3', None, None)
    """
    return tools.get(name) if tools is not None and name else None


class Fenced(NamedTuple):
    """A text's ``body`` (stripped) without one Markdown code fence around all of it, where it ``start``s in the
    text, and whether it was ``fenced``."""

    body: str
    start: int
    fenced: bool


#: an info string: a language tag such as ``json``, ``tool-code``, ``c++``, ``objective-c``
_INFO_STRING = re.compile(r"[ \t]*[\w.+#-]*[ \t]*\r?\n")
_FENCE = "```"


def text_outside(text: str, spans: "Iterable[tuple[int, int]]") -> str:
    """``text`` without ``spans`` (they may overlap and come in any order).

    >>> text_outside("Sure. f(a=1) Done.", [(6, 12)])
    'Sure.  Done.'
    """
    kept: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start > at:
            kept.append(text[at:start])
        at = max(at, end)
    kept.append(text[at:])
    return "".join(kept)


def strip_code_fence(text: str) -> Fenced:
    r"""``text`` without one Markdown code fence that encloses all of it (white space aside): the opening line's
    info string (``json``, ``tool-code``) goes, a first line that is no tag (``{"a": 1}``) is the body's.

    >>> strip_code_fence("```json\n{}\n```"), strip_code_fence('```{"a": 1}```').body
    (Fenced(body='{}', start=8, fenced=True), '{"a": 1}')
    >>> strip_code_fence("  plain  ")
    Fenced(body='plain', start=2, fenced=False)
    """
    left = len(text) - len(text.lstrip())
    right = len(text.rstrip())
    if right - left >= 6 and text.startswith(_FENCE, left) and text.endswith(_FENCE, 0, right):
        inner_start, inner_end = left + 3, right - 3
        info = _INFO_STRING.match(text, inner_start, inner_end)
        if info is not None:
            inner_start = info.end()
        body = text[inner_start:inner_end]
        stripped = body.strip()
        return Fenced(stripped, inner_start + (len(body) - len(body.lstrip())) if stripped else inner_start, True)
    return Fenced(text[left:right], left, False)


class GrammarTooLong(GrammarFailure):
    """A candidate the grammar was not given: it does not fit in what is left of the reply's budget."""

    def __init__(self, grammar: str, size: int, total: int, left: int, run_cost: int = 0) -> None:
        self.size, self.total, self.left = size, total, left
        if size + run_cost > total:
            found = (f"a candidate of {size} characters that the fast readers could not read, longer than the "
                     f"grammar reads in one reply ({total}, Limits.reply_grammar_chars)")
        else:
            found = (f"not given to the grammar: this reply's earlier candidates took the {total} characters it "
                     f"reads in one reply (Limits.reply_grammar_chars)")
        super().__init__(grammar, 1, 1, (), found)


class GrammarBudget:
    """How many more characters the grammar may read in one reply (``Limits.reply_grammar_chars`` in all), each
    run costing ``run_cost`` more (tens of microseconds): its time on a reply is bounded, whatever it holds.

    >>> budget = GrammarBudget(100)
    >>> budget.spend("g", "[1, 2]"); budget.left
    30
    >>> try:
    ...     budget.spend("g", "[1, 2]")
    ... except GrammarFailure as refused:
    ...     print(refused.describe())
    line 1, column 1: not given to the grammar: this reply's earlier candidates took the 100 characters it reads in one reply (Limits.reply_grammar_chars)
    """

    __slots__ = ("total", "left", "run_cost")

    def __init__(self, total: int, run_cost: int = 64) -> None:
        self.total = self.left = total
        self.run_cost = run_cost

    @classmethod
    def of(cls, limits: Limits = DEFAULT_LIMITS) -> "GrammarBudget":
        """The budget of one reply read under ``limits``."""
        return cls(limits.reply_grammar_chars)

    def spend(self, grammar: str, text: str) -> None:
        """Take ``len(text)`` and the run's cost, or raise :class:`GrammarTooLong` (why the grammar did not run)."""
        cost = len(text) + self.run_cost
        if cost > self.left:
            raise GrammarTooLong(grammar, len(text), self.total, self.left, self.run_cost)
        self.left -= cost


__all__ = ["MAX_NOTES", "Fenced", "GrammarBudget", "GrammarTooLong", "strip_code_fence", "text_outside", "tool_of"]
