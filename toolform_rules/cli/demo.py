"""``toolform-rules demo``: the bundled sample, validated, parsed, normalised, run in the loop and under a policy."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..calls import ToolCall
from ..engine.verbs import NORMALISATION_PROFILES, normalize_call, validate_arguments
from ..samples import sample_tool, sample_toolset
from ..schema.toolset import Toolset
from .inputs import EXIT_VALID, PROG, load_policy
from .render import _dump, _indent, plural, render_loop, render_reply, render_report

#: The demo's calls: (what it shows, the call, the profiles it is validated under).
DEMO_CALLS: tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...] = (
    ("A valid call",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 12000, "term_months": 24}},
     ("sdk",)),
    ("The seed's invalid call: a negative value, a word for a number, an undeclared argument",
     {"name": "legal_draft_v3",
      "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}},
     ("sdk",)),
    ("A title-cased tool name and a camelCase argument: names resolve across naming conventions",
     {"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", "value": 10, "termMonths": 12}},
     ("sdk",)),
    ("A required argument left out",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10}},
     ("sdk",)),
    ("A nested value outside its enum",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12,
                                              "contract_details": {"status": "approved"}}},
     ("sdk",)),
    ("A tool the toolset does not have",
     {"name": "send_payment", "arguments": {"to": "acme", "amount": 10}},
     ("sdk",)),
    ("An integral float for an integer: sdk accepts 12.0, the study's validator does not",
     {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 10, "term_months": 12.0}},
     ("sdk", "study")),
)

#: The call ``protocols`` and the demo render in every answer protocol.
DEMO_PROTOCOL_CALL = ToolCall("legal_draft_v3", {"counterparty": "Acme", "value": 12000, "term_months": 24})

#: The call each protocol's reference entry renders: a nested object and a string that needs quoting.
DEMO_NESTED_CALL = ToolCall("legal_draft_v3", {"counterparty": 'Acme, "Ltd"', "value": 1200.5, "term_months": 12,
                                               "auto_renew": True,
                                               "contract_details": {"contract_id": "C-1", "status": "draft"}})

#: Replies the demo parses: (protocol, the reply a model wrote).
DEMO_REPLIES: tuple[tuple[str, str], ...] = (
    ("json_object", 'Sure, drafting it now: {"name": "LegalDraftV3", "arguments": {"counterparty": "Acme", '
                    '"value": 12000, "termMonths": 24}}'),
    ("python_call", "<think>The user wants a 2-year contract.</think>\n"
                    'legal_draft_v3(counterparty="Acme", value=-5, term_months=24)'),
    ("cli_call", "legal_draft_v3 --counterparty Acme --value 12000 --term-months 24 --auto-renew"),
    ("xml_call", '<function_calls><invoke name="legal_draft_v3"><parameter name="counterparty">Acme</parameter>'
                 '<parameter name="value">12000</parameter><parameter name="term_months">ten</parameter>'
                 "</invoke></function_calls>"),
)

#: The demo's sloppy call, shown before and after normalize_call.
DEMO_POLICY_CALLS = [
    {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 250000, "term_months": 36}},
    {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 9000, "term_months": 48,
                                             "autoRenew": True}},
]

DEMO_SLOPPY = {"name": "legal_draft_v3",
               "arguments": {"counterparty": " Acme ", "value": "5", "term_months": 12, "auto_renew": "yes"}}


def cmd_demo(args: argparse.Namespace) -> int:
    tools = sample_toolset()
    out = [f"{PROG} demo: calls checked against legal_draft_v3, the study's sample tool.", ""]
    number = 0
    for number, (title, call, profiles) in enumerate(DEMO_CALLS, start=1):
        out.append(f"{number}. {title}")
        out.append(f"   call: {_dump(call)}")
        for profile in profiles:
            report = validate_arguments(call, tools, profile=profile)
            out.append(_indent(render_report(call["name"], report, profile=profile, tools=tools), "   "))
        out.append("")
    number += 1
    out.append(f"{number}. normalize_call: the values the study compared after normalising")
    out.append(f"   call:       {_dump(DEMO_SLOPPY)}")
    as_written = validate_arguments(DEMO_SLOPPY, tools)
    out.append(f"   as written: {'valid' if as_written.ok else 'invalid'} "
               f"({'; '.join(f.message for f in as_written.findings) or 'no errors'})")
    for strictness in NORMALISATION_PROFILES:
        normalised = normalize_call(DEMO_SLOPPY, sample_tool(), strictness)
        verdict = "valid" if validate_arguments(normalised, tools).ok else "invalid"
        out.append(f"   {strictness + ':':11} {_dump(normalised.arguments)}  ({verdict})")
    out.append("")
    from ..replies.parse import parse_reply

    for protocol_id, text in DEMO_REPLIES:
        number += 1
        out.append(f"{number}. A reply in {protocol_id}")
        out.append(_indent(text, "   | "))
        out.append(_indent(render_reply(parse_reply(text, tools, protocol_id)), "   "))
        out.append("")
    number += 1
    out.extend(_demo_loop(number, tools))
    number += 1
    out.extend(_demo_policy(number, tools))
    out.append(f"Try one yourself: {PROG} validate '{_dump(DEMO_CALLS[1][1])}'")
    out.append(f"              or: echo 'legal_draft_v3(counterparty=\"Acme\", value=1, term_months=2)' | "
               f"{PROG} parse --protocol python_call")
    print("\n".join(out))
    return EXIT_VALID

#: the demo's scripted model: a call the validator refuses, the same call repaired after the feedback, an answer
DEMO_LOOP_REPLIES = (
    '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 12000, "term_months": "two years"}}',
    '{"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": 12000, "term_months": 24}}',
    "Drafted: contract C-1042 with Acme, 24 months, 12,000.",
)


def _demo_loop(number: int, tools: Toolset) -> list[str]:
    """The demo's call loop: a scripted model (StubClient) repairs its call after the validator's feedback."""
    from ..loop.clients import StubClient
    from ..loop.call_loop import CallLoop

    def draft(**arguments: Any) -> dict[str, Any]:
        return {"contract_id": "C-1042", "status": "draft", "months": arguments["term_months"]}

    result = CallLoop(StubClient(DEMO_LOOP_REPLIES), tools, executors={"legal_draft_v3": draft}).run(
        "Draft a two-year contract with Acme worth 12,000.")
    return [f"{number}. The call loop (on_invalid=\"feedback\"): a scripted model repairs its call after feedback",
            _indent(render_loop(result), "   "), ""]


def _demo_policy(number: int, tools: Toolset) -> list[str]:
    """The demo's last step: calls the schema accepts, decided by the example policy for the sample tool."""
    from ..engine.rule_files import rules_directory
    from ..policy.explain import explain

    path = rules_directory() / "examples" / "contracts.yaml"
    relative = os.path.relpath(path)  # findings name the file as it was given: short from the checkout
    policy = load_policy(relative if not relative.startswith("..") else path, tools=tools)
    shown = f"rules/examples/{path.name}"
    out = [f"{number}. A policy: {shown} (v{policy.version}, sha256 {policy.digest[:12]}...), "
           f"{plural(len(policy.constraints), 'constraint')} the schema cannot say"]
    for call in DEMO_POLICY_CALLS:
        report = validate_arguments(call, tools, policy=policy)
        out.append(f"   call: {_dump(call)}")
        out.append(f"   schema: {'valid' if validate_arguments(call, tools).ok else 'invalid'}; with the policy:")
        out.append(_indent(render_report(call["name"], report, profile="sdk", tools=tools), "   "))
    out.append(f"   {PROG} explain {shown} CALL shows why; for the first call:")
    lines = explain(DEMO_POLICY_CALLS[0], policy, tools).render().splitlines()[1:]
    first = lines[:next((i for i, line in enumerate(lines[1:], 1) if not line.startswith(" ")), len(lines))]
    out.extend(f"   {line}" for line in first)
    out.append("")
    return out
