"""A set of tools, found by name under any naming convention."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..errors import LoaderError
from .ir import Tool
from .names import canonical_name


class Toolset:
    """An ordered set of tools; ``get`` resolves ``LegalDraftV3`` and ``legal-draft-v3`` alike.

    Two tools whose names share a canonical form are refused: a model's spelling could not
    tell them apart.

    >>> from toolform_rules import sample_tool
    >>> tools = Toolset([sample_tool()])
    >>> tools.get("legal-draft-v3").name, tools.get("nope")
    ('legal_draft_v3', None)
    >>> tools.by_exact_name("legal_draft_v3").name, tools.by_exact_name("legal-draft-v3")
    ('legal_draft_v3', None)
    """

    __slots__ = ("_tools", "_exact", "_canonical", "warnings", "source", "executors", "by_exact_name")

    def __init__(self, tools: Iterable[Tool], *, warnings: tuple[str, ...] = (), source: str = "<object>",
                 executors: Mapping[str, Callable[..., Any]] | None = None) -> None:
        kept: list[Tool] = []
        self._exact: dict[str, Tool] = {}
        self._canonical: dict[str, Tool] = {}
        for tool in tools:
            key = canonical_name(tool.name)
            clash = self._canonical.get(key)
            if clash is not None:
                # the same definition again (BFCL files repeat them): one tool.  ``definitions``
                # is left out of Tool equality, but two tools whose $refs lead to different
                # schemas are different tools.
                if clash == tool and dict(clash.definitions) == dict(tool.definitions):
                    continue
                if clash.name == tool.name:
                    raise LoaderError(f"two different tools are named {tool.name!r} (at {_where(clash)} and "
                                      f"{_where(tool)})", source=source, tool=tool.name)
                raise LoaderError(
                    f"tools {clash.name!r} and {tool.name!r} share the canonical name {key!r}; "
                    "a model's spelling could not tell them apart", source=source, tool=tool.name)
            kept.append(tool)
            self._exact[tool.name] = tool
            self._canonical[key] = tool
        self._tools: tuple[Tool, ...] = tuple(kept)
        #: the tool named exactly ``name``, or ``None``: one dict lookup, no call of Python (the hot path of
        #: validate_arguments; :meth:`get` also resolves other spellings)
        self.by_exact_name: Callable[[str], Tool | None] = self._exact.get
        self.warnings = warnings
        self.source = source
        #: the function behind each tool read from Python, by the tool's name (empty for JSON and TypeScript)
        self.executors: Mapping[str, Callable[..., Any]] = MappingProxyType(dict(executors or {}))

    def get(self, name: object) -> Tool | None:
        """The tool called ``name`` (exact spelling first, then its canonical form), or ``None``."""
        tool = self._exact.get(name) if type(name) is str else None
        if tool is None:
            if not isinstance(name, str):
                return None
            key = canonical_name(name)
            tool = self._canonical.get(key) if key else None
        return tool

    def names(self) -> list[str]:
        """The tools' names, in order."""
        return [t.name for t in self._tools]

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools, in order."""
        return self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None

    def to_openai(self) -> list[dict[str, Any]]:
        """The tools as OpenAI Chat Completions takes them (``{"type": "function", "function": {...}}``),
        parameters in JSON Schema 2020-12; ``load_tools`` of the result gives these tools back.

        >>> from toolform_rules import sample_toolset
        >>> sample_toolset().to_openai()[0]["function"]["parameters"]["required"]
        ['counterparty', 'value', 'term_months']
        """
        from .export import tools_to_json

        return tools_to_json(self._tools, "openai")

    def to_anthropic(self) -> list[dict[str, Any]]:
        """The tools as Anthropic's Messages API takes them (``name``, ``description``, ``input_schema``)."""
        from .export import tools_to_json

        return tools_to_json(self._tools, "anthropic")

    def to_mcp(self) -> list[dict[str, Any]]:
        """The tools as an MCP server lists them (``name``, ``description``, ``inputSchema``)."""
        from .export import tools_to_json

        return tools_to_json(self._tools, "mcp")

    def __repr__(self) -> str:
        return f"Toolset({self.names()!r})"


def _where(tool: Tool) -> str:
    """The JSON path part of a tool's source ("tools.json $[3]" → "$[3]")."""
    return tool.source.rsplit(" ", 1)[-1]
