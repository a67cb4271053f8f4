"""url_call: round trips, model-like replies against the reference, never raising, grammar notes."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.bfcl import record_toolsets
from support.compare import equal_json
from support.protocol_checks import assert_calls, assert_round_trip, assert_total, read_calls, render
from text_family_support import (ROUND_TRIP, SAMPLE, assert_fast_path_agrees, assert_reads_as_the_reference,
                                 bfcl_calls, calls_for, nasty_cases, ref_example, ref_parse, single_calls)

from toolform_rules import ToolCall
from toolform_rules.limits import DEFAULT_LIMITS
from toolform_rules.replies.formats import get_protocol
from toolform_rules.replies.formats.text_family.shared import value_text

P = get_protocol("url_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "url_call" and P.info.text_values and P.info.parallel


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE, values=equal_json)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset, values=equal_json)


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_text_level(calls: list[ToolCall]) -> None:
    extraction = P.parse(P.render_calls(calls), SAMPLE)
    for raw, call in zip(extraction.calls, calls, strict=True):
        assert raw.arguments == {k: value_text(v) for k, v in call.arguments.items()}


def test_the_example_matches_the_reference() -> None:
    call = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                       "contract_details": {"contract_id": "C-1", "status": "draft"}})
    assert P.example(call) == ref_example("url_call", call.name, call.arguments)
    assert_round_trip(P, [call], SAMPLE, values=equal_json)


def test_dotted_tool_names_map_back() -> None:
    toolset = next(t for t in record_toolsets() if "." in t.names()[0])
    name = toolset.names()[0]
    text = P.render_calls([ToolCall(name, {})])
    assert text == "POST /" + name.replace("_", "-")
    assert [c.name for c in P.parse(text, toolset).calls] == [name]


AGREE = [
    "POST /legal-draft-v3?counterparty=Acme&value=3&term_months=4",
    "GET /legal-draft-v3?counterparty=Acme%20Ltd&value=3&term-months=4",
    "Sure:\n```http\nPOST /legal_draft_v3?counterparty=Acme&value=3&term_months=4\n```\nDone.",
    "POST /legal-draft-v3?counterparty=Acme%2C+%22Ltd%22&value=1200.5&term_months=12&auto_renew=True&"
    "contract_details=%7B%22contract_id%22%3A+%22C-1%22%2C+%22status%22%3A+%22draft%22%7D",
    "POST /legal-draft-v3?counterparty=A&value=1&term_months=2\nPOST /legal-draft-v3?counterparty=B&value=3&"
    "term_months=4",
    "post /LegalDraftV3?counterparty=x%7Cy%3Dz&value=0.5&term_months=600&auto_renew=false",
    "POST /legal-draft-v3",
]


@pytest.mark.parametrize("text", AGREE)
def test_model_like_replies_agree_with_the_reference(text: str) -> None:
    assert_reads_as_the_reference(P, text)


def test_divergence_http_version_and_origin() -> None:
    """Divergence: a full request line (``https://host/...`` and ``HTTP/1.1``) is read by its parts;
    the reference glues `` HTTP/1.1`` onto the last value."""
    text = "POST https://api.example.com/legal-draft-v3?counterparty=Acme&value=3&term_months=4 HTTP/1.1"
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": "Acme", "value": 3, "term_months": 4})], equal_json)
    assert ref_parse("url_call", text)[0][1]["term_months"] == "4 HTTP/1.1"


def test_divergence_longer_paths() -> None:
    """Divergence: the last path segment names the tool (``/v1/tools/legal-draft-v3``); the
    reference finds no call in a longer path."""
    text = "POST /v1/tools/legal-draft-v3?counterparty=Acme&value=3&term_months=4"
    assert read_calls(P, text, SAMPLE)[0][0] == "legal_draft_v3"
    assert ref_parse("url_call", text) == []


def test_divergence_spaces_at_either_end_are_kept() -> None:
    """Divergence: ``counterparty=+Acme+`` is " Acme " — the encoding says so; the reference strips it."""
    text = "POST /legal-draft-v3?counterparty=+Acme+&value=3&term_months=4"
    assert read_calls(P, text, SAMPLE)[0][1]["counterparty"] == " Acme "
    assert ref_parse("url_call", text)[0][1]["counterparty"] == "Acme"


def test_divergence_bare_key_is_true() -> None:
    """Divergence: a bare key ``&auto_renew`` is the flag true (as in HTML forms); the reference reads false."""
    text = "POST /legal-draft-v3?counterparty=Acme&value=3&term_months=4&auto_renew"
    assert read_calls(P, text, SAMPLE)[0][1]["auto_renew"] is True
    assert ref_parse("url_call", text)[0][1]["auto_renew"] is False


def test_divergence_flattened_nesting_and_repeated_keys() -> None:
    """Divergence: ``contract_details[status]=draft`` builds the nested object and a key given twice
    makes a list (query-string conventions); the reference keeps the bracketed key as an unknown
    argument and the last of the repeated values."""
    text = ("POST /legal-draft-v3?counterparty=A&counterparty=B&value=3&term_months=4&"
            "contract_details[status]=draft")
    extraction = P.parse(text, SAMPLE)
    assert_calls(read_calls(P, text, SAMPLE),
                 [("legal_draft_v3", {"counterparty": ["A", "B"], "value": 3, "term_months": 4,
                                      "contract_details": {"status": "draft"}})], equal_json)
    assert "read as a list" in extraction.notes[0]
    assert ref_parse("url_call", text)[0][1] == {"counterparty": "B", "value": 3.0, "term_months": 4,
                                                 "contract_details[status]": "draft"}


def test_nesting_that_does_not_fit_is_noted() -> None:
    extraction = P.parse("POST /f?a=1&a[b]=2&t[]=x&t[]=y", None)
    assert extraction.calls[0].arguments == {"a": "1", "t": ["x", "y"]}
    assert "left out" in extraction.notes[0]


def test_without_a_toolset() -> None:
    assert P.parse("POST /legal-draft-v3?term-months=4", None).calls[0].arguments == {"term_months": "4"}
    assert P.parse("POST /legal-draft-v3", None).calls[0].name == "legal_draft_v3"


def test_prose_and_compliance() -> None:
    assert not P.parse(AGREE[2], SAMPLE).compliant
    assert P.parse(AGREE[0], SAMPLE).compliant


def test_malformed_reply_says_where_the_grammar_stopped() -> None:
    extraction = P.parse("Request:\nPOST /legal-draft-v3?counterparty=Acme Ltd&value=3", SAMPLE)
    assert extraction.calls == () and not extraction.compliant
    (note,) = extraction.notes
    assert "line 2, column 40" in note and "expected" in note and "'Ltd'" in note


def test_a_long_call_outside_the_plain_form_is_not_given_to_the_grammar() -> None:
    """Past Limits.reply_grammar_chars only the fast reader runs (the grammar would take seconds); a call it
    cannot read (this one is malformed near its end) is left out, and a note says why."""
    text = "POST /x?" + "a=b&" * 15000 + " x y"
    assert len(text) > DEFAULT_LIMITS.reply_grammar_chars
    extraction = assert_total(P, text, SAMPLE, malformed=True)
    assert any("longer than the grammar reads in one reply" in note for note in extraction.notes), extraction.notes


#: none of the nasty inputs holds a request line that cannot be read (a bare ``%`` is read as written)
MALFORMED: set[str] = set()


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert_total(P, text, SAMPLE)


@pytest.mark.parametrize(("text", "malformed"), nasty_cases(MALFORMED))
def test_never_raises_on_nasty_inputs(text: str, malformed: bool) -> None:
    assert_total(P, text, SAMPLE, malformed=malformed)


def test_render_never_raises_on_lone_surrogates() -> None:
    assert "%ED%A0%80" in P.render_calls([ToolCall("f", {"a": "\ud800"})])


@ROUND_TRIP
@given(drawn=single_calls())
def test_fast_path_reads_every_rendered_request(drawn) -> None:
    """A request line as we write it is the plain form: the fast path reads it, as the grammar does."""
    toolset, calls = drawn
    assert_fast_path_agrees(P.read_fast, P.read_grammar, render(P, calls, toolset), reads=True)


SEGMENT = st.builds(lambda head, rest: head + rest,
                    st.sampled_from(["POST /legal-draft-v3", "/f", "get https://h.io/a/b", "PUT /x/"]),
                    st.text(alphabet=" ?&=#%+/ab[]\t", max_size=25))


@settings(max_examples=200, deadline=None)
@given(segment=SEGMENT)
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    """Any text: what the fast path reads the grammar reads alike."""
    fast, _ = assert_fast_path_agrees(P.read_fast, P.read_grammar, segment)
    event("the fast path read it" if fast is not None else "the fast path declined")


@pytest.mark.parametrize(("segment", "fast_reads"), [
    ("POST /legal-draft-v3?a=b&b", True),
    ("get https://h.io/a/b?a=+b#ab", True),
    ("/f[a]?b[]=a", True),
    ("/f? a", False),
    ("PUT /x/?&=a", False),
])
def test_fast_path_on_known_segments(segment: str, fast_reads: bool) -> None:
    """Segments of SEGMENT's own alphabet, so its draws include ones the fast path reads."""
    assert_fast_path_agrees(P.read_fast, P.read_grammar, segment, reads=fast_reads)


def test_instructions() -> None:
    assert "POST /tool-name?" in P.instructions(SAMPLE)
