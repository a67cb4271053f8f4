"""yaml_call: round trips, the fast path (libyaml) held to the grammar, replies as models write them, robustness."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from markup_family_support import (CALL_SETTINGS, NASTY, SAMPLE_DOC, calls_on, json_values, reference_calls, texts,
                                   toolset_for)
from support.compare import equal_json, identical
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls

from toolform_rules.replies.formats import get_protocol
from toolform_rules.grammar import GrammarFailure
from toolform_rules.replies.formats.markup_family.shared import UNREAD
from toolform_rules.replies.formats.markup_family.yaml_call import by_grammar, by_libyaml, resolve, yaml_flow, yaml_key, yaml_string

PROTOCOL = get_protocol("yaml_call")
DOCS = [SAMPLE_DOC, {"name": "f", "parameters": {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "object"}, "d": {"type": "array"},
    "e": {"type": "boolean"}, "g": {"type": "number"}}, "required": ["a"]}},
        {"name": "g", "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}}}]
TOOLSET = toolset_for(DOCS)


# YAML flow values give each value back with its type (3 and 3.0 apart) and keys in order: identical
@CALL_SETTINGS
@given(calls_on(text_values=False, several=False))
def test_round_trip_one_call(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=identical)


@CALL_SETTINGS
@given(calls_on(text_values=False, several=True))
def test_round_trip_several_calls(case) -> None:
    calls, docs = case
    assert_round_trip(PROTOCOL, calls, toolset_for(docs), values=identical)


# documents in the many spellings block YAML allows, to hold the grammar against libyaml

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _./()-]*[A-Za-z0-9)]|[A-Za-z]")


def _plain_ok(text: str) -> bool:
    """Whether ``text`` can be written as a plain scalar that reads back as this string."""
    return bool(_PLAIN.fullmatch(text)) and isinstance(resolve(text), str) and "  " not in text


def _single_ok(text: str) -> bool:
    """Whether ``text`` can be single-quoted (printable, no spaces at its ends)."""
    return all(" " <= ch <= "~" or "\u00a0" <= ch <= "\ud7ff" for ch in text) and text == text.strip()


def _literal_ok(text: str) -> bool:
    """Whether ``text`` can be a literal block scalar (several lines, none blank or with odd characters)."""
    lines = text.split("\n")
    return ("\n" in text and all(_single_ok(line) and line for line in lines[:-1]) and
            (lines[-1] == "" or _single_ok(lines[-1]) and lines[-1]))


@st.composite
def yaml_scalar(draw, value):
    """A YAML spelling of the scalar ``value`` (plain, quoted, or the spellings of booleans and null)."""
    if isinstance(value, str):
        style = draw(st.integers(0, 2))
        if style == 0 and _plain_ok(value):
            return value
        if style == 1 and _single_ok(value):
            return "'" + value.replace("'", "''") + "'"
        return yaml_string(value)
    if isinstance(value, bool):
        return draw(st.sampled_from(["true", "True", "TRUE"] if value else ["false", "False", "FALSE"]))
    if value is None:
        return draw(st.sampled_from(["null", "~", "Null", ""]))
    return yaml_flow(value)


@st.composite
def yaml_block(draw, value, indent: int) -> list[str]:
    """``value`` as block YAML lines at ``indent`` (a mapping or a sequence), or ``None`` for a scalar."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict) and value and draw(st.integers(0, 3)):
        for key, item in value.items():
            head = f"{pad}{yaml_key(key) if draw(st.booleans()) or not _plain_ok(key) else key}:"
            lines.extend(draw(_entry(head, item, indent)))
        return lines
    if isinstance(value, list) and value and draw(st.integers(0, 3)):
        for item in value:
            lines.extend(draw(_entry(f"{pad}-", item, indent)))
        return lines
    return [pad + draw(yaml_scalar(value)) if not isinstance(value, (dict, list)) else pad + yaml_flow(value)]


