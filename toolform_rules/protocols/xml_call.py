"""xml_call: Anthropic's ``<function_calls><invoke name="f"><parameter name="a">1</parameter>…`` XML.

Grammar: ``grammars/xml_call.lark``.  One ``<invoke>`` per call, one ``<parameter>`` per
argument; a parameter's content is text — white space at its ends dropped, XML references
and CDATA decoded — and the pipeline types it from the tool's schema (``text_values``).
Several ``<invoke>`` elements make several calls, in one ``<function_calls>`` block or in
several.  Missing closing tags are tolerated and noted.

Fast path: one compiled regular expression finds the tags and a small state machine
follows the grammar's structure; anything it does not expect (a stray closing tag, a
malformed tag) sends the reply to the Lark grammar, which says where it stopped.

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
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import Token, Transformer, parse
from .markup_family import (LineCounter, Stopped, excerpt, grammar_stop_note, never_raises, tag_attribute, text_of,
                            top_level_resumes, xml_escape, xml_text, xml_unescape)
from .text_family import grammar_chars

_PREFIX = r"(?:[A-Za-z_][\w.-]*:)?"
# a tag of the format: (whole tag, closing kind, opening kind, a leading name="..." attribute)
_TAG = re.compile(r"(<(?:/" + _PREFIX + r"(function_calls|invoke|parameter)\s*>|" + _PREFIX
                  + r"(function_calls|invoke|parameter)(?:\s+name\s*=\s*\"([^\"<>&]*)\")?(?=[\s>/])[^<>]*>))", re.I)
_NEAR_TAG = re.compile(r"</?" + _PREFIX + r"(?:function_calls|invoke|parameter)(?:[\s>/]|$)", re.I)
# the canonical reply (as rendered, lower-case tags, double-quoted names, no markup in values),
# read with three regular expressions in C; anything else goes to ``_scan``
_CANONICAL_BLOCK = re.compile(r'<function_calls>\s*(?:<invoke name="[^"<>&]*">\s*(?:<parameter name="[^"<>&]*">'
                              r'[^<]*</parameter>\s*)*</invoke>\s*)*</function_calls>')
_CANONICAL_INVOKE = re.compile(r'<invoke name="([^"<>&]*)">(\s*(?:<parameter name="[^"<>&]*">[^<]*</parameter>\s*)*)'
                               r'</invoke>')
_CANONICAL_PARAMETER = re.compile(r'<parameter name="([^"<>&]*)">([^<]*)</parameter>')
_FENCE_ONLY = re.compile(r"(?:```[\w.+-]*)?(?:```)?")


class _Parameter:
    __slots__ = ("name", "raw", "closed", "start", "end")

    def __init__(self, name: str | None, start: int, end: int) -> None:
        self.name, self.start, self.end = name, start, end
        self.raw = ""
        self.closed = False


class _Invoke:
    __slots__ = ("name", "parameters", "closed", "start", "end")

    def __init__(self, name: str | None, start: int, end: int) -> None:
        self.name, self.start, self.end = name, start, end
        self.parameters: list[_Parameter] = []
        self.closed = False


class _Structure:
    """What a reply holds in this format: the invokes, the prose around and between them, open blocks."""

    __slots__ = ("invokes", "prose", "inner_prose", "unclosed_blocks")

    def __init__(self) -> None:
        self.invokes: list[_Invoke] = []
        self.prose: list[str] = []  # top level
        self.inner_prose: list[tuple[str, int]] = []  # inside <function_calls> or <invoke>
        self.unclosed_blocks: list[int] = []


def name_attribute(tag: str) -> str | None:
    """The ``name`` attribute of an opening tag, references decoded.

    >>> name_attribute('<invoke name="a&amp;b">'), name_attribute("<parameter type='s' name='x'>")
    ('a&b', 'x')
    """
    return tag_attribute(tag, "name")


def _scan(text: str) -> _Structure | None:
    """The fast path: the grammar's structure followed over regex-found tags; ``None`` where it would stop."""
    found = _scan_or_stop(text)
    return None if isinstance(found, Stopped) else found


