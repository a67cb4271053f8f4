"""Batch grading on this machine: ``toolform-rules grade`` gives, record for record, what ``parse_reply`` gives
in-process; input order and line numbers survive any chunking and any number of workers; malformed lines
become error records; memory stays flat; BFCL-style matching of expected calls."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import bfcl
from support.batch_data import BAD_LINES, tool_docs, toolset, write_replies, write_tools
from toolform_rules import ToolCall, get_protocol, load_tools, parse_reply, sample_toolset
from toolform_rules.batch import GradeJob, Line, Sources, read_lines, run_local
from toolform_rules.batch.expected import fits, match_calls, read_expected, same_value
from toolform_rules.batch.lines import split_block
from toolform_rules.cli import main

RECORDS = 20_000


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def expected_result(item: dict[str, Any] | None, line: int, tools: Any) -> dict[str, Any]:
    """What grading one record must give, built from ``parse_reply`` in this process."""
    if item is None:
        return {"line": line, "ok": False}
    protocol = item.get("protocol", "json_object")
    reply = parse_reply(item["reply"], tools, protocol)
    out = {"id": item["id"], "line": line, "protocol": protocol, "ok": reply.ok,
           "calls": [{"name": c.name, "resolved_name": c.resolved_name, "valid": c.valid, "arguments": c.arguments,
                      "validation": c.validation} for c in reply.calls],
           "rejected": [{"name": c.name, "resolved_name": c.resolved_name, "valid": c.valid,
                         "arguments": c.arguments, "validation": c.validation, "reason": c.reason}
                        for c in reply.rejected],
           "notes": [reply.note] if reply.note else []}
    if "expected" in item:
        problems = match_calls(read_expected(item["expected"], tools), reply.calls)
        out["match"] = not problems
        if problems:
            out["mismatches"] = problems
    return json.loads(json.dumps(out, default=str))


@pytest.fixture(scope="module")
def replies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Any]]:
    folder = tmp_path_factory.mktemp("batch")
    written = write_replies(folder / "replies.jsonl", RECORDS)
    return folder / "replies.jsonl", write_tools(folder), written


def _numbered(written: list[Any]) -> list[tuple[int, Any]]:
    """Each written record with its line number (blank lines are skipped but counted)."""
    out, line = [], 0
    for item in written:
        line += 1
        while line % 1000 == 999:
            line += 1
        out.append((line, item))
    return out


def test_grade_gives_record_for_record_what_parse_reply_gives(replies, tmp_path, capsys) -> None:
    source, tools_path, written = replies
    code, out, err = run(capsys, "grade", str(source), "--tools", str(tools_path), "--protocol", "json_object",
                         "--out", str(tmp_path / "two.jsonl"), "--workers", "2", "--summary", str(tmp_path / "s.json"))
    results = [json.loads(line) for line in (tmp_path / "two.jsonl").read_text(encoding="utf-8").splitlines()]
    tools = toolset()
    assert len(results) == RECORDS + len(BAD_LINES)
    for (line, item), result in zip(_numbered(written), results):
        want = expected_result(item, line, tools)
        if item is None:
            assert (result["line"], result["ok"]) == (line, False) and result["error"]
        else:
            assert result == want
    # malformed lines: an error record each, naming its line; the run says so and exits 2
    assert code == 2
    errors = {r["line"]: r["error"] for r in results if "error" in r}
    assert sorted(errors) == sorted(BAD_LINES)
    assert errors[3].startswith("not valid JSON") and "a JSON object, not list" in errors[11]
    assert "no_such_protocol" in errors[23] and '"expected" is a list' in errors[29]
    assert f"{source}: line 3: not valid JSON" in err
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["records"] == RECORDS + len(BAD_LINES) and summary["errors"] == len(BAD_LINES)
    assert summary["graded"] == RECORDS == sum(p["replies"] for p in summary["protocols"].values())
    assert summary["protocols"]["xml_call"]["expected"] == sum(
        1 for item in written if item and "expected" in item and item.get("protocol") == "xml_call") > 100
    assert summary["protocols"]["xml_call"]["matched"] == sum(r.get("match", False) for r in results
                                                              if r.get("protocol") == "xml_call") > 10
    assert summary["buckets"]["type_errors"] == sum(
        len(c["validation"]["type_errors"]) for r in results for c in r.get("calls", []))
    assert f"{RECORDS + len(BAD_LINES):,} records: {RECORDS:,} graded, {len(BAD_LINES)} errors" in out


def test_a_clean_file_exits_0_and_compressed_files_are_read_and_written(tmp_path, capsys) -> None:
    written = write_replies(tmp_path / "r.jsonl", 300, bad=False)
    tools_path = write_tools(tmp_path)
    with gzip.open(tmp_path / "r.jsonl.gz", "wb") as handle:
        handle.write((tmp_path / "r.jsonl").read_bytes())
    code, out, err = run(capsys, "grade", str(tmp_path / "r.jsonl.gz"), "--tools", str(tools_path), "-p",
                         "json_object", "--out", str(tmp_path / "out.jsonl.gz"), "--workers", "1")
    assert (code, err) == (0, "")
    lines = gzip.decompress((tmp_path / "out.jsonl.gz").read_bytes()).decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [item["id"] for item in written]
    # two worker processes, chunks of 7 lines handed out as they finish: the same bytes, in the same order
    run(capsys, "grade", str(tmp_path / "r.jsonl"), "--tools", str(tools_path), "-p", "json_object",
        "--out", str(tmp_path / "two.jsonl"), "--workers", "2", "--chunk-lines", "7")
    assert (tmp_path / "two.jsonl").read_text() == "\n".join(lines) + "\n"


@pytest.mark.parametrize("argv, message", [
    (["grade", "missing.jsonl", "--out", "o.jsonl"], "missing.jsonl: no such file"),
    (["grade", "IN", "--out", "o.jsonl", "--tools", "nope.json"], "nope.json"),
    (["grade", "IN", "--out", "o.jsonl", "--protocol", "klingon"], "klingon"),
    (["grade", "IN", "--out", "o.jsonl", "--workers", "0"], "--workers and --chunk-lines are at least 1"),
    (["grade", "IN", "--out", "o.jsonl", "--scheduler", "tcp://x:1"], "--scheduler is for --engine dask"),
    (["grade", "IN", "--out", "o-*.jsonl"], "--engine dask"),
    (["grade", "IN", "--out", "o.jsonl", "--profile", "nope"], "unknown validation profile"),
    (["grade", "IN"], "--out"),
    (["replay", "IN", "--policy", "missing.yaml"], "missing.yaml"),
])
def test_usage_errors_exit_2_on_one_line_before_anything_runs(tmp_path, capsys, monkeypatch, argv, message) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "IN").write_text('{"id": 1, "reply": "x", "protocol": "json_object"}\n')
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err
    assert err.count("\n") == 1 or err.startswith("toolform-rules: error: 1 problem in the policy")
    assert not (tmp_path / "o.jsonl").exists()


def test_error_records_for_every_kind_of_bad_line(tmp_path) -> None:
    lines = [b'{"id": 1, "reply": "{\\"name\\": \\"legal_draft_v3\\", \\"arguments\\": {}}"}',
             b"\xff\xfe not utf-8", b'"just text"', b'{"id": 4}', b'{"id": 5, "reply": "x", "protocol": 7}',
             b'{"id": 6, "reply": "x", "expected": [{"f": {"a": 1}}]}', b'{"id": 7, "reply": "x", "tools": [{}]}',
             b"[" * 100_000, b'{"id": 9, "reply": "x", "protocol": "nope"}']
    job = GradeJob(Sources(json.dumps(sample_toolset().to_openai())), protocol="json_object")
    result = job.run([Line(n, data) for n, data in enumerate(lines, 1)])
    records = [json.loads(line) for line in result.lines]
    assert [r["line"] for r in records] == list(range(1, 10))
    assert records[0]["ok"] is False and records[0]["calls"][0]["validation"]["missing_required"]
    errors = [r.get("error", "") for r in records[1:]]
    assert errors[0] == "not UTF-8 text (byte 1 of the line)"
    assert errors[1] == "a record is a JSON object, not str"
    assert errors[2] == 'a record holds its reply as text, under "reply"'
    assert errors[3] == 'no protocol: give --protocol, or a "protocol" field'
    assert "accepted values are a list" in errors[4]
    assert errors[5].startswith('its "tools": ')
    assert errors[6] in ("JSON nested too deeply to read",) or errors[6].startswith("not valid JSON")
    assert "nope" in errors[7]
    assert [r["id"] for r in records] == [1, None, None, 4, 5, 6, 7, None, 9]
    assert result.tally.get("records", "errors") == 8 and result.errors[0] == "line 2: not UTF-8 text (byte 1 of the line)"


def test_an_over_long_line_is_skipped_without_being_held(tmp_path) -> None:
    data = b'{"id": 1}\n' + b"x" * 5_000_000 + b"\n" + b'{"id": 3}\n' + b"y" * 50
    lines = list(read_lines(io.BytesIO(data), max_line_bytes=1000))
    assert [(l.number, l.data, bool(l.problem)) for l in lines] == [
        (1, b'{"id": 1}', False), (2, b"", True), (3, b'{"id": 3}', False), (4, b"y" * 50, False)]
    assert lines[1].problem == "the line is longer than 1000 bytes (5000000); it was not read"
    assert [(l.number, l.data, l.problem) for l in split_block(data, first_number=1, max_line_bytes=1000)] == [
        (l.number, l.data, l.problem) for l in lines]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([b'{"id": 1, "reply": "{\\"name\\": \\"legal_draft_v3\\", \\"arguments\\": '
                                 b'{\\"value\\": 1}}"}', b"", b"  ", b"{bad", b'{"id": 2, "reply": "none"}',
                                 b"\r", b'{"id": 3, "reply": "x"}\r']), max_size=40),
       st.integers(1, 7), st.integers(1, 200))
def test_any_chunking_gives_the_same_output_and_line_numbers(lines, chunk_lines, chunk_bytes) -> None:
    data = b"\n".join(lines)
    job = GradeJob(Sources(json.dumps(sample_toolset().to_openai())), protocol="json_object")
    whole = job.run(list(read_lines(io.BytesIO(data), max_line_bytes=10_000))).lines
    out = io.StringIO()
    run_local(job, io.BytesIO(data), out, workers=1, max_line_bytes=10_000, chunk_lines=chunk_lines,
              chunk_bytes=chunk_bytes)
    assert out.getvalue() == "".join(line + "\n" for line in whole)
    # the same lines cut into blocks at line ends, as the Dask engine reads them
    blocks = data.split(b"\n")
    first, pieces = 1, []
    for start in range(0, len(blocks), chunk_lines):
        block = b"\n".join(blocks[start:start + chunk_lines]) + b"\n"
        pieces.extend(job.run(split_block(block, first_number=first, max_line_bytes=10_000)).lines)
        first += len(blocks[start:start + chunk_lines])
    assert pieces == whole
    numbers = [json.loads(line)["line"] for line in whole]
    assert numbers == [n for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


class _Lines(io.RawIOBase):
    """``count`` JSON lines, made as they are read: an input of any size that no file holds."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while len(self.pending) < len(buffer) and self.left:
            self.left -= 1
            self.pending += (b'{"id": %d, "reply": "{\\"name\\": \\"legal_draft_v3\\", \\"arguments\\": '
                             b'{\\"counterparty\\": \\"A\\", \\"value\\": %d, \\"term_months\\": 1}}"}\n'
                             % (self.left, self.left % 7 - 3))
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


