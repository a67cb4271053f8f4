"""The study's sample tool, ``legal_draft_v3``."""

from __future__ import annotations

import functools

from .schema.ir import Tool
from .schema.toolset import Toolset

SAMPLE_TOOL_JSON = {
    "name": "legal_draft_v3",
    "description": "Draft a new contract. Works on the contracts and clauses data set.",
    "parameters": {
        "type": "object",
        "properties": {
            "counterparty": {"type": "string", "description": "Other party."},
            "value": {"type": "number", "minimum": 0, "description": "Contract value. Value must be at least 0."},
            "term_months": {"type": "integer", "minimum": 1, "maximum": 600, "description": "Length of the term."},
            "auto_renew": {"type": "boolean", "default": False, "description": "Whether it renews automatically."},
            "contract_details": {
                "type": "object",
                "description": "Details of the contract.",
                "properties": {
                    "contract_id": {"type": "string", "description": "Contract number."},
                    "status": {"type": "string", "enum": ["draft", "review", "signed", "expired"],
                               "description": "Where it stands."},
                },
            },
        },
        "required": ["counterparty", "value", "term_months"],
    },
}


@functools.cache
def sample_tool() -> Tool:
    """``legal_draft_v3``: counterparty, value (≥ 0), term_months (1..600), auto_renew, contract_details.

    >>> [p.name for p in sample_tool().parameters.properties]
    ['counterparty', 'value', 'term_months', 'auto_renew', 'contract_details']
    """
    from .schema.loaders import load_tools

    (tool,) = load_tools(SAMPLE_TOOL_JSON).tools
    return tool


def sample_toolset() -> Toolset:
    """A toolset holding only :func:`sample_tool`.

    >>> sample_toolset().names()
    ['legal_draft_v3']
    """
    return Toolset([sample_tool()], source="sample")
