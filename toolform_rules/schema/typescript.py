"""Tools from TypeScript declarations, read with ``grammars/typescript.lark``: nothing is executed.

(Being written: see ``read_typescript`` below for the interface ``load_tools`` uses.)
"""

from __future__ import annotations

from typing import Any

from ..limits import DEFAULT_LIMITS, Limits


def read_typescript(text: str, *, source: str = "<string>",
                    limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, dict[str, Any]]]:
    """The tools ``text`` declares, as ``(where, tool definition)`` pairs: the definition in the bare OpenAI
    shape ``{"name", "description", "parameters"}`` (JSON Schema 2020-12), ``where`` naming its line."""
    raise NotImplementedError
