"""Bad policy input never ends in a traceback, and never in unbounded work.

Each bad file of the table goes through the Python API (``load_policy``, ``run_tests``) and
through the command line (``check``, ``validate --policy``, ``explain``, ``test``): the error
is ours, it names the file and (when the file has one) the line, and the exit code is the
verb's.  Then the bounds: a policy whose aliases expand to a billion values is refused
where it is written; one under that bound, and a constraint that compares a call's deep
lists in a loop, stop on the evaluation budget in every verb — the work counted, never
timed.  Last, a fuzz of the YAML front door: any text either loads or is a PolicyError.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolform_rules import PolicyError, jsonvalues, load_policy
from toolform_rules.cli import main
from toolform_rules.limits import PolicyLimits
from toolform_rules.policy import functions
from toolform_rules.policy.evaluate import compile_expression, evaluate_by_walking
from toolform_rules.policy.explain import LONGEST_VALUE, explain
from toolform_rules.policy.expression import read_expression
from toolform_rules.policy.testing import run_tests

CALL: dict[str, Any] = {"name": "legal_draft_v3", "arguments": {"counterparty": "A", "value": 5, "term_months": 3}}
BUDGET = PolicyLimits().evaluation_budget


def _bomb(levels: int, *, constraints: str = "") -> str:
    """Lists ``l0`` (ten letters) to ``l{levels-1}``, each ten aliases of the one before: ``l9`` holds 10^10."""
    lines = ["policy: bomb", "lists:", "  l0: &l0 [a, b, c, d, e, f, g, h, i, j]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n" + constraints


GOOD = "policy: p\nconstraints:\n  - id: p.cap\n    check: args.value <= 10\n"

# (files, the file the error names, its line or None, a fragment of the message); "policy.yaml" is the
# policy, a None content is a directory.
CASES = [
    pytest.param({"policy.yaml": GOOD.encode().replace(b"10\n", b"10\x00\n")}, "policy.yaml", 4,
                 "character #x0000 is not allowed", id="nul-byte"),
    pytest.param({"policy.yaml": b"policy: p\ndescription: \x07ring\n"}, "policy.yaml", 2,
                 "character #x0007 is not allowed", id="bell"),
    pytest.param({"policy.yaml": b"policy: p\ndescription: \x1b[2J\n"}, "policy.yaml", 2,
                 "character #x001b is not allowed", id="terminal-escape"),
    pytest.param({"policy.yaml": "policy: p\ndescription: \ufffe\n".encode()}, "policy.yaml", 2,
                 "character #xfffe is not allowed", id="non-character-fffe"),
    pytest.param({"policy.yaml": b"policy: p\ndescription: caf\xe9\n"}, "policy.yaml", 2,
                 "not UTF-8 text: byte 0xe9", id="latin-1"),
    pytest.param({"policy.yaml": "policy: p\n".encode("utf-16")}, "policy.yaml", 1,
                 "not UTF-8 text: byte 0xff", id="utf-16"),
    pytest.param({"policy.yaml": "policy: p\n\ufeffconstraints: []\n".encode()}, "policy.yaml", 2,
                 "unknown key '\\ufeffconstraints'", id="bom-inside-the-file"),
    pytest.param({"policy.yaml": b"policy: p\nconstraints:\n\t- id: p.c\n"}, "policy.yaml", 3,
                 "found character '\\t' that cannot start any token", id="tab-indentation"),
    pytest.param({"policy.yaml": b"policy: p\nconstraints:\n  - id: p.c\n    check: 'args.value > 1\n"},
                 "policy.yaml", 5, "while scanning a quoted scalar (from line 4, column 12)", id="unclosed-quote"),
    pytest.param({"policy.yaml": b"policy: p\npolicy: q\n"}, "policy.yaml", 2,
                 "key 'policy' is given twice", id="duplicate-key"),
    pytest.param({"policy.yaml": b"policy: p\n---\npolicy: q\n"}, "policy.yaml", 2,
                 "expected a single document", id="two-documents"),
    pytest.param({"policy.yaml": b"policy: p\nversion: !!int x\n"}, "policy.yaml", 2,
                 "cannot read this value as !!int", id="bad-int-tag"),
    pytest.param({"policy.yaml": b"policy: p\nversion: " + b"1" * 5000 + b"\n"}, "policy.yaml", 2,
                 "cannot read this value as !!int", id="integer-past-python-digit-limit"),
    pytest.param({"policy.yaml": b"policy: p\nlists: {a: !!python/object/apply:os.system [id]}\n"}, "policy.yaml",
                 2, "could not determine a constructor", id="python-tag"),
    pytest.param({"policy.yaml": _bomb(10).encode()}, "policy.yaml", 8,
                 "holds more than 1000000 values once its aliases are expanded", id="billion-laughs"),
    pytest.param({"policy.yaml": b"policy: p\nlists:\n  a: &a [x, *a]\n"}, "policy.yaml", 3,
                 "contains itself through an alias", id="alias-cycle"),
    pytest.param({"policy.yaml": b"policy: p\nlists:\n  a: " + b"[" * 10_000 + b"]" * 10_000 + b"\n"},
                 "policy.yaml", 3, "nested too deeply: more than 100 levels", id="nested-10000-deep"),
    pytest.param({"policy.yaml": b""}, "policy.yaml", 1, "a policy file is a mapping", id="empty-file"),
    pytest.param({"policy.yaml": b"- policy: p\n"}, "policy.yaml", 1, "a policy file is a mapping",
                 id="top-level-list"),
    pytest.param({"policy.yaml": b"just words\n"}, "policy.yaml", 1, "a policy file is a mapping",
                 id="top-level-scalar"),
    pytest.param({"policy.yaml": b"policy: p\n#" + b"x" * 1_000_000 + b"\n"}, "policy.yaml", None,
                 "larger than 1000000 bytes", id="over-a-megabyte"),
    pytest.param({"policy.yaml": None}, "policy.yaml", None, "Is a directory", id="a-directory"),
    pytest.param({"policy.yaml": b"policy: p\ninclude: [part.yaml]\n", "part.yaml": b"policy: q\nlists: {a: [\x00]}\n"},
                 "part.yaml", 2, "character #x0000 is not allowed", id="nul-in-an-included-file"),
    pytest.param({"policy.yaml": b"policy: p\ninclude: [part.yaml]\n", "part.yaml": b"policy: q\n\xff\n"},
                 "part.yaml", 2, "not UTF-8 text", id="bad-utf8-in-an-included-file"),
    pytest.param({"policy.yaml": b"policy: p\ninclude: [part.yaml]\n", "part.yaml": _bomb(10).encode()},
                 "part.yaml", 8, "aliases are expanded", id="billion-laughs-in-an-included-file"),
    pytest.param({"policy.yaml": b"policy: p\ninclude:\n  - part.yaml\n  - part.yaml\n", "part.yaml": b"policy: q\n"},
                 "policy.yaml", 4, "part.yaml is already included (at ", id="one-file-included-twice"),
]


def _write(tmp_path: Path, files: dict[str, bytes | None]) -> Path:
    for name, content in files.items():
        if content is None:
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_bytes(content)
    return tmp_path / "policy.yaml"


def _named(text: str, file: str, line: int | None) -> bool:
    return (f"{file}:{line}" in text) if line is not None else file in text


def _not_a_policy(files: dict[str, bytes | None], fragment: str) -> bool:
    """Whether ``test`` passes the file by: it walks folders of YAML, and a YAML file that is no mapping
    with ``policy:`` (a tools file, say) is none of its business; a folder it walks."""
    return files["policy.yaml"] is None or fragment == "a policy file is a mapping"


@pytest.mark.parametrize(("files", "file", "line", "fragment"), CASES)
def test_a_bad_policy_file_is_a_policy_error_at_its_place(tmp_path: Path, files: dict[str, bytes | None], file: str,
                                                          line: int | None, fragment: str) -> None:
    policy = _write(tmp_path, files)
    with pytest.raises(PolicyError) as caught:
        load_policy(policy)
    problem = caught.value.problems[0]
    assert Path(problem.source or "").name == file and problem.line == line, str(caught.value)
    assert fragment in problem.message
    assert not any(c in str(caught.value) for c in "\x00\x07\x1b")  # the excerpt does not echo them


@pytest.mark.parametrize(("files", "file", "line", "fragment"), CASES)
def test_the_test_runner_reports_a_bad_policy_file_and_goes_on(tmp_path: Path, files: dict[str, bytes | None],
                                                               file: str, line: int | None, fragment: str) -> None:
    policy = _write(tmp_path, files)
    run = run_tests([policy])
    if _not_a_policy(files, fragment):
        assert not run.results and not run.errors
        return
    assert not run.ok and len(run.errors) >= 1
    assert any(_named(error, file, line) and fragment in error for error in run.errors), run.errors


VERBS = {
    # verb: (its arguments around the policy, the exit code of a policy that cannot be used)
    "check": (lambda policy: ["check", policy], 1),
    "validate": (lambda policy: ["validate", json.dumps(CALL), "--policy", policy], 2),
    "explain": (lambda policy: ["explain", policy, json.dumps(CALL)], 2),
    # ``test`` reports a file it cannot use beside the others' results and fails the run
    "test": (lambda policy: ["test", policy], 1),
}


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize(("files", "file", "line", "fragment"), CASES)
def test_every_verb_reports_a_bad_policy_file_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  verb: str, files: dict[str, bytes | None],
                                                                  file: str, line: int | None,
                                                                  fragment: str) -> None:
    policy = _write(tmp_path, files)
    arguments, code = VERBS[verb]
    if files["policy.yaml"] is None and verb == "check":
        assert main(arguments(str(policy))) in (code, 2)  # (a directory may be refused as a usage error)
    else:
        assert main(arguments(str(policy))) == code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert not any(c in out + err for c in "\x00\x07\x1b")
    if verb == "test" and _not_a_policy(files, fragment):
        assert "no policy tests found" in err
    else:
        assert _named(out + err, file, line), out + err


def test_a_byte_order_mark_before_the_policy_is_read_past(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    policy = load_policy(tmp_path / "policy.yaml")
    assert [c.id for c in policy.constraints] == ["p.cap"]
    assert str(policy.constraints[0].source) == f"{tmp_path / 'policy.yaml'}:3"


def test_a_crlf_file_is_quoted_without_its_carriage_returns(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_bytes(GOOD.replace("10", "1 0").replace("\n", "\r\n").encode())
    with pytest.raises(PolicyError) as caught:
        load_policy(tmp_path / "policy.yaml")
    assert "\r" not in str(caught.value) and "    check: args.value <= 1 0\n" in str(caught.value)


# ------------------------------------------------------------------------------ bounded work

@contextlib.contextmanager
def _comparisons_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``check(evaluations, action)``: run ``action`` and count the steps of its deep comparisons
    (``json_equal`` calls itself for each pair it compares): at most one budget per evaluation."""
    calls = [0]
    real = jsonvalues.json_equal

    def counted(a: Any, b: Any) -> bool:
        calls[0] += 1
        return real(a, b)

    def check(evaluations: int, action: Any) -> Any:
        calls[0] = 0
        result = action()
        assert calls[0] <= evaluations * BUDGET, (calls[0], evaluations)
        return result

    with monkeypatch.context() as patch:
        patch.setattr(jsonvalues, "json_equal", counted)
        patch.setattr(functions, "json_equal", counted)
        yield check


