"""Cold start: importing the package loads nothing, and each use loads only what it needs.

What each process imports is behaviour and can be asserted; how long it takes is measured
by bench/startup.py (recorded in docs/performance.md), never here.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolform_rules
from toolform_rules.replies.formats import REGISTRY
from test_architecture import cycles, import_graph

#: Libraries and parts of the package that a plain validation has no use for.
HEAVY = ("lark", "re2", "toolform_rules.policy", "toolform_rules.replies.formats", "toolform_rules.grammar",
         "toolform_rules.replies.parse")

#: What reading a reply that is strict JSON has no use for: Lark (and the regex engine it loads),
#: RE2, the YAML reader and cattrs (the built-in rules come from the rule cache), the policy machinery.
NOT_FOR_A_JSON_REPLY = ("lark", "regex", "re2", "yaml", "cattrs", "toolform_rules.policy")
#: The protocol modules a json_object reply needs: the interface, the protocol, the shared value readers
#: and the text-value typing that ``replies`` imports.
JSON_OBJECT_MODULES = {"toolform_rules.replies.formats", "toolform_rules.replies.formats.json_family", "toolform_rules.replies.formats.base", "toolform_rules.replies.formats.json_family.json_object",
                       "toolform_rules.replies.formats.json_family.shared", "toolform_rules.replies.formats.reading",
                       "toolform_rules.replies.formats.values", "toolform_rules.replies.formats.text_values",
                       "toolform_rules.replies.formats.duplicates"}
#: The protocols that carry calls as JSON: a well-formed reply is read by ``json.loads``, never the grammar.
JSON_FAMILY = ("json_object", "json_array", "jsonl_call", "code_block_json", "native", "tool_call_tags",
               "two_step_call", "slot_fill_call")

CALL = {"name": "legal_draft_v3", "arguments": {"counterparty": "Acme", "value": -5, "term_months": "ten",
                                                "colour": "red"}}


def loaded_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (with ``env`` added to the environment)."""
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})})
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


def test_importing_the_package_imports_none_of_it() -> None:
    added = loaded_after("import toolform_rules") - loaded_after("pass")
    assert sorted(m for m in added if m.startswith("toolform_rules")) == ["toolform_rules", "toolform_rules.version"]
    # nothing else but the standard library's import machinery
    assert {m.split(".")[0] for m in added} <= {"toolform_rules", "__future__", "importlib", "warnings"}


def test_validating_loads_no_grammar_policy_or_protocol() -> None:
    modules = loaded_after("from toolform_rules import sample_toolset, validate_arguments\n"
                           f"assert validate_arguments({CALL!r}, sample_toolset()).n_errors == 3")
    assert heavy(modules) == []


def test_the_command_line_validates_without_the_policy_machinery() -> None:
    modules = loaded_after("from toolform_rules.cli import main\n"
                           f"assert main(['validate', {json.dumps(CALL)!r}]) == 1")
    assert heavy(modules) == []


def test_a_policy_loads_what_it_needs_when_used() -> None:
    modules = loaded_after("from toolform_rules import load_policy\n"
                           "load_policy('policy: p\\nconstraints:\\n  - id: p.c\\n    check: args.a > 1\\n')")
    assert "lark" in modules and "toolform_rules.policy" in modules


def test_every_public_name_is_there_when_asked_for() -> None:
    for name in toolform_rules.__all__:
        assert getattr(toolform_rules, name) is not None, name
    assert set(toolform_rules.__all__) <= set(dir(toolform_rules))
    with pytest.raises(AttributeError):
        toolform_rules.no_such_name  # noqa: B018


def test_the_public_names_come_from_where_they_are_defined() -> None:
    exports = toolform_rules._EXPORTS
    assert sorted(exports) == sorted(toolform_rules.__all__)
    for name, module in exports.items():
        defined = importlib.import_module(f"toolform_rules{module}")
        assert getattr(defined, name) is getattr(toolform_rules, name), name


def test_the_deferred_imports_make_no_cycle_either() -> None:
    """The package's ``__init__`` imports its names on first use: as edges, they close no cycle."""
    graph = import_graph()
    graph["toolform_rules"] |= {f"toolform_rules{module}" for module in set(toolform_rules._EXPORTS.values())}
    assert cycles(graph) == []


def test_grammar_lends_lark_names_on_first_use() -> None:
    modules = loaded_after("import toolform_rules.grammar")
    assert "lark" not in modules
    modules = loaded_after("from toolform_rules.grammar import Transformer, parse\n"
                           "assert parse('json_object', \"{'a': 1}\") is not None")
    assert "lark" in modules


def not_for_a_json_reply(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in NOT_FOR_A_JSON_REPLY or m.startswith(NOT_FOR_A_JSON_REPLY))


