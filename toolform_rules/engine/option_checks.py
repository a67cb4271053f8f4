"""A rule's ``options:`` checked against what its operation declares, as its rule file is read.

An operation declares its options beside its function (:mod:`.declarations`); a rule file
names the operation and gives some of them.  :func:`checked_options` refuses what the
operation would never read — an unknown option (with the closest declared name), a value
of the wrong type or outside its choices, a required option left out, a message template
using fields the operation does not fill in it — as a :class:`RuleFileError` naming the
file, line, column and field ``<rule id>.options.<name>``; and it fills in the defaults,
so an operation reads ``rule.options[name]`` for declared names only.
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

from ..errors import RuleFileError
from .declarations import Operation, Option
from .operations import REGISTRY
from .rules import Rule, template_fields


def checked_options(rule: Rule, raw: Any, source: str, *,
                    operations: Mapping[str, Operation] | None = None) -> Rule:
    """``rule`` with its options checked against its operation's declaration, the defaults filled in.

    ``raw`` is the rule's mapping as read from YAML (it knows where each option was
    written), ``source`` the file named in errors; ``operations`` (default: the registry of
    the rule's phase) is where the rule's ``op`` is looked up.  A rule whose ``op`` is not
    found is returned as it is: reporting that is the rule file reader's job.

    >>> rule = Rule(id="r", op="wrap_in_list", phase="normalise")
    >>> checked_options(rule, {}, "my.yaml").options
    {'split_commas': True}
    >>> checked_options(attrs.evolve(rule, options={"split_comas": False}), {}, "my.yaml")
    Traceback (most recent call last):
        ...
    toolform_rules.errors.RuleFileError: my.yaml, field 'r.options.split_comas': unknown option ... did you mean 'split_commas'?
    """
    registry = operations if operations is not None else REGISTRY.get(rule.phase, {})
    operation = registry.get(rule.op)
    if operation is None:
        return rule
    places = _Places(raw, rule)
    declared = {option.name: option for option in operation.options}
    for name in rule.options:  # in the order written: the first unknown one is reported
        if name not in declared:
            raise places.error(_unknown_option(name, rule.op, list(declared)), name, at="key", source=source)
    # the options written, in the order written, then the others at their defaults
    filled = {name: _checked_value(rule, declared[name], places, source) for name in rule.options}
    for option in operation.options:
        if option.name in filled:
            continue
        if option.required:
            raise places.error(f"operation {rule.op!r} needs option {option.name!r} ({option.doc})", option.name,
                               at="options", source=source)
        else:
            filled[option.name] = option.default
    return attrs.evolve(rule, options=filled)


def _closest(name: str, known: Any) -> str | None:
    """The one of ``known`` closest to ``name``, if any is close (difflib loads only for a mistake)."""
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    return close[0] if close else None


def _unknown_option(name: Any, op: str, declared: list[str]) -> str:
    message = f"unknown option {name!r} for operation {op!r}"
    close = _closest(str(name), declared)
    if close is not None:
        return f"{message}; did you mean {close!r}?"
    return f"{message}, which takes {', '.join(declared)}" if declared else f"{message}, which takes no options"


def _checked_value(rule: Rule, option: Option, places: "_Places", source: str) -> Any:
    """The value ``rule`` gives ``option``, of the declared type (a YAML list becomes a tuple)."""
    field = f"{rule.id}.options.{option.name}"
    line, column = places.value(option.name)
    if places.written_value(option.name) is None and option.default is None and not option.required:
        return None  # written as null: not given, as when left out
    try:
        from ..convert import structure  # the converter loads only when a rule file is read

        value = structure(places.written_value(option.name), option.type, source=source, field_prefix=field)
    except RuleFileError as err:  # a scalar carries no position: the value's is the one to give
        where = (err.line, err.column) if err.line is not None else (line, column)
        raise RuleFileError(f"option {option.name!r}: {err.message}", source=source, line=where[0],
                            column=where[1], field=err.field or field) from None
    if option.choices and value not in option.choices:
        close = _closest(value, option.choices)
        hint = f"; did you mean {close!r}?" if close is not None else ""
        raise RuleFileError(f"option {option.name!r} must be one of {', '.join(option.choices)}, not {value!r}{hint}",
                            source=source, line=line, column=column, field=field)
    if option.template_fields is not None:
        problem = template_problem(value, option.template_fields, f"operation {rule.op!r} for {option.name}")
        if problem is not None:
            raise RuleFileError(f"option {option.name!r}: {problem}", source=source, line=line, column=column,
                                field=field)
    return value


def template_problem(template: str, allowed: frozenset[str] | None, provider: str) -> str | None:
    """What is wrong with message ``template`` (``None``: nothing), which ``provider`` fills with ``allowed``.

    The same checks as a rule's ``message``: it parses, its fields are plain names with a
    known conversion, and each is one the operation fills (``allowed``; ``None``: any).

    >>> template_problem("{path}: {valeu!r}", frozenset({"path", "value"}), "operation 'x'")
    "message field {valeu} is not provided by operation 'x'; did you mean {value}? It provides path, value"
    >>> template_problem("{value.__class__}", None, "operation 'x'")
    'message field {value.__class__} must be a plain name (no attribute access or indexing)'
    """
    try:
        fields = template_fields(template)
    except ValueError as err:
        return f"message template is malformed: {err}"
    for name, conversion in fields:
        if not name.isidentifier():
            return f"message field {{{name}}} must be a plain name (no attribute access or indexing)"
        if conversion not in (None, "r", "s", "a"):
            return f"message field {{{name}!{conversion}}} has an unknown conversion; use !r, !s or !a"
        if allowed is not None and name not in allowed:
            close = _closest(name, sorted(allowed))
            hint = f"; did you mean {{{close}}}? It provides " if close is not None else "; it provides "
            return f"message field {{{name}}} is not provided by {provider}{hint}" + ", ".join(sorted(allowed))
    return None


class _Places:
    """Where a rule's options were written: a key, its value, the ``options:`` key, the rule."""

    def __init__(self, raw: Any, rule: Rule) -> None:
        from ..yamlsource import Located

        self.raw = raw if isinstance(raw, Located) else None
        written = raw.get("options") if isinstance(raw, dict) else None
        self.written = written if isinstance(written, dict) else {}
        self.located = written if isinstance(written, Located) else None
        self.rule = rule

    def written_value(self, name: str) -> Any:
        """The value as read (a YAML list keeps its items' positions), else the rule's."""
        return self.written[name] if name in self.written else self.rule.options[name]

    def rule_place(self) -> tuple[int | None, int | None]:
        if self.raw is not None:
            return self.raw.line, self.raw.column
        return self.rule.source.line, None

    def key(self, name: Any) -> tuple[int | None, int | None]:
        if self.located is not None and name in self.located.positions:
            return self.located.positions[name]
        return self.options_key()

    def value(self, name: str) -> tuple[int | None, int | None]:
        mark = self.located.value_mark(name) if self.located is not None else None
        return (mark[0], mark[1]) if mark is not None else self.key(name)

    def options_key(self) -> tuple[int | None, int | None]:
        if self.raw is not None and "options" in self.raw.positions:
            return self.raw.positions["options"]
        return self.rule_place()

    def error(self, message: str, name: Any, *, at: str, source: str) -> RuleFileError:
        line, column = self.key(name) if at == "key" else self.options_key()
        return RuleFileError(message, source=source, line=line, column=column, field=f"{self.rule.id}.options.{name}")
