"""The answer protocols: one module and one grammar each, registered here.

``REGISTRY`` maps each protocol id to the module that implements it; adding a protocol is
its grammar (``grammars/<id>.lark``), its module (``protocols/<id>.py``, exposing
``PROTOCOL``) and one line here.
"""

from __future__ import annotations

import functools
import importlib

from ..errors import ToolformRulesError
from .base import Extraction, Protocol, ProtocolInfo, RawCall

REGISTRY: dict[str, str] = {
    "python_call": "python_call",
    "python_list_call": "python_list_call",
    "bfcl_python_list": "bfcl_python_list",
    "cli_call": "cli_call",
    "sql_call": "sql_call",
    "graphql_call": "graphql_call",
    "url_call": "url_call",
    "sexpr_call": "sexpr_call",
    "json_object": "json_object",
    "json_array": "json_array",
    "jsonl_call": "jsonl_call",
    "code_block_json": "code_block_json",
    "native": "native",
    "nl_intent": "nl_intent",
    "nl_intent_structured": "nl_intent_structured",
    "key_value_call": "key_value_call",
    "yaml_call": "yaml_call",
    "toml_call": "toml_call",
    "pipe_call": "pipe_call",
    "csv_call": "csv_call",
    "table_call": "table_call",
    "symbolic_call": "symbolic_call",
    "slot_fill_call": "slot_fill_call",
    "two_step_call": "two_step_call",
    "tool_call_tags": "tool_call_tags",
    "function_tags": "function_tags",
    "xml_call": "xml_call",
    "xml_generic_call": "xml_generic_call",
    "python_tag": "python_tag",
    "react": "react",
    "bracket_call": "bracket_call",
}


class UnknownProtocolError(ToolformRulesError):
    """A protocol id no module is registered for."""


def protocol_ids() -> list[str]:
    """The registered protocol ids, in the study's order.

    >>> "json_object" in protocol_ids()
    True
    """
    return list(REGISTRY)


@functools.cache
def get_protocol(protocol_id: str) -> Protocol:
    """The protocol registered as ``protocol_id`` (its module is imported on first use).

    >>> get_protocol("json_object").info.name
    'JSON object'
    """
    module = REGISTRY.get(protocol_id)
    if module is None:
        raise UnknownProtocolError(f"unknown protocol {protocol_id!r}; known: {', '.join(REGISTRY)}")
    protocol: Protocol = importlib.import_module(f"{__name__}.{module}").PROTOCOL
    return protocol


__all__ = ["Extraction", "Protocol", "ProtocolInfo", "RawCall", "UnknownProtocolError", "get_protocol",
           "protocol_ids"]
