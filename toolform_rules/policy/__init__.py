"""Custom constraints: YAML policies whose expressions check what a schema cannot.

>>> from toolform_rules import load_policy, sample_toolset, validate_arguments
>>> policy = load_policy("policy: demo\\nconstraints:\\n  - id: demo.cap\\n    check: args.value <= 100\\n")
>>> report = validate_arguments({"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 500,
...                              "term_months": 12}}, sample_toolset(), policy=policy)
>>> report.ok, report.findings[0].rule
(False, 'demo.cap')
"""

from .loading import load_policy
from .policy import Constraint, Policy

__all__ = ["Constraint", "Policy", "load_policy"]
