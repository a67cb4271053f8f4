"""The exceptions toolform_rules raises: one hierarchy, each with the location it concerns.

Every error names *where* the problem is — a file, a line, a field, a JSON path — in a
sentence a user can act on.  Model text never raises: malformed replies become notes.
"""

from __future__ import annotations

from typing import Any


class ToolformRulesError(Exception):
    """Base class of every error toolform_rules raises on purpose.

    >>> try:
    ...     raise LoaderError("parameters must be an object", source="tools.json", tool="f", path="$.parameters")
    ... except ToolformRulesError as err:
    ...     print(err)
    tools.json: tool 'f' at $.parameters: parameters must be an object
    """


class LocatedError(ToolformRulesError):
    """An error in an input document, with as much location as is known.

    ``source`` is a file path or a short description of the input ("<string>",
    "<object>"); ``line`` and ``column`` are 1-based; ``field`` names the key or
    JSON path concerned.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.field = field
        super().__init__(self._render())

    def _where(self) -> list[str]:
        where = []
        if self.source is not None:
            place = self.source
            if self.line is not None:
                place += f":{self.line}"
                if self.column is not None:
                    place += f":{self.column}"
            where.append(place)
        if self.field is not None:
            where.append(f"field {self.field!r}")
        return where

    def _render(self) -> str:
        where = self._where()
        return f"{', '.join(where)}: {self.message}" if where else self.message


class LoaderError(LocatedError):
    """A tool definition that cannot be loaded: names the tool and the JSON path of the bad field."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        tool: str | None = None,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.tool = tool
        self.path = path
        super().__init__(message, source=source, line=line, column=column, field=path)

    def _where(self) -> list[str]:
        head = self.source or ""
        if self.line is not None:
            head += f":{self.line}"
            if self.column is not None:
                head += f":{self.column}"
        parts = []
        if self.tool is not None:
            parts.append(f"tool {self.tool!r}")
        if self.path is not None:
            parts.append(f"at {self.path}")
        tail = " ".join(parts)
        if head and tail:
            return [f"{head}: {tail}"]
        return [x for x in (head, tail) if x]


class RuleFileError(LocatedError):
    """A rule or profile file (``rules/*.yaml``) that is malformed: names file, line and field."""


class UnknownProfileError(ToolformRulesError):
    """A validation profile name that no rule file declares."""


class BatchError(ToolformRulesError):
    """A batch (``grade``, ``replay``) that cannot start or go on: a flag, an input, a worker or a cluster."""


class CallError(ToolformRulesError):
    """A call given to the API that is not a call at all (neither a ToolCall nor a mapping with a name)."""


class LimitExceeded(ToolformRulesError):
    """An input larger or deeper than the limits allow."""

    def __init__(self, message: str, *, limit: str, value: Any) -> None:
        self.limit = limit
        self.value = value
        super().__init__(message)


class EvaluationError(ToolformRulesError):
    """A constraint expression that cannot be evaluated on one call.

    ``kind`` says why: ``missing`` (an argument or key is absent), ``type`` (a value of
    the wrong type), ``value`` (a value the function cannot read, e.g. an address with no
    ``@``) or ``budget`` (the evaluation would cost more than its budget).  The policy
    engine turns it into a finding (fail closed) unless the constraint says ``on_error: skip``.

    >>> str(EvaluationError("lower() wants a string, got a number", kind="type"))
    'lower() wants a string, got a number'
    """

    def __init__(self, message: str, *, kind: str = "value") -> None:
        self.kind = kind
        super().__init__(message)


class PolicyError(LocatedError):
    """A policy file that cannot be used: every problem found, each with its place.

    ``problems`` holds one :class:`LocatedError` per problem (file, line, column, what
    was expected); the message lists them all, each with the offending line and a caret.
    """

    def __init__(self, problems: list[LocatedError], *, excerpts: dict[str, list[str]] | None = None) -> None:
        self.problems = list(problems)
        self.excerpts = excerpts or {}
        first = self.problems[0] if self.problems else None
        super().__init__(self._summary(), source=first.source if first else None,
                         line=first.line if first else None, column=first.column if first else None,
                         field=first.field if first else None)

    def _summary(self) -> str:
        lines = [f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} in the policy:"]
        for problem in self.problems:
            lines.append(str(problem))
            text = self.excerpts.get(problem.source or "")
            if text and problem.line is not None and 0 < problem.line <= len(text):
                source_line = text[problem.line - 1].rstrip("\n")
                lines.append(f"    {source_line}")
                if problem.column is not None:
                    lines.append("    " + " " * (problem.column - 1) + "^")
        return "\n".join(lines)

    def _render(self) -> str:
        return self.message
