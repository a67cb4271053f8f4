"""xml_call: Anthropic's ``<function_calls><invoke name="f"><parameter name="a">1</parameter>…`` XML.

Grammar: ``grammars/xml_call.lark``.  One ``<invoke>`` per call (in one ``<function_calls>`` block or in
several), one ``<parameter>`` per argument, whose content is text — white space at its ends dropped, XML
references and CDATA decoded — typed from the tool's schema (``text_values``).  Two more spellings are read:
MiniCPM's ``<function name="f"><param name="a">1</param></function>``, and Anthropic's legacy
``<invoke><tool_name>f</tool_name><parameters><a>1</a></parameters></invoke>``, whose arguments are elements
named after them (a call whose argument tags do not pair is skipped with a note, as that reader refuses it).
A CDATA section in a value is text, a closing tag in it too; one that does not end before the next
``<![CDATA[`` is text as written.  Missing closing tags are tolerated and noted.  The reply is read by the
family's one pass over the tags (:class:`~.markup_family.TaggedReply`), the grammar where that pass stops.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b": "x < y"})])
>>> print(text)
<function_calls>
  <invoke name="f">
    <parameter name="a">1</parameter>
    <parameter name="b">x &lt; y</parameter>
  </invoke>
</function_calls>
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b': 'x < y'}
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Iterable, Sequence

from ....calls import ToolCall
from ....schema.toolset import Toolset
from ..base import Extraction, ProtocolInfo, RawCall
from ..duplicates import where as twice_at
from .shared import (CALL, PART, WRAPPER, Element, TagFormat, TaggedReply, end_outside_cdata, excerpt,
                            tag_attribute, text_of, xml_escape, xml_text, xml_unescape, xml_value)
from ..reading import GrammarBudget

_PREFIX = r"(?:[A-Za-z_][\w.-]*+:)?+"
_WORDS = r"function_calls|invoke|function|parameters?|param|tool_name"
# the grammar's terminals: a tag of the format, or what starts like one and no terminal takes (a stray)
_TAGS = re.compile(rf"(<(?:/{_PREFIX}({_WORDS})\s*>|{_PREFIX}({_WORDS})(?=[\s>/])[^<>]*>|(/?{_PREFIX}(?:{_WORDS})"
                   rf"(?:[\s>/]|$))))", re.I)
_NAME = re.compile(r'<[^\s<>]+\s+name\s*=\s*"([^"<>&]*)"')
# an argument's tag in <parameters> (Anthropic's legacy shape): (closing, name, empty)
_ARGUMENT_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)(?:\s[^<>]*?)?(/?)>")


def name_attribute(tag: str) -> str | None:
    """The ``name`` attribute of an opening tag, references decoded.

    >>> name_attribute('<invoke name="a&amp;b">'), name_attribute("<parameter type='s' name='x'>")
    ('a&b', 'x')
    """
    found = _NAME.match(tag)
    return found.group(1) if found is not None else tag_attribute(tag, "name")


class XmlCallReply(TaggedReply):
    """An xml_call reply: ``<function_calls>`` wraps calls, ``<invoke>`` (``<function>``) is a call, and its
    parts are ``<parameter>`` (``<param>``), ``<tool_name>`` and ``<parameters>``."""

    tags, cdata = _TAGS, True
    levels: ClassVar[dict[str, int]] = {"function_calls": WRAPPER, "invoke": CALL, "function": CALL,
                                        "parameter": PART, "param": PART, "tool_name": PART, "parameters": PART}


def _arguments_in(raw: str, at: int, notes: list[tuple[int, str]]) -> list[tuple[str, str, int]] | None:
    """The arguments written as elements in a <parameters> (its text, at ``at`` in the reply): ``<name>value
    </name>`` (or ``<name/>``) each, in a row, as (name, value, where); ``None`` and a note when their tags do
    not pair (the legacy reader refuses the call then).  An argument still open at the end is read, and noted."""
    found: list[tuple[str, str, int]] = []
    opened: re.Match[str] | None = None
    pos, stray = 0, False
    while True:
        end = end_outside_cdata(raw, pos, _ARGUMENT_TAG)  # (a section is text whole, as in a parameter's value)
        if opened is None and not stray and end > pos and not raw[pos:end].isspace():
            notes.append((at + pos, "text inside <parameters> was ignored: " + excerpt(raw[pos:end])))
            stray = True
        tag = _ARGUMENT_TAG.match(raw, end)
        if tag is None:
            break
        closing, key, empty = tag.groups()
        pos = tag.end()
        if closing and opened is not None and opened.group(2) == key:
            found.append((key, xml_value(raw[opened.end():end]), at + opened.start()))
            opened = None
        elif closing or opened is not None:
            notes.append((at + end, f"the arguments in <parameters> do not pair: {tag.group(0)!r} "
                                    f"{_unpaired(bool(closing), opened)}; the call was skipped"))
            return None
        elif empty:
            found.append((key, "", at + end))
        else:
            opened = tag
    if opened is not None:
        notes.append((at + opened.start(), f"the <{opened.group(2)}> element is not closed"))
        found.append((opened.group(2), xml_value(raw[opened.end():]), at + opened.start()))
    return found


def _unpaired(closing: bool, opened: re.Match[str] | None) -> str:
    if opened is None:
        return "closes nothing"
    return f"where </{opened.group(2)}> was expected" if closing else f"inside <{opened.group(2)}>"


def _written(part: Element, notes: list[tuple[int, str]]) -> list[tuple[str, str, int]] | None:
    """The arguments a <parameter> or a <parameters> writes, as (name, value, where); ``None`` when the call is
    to be skipped."""
    raw = part.raw or ""
    if part.word == "parameters":
        return _arguments_in(raw, part.raw_at, notes)
    name = name_attribute(part.tag)
    if name is None:
        notes.append((part.start, f"a <{part.word}> without a name attribute was skipped"))
        return []
    return [(name, xml_unescape(raw.strip()) if ("&" in raw or "<" in raw) else raw.strip(), part.start)]


def _call(invoke: Element, notes: list[tuple[int, str]]) -> RawCall | None:
    """The call an <invoke> makes, or ``None`` (and a note) when it names no tool or its arguments do not pair."""
    name = name_attribute(invoke.tag)
    arguments: dict[str, Any] = {}
    twice: dict[str, None] = {}
    paired = True
    for part in invoke.parts:
        if not part.closed:
            notes.append((part.start, f"the <{part.word}> element is not closed"))
        if part.word == "tool_name":
            if name is not None:
                notes.append((part.start, "the tool is named twice; the first name counts"))
            name = name if name is not None else xml_value(part.raw or "") or None  # (an empty one names nothing)
            continue
        written = _written(part, notes)
        paired = paired and written is not None
        for key, value, where in written or ():
            if key in arguments:
                notes.append((where, f"parameter {key!r} is given twice; the last one counts"))
                twice[twice_at((), key)] = None
            arguments[key] = value
    if name is None:
        notes.append((invoke.start, f"an <{invoke.word}> that names no tool (by a name attribute or a <tool_name>) "
                                    "was skipped"))
        return None
    return RawCall(name, arguments, (invoke.start, invoke.end), tuple(twice)) if paired else None


class XmlCall(TagFormat):
    info = ProtocolInfo(id="xml_call", name="<function_calls><invoke> XML", text_values=True,
                        description='Anthropic-style XML: <invoke name="tool"> per call inside <function_calls>, one '
                                    '<parameter name="arg">value</parameter> per argument; values are text.')
    tree = XmlCallReply

    def extraction(self, reply: XmlCallReply, text: str, budget: GrammarBudget) -> Extraction:
        """The calls of the invokes; notes on what is not closed, not named, given twice, and the first text
        between the tags."""
        calls: list[RawCall] = []
        notes: list[tuple[int, str]] = []
        for invoke in reply.calls:
            if not invoke.closed:
                notes.append((invoke.start, f"the <{invoke.word}> element is not closed"))
            call = _call(invoke, notes)
            if call is not None:
                calls.append(call)
        notes += [(block.start, "the <function_calls> block is not closed") for block in reply.wrappers
                  if not block.closed]
        inner = min(((at, piece) for element in reply.wrappers + reply.calls for piece, at in element.texts
                     if not piece.isspace()), default=None)
        if inner is not None:  # (the first: one note says it)
            notes.append((inner[0], f"text between the tags was ignored: {excerpt(inner[1])}"))
        return reply.extraction(calls, notes, text, "no <invoke> element was found")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join([
            "<function_calls>\n",
            *(f'  <invoke name="{xml_escape(call.name, attribute=True)}">\n'
              + "".join(f'    <parameter name="{xml_escape(key, attribute=True)}">{xml_text(text_of(value))}'
                        "</parameter>\n" for key, value in call.arguments.items())
              + "  </invoke>\n" for call in calls),
            "</function_calls>"])

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with XML only. Wrap your calls in one <function_calls> element. For each call write "
                '<invoke name="TOOL_NAME">, then one <parameter name="ARGUMENT">VALUE</parameter> line per '
                "argument, then </invoke>. Write values as plain text (numbers and true/false as they are, "
                "lists and objects as JSON) and escape & < > as &amp; &lt; &gt;.\n"
                "<function_calls>\n"
                '  <invoke name="tool_name">\n'
                '    <parameter name="argument">value</parameter>\n'
                "  </invoke>\n"
                "</function_calls>")


PROTOCOL = XmlCall()
