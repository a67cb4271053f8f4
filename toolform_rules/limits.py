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
    #: how many compiled schemas ``validate_instance`` keeps (least recently used go first)
    max_cached_schemas: int = 512
    #: how much of a reply (its first characters) the other protocols read to name the syntax it
    #: was written in (``matched_syntax``), when the asked protocol finds no call and no lenient
    #: fallback was asked for: a bounded probe, so a long reply with no call costs one parse
    syntax_probe_chars: int = 16_384
    #: how many characters of one reply the Lark grammars may read in all (what the fast readers
    #: could not read); a candidate past it is not given to a grammar, and a note says so
    reply_grammar_chars: int = 16_384
    #: the longest TOML region of a reply that is read at all (its fast path, else the grammar within
    #: ``reply_grammar_chars``); a longer one gets a note
    reply_document_chars: int = 200_000
    #: how many candidate calls of one reply a code-like protocol reads (each costs a fast
    #: read, at worst a grammar run); past it, a note says the reading stopped
    reply_candidates: int = 64
    #: how many places of one reply that look like the start of a call (a name and "(") are checked
    reply_call_heads: int = 4096
    #: how many steps the bracket matcher may take in one reply (a run of brackets, or of quotes)
    reply_scan_steps: int = 32_768
    #: how many tokens (estimated) ``ast.parse`` may read in one reply
    reply_ast_tokens: int = 65_536
    #: how many marked segments of one reply are read (python_tag's ``<|python_tag|>``)
    reply_segments: int = 256
    #: how many characters of one reply the code family's last-resort reader may read in all
    #: (calls that are not valid Python: a string holding raw line breaks or its own quotes,
    #: read once the strict readers have failed); past it, a note says the reading stopped
    reply_recovery_chars: int = 65_536


DEFAULT_LIMITS = Limits()


@attrs.frozen(cache_hash=True)
class PolicyLimits:
    """How large a policy may be and how much one constraint may cost to evaluate.

    Expressions are written by reviewed authors but evaluated on model-written values:
    the size limits bound what a policy can ask, the budget bounds what one call can
    cost whatever its arguments hold.

    >>> PolicyLimits().evaluation_budget
    100000
    """

    #: the longest expression, in characters
    max_expression_chars: int = 4_000
    #: the deepest nesting of an expression's tree
    max_expression_depth: int = 48
    #: the most nodes one expression may have (its static cost)
    max_expression_nodes: int = 1_000
    #: the cost units one evaluation of a constraint may spend: one per node, the length of
    #: each list a quantifier walks times its body's size, one per 64 characters a string
    #: function reads, the length of each list ``in`` searches
    evaluation_budget: int = 100_000
    #: the largest policy file, in bytes
    max_file_bytes: int = 1_000_000
    #: how deep ``include:`` may nest
    max_include_depth: int = 8
    #: the most values a policy file's YAML may hold once its aliases are expanded (a "billion
    #: laughs" is refused at its line, sized without expanding it)
    max_yaml_values: int = 1_000_000
    #: the deepest nesting of a policy file's YAML
    max_yaml_depth: int = 100
    #: the most constraints a policy (with its includes) may hold
    max_constraints: int = 10_000
    #: the most cost units a sub-expression of literals and lists may take to compute while the
    #: policy loads (a costlier one is computed per call, under ``evaluation_budget``)
    fold_budget: int = 65_536