@st.composite
def _entry(draw, head: str, item, indent: int) -> list[str]:
    """The lines of one entry (``head`` is ``key:`` or ``-``): a nested block, a literal block or a scalar."""
    if isinstance(item, (dict, list)) and item and draw(st.integers(0, 2)):
        step = draw(st.sampled_from([2, 4])) if not head.endswith("-") else draw(st.sampled_from([2, 3]))
        inner = draw(yaml_block(item, indent + step))
        if head.endswith("-") and draw(st.booleans()) and isinstance(item, dict):
            first = inner[0].lstrip()  # "- key: value" on one line
            return [f"{head} {first}"] + inner[1:]
        return [head] + inner
    if isinstance(item, str) and _literal_ok(item) and draw(st.booleans()):
        chomp = "" if item.endswith("\n") else "-"
        body = item[:-1] if item.endswith("\n") else item
        pad = " " * (indent + 2 + (2 if head.endswith("-") else 0))
        return [f"{head} |{chomp}"] + [pad + line if line else "" for line in body.split("\n")]
    scalar = draw(yaml_scalar(item)) if not isinstance(item, (dict, list)) else yaml_flow(item)
    comment = "  # note" if draw(st.integers(0, 5)) == 0 else ""
    return [f"{head} {scalar}{comment}".rstrip() if scalar else head]


@st.composite
def yaml_documents(draw):
    """Block YAML documents (a mapping or a sequence at the top), with a comment sometimes."""
    data = draw(st.dictionaries(texts(6), json_values(2), min_size=1, max_size=4)
                | st.lists(json_values(2), min_size=1, max_size=3))
    lines = draw(yaml_block(data, 0))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), "# a comment")
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


RENDERED = calls_on(text_values=False).map(lambda case: (PROTOCOL.render_calls(case[0]) + "\n", True))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(yaml_documents().map(lambda text: (text, False)) | RENDERED)
def test_libyaml_and_the_grammar_agree(drawn: tuple[str, bool]) -> None:
    """The fast path held to the grammar: where libyaml reads a document (block YAML in its many spellings, or
    a rendered reply, which it always reads), the grammar reads the same value, types and key order included."""
    text, rendered = drawn
    expected = by_libyaml(text)
    assert expected is not UNREAD or not rendered, text
    assume(expected is not UNREAD)
    try:
        got, problems, _ = by_grammar(text)
    except GrammarFailure as failure:  # pragma: no cover - shown on failure
        raise AssertionError(f"{text!r}: {failure}")
    assert problems == []
    assert identical(got, expected), (text, got, expected)


@pytest.mark.parametrize("text, value", [
    ("a: >\n  p\n   q\n  r\n\n\n  s\n", {"a": "p\n q\nr\n\ns\n"}),
    ("a: |+\n  keep\n\n\nb: 1", {"a": "keep\n\n\n", "b": 1}),
    ("a: |2\n    two extra\n", {"a": "  two extra\n"}),
    ("- k: |\n    in an item\n  j: 2\n", [{"k": "in an item\n", "j": 2}]),
    ("a: plain text\n  continued\n\n  and on\nb: 2\n", {"a": "plain text continued\nand on", "b": 2}),
    ('x: {"a": [1, 2,\n   3], b: null, c: d e}\n', {"x": {"a": [1, 2, 3], "b": None, "c": "d e"}}),
    ("a: 0o17\nb: 0x1F\nc: .5\nd: -.inf\ne: 1e-07\nf: 010\ng: yes\nh: 2024-01-01\n",
     {"a": 15, "b": 31, "c": 0.5, "d": float("-inf"), "e": 1e-07, "f": 10, "g": "yes", "h": "2024-01-01"}),
])
def test_grammar_and_libyaml_on_block_scalars_folding_and_typing(text: str, value) -> None:
    expected = by_libyaml(text)
    assert expected is not UNREAD and identical(expected, value), expected
    got, problems, _ = by_grammar(text)
    assert problems == []
    assert identical(got, value), got


