"""The build hook: compile the built-in rule set (``rules/*.yaml``) into ``rules/compiled.json`` as the
package is built, so that the wheel ships it beside the YAML and an editable install finds it in the
checkout (``toolform_rules/engine/rule_cache.py`` says why and how it is checked).

It runs the engine's own reader (``compile_builtin_rules``), from this source tree: what ships is what
reading the YAML gives, and a malformed rule file fails the build with its file, line and field.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompiledRules(BuildHookInterface):
    """Compiles the built-in rules before the wheel (or the editable wheel) is built."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        sys.path.insert(0, str(root))
        try:
            from toolform_rules.engine.rule_files import compile_builtin_rules

            compile_builtin_rules(root / "rules")
        finally:
            sys.path.remove(str(root))
        # Nothing to add to the build: the wheel's force-include of rules/ takes the new file with the YAML
        # (ignored by git or not), and an editable install reads the checkout's rules/, where it now is.
