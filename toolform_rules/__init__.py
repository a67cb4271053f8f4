"""toolform_rules: decide, declaratively and auditably, whether a language model's tool call fits its tool.

>>> from toolform_rules import sample_toolset, validate_arguments
>>> validate_arguments({"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", "value": 10,
...                     "term_months": 12}}, sample_toolset()).ok
True
"""

from .calls import ToolCall
from .engine.verbs import normalize_call, validate_arguments, validate_call, validate_instance
from .errors import (CallError, EvaluationError, LimitExceeded, LoaderError, PolicyError, RuleFileError,
                     ToolformRulesError, UnknownProfileError)
from .schema.ir import Property, Schema, Tool
from .limits import Limits, PolicyLimits
from .schema.loaders import load_tools
from .policy import Policy, load_policy
from .protocols import UnknownProtocolError, get_protocol, protocol_ids
from .replies import ParsedCall, ParsedReply, parse_reply
from .engine.report import Finding, ValidationReport
from .engine.rule_files import builtin_rules
from .samples import sample_tool, sample_toolset
from .schema.toolset import Toolset

__all__ = [
    "CallError", "EvaluationError", "Finding", "Policy", "PolicyError", "PolicyLimits", "load_policy", "ParsedCall", "ParsedReply", "UnknownProtocolError", "get_protocol", "parse_reply",
    "protocol_ids", "LimitExceeded", "Limits", "LoaderError", "Property", "RuleFileError", "Schema",
    "Tool", "ToolCall", "ToolformRulesError", "Toolset", "UnknownProfileError", "ValidationReport",
    "builtin_rules", "load_tools", "normalize_call", "sample_tool", "sample_toolset", "validate_arguments",
    "validate_call", "validate_instance",
]
__version__ = "0.1.0"
