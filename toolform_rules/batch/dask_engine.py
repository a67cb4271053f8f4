"""The Dask engine: the same jobs on a Dask cluster, over JSON Lines from local paths or any fsspec URL.

The input is cut into blocks of whole lines (``dask.bytes.read_bytes``); a first pass counts
each block's lines, so every record keeps its line number in the file, and a second grades the
blocks with the jobs of :mod:`.jobs` — line for line what the local engine does.  Results go
to one file, written in input order by this process as the blocks finish (a few blocks per
worker ahead), or, when the output names a pattern with ``*``, to one file per block, written
by the workers.  Dask (``dask[bag]``, ``distributed``) is the optional extra ``[dask]``.

For your own Dask pipelines, :func:`grade_bag` and :func:`replay_bag` map a bag of records
(dicts, or JSON text) to a bag of results.
"""

from __future__ import annotations

import collections
import importlib
import itertools
import json
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable

from ..limits import DEFAULT_LIMITS, Limits
from .jobs import ChunkResult, GradeJob, ReplayJob, Sources, Tally, resolve_source, loaded, tools_source
from .lines import Line, count_lines, split_block
from ..errors import BatchError

if TYPE_CHECKING:
    import dask.bag


def _need_dask() -> None:
    try:
        importlib.import_module("dask.bag")
        importlib.import_module("distributed")
    except ImportError as err:
        raise BatchError(f"the Dask engine needs dask[bag] and distributed ({err.name} is not installed): "
                         "pip install 'toolform-rules[dask]'") from None


def _run_block(job: Any, block: bytes, first: int, max_line_bytes: int) -> ChunkResult:
    return job.run(split_block(block, first_number=first, max_line_bytes=max_line_bytes)).packed()


def _write_block(result: ChunkResult, path: str) -> ChunkResult:
    import fsspec

    with fsspec.open(path, "w", encoding="utf-8", compression="infer") as handle:
        result.write_to(handle)
    return ChunkResult([], result.tally, result.report, result.errors, result.records)


def client_for(scheduler: str | None, workers: int, *, timeout: float = 10.0) -> Any:
    """A client of the cluster at ``scheduler`` (waiting ``timeout`` seconds for it), or of a new
    LocalCluster of ``workers`` processes."""
    _need_dask()
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as err:
            raise BatchError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    return Client(cluster)


def _blocks(url: str, blocksize: int | None, workers: int) -> list[Any]:
    from dask.bytes import read_bytes
    import fsspec

    compressed = fsspec.utils.infer_compression(url) is not None
    if blocksize is None and not compressed:
        size = fsspec.core.url_to_fs(url)[0].size(url)
        # enough blocks for every worker to have a few, none so small that the tasks cost more than the work
        blocksize = max(256 << 10, min(64 << 20, (size or 1) // (workers * 4) + 1))
    try:
        _, per_file = read_bytes(url, delimiter=b"\n", blocksize=None if compressed else blocksize,
                                 compression="infer", sample=False)
    except (OSError, ValueError) as err:
        raise BatchError(f"{url}: {err}") from None
    if len(per_file) != 1:
        raise BatchError(f"{url}: names {len(per_file)} files; grade one file at a time")
    return list(per_file[0])


def run_dask(job: Any, url: str, out: IO[str] | str, *, client: Any, workers: int, max_line_bytes: int,
             blocksize: int | None = None, in_flight: int = 3,
             on_chunk: Callable[[ChunkResult], None] | None = None) -> Tally:
    """Run ``job`` over the lines of ``url`` on ``client``'s cluster; results to ``out``.

    ``out``: an open text stream (one file, in input order) or a path pattern with ``*`` (one
    file per block, ``*`` replaced by the block's number, written by the workers).
    """
    from dask import delayed

    blocks = _blocks(url, blocksize, workers)
    counts = client.gather(client.compute([delayed(count_lines)(block) for block in blocks]))
    firsts = list(itertools.accumulate(counts[:-1], initial=1)) if counts else []
    tasks = [delayed(_run_block)(job, block, first, max_line_bytes) for block, first in zip(blocks, firsts)]
    if isinstance(out, str):
        width = len(str(max(len(tasks) - 1, 0)))
        tasks = [delayed(_write_block)(task, out.replace("*", str(index).zfill(width)))
                 for index, task in enumerate(tasks)]
    tally = Tally()

    def emit(result: ChunkResult) -> None:
        if not isinstance(out, str):
            result.write_to(out)
        tally.merge(result.tally)
        if on_chunk is not None:
            on_chunk(result)

    pending: collections.deque[Any] = collections.deque()
    for task in tasks:  # a few blocks per worker ahead, written in order as they finish
        pending.append(client.compute(task))
        if len(pending) >= workers * in_flight:
            emit(pending.popleft().result())
    while pending:
        emit(pending.popleft().result())
    return tally


# --- for users' own pipelines ------------------------------------------------------------------

def _items(items: Iterable[Any], job: Any) -> list[dict[str, Any]]:
    """A partition of records (dicts, or their JSON text) through ``job``: numbered within the partition,
    results without those numbers (they would not be the records' places in the bag)."""
    lines = [Line(index, b"", record=item) if isinstance(item, dict) else
             Line(index, item if isinstance(item, bytes) else
                  (item if isinstance(item, str) else json.dumps(item, default=str)).encode("utf-8"))
             for index, item in enumerate(items, 1)]
    results = list(job.results(lines, loaded(job), Tally()))
    for result in results:
        result.pop("line", None)
    return results


def _job_sources(tools: Any, kind: str, rules: Iterable[Any], profile: str, limits: Limits) -> Sources:
    return Sources(tools_source(tools), kind, tuple(str(resolve_source(r)) for r in rules), profile, limits)


def grade_bag(bag: dask.bag.Bag, tools: Any = None, *, protocol: str | None = None, rule: str = "main",
              policy: Any = None, profile: str = "sdk", rules: Iterable[Any] = (), kind: str = "auto",
              limits: Limits = DEFAULT_LIMITS) -> dask.bag.Bag:
    """A bag of grading results, one per record of ``bag`` (dicts, or their JSON text), in order.

    Each result is what ``toolform-rules grade`` writes for the record, without ``line``;
    a record that cannot be graded gives ``{"id", "ok": false, "error"}``.  ``tools``,
    ``policy`` and ``rules`` are loaded by each worker: paths (every worker must be able to
    read them), text, JSON values, or a :class:`~toolform_rules.Toolset` (sent as its export).
    """
    _need_dask()
    job = GradeJob(_job_sources(tools, kind, rules, profile, limits), protocol, rule, resolve_source(policy))
    return bag.map_partitions(_items, job=job)


def replay_bag(bag: dask.bag.Bag, tools: Any, policy: Any, *, against: Any = None, profile: str = "sdk",
               rules: Iterable[Any] = (), kind: str = "auto", limits: Limits = DEFAULT_LIMITS) -> dask.bag.Bag:
    """A bag of replay results (one per call; see :class:`~toolform_rules.batch.jobs.ReplayJob`)."""
    _need_dask()
    job = ReplayJob(_job_sources(tools, kind, rules, profile, limits), str(resolve_source(policy)),
                    None if against is None else str(resolve_source(against)))
    return bag.map_partitions(_items, job=job)
