"""url_call: round trips, model-like replies against the reference, never raising, grammar notes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from text_family_support import (NASTY_INPUTS, ROUND_TRIP, SAMPLE, assert_round_trip, bfcl_calls, calls_for, ours,
                                 ref_example, ref_parse, same)

from toolform_rules import ToolCall
from toolform_rules.protocols import get_protocol
from toolform_rules.protocols.base import Extraction
from toolform_rules.grammar import GrammarFailure
from toolform_rules.protocols.text_family import MAX_GRAMMAR_CHARS, value_text
from toolform_rules.protocols.url_call import _request_fast, _request_grammar

P = get_protocol("url_call")


def test_registered_and_text_valued() -> None:
    assert P.info.id == "url_call" and P.info.text_values and P.info.parallel


@ROUND_TRIP
@given(calls=calls_for(SAMPLE))
def test_round_trip_sample_tool(calls: list[ToolCall]) -> None:
    assert_round_trip(P, calls, SAMPLE)


@ROUND_TRIP
@given(drawn=bfcl_calls())
def test_round_trip_bfcl(drawn) -> None:
    toolset, calls = drawn
    assert_round_trip(P, calls, toolset)


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
    assert_round_trip(P, [call], SAMPLE)


def test_dotted_tool_names_map_back() -> None:
    toolset = next(iter(t for t in __import__("text_family_support").bfcl_toolsets() if "." in t.names()[0]))
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
    got, want = ours(P, text), ref_parse("url_call", text)
    assert len(got) == len(want)
    for (name, args), (ref_name, ref_args) in zip(got, want):
        assert name == ref_name and same(args, ref_args), (got, want)


def test_divergence_http_version_and_origin() -> None:
    """Divergence: a full request line (``https://host/...`` and ``HTTP/1.1``) is read by its parts;
    the reference glues `` HTTP/1.1`` onto the last value."""
    text = "POST https://api.example.com/legal-draft-v3?counterparty=Acme&value=3&term_months=4 HTTP/1.1"
    assert ours(P, text) == [("legal_draft_v3", {"counterparty": "Acme", "value": 3, "term_months": 4})]
    assert ref_parse("url_call", text)[0][1]["term_months"] == "4 HTTP/1.1"


def test_divergence_longer_paths() -> None:
    """Divergence: the last path segment names the tool (``/v1/tools/legal-draft-v3``); the
    reference finds no call in a longer path."""
    text = "POST /v1/tools/legal-draft-v3?counterparty=Acme&value=3&term_months=4"
    assert ours(P, text)[0][0] == "legal_draft_v3"
    assert ref_parse("url_call", text) == []


def test_divergence_spaces_at_either_end_are_kept() -> None:
    """Divergence: ``counterparty=+Acme+`` is " Acme " — the encoding says so; the reference strips it."""
    text = "POST /legal-draft-v3?counterparty=+Acme+&value=3&term_months=4"
    assert ours(P, text)[0][1]["counterparty"] == " Acme "
    assert ref_parse("url_call", text)[0][1]["counterparty"] == "Acme"


def test_divergence_bare_key_is_true() -> None:
    """Divergence: a bare key ``&auto_renew`` is the flag true (as in HTML forms); the reference reads false."""
    text = "POST /legal-draft-v3?counterparty=Acme&value=3&term_months=4&auto_renew"
    assert ours(P, text)[0][1]["auto_renew"] is True
    assert ref_parse("url_call", text)[0][1]["auto_renew"] is False


def test_divergence_flattened_nesting_and_repeated_keys() -> None:
    """Divergence: ``contract_details[status]=draft`` builds the nested object and a key given twice
    makes a list (query-string conventions); the reference keeps the bracketed key as an unknown
    argument and the last of the repeated values."""
    text = ("POST /legal-draft-v3?counterparty=A&counterparty=B&value=3&term_months=4&"
            "contract_details[status]=draft")
    extraction = P.parse(text, SAMPLE)
    assert ours(P, text)[0][1] == {"counterparty": ["A", "B"], "value": 3, "term_months": 4,
                                   "contract_details": {"status": "draft"}}
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
    """Past MAX_GRAMMAR_CHARS only the fast reader runs (the grammar would take seconds); a note says so."""
    text = "POST /x?" + "a=b&" * 15000 + " x y"
    assert len(text) > MAX_GRAMMAR_CHARS
    extraction = P.parse(text, SAMPLE)
    assert any("characters long" in note for note in extraction.notes), extraction.notes


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_never_raises_on_any_text(text: str) -> None:
    result = P.parse(text, SAMPLE)
    assert isinstance(result, Extraction) and not any("internal error" in n for n in result.notes)


@pytest.mark.parametrize("text", NASTY_INPUTS, ids=range(len(NASTY_INPUTS)))
def test_never_raises_on_nasty_inputs(text: str) -> None:
    result = P.parse(text, SAMPLE)
    assert isinstance(result, Extraction) and not any("internal error" in n for n in result.notes)


def test_render_never_raises_on_lone_surrogates() -> None:
    assert "%ED%A0%80" in P.render_calls([ToolCall("f", {"a": "\ud800"})])


SEGMENT = st.builds(lambda head, rest: head + rest,
                    st.sampled_from(["POST /legal-draft-v3", "/f", "get https://h.io/a/b", "PUT /x/"]),
                    st.text(alphabet=" ?&=#%+/ab[]\t", max_size=25))


@settings(max_examples=500, deadline=None)
@given(segment=st.one_of(SEGMENT, calls_for(SAMPLE, 1).map(lambda calls: P.render_calls(calls))))
def test_fast_path_agrees_with_the_grammar(segment: str) -> None:
    fast = _request_fast(segment)
    try:
        slow = _request_grammar(segment)
    except GrammarFailure:
        slow = None
    if fast is not None:
        assert slow == fast, (segment, fast, slow)


def test_instructions() -> None:
    assert "POST /tool-name?" in P.instructions(SAMPLE)