def _scan_or_stop(text: str) -> _Structure | Stopped:
    """:func:`_scan`, or where the grammar stops and where it can start over to stop the same way."""
    out = _Structure()
    parts = _TAG.split(text)
    block_open = -1  # start of the open <function_calls>, or -1
    invoke: _Invoke | None = None
    parameter: _Parameter | None = None
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
                out.prose.append(gap)
                last = (True, pos, end)
            pos = end
        if i + 1 >= len(parts):
            break
        tag, closing, opening, name = parts[i + 1:i + 5]
        start = pos
        pos += len(tag)
        if closing:
            first = closing[0]
            if first in "pP":
                if parameter is None or invoke is None:
                    return stop(start, pos)
                parameter.closed = True
                parameter.end = invoke.end = pos
                parameter = None
            elif first in "iI":
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
            continue
        first = opening[0]
        if first in "pP":  # an opening tag: whatever it cannot sit inside ends (a missing closing tag)
            if invoke is None:
                return stop(start, pos)
            parameter = _Parameter(name if name is not None else name_attribute(tag), start, pos)
            invoke.parameters.append(parameter)
            invoke.end = pos
        elif first in "iI":
            parameter = None
            if block_open < 0:
                if invoke is not None:
                    last = (False, invoke.start, start)
                before = last
            invoke = _Invoke(name if name is not None else name_attribute(tag), start, pos)
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
    if start < 0:
        return None
    block = _CANONICAL_BLOCK.match(text, start)
    if block is None:
        return None
    before, after = text[:start], text[block.end():]
    if ("<" in before and _NEAR_TAG.search(before)) or ("<" in after and _NEAR_TAG.search(after)):
        return None
    calls: list[RawCall] = []
    notes: list[str] = []
    for invoke in _CANONICAL_INVOKE.finditer(text, start, block.end()):
        arguments: dict[str, Any] = {}
        for key, raw in _CANONICAL_PARAMETER.findall(invoke.group(2)):
            if key in arguments:
                notes.append(f"parameter {key!r} is given twice; the last one counts")
            raw = raw.strip()
            arguments[key] = xml_unescape(raw) if "&" in raw else raw
        calls.append(RawCall(invoke.group(1), arguments, invoke.span()))
    if notes or not calls:
        return None  # let the full path word the notes
    outside = before + after
    compliant = not outside or outside.isspace() or _FENCE_ONLY.fullmatch("".join(outside.split())) is not None
    return Extraction(tuple(calls), (), compliant)


class XmlCallTree(Transformer):
    """An ``xml_call.lark`` tree → the reply's structure (the same one the fast path builds)."""

    def __init__(self) -> None:
        super().__init__()
        self.out = _Structure()

    def prose(self, items: list) -> tuple[str, int]:
        token = items[0]
        return str(token), token.start_pos

    def parameter(self, items: list) -> _Parameter:
        opening = items[0]
        parameter = _Parameter(name_attribute(str(opening)), opening.start_pos, opening.end_pos)
        for item in items[1:]:
            if item.type == "TEXT":
                parameter.raw = str(item)
            else:
                parameter.closed = True
            parameter.end = item.end_pos
        return parameter

    def invoke(self, items: list) -> _Invoke:
        opening = items[0]
        invoke = _Invoke(name_attribute(str(opening)), opening.start_pos, opening.end_pos)
        for item in items[1:]:
            if isinstance(item, _Parameter):
                invoke.parameters.append(item)
                invoke.end = item.end
            elif isinstance(item, tuple):
                self.out.inner_prose.append(item)
                invoke.end = item[1] + len(item[0])
            else:  # the closing tag
                invoke.closed = True
                invoke.end = item.end_pos
        self.out.invokes.append(invoke)
        return invoke

    def function_calls(self, items: list) -> list:
        if not (isinstance(items[-1], Token) and items[-1].type == "CALLS_CLOSE"):
            self.out.unclosed_blocks.append(items[0].start_pos)
        for item in items[1:]:
            if isinstance(item, tuple):
                self.out.inner_prose.append(item)
        return items

    def start(self, items: list) -> _Structure:
        for item in items:
            if isinstance(item, tuple):
                self.out.prose.append(item[0])
        self.out.invokes.sort(key=lambda inv: inv.start)
        self.out.inner_prose.sort(key=lambda p: p[1])
        return self.out


