"""What an operation declares beside its function: its options, its message fields, its interactions.

Every operation in :mod:`.validation_ops` and :mod:`.normalisation_ops` is written as a
function under the :func:`operation` decorator, which makes it an :class:`Operation`
record: the function, the phase it runs in, the options a rule may give it (each an
:class:`Option`: name, type, default, whether required, one line of doc), the fields its
findings fill in a message template, and how it interacts with other operations of the
same profile (``subsumes``, ``consults``).  Loading a rule file checks every rule's
options against these declarations (:mod:`.option_checks`); the compiler reads the
interactions from them; ``docs/rules.md`` lists them.  Nothing here imports the registry.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from ..field_checks import one_of

#: What an operation's function acts on: a schema node while a tool compiles (most), or a
#: call whose name resolves to no tool (``unknown_tool``).
TARGETS = ("node", "call")

#: The types an option may have, and how the rule reference names them.
_TYPE_NAMES: dict[Any, str] = {bool: "boolean", str: "string", tuple[str, ...]: "list of strings"}


@attrs.frozen
class Option:
    """One option a rule may give its operation (``options: {name: value}`` in a rule file).

    ``type`` is ``bool``, ``str`` or ``tuple[str, ...]`` (a YAML list of strings);
    ``choices`` limits a string to those words; ``template_order``, when set, makes the
    string a message template that may use those fields (and ``path``: all of them are
    ``template_fields``), checked like a rule's ``message``, the fields in the order the
    operation reports them (see :func:`.context.make_reporter`).  ``default`` is what the
    operation reads when the rule does not give the option (``None``: "not given", e.g. a
    template that falls back on ``message``).

    >>> Option("split_commas", bool, True, "split text on commas").kind
    'boolean'
    >>> Option("unknown", str, "keep", "what to do", choices=("keep", "generic")).kind
    'one of keep, generic'
    """

    name: str
    type: Any = attrs.field(validator=attrs.validators.in_(tuple(_TYPE_NAMES)))
    default: Any
    doc: str
    required: bool = False
    choices: tuple[str, ...] = ()
    template_order: tuple[str, ...] | None = None

    @property
    def template_fields(self) -> frozenset[str] | None:
        """The fields a template option's message may use (``path`` among them); ``None`` for another option."""
        return None if self.template_order is None else frozenset(self.template_order) | {"path"}

    @property
    def kind(self) -> str:
        """The option's type in the words of the rule reference."""
        if self.template_fields is not None:
            return "message template"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        return _TYPE_NAMES[self.type]


def template(name: str, doc: str, fields: tuple[str, ...]) -> Option:
    """An option holding a message template that may use ``fields`` (and ``path``); ``None``: not given.

    >>> sorted(template("timeout_message", "when a match times out", ("value",)).template_fields)
    ['path', 'value']
    """
    return Option(name, str, None, doc, template_order=tuple(fields))


@attrs.frozen
class Operation:
    """A registered operation: its function and everything it declares about itself.

    ``function``: for a ``node`` operation ``function(rule, node, ctx)``, called once per
    schema node while a tool compiles, returns a check (validation) or a transform
    (normalisation), or ``None`` when the node gives it nothing to do; for a ``call``
    operation ``function(rule)`` returns the check of a call whose name resolves to no
    tool, called with that name.
    ``message_order``: the fields its findings fill in the rule's ``message``, in the order
    its checks pass them to a reporter; ``message_fields``: the same and ``path``, as a set.
    ``subsumes``: operations whose work this one may take over at a node, in the same walk
    (``properties`` reports the undeclared keys ``additional_properties`` would); the
    compiler tells each side who the other is (:meth:`NodeContext.subsumed`).
    ``consults``: operations this one asks whether the profile also runs
    (:meth:`NodeContext.profile_runs`); it may ask about no other.
    ``changes``: (normalisation) the Python types of the only values it may replace
    (``()``: it replaces none itself, only rebuilds a container whose child changed;
    ``None``: undeclared, any value); ``changes_with``: options that, when a rule sets
    them to other than their default, make it change anything (renaming keys...);
    ``changes_only``: of the values of those types, the only ones it may replace are those
    this predicate holds for (``float.is_integer``).  A profile whose rules repair only
    rejected values normalises a failing call only when a failing value holds such a value
    (see ``compiler.Program``).
    """

    function: Callable[..., Any]
    phase: str = attrs.field(validator=one_of(("normalise", "validate")))
    options: tuple[Option, ...] = ()
    subsumes: tuple[str, ...] = ()
    consults: tuple[str, ...] = ()
    acts_on: str = attrs.field(default="node", validator=one_of(TARGETS))
    message_order: tuple[str, ...] = ()
    changes: tuple[type, ...] | None = None
    changes_with: tuple[str, ...] = ()
    changes_only: Callable[[Any], bool] | None = None

    @property
    def message_fields(self) -> frozenset[str]:
        """The fields a rule's ``message`` may use: the operation's and ``path``."""
        return frozenset(self.message_order) | {"path"}

    @property
    def doc(self) -> str:
        """The first paragraph of the function's docstring, on one line."""
        text = (self.function.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(text.split())

    def changed_types(self, options: dict[str, Any]) -> tuple[type, ...] | None:
        """The types of value a rule giving ``options`` may change (``None``: any)."""
        if self.changes is None or any(options.get(name) != self.option(name).default  # type: ignore[union-attr]
                                       for name in self.changes_with):
            return None
        return self.changes

    def option(self, name: str) -> Option | None:
        """The declared option ``name``, or ``None``."""
        for option in self.options:
            if option.name == name:
                return option
        return None


def operation(phase: str, *, options: tuple[Option, ...] = (), message_fields: tuple[str, ...] = (),
              subsumes: tuple[str, ...] = (), consults: tuple[str, ...] = (), acts_on: str = "node",
              changes: tuple[type, ...] | None = None,
              changes_with: tuple[str, ...] = (),
              changes_only: Callable[[Any], bool] | None = None) -> Callable[[Callable[..., Any]], Operation]:
    """Declare the function below as an operation of ``phase``, with what it reads and provides.

    >>> @operation("normalise", options=(Option("copy", bool, False, "always return a new list"),))
    ... def items(rule, node, ctx):
    ...     '''Each item is normalised.'''
    >>> items.phase, [o.name for o in items.options], sorted(items.message_fields), items.doc
    ('normalise', ['copy'], ['path'], 'Each item is normalised.')
    """

    def declare(function: Callable[..., Any]) -> Operation:
        return Operation(function, phase, tuple(options), tuple(subsumes), tuple(consults), acts_on,
                         tuple(message_fields), changes, tuple(changes_with), changes_only)

    return declare
