"""The markup family's readers (issue 10): replies wrapped as models wrap them, the fast readers against the
readers they stand in for, and the family's shared pieces."""

from __future__ import annotations

import re

import pytest
from markup_family_support import SAMPLE_DOC, toolset_for

from toolform_rules import sample_toolset
from toolform_rules.calls import ToolCall
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.markup_family.shared import flow_text, lenient_value, only_fences
from toolform_rules.replies.formats.reading import tool_of
from toolform_rules.replies.formats.reading import GrammarBudget

TOOLS = sample_toolset()
TOML = get_protocol("toml_call")
YAML = get_protocol("yaml_call")
TOML_CALL = '[[call]]\nname = "legal_draft_v3"\n\n[call.arguments]\ncounterparty = "Acme"\nvalue = 1000\n'
YAML_CALL = 'name: legal_draft_v3\narguments:\n  counterparty: "Acme"\n  value: 1000\n'


def _calls(extraction) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in extraction.calls]


# ---------------------------------------------------------------------------------------------
# TOML: prose on the line of the first table, words after the last value


def test_toml_prose_before_the_first_table_on_its_line_is_skipped() -> None:
    extraction = TOML.parse("Sure! " + TOML_CALL + "term_months = 12", TOOLS)
    assert _calls(extraction) == [("legal_draft_v3", {"counterparty": "Acme", "value": 1000, "term_months": 12})]
    assert not extraction.compliant and extraction.notes == ()


@pytest.mark.parametrize("last, value", [("601", 601), ("true", True), ('"x y"', "x y"), ("{a = 1}", {"a": 1}),
                                         ("[1, 2]", [1, 2]), ("2.5", 2.5)])
def test_toml_words_after_the_last_value_are_left_with_a_note(last: str, value) -> None:
    extraction = TOML.parse(TOML_CALL + f"term_months = {last} Done.", TOOLS)
    assert _calls(extraction) == [("legal_draft_v3", {"counterparty": "Acme", "value": 1000, "term_months": value})]
    assert extraction.notes == ("words after the TOML were ignored: 'Done.'",) and not extraction.compliant


def test_toml_a_value_with_a_space_of_its_own_is_not_cut() -> None:
    """A date and a time are one value (what follows is no sentence: it starts with a digit)."""
    extraction = TOML.parse('name = "f"\nwhen = 1979-05-27 07:32:00')
    assert extraction.calls and extraction.calls[0].name == "f" and extraction.notes == ()


# ---------------------------------------------------------------------------------------------
# YAML: prose before the name on its line, a typed last value cut where a sentence starts


def test_yaml_prose_before_the_name_on_its_line_is_skipped() -> None:
    extraction = YAML.parse("Sure! " + YAML_CALL, TOOLS)
    assert _calls(extraction) == [("legal_draft_v3", {"counterparty": "Acme", "value": 1000})]
    assert not extraction.compliant


@pytest.mark.parametrize("written, value", [("601", 601), ("True", True), ("false", False), ("12.5", 12.5)])
def test_yaml_a_typed_last_value_ends_where_a_sentence_starts(written: str, value) -> None:
    key = "auto_renew" if isinstance(value, bool) else "value" if isinstance(value, float) else "term_months"
    extraction = YAML.parse(YAML_CALL.replace("  value: 1000\n", "") + f"  {key}: {written} Done.", TOOLS)
    assert _calls(extraction) == [("legal_draft_v3", {"counterparty": "Acme", key: value})]
    assert extraction.notes == ("words after the YAML were ignored: 'Done.'",) and not extraction.compliant


