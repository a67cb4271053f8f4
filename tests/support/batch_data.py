"""Input files for batch grading: mixed replies in six protocols — right, wrong, garbled, unknown tools,
no call at all — with the calls expected of some, and malformed lines at known places."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from toolform_rules import ToolCall, get_protocol, load_tools, sample_toolset

PROTOCOLS = ("json_object", "python_call", "xml_call", "yaml_call", "react", "hermes")

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14}}}}}
MAIL = {"type": "function", "function": {
    "name": "send_email", "description": "Send an email.",
    "parameters": {"type": "object", "required": ["to", "body"], "properties": {
        "to": {"type": "string"}, "body": {"type": "string"},
        "options": {"type": "object", "properties": {"urgent": {"type": "boolean"},
                                                      "cc": {"type": "array", "items": {"type": "string"}}}}}}}}


def tool_docs() -> list[dict[str, Any]]:
    return sample_toolset().to_openai() + [WEATHER, MAIL]


def write_tools(folder: Path) -> Path:
    path = folder / "tools.json"
    path.write_text(json.dumps(tool_docs()), encoding="utf-8")
    return path


def _call(rng: random.Random) -> dict[str, Any]:
    kind = rng.randrange(3)
    if kind == 0:
        return {"name": "legal_draft_v3", "arguments": {
            "counterparty": rng.choice(["Acme", " acme ", "Globex"]), "value": rng.choice([5, -3, "7", 12.5]),
            "term_months": rng.choice([12, 0, 3])}}
    if kind == 1:
        arguments: dict[str, Any] = {"city": rng.choice(["Paris", "paris", "Oslo"])}
        if rng.random() < 0.5:
            arguments["unit"] = rng.choice(["celsius", "Fahrenheit", "kelvin"])
        if rng.random() < 0.5:
            arguments["days"] = rng.choice([1, 3, 30, "2"])
        return {"name": rng.choice(["get_weather", "GetWeather", "get_wether"]), "arguments": arguments}
    arguments = {"to": "bob@example.com", "body": rng.choice(["hi", "see you"])}
    if rng.random() < 0.4:
        arguments["options"] = {"urgent": rng.choice([True, "yes"]), "cc": ["ann@example.com"]}
    if rng.random() < 0.1:
        del arguments["body"]
    return {"name": "send_email", "arguments": arguments}


def record(rng: random.Random, index: int) -> dict[str, Any]:
    protocol = PROTOCOLS[index % len(PROTOCOLS)]
    calls = [_call(rng) for _ in range(1 if rng.random() < 0.85 else 2)]
    shape = rng.random()
    if shape < 0.05:
        reply = "No suitable tool is available for this request."
        calls = []
    elif shape < 0.1:
        reply = get_protocol(protocol).render_calls([ToolCall(**c) for c in calls])
        reply = reply[: rng.randrange(1, max(2, len(reply)))]  # cut short: garbled
    else:
        reply = get_protocol(protocol).render_calls([ToolCall(**c) for c in calls])
        if rng.random() < 0.2:
            reply = "Let me check that.\n" + reply
    out: dict[str, Any] = {"id": f"r{index}", "reply": reply}
    if index % 7:
        out["protocol"] = protocol  # the others take --protocol
    if index % 4 == 0:
        out["expected"] = [{"name": c["name"], "arguments": c["arguments"]} for c in calls] \
            if rng.random() < 0.5 else [_call(rng)]
    return out


BAD_LINES = {
    3: "{not json",
    11: "[1, 2, 3]",
    17: '{"id": "no-reply"}',
    23: '{"id": "bad-protocol", "reply": "x", "protocol": "no_such_protocol"}',
    29: '{"id": "bad-expected", "reply": "x", "protocol": "json_object", "expected": {"name": "f"}}',
    31: '{"id": "reply-not-text", "reply": 5, "protocol": "json_object"}',
}


def write_replies(path: Path, count: int, *, seed: int = 15, bad: bool = True) -> list[dict[str, Any]]:
    """``count`` records (and, with ``bad``, the malformed lines of :data:`BAD_LINES` and blank lines) as JSON
    Lines; returns the records, ``None`` for a malformed line, in file order."""
    rng = random.Random(seed)
    written: list[dict[str, Any] | None] = []
    with path.open("w", encoding="utf-8") as handle:
        line = 0
        index = 0
        while index < count:
            line += 1
            if bad and line in BAD_LINES:
                handle.write(BAD_LINES[line] + "\n")
                written.append(None)
            elif bad and line % 1000 == 999:
                handle.write("\n")  # a blank line: no record, but it keeps its number
            else:
                item = record(rng, index)
                index += 1
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
                written.append(item)
    return written


def toolset() -> Any:
    return load_tools(tool_docs())
