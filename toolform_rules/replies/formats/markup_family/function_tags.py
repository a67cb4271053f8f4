"""function_tags: ``<function=f><parameter=a>1</parameter></function>`` (Qwen3-Coder, functionary).

Grammar: ``grammars/function_tags.lark``.  A parameter's content is raw text — the format has no escaping, so
a value cannot hold the format's own tags — minus the one newline the Qwen3-Coder template writes after the
opening tag and before the closing tag; it is typed from the tool's schema (``text_values``).  A function whose
body is a JSON object (functionary) takes its arguments from it.  Calls may stand in ``<tool_call>`` wrappers
(vLLM).  Missing closing tags are tolerated and noted, and so is a missing opening ``<tool_call>`` (models skip
it and keep its ``</tool_call>``, which is noted, not prose).  The reply is read by the family's one pass over
the tags (:class:`~.markup_family.TaggedReply`), the grammar where that pass stops.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": "x & <y>"})])
>>> print(text)
<function=f>
<parameter=a>
1
</parameter>
<parameter=b>
x & <y>
</parameter>
</function>
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b': 'x & <y>'}
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Iterable, Sequence

from ....calls import ToolCall
from ....grammar import GrammarFailure
from ....schema.toolset import Toolset
from ..base import Extraction, ProtocolInfo, RawCall
from ..duplicates import noted, places, where
from .shared import CALL, PART, WRAPPER, Element, TagFormat, TaggedReply, excerpt, lenient_value, text_of
from ..reading import GrammarBudget

# the grammar's terminals: a tag of the format, or what starts like one and no terminal takes (a stray:
# ``<function>``, ``<parameter=`` without its ``>``)
_TAGS = re.compile(r"(<(?:/(tool_call|function|parameter)>|(tool_call(?=>)|function(?==)|parameter(?==))"
                   r"(?:>|=[^<>\n]*>)|(/?(?:function|parameter)[=>])))")
_UNCLOSED_WRAPPER = "the <tool_call> wrapper is not closed"
_UNOPENED_WRAPPER = "a </tool_call> without its opening <tool_call> was skipped"


def value_text(raw: str) -> str:
    r"""A parameter's value: its raw text without the template's newline at each end.

    >>> value_text("\n  two lines\nhere \n"), value_text("inline")
    ('  two lines\nhere ', 'inline')
    """
    if raw.startswith("\n"):
        raw = raw[1:]
    return raw[:-1] if raw.endswith("\n") else raw


def _tag_name(tag: str) -> str:
    return tag[tag.index("=") + 1:-1].strip()


class FunctionTagsReply(TaggedReply):
    """A function_tags reply: ``<tool_call>`` wraps calls, ``<function=...>`` is a call, ``<parameter=...>``
    a part of one; a ``</tool_call>`` with no wrapper open is read (and noted)."""

    tags, loose_close = _TAGS, True
    levels: ClassVar[dict[str, int]] = {"tool_call": WRAPPER, "function": CALL, "parameter": PART}


def _json_body(body: str, at: int, budget: GrammarBudget, notes: list[tuple[int, str]]) -> dict[str, Any] | None:
    """A function's JSON body (functionary) as its arguments, or ``None`` and a note."""
    try:
        parsed = lenient_value(body, budget)
    except GrammarFailure as failure:
        notes.append((at, f"the function's JSON body could not be read: {failure.describe()}"))
        return None
    except RecursionError:
        notes.append((at, "the function's JSON body is nested too deeply to read"))
        return None
    if not isinstance(parsed, dict):
        notes.append((at, "the function's JSON body is not an object"))
        return None
    return parsed


def _call(function: Element, budget: GrammarBudget, notes: list[tuple[int, str]]) -> RawCall | None:
    """The call a function makes: its parameters, or its JSON body; notes on what is not closed, given twice
    or ignored."""
    if not function.closed:
        notes.append((function.start, "the <function=...> element is not closed"))
    name = _tag_name(function.tag)
    arguments: dict[str, Any] = {}
    twice: list[str] = []
    for part in function.parts:
        key = _tag_name(part.tag)
        if not part.closed:
            notes.append((part.start, "the <parameter=...> element is not closed"))
        if key in arguments:
            notes.append((part.start, f"parameter {key!r} is given twice; the last one counts"))
            twice.append(where((), key))
        arguments[key] = value_text(part.raw or "")
    body = "".join(piece for piece, _ in function.texts).strip()
    if body:
        at = next(at for piece, at in function.texts if piece.strip())
        if function.parts or not body.startswith("{"):
            notes.append((at, "text between the tags was ignored: " + excerpt(body)))
        elif (read := _json_body(body, at, budget, notes)) is not None:  # functionary: a JSON body
            arguments, twice = read, list(places(read, body, budget))
            if twice:
                notes.append((at, noted(name, twice)))
    if not name:
        notes.append((function.start, "a <function=> without a name was skipped"))
        return None
    return RawCall(name, arguments, (function.start, function.end), tuple(dict.fromkeys(twice)))


class FunctionTags(TagFormat):
    info = ProtocolInfo(id="function_tags", name="<function=...> tags", text_values=True,
                        description="A call as <function=NAME> with one <parameter=KEY>value</parameter> per "
                                    "argument (or a JSON body), as the Qwen3-Coder and functionary templates write "
                                    "it; values are raw text.")
    markup = "the tags"
    tree = FunctionTagsReply

    def extraction(self, reply: FunctionTagsReply, text: str, budget: GrammarBudget) -> Extraction:
        """The calls of the functions; notes on the wrappers (text in them, not closed, not opened) and on each
        function."""
        notes = [(at, "text between the tags was ignored: " + excerpt(piece)) for wrapper in reply.wrappers
                 for piece, at in wrapper.texts if not piece.isspace()]
        notes += [(wrapper.start, _UNCLOSED_WRAPPER) for wrapper in reply.wrappers if not wrapper.closed]
        notes += [(at, _UNOPENED_WRAPPER) for at in reply.loose]
        calls = [call for function in reply.calls if (call := _call(function, budget, notes)) is not None]
        return reply.extraction(calls, notes, text, "no <function=...> element was found")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"<function={call.name}>\n" + "".join(f"<parameter={key}>\n{text_of(value)}\n</parameter>\n"
                                                               for key, value in call.arguments.items())
                         + "</function>" for call in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("For each call write <function=TOOL_NAME> on its own line, then for every argument "
                "<parameter=ARGUMENT>, the value on the next line, and </parameter>; close the call with "
                "</function>. Values are plain text: no quotes around strings, numbers and true/false as they "
                "are, lists and objects as JSON.\n"
                "<function=tool_name>\n<parameter=argument>\nvalue\n</parameter>\n</function>")


PROTOCOL = FunctionTags()