# ``l4`` holds 111,110 values (five levels of ten, through aliases): under the load-time bound, so
# the constraints below load, and each costs more than the budget on every call.
UNDER_THE_BOUND = _bomb(5, constraints="""\
constraints:
  - id: bomb.equal
    check: all(lists.l4 == lists.l4 for x in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  - id: bomb.search
    check: '[args.counterparty] in lists.l4 or args.value > 1'
  - id: bomb.contains
    check: contains(lists.l4, lists.l3)
tests:
  - name: every constraint is past the budget
    call: {name: legal_draft_v3, arguments: {counterparty: A, value: 5, term_months: 3}}
    expect: {ok: false, fired: [bomb.equal, bomb.search, bomb.contains]}
""")


def test_aliases_under_the_bound_are_charged_by_what_they_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(UNDER_THE_BOUND)
    tools = tmp_path / "tools.json"  # arguments of any kind, so that the checker lets the comparisons through
    tools.write_text(json.dumps([{"name": "legal_draft_v3", "parameters": {"type": "object", "properties": {
        "counterparty": {}, "value": {}, "term_months": {}}}}]))
    # Were a comparison charged by its top-level length, the first constraint alone would walk
    # 10 x 111,110 values per evaluation, within its budget.
    with _comparisons_within_the_budget(monkeypatch) as check:
        policy = check(1, lambda: load_policy(path))  # (constants are computed at load, under fold_budget)
        findings = check(3, lambda: policy.evaluate(CALL["name"], CALL["arguments"]))
        assert [f.message for f in findings] == [
            f"{c}: cannot be checked (the evaluation needs more than its budget of {BUDGET} steps)"
            for c in ("bomb.equal", "bomb.search", "bomb.contains")]
        outcomes = check(3, lambda: explain(CALL, policy).constraints)
        assert [c.outcome for c in outcomes] == ["error"] * 3
        assert all("needs more than its budget" in c.message for c in outcomes)
        assert check(6, lambda: run_tests([path])).ok  # each test call validated, then explained
        assert check(1, lambda: main(["check", str(path)])) == 0
        assert check(3, lambda: main(["validate", json.dumps(CALL), "--policy", str(path), "--tools",
                                      str(tools)])) == 1
        assert check(3, lambda: main(["explain", str(path), json.dumps(CALL), "--tools", str(tools), "--json"])) == 0
        assert check(6, lambda: main(["test", str(path)])) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and len(out) < 50 * LONGEST_VALUE


