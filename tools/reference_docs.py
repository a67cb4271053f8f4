"""The reference parts of the documentation, computed from the rules, the operations and the protocols.

``rules_markdown()`` is docs/rules.md; ``protocols_markdown()`` and ``native_markdown()`` are the generated
parts of docs/protocols.md.  :mod:`gen_docs` writes them (and checks them in the suite).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from toolform_rules.cli.demo import DEMO_NESTED_CALL
from toolform_rules.cli.render import plural as _plural
from toolform_rules.engine.rule_files import builtin_rules
from toolform_rules.engine.rules import Rule, RuleSet
from toolform_rules.engine.verbs import (
    NORMALISATION_PROFILES,
)
from toolform_rules.jsonvalues import strict_json

if TYPE_CHECKING:
    pass


#: The order of the profiles in the rule reference: study before sdk, which extends it.
REFERENCE_ORDER = ("study", "sdk", "jsonschema", *NORMALISATION_PROFILES)

def native_markdown() -> str:
    """The model-native formats' reference of ``docs/protocols.md``: generated from the catalogue."""
    from toolform_rules.replies.formats import get_protocol, protocol_ids

    out: list[str] = []
    for protocol_id in protocol_ids("native"):
        protocol = get_protocol(protocol_id)
        entry = protocol.entry  # type: ignore[attr-defined]
        aliases = ", ".join(f"`{a}`" for a in entry.aliases) or "none"
        values = "text, typed from the tool's schema" if protocol.info.text_values else "JSON"
        out += [f"### `{protocol_id}` — {entry.name}", "", entry.description, "",
                f"- aliases: {aliases}; values: {values}; entry: `rules/native/formats.yaml` line {entry.line}", "",
                "```text", protocol.render_calls([DEMO_NESTED_CALL]), "```", ""]
    return "\n".join(out).rstrip() + "\n"

def protocols_markdown() -> str:
    """The per-protocol reference of ``docs/protocols.md``: generated from the registry."""
    import inspect

    from toolform_rules.replies.formats import REGISTRY, get_protocol, protocol_ids

    out: list[str] = []
    for protocol_id in protocol_ids():
        protocol = get_protocol(protocol_id)
        info = protocol.info
        module = inspect.getmodule(type(protocol))
        doc = inspect.cleandoc(module.__doc__ or "") if module is not None else ""
        body = doc.split("\n\n", 1)[1].strip() if "\n\n" in doc else ""
        # the reference shows what each module says it tolerates; its doctest examples stay in the module
        body = "\n\n".join(part for part in body.split("\n\n") if ">>>" not in part)
        values = "text, typed from the tool's schema" if info.text_values else "typed by the syntax itself"
        out += [f"### `{protocol_id}` — {info.name}", "", info.description, "",
                f"- grammar: [`grammars/{protocol_id}.lark`](../grammars/{protocol_id}.lark); "
                f"module: `toolform_rules/replies/formats/{REGISTRY[protocol_id].module.replace('.', '/')}.py`",
                f"- values: {values}; several calls in one reply: {'yes' if info.parallel else 'no'}", ""]
        if body:
            out += [body, ""]
        out += ["```text", protocol.render_calls([DEMO_NESTED_CALL]), "```", ""]
    return "\n".join(out).rstrip() + "\n"

def _profile_order(ruleset: RuleSet) -> list[str]:
    ordered = [n for n in REFERENCE_ORDER if n in ruleset.profiles]
    return ordered + [n for n in ruleset.profile_names() if n not in ordered]

#: Rule fields the reference shows in its own words when they are set.
_FLAG_WORDS = {"halts": "halts (later rules skip a value it rejects)",
               "unconditional": "unconditional (runs even after a halting rule rejected the value)"}

#: Rule fields the reference shows on lines of their own (or not at all).
_SHOWN_APART = frozenset({"id", "op", "phase", "bucket", "message", "options", "description", "source"})

def _md_rule(rule: Rule) -> list[str]:
    facts = [f"phase `{rule.phase}`", f"op `{rule.op}`"]
    if rule.bucket:
        facts.append(f"bucket `{rule.bucket}`")
    for field in attrs.fields(Rule):  # any further field set to other than its default
        value = getattr(rule, field.name)
        default = field.default.factory() if isinstance(field.default, attrs.Factory) else field.default  # type: ignore[arg-type, union-attr]
        if field.name in _SHOWN_APART or value == default:
            continue
        facts.append(_FLAG_WORDS[field.name] if value is True and field.name in _FLAG_WORDS
                     else f"{field.name} `{value}`")
    lines = [f"### `{rule.id}`", "", "- " + ", ".join(facts)]
    if rule.message is not None:
        lines.append(f"- message: `{rule.message}`")
    options = _options_set(rule)
    if options:
        lines.append("- options: " + ", ".join(f"`{k}: {_md_value(v)}`" for k, v in options.items()))
    lines.append(f"- source: `{rule.source}`")
    description = " ".join(rule.description.split())
    if description:
        lines += ["", description]
    return lines + [""]

def _options_set(rule: Rule) -> dict[str, Any]:
    """The options ``rule`` sets to other than its operation's defaults (loading filled in the rest)."""
    from toolform_rules.engine.operations import operation_of

    operation = operation_of(rule.phase, rule.op)
    if operation is None:
        return dict(rule.options)
    defaults = {option.name: option.default for option in operation.options}
    return {k: v for k, v in rule.options.items() if k not in defaults or v != defaults[k]}

def _md_value(value: Any) -> str:
    """A YAML value as JSON text (a tuple as a list)."""
    return strict_json(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)