def test_yaml_a_value_is_cut_only_where_the_schema_types_it() -> None:
    """Without the tools, or for a text parameter, or when the first word is not of the type, the value is the
    text YAML reads."""
    text = YAML_CALL + "  term_months: 601 Done."
    assert YAML.parse(text).calls[0].arguments["term_months"] == "601 Done."
    assert YAML.parse(YAML_CALL.replace('"Acme"', "Acme Done."), TOOLS).calls[0].arguments["counterparty"] == \
        "Acme Done."
    assert YAML.parse(YAML_CALL + "  term_months: twelve Done.", TOOLS).calls[0].arguments["term_months"] == \
        "twelve Done."
    assert YAML.parse(YAML_CALL + "  term_months: 601 5", TOOLS).calls[0].arguments["term_months"] == "601 5"


# ---------------------------------------------------------------------------------------------
# the framed sentences

@pytest.mark.parametrize("protocol_id, sentence", [
    ("nl_intent", 'I will use f with a: Acme and Co, b: 2, c: {"x": 1}.'),
    ("nl_intent_structured", 'Use f with a = Acme and Co, b = 2, c = {"x": 1}.'),
])
def test_sentence_fast_reader_reads_what_the_grammar_reads(protocol_id: str, sentence: str) -> None:
    protocol = get_protocol(protocol_id)
    assert protocol.read_fast(sentence) == protocol.read_by_grammar(sentence)


# ---------------------------------------------------------------------------------------------
# the family's pieces


def test_only_fences_and_flow_text() -> None:
    assert only_fences("") and only_fences("```yaml\n\n```") and not only_fences("Sure:\n```")
    assert only_fences("`` `")  # (white space is dropped before the fence marks are looked at)
    assert flow_text({"k": [True, None, float("nan")]}, repr, str, "=", nan="nan") == "{k=[true, null, nan]}"


def test_lenient_value_spends_the_budget_only_on_the_grammar() -> None:
    budget = GrammarBudget(100)
    assert lenient_value('{"a": [1, 2]}', budget) == {"a": [1, 2]} and budget.left == 100  # strict JSON: by json
    assert lenient_value("{'a': [1, 2,],}", budget) == {"a": [1, 2]} and budget.left < 100  # the grammar's reading
    with pytest.raises(GrammarFailure):
        lenient_value("{'a': 1", budget)
    assert budget.left < 100


def test_tool_of_is_the_one_look_up() -> None:
    assert tool_of(TOOLS, "legal-draft-v3").name == "legal_draft_v3"
    assert tool_of(None, "legal_draft_v3") is None and tool_of(TOOLS, "nope") is None


@pytest.mark.parametrize("protocol_id", ["function_tags", "xml_call", "xml_generic_call"])
def test_tag_formats_read_a_reply_in_a_fence_with_an_info_string(protocol_id: str) -> None:
    protocol = get_protocol(protocol_id)
    rendered = protocol.render_calls([ToolCall("legal_draft_v3", {"value": 5})])
    for info in ("", "xml", "tool-code", "c++"):
        extraction = protocol.parse(f"```{info}\n{rendered}\n```", toolset_for([SAMPLE_DOC]))
        assert [(c.name, c.arguments) for c in extraction.calls] == [("legal_draft_v3", {"value": "5"})], info
        assert extraction.compliant == bool(re.fullmatch(r"[\w.+-]*", info)), info


# ---------------------------------------------------------------------------------------------
# the notes of a tag format's reply are bounded


def test_a_reply_of_many_noted_pieces_keeps_the_first_notes_and_counts_the_rest() -> None:
    """Text inside an unclosed ``<tool_call>`` is noted piece by piece: 5,000 tags give the first
    MAX_NOTES notes, by place, and one that counts the others (not 10,000 notes)."""
    from toolform_rules.replies.formats.markup_family.shared import MAX_NOTES

    text = '<tool_call> legal_draft_v3 {"counterparty": ' * 5_000
    notes = get_protocol("function_tags").parse(text, TOOLS).notes
    assert len(notes) == MAX_NOTES + 1, len(notes)
    assert notes[0].startswith("line 1, column 1: ") and notes[1].startswith("line 1, column 12: "), notes[:2]
    assert re.fullmatch(r"\d+ more notes like these were left out", notes[-1]), notes[-1]
