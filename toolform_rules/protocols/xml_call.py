"""xml_call: Anthropic's ``<function_calls><invoke name="f"><parameter name="a">1</parameter>…`` XML.

Grammar: ``grammars/xml_call.lark``.  One ``<invoke>`` per call, one ``<parameter>`` per
argument; a parameter's content is text — white space at its ends dropped, XML references
and CDATA decoded — and the pipeline types it from the tool's schema (``text_values``).
Several ``<invoke>`` elements make several calls, in one ``<function_calls>`` block or in
several.  Missing closing tags are tolerated and noted.

Fast paths (as in every tag format): replies in the rendered shape are read by three regular
expressions; any other reply by one pass over its tags that follows the grammar's structure.
The grammar runs only where that pass stops (a stray closing tag, a malformed tag), on a bounded
stretch (``Limits.reply_grammar_chars``), to say where.

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
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..grammar import Token
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo, RawCall
from .markup_family import (Stopped, TagFormat, TaggedReply, canonical_reply, excerpt, tag_attribute, text_of,
                            top_level_resumes, xml_escape, xml_text, xml_unescape)
from .reading import GrammarBudget

_PREFIX = r"(?:[A-Za-z_][\w.-]*:)?"
# a tag of the format: (whole tag, closing kind, opening kind, a leading name="..." attribute)
_TAG = re.compile(r"(<(?:/" + _PREFIX + r"(function_calls|invoke|parameter)\s*>|" + _PREFIX
                  + r"(function_calls|invoke|parameter)(?:\s+name\s*=\s*\"([^\"<>&]*)\")?(?=[\s>/])[^<>]*>))", re.I)
_NEAR_TAG = re.compile(r"</?" + _PREFIX + r"(?:function_calls|invoke|parameter)(?:[\s>/]|$)", re.I)
# the canonical reply (as rendered, lower-case tags, double-quoted names, no markup in values),
# read with three regular expressions in C; anything else goes to ``_scan_or_stop``
_CANONICAL_BLOCK = re.compile(r'<function_calls>\s*(?:<invoke name="[^"<>&]*">\s*(?:<parameter name="[^"<>&]*">'
                              r'[^<]*</parameter>\s*)*</invoke>\s*)*</function_calls>')
_CANONICAL_INVOKE = re.compile(r'<invoke name="([^"<>&]*)">(\s*(?:<parameter name="[^"<>&]*">[^<]*</parameter>\s*)*)'
                               r'</invoke>')
_CANONICAL_PARAMETER = re.compile(r'<parameter name="([^"<>&]*)">([^<]*)</parameter>')


class _Element:
    """An <invoke> or a <parameter>: its name attribute, where it stands, whether it is closed; an invoke's
    parameters, a parameter's raw text."""

    __slots__ = ("name", "start", "end", "closed", "parameters", "raw")

    def __init__(self, name: str | None, start: int, end: int) -> None:
        self.name, self.start, self.end = name, start, end
        self.closed = False
        self.parameters: list[_Element] = []
        self.raw = ""


class XmlCallTree(TaggedReply):
    """What a reply holds in this format — the invokes, the prose around and between them, the open blocks —
    from an ``xml_call.lark`` tree (this transformer) or from the linear pass alike."""

    def __init__(self) -> None:
        super().__init__()
        self.invokes: list[_Element] = []
        self.inner_prose: list[tuple[str, int]] = []  # inside <function_calls> or <invoke>
        self.unclosed_blocks: list[int] = []

    def prose(self, items: list) -> tuple[str, int]:
        return str(items[0]), items[0].start_pos

    def parameter(self, items: list) -> _Element:
        parameter = _Element(name_attribute(str(items[0])), items[0].start_pos, items[0].end_pos)
        for item in items[1:]:
            if item.type == "TEXT":
                parameter.raw = str(item)
            else:
                parameter.closed = True
            parameter.end = item.end_pos
        return parameter

    def invoke(self, items: list) -> _Element:
        invoke = _Element(name_attribute(str(items[0])), items[0].start_pos, items[0].end_pos)
        for item in items[1:]:
            if isinstance(item, _Element):
                invoke.parameters.append(item)
                invoke.end = item.end
            elif isinstance(item, tuple):
                self.inner_prose.append(item)
                invoke.end = item[1] + len(item[0])
            else:  # the closing tag
                invoke.closed, invoke.end = True, item.end_pos
        self.invokes.append(invoke)
        return invoke

    def function_calls(self, items: list) -> None:
        if not (isinstance(items[-1], Token) and items[-1].type == "CALLS_CLOSE"):
            self.unclosed_blocks.append(items[0].start_pos)
        self.inner_prose.extend(item for item in items[1:] if isinstance(item, tuple))

    def start(self, items: list) -> XmlCallTree:
        self.outside = [item[0] for item in items if isinstance(item, tuple)]
        self.invokes.sort(key=lambda invoke: invoke.start)
        self.inner_prose.sort(key=lambda piece: piece[1])
        return self


def name_attribute(tag: str) -> str | None:
    """The ``name`` attribute of an opening tag, references decoded.

    >>> name_attribute('<invoke name="a&amp;b">'), name_attribute("<parameter type='s' name='x'>")
    ('a&b', 'x')
    """
    return tag_attribute(tag, "name")


