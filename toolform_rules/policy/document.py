"""The policy file format: what a policy file and a ``*_test.yaml`` file may hold.

Each class is one mapping of the file; the one cattrs converter structures YAML into them
(unknown keys refused, every refusal with its file, line and field).
``docs/policy.schema.json`` says the same for editors; a test keeps the two in step.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..field_checks import FieldValueError, one_of
from ..errors import LocatedError
from ..engine.rules import BUCKETS

SEVERITIES = ("error", "warning")
ON_ERROR = ("fail", "skip")


def _version(_: Any, attribute: Any, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldValueError(attribute.name, f"version must be an integer or a string, not {value!r}")


def _some_tools(_: Any, attribute: Any, value: tuple[str, ...] | None) -> None:
    if value is not None and not value:
        raise FieldValueError(attribute.name, "tools must name at least one tool (leave it out for every tool)")


def _identifier(_: Any, attribute: Any, value: str) -> None:
    if not value.strip() or any(c.isspace() for c in value):
        raise FieldValueError(attribute.name, f"{attribute.name} must be a non-empty word without spaces, "
                                              f"not {value!r}")


@attrs.frozen
class ConstraintSpec:
    """One constraint as written: ``check`` must hold for calls of ``tools`` (all tools when absent) when ``when`` holds."""

    id: str = attrs.field(validator=_identifier)
    check: str
    tools: tuple[str, ...] | None = attrs.field(default=None, validator=_some_tools)
    when: str | None = None
    message: str | None = None
    severity: str = attrs.field(default="error", validator=one_of(SEVERITIES))
    bucket: str = attrs.field(default="constraint_errors", validator=one_of(BUCKETS))
    on_error: str = attrs.field(default="fail", validator=one_of(ON_ERROR))
    description: str = ""


@attrs.frozen
class TestCallSpec:
    """The call a policy test makes."""

    __test__ = False  # not a pytest test class, whatever its name

    name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ExpectSpec:
    """What a policy test expects: the verdict, exactly which constraints fire, which must not."""

    ok: bool | None = None
    fired: tuple[str, ...] | None = None
    not_fired: tuple[str, ...] = ()


@attrs.frozen
class PolicyTestSpec:
    """One test: a call and what the policy must say of it."""

    __test__ = False  # not a pytest test class, whatever its name

    call: TestCallSpec
    expect: ExpectSpec
    name: str = ""


@attrs.frozen
class PolicyDocument:
    """A policy file as written."""

    policy: str = attrs.field(validator=_identifier)
    version: Any = attrs.field(default=1, validator=_version)
    description: str = ""
    include: tuple[str, ...] = ()
    toolset: str | None = None
    lists: dict[str, tuple[Any, ...]] = attrs.field(factory=dict)
    mask: tuple[str, ...] = ()
    constraints: tuple[ConstraintSpec, ...] = ()
    tests: tuple[PolicyTestSpec, ...] = ()


@attrs.frozen
class TestDocument:
    """A ``*_test.yaml`` file: tests of the policy beside it (or the one ``policy`` names)."""

    __test__ = False  # not a pytest test class, whatever its name

    tests: tuple[PolicyTestSpec, ...]
    policy: str | None = None
    toolset: str | None = None


class PolicyFieldError(LocatedError):
    """One problem of a policy file's structure (a key, a value of the wrong kind)."""
