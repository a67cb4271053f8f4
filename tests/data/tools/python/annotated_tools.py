"""Tools constrained with Annotated: descriptions and annotated_types constraints."""

from typing import Annotated

import annotated_types as at


def set_volume(level: Annotated[int, at.Ge(0), at.Le(11), "The loudness."],
               step: Annotated[float, at.Gt(0), at.Lt(5), at.MultipleOf(0.5)] = 1.0) -> None:
    """Set the speaker volume.

    Args:
        level: Ignored: the Annotated description wins.
        step: How much one press changes it.
    """


def rename(name: Annotated[str, at.MinLen(1), at.MaxLen(20)],
           aliases: Annotated[list[str], at.Len(0, 3)] = [],
           ratio: Annotated[float, at.Interval(ge=0, le=1)] = 0.5) -> str:
    """Rename a thing."""
    return name
