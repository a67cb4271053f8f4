"""What every answer protocol is: a grammar, a transformer, a renderer — behind one interface.

A protocol reads reply text into an :class:`Extraction`: the raw calls it found (name, arguments
as written, where they stood), notes (where a grammar stopped, what was ignored) and whether the
whole reply kept to the format.  It never validates.  It also renders calls for a prompt.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import attrs

from ...calls import ToolCall
from ...limits import DEFAULT_LIMITS, Limits
from ...schema.toolset import Toolset


@attrs.frozen
class ProtocolInfo:
    """A protocol's identity: its id, a name, one sentence on what it looks like; ``parallel``: a reply may
    hold several calls; ``text_values``: values are written as text, typed from the tool's schema."""

    id: str
    name: str
    description: str
    parallel: bool = True
    text_values: bool = False


@attrs.frozen
class RawCall:
    """A call as the reply wrote it: the name, the arguments, the span of text it came from, and
    ``duplicates``: where it wrote a key twice (``'"value" in the arguments'``; the arguments hold the last
    value, and ``parse_reply`` refuses the call under ``rule="as_written"``)."""

    name: str
    arguments: dict[str, Any]
    span: tuple[int, int] | None = None
    duplicates: tuple[str, ...] = ()


@attrs.frozen
class Extraction:
    """What a protocol found in a reply: ``calls``, ``notes`` (sentences for the caller: where a grammar
    stopped, what was left over) and ``compliant`` (the reply is the format and nothing else)."""

    calls: tuple[RawCall, ...] = ()
    notes: tuple[str, ...] = ()
    compliant: bool = False
    #: the reply's text outside its calls, as an engine returns it (``None``: worked out from the calls' spans)
    content: str | None = None


#: the words every protocol's last-resort guard puts in its note (tests assert it never fires)
INTERNAL_ERROR = "internal error while reading the reply"


def internal_error(protocol_id: str, err: BaseException) -> Extraction:
    """What a protocol returns when reading a reply failed in a way it did not foresee (a bug): no calls,
    and one note naming the protocol and the error, never a traceback to the caller.

    >>> internal_error("json_object", ZeroDivisionError()).notes
    ('json_object: internal error while reading the reply (ZeroDivisionError)',)
    """
    return Extraction((), (f"{protocol_id}: {INTERNAL_ERROR} ({type(err).__name__})",), False)


class Protocol:
    """Base class of the answer protocols; a subclass sets ``info`` and implements the three verbs."""

    info: ProtocolInfo
    #: a call's end is marked (a closing bracket or tag): a stream may announce the call as soon as it closes
    closes_calls: bool = False

    @property
    def id(self) -> str:
        return self.info.id

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        """The calls ``text`` holds in this protocol's syntax; never raises for any text.

        :meth:`read` does the work; an error it did not foresee becomes :func:`internal_error`'s note.
        ``tools``: the toolset, where the syntax needs it; ``limits``: the reply's size caps.
        """
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        try:
            return self.read(text, tools, limits)
        except (Exception, RecursionError) as err:  # noqa: BLE001 — the last resort, tested never to fire
            return internal_error(self.info.id, err)

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        """The calls ``text`` holds (a family or format implements this; :meth:`parse` guards it)."""
        raise NotImplementedError

    def raw_calls(self, text: str, tools: Toolset | None = None, *,
                  limits: Limits = DEFAULT_LIMITS) -> tuple[RawCall, ...]:
        """The calls of :meth:`parse`, without its notes (what a model-native format hands its calls' text to).

        >>> from toolform_rules.replies.formats import get_protocol
        >>> get_protocol("python_list_call").raw_calls("[f(a=1, a=2)]")[0].duplicates
        ('"a" in the arguments',)
        """
        return self.parse(text, tools, limits=limits).calls

    def calls_in(self, text: str, tools: Toolset | None = None, *,
                 limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, Any]]:
        """:meth:`raw_calls` as (name, arguments) pairs.

        >>> from toolform_rules.replies.formats import get_protocol
        >>> get_protocol("python_list_call").calls_in("[f(a=1), g(b='x')]")
        [('f', {'a': 1}), ('g', {'b': 'x'})]
        """
        return [(call.name, call.arguments) for call in self.raw_calls(text, tools, limits=limits)]

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """The reply a model following this protocol would write for ``calls`` (a positional format, such as
        ``csv_call``, also takes ``tools=``)."""
        raise NotImplementedError

    def example(self, call: ToolCall) -> str:
        """One call, rendered."""
        return self.render_calls([call])

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        """What to tell a model so that it answers in this protocol."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<protocol {self.info.id}>"
