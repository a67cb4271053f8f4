"""xml_call: Anthropic's ``<function_calls><invoke name="f"><parameter name="a">1</parameter>…`` XML.

Grammar: ``grammars/xml_call.lark``.  One ``<invoke>`` per call, one ``<parameter>`` per
argument; a parameter's content is text — white space at its ends dropped, XML references
and CDATA decoded — and the pipeline types it from the tool's schema (``text_values``).
Several ``<invoke>`` elements make several calls, in one ``<function_calls>`` block or in
several.  Missing closing tags are tolerated and noted.

Two more spellings of the shape are read.  MiniCPM's
``<function name="f"><param name="a">1</param></function>``: a ``<function>`` is an ``<invoke>``,
a ``<param>`` a ``<parameter>`` (each closed by its own name).  Anthropic's legacy
``<invoke><tool_name>f</tool_name><parameters><a>1</a></parameters></invoke>``: the tool named by
a ``<tool_name>`` element, the arguments elements named after them in ``<parameters>``, one after
another; a call whose argument tags do not pair (``<c></d>``, an element inside an argument) is
skipped with a note, as that format's own reader refuses it.

A CDATA section in a value is text whatever it holds, a closing tag too
(``<param name="a"><![CDATA[</param>]]></param>`` is ``</param>``); one that does not end before
the next ``<![CDATA[`` (or at all) is text as written.

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
from .duplicates import where as twice_at
from .markup_family import (Stopped, TagFormat, TaggedReply, canonical_reply, end_outside_cdata, excerpt,
                            tag_attribute, text_of, top_level_resumes, xml_escape, xml_text, xml_unescape, xml_value)
from .reading import GrammarBudget

_PREFIX = r"(?:[A-Za-z_][\w.-]*:)?"
_WORDS = r"function_calls|invoke|function|parameters?|param|tool_name"
# a tag of the format: (the tag, closing word, opening word, a leading name="..." attribute)
_TAG = re.compile(r"(<(?:/" + _PREFIX + r"(" + _WORDS + r")\s*>|" + _PREFIX + r"(" + _WORDS
                  + r")(?:\s+name\s*=\s*\"([^\"<>&]*)\")?(?=[\s>/])[^<>]*>))", re.I)
# where TEXT and VALUE stop: what may start a tag of the format
_NEAR_TAG = re.compile(r"</?" + _PREFIX + r"(?:" + _WORDS + r")(?:[\s>/]|$)", re.I)
# what each word's element is: <function> is MiniCPM's <invoke>, <param> its <parameter>
_KIND = {"function_calls": "calls", "invoke": "invoke", "function": "invoke", "parameter": "parameter",
         "param": "parameter", "tool_name": "tool_name", "parameters": "parameters"}
# an argument's tag in <parameters> (Anthropic's legacy shape): (closing, name, empty)
_ARGUMENT_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)(?:\s[^<>]*?)?(/?)>")
# the canonical reply (as rendered, lower-case tags, double-quoted names, no markup in values),
# read with three regular expressions in C; anything else goes to ``_scan_or_stop``
_CANONICAL_BLOCK = re.compile(r'<function_calls>\s*(?:<invoke name="[^"<>&]*">\s*(?:<parameter name="[^"<>&]*">'
                              r'[^<]*</parameter>\s*)*</invoke>\s*)*</function_calls>')
_CANONICAL_INVOKE = re.compile(r'<invoke name="([^"<>&]*)">(\s*(?:<parameter name="[^"<>&]*">[^<]*</parameter>\s*)*)'
                               r'</invoke>')
_CANONICAL_PARAMETER = re.compile(r'<parameter name="([^"<>&]*)">([^<]*)</parameter>')


class _Element:
    """An <invoke> (or <function>), or an element in one: a <parameter> (or <param>), a <tool_name>, a
    <parameters>.  Its tag's word (lower case, no prefix), its name attribute, where it stands, whether it is
    closed; an invoke's elements, in order; the others' raw text and where that starts."""

    __slots__ = ("word", "name", "start", "end", "closed", "parts", "raw", "raw_at")

    def __init__(self, word: str, name: str | None, start: int, end: int) -> None:
        self.word, self.name, self.start, self.end = word, name, start, end
        self.closed = False
        self.parts: list[_Element] = []
        self.raw, self.raw_at = "", end


def _word(tag: str) -> str:
    """The word of a tag of the format, lower case, without its prefix."""
    found = _TAG.match(tag)
    return (found.group(2) or found.group(3)).lower() if found is not None else ""


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
        opening = items[0]
        part = _Element(_word(str(opening)), name_attribute(str(opening)), opening.start_pos, opening.end_pos)
        for item in items[1:]:
            if item.type == "VALUE":
                part.raw, part.raw_at = str(item), item.start_pos
            else:
                part.closed = True
            part.end = item.end_pos
        return part

    tool_name = parameters = parameter

    def invoke(self, items: list) -> _Element:
        opening = items[0]
        invoke = _Element(_word(str(opening)), name_attribute(str(opening)), opening.start_pos, opening.end_pos)
        for item in items[1:]:
            if isinstance(item, _Element):
                invoke.parts.append(item)
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
    block_open = -1  # start of the open <function_calls>, or -1
    invoke: _Element | None = None
    part: _Element | None = None  # the open element in the invoke
    value = False  # whether the part's value (VALUE) comes next
    last: tuple[bool, int, int] | None = None  # the last top-level item: is it text, start, end
    before: tuple[bool, int, int] | None = None  # the one before the open top-level element
    pos = 0
    n = len(text)

    def stop(at: int, end: int) -> Stopped:
        opened = block_open if block_open >= 0 else invoke.start if invoke is not None else at
        context = before if (block_open >= 0 or invoke is not None) else last
        return Stopped(at, end, top_level_resumes(context, opened), text[at:end])

    parts = _TAG.split(text)  # text, then (tag, closing word, opening word, name) and text again, ...
    i, count = 0, len(parts)
    while i < count:
        gap = parts[i]
        at = pos + len(gap)  # where the tag after it starts (or the text ends)
        end = at  # where the VALUE or TEXT token before it ends
        if "<" in gap:
            if value and "<![CDATA[" in gap:  # a section is text whole: the value may go on past the tag
                end = end_outside_cdata(text, pos, _NEAR_TAG)
            else:  # one that starts like a tag of the format, which no terminal takes?
                near = _NEAR_TAG.search(text, pos)
                if near is not None and near.start() < at:
                    end = near.start()
        if end > pos:
            if value and part is not None and invoke is not None:
                part.raw, part.raw_at = text[pos:end], pos
                part.end = invoke.end = end
            elif invoke is not None:
                out.inner_prose.append((text[pos:end], pos))
                invoke.end = end
            elif block_open >= 0:
                out.inner_prose.append((text[pos:end], pos))
            else:
                out.outside.append(text[pos:end])
                last = (True, pos, end)
        value = False
        if end != at:
            if end < n and _TAG.match(text, end) is None:  # no terminal takes the tag there
                near = _NEAR_TAG.match(text, end)
                return stop(end, near.end() if near is not None else end + 1)
            while at < end:  # a section took the tags up to ``end`` (tags do not overlap: one starts there)
                at += len(parts[i + 1]) + len(parts[i + 5])
                i += 5
        if i + 1 >= count:
            break
        tag, closing, opening, name = parts[i + 1:i + 5]
        i += 5
        pos = at + len(tag)
        word = (closing or opening).lower()
        kind = _KIND[word]
        if closing:
            if kind == "calls":
                if block_open < 0:
                    if invoke is not None:  # the open invoke ends; the closing tag then stands alone
                        last = (False, invoke.start, at)
                        invoke = part = None
                    return stop(at, pos)
                last = (False, block_open, pos)
                invoke = part = None
                block_open = -1
            elif kind == "invoke":
                if invoke is None or invoke.word != word:
                    return stop(at, pos)
                invoke.closed, invoke.end = True, pos
                if block_open < 0:
                    last = (False, invoke.start, pos)
                invoke = part = None
            else:
                if part is None or invoke is None or part.word != word:
                    return stop(at, pos)
                part.closed = True
                part.end = invoke.end = pos
                part = None
        elif kind == "invoke":  # an opening tag: whatever it cannot sit inside ends (a missing closing tag)
            part = None
            if block_open < 0:
                if invoke is not None:
                    last = (False, invoke.start, at)
                before = last
            invoke = _Element(word, name if name is not None else name_attribute(tag), at, pos)
            out.invokes.append(invoke)
        elif kind == "calls":
            if block_open >= 0:
                out.unclosed_blocks.append(block_open)
                last = (False, block_open, at)
            elif invoke is not None:
                last = (False, invoke.start, at)
            before = last
            invoke = part = None
            block_open = at
        else:
            if invoke is None:
                return stop(at, pos)
            part = _Element(word, name if name is not None else name_attribute(tag), at, pos)
            invoke.parts.append(part)
            invoke.end = pos
            value = True
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


def _arguments_in(raw: str, at: int, notes: list[tuple[int, str]]) -> list[tuple[str, str, int]] | None:
    """The arguments written as elements in a <parameters> (its raw text, at ``at`` in the reply): ``<name>value
    </name>`` (or ``<name/>``) each, in a row, as (name, value, where); ``None`` and a note when their tags do
    not pair (Anthropic's legacy reader refuses the call then: an element in a value, a closing tag of
    another).  An argument still open where <parameters> ends is read, and noted."""
    found: list[tuple[str, str, int]] = []
    opened: re.Match[str] | None = None
    pos, n = 0, len(raw)
    stray = False
    while True:
        end = end_outside_cdata(raw, pos, _ARGUMENT_TAG)  # (a section is text whole, as in a parameter's value)
        if opened is None and not stray and not raw[pos:end].isspace() and end > pos:
            notes.append((at + pos, "text inside <parameters> was ignored: " + excerpt(raw[pos:end])))
            stray = True
        if end >= n:
            break
        tag = _ARGUMENT_TAG.match(raw, end)
        if tag is None:  # (never: the text ends where a tag starts)
            break
        closing, key, empty = tag.groups()
        pos = tag.end()
        if closing:
            if opened is None or opened.group(2) != key:
                where = f"where </{opened.group(2)}> was expected" if opened is not None else "closes nothing"
                notes.append((at + end, f"the arguments in <parameters> do not pair: {tag.group(0)!r} {where}; "
                                        "the call was skipped"))
                return None
            found.append((key, xml_value(raw[opened.end():end]), at + opened.start()))
            opened = None
        elif opened is not None:
            notes.append((at + end, f"the arguments in <parameters> do not pair: {tag.group(0)!r} inside "
                                    f"<{opened.group(2)}>; the call was skipped"))
            return None
        elif empty:
            found.append((key, "", at + end))
        else:
            opened = tag
    if opened is not None:
        notes.append((at + opened.start(), f"the <{opened.group(2)}> element is not closed"))
        found.append((opened.group(2), xml_value(raw[opened.end():]), at + opened.start()))
    return found


def _extraction(tree: XmlCallTree, text: str, budget: GrammarBudget | None = None) -> Extraction:
    calls: list[RawCall] = []
    notes: list[tuple[int, str]] = []
    for invoke in tree.invokes:
        if not invoke.closed:
            notes.append((invoke.start, f"the <{invoke.word}> element is not closed"))
        name = invoke.name
        arguments: dict[str, Any] = {}
        twice: list[str] = []
        paired = True
        for part in invoke.parts:
            if not part.closed:
                notes.append((part.start, f"the <{part.word}> element is not closed"))
            raw = part.raw
            if part.word == "tool_name":
                if name is None:
                    name = xml_value(raw) or None  # (an empty one names nothing)
                else:
                    notes.append((part.start, "the tool is named twice; the first name counts"))
                continue
            if part.word == "parameters":
                written = _arguments_in(raw, part.raw_at, notes)
                if written is None:
                    paired = False
                    continue
            elif part.name is None:
                notes.append((part.start, f"a <{part.word}> without a name attribute was skipped"))
                continue
            else:
                written = [(part.name, xml_unescape(raw.strip()) if ("&" in raw or "<" in raw) else raw.strip(),
                            part.start)]
            for key, value, where in written:
                if key in arguments:
                    notes.append((where, f"parameter {key!r} is given twice; the last one counts"))
                    twice.append(twice_at((), key))
                arguments[key] = value
        if name is None:
            notes.append((invoke.start, f"an <{invoke.word}> that names no tool (by a name attribute or a <tool_name>) "
                                        "was skipped"))
            continue
        if paired:
            calls.append(RawCall(name, arguments, (invoke.start, invoke.end), tuple(dict.fromkeys(twice))))
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
