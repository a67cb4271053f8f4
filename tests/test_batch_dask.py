"""The Dask engine on a real LocalCluster (two worker processes): the same results as the local engine, byte
for byte, over a file cut into many blocks; one file per block; fsspec URLs; ``grade_bag`` for users' own
pipelines; an unreachable scheduler is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.batch_data import BAD_LINES, write_replies, write_tools
from toolform_rules.cli import main

pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")
RECORDS = 20_000


@pytest.fixture(scope="module")
def cluster() -> Any:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


@pytest.fixture(scope="module")
def graded_locally(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("dask")
    write_replies(folder / "replies.jsonl", RECORDS)
    tools = write_tools(folder)
    code = main(["grade", str(folder / "replies.jsonl"), "--tools", str(tools), "-p", "json_object",
                 "--out", str(folder / "local.jsonl"), "--workers", "2", "--quiet"])
    assert code == 2  # the malformed lines
    return {"folder": folder, "tools": tools, "input": folder / "replies.jsonl", "local": folder / "local.jsonl"}


def test_dask_gives_the_local_engines_results_byte_for_byte(cluster, graded_locally, capsys) -> None:
    files = graded_locally
    code = main(["grade", str(files["input"]), "--tools", str(files["tools"]), "-p", "json_object",
                 "--out", str(files["folder"] / "dask.jsonl"), "--engine", "dask", "--scheduler",
                 cluster.scheduler_address, "--workers", "2", "--summary", str(files["folder"] / "s.json")])
    out, err = capsys.readouterr()
    assert code == 2
    assert (files["folder"] / "dask.jsonl").read_bytes() == files["local"].read_bytes()
    summary = json.loads((files["folder"] / "s.json").read_text())
    assert (summary["engine"], summary["records"], summary["errors"]) == ("dask", RECORDS + len(BAD_LINES),
                                                                          len(BAD_LINES))
    assert "line 3: not valid JSON" in err


def test_one_file_per_block_and_fsspec_urls(cluster, tmp_path, capsys) -> None:
    write_replies(tmp_path / "r.jsonl", 1500)
    tools = write_tools(tmp_path)
    main(["grade", str(tmp_path / "r.jsonl"), "--tools", str(tools), "-p", "json_object",
          "--out", str(tmp_path / "local.jsonl"), "--workers", "1"])
    (tmp_path / "parts").mkdir()
    main(["grade", f"file://{tmp_path / 'r.jsonl'}", "--tools", str(tools), "-p", "json_object",
          "--out", f"{tmp_path / 'parts'}/part-*.jsonl", "--engine", "dask", "--scheduler", cluster.scheduler_address,
          "--workers", "2", "--blocksize", "20000"])
    capsys.readouterr()
    written = sorted((tmp_path / "parts").iterdir())
    assert len(written) >= 10  # the file was cut into blocks, each written by a worker
    assert b"".join(p.read_bytes() for p in written) == (tmp_path / "local.jsonl").read_bytes()


def test_grade_bag_in_a_users_pipeline(cluster, graded_locally) -> None:
    import dask.bag

    from toolform_rules.batch import grade_bag

    files = graded_locally
    lines = files["input"].read_text(encoding="utf-8").splitlines()[:600]
    records = [json.loads(line) for line in lines if line.strip() and line.startswith('{"id": "r')]
    with distributed.Client(cluster) as client:
        bag = dask.bag.from_sequence(records, npartitions=4)
        results = grade_bag(bag, str(files["tools"]), protocol="json_object").compute()
    local = [json.loads(line) for line in files["local"].read_text(encoding="utf-8").splitlines()]
    by_id = {r["id"]: r for r in local if r.get("id")}
    assert len(results) == len(records) > 500
    for result in results:
        want = dict(by_id[result["id"]])
        del want["line"]
        assert result == want
    assert client.status == "closed"


def test_without_a_scheduler_a_local_cluster_of_workers_is_started(tmp_path, capsys) -> None:
    write_replies(tmp_path / "r.jsonl", 200, bad=False)
    tools = write_tools(tmp_path)
    code = main(["grade", str(tmp_path / "r.jsonl"), "--tools", str(tools), "-p", "json_object",
                 "--out", str(tmp_path / "d.jsonl"), "--engine", "dask", "--workers", "2"])
    main(["grade", str(tmp_path / "r.jsonl"), "--tools", str(tools), "-p", "json_object",
          "--out", str(tmp_path / "l.jsonl"), "--workers", "1"])
    capsys.readouterr()
    assert code == 0 and (tmp_path / "d.jsonl").read_bytes() == (tmp_path / "l.jsonl").read_bytes()


def test_an_unreachable_scheduler_is_a_one_line_error(tmp_path, capsys) -> None:
    write_replies(tmp_path / "r.jsonl", 3, bad=False)
    code = main(["grade", str(tmp_path / "r.jsonl"), "--tools", str(write_tools(tmp_path)), "-p", "json_object",
                 "--out", str(tmp_path / "d.jsonl"), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9",
                 "--connect-timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err and err.count("\n") == 1


def test_replay_on_dask_gives_the_local_engines_results(cluster, tmp_path, capsys) -> None:
    from test_batch_replay import NEW, OLD, calls

    (tmp_path / "old.yaml").write_text(OLD)
    (tmp_path / "new.yaml").write_text(NEW)
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls(400)) + "{bad\n")
    tools = write_tools(tmp_path)
    runs = {}
    for engine in ("local", "dask"):
        code = main(["replay", str(tmp_path / "calls.jsonl"), "--tools", str(tools), "--policy",
                     str(tmp_path / "new.yaml"), "--against", str(tmp_path / "old.yaml"), "--out",
                     str(tmp_path / f"{engine}.jsonl"), "--engine", engine, "--workers", "2", "--blocksize", "10000",
                     *(["--scheduler", cluster.scheduler_address] if engine == "dask" else [])])
        out = capsys.readouterr().out.replace(str(tmp_path / f"{engine}.jsonl"), "OUT")  # ("written to OUT")
        runs[engine] = (code, out, (tmp_path / f"{engine}.jsonl").read_bytes())
    assert runs["dask"] == runs["local"] and runs["local"][0] == 2
    assert runs["local"][1].count("refused now") > 20
