"""``toolform-rules replay``: exactly the calls whose verdict two policies disagree on, with the rules that differ;
recorded verdicts and the call loop's results as the old side; bad lines as error records."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from toolform_rules import CallLoop, load_policy, load_tools, sample_toolset, validate_arguments
from toolform_rules.loop.clients import StubClient
from toolform_rules.cli import main

OLD = """policy: deals
version: 1
constraints:
  - id: deals.cap
    tools: [legal_draft_v3]
    check: args.value <= 1000
    message: "value {args.value} is over 1000"
  - id: deals.term
    tools: [legal_draft_v3]
    check: args.term_months <= 24
    message: "{args.term_months} months is over 24"
"""
NEW = """policy: deals
version: 2
constraints:
  - id: deals.cap
    tools: [legal_draft_v3]
    check: args.value <= 500
    message: "value {args.value} is over 500"
  - id: deals.term
    tools: [legal_draft_v3]
    check: args.term_months <= 36
    message: "{args.term_months} months is over 36"
  - id: deals.party
    tools: [legal_draft_v3]
    check: args.counterparty != 'Evil Corp'
    message: "no deals with {args.counterparty}"
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def calls(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"id": f"c{i}", "name": "legal_draft_v3", "arguments": {
        "counterparty": rng.choice(["Acme", "Evil Corp", "Globex"]), "value": rng.choice([10, 400, 700, 1500, -1]),
        "term_months": rng.choice([6, 30, 40])}} for i in range(count)]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "old.yaml").write_text(OLD)
    (tmp_path / "new.yaml").write_text(NEW)
    (tmp_path / "tools.json").write_text(json.dumps(sample_toolset().to_openai()))
    return {"old": tmp_path / "old.yaml", "new": tmp_path / "new.yaml", "tools": tmp_path / "tools.json",
            "folder": tmp_path}


def _verdict(call: dict[str, Any], policy: Any) -> tuple[str, set[str]]:
    report = validate_arguments(call, sample_toolset(), policy=policy)
    return ("allow" if report.ok else "deny"), {f.rule for f in report.findings}


def test_replay_lists_exactly_the_calls_two_policies_disagree_on(files, capsys) -> None:
    made = calls(600)
    (files["folder"] / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in made))
    code, out, err = run(capsys, "replay", str(files["folder"] / "calls.jsonl"), "--tools", str(files["tools"]),
                         "--policy", str(files["new"]), "--against", str(files["old"]),
                         "--out", str(files["folder"] / "r.jsonl"), "--workers", "2", "--chunk-lines", "50",
                         "--summary", str(files["folder"] / "s.json"))
    assert (code, err) == (0, "")
    old_policy, new_policy = load_policy(OLD), load_policy(NEW)
    want = {}
    for call in made:
        (old, old_rules), (new, new_rules) = _verdict(call, old_policy), _verdict(call, new_policy)
        if old != new:
            want[call["id"]] = ("refused_now" if new == "deny" else "allowed_now", sorted(new_rules), sorted(old_rules))
    results = [json.loads(line) for line in (files["folder"] / "r.jsonl").read_text().splitlines()]
    assert [r["id"] for r in results] == [c["id"] for c in made]
    got = {r["id"]: (r["change"], r["new_rules"], r["old_rules"]) for r in results if r["change"]}
    assert got == want and len(want) > 100
    assert {"refused_now", "allowed_now"} == {change for change, _, _ in want.values()}
    # the report: one line per changed call, in input order, then the counts
    changed_lines = out.splitlines()[:-1]
    assert [line.split()[2] for line in changed_lines] == [c["id"] for c in made if c["id"] in want]
    first = next(c for c in made if want.get(c["id"], ("",))[0] == "refused_now" and c["arguments"]["value"] == 700
                 and c["arguments"]["counterparty"] != "Evil Corp" and c["arguments"]["term_months"] != 40)
    assert f"refused now   {first['id']}  legal_draft_v3  by deals.cap: value 700 is over 500" in out
    summary = json.loads((files["folder"] / "s.json").read_text())
    refused = sum(1 for change, _, _ in want.values() if change == "refused_now")
    assert (summary["calls"], summary["refused_now"], summary["allowed_now"], summary["unchanged"]) == (
        600, refused, len(want) - refused, 600 - len(want))
    assert out.splitlines()[-1].startswith(f"600 calls replayed: {600 - len(want)} unchanged, {refused} refused now")


