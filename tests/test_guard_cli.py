"""The guard on the command line (text, JSON, SARIF 2.1.0 checked with a maintained SARIF package, --clean)
and in the call loop (guard=), on a poisoned tool from the corpus and the sample tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolform_rules import CallLoop, load_tools, sample_toolset
from toolform_rules.cli import main
from toolform_rules.loop.clients import StubClient
from toolform_rules.guard import scan_toolset
from toolform_rules.guard.sarif import to_sarif

POISONED = Path(__file__).parent / "data" / "guard" / "poisoned.jsonl"
#: the shadowing attack on an "add" tool (Invariant Labs): orders about another tool, hidden in <IMPORTANT>
SHADOWING = next(json.loads(line)["tool"] for line in POISONED.read_text(encoding="utf-8").splitlines()
                 if json.loads(line)["id"] == "P002")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def poisoned_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([SHADOWING] + sample_toolset().to_mcp(), indent=2), encoding="utf-8")
    return path


def test_guard_exits_1_and_names_each_finding(capsys, poisoned_file) -> None:
    code, out, _ = run(capsys, "guard", str(poisoned_file))
    assert code == 1
    assert "in 1 tools (strictness standard)" in out and " add description " in out
    assert "legal_draft_v3" not in out  # the benign tool is not flagged


def test_guard_on_clean_tools_exits_0(capsys, tmp_path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(sample_toolset().to_mcp()), encoding="utf-8")
    assert run(capsys, "guard", str(path)) == (0, "no findings (strictness standard)\n", "")


def test_guard_json_is_the_reports_dict(capsys, poisoned_file) -> None:
    code, out, _ = run(capsys, "guard", str(poisoned_file), "--json")
    assert code == 1 and json.loads(out) == json.loads(json.dumps(scan_toolset(load_tools(poisoned_file)).to_dict()))


def test_guard_sarif_is_valid_sarif_2_1_0_pointing_at_the_file(capsys, poisoned_file) -> None:
    sarif_pydantic = pytest.importorskip("sarif_pydantic")
    code, out, _ = run(capsys, "guard", str(poisoned_file), "--sarif")
    log = json.loads(out)
    assert code == 1 and log["version"] == "2.1.0"
    parsed = sarif_pydantic.Sarif.model_validate(log)  # the maintained object model accepts it
    (parsed_run,) = parsed.runs
    results = log["runs"][0]["results"]
    assert len(parsed_run.results) == len(results) > 0
    rule_ids = {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} == rule_ids
    text = poisoned_file.read_text(encoding="utf-8").splitlines()
    for result in results:
        assert result["level"] in ("error", "warning", "note")
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == poisoned_file.as_uri()
        line = physical["region"]["startLine"]
        assert 1 <= line <= len(text)
        assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].startswith("add/")


def test_sarif_of_a_clean_report_has_no_results() -> None:
    log = to_sarif(scan_toolset(sample_toolset()))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


@pytest.mark.parametrize("action", ["strip", "drop_descriptions", "quarantine"])
def test_guard_clean_writes_tools_that_scan_clean(capsys, poisoned_file, tmp_path, action) -> None:
    out_path = tmp_path / "clean.json"
    code, _, _ = run(capsys, "guard", str(poisoned_file), "--clean", str(out_path), "--action", action)
    assert code == 1
    cleaned = load_tools(out_path)
    assert run(capsys, "guard", str(out_path))[0] == 0
    assert ("add" in cleaned.names()) is (action != "quarantine") and "legal_draft_v3" in cleaned.names()


def test_the_call_loop_cleans_the_tools_before_the_model_sees_them() -> None:
    tools = load_tools([SHADOWING] + sample_toolset().to_mcp())
    model = StubClient(["No tool needed."])
    loop = CallLoop(model, tools, guard="standard")
    loop.run("Add 2 and 3.")
    assert loop.guard_report.flagged_tools == ("add",) or list(loop.guard_report.flagged_tools) == ["add"]
    system = model.requests[0][0]["content"]
    assert "send_email" not in system and "IMPORTANT" not in system
    assert "legal_draft_v3" in system and '"add"' in system  # the tool stays, without the hidden orders
    assert tools.get("add").description == SHADOWING["description"]  # the caller's toolset is untouched


@pytest.mark.parametrize("strictness", ["lenient", "standard", "strict"])
def test_scanning_a_tools_fields_together_finds_what_scanning_each_alone_does(strictness: str) -> None:
    """scan_tool searches all of a tool's fields of a kind at once to see which need their rules: the findings
    are those of scan_text on each field alone, on every tool of the guard corpus, poisoned and benign, each
    also with the whole catalogue around it."""
    from toolform_rules.guard import scan_text, scan_tool
    from toolform_rules.guard.scan import tool_fields

    records = [json.loads(line) for name in ("poisoned.jsonl", "benign.jsonl")
               for line in (POISONED.parent / name).read_text(encoding="utf-8").splitlines()]
    tools = [load_tools([dict(r["tool"], name=r["tool"].get("name") or r["id"])]).tools[0] for r in records]
    catalogue = tuple(tool.name for tool in tools)
    for tool in tools:
        params = tuple(p.name for p in tool.parameters.properties)
        for names in ((tool.name,), catalogue):
            alone = [f for field, text in tool_fields(tool)
                     for f in scan_text(text, tool=tool.name, field=field, catalogue_names=names, param_names=params,
                                        strictness=strictness)]
            assert scan_tool(tool, catalogue_names=names, strictness=strictness) == alone, tool.name
