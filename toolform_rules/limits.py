"""Explicit limits on size, depth and time, passed as parameters (never module globals)."""

from __future__ import annotations

import attrs


@attrs.frozen(cache_hash=True)
class Limits:
    """How much input toolform_rules accepts, and how long a pattern may take to match.

    Every public entry point takes ``limits=`` with these defaults; raise them for trusted
    inputs, lower them for hostile ones.

    >>> Limits().pattern_timeout
    0.05
    >>> Limits(max_depth=8).max_depth
    8
    """

    #: the deepest nesting of a tool schema, or of an argument value, that is walked
    max_depth: int = 64
    #: the largest tool file or JSON text that is read, in bytes
    max_input_bytes: int = 64 * 1024 * 1024
    #: the most tools one toolset may hold
    max_tools: int = 100_000
    #: seconds one ``pattern`` match may take before it is reported as too costly
    pattern_timeout: float = 0.05
    #: the longest string a ``pattern`` is matched against; longer ones are reported, not matched
    max_pattern_subject: int = 1_000_000


DEFAULT_LIMITS = Limits()