AGREE = [
    'name: f\narguments:\n  a: 1\n  b: "x y"\n',
    'Sure:\n```yaml\nname: f\narguments:\n  a: 1\n```\nDone.',
    '- name: f\n  arguments:\n    a: 1\n- name: g\n  arguments:\n    b: 2\n',
    'name: f\narguments: {a: 1}\n',
    'tool: f\nargs:\n  a: 1\n',
    'name: f\n',
    'name: f\narguments:\n  b: |\n    multi\n    line\n',
    'calls:\n  - name: f\n    arguments:\n      a: 1\n',
    'name: f\nparameters:\n  a: 1\n',
    'name: F\narguments:\n  a: 1\n  e: true\n',
    'name: f\narguments:\n  a: 1\n  c: {"x": [1, 2]}\n  d: [p, q]\n',
    'name: legal_draft_v3\narguments:\n  counterparty: "Acme, \\"Ltd\\""\n  value: 1200.5\n  term_months: 12\n'
    '  auto_renew: True\n  contract_details: {"contract_id": "C-1", "status": "draft"}\n',
]


@pytest.mark.parametrize("reply", AGREE)
def test_model_like_replies_agree_with_the_reference(reply: str) -> None:
    ours = read_calls(PROTOCOL, reply, TOOLSET)
    assert ours, reply  # every reply here holds a call: agreeing on none would prove nothing
    assert_calls(ours, reference_calls("yaml_call", reply, DOCS), equal_json, reply)


def test_divergence_calls_written_one_after_another() -> None:
    """Divergence: the reference renders several calls as mappings one after another, then reads only the
    last (YAML keeps the last of a repeated key); a second ``name:`` at the margin starts a new call here."""
    reply = 'name: f\narguments:\n  a: 1\nname: g\narguments:\n  b: 2\n'
    assert reference_calls("yaml_call", reply, DOCS) == [("g", {"b": 2})]
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1}), ("g", {"b": 2})], equal_json, reply)


def test_divergence_documents_and_prose() -> None:
    """Divergence: ``---`` between calls and prose around the YAML are read (the reference's YAML load fails
    and it falls back to the bare tool name, without arguments)."""
    documents = 'name: f\narguments:\n  a: 1\n---\nname: g\narguments:\n  b: 2\n'
    for reply in (documents, 'I will call it.\nname: f\narguments:\n  a: 1\n\nThat is all.'):
        assert reference_calls("yaml_call", reply, DOCS) == [("f", {})]
    assert_calls(read_calls(PROTOCOL, documents, TOOLSET), [("f", {"a": 1}), ("g", {"b": 2})], equal_json, documents)
    extraction = PROTOCOL.parse('I will call it.\nname: f\narguments:\n  a: 1\n\nThat is all.')
    assert [(c.name, c.arguments) for c in extraction.calls] == [("f", {"a": 1})] and not extraction.compliant


def test_divergence_yaml_1_1_words() -> None:
    """Divergence: YAML 1.2 typing.  The reference (PyYAML's YAML 1.1) reads ``yes`` as true, ``010`` as 8 and
    a date as a ``datetime.date`` (not a JSON value); here they stay as written, and the schema decides."""
    reply = 'name: f\narguments:\n  b: 2024-01-01\n  e: yes\n  a: 010\n'
    ref = reference_calls("yaml_call", reply, DOCS)[0][1]
    assert ref["e"] is True and ref["a"] == 8 and type(ref["b"]).__name__ == "date"
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"b": "2024-01-01", "e": "yes", "a": 10})], equal_json,
                 reply)


def test_divergence_plain_value_with_a_colon() -> None:
    """Divergence: a plain value holding ": " is not YAML (PyYAML refuses the document and the reference keeps
    only the tool's name); the grammar reads the value as the text it is."""
    reply = 'name: f\narguments:\n  b: Note: bring ID\n  a: 1\n'
    assert reference_calls("yaml_call", reply, DOCS) == [("f", {})]
    extraction = PROTOCOL.parse(reply)
    assert extraction.calls[0].arguments == {"b": "Note: bring ID", "a": 1} and extraction.compliant


def test_unsafe_tags_are_never_constructed() -> None:
    extraction = assert_total(PROTOCOL, 'name: f\narguments:\n  a: !!python/object/apply:os.system ["echo hi"]\n',
                              malformed=True)
    assert extraction.notes[0].startswith("the YAML could not be read: line 3, column 6: expected ")


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = assert_total(PROTOCOL, 'Here it is:\nname: f\narguments:\n  a: [1, 2\n  b: 3\n', malformed=True)
    assert extraction.notes[0].startswith("the YAML could not be read: line 5, column 3: expected ")
    indented = assert_total(PROTOCOL, 'name: f\narguments:\n  a: 1\n    b: 2\n', malformed=True)
    assert indented.notes[0].startswith("the YAML could not be read: line 4, column 5")