class _Sink:
    def __init__(self) -> None:
        self.lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)


def _peak(count: int) -> int:
    job = GradeJob(Sources(json.dumps(sample_toolset().to_openai())), protocol="json_object")
    job.run([])  # load the tools and rules before measuring
    sink = _Sink()
    tracemalloc.start()
    try:
        run_local(job, io.BufferedReader(_Lines(count)), sink, workers=1, max_line_bytes=1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sink.lines == count
    return peak


def test_memory_stays_flat_however_long_the_input() -> None:
    small, large = _peak(500), _peak(5_000)
    assert large < small * 1.5 + 200_000, (small, large)


def test_a_progress_bar_is_shown_only_on_a_terminal(monkeypatch) -> None:
    from toolform_rules.batch import commands

    assert commands._progress(True) is None  # pytest's stderr is no terminal
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    bar = commands._progress(True)
    assert bar is not None and type(bar).__name__ == "tqdm"
    bar.close()
    assert commands._progress(False) is None


# --- expected calls ---------------------------------------------------------------------------

TOOLS = load_tools(tool_docs())


def _made(reply: str) -> list[Any]:
    return list(parse_reply(reply, TOOLS, "json_array").calls)


def _problems(expected: Any, reply: str) -> list[str]:
    return match_calls(read_expected(expected, TOOLS), _made(reply))


def test_a_call_matches_after_normalisation_and_optional_arguments_may_be_absent() -> None:
    reply = '[{"name": "GetWeather", "arguments": {"city": " PARIS ", "days": "3"}}]'
    assert _problems([{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}], reply) == []
    # unit is optional: absent in the call, still a match; its default counts as absent too
    assert _problems([{"name": "get_weather", "arguments": {"city": "paris", "days": 3, "unit": "celsius"}}],
                     reply) == []
    assert _problems([{"name": "get_weather", "arguments": {"city": "paris", "days": 4}}], reply) == [
        "get_weather(city='paris', days=4): call 0 days is 3, expected 4"]
    assert _problems([{"name": "get_weather", "arguments": {"days": 3}}], reply) == [
        "get_weather(days=3): call 0 city not expected"]
    assert _problems([{"name": "send_email", "arguments": {"to": "x", "body": "y"}}], reply) == [
        "send_email(to='x', body='y'): no call to send_email"]


def test_bfcl_answer_keys_accept_any_listed_value_and_blank_means_may_be_absent() -> None:
    reply = '[{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "fahrenheit"}}]'
    assert _problems([{"get_weather": {"city": ["Paris", "Oslo"], "unit": ["fahrenheit", "F"],
                                       "days": ["", 1]}}], reply) == []
    assert _problems([{"get_weather": {"city": ["Paris"], "unit": ["", "celsius"]}}], reply)


def test_calls_match_in_any_order_each_to_its_own_call() -> None:
    reply = ('[{"name": "get_weather", "arguments": {"city": "Oslo"}}, '
             '{"name": "get_weather", "arguments": {"city": "Paris"}}]')
    both = [{"get_weather": {"city": ["Paris", "Oslo"]}}, {"get_weather": {"city": ["Paris"]}}]
    assert _problems(both, reply) == []  # the first must take Oslo so the second can have Paris
    assert _problems([{"get_weather": {"city": ["Paris"]}}] * 2, reply) == [
        "get_weather(city='paris'): call 0 city is 'oslo', expected 'paris'"]
    assert _problems([{"get_weather": {"city": ["Paris"]}}], reply) == ["2 calls made, 1 expected"]
    assert _problems([], "No tool fits.") == [] and _problems([], reply) == ["2 calls made, 0 expected"]


def test_values_compare_as_json_a_boolean_is_never_a_number() -> None:
    assert same_value(1, 1.0) and not same_value(True, 1) and not same_value(0, False)
    assert not same_value("1", 1) and same_value([1, {"a": None}], [1.0, {"a": None}])
    assert fits({"a": [{"b": "X"}]}, {"a": [[{"b": ["x"]}]]})  # option objects inside lists
    reply = '[{"name": "send_email", "arguments": {"to": "a", "body": "b", "options": {"urgent": "no"}}}]'
    assert _problems([{"name": "send_email", "arguments": {"to": "a", "body": "b", "options": {"urgent": True}}}],
                     reply)


def _first(value: Any) -> Any:
    """The first accepted value of a BFCL answer (option objects read the same way, inside)."""
    if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
        return {k: _first(options[0]) if options else [] for k, options in value.items()
                if not options or options[0] != ""}
    if isinstance(value, list):
        return [_first(v) for v in value]
    return value


def test_every_bfcl_answer_matches_its_own_key_and_a_changed_argument_does_not() -> None:
    """Every answered BFCL question: the first accepted value of each argument, written as a reply, matches
    the answer key (with the question's own tools, given per record); changing one value breaks the match."""
    protocol = get_protocol("json_array")
    lines, changed = [], []
    for category in bfcl.ANSWERED:
        answers = bfcl.answers(category)
        for record in bfcl.records(category):
            truth = answers[record["id"]]
            calls = [ToolCall(name, _first(options)) for call in truth for name, options in call.items()]
            item = {"id": record["id"], "reply": protocol.render_calls(calls), "tools": record["function"],
                    "expected": truth}
            lines.append(Line(len(lines) + 1, json.dumps(item).encode()))
            numbers = [k for k, v in calls[0].arguments.items() if type(v) in (int, float)]
            if numbers:
                arguments = dict(calls[0].arguments)
                arguments[numbers[0]] += 1000
                bent = [ToolCall(calls[0].name, arguments), *calls[1:]]
                changed.append(Line(len(changed) + 1, json.dumps({**item, "reply": protocol.render_calls(bent)}).encode()))
    job = GradeJob(Sources(None), protocol="json_array")
    results = [json.loads(line) for line in job.run(lines).lines]
    assert len(results) == 2501
    assert [(r["id"], r.get("error"), r.get("mismatches")) for r in results if not r.get("match")] == []
    bent_results = [json.loads(line) for line in job.run(changed).lines]
    assert len(bent_results) > 900 and not any(r.get("match") for r in bent_results)


def test_workers_fork_from_a_one_thread_process_else_start_from_a_fork_server(tmp_path) -> None:
    import subprocess
    import sys
    import threading

    from toolform_rules.batch import local

    stop = threading.Event()
    extra = threading.Thread(target=stop.wait)
    extra.start()
    try:
        assert local._context().get_start_method() == "forkserver"  # a thread here: never fork
    finally:
        stop.set()
        extra.join()
    # the command line runs one thread: its workers are forked and inherit the tools it loaded
    written = write_replies(tmp_path / "r.jsonl", 700, bad=False)
    tools_path = write_tools(tmp_path)
    probe = ("import sys, threading; from toolform_rules.batch import local; "
             "print(local._context().get_start_method()); "
             "from toolform_rules.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", probe, "grade", str(tmp_path / "r.jsonl"), "--tools",
                           str(tools_path), "-p", "json_object", "--out", str(tmp_path / "o.jsonl"), "--workers", "2",
                           "--chunk-lines", "50"], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, "fork"), done.stderr
    assert [json.loads(line)["id"] for line in (tmp_path / "o.jsonl").read_text().splitlines()] == [
        item["id"] for item in written]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_call_matches_itself_and_the_order_of_calls_does_not_matter(data) -> None:
    """Any generated call, written as a reply and expected as written, matches (both sides normalised alike);
    several calls match in any order; the input records are never modified."""
    import copy

    import callgen

    tool = data.draw(callgen.tools())
    tools = load_tools([tool])
    made = [data.draw(callgen.arguments(tool["parameters"])) for _ in range(data.draw(st.integers(1, 3)))]
    reply = json.dumps([{"name": tool["name"], "arguments": a} for a in made])
    parsed = parse_reply(reply, tools, "json_array").calls
    expected = [{"name": tool["name"], "arguments": a} for a in made]
    before = copy.deepcopy(expected)
    assert match_calls(read_expected(expected, tools), parsed) == []
    shuffled = data.draw(st.permutations(expected))
    assert match_calls(read_expected(list(shuffled), tools), parsed) == []
    assert expected == before


def test_a_changed_tools_file_is_loaded_again_by_a_long_running_worker(tmp_path) -> None:
    """Workers keep loaded jobs by digest; the digest covers the files' content, not only their paths."""
    path = tmp_path / "tools.json"
    line = Line(1, b'{"id": 1, "reply": "{\\"name\\": \\"legal_draft_v3\\", \\"arguments\\": {\\"counterparty\\": '
                   b'\\"A\\", \\"value\\": 5, \\"term_months\\": 1}}"}')
    path.write_text(json.dumps(sample_toolset().to_openai()))
    first = GradeJob(Sources(str(path)), protocol="json_object")
    assert json.loads(first.run([line]).lines[0])["ok"] is True
    path.write_text(json.dumps([{"name": "other", "parameters": {"type": "object"}}]))
    second = GradeJob(Sources(str(path)), protocol="json_object")
    assert second.key != first.key
    assert json.loads(second.run([line]).lines[0])["ok"] is False  # legal_draft_v3 is no tool any more
