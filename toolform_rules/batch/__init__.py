"""Batch grading and policy replay at scale: many replies or calls at once, on this machine's cores
(:func:`run_local`) or on a Dask cluster (:func:`grade_bag`, :func:`replay_bag`, :func:`run_dask`).

The command line is ``toolform-rules grade`` and ``toolform-rules replay``
(:mod:`toolform_rules.batch.commands`).  Names are imported when first used: importing the
package loads neither the engine nor Dask.

>>> from toolform_rules.batch import GradeJob, Sources, Line
>>> job = GradeJob(Sources('[{"name": "f", "parameters": {"type": "object", "properties": '
...                        '{"n": {"type": "integer"}}}}]'), protocol="json_object")
>>> job.run([Line(1, b'{"id": "a", "reply": "{\\"name\\": \\"f\\", \\"arguments\\": {\\"n\\": 1}}"}'),
...          Line(2, b'not json')]).lines[1]
'{"id":null,"line":2,"ok":false,"error":"not valid JSON: Expecting value (column 1)"}'
"""

from __future__ import annotations

from typing import Any

from .. import _lazy_attribute

_EXPORTS = {
    "GradeJob": ".jobs", "ReplayJob": ".jobs", "Sources": ".jobs", "Tally": ".jobs", "ChunkResult": ".jobs",
    "Line": ".lines", "read_lines": ".lines",
    "match_calls": ".expected", "read_expected": ".expected",
    "run_local": ".local",
    "grade_bag": ".dask_engine", "replay_bag": ".dask_engine", "run_dask": ".dask_engine", "client_for": ".dask_engine",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return _lazy_attribute(globals(), _EXPORTS, name)