def _deep_arguments() -> dict[str, Any]:
    # a and b: one item, a list of 5,000; c: 15,000 items.  Charged by top-level length, the
    # quantifier below costs 6 + 15,000 x 6 steps, under the budget, and walks 15,000 x 5,000 values.
    rows = [list(range(5_000))]
    return {"a": rows, "b": rows, "c": list(range(15_000))}


DEEP = """\
policy: deep
toolset: tools.json
constraints:
  - id: deep.same
    check: all(args.a == args.b for x in args.c)
"""


def test_a_deep_comparison_in_a_loop_over_a_calls_list_stops_on_the_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "t", "parameters": {"type": "object", "properties": {
        "a": {"type": "array"}, "b": {"type": "array"}, "c": {"type": "array"}}}}]))
    (tmp_path / "deep.yaml").write_text(DEEP)
    arguments = _deep_arguments()
    call = {"name": "t", "arguments": arguments}
    # the same call as a policy test, its lists written once and named twice
    (tmp_path / "deep_test.yaml").write_text(
        f"tests:\n  - call: {{name: t, arguments: {{a: &rows {json.dumps(arguments['a'])}, b: *rows, "
        f"c: {json.dumps(arguments['c'])}}}}}\n    expect: {{ok: false, fired: [deep.same]}}\n")
    (tmp_path / "call.json").write_text(json.dumps(call))
    policy = str(tmp_path / "deep.yaml")
    tools, call_file = str(tmp_path / "tools.json"), str(tmp_path / "call.json")
    # 7.5 x 10^7 steps of comparison per evaluation, were the cost of one its top-level length
    with _comparisons_within_the_budget(monkeypatch) as check:
        loaded = check(0, lambda: load_policy(policy))
        (finding,) = check(1, lambda: loaded.evaluate("t", arguments))
        assert finding.message.endswith(f"needs more than its budget of {BUDGET} steps)")
        (outcome,) = check(1, lambda: explain(call, loaded).constraints)
        assert outcome.outcome == "error" and "budget" in outcome.message
        run = check(2, lambda: run_tests([policy]))
        assert run.ok and run.passed == 1, run.render()
        assert check(0, lambda: main(["check", policy, "--tools", tools])) == 0
        assert check(1, lambda: main(["validate", call_file, "--policy", policy, "--tools", tools])) == 1
        assert check(1, lambda: main(["explain", policy, call_file, "--tools", tools])) == 0
        assert check(1, lambda: main(["explain", policy, call_file, "--tools", tools, "--json"])) == 0
        assert check(2, lambda: main(["test", policy])) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and len(out) < 50 * LONGEST_VALUE