def _structure_by_grammar(text: str) -> _Structure:
    tree = parse("xml_call", text)
    result: _Structure = XmlCallTree().transform(tree)
    return result



def _extraction(structure: _Structure, text: str) -> Extraction:
    calls: list[RawCall] = []
    notes: list[str] = []
    line_of = LineCounter(text)

    def _where(_: str, index: int) -> str:
        return "line %d, column %d" % line_of(index)

    for invoke in structure.invokes:
        if not invoke.closed:
            notes.append(f"{_where(text, invoke.start)}: the <invoke> element is not closed")
        if invoke.name is None:
            notes.append(f"{_where(text, invoke.start)}: an <invoke> without a name attribute was skipped")
            continue
        arguments: dict[str, Any] = {}
        for parameter in invoke.parameters:
            key = parameter.name
            if not parameter.closed:
                notes.append(f"{_where(text, parameter.start)}: the <parameter> element is not closed")
            if key is None:
                notes.append(f"{_where(text, parameter.start)}: a <parameter> without a name attribute was skipped")
                continue
            if key in arguments:
                notes.append(f"{_where(text, parameter.start)}: parameter {key!r} is given twice; the last one counts")
            raw = parameter.raw
            arguments[key] = xml_unescape(raw.strip()) if ("&" in raw or "<" in raw) else raw.strip()
        calls.append(RawCall(invoke.name, arguments, (invoke.start, invoke.end)))
    for start in structure.unclosed_blocks:
        notes.append(f"{_where(text, start)}: the <function_calls> block is not closed")
    for gap, at in structure.inner_prose:
        if not gap.isspace():
            notes.append(f"{_where(text, at)}: text between the tags was ignored: {excerpt(gap)}")
            break
    clean = not notes
    if not calls and not notes:
        notes.append("no <invoke> element was found")
    if clean and calls:
        outside = "".join(structure.prose)
        compliant = outside.isspace() or not outside or _FENCE_ONLY.fullmatch("".join(outside.split())) is not None
    else:
        compliant = False
    return Extraction(tuple(calls), tuple(notes), compliant)


class XmlCall(Protocol):
    info = ProtocolInfo(
        id="xml_call",
        name="<function_calls><invoke> XML",
        description=('Anthropic-style XML: <invoke name="tool"> per call inside <function_calls>, one '
                     '<parameter name="arg">value</parameter> per argument; values are text.'),
        parallel=True,
        text_values=True,
    )

    @never_raises
    def parse(self, text: str, tools: Toolset | None = None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        fast = _canonical(text)
        if fast is not None:
            return fast
        structure = _scan_or_stop(text)
        if isinstance(structure, Stopped):
            return grammar_stop_note(text, structure, _structure_by_grammar, limit=grammar_chars(limits),
                                     what="the XML", too_deep="the XML is nested too deeply to read")
        return _extraction(structure, text)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        lines = ["<function_calls>"]
        for call in calls:
            lines.append(f'  <invoke name="{xml_escape(call.name, attribute=True)}">')
            for key, value in call.arguments.items():
                lines.append(f'    <parameter name="{xml_escape(key, attribute=True)}">'
                             f'{xml_text(text_of(value))}</parameter>')
            lines.append("  </invoke>")
        lines.append("</function_calls>")
        return "\n".join(lines)

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
