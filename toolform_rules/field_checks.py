"""attrs validators that refuse a value by naming its field (no cattrs needed to use them).

:mod:`.convert` turns a :class:`FieldValueError` into a located error; the rule and policy
classes use these validators without loading the converter, which keeps start-up cheap.
"""

from __future__ import annotations

from typing import Any


class FieldValueError(ValueError):
    """A validator's refusal that names its field.

    attrs validators run in ``__init__``, after cattrs has structured each field, so cattrs
    cannot say which field failed; this error carries the name so the location can.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def one_of(allowed: tuple[str, ...]) -> Any:
    """An attrs validator: the field's value is one of ``allowed`` (the refusal names the field).

    >>> import attrs
    >>> @attrs.frozen
    ... class Phase:
    ...     name: str = attrs.field(validator=one_of(("normalise", "validate")))
    >>> Phase("validate").name
    'validate'
    >>> Phase("compile")
    Traceback (most recent call last):
        ...
    toolform_rules.field_checks.FieldValueError: name must be one of normalise, validate, not 'compile'
    """
    def check(_: Any, attribute: Any, value: str) -> None:
        if value not in allowed:
            raise FieldValueError(attribute.name, f"{attribute.name} must be one of {', '.join(allowed)}, "
                                                  f"not {value!r}")

    return check