def test_an_explanation_writes_a_large_value_shortened_however_often_the_expression_names_it() -> None:
    names = ", ".join(["args.rows"] * 200)
    policy = load_policy(f"policy: p\nconstraints:\n  - id: p.rows\n    check: '[{names}] == []'\n")
    rows = [f"row {i}" for i in range(100_000)]  # 1.2 MB as JSON: 240 MB written 200 times over
    explanation = explain({"name": "t", "arguments": {"rows": rows}}, policy)
    (item,) = explanation.constraints
    assert item.outcome == "fired" and len(item.check) == 203  # the comparison, two lists, 200 references
    written = json.dumps(explanation.to_dict())
    assert len(written) < 203 * 2 * LONGEST_VALUE  # (a shortened text's quotes are escaped once more)
    step = explanation.to_dict()["constraints"][0]["check"][2]
    assert step["text"] == "args.rows" and "value" not in step
    assert step["shortened"].startswith('["row 0", "row 1", ') and step["shortened"].endswith("...")
    assert len(step["shortened"]) == LONGEST_VALUE
    assert len(explanation.render()) < 203 * 200


def test_a_small_value_is_written_whole() -> None:
    policy = load_policy("policy: p\nconstraints:\n  - id: p.x\n    check: len(args.xs) < 2\n")
    steps = explain({"name": "t", "arguments": {"xs": [1, 2, 3]}}, policy).to_dict()["constraints"][0]["check"]
    assert steps[1:] == [{"text": "args.xs", "value": [1, 2, 3]}, {"text": "len(args.xs)", "value": 3}]