def test_without_against_the_recorded_verdict_is_the_old_side_else_the_schema(files, capsys) -> None:
    old_policy = load_policy(OLD)
    made = calls(80, seed=3)
    for call in made[:40]:
        call["verdict"] = _verdict(call, old_policy)[0]  # as a decision log would have recorded it
    (files["folder"] / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in made))
    code, out, _ = run(capsys, "replay", str(files["folder"] / "calls.jsonl"), "--tools", str(files["tools"]),
                       "--policy", str(files["new"]), "--out", str(files["folder"] / "r.jsonl"), "--workers", "1")
    results = [json.loads(line) for line in (files["folder"] / "r.jsonl").read_text().splitlines()]
    assert [r["old_from"] for r in results] == ["recorded"] * 40 + ["schema"] * 40
    new_policy = load_policy(NEW)
    for call, result in zip(made, results):
        old = call.get("verdict") or _verdict(call, None)[0]
        new = _verdict(call, new_policy)[0]
        assert (result["old"], result["new"], bool(result["change"])) == (old, new, old != new)


def test_a_call_loops_results_are_replayed_call_by_call(files, capsys) -> None:
    replies = ['{"name": "legal_draft_v3", "arguments": {"counterparty": "Evil Corp", "value": 10, "term_months": 6}}',
               '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 900, "term_months": 6}}',
               "Done."]
    loop = CallLoop(StubClient(replies), sample_toolset(), executors={"legal_draft_v3": lambda **a: "ok"})
    record = {"id": "run-1", **loop.run("draft two deals").to_dict()}
    decision = {"tool": "legal_draft_v3", "arguments_sha256": "ab" * 32, "verdict": "allow"}
    lines = [json.dumps(record), json.dumps(decision), "{oops", "", json.dumps({"id": "x", "reply": "text"})]
    (files["folder"] / "calls.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "replay", str(files["folder"] / "calls.jsonl"), "--tools", str(files["tools"]),
                         "--policy", str(files["new"]), "--out", "-", "--workers", "1")
    results = [json.loads(line) for line in out.splitlines()]
    assert [(r["id"], r.get("change")) for r in results[:2]] == [("run-1/0.0", "refused_now"), ("run-1/1.0", "refused_now")]
    assert [r["line"] for r in results] == [1, 1, 2, 3, 5]
    assert "digest of the arguments" in results[2]["error"] and results[3]["error"].startswith("not valid JSON")
    assert "a call loop's result" in results[4]["error"]
    assert code == 2 and "line 2: a decision record keeps a digest" in err
    assert "refused now   run-1/0.0  legal_draft_v3  by deals.party: no deals with Evil Corp" in err


def test_replay_bag_gives_what_the_command_gives(files) -> None:
    dask_bag = pytest.importorskip("dask.bag")
    from toolform_rules.batch import replay_bag

    made = calls(30, seed=5)
    bag = dask_bag.from_sequence(made, npartitions=3)
    results = replay_bag(bag, str(files["tools"]), str(files["new"]), against=str(files["old"])).compute(
        scheduler="synchronous")
    old_policy, new_policy = load_policy(OLD), load_policy(NEW)
    assert [r["id"] for r in results] == [c["id"] for c in made]
    assert [(r["old"], r["new"]) for r in results] == [(_verdict(c, old_policy)[0], _verdict(c, new_policy)[0])
                                                       for c in made]
    assert all("line" not in r for r in results)
    tools = load_tools(str(files["tools"]))
    assert tools.names() == ["legal_draft_v3"]
