"""The real replies of ``tests/data/replies/engine_cases.jsonl`` and how to grade them.

Each case has a serving engine's ``format`` label, the reply text and the calls that
engine's test suite expects.  Labels that are answer protocols of the study map to a
protocol id (the table in the data README); the toolset is built from the expected
calls, each argument typed as its expected value is (a string argument — ReAct's free
text — becomes the tool's one string parameter, ``input``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "replies" / "engine_cases.jsonl"

LABELS: dict[str, str] = {
    "hermes": "tool_call_tags",
    "llama3_json": "json_object",
    "json_array": "json_array",
    "mistral_json_array": "json_array",
    "pythonic": "python_list_call",
    "lfm2_pythonic": "python_list_call",
    "olmo3_pythonic": "python_list_call",
    "qwen3_coder_xml": "function_tags",
    "function_tag_json": "function_tags",
    "invoke_xml": "xml_call",
    "anthropic_legacy_xml": "xml_call",
    "react": "react",
}

FREE_TEXT_PARAMETER = "input"


def case_key(case: dict[str, Any]) -> tuple[str, str]:
    """A case's name in the lists of named misses: its label and the first 12 hex digits of its reply's sha256."""
    return case["format"], hashlib.sha256(case["reply"].encode()).hexdigest()[:12]


def all_cases() -> list[dict[str, Any]]:
    """Every case of the corpus (each label is a protocol id: a study protocol or a model-native format)."""
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def cases() -> list[dict[str, Any]]:
    """The cases whose label maps to a study protocol."""
    return [row for row in all_cases() if row["format"] in LABELS]


def _json_type(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return {"type": "array", "items": _json_type(value[0]) if value else {}}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _json_type(v) for k, v in value.items()}}
    return {}


def expected_calls(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The expected calls with free-text arguments as the one string parameter."""
    out = []
    for call in case["calls"]:
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            arguments = {FREE_TEXT_PARAMETER: arguments}
        out.append({"name": call["name"], "arguments": arguments})
    return out


def toolset_json(case: dict[str, Any]) -> list[dict[str, Any]]:
    """OpenAI-style tool definitions covering every expected call of ``case``."""
    tools: dict[str, dict[str, Any]] = {}
    for call in expected_calls(case):
        tool = tools.setdefault(call["name"], {"name": call["name"], "parameters": {"type": "object",
                                                                                    "properties": {}}})
        for key, value in call["arguments"].items():
            tool["parameters"]["properties"].setdefault(key, _json_type(value))
    if not tools:  # a no-call case still needs a toolset: a tool nobody calls
        tools["unused_tool"] = {"name": "unused_tool", "parameters": {"type": "object", "properties": {}}}
    return list(tools.values())