#: bench/startup.py's session: import, validate the seed's call, parse one json_object reply.
SESSION = ("from toolform_rules import parse_reply, sample_toolset, validate_arguments\n"
           "tools = sample_toolset()\n"
           f"assert validate_arguments({CALL!r}, tools).n_errors == 3\n"
           "reply = parse_reply('Sure. {\"name\": \"LegalDraftV3\", \"arguments\": {\"counterparty\": \"Acme\", '\n"
           "                    '\"value\": -5, \"termMonths\": 12}}', tools, 'json_object')\n"
           "assert reply.calls[0].valid is False and reply.calls[0].resolved_name == 'legal_draft_v3'\n")


def test_a_json_object_reply_that_is_json_is_read_without_lark(tmp_path: Path) -> None:
    """The measured cold start (bench/startup.py): no grammar is built, so Lark and what it brings stay out."""
    env = {"TOOLFORM_RULES_CACHE": str(tmp_path)}
    loaded_after(SESSION, env)  # writes the rule cache, as any earlier process would have
    modules = loaded_after(SESSION, env)
    assert not_for_a_json_reply(modules) == []
    assert {m for m in modules if m.startswith("toolform_rules.replies.formats")} == JSON_OBJECT_MODULES


def test_a_json_object_reply_that_is_json_compiles_no_bracket_pattern(tmp_path: Path) -> None:
    """The patterns that match nested groups are compiled when a reply first needs one; a reply
    ``json.loads`` reads needs none.  And "did you mean" (difflib) loads only for a mistake."""
    env = {"TOOLFORM_RULES_CACHE": str(tmp_path)}
    check = ("\nfrom toolform_rules.replies.formats.values import brackets\n"
             "assert dict(brackets('{[', '}]').group) == {0: None}, sorted(brackets('{[', '}]').group)\n")
    loaded_after(SESSION, env)
    assert "difflib" not in loaded_after(SESSION + check, env)


def test_a_malformed_json_object_reply_builds_the_grammar_to_say_where_it_stops() -> None:
    reply = '{"name": "LegalDraftV3", "arguments": {"value": [1,}}'
    note = ("no JSON object could be read: line 1, column 52: expected '{' or '[' or ']' or a double-quoted string "
            "or false or null or ..., found '}'")
    modules = loaded_after("from toolform_rules import parse_reply, sample_toolset\n"
                           f"reply = parse_reply({reply!r}, sample_toolset(), 'json_object')\n"
                           f"assert reply.calls == () and reply.note == {note!r}, reply.note\n")
    assert "lark" in modules


def test_the_json_family_reads_well_formed_replies_without_lark(tmp_path: Path) -> None:
    """Each JSON-family protocol defines (and makes) its transformer at import without Lark."""
    code = ("import sys\n"
            "from toolform_rules import ToolCall, get_protocol, parse_reply, sample_toolset\n"
            "tools = sample_toolset()\n"
            "call = ToolCall('legal_draft_v3', {'counterparty': 'Acme', 'value': 5, 'term_months': 12})\n"
            f"for protocol_id in {JSON_FAMILY!r}:\n"
            "    reply = parse_reply(get_protocol(protocol_id).render_calls([call]), tools, protocol_id)\n"
            "    assert reply.ok and reply.format_compliant and len(reply.calls) == 1, (protocol_id, reply)\n"
            "    assert 'lark' not in sys.modules, protocol_id\n")
    env = {"TOOLFORM_RULES_CACHE": str(tmp_path)}
    loaded_after(code, env)
    modules = loaded_after(code, env)
    assert not_for_a_json_reply(modules) == []
    assert {f"toolform_rules.replies.formats.{REGISTRY[p].module}" for p in JSON_FAMILY} <= modules


def test_a_transformer_is_defined_and_made_without_lark() -> None:
    modules = loaded_after("from toolform_rules.grammar import Transformer\n"
                           "class Pairs(Transformer):\n"
                           "    def pair(self, items):\n"
                           "        return tuple(items)\n"
                           "PAIRS = Pairs()\n")
    assert "lark" not in modules


def test_a_transformer_transforms_with_lark_and_stays_of_its_class() -> None:
    from toolform_rules.grammar import parse
    from toolform_rules.replies.formats.json_family.shared import Values
    from toolform_rules.replies.formats.values import JsonValues

    class Outer(Values):
        def start(self, items: list) -> list:
            return ["outer", *items]

    for made, expected in ((JsonValues, {"a": [1, 2.5, None]}), (Outer, ["outer", {"a": [1, 2.5, None]}])):
        transformer = made()
        for _ in range(2):  # the first transform mixes Lark's Transformer in; the second reuses it
            assert transformer.transform(parse("json_object", "{'a': [1, 2.5, None,],}")) == expected
        assert isinstance(transformer, made) and type(transformer).__name__ == made.__name__
        assert type(made()) is made  # a new one is of its class until it transforms