def test_a_policy_list_is_read_where_it_is_not_copied_for_each_use() -> None:
    # A copy per use is work no budget counts: in ``count(x in lists.l3 for x in args.c)`` it would
    # be 11,110 values copied for each item of the call's list.  Both evaluators read the list in place.
    text = _bomb(4, constraints="constraints:\n  - id: bomb.count\n"
                                "    check: count(x in lists.l3 for x in args.c) == 0\n")
    policy = load_policy(text)
    read = compile_expression(read_expression("lists.l3"), policy.lists)(policy.scope("t", {}))
    walked = evaluate_by_walking(read_expression("lists.l3"), policy.scope("t", {}))
    assert read is walked is policy.lists["l3"]
    assert policy.evaluate("t", {"c": list(range(6_000))}) == ()  # 6,000 x 14 steps: within the budget


def test_includes_that_fan_out_read_each_file_once(tmp_path: Path) -> None:
    # Without the "already included" problem, six levels of ten includes of one file read it 10^6 times.
    for level in range(6):
        included = ", ".join([f"f{level + 1}.yaml"] * 10)
        (tmp_path / f"f{level}.yaml").write_text(f"policy: f{level}\ninclude: [{included}]\n")
    (tmp_path / "f6.yaml").write_text("policy: f6\n")
    with pytest.raises(PolicyError) as caught:
        load_policy(tmp_path / "f0.yaml")
    problems = caught.value.problems
    assert len(problems) == 6 * 9 and all("is already included" in p.message for p in problems)
    assert {(Path(p.source or "").name, p.line) for p in problems} == {(f"f{level}.yaml", 2) for level in range(6)}


# ------------------------------------------------------------------------------ fuzz

VALID = """\
policy: demo
version: 2
lists:
  names: &names [alice, bob]
  more: [*names, carol]
mask: [args.card]
constraints:
  - id: demo.cap
    tools: [legal_draft_v3]
    when: has(args.value)
    check: args.value <= 1000 and lower(args.counterparty) not in lists.names
    message: "value {args.value} too big"
    severity: warning
tests:
  - name: t
    call: {name: legal_draft_v3, arguments: {value: 5, counterparty: Dave}}
    expect: {ok: true, fired: [], not_fired: [demo.cap]}
"""

# What breaks YAML readers: control and unusual characters, quotes, anchors and aliases, tags,
# indicators, directives, and numbers past what Python converts.
PIECES = st.sampled_from([
    "\x00", "\x07", "\x1b", "\x7f", "\x85", "\ufffe", "\ufeff", "\u2028", "\r", "\t", "'", '"', "\\", "&a ", "*a",
    "*names", "!!int ", "!!float ", "!!bool ", "!!binary ", "!!timestamp ", "!!set ", "!!omap ",
    "!!python/name:os.system ",
    "<<: ", "? ", "- ", "{", "}", "[", "]", ": ", ",", "\n", "  ", "# ", "%YAML 1.1\n", "---\n", "...\n", "|\n", ">-\n",
    "~", "null", "true", "2001-12-14", "0x", "0o7", ".inf", "-.nan", "1" * 5000, "[" * 200,
])
TEXT = st.characters(codec="utf-8")  # any code point but a lone surrogate, control characters too


@st.composite
def mutated_policies(draw: st.DrawFn) -> str:
    """The valid policy with a few pieces inserted, cut out or replaced."""
    text = VALID
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 30)))
        inserted = draw(st.one_of(PIECES, st.text(TEXT, max_size=4)))
        text = text[:start] + inserted + text[end if draw(st.booleans()) else start:]
    return text


@pytest.fixture(scope="module")
def empty_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nothing-here")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(TEXT), mutated_policies()))
def test_any_text_loads_or_is_a_policy_error(empty_folder: Path, text: str) -> None:
    # (a text with no line break and no ": " is read as a path: from an empty folder it names no file)
    with contextlib.chdir(empty_folder):
        try:
            policy = load_policy(text)
        except PolicyError as err:
            assert err.problems and all(p.message for p in err.problems)
            return
    # what loads can be used: on any call, findings or an explanation, never an exception
    policy.evaluate(CALL["name"], CALL["arguments"])
    explain(CALL, policy).render()


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(mutated_policies(), st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]))
def test_any_policy_file_loads_or_is_a_policy_error_and_the_runner_never_raises(
        tmp_path: Path, text: str, encoding: str) -> None:
    path = tmp_path / "policy.yaml"
    try:
        path.write_bytes(text.encode(encoding))
    except UnicodeEncodeError:  # latin-1 cannot write every character: what it writes is enough
        path.write_bytes(text.encode(encoding, "replace"))
    try:
        load_policy(path)
    except PolicyError as err:
        assert all(p.source == str(path) for p in err.problems)
    run = run_tests([path])
    assert run.ok or run.failed or run.errors
