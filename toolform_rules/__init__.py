"""toolform_rules: decide, declaratively and auditably, whether a language model's tool call fits its tool.

>>> from toolform_rules import sample_toolset, validate_arguments
>>> validate_arguments({"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", "value": 10,
...                     "term_months": 12}}, sample_toolset()).ok
True
"""

from __future__ import annotations

import importlib

from .version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a tenth of this module's cost)

#: Where each public name is defined.  Nothing is imported with the package: a name's module
#: is imported when the name is first used (PEP 562), so ``import toolform_rules`` is cheap and
#: a process that only validates never loads Lark, the policy machinery or the protocols.
_EXPORTS: dict[str, str] = {
    "ToolCall": ".calls",
    "normalize_call": ".engine.verbs", "validate_arguments": ".engine.verbs", "validate_call": ".engine.verbs",
    "validate_instance": ".engine.verbs",
    "CallError": ".errors", "EvaluationError": ".errors", "LimitExceeded": ".errors", "LoaderError": ".errors",
    "PolicyError": ".errors", "RuleFileError": ".errors", "ToolformRulesError": ".errors",
    "UnknownProfileError": ".errors",
    "Property": ".schema.ir", "Schema": ".schema.ir", "Tool": ".schema.ir",
    "Limits": ".limits", "PolicyLimits": ".limits",
    "load_tools": ".schema.loaders", "tool": ".schema.python_tools",
    "Policy": ".policy", "load_policy": ".policy",
    "UnknownProtocolError": ".replies.formats", "get_protocol": ".replies.formats", "protocol_ids": ".replies.formats",
    "ParsedCall": ".replies.parse", "ParsedReply": ".replies.parse", "parse_reply": ".replies.parse",
    "ReplyStream": ".replies.stream", "StreamEvent": ".replies.stream", "parse_stream": ".replies.stream",
    "Finding": ".engine.report", "ValidationReport": ".engine.report",
    "builtin_rules": ".engine.rule_files", "load_rules": ".engine.rule_files",
    "RuleSet": ".engine.rules",
    "sample_tool": ".samples", "sample_toolset": ".samples",
    "Toolset": ".schema.toolset",
    "CallLoop": ".loop.call_loop", "LoopResult": ".loop.call_loop", "parse_native": ".replies.provider_calls",
}

if TYPE_CHECKING:  # what the names are, for type checkers (never run)
    from typing import Any

    from .calls import ToolCall
    from .engine.verbs import normalize_call, validate_arguments, validate_call, validate_instance
    from .errors import (CallError, EvaluationError, LimitExceeded, LoaderError, PolicyError, RuleFileError,
                         ToolformRulesError, UnknownProfileError)
    from .schema.ir import Property, Schema, Tool
    from .limits import Limits, PolicyLimits
    from .schema.loaders import load_tools
    from .schema.python_tools import tool
    from .policy import Policy, load_policy
    from .replies.formats import UnknownProtocolError, get_protocol, protocol_ids
    from .replies.parse import ParsedCall, ParsedReply, parse_reply
    from .replies.stream import ReplyStream, StreamEvent, parse_stream
    from .engine.report import Finding, ValidationReport
    from .engine.rule_files import builtin_rules, load_rules
    from .engine.rules import RuleSet
    from .samples import sample_tool, sample_toolset
    from .schema.toolset import Toolset
    from .loop.call_loop import CallLoop, LoopResult
    from .replies.provider_calls import parse_native

__all__ = [
    "CallLoop", "LoopResult", "parse_native",
    "CallError", "EvaluationError", "Finding", "Policy", "PolicyError", "PolicyLimits", "load_policy", "ParsedCall", "ParsedReply", "UnknownProtocolError", "get_protocol", "parse_reply",
    "ReplyStream", "StreamEvent", "parse_stream",
    "protocol_ids", "LimitExceeded", "Limits", "LoaderError", "Property", "RuleFileError", "Schema",
    "Tool", "ToolCall", "ToolformRulesError", "Toolset", "UnknownProfileError", "ValidationReport",
    "RuleSet", "builtin_rules", "load_rules", "load_tools", "normalize_call", "sample_tool", "sample_toolset", "tool",
    "validate_arguments", "validate_call", "validate_instance",
]


def _lazy_attribute(namespace: dict[str, Any], exports: dict[str, str], name: str) -> Any:
    """``name`` of the package whose globals are ``namespace``, imported from its module (``exports[name]``,
    relative to the package) on first use and then kept there: a package's PEP 562 ``__getattr__``."""
    module = exports.get(name)
    package = namespace["__name__"]
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, package), name)
    namespace[name] = value
    return value


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept in the package's namespace)."""
    return _lazy_attribute(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