def test_compliance() -> None:
    assert PROTOCOL.parse('name: f\narguments:\n  a: 1\n').compliant
    assert PROTOCOL.parse('```yaml\nname: f\narguments:\n  a: 1\n```').compliant
    assert not PROTOCOL.parse('Sure!\nname: f\narguments:\n  a: 1\n').compliant
    twice = PROTOCOL.parse('name: f\narguments:\n  a: 1\n  a: 2\n')
    assert twice.calls[0].arguments == {"a": 2} and not twice.compliant and "given twice" in twice.notes[0]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="name:arguments- \n\t|>{}[],'\"#&*!?%@`~0123.") .map(lambda t: "name: f\n" + t))
def test_never_raises_on_yaml_like_text(text: str) -> None:
    assert_total(PROTOCOL, text)


@pytest.mark.parametrize("name", NASTY)
def test_nasty_text_is_answered(name: str) -> None:
    """No nasty reply is a YAML call: each is answered with no calls and a note; as an argument's value
    it is answered too (some are readable values, some break the document)."""
    assert_total(PROTOCOL, NASTY[name], malformed=True)
    assert_total(PROTOCOL, "name: f\narguments:\n  a: " + NASTY[name])


def test_divergence_title_cased_keys() -> None:
    """Divergence: ``Name:``/``Arguments:`` (as some models capitalise them) name the call; the reference
    finds none."""
    reply = "Name: f\nArguments:\n  a: 1\n"
    assert reference_calls("yaml_call", reply, DOCS) == []
    assert_calls(read_calls(PROTOCOL, reply, TOOLSET), [("f", {"a": 1})], equal_json, reply)


# ---------------------------------------------------------------------------------------------
# the lenient step: prose before the name on its line, a typed last value cut where a sentence starts

YAML_CALL = 'name: legal_draft_v3\narguments:\n  counterparty: "Acme"\n  value: 1000\n'
SAMPLE = toolset_for([SAMPLE_DOC])


def test_prose_before_the_name_on_its_line_is_skipped() -> None:
    extraction = PROTOCOL.parse("Sure! " + YAML_CALL, SAMPLE)
    assert [(c.name, c.arguments) for c in extraction.calls] == [("legal_draft_v3", {"counterparty": "Acme",
                                                                                      "value": 1000})]
    assert not extraction.compliant


@pytest.mark.parametrize("written, value", [("601", 601), ("True", True), ("false", False), ("12.5", 12.5)])
def test_a_typed_last_value_ends_where_a_sentence_starts(written: str, value) -> None:
    key = "auto_renew" if isinstance(value, bool) else "value" if isinstance(value, float) else "term_months"
    extraction = PROTOCOL.parse(YAML_CALL.replace("  value: 1000\n", "") + f"  {key}: {written} Done.", SAMPLE)
    assert [(c.name, c.arguments) for c in extraction.calls] == [("legal_draft_v3", {"counterparty": "Acme",
                                                                                      key: value})]
    assert extraction.notes == ("words after the YAML were ignored: 'Done.'",) and not extraction.compliant


def test_a_value_is_cut_only_where_the_schema_types_it() -> None:
    """Without the tools, or for a text parameter, or when the first word is not of the type, the value is the
    text YAML reads."""
    assert PROTOCOL.parse(YAML_CALL + "  term_months: 601 Done.").calls[0].arguments["term_months"] == "601 Done."
    assert PROTOCOL.parse(YAML_CALL.replace('"Acme"', "Acme Done."), SAMPLE).calls[0].arguments["counterparty"] == \
        "Acme Done."
    for written in ("twelve Done.", "601 5"):
        assert PROTOCOL.parse(YAML_CALL + f"  term_months: {written}", SAMPLE).calls[0].arguments["term_months"] == \
            written

