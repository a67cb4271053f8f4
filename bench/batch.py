"""Benchmark: batch grading throughput, local processes against a Dask LocalCluster, and memory per worker.

    .venv/bin/python bench/batch.py                  # a plain table
    .venv/bin/python bench/batch.py --markdown       # Markdown, as recorded in docs/performance.md

A file of ``--records`` mixed replies (six protocols: json_object, python_call, xml_call,
yaml_call, react, hermes; right, wrong, garbled and no-call replies, a quarter with expected
calls; tests/support/batch_data.py makes them) is graded by ``toolform-rules grade`` run as a
user runs it (a new process each time): ``--workers 1`` (in the process), ``--workers 2``
(two worker processes), and ``--engine dask`` on a LocalCluster of two workers, both started
by the command (its start-up included) and already running (``--scheduler``).  Each is the
best of ``--repeat`` runs.  The memory column is the peak resident size of each process of
the run (the command, and each worker), sampled every 20 ms.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import psutil

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.batch_data import write_replies, write_tools  # noqa: E402

COMMAND = [sys.executable, "-m", "toolform_rules", "grade"]


def _peak_rss(process: psutil.Popen, peaks: dict[int, int], stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            tree = [process, *process.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for member in tree:
            try:
                peaks[member.pid] = max(peaks.get(member.pid, 0), member.memory_info().rss)
            except psutil.NoSuchProcess:
                pass
        stop.wait(0.02)


def timed(argv: list[str]) -> tuple[float, dict[int, int]]:
    """Wall time of one run of the command, and the peak RSS of each process it started."""
    peaks: dict[int, int] = {}
    stop = threading.Event()
    started = time.perf_counter()
    process = psutil.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    watcher = threading.Thread(target=_peak_rss, args=(process, peaks, stop))
    watcher.start()
    process.wait()
    elapsed = time.perf_counter() - started
    stop.set()
    watcher.join()
    return elapsed, peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()

    folder = pathlib.Path(tempfile.mkdtemp(prefix="bench-batch-"))
    source = folder / "replies.jsonl"
    write_replies(source, options.records, bad=False)
    tools = write_tools(folder)
    base = [*COMMAND, str(source), "--tools", str(tools), "--protocol", "json_object", "--quiet",
            "--out", str(folder / "out.jsonl")]

    from distributed import LocalCluster

    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        runs = {
            "local, 1 worker (in the process)": [*base, "--workers", "1"],
            "local, 2 worker processes": [*base, "--workers", "2"],
            "dask, LocalCluster of 2 (started by the command)": [*base, "--engine", "dask", "--workers", "2"],
            "dask, LocalCluster of 2 (running)": [*base, "--engine", "dask", "--workers", "2",
                                                  "--scheduler", cluster.scheduler_address],
        }
        for name, argv in runs.items():
            best, peaks = min((timed(argv) for _ in range(options.repeat)), key=lambda run: run[0])
            if "running" in name:  # the cluster's workers are not the command's children
                for worker in cluster.workers.values():
                    pid = worker.process.process.pid
                    peaks[pid] = psutil.Process(pid).memory_info().rss
            rows.append((name, best, peaks))

    one = rows[0][1]
    local_two = rows[1][1]
    header = ("run", "seconds", "replies/s", "per worker", "vs 1 worker", "peak RSS (MB) per process")
    table = []
    for name, seconds, peaks in rows:
        workers = 1 if "1 worker" in name else 2
        rate = options.records / seconds
        memory = ", ".join(f"{rss / 1e6:.0f}" for _, rss in sorted(peaks.items()))
        table.append((name, f"{seconds:.2f}", f"{rate:,.0f}", f"{rate / workers:,.0f}", f"{one / seconds:.2f}x",
                      memory))
    if options.markdown:
        print(f"{options.records:,} replies ({source.stat().st_size / 1e6:.1f} MB), best of {options.repeat}:\n")
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
        for row in [header, *table]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    print(f"\n2 workers / 1: {one / local_two:.2f}x; dask (running cluster) / local 2 workers: "
          f"{rows[3][1] / local_two:.2f}x the time; dask (started) / local 2: {rows[2][1] / local_two:.2f}x")


if __name__ == "__main__":
    main()
