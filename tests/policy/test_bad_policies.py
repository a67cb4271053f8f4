"""Bad policies, and the problem each must give: what, on which line and column, in which field.

A policy author fixes a policy from the error alone, so the place matters as much as the
message: the line and column (1-based, in characters) of the token at fault, which the
caret of ``str(err)`` then shows.  Each snippet is written one YAML line per argument of
``_yaml`` so that the line numbers below can be read off the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolform_rules import PolicyError, load_policy, sample_toolset

TOOLS = "sample_toolset"  # a marker: the case is loaded with tools=sample_toolset()


def _yaml(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def _constraint(check: str, *more: str) -> str:
    """A policy whose one constraint (``demo.c``, line 3) has ``check`` on line 4, then ``more``."""
    return _yaml("policy: demo", "constraints:", "  - id: demo.c", f"    check: {check}", *more)


CASES = [
    # --- the file itself ----------------------------------------------------------------
    pytest.param(_yaml("policy: demo", "constraints: [", "  - id: a"), None,
                 "not valid YAML", 3, 3, None, id="yaml-syntax-error"),
    pytest.param(_yaml("- a", "- b"), None,
                 "a policy file is a mapping", 1, 1, None, id="not-a-mapping"),
    pytest.param(_yaml("constraints:", "  - id: a", "    check: 'true'"), None,
                 "required key 'policy' is missing", 1, 1, "policy", id="missing-policy"),
    pytest.param(_yaml("policy: demo", "frobnicate: 1", "constraints: []"), None,
                 "unknown key 'frobnicate'", 2, 1, "frobnicate", id="unknown-top-level-key"),
    pytest.param(_yaml("policy: demo", "version: [1, 2]"), None,
                 "version must be an integer or a string", 2, 10, "version", id="version-is-a-list"),
    # --- a constraint's fields ------------------------------------------------------------
    pytest.param(_constraint("'true'", "    chek: x"), None,
                 "unknown key 'chek'", 5, 5, "constraints[0].chek", id="unknown-constraint-key"),
    pytest.param(_constraint("'true'", "    severity: fatal"), None,
                 "severity must be one of error, warning, not 'fatal'", 5, 15, "constraints[0].severity",
                 id="bad-severity"),
    pytest.param(_constraint("'true'", "    bucket: nowhere"), None,
                 "bucket must be one of", 5, 13, "constraints[0].bucket", id="bad-bucket"),
    pytest.param(_constraint("'true'", "    on_error: ignore"), None,
                 "on_error must be one of fail, skip, not 'ignore'", 5, 15, "constraints[0].on_error",
                 id="bad-on-error"),
    pytest.param(_yaml("policy: demo", "constraints:", "  - id: demo.c", "    check: args.a > 1",
                       "  - id: demo.c", "    check: args.a > 2"), None,
                 "constraint id 'demo.c' is already used at <policy>:3", 5, 5, "demo.c.id", id="duplicate-id"),
    # --- expression syntax (line 4: "    check: " is 11 characters, the expression starts at column 12) ---
    pytest.param(_constraint("(args.value > 1"), None,
                 "expected ')', found the end of the text", 4, 27, "demo.c.check", id="unclosed-paren"),
    pytest.param(_constraint("args.value >"), None,
                 "found the end of the text", 4, 24, "demo.c.check", id="dangling-operator"),
    pytest.param(_constraint("a = 1"), None,
                 "found '='", 4, 14, "demo.c.check", id="assignment"),
    pytest.param(_constraint("a.b("), None,
                 "found '('", 4, 15, "demo.c.check", id="method-call"),
    pytest.param(_constraint('args.counterparty == "\\q"'), None,
                 "unknown escape '\\\\q' in a string", 4, 34, "demo.c.check", id="unknown-escape"),
    # YAML's own escapes (\" and \\) shift the file's columns against the expression's offsets.
    pytest.param(_constraint('"args.a == \\"\\\\q\\""'), None,
                 "unknown escape '\\\\q' in a string", 4, 25, "demo.c.check", id="unknown-escape-in-yaml-quotes"),
    pytest.param(_constraint("not"), None,
                 "found the end of the text", 4, 15, "demo.c.check", id="lone-not"),
    pytest.param(_constraint("all(args > 0 for args in args.xs)"), None,
                 "'args' cannot name a loop variable", 4, 29, "demo.c.check", id="loop-variable-args"),
    pytest.param(_constraint("lower(x for x in args.xs) == 'a'"), None,
                 "lower() does not take a generator", 4, 12, "demo.c.check", id="generator-on-non-quantifier"),
    # --- names, functions, lists, patterns (no tools) ---------------------------------------
    pytest.param(_constraint("frob(args.value)"), None,
                 "unknown function frob()", 4, 12, "demo.c.check", id="unknown-function"),
    pytest.param(_constraint("lower(args.a, args.b) == 'x'"), None,
                 "lower() takes 1 argument, not 2", 4, 12, "demo.c.check", id="wrong-arity"),
    pytest.param(_constraint("amount > 1"), None,
                 "unknown name 'amount'", 4, 12, "demo.c.check", id="unknown-name"),
    pytest.param(_constraint("args.a in lists.nope"), None,
                 "unknown list 'nope'", 4, 22, "demo.c.check", id="unknown-list"),
    pytest.param(_constraint("matches(args.a, args.p)"), None,
                 "must be written as a string literal", 4, 28, "demo.c.check", id="matches-non-literal-pattern"),
    pytest.param(_constraint("'matches(args.a, \"(a)\\\\1\")'"), None,
                 "not a pattern RE2 can match in linear time", 4, 29, "demo.c.check",
                 id="matches-back-reference"),
    # --- messages (line 5: "    message: " then the quote at column 14, the text from column 15) ---
    pytest.param(_constraint("args.a > 1", '    message: "value {args.a is too big"'), None,
                 "a '{' is never closed", 5, 21, "demo.c.message", id="message-unclosed-brace"),
    pytest.param(_constraint("args.a > 1", '    message: "value } is too big"'), None,
                 "a '}' closes nothing", 5, 21, "demo.c.message", id="message-stray-close-brace"),
    pytest.param(_constraint("args.a > 1", '    message: "value {args.a +} is too big"'), None,
                 "found the end of the text", 5, 30, "demo.c.message", id="message-field-syntax-error"),
    # --- tests ------------------------------------------------------------------------------
    pytest.param(_yaml("policy: demo", "constraints:", "  - id: demo.c", "    check: args.a > 1", "tests:",
                       "  - name: t", "    call: {name: f, arguments: {a: 1}}",
                       "    expect: {ok: false, fired: [demo.nope]}"), None,
                 "the test names constraint 'demo.nope'", 8, 33, "expect", id="test-names-unknown-constraint"),
    # --- against the tools ------------------------------------------------------------------
    pytest.param(_constraint("args.amount > 1"), TOOLS,
                 "unknown argument 'amount': legal_draft_v3 declares", 4, 12, "demo.c.check", id="unknown-argument"),
    pytest.param(_constraint('args.value <= "x"'), TOOLS,
                 "compares number with string", 4, 26, "demo.c.check", id="number-against-string"),
    pytest.param(_constraint('args.contract_details.status == "done"'), TOOLS,
                 "'done' is not one of args.contract_details.status's values", 4, 44, "demo.c.check",
                 id="value-outside-enum"),
    pytest.param(_constraint("args.value > 1", "    tools: [no_such_tool]"), TOOLS,
                 "no tool matches 'no_such_tool'", 5, 13, "demo.c.tools", id="no-such-tool"),
    pytest.param(_constraint("args.value > 1", "    tools:", "      - legal_draft_v3", "      - no_such_tool"), TOOLS,
                 "no tool matches 'no_such_tool'", 7, 9, "demo.c.tools", id="no-such-tool-in-block-list"),
    pytest.param(_constraint("len(args.value) > 1"), TOOLS,
                 "argument 1 of len() must be array or object or string; args.value is number", 4, 16,
                 "demo.c.check", id="len-of-a-number"),
    pytest.param(_constraint("args.value + 1"), TOOLS,
                 "a check must be boolean; args.value + 1 is number", 4, 12, "demo.c.check",
                 id="check-is-a-number"),
    pytest.param(_constraint("args.value > 1", "    when: args.counterparty == 1"), TOOLS,
                 "compares string with number", 5, 32, "demo.c.when", id="when-string-against-number"),
    # --- block scalars: the expression's second line is the file's line 6 ---------------------
    pytest.param(_yaml("policy: demo", "constraints:", "  - id: demo.c", "    check: |",
                       "      args.value > 1 and", "      args.term_months <= )"), None,
                 "found ')'", 6, 27, "demo.c.check", id="block-scalar-second-line"),
    pytest.param(_yaml("policy: demo", "constraints:", "  - id: demo.c", "    check: >",
                       "      args.value > 1 and", "      args.term_months <= )"), None,
                 "found ')'", 6, 27, "demo.c.check", id="folded-block-second-line"),
    pytest.param(_yaml("policy: demo", "constraints:", "  - id: demo.c", "    check: |",
                       "      args.value > 1 and", "        args.term_months <= )"), None,
                 "found ')'", 6, 29, "demo.c.check", id="block-scalar-indented-second-line"),
    pytest.param(_yaml("policy: demo", "constraints:", "  - id: demo.c", "    check: |",
                       "      args.value > 1 and", "        frob(args.term_months)"), None,
                 "unknown function frob()", 6, 9, "demo.c.check", id="block-scalar-indented-unknown-function"),
]


def _problems(text: str, tools: str | None) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        load_policy(text, tools=sample_toolset() if tools == TOOLS else None)
    return caught.value


@pytest.mark.parametrize(("text", "tools", "fragment", "line", "column", "field"), CASES)
def test_bad_policy_gives_its_problem_at_its_place(text: str, tools: str | None, fragment: str, line: int,
                                                   column: int, field: str | None) -> None:
    err = _problems(text, tools)
    assert len(err.problems) == 1, [str(p) for p in err.problems]
    (problem,) = err.problems
    assert fragment in problem.message
    assert (problem.source, problem.field) == ("<policy>", field)
    assert (problem.line, problem.column) == (line, column), str(problem)


def test_three_independent_problems_are_reported_together_by_line() -> None:
    # The bad severity is found first (while the entries are structured), the expression
    # problems later: the report is still in the order of the file.
    text = _yaml("policy: demo", "constraints:",
                 "  - id: a", "    check: args.value >",
                 "  - id: b", "    check: frob(1)",
                 "  - id: c", "    check: 'true'", "    severity: fatal")
    err = _problems(text, None)
    assert [(p.line, p.field) for p in err.problems] == [(4, "a.check"), (6, "b.check"),
                                                          (9, "constraints[2].severity")]
    assert str(err).startswith("3 problems in the policy:")


def test_a_top_level_problem_does_not_hide_the_constraints_problems() -> None:
    text = _yaml("policy: demo", "frobnicate: 1", "constraints:", "  - id: a", "    check: args.value >")
    err = _problems(text, None)
    assert [(p.line, p.field) for p in err.problems] == [(2, "frobnicate"), (5, "a.check")]


def test_the_message_shows_the_line_and_a_caret_under_the_column() -> None:
    err = _problems(_constraint("args.value = 1"), None)
    lines = str(err).split("\n")
    at = lines.index("<policy>:4:23, field 'demo.c.check': " + err.problems[0].message)
    assert lines[at + 1] == "        check: args.value = 1"
    assert lines[at + 2] == "    " + " " * 22 + "^"
    # the caret stands under the '=' of the source line shown above it
    assert lines[at + 1][lines[at + 2].index("^")] == "="


def test_a_file_names_itself_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(_constraint("args.value <= \"x\"", "    tools: [legal_draft_v3]"), encoding="utf-8")
    for source in (path, str(path)):
        with pytest.raises(PolicyError) as caught:
            load_policy(source, tools=sample_toolset())
        (problem,) = caught.value.problems
        assert (problem.source, problem.line, problem.column) == (str(path), 4, 26)
        assert f"{path}:4:26" in str(caught.value)
        assert "        check: args.value <= \"x\"\n" + "    " + " " * 25 + "^" in str(caught.value)


def test_a_good_policy_beside_the_bad_ones_loads() -> None:
    # The table's snippets fail for their one fault only: mended, the same shape loads.
    policy = load_policy(_constraint("args.value > 1", "    tools: [legal_draft_v3]", "    severity: warning"),
                         tools=sample_toolset())
    assert [c.id for c in policy.constraints] == ["demo.c"]
