"""The package's version (also ``toolform_rules.__version__``), in a module that imports nothing.

Part of the key of every cached rule set (:mod:`toolform_rules.engine.rule_cache`), which
reads it from here rather than from the package, whose names import the engine.
"""

__version__ = "0.1.0"
