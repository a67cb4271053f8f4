"""The answer protocols: one module and one grammar each, registered here.

``REGISTRY`` maps each protocol id to the module that implements it and its rank in the
lenient fallback; it is the only list of the study's protocols.  Adding a protocol is its grammar
(``grammars/<id>.lark``), its module (``protocols/<id>.py``, exposing ``PROTOCOL``) and one
line here.  The model-native formats (``hermes``, ``kimi_k2``, ...) are the catalogue's
entries (``rules/native/formats.yaml``, :mod:`.native_formats`): ``get_protocol`` knows them by id and
by alias; the lenient fallback does not try them.
"""

from __future__ import annotations

import functools
import importlib
import re

import attrs

from ...errors import ToolformRulesError
from .base import Extraction, Protocol, ProtocolInfo, RawCall


@attrs.frozen(slots=False)
class Registration:
    """Where a protocol lives and when the lenient fallback tries it.

    ``lenient_rank``: the order in which ``parse_reply(lenient_fallback=True)`` tries other
    protocols' syntax — the most distinctive markers first (provider JSON, tags), free text
    last — so a reply is read by the syntax it most plausibly uses.  ``marker``: what a
    reply must hold to hold a call at all (a brace, a parenthesis, a tag), so that naming a
    reply's syntax skips the protocols it cannot be written in without parsing them.
    """

    module: str
    lenient_rank: int
    #: a pattern every reply holding a call of the protocol matches (searched, at C speed): a text
    #: it does not match is not parsed to name its syntax; empty: no such pattern, always parsed
    marker: str = ""

    @functools.cached_property
    def _marker(self) -> "re.Pattern[str] | None":
        return re.compile(self.marker) if self.marker else None

    def may_hold_calls(self, text: str) -> bool:
        """False only when ``text`` cannot hold a call of the protocol (it lacks the marker).

        >>> REGISTRY["json_object"].may_hold_calls("no braces here"), REGISTRY["cli_call"].may_hold_calls("x")
        (False, True)
        """
        pattern = self._marker
        return pattern is None or pattern.search(text) is not None


REGISTRY: dict[str, Registration] = {
    "python_call": Registration("code_family.python_call", 12, r"\("),
    "python_list_call": Registration("code_family.python_list_call", 10, r"\("),
    "bfcl_python_list": Registration("code_family.bfcl_python_list", 11, r"\("),
    "cli_call": Registration("text_family.cli_call", 21),
    "sql_call": Registration("code_family.sql_call", 18, r"\("),
    "graphql_call": Registration("code_family.graphql_call", 19, r"[({]"),
    "url_call": Registration("text_family.url_call", 20, r"/"),
    "sexpr_call": Registration("code_family.sexpr_call", 17, r"\("),
    "json_object": Registration("json_family.json_object", 6, r"\{"),
    "json_array": Registration("json_family.json_array", 7, r"\{"),
    "jsonl_call": Registration("json_family.jsonl_call", 8, r"\{"),
    "code_block_json": Registration("json_family.code_block_json", 5, r"\{"),
    "native": Registration("json_family.native", 1, r"\{"),
    "nl_intent": Registration("markup_family.nl_intent", 31),
    "nl_intent_structured": Registration("markup_family.nl_intent_structured", 30),
    "key_value_call": Registration("text_family.key_value_call", 24, r"[:=]"),
    "yaml_call": Registration("markup_family.yaml_call", 15, r":"),
    "toml_call": Registration("markup_family.toml_call", 16, r"[=\[]"),
    "pipe_call": Registration("text_family.pipe_call", 25),
    "csv_call": Registration("text_family.csv_call", 27),
    "table_call": Registration("text_family.table_call", 23, r"\|"),
    "symbolic_call": Registration("text_family.symbolic_call", 26),
    "slot_fill_call": Registration("json_family.slot_fill_call", 28, r"\{"),
    "two_step_call": Registration("json_family.two_step_call", 22),
    "tool_call_tags": Registration("json_family.tool_call_tags", 2, r"\{|<tool_call"),
    "function_tags": Registration("markup_family.function_tags", 3, r"<"),
    "xml_call": Registration("markup_family.xml_call", 4, r"<"),
    "xml_generic_call": Registration("markup_family.xml_generic_call", 29, r"<"),
    "python_tag": Registration("code_family.python_tag", 9, r"[({]"),
    "react": Registration("markup_family.react", 14, r"(?i:action)"),
    "bracket_call": Registration("code_family.bracket_call", 13, r"\("),
}


class UnknownProtocolError(ToolformRulesError):
    """A protocol id no module is registered for."""


def protocol_ids(kind: str = "study") -> list[str]:
    """The protocol ids of ``kind``: ``study`` (the 31 answer protocols, in the study's order), ``native``
    (the model-native formats of the catalogue, ``rules/native/formats.yaml``) or ``all``.

    >>> "json_object" in protocol_ids(), "hermes" in protocol_ids("native"), len(protocol_ids("all")) > 31
    (True, True, True)
    """
    if kind not in ("study", "native", "all"):
        raise ValueError(f"unknown kind of protocol {kind!r}; use study, native or all")
    study = list(REGISTRY) if kind != "native" else []
    if kind == "study":
        return study
    return study + list(dict.fromkeys(protocol.info.id for protocol in _native().values()))


def _native() -> dict[str, Protocol]:
    """The model-native formats by id and alias (the catalogue is read on first use)."""
    from ..model_formats import native_formats

    return native_formats(get_protocol, frozenset(REGISTRY))  # type: ignore[return-value]


@functools.cache
def lenient_order() -> tuple[str, ...]:
    """Every registered protocol, in the order the lenient fallback tries them (``lenient_rank``).

    >>> lenient_order()[:3], sorted(lenient_order()) == sorted(protocol_ids())
    (('native', 'tool_call_tags', 'function_tags'), True)
    """
    return tuple(sorted(REGISTRY, key=lambda protocol_id: REGISTRY[protocol_id].lenient_rank))


@functools.cache
def get_protocol(protocol_id: str) -> Protocol:
    """The protocol registered as ``protocol_id`` (its module is imported on first use).

    >>> get_protocol("json_object").info.name
    'JSON object'
    """
    protocol = _LOADED.get(protocol_id)
    if protocol is None:
        registration = REGISTRY.get(protocol_id)
        if registration is None:
            native = _native().get(protocol_id)
            if native is None:
                raise UnknownProtocolError(f"unknown protocol {protocol_id!r}; known: {', '.join(REGISTRY)}, and "
                                           f"the model-native formats {', '.join(_native())}")
            protocol = _LOADED[protocol_id] = native
            return protocol
        protocol = _LOADED[protocol_id] = importlib.import_module(f"{__name__}.{registration.module}").PROTOCOL
    return protocol


#: the protocols imported so far, by id (``importlib.import_module`` costs a microsecond a call)
_LOADED: dict[str, Protocol] = {}


__all__ = ["Extraction", "Protocol", "ProtocolInfo", "RawCall", "Registration", "UnknownProtocolError", "get_protocol",
           "lenient_order", "protocol_ids"]
