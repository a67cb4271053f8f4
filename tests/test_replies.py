"""parse_reply's pipeline: reasoning, no-call declarations, names, grading rules, never an exception."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolform_rules import load_tools, parse_reply, sample_toolset
from toolform_rules.replies.parse import declares_no_call, remove_reasoning, renest

FLIGHTS = load_tools([{"name": "book_flight", "parameters": {"type": "object", "properties": {
    "passenger": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                  "required": ["name"]},
    "date": {"type": "string"}}, "required": ["passenger", "date"]}}])
CALL = '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 5, "term_months": 12}}'


@pytest.mark.parametrize("text, expected", [
    ("<think>maybe</think>X", "X"),
    ("<think>a</think>B<think>c</think>D", "BD"),
    ("<THINK>shout</THINK>X", "X"),
    ("<thinking>t</thinking>X", "X"),
    ("<think>never closed", ""),
    ("<think>never closed\n\nX", ""),
    ("the template opened it</think>X", "X"),
    ("no reasoning", "no reasoning"),
])
def test_reasoning_is_removed(text: str, expected: str) -> None:
    assert remove_reasoning(text)[0] == expected


def test_a_call_after_reasoning_is_read_and_the_removal_reported() -> None:
    reply = parse_reply(f"<think>The user wants a contract {CALL}?</think>{CALL}", sample_toolset(), "json_object")
    assert reply.reasoning_removed and len(reply.calls) == 1 and reply.ok


@pytest.mark.parametrize("text", ["No suitable tool is available for this.", "None of the tools apply here.",
                                  "I don't need any tool for that.", "NO_CALL"])
def test_a_no_call_declaration_is_recognised(text: str) -> None:
    reply = parse_reply(text, sample_toolset(), "json_object")
    assert reply.no_call_declared and not reply.calls and reply.ok and reply.matched_syntax == "explicit-no-call"
    assert declares_no_call(text)


def test_an_invented_tool_is_hallucinated_and_rejected() -> None:
    reply = parse_reply('{"name": "make_coffee", "arguments": {"size": "L"}}', sample_toolset(), "json_object")
    assert reply.hallucinated == ("make_coffee",) and not reply.calls
    assert reply.rejected[0].reason == "unknown tool" and reply.rejected[0].validation["unknown_tool"]


def test_a_title_cased_name_resolves_and_keeps_its_spelling() -> None:
    reply = parse_reply(CALL.replace("legal_draft_v3", "LegalDraftV3"), sample_toolset(), "json_object")
    call = reply.calls[0]
    assert (call.name, call.resolved_name, call.valid) == ("LegalDraftV3", "legal_draft_v3", True)


def test_renest_moves_a_flat_argument_into_its_object() -> None:
    tool = FLIGHTS.tools[0]
    out, repairs = renest({"name": "Ann", "age": 3, "date": "2024-01-01"}, tool)
    assert out == {"passenger": {"name": "Ann", "age": 3}, "date": "2024-01-01"}
    assert repairs == ("re-nested name into passenger", "re-nested age into passenger")
    assert renest({"passenger": {"name": "A"}, "date": "d"}, tool) == ({"passenger": {"name": "A"}, "date": "d"}, ())


FLAT = '{"name": "book_flight", "arguments": {"name": "Ann", "date": "2024-01-01"}}'


def test_main_leaves_json_protocols_as_written() -> None:
    reply = parse_reply(FLAT, FLIGHTS, "json_object", rule="main")
    assert reply.calls[0].repairs == () and reply.calls[0].validation["missing_required"] == ["passenger"]


def test_symmetric_renests_under_every_protocol() -> None:
    reply = parse_reply(FLAT, FLIGHTS, "json_object", rule="symmetric")
    call = reply.calls[0]
    assert call.arguments == {"passenger": {"name": "Ann"}, "date": "2024-01-01"} and call.valid
    assert call.repairs == ("re-nested name into passenger",)


def test_as_written_keeps_a_flat_json_call_as_written() -> None:
    reply = parse_reply(FLAT, FLIGHTS, "json_object", rule="as_written")
    assert reply.calls[0].repairs == () and not reply.calls[0].valid


def test_as_written_refuses_a_text_format_call_that_needs_renesting() -> None:
    text = "book_flight --name Ann --date 2024-01-01"
    assert parse_reply(text, FLIGHTS, "cli_call").calls[0].repairs == ("re-nested name into passenger",)
    reply = parse_reply(text, FLIGHTS, "cli_call", rule="as_written")
    assert not reply.calls and reply.rejected[0].reason.startswith("written flat")


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown grading rule"):
        parse_reply(CALL, sample_toolset(), "json_object", rule="lenient")


def test_a_malformed_reply_says_where_the_grammar_stopped() -> None:
    reply = parse_reply('{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme",', sample_toolset(),
                        "json_object")
    assert not reply.calls and "line 1, column" in reply.note and "expected" in reply.note


def test_validate_false_gives_no_verdict() -> None:
    call = parse_reply(CALL, sample_toolset(), "json_object", validate=False).calls[0]
    assert call.validation is None and call.valid


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1")),
                      st.sampled_from(["", "{", "[" * 5000, "<think>", "\x00", '{"name": 1}', "{" * 100_000])))
def test_any_text_gives_a_reply_never_an_exception(text: str) -> None:
    reply = parse_reply(text, sample_toolset(), "json_object")
    assert isinstance(reply.to_dict(), dict)


@pytest.mark.parametrize("text", [None, b"\xff\xfe{}", 42])
def test_text_that_is_not_a_string_is_read_and_noted(text: object) -> None:
    assert parse_reply(text, sample_toolset(), "json_object").note


def test_normalized_arguments_and_validation_are_computed_when_read_and_kept() -> None:
    """A grader reading only ``valid`` does not pay for them; read, they are what normalize_call gives."""
    import attrs

    from toolform_rules import normalize_call, sample_tool

    text = CALL.replace('"Acme"', '" ACME "')
    call = parse_reply(text, sample_toolset(), "json_object").calls[0]
    assert "normalized_arguments" not in vars(call) and "validation" not in vars(call)
    wanted = normalize_call({"name": "legal_draft_v3", "arguments": call.arguments}, sample_tool())
    assert call.normalized_arguments == wanted.arguments and call.normalized_arguments["counterparty"] == "acme"
    assert call.normalized_arguments is call.normalized_arguments  # computed once, then kept
    assert call.validation == call.report.to_dict() and call.validation["ok"] is True
    assert call == parse_reply(text, sample_toolset(), "json_object").calls[0]
    assert call != attrs.evolve(call, valid=False)


@pytest.mark.parametrize("text, expected", [
    ("İ<think>x</think>Y", "İY"),  # lower() would lengthen the text and shift every index after İ
    ("<think>a</think>" * 3 + "Z", "Z"),
    ("<think>a" + "</think>b" * 2, "b"),  # the second closer is a stray one: what follows it stays
])
def test_reasoning_positions_are_the_texts_own(text: str, expected: str) -> None:
    assert remove_reasoning(text)[0] == expected


def test_many_reasoning_blocks_are_removed_in_one_scan() -> None:
    text = "<think>x</think>" * 50_000 + "f(a=1)"
    assert remove_reasoning(text) == ("f(a=1)", True)
