"""Reading BFCL v4 (the pinned ``bfcl-eval`` release; see tools/corpora.py).

Every BFCL file is JSON Lines despite its ``.json`` name.  A question record has an ``id``
and the ``function`` docs it offers; ``possible_answer/`` holds, by ``id``, the accepted
values of each argument of each expected call.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from toolform_rules import Toolset, load_tools

from . import corpora

#: the single-turn categories with an answer key (BFCL's AST categories)
ANSWERED = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
            "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
#: every single-turn category: the answered ones and those where no call is the right answer
SINGLE_TURN = ANSWERED + ("irrelevance", "live_irrelevance", "live_relevance")
#: the Python categories whose function docs the protocol tests draw calls from
PYTHON_DOCS = ("simple_python", "multiple")


def _lines(path: Any) -> tuple[dict, ...]:
    with open(path, encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


@functools.cache
def records(category: str) -> tuple[dict, ...]:
    """The question records of ``BFCL_v4_<category>.json``, in file order."""
    return _lines(corpora.bfcl() / f"BFCL_v4_{category}.json")


@functools.cache
def answers(category: str) -> dict[str, list[dict]]:
    """``id`` -> ground truth (a list of ``{name: {argument: [accepted values]}}``)."""
    return {record["id"]: record["ground_truth"]
            for record in _lines(corpora.bfcl() / "possible_answer" / f"BFCL_v4_{category}.json")}


@functools.cache
def function_docs(categories: tuple[str, ...] = PYTHON_DOCS) -> tuple[dict, ...]:
    """The distinct function docs (equal JSON is one doc) of ``categories``, in file order."""
    seen: dict[str, dict] = {}
    for category in categories:
        for record in records(category):
            for doc in record.get("function", []):
                seen.setdefault(json.dumps(doc, sort_keys=True), doc)
    return tuple(seen.values())


@functools.cache
def record_toolsets(categories: tuple[str, ...] = PYTHON_DOCS) -> tuple[Toolset, ...]:
    """One toolset per question record of ``categories`` (the functions that record offers)."""
    return tuple(load_tools(record["function"]) for category in categories for record in records(category))