def _md_cell(text: str) -> str:
    """Text for a Markdown table cell: a ``|`` would end the cell."""
    return text.replace("|", "\\|")

def operations_markdown() -> list[str]:
    """The operations section of the rule reference: every registered operation, its options and fields."""
    from toolform_rules.engine.operations import REGISTRY

    out = ["## Operations", "",
           "Every operation a rule may name as `op`, registered in `toolform_rules/engine/operations.py` and",
           "declared beside its function, with the options a rule may give it (`options:`) and the fields",
           "its findings fill in the rule's `message`. Loading a rule file refuses an option its operation",
           "does not declare (suggesting the closest name), a value of another type, a required option",
           "left out, and a message field the operation does not fill. The rules above show only the",
           "options they set to other than the default.", ""]
    for phase, title in (("validate", "Validation operations"), ("normalise", "Normalisation operations")):
        out += [f"### {title}", ""]
        for name, operation in REGISTRY[phase].items():
            out += [f"#### `{name}`", ""]
            if operation.doc:
                out += [operation.doc.replace("``", "`"), ""]
            facts = []
            if phase == "validate":
                facts.append("message fields: " + ", ".join(f"`{{{f}}}`" for f in sorted(operation.message_fields)))
            if operation.acts_on == "call":
                facts.append("acts on a call whose name resolves to no tool, not on a schema node")
            if operation.subsumes:
                facts.append("subsumes " + ", ".join(f"`{o}`" for o in operation.subsumes)
                             + " (takes over its work at a node where it can, in the same walk)")
            if operation.consults:
                facts.append("consults " + ", ".join(f"`{o}`" for o in operation.consults)
                             + " (whether the profile also runs it)")
            if operation.changes is not None:
                changed = (", ".join(f"`{t.__name__}`" for t in operation.changes) + " values only" if operation.changes
                           else "no value itself, only rebuilds a container whose child changed")
                if operation.changes and operation.changes_only is not None:
                    changed += f", those `{operation.changes_only.__qualname__}` holds for"
                if operation.changes_with:
                    changed += ("; any value when a rule sets " + " or ".join(f"`{o}`" for o in operation.changes_with)
                                + " other than its default")
                facts.append("changes " + changed + " (a profile whose rules repair only rejected values normalises "
                             "a failing call only when a reported value holds what they change)")
            if not operation.options:
                facts.append("options: none")
            out += [f"- {fact}" for fact in facts]
            if not operation.options:
                out.append("")
                continue
            if facts:
                out.append("")
            out += ["| option | type | default | what it does |", "|---|---|---|---|"]
            for option in operation.options:
                kind = option.kind
                if option.template_fields is not None:
                    kind += " (fields " + ", ".join(f"`{{{f}}}`" for f in sorted(option.template_fields)) + ")"
                default = "required" if option.required else f"`{_md_value(option.default)}`"
                out.append(f"| `{option.name}` | {_md_cell(kind)} | {_md_cell(default)} | {_md_cell(option.doc)} |")
            out.append("")
    return out

def rules_markdown(ruleset: RuleSet | None = None, names: list[str] | None = None) -> str:
    """The rule reference (``docs/rules.md``): every rule, grouped by the profile that lists it, then
    every operation with its options (the whole reference only)."""
    ruleset = ruleset or builtin_rules()
    whole = names is None
    names = _profile_order(ruleset) if names is None else names
    for name in names:
        ruleset.profile_rules(name)  # an unknown name raises UnknownProfileError
    out = []
    if whole:
        out += [
            "# Rule reference",
            "",
            "<!-- Generated from rules/*.yaml by `python tools/gen_docs.py` (or",
            "     `python tools/gen_docs.py`). Do not edit by hand: tests/test_docs.py",
            "     fails when this file differs from the generated text. -->",
            "",
            "Every built-in rule, grouped by the profile that lists it, in the order the profile runs",
            "them. A rule's `source` is the file and line that declare it; every finding a rule makes",
            "carries that same `source`. See [profiles.md](profiles.md) for what the profiles are for.",
            "The operations the rules name, with the options each declares, are listed at the end",
            "([Operations](#operations)).",
            "",
            "Profiles: " + ", ".join(f"`{n}`" for n in names) + ".",
            "",
        ]
    described: dict[str, str] = {}
    for name in names:
        profile = ruleset.profiles[name]
        out += [f"## Profile `{name}`", ""]
        if profile.description:
            out += [" ".join(profile.description.split()), ""]
        out.append(f"Declared at `{profile.source}`.")
        if profile.extends:
            base = len(ruleset.profile_rules(profile.extends))
            out.append(f"Extends `{profile.extends}`: its {_plural(base, 'rule')} run first, then the ones below.")
        for old, new in profile.replace.items():
            out.append(f"Replaces `{old}` with `{new}`.")
        out.append("")
        own = [*profile.replace.values(), *profile.rules]
        for rule_id in own:
            if rule_id in described:
                out += [f"### `{rule_id}`", "", f"As in profile `{described[rule_id]}` "
                        f"(`{ruleset.rules[rule_id].source}`).", ""]
                continue
            described[rule_id] = name
            out += _md_rule(ruleset.rules[rule_id])
    if whole:
        unlisted = [r for r in ruleset.rules.values() if r.id not in described]
        if unlisted:
            out += ["## Rules no profile lists", ""]
            for rule in unlisted:
                out += _md_rule(rule)
        out += operations_markdown()
    return "\n".join(out).rstrip("\n") + "\n"
