"""Typing the values of formats that write them as text (``cli_call``'s ``--term-months 12``), from the tool's
schema: the ``text-values`` normalisation profile (``rules/normalisation.yaml``) makes numbers, booleans and
JSON text of them where the schema wants them; every other string stays exactly as written.
"""

from __future__ import annotations

from typing import Any

from ...engine.verbs import normaliser_for
from ...schema.ir import Tool
from ...limits import DEFAULT_LIMITS, Limits

PROFILE = "text-values"


def type_values(arguments: dict[str, Any], tool: Tool | None, *, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """``arguments`` (text values) typed by ``tool``'s schema; the input is not modified.

    >>> from toolform_rules import sample_tool
    >>> type_values({"counterparty": " 12 ", "value": "1200.5", "term_months": "12", "auto_renew": "true",
    ...              "contract_details": '{"status": "draft"}'}, sample_tool())
    {'counterparty': ' 12 ', 'value': 1200.5, 'term_months': 12, 'auto_renew': True, 'contract_details': {'status': 'draft'}}
    """
    if tool is None or not isinstance(arguments, dict):
        return arguments
    program = normaliser_for(tool, PROFILE, limits)
    if program.normalise is None:
        return arguments
    try:
        typed = program.normalise(arguments)
    except RecursionError:
        return arguments
    return typed if isinstance(typed, dict) else arguments
