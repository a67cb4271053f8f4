"""Canonical names: one spelling for a tool or argument name across naming conventions.

Models write ``LegalDraftV3``, ``legal-draft-v3`` or ``legal.draft.v3`` for the tool
``legal_draft_v3``, and ``termMonths`` for ``term_months``.  All of them mean one name;
the canonical key keeps only letters and digits, lower-cased.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=4096)
def canonical_name(name: str) -> str:
    """The key under which ``name`` is resolved: its letters and digits, lower-cased.

    ``str.lower`` rather than ``casefold``: the study resolved names this way, so
    ``STRASSE`` does not find ``Straße``.

    >>> canonical_name("LegalDraftV3") == canonical_name("legal-draft-v3") == "legaldraftv3"
    True
    >>> canonical_name("termMonths")
    'termmonths'
    """
    return "".join(ch for ch in name.lower() if ch.isalnum())