def _scan_or_stop(text: str) -> XmlCallTree | Stopped:
    """The fast path: the grammar's structure followed over regex-found tags; or where the grammar stops and
    where it can start over to stop the same way."""
    out = XmlCallTree()
    parts = _TAG.split(text)
    block_open = -1  # start of the open <function_calls>, or -1
    invoke: _Element | None = None
    parameter: _Element | None = None
    last: tuple[bool, int, int] | None = None  # the last top-level item: is it text, start, end
    before: tuple[bool, int, int] | None = None  # the one before the open top-level element
    pos = 0

    def stop(at: int, end: int) -> Stopped:
        opened = block_open if block_open >= 0 else invoke.start if invoke is not None else at
        context = before if (block_open >= 0 or invoke is not None) else last
        return Stopped(at, end, top_level_resumes(context, opened), text[at:end])

    for i in range(0, len(parts), 5):
        gap = parts[i]
        if gap:
            end = pos + len(gap)
            if "<" in gap:
                near = _NEAR_TAG.search(gap)
                if near is not None:
                    return stop(pos + near.start(), pos + near.end())
            if parameter is not None and invoke is not None:
                parameter.raw = gap
                parameter.end = invoke.end = end
            elif invoke is not None:
                out.inner_prose.append((gap, pos))
                invoke.end = end
            elif block_open >= 0:
                out.inner_prose.append((gap, pos))
            else:
                out.outside.append(gap)
                last = (True, pos, end)
            pos = end
        if i + 1 >= len(parts):
            break
        tag, closing, opening, name = parts[i + 1:i + 5]
        start = pos
        pos += len(tag)
        kind = (closing or opening)[0].lower()
        if closing:
            if kind == "p":
                if parameter is None or invoke is None:
                    return stop(start, pos)
                parameter.closed = True
                parameter.end = invoke.end = pos
                parameter = None
            elif kind == "i":
                if invoke is None:
                    return stop(start, pos)
                invoke.closed, invoke.end = True, pos
                if block_open < 0:
                    last = (False, invoke.start, pos)
                invoke = parameter = None
            else:
                if block_open < 0:
                    if invoke is not None:  # the open invoke ends; the closing tag then stands alone
                        last = (False, invoke.start, start)
                        invoke = parameter = None
                    return stop(start, pos)
                last = (False, block_open, pos)
                invoke = parameter = None
                block_open = -1
        elif kind == "p":  # an opening tag: whatever it cannot sit inside ends (a missing closing tag)
            if invoke is None:
                return stop(start, pos)
            parameter = _Element(name if name is not None else name_attribute(tag), start, pos)
            invoke.parameters.append(parameter)
            invoke.end = pos
        elif kind == "i":
            parameter = None
            if block_open < 0:
                if invoke is not None:
                    last = (False, invoke.start, start)
                before = last
            invoke = _Element(name if name is not None else name_attribute(tag), start, pos)
            out.invokes.append(invoke)
        else:
            if block_open >= 0:
                out.unclosed_blocks.append(block_open)
                last = (False, block_open, start)
            elif invoke is not None:
                last = (False, invoke.start, start)
            before = last
            invoke = parameter = None
            block_open = start
    if block_open >= 0:
        out.unclosed_blocks.append(block_open)
    return out


def _canonical(text: str) -> Extraction | None:
    """The fast path's fast path: one well-formed block, prose without tags around it."""
    start = text.find("<function_calls>")
    block = _CANONICAL_BLOCK.match(text, start) if start >= 0 else None
    if block is None:
        return None
    calls: list[RawCall] = []
    for invoke in _CANONICAL_INVOKE.finditer(text, start, block.end()):
        arguments: dict[str, Any] = {}
        for key, raw in _CANONICAL_PARAMETER.findall(invoke.group(2)):
            if key in arguments:
                return None  # let the full path word the note
            raw = raw.strip()
            arguments[key] = xml_unescape(raw) if "&" in raw else raw
        calls.append(RawCall(invoke.group(1), arguments, invoke.span()))
    return canonical_reply(text, start, block.end(), calls, _NEAR_TAG)


def _extraction(tree: XmlCallTree, text: str, budget: GrammarBudget | None = None) -> Extraction:
    calls: list[RawCall] = []
    notes: list[tuple[int, str]] = []
    for invoke in tree.invokes:
        if not invoke.closed:
            notes.append((invoke.start, "the <invoke> element is not closed"))
        if invoke.name is None:
            notes.append((invoke.start, "an <invoke> without a name attribute was skipped"))
            continue
        arguments: dict[str, Any] = {}
        for parameter in invoke.parameters:
            key = parameter.name
            if not parameter.closed:
                notes.append((parameter.start, "the <parameter> element is not closed"))
            if key is None:
                notes.append((parameter.start, "a <parameter> without a name attribute was skipped"))
                continue
            if key in arguments:
                notes.append((parameter.start, f"parameter {key!r} is given twice; the last one counts"))
            raw = parameter.raw
            arguments[key] = xml_unescape(raw.strip()) if ("&" in raw or "<" in raw) else raw.strip()
        calls.append(RawCall(invoke.name, arguments, (invoke.start, invoke.end)))
    notes.extend((start, "the <function_calls> block is not closed") for start in tree.unclosed_blocks)
    inner = next(((at, gap) for gap, at in tree.inner_prose if not gap.isspace()), None)
    if inner is not None:  # (the first: one note says it)
        notes.append((inner[0], f"text between the tags was ignored: {excerpt(inner[1])}"))
    return tree.extraction(calls, notes, text, "no <invoke> element was found")


class XmlCall(TagFormat):
    info = ProtocolInfo(id="xml_call", name="<function_calls><invoke> XML", text_values=True,
                        description='Anthropic-style XML: <invoke name="tool"> per call inside <function_calls>, one '
                                    '<parameter name="arg">value</parameter> per argument; values are text.')
    tree, canonical, scan, extraction = XmlCallTree, staticmethod(_canonical), staticmethod(_scan_or_stop), \
        staticmethod(_extraction)

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
