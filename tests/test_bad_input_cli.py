"""Bad input through every command that reads it: the exit-code contract and nothing lost (issue 28).

Every row is one bad input given to one command.  Whatever it is, the command ends with its
code — 0 valid, 1 invalid, 2 could not decide — and for 2 with exactly one line on stderr,
``toolform-rules: error: ...`` saying why; never a traceback.  A command given ``--out`` leaves
either a whole results file or none: never a half-written one (it writes beside, then renames).
The rows run in this process through :func:`toolform_rules.cli.main`, whose stdout and stderr
are real UTF-8 text streams here (pytest's), so a lone surrogate printed raw would raise.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolform_rules import sample_toolset
from toolform_rules.cli import main

CALL_OK = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12}}
REPLY_OK = json.dumps(CALL_OK)
POLICY_OK = "policy: p\nconstraints:\n  - id: p.cap\n    check: args.value <= 100\n"
ALIAS_BOMB = ("policy: p\nlists:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
              + "".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
              + "constraints:\n  - id: p.in\n    check: args.counterparty in lists.a8\n")


def _call_with(**arguments: Any) -> str:
    return json.dumps({"name": "legal_draft_v3", "arguments": {**CALL_OK["arguments"], **arguments}})


#: files each row may name, made in the row's folder: name -> bytes
FILES: dict[str, bytes] = {
    "call.json": REPLY_OK.encode(),
    "reply.txt": REPLY_OK.encode(),
    "tools.json": json.dumps(sample_toolset().to_openai()).encode(),
    "policy.yaml": POLICY_OK.encode(),
    "replies.jsonl": (json.dumps({"id": 1, "reply": REPLY_OK, "protocol": "json_object"}) + "\n").encode(),
    "calls.jsonl": (json.dumps({"id": 1, **CALL_OK}) + "\n").encode(),
    "empty.json": b"",
    "latin1.json": '{"name": "legal_draft_v3", "arguments": {"counterparty": "Zürich"}}'.encode("latin-1"),
    "truncated.json": REPLY_OK[:-7].encode(),
    "deep.json": b"[" * 100_000 + b"]" * 100_000,
    "scalar.json": b"42",
    "list-of-scalars.json": b"[1, 2]",
    "huge-int.json": _call_with(value=0).replace('"value": 0', '"value": ' + "7" * 5001).encode(),
    "nan.json": _call_with(value=0).replace('"value": 0', '"value": NaN').encode(),
    "infinity.json": _call_with(value=0).replace('"value": 0', '"value": -Infinity').encode(),
    "overflow.json": _call_with(value=0).replace('"value": 0', '"value": 1e400').encode(),
    "surrogate.json": _call_with(counterparty="X").replace('"X"', '"\\ud800"').encode(),
    "surrogate-key.json": _call_with(counterparty="X").replace('"counterparty"', '"\\udc00"').encode(),
    "duplicate.json": _call_with(value=5).replace('"value": 5', '"value": 5, "value": -1').encode(),
    "bom.json": b"\xef\xbb\xbf" + REPLY_OK.encode(),
    "bad-tools.json": b'{"type": "function", "function": {"name": ',
    "tools-not-tools.json": b'{"hello": "world"}',
    "tools-ref-cycle.json": json.dumps({"name": "f", "parameters": {"type": "object", "properties": {
        "x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}}}).encode(),
    "tools.yaml": b"- name: f\n",
    "tools-nan-bound.json": b'[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"maximum": NaN}}}}]',
    "tools-huge-bound.json": b'[{"name": "f", "parameters": {"properties": {"x": {"maximum": 1e999}}}}]',
    "policy-nul.yaml": POLICY_OK.replace("100", "100\x00").encode(),
    "policy-bad-yaml.yaml": b"policy: p\nconstraints: [\n",
    "policy-bad-expr.yaml": POLICY_OK.replace("args.value <= 100", "args.value <=").encode(),
    "policy-unknown-arg.yaml": POLICY_OK.replace("args.value", "args.nope").encode(),
    "policy-two-problems.yaml": (POLICY_OK + "  - id: p.two\n    check: args.nope2 == 1\n").replace(
        "args.value", "args.nope").encode(),
    "policy-alias-bomb.yaml": ALIAS_BOMB.encode(),
    "policy-python-tag.yaml": b"policy: !!python/object/apply:os.system ['true']\n",
    "policy-not-utf8.yaml": POLICY_OK.replace("p.cap", "p.c\xe9p").encode("latin-1"),
    "lock-not-json.lock": b"this is no lock",
    "lock-list.lock": b"[]",
    "replies-bad-line.jsonl": b'{"id": 1, "reply": "x", "protocol": "json_object"}\n{not json\n',
    "replies-surrogate.jsonl": (json.dumps({"id": 1, "reply": _call_with(counterparty="X").replace(
        '"X"', '"\\\\ud800"'), "protocol": "json_object"}) + "\n").encode(),
    "replies-nan.jsonl": (json.dumps({"id": 1, "reply": _call_with(value=0).replace('"value": 0', '"value": NaN'),
                                      "protocol": "json_object"}) + "\n").encode(),
    "hostile.txt": b"{" * 200_000 + b'"name": "f"' + b"[(" * 100_000,
    "binary.txt": bytes(range(256)) * 64,
}

#: (id, argv, stdin, expected exit code, what stderr's error line must say (for code 2), or None)
ROWS: list[tuple[str, list[str], str, int, str | None]] = [
    # --- validate: the call ---
    ("validate-ok", ["validate", "call.json"], "", 0, None),
    ("validate-empty-path", ["validate", ""], "", 2, "an empty path"),
    ("validate-missing", ["validate", "nope.json"], "", 2, "no such file"),
    ("validate-dir", ["validate", "folder"], "", 2, "is a directory"),
    ("validate-empty-file", ["validate", "empty.json"], "", 2, "not valid JSON"),
    ("validate-latin1", ["validate", "latin1.json"], "", 2, "not UTF-8"),
    ("validate-truncated", ["validate", "truncated.json"], "", 2, "not valid JSON"),
    ("validate-deep", ["validate", "deep.json"], "", 2, "nested too deeply"),
    ("validate-scalar", ["validate", "scalar.json"], "", 2, "not a call"),
    ("validate-list-of-scalars", ["validate", "list-of-scalars.json"], "", 2, "not a call"),
    ("validate-huge-int", ["validate", "huge-int.json"], "", 2, "number too long"),
    ("validate-nan", ["validate", "nan.json"], "", 1, None),
    ("validate-infinity", ["validate", "infinity.json"], "", 1, None),
    ("validate-overflow", ["validate", "overflow.json"], "", 1, None),
    ("validate-surrogate", ["validate", "surrogate.json"], "", 1, None),
    ("validate-surrogate-json", ["validate", "surrogate.json", "--json"], "", 1, None),
    ("validate-surrogate-key", ["validate", "surrogate-key.json"], "", 1, None),
    ("validate-surrogate-decisions", ["validate", "surrogate.json", "--decisions", "d.jsonl"], "", 1, None),
    ("validate-nan-decisions", ["validate", "nan.json", "--decisions", "d.jsonl", "--policy", "policy.yaml"], "", 1,
     None),
    ("validate-duplicate", ["validate", "duplicate.json"], "", 1, None),
    ("validate-bom", ["validate", "bom.json"], "", 2, "not valid JSON"),
    ("validate-stdin-garbage", ["validate", "-"], "}{", 2, "stdin is not valid JSON"),
    ("validate-stdin-surrogate", ["validate", "-"], _call_with(counterparty="\ud800"), 1, None),
    ("validate-text-garbage", ["validate", "{nope"], "", 2, "not valid JSON"),
    ("validate-unknown-profile", ["validate", "call.json", "--profile", "nope"], "", 2, "unknown validation profile"),
    ("validate-rules-missing", ["validate", "call.json", "--rules", "nope.yaml"], "", 2, "nope.yaml"),
    # --- validate: the tools ---
    ("tools-dir", ["validate", "call.json", "--tools", "folder"], "", 2, "folder: is a directory"),
    ("tools-missing", ["validate", "call.json", "--tools", "nope.json"], "", 2, "nope.json"),
    ("tools-bad-json", ["validate", "call.json", "--tools", "bad-tools.json"], "", 2, "bad-tools.json"),
    ("tools-not-tools", ["validate", "call.json", "--tools", "tools-not-tools.json"], "", 2, "tools-not-tools.json"),
    # a $ref that only refers to itself loads; checking a value against it is refused, not looped
    ("tools-ref-cycle", ["validate", '{"name": "f", "arguments": {"x": 1}}', "--tools", "tools-ref-cycle.json"],
     "", 1, None),
    ("tools-yaml", ["validate", "call.json", "--tools", "tools.yaml"], "", 2, "tools.yaml"),
    ("tools-nan-bound", ["validate", "call.json", "--tools", "tools-nan-bound.json"], "", 2, "maximum must be a finite number"),
    ("tools-huge-bound", ["validate", "call.json", "--tools", "tools-huge-bound.json"], "", 2, "maximum must be a finite number"),
    ("tools-empty", ["validate", "call.json", "--tools", "empty.json"], "", 2, "empty.json"),
    ("tools-latin1", ["validate", "call.json", "--tools", "latin1.json"], "", 2, "latin1.json"),
    ("tools-deep", ["validate", "call.json", "--tools", "deep.json"], "", 2, "deep.json"),
    # --- validate: the policy ---
    ("policy-missing", ["validate", "call.json", "--policy", "nope.yaml"], "", 2, "nope.yaml"),
    ("policy-nul", ["validate", "call.json", "--policy", "policy-nul.yaml"], "", 2, "policy-nul.yaml"),
    ("policy-bad-yaml", ["validate", "call.json", "--policy", "policy-bad-yaml.yaml"], "", 2, "policy-bad-yaml.yaml"),
    ("policy-bad-expr", ["validate", "call.json", "--policy", "policy-bad-expr.yaml"], "", 2, "policy-bad-expr.yaml"),
    ("policy-unknown-arg", ["validate", "call.json", "--policy", "policy-unknown-arg.yaml"], "", 2, "nope"),
    ("policy-two-problems", ["validate", "call.json", "--policy", "policy-two-problems.yaml"], "", 2, "1 more problem"),
    ("policy-alias-bomb", ["validate", "call.json", "--policy", "policy-alias-bomb.yaml"], "", 2,
     "policy-alias-bomb.yaml"),
    ("policy-python-tag", ["validate", "call.json", "--policy", "policy-python-tag.yaml"], "", 2,
     "policy-python-tag.yaml"),
    ("policy-not-utf8", ["validate", "call.json", "--policy", "policy-not-utf8.yaml"], "", 2, "policy-not-utf8.yaml"),
    ("policy-dir", ["validate", "call.json", "--policy", "folder"], "", 2, "folder"),
    # --- check, explain, test ---
    ("check-nul", ["check", "policy-nul.yaml"], "", 1, None),
    ("check-alias-bomb", ["check", "policy-alias-bomb.yaml"], "", 1, None),
    ("check-missing", ["check", "nope.yaml"], "", 2, "nope.yaml"),
    ("explain-alias-bomb", ["explain", "policy-alias-bomb.yaml", "call.json"], "", 2, "policy-alias-bomb.yaml"),
    ("explain-nul", ["explain", "policy-nul.yaml", "call.json"], "", 2, "policy-nul.yaml"),
    ("explain-bad-call", ["explain", "policy.yaml", "truncated.json"], "", 2, "not valid JSON"),
    ("explain-surrogate", ["explain", "policy.yaml", "surrogate.json"], "", 0, None),
    ("explain-huge-int", ["explain", "policy.yaml", "huge-int.json"], "", 2, "number too long"),
    ("explain-empty-path", ["explain", "policy.yaml", ""], "", 2, "an empty path"),
    # --- parse ---
    ("parse-ok", ["parse", "reply.txt", "-p", "json_object"], "", 0, None),
    ("parse-unknown-protocol", ["parse", "reply.txt", "-p", "nope"], "", 2, "unknown protocol"),
    ("parse-missing", ["parse", "nope.txt", "-p", "json_object"], "", 2, "no such file"),
    ("parse-dir", ["parse", "folder", "-p", "json_object"], "", 2, "is a directory"),
    ("parse-empty-path", ["parse", "", "-p", "json_object"], "", 2, "an empty path"),
    ("parse-surrogate", ["parse", "-", "-p", "json_object"], _call_with(counterparty="X").replace('"X"', '"\\ud800"'),
     1, None),
    ("parse-raw-surrogate", ["parse", "-", "-p", "python_call"], 'legal_draft_v3(counterparty="\ud800", value=1, '
                                                                  "term_months=2)", 1, None),
    ("parse-nan-json", ["parse", "-", "-p", "json_object", "--json"], _call_with(value=0).replace(
        '"value": 0', '"value": NaN'), 1, None),
    ("parse-huge-int", ["parse", "huge-int.json", "-p", "json_object"], "", 1, None),
    ("parse-hostile", ["parse", "hostile.txt", "-p", "json_object"], "", 1, None),
    ("parse-binary", ["parse", "binary.txt", "-p", "xml_call"], "", 1, None),
    ("parse-duplicate", ["parse", "duplicate.json", "-p", "json_object"], "", 1, None),
    # --- grade, replay ---
    ("grade-same-out", ["grade", "replies.jsonl", "--out", "replies.jsonl", "--tools", "tools.json"], "", 2,
     "is the input file"),
    ("grade-symlink-out", ["grade", "replies.jsonl", "--out", "link.jsonl", "--tools", "tools.json"], "", 2,
     "is the input file"),
    ("grade-hardlink-out", ["grade", "hardlink.jsonl", "--out", "replies.jsonl", "--tools", "tools.json"], "", 2,
     "is the input file"),
    ("grade-summary-is-input", ["grade", "replies.jsonl", "--out", "r.jsonl", "--summary", "replies.jsonl",
                                "--tools", "tools.json"], "", 2, "is the input file"),
    ("grade-missing", ["grade", "nope.jsonl", "--out", "r.jsonl"], "", 2, "no such file"),
    ("grade-dir", ["grade", "folder", "--out", "r.jsonl"], "", 2, "a directory"),
    ("grade-bad-tools", ["grade", "replies.jsonl", "--out", "r.jsonl", "--tools", "bad-tools.json"], "", 2,
     "bad-tools.json"),
    ("grade-bad-policy", ["grade", "replies.jsonl", "--out", "r.jsonl", "--tools", "tools.json", "--policy",
                          "policy-nul.yaml"], "", 2, "policy-nul.yaml"),
    ("grade-unknown-protocol", ["grade", "replies.jsonl", "--out", "r.jsonl", "-p", "nope"], "", 2,
     "unknown protocol"),
    ("grade-out-in-missing-folder", ["grade", "replies.jsonl", "--out", "no/such/folder/r.jsonl", "--tools",
                                     "tools.json"], "", 2, "no/such/folder"),
    ("grade-surrogate", ["grade", "replies-surrogate.jsonl", "--out", "r.jsonl", "--tools", "tools.json"], "", 0, None),
    ("grade-nan", ["grade", "replies-nan.jsonl", "--out", "r.jsonl", "--tools", "tools.json"], "", 0, None),
    ("replay-same-out", ["replay", "calls.jsonl", "--policy", "policy.yaml", "--out", "calls.jsonl",
                         "--tools", "tools.json"], "", 2, "is the input file"),
    ("replay-bad-policy", ["replay", "calls.jsonl", "--policy", "policy-bad-yaml.yaml", "--tools", "tools.json"],
     "", 2, "policy-bad-yaml.yaml"),
    # --- guard, pin, verify, tools ---
    ("guard-missing", ["guard", "nope.json"], "", 2, "nope.json"),
    ("guard-bad-json", ["guard", "bad-tools.json"], "", 2, "bad-tools.json"),
    ("guard-dir", ["guard", "folder"], "", 2, "folder"),
    ("pin-bad-json", ["pin", "bad-tools.json"], "", 2, "bad-tools.json"),
    ("verify-lock-not-json", ["verify", "tools.json", "--lock", "lock-not-json.lock"], "", 2, "lock-not-json.lock"),
    ("verify-lock-list", ["verify", "tools.json", "--lock", "lock-list.lock"], "", 2, "lock-list.lock"),
    ("verify-lock-missing", ["verify", "tools.json", "--lock", "nope.lock"], "", 2, "nope.lock"),
    ("tools-convert-bad", ["tools", "bad-tools.json"], "", 2, "bad-tools.json"),
    ("tools-convert-deep", ["tools", "deep.json"], "", 2, "deep.json"),
    # --- the command line itself ---
    ("no-command", [], "", 2, None),
    ("unknown-command", ["frobnicate"], "", 2, "invalid choice"),
    ("unknown-flag", ["validate", "call.json", "--frob"], "", 2, "unrecognized arguments"),
    ("rules-unknown-profile", ["rules", "--profile", "nope"], "", 2, "unknown profile"),
    ("call-bad-steps", ["call", "hi", "-m", "m", "--max-steps", "0", "--base-url", "http://127.0.0.1:9/v1"], "", 2,
     "--max-steps"),
]


def _lay_out(folder: Path) -> None:
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    (folder / "folder").mkdir()
    (folder / "link.jsonl").symlink_to(folder / "replies.jsonl")
    os.link(folder / "replies.jsonl", folder / "hardlink.jsonl")


def test_the_table_has_at_least_sixty_bad_inputs():
    assert len([row for row in ROWS if not row[0].endswith("-ok")]) >= 60


@pytest.mark.parametrize("argv, stdin, code, says", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_a_bad_input_ends_with_its_code_and_one_line(tmp_path, monkeypatch, capsys, argv, stdin, code, says):
    _lay_out(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    errors = [line for line in err.splitlines() if not line.startswith("toolform-rules: warning:")]
    if code == 2:
        assert len(errors) == 1 if argv else errors, err
        if says is not None:
            assert errors[0].startswith("toolform-rules: error:") and says in errors[0], err
    # nothing the command read was changed; what it wrote is whole, and nothing half-written is left
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} was changed"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]
    for written in ("r.jsonl", "d.jsonl"):  # results, decision records
        if (tmp_path / written).exists():
            for line in (tmp_path / written).read_text(encoding="utf-8").splitlines():
                json.loads(line, parse_constant=_refuse)  # strict JSON: no NaN, no Infinity


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


def test_a_duplicated_key_is_named_in_a_warning(tmp_path, monkeypatch, capsys):
    _lay_out(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "duplicate.json"]) == 1  # the last value, -1, is read, as JSON readers read it
    err = capsys.readouterr().err
    assert "warning: duplicate.json: key 'value' written twice in arguments: the last value is used" in err


def test_a_lone_surrogate_is_printed_escaped_and_refused(tmp_path, monkeypatch, capsys):
    _lay_out(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "surrogate.json", "--json"]) == 1
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["type_errors"] == ["counterparty: expected string, got str (not valid Unicode text)"]
    out.encode("utf-8")  # valid UTF-8: the surrogate is escaped in the JSON


def test_grade_results_are_written_whole_or_not_at_all(tmp_path, monkeypatch, capsys):
    """A run that fails after it began writing leaves the previous results file as it was."""
    from toolform_rules.batch import commands

    _lay_out(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.jsonl").write_text("the previous results\n")

    def crash(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("toolform_rules.batch.local.run_local", crash)
    with pytest.raises(KeyboardInterrupt):
        commands.cmd_grade(_grade_args(commands))
    assert (tmp_path / "r.jsonl").read_text() == "the previous results\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


def _grade_args(commands: Any) -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    commands.add_commands(sub, lambda c: (c.add_argument("--tools"), c.add_argument("--kind", default="auto"),
                                          c.add_argument("--profile", default="sdk"),
                                          c.add_argument("--rules", action="append", default=[])))
    return parser.parse_args(["grade", "replies.jsonl", "--out", "r.jsonl", "--tools", "tools.json", "--workers", "1"])


def test_grade_says_how_many_results_it_wrote(tmp_path, monkeypatch, capsys):
    _lay_out(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["grade", "replies.jsonl", "--out", "r.jsonl", "--tools", "tools.json", "--workers", "1",
                 "--summary", "s.json"]) == 0
    assert "1 result written to r.jsonl" in capsys.readouterr().out
    assert json.loads((tmp_path / "s.json").read_text())["written"] == 1


def test_version():
    completed = subprocess.run([sys.executable, "-m", "toolform_rules", "--version"], capture_output=True, text=True)
    assert completed.returncode == 0 and completed.stdout.startswith("toolform-rules 0.")


def test_a_closed_pipe_is_quiet():
    """``toolform-rules protocols | head -1``: the reader leaves early; no "Broken pipe", no traceback."""
    command = f"{sys.executable} -m toolform_rules protocols | head -c 10 >/dev/null"
    for _ in range(3):
        completed = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)
        assert completed.stderr == "" and completed.returncode == 0


# --- the JSON and YAML front doors, fuzzed -------------------------------------------------------

_JSONISH = st.one_of(
    st.text(max_size=80),
    st.sampled_from(list(FILES.values())[:20]).map(lambda b: b.decode("utf-8", "replace")),
    st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                 max_leaves=12).map(lambda v: json.dumps({"name": "legal_draft_v3", "arguments": v})),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_JSONISH, verb=st.sampled_from(["validate", "explain"]))
def test_fuzzed_calls_keep_the_contract(tmp_path_factory, monkeypatch, capsys, text, verb):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "policy.yaml").write_text(POLICY_OK)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    argv = ["validate", "-"] if verb == "validate" else ["explain", "policy.yaml", "-"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in err
    if code == 2:
        assert len([line for line in err.splitlines() if "error:" in line]) == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=200), st.builds(lambda cut, extra: POLICY_OK[:cut] + extra + POLICY_OK[cut:],
                                                         st.integers(0, len(POLICY_OK)), st.text(max_size=12))))
def test_fuzzed_policies_keep_the_contract(tmp_path_factory, monkeypatch, capsys, text):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "policy.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    monkeypatch.chdir(folder)
    code = main(["validate", _call_with(), "--policy", "policy.yaml"])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.splitlines()) == 1 and "policy.yaml" in err, err
