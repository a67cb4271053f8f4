"""Benchmark: loading tools from Python modules and TypeScript files, against the reference.

    .venv/bin/python bench/tools.py              # a plain table
    .venv/bin/python bench/tools.py --markdown   # Markdown, as recorded in docs/performance.md

Each fixture of ``tests/data/tools/python`` and ``tests/data/tools/typescript`` that both
implementations read, loaded by ``load_tools`` (ours) and ``toolform.sdk.load_tools`` (the
reference): the best of ``--repeat`` runs.  A Python module is imported again on every load
(its code runs each time, for both).  Then TypeScript files of 10 KB, 100 KB and 1 MB (the
same tool written again and again, with a body, JSDoc and an interface), to show that
reading grows linearly with the file.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time
import warnings

warnings.simplefilter("ignore")

from toolform.sdk import load_tools as ref_load_tools  # noqa: E402  (the reference, a black box)

from toolform_rules import LoaderError, load_tools  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "tests" / "data" / "tools" / "python").glob("*.py")) + sorted(
    (ROOT / "tests" / "data" / "tools" / "typescript").glob("*.ts"))
CHUNK = ('/**\n * Tool {i}: does things.\n * @param a The a.\n */\n'
         'export function tool_{i}(a: string, b: Opts{i}, c: "x" | "y" = "x"): Promise<void> {{\n'
         '  const s = `${{a}} }} {{`; return fetch("/t/{i}", {{ body: JSON.stringify({{ a, b, c }}) }});\n}}\n'
         'interface Opts{i} {{ /** The n. */ n?: number; tags: string[]; mode: [number, number] }}\n')


def best(fn, repeat: int) -> float:
    """The best of ``repeat`` runs of ``fn``, in ms."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def fixture_rows(repeat: int) -> list[tuple[str, int, float, float | None]]:
    rows = []
    for path in FIXTURES:
        try:
            count = len(load_tools(path))
        except LoaderError:
            continue
        try:
            ref_load_tools(str(path))
            ref: float | None = best(lambda: ref_load_tools(str(path)), repeat)
        except Exception:  # noqa: BLE001  (the reference refuses some fixtures: see the divergence tests)
            ref = None
        rows.append((path.name, count, best(lambda: load_tools(path), repeat), ref))
    return rows


def size_rows(repeat: int) -> list[tuple[int, int, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (10_000, 100_000, 1_000_000):
            count = size // len(CHUNK.format(i=100)) + 1
            path = pathlib.Path(folder) / f"tools_{size}.ts"
            path.write_text("".join(CHUNK.format(i=i) for i in range(count)), encoding="utf-8")
            rows.append((path.stat().st_size, count, best(lambda: load_tools(path), repeat)))
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    fixtures, sizes = fixture_rows(args.repeat), size_rows(max(1, args.repeat // 2))
    if args.markdown:
        print("| file | tools | ours ms | reference ms | reference / ours |\n|---|---:|---:|---:|---:|")
        for name, count, ours, ref in fixtures:
            ratio = f"{ref / ours:.1f}×" if ref is not None else "refuses it"
            print(f"| {name} | {count} | {ours:.2f} | {f'{ref:.2f}' if ref is not None else '-'} | {ratio} |")
        print("\n| TypeScript file | tools | ours ms | ms per 100 KB |\n|---:|---:|---:|---:|")
        for size, count, ours in sizes:
            print(f"| {size:,} B | {count} | {ours:.0f} | {ours / size * 100_000:.0f} |")
    else:
        for name, count, ours, ref in fixtures:
            print(f"{name:24} {count:3} tools  ours {ours:8.2f} ms  reference "
                  f"{f'{ref:8.2f} ms' if ref is not None else 'refuses it'}")
        for size, count, ours in sizes:
            print(f"TypeScript {size:>9,} B  {count:5} tools  {ours:9.0f} ms  ({ours / size * 100_000:.0f} ms per 100 KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
