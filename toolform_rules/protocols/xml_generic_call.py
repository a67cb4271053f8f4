"""xml_generic_call: ``<call><tool>f</tool><args><a>1</a></args></call>`` — arguments as named elements.

Grammar: ``grammars/xml_generic_call.lark``.  Each argument is an element named after it;
its content is text (references decoded, white space at the ends dropped), typed from the
tool's schema by the pipeline (``text_values``).  An argument element that holds elements
is an object (``<c><x>1</x></c>`` is ``{"x": "1"}``), or a list when its children are all
``<item>``; repeated children make a list.  The renderer writes objects and lists as JSON
text, which the schema types back.  An argument whose name is not an XML name, or is one of
the format's own tags, is written ``<arg name="...">``.

Fast path: replies in the rendered shape (tags exactly as written, no markup inside values)
are read by three regular expressions; anything else by the grammar.

>>> from toolform_rules.calls import ToolCall
>>> text = PROTOCOL.render_calls([ToolCall("f", {"a": 1, "b c": "x & y"})])
>>> print(text)
<call>
  <tool>f</tool>
  <args>
    <a>1</a>
    <arg name="b c">x &amp; y</arg>
  </args>
</call>
>>> PROTOCOL.parse(text).calls[0].arguments
{'a': '1', 'b c': 'x & y'}
>>> PROTOCOL.parse("<call><tool>f</tool><args><c><x>1</x><y><item>p</item></y></c></args></call>").calls[0].arguments
{'c': {'x': '1', 'y': ['p']}}
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import Token, parse
from .markup_family import (GRAMMAR_LIMIT, TaggedReply, excerpt, line_column, never_raises, read_within, tag_attribute,
                            text_of, xml_escape, xml_text, xml_unescape)

RESERVED = frozenset({"call", "calls", "tool", "args", "arg"})
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_TAG_NAME = re.compile(r"</?([A-Za-z_][\w.:-]*)")
_RESERVED_TAG = re.compile(r"</?(?:calls?|tool|args)(?:[\s>/]|$)", re.I)
_CANONICAL_CALL = re.compile(r"<call>\s*<tool>([^<]*)</tool>\s*<args>((?:\s*<([A-Za-z_][\w.-]*)>[^<]*</\3>)*)\s*"
                             r"</args>\s*</call>")
_CANONICAL_ARGUMENT = re.compile(r"<([A-Za-z_][\w.-]*)>([^<]*)</\1>")
_FENCE_ONLY = re.compile(r"(?:```[\w.+-]*)?(?:```)?")


class _Element:
    __slots__ = ("name", "tag", "children", "texts", "closed", "start")

    def __init__(self, tag: str, name: str, start: int) -> None:
        self.tag, self.name, self.start = tag, name, start
        self.children: list[_Element] = []
        self.texts: list[tuple[str, int]] = []
        self.closed = False


def _element(tag: str, start: int) -> _Element:
    """An argument element from its opening tag: named by the tag, or by ``name`` on an ``<arg>``."""
    found = _TAG_NAME.match(tag)
    name = found.group(1) if found else ""
    if name.lower() == "arg":
        attribute = tag_attribute(tag, "name")
        if attribute is not None:
            return _Element(name, attribute, start)
    return _Element(name, name, start)


class _Call:
    __slots__ = ("name", "arguments", "closed", "start", "end", "notes")

    def __init__(self, start: int) -> None:
        self.start = self.end = start
        self.name: str | None = None
        self.arguments: _Element | None = None
        self.closed = False
        self.notes: list[tuple[int, str]] = []


class XmlGenericTree(TaggedReply):
    """An ``xml_generic_call.lark`` tree → the calls, each with its <args> element tree."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[_Call] = []
        self.prose: list[str] = []
        self.notes: list[tuple[int, str]] = []

    def tool(self, items: list) -> tuple[str, str | None, int, bool, int]:
        text = next((str(t) for t in items[1:] if t.type == "VALUE_TEXT"), "")
        closed = items[-1].type == "TOOL_CLOSE"
        return "tool", xml_unescape(text.strip()), items[0].start_pos, closed, items[-1].end_pos

    def args(self, items: list) -> tuple[str, _Element, int, bool, int]:
        opening = items[0]
        root = _Element("", "", opening.start_pos)
        stack = [root]
        closed = False
        for token in items[1:]:
            kind = token.type
            if kind == "VALUE_TEXT":
                stack[-1].texts.append((str(token), token.start_pos))
            elif kind == "TAG_OPEN":
                element = _element(str(token), token.start_pos)
                stack[-1].children.append(element)
                stack.append(element)
            elif kind == "TAG_EMPTY":
                element = _element(str(token), token.start_pos)
                element.closed = True
                stack[-1].children.append(element)
            elif kind == "TAG_CLOSE":
                found = _TAG_NAME.match(str(token))
                tag = found.group(1) if found else ""
                depth = len(stack) - 1
                while depth > 0 and stack[depth].tag != tag:
                    depth -= 1
                if depth == 0:
                    self.notes.append((token.start_pos or 0,
                                       f"the closing tag {str(token)!r} closes nothing and was ignored"))
                    continue
                for open_element in stack[depth + 1:]:
                    self.notes.append((open_element.start, f"the <{open_element.name}> element is not closed"))
                stack[depth].closed = True
                del stack[depth:]
            else:  # ARGS_CLOSE
                closed = True
        for open_element in stack[1:]:
            self.notes.append((open_element.start, f"the <{open_element.name}> element is not closed"))
        return "args", root, opening.start_pos, closed, items[-1].end_pos

    def call(self, items: list) -> _Call:
        opening = items[0]
        call = _Call(opening.start_pos)
        call.end = opening.end_pos
        attribute = tag_attribute(str(opening), "tool") or tag_attribute(str(opening), "name")
        if attribute is not None:
            call.name = attribute
        for item in items[1:]:
            if isinstance(item, Token):
                call.end = item.end_pos or 0
                if item.type == "CALL_CLOSE":
                    call.closed = True
                elif not item.isspace():
                    call.notes.append((item.start_pos or 0, "text between the tags was ignored: " + excerpt(item)))
                continue
            kind, value, start, closed, call.end = item
            if kind == "tool":
                call.name = value
            else:
                call.arguments = value
            if not closed:
                call.notes.append((start, f"the <{kind}> element is not closed"))
        if not call.closed:
            call.notes.append((opening.start_pos, "the <call> element is not closed"))
        self.found.append(call)
        return call

    def calls(self, items: list) -> None:
        self.wrapper(items, "CALLS_CLOSE", "the <calls> element is not closed")



def _value(element: _Element, notes: list[tuple[int, str]]) -> Any:
    if not element.children:
        raw = "".join(t for t, _ in element.texts).strip()
        return xml_unescape(raw) if ("&" in raw or "<" in raw) else raw
    for text, at in element.texts:
        if not text.isspace():
            notes.append((at, f"text beside the elements of <{element.name}> was ignored: {excerpt(text)}"))
            break
    if all(child.name == "item" for child in element.children):
        return [_value(child, notes) for child in element.children]
    counts: dict[str, int] = {}
    for child in element.children:
        counts[child.name] = counts.get(child.name, 0) + 1
    out: dict[str, Any] = {}
    for child in element.children:
        value = _value(child, notes)
        if counts[child.name] > 1:  # a repeated child: a list
            out.setdefault(child.name, []).append(value)
        else:
            out[child.name] = value
    return out


def _arguments(root: _Element, notes: list[tuple[int, str]]) -> dict[str, Any]:
    for text, at in root.texts:
        if not text.isspace():
            notes.append((at, f"text inside <args> was ignored: {excerpt(text)}"))
            break
    arguments: dict[str, Any] = {}
    for child in root.children:
        if child.name in arguments:
            notes.append((child.start, f"argument {child.name!r} is given twice; the last one counts"))
        arguments[child.name] = _value(child, notes)
    return arguments


def _from_tree(tree: XmlGenericTree, text: str) -> Extraction:
    calls: list[RawCall] = []
    notes: list[tuple[int, str]] = list(tree.notes)
    for call in tree.found:
        notes.extend(call.notes)
        if not call.name:
            notes.append((call.start, "a <call> without a <tool> was skipped"))
            continue
        arguments = _arguments(call.arguments, notes) if call.arguments is not None else {}
        calls.append(RawCall(call.name, arguments, (call.start, call.end)))
    notes.sort(key=lambda note: note[0])
    words = tuple("line {}, column {}: {}".format(*line_column(text, at), what) for at, what in notes)
    clean = not words
    if not calls and not words:
        words = ("no <call> element was found",)
    outside = "".join("".join(piece.split()) for piece in tree.prose)
    compliant = bool(calls) and clean and _FENCE_ONLY.fullmatch(outside) is not None
    return Extraction(tuple(calls), words, compliant)


def _by_grammar(text: str) -> Extraction:
    tree = XmlGenericTree()
    tree.transform(parse("xml_generic_call", text))
    return _from_tree(tree, text)


def _canonical(text: str) -> Extraction | None:
    """Replies in the rendered shape: a row of <call> elements with plain-text arguments."""
    start = text.find("<call>")
    if start < 0:
        return None
    calls: list[RawCall] = []
    pos = start
    n = len(text)
    while True:
        found = _CANONICAL_CALL.match(text, pos)
        if found is None:
            break
        arguments: dict[str, Any] = {}
        for key, raw in _CANONICAL_ARGUMENT.findall(found.group(2)):
            if key.lower() in RESERVED or key in arguments:
                return None
            raw = raw.strip()
            arguments[key] = xml_unescape(raw) if "&" in raw else raw
        name = found.group(1).strip()
        calls.append(RawCall(xml_unescape(name) if "&" in name else name, arguments, found.span()))
        pos = found.end()
        while pos < n and text[pos].isspace():
            pos += 1
        if not text.startswith("<call>", pos):
            break
    if not calls:
        return None
    before, after = text[:start], text[calls[-1].span[1]:]  # type: ignore[index]
    if ("<" in before and _RESERVED_TAG.search(before)) or ("<" in after and _RESERVED_TAG.search(after)):
        return None
    outside = before + after
    compliant = not outside or outside.isspace() or _FENCE_ONLY.fullmatch("".join(outside.split())) is not None
    return Extraction(tuple(calls), (), compliant)


def _argument_element(key: str, value: Any, indent: str) -> str:
    body = xml_text(text_of(value))
    if _XML_NAME.fullmatch(key) and key.lower() not in RESERVED:
        return f"{indent}<{key}>{body}</{key}>"
    return f'{indent}<arg name="{xml_escape(key, attribute=True)}">{body}</arg>'


class XmlGenericCall(Protocol):
    info = ProtocolInfo(
        id="xml_generic_call",
        name="<call><tool>..</tool><args>..</args></call>",
        description="A <call> element per call: the tool in <tool>, each argument an element named after it in "
                    "<args>; values are text.",
        parallel=True,
        text_values=True,
    )

    @never_raises
    def parse(self, text: str, tools: Toolset | None = None) -> Extraction:
        if not isinstance(text, str):
            return Extraction((), ("the reply is not text",), False)
        fast = _canonical(text)
        if fast is not None:
            return fast
        return read_within(text, _by_grammar, limit=GRAMMAR_LIMIT, what="the XML",
                           too_deep="the XML is nested too deeply to read")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        blocks = []
        for call in calls:
            lines = ["<call>", f"  <tool>{xml_text(call.name)}</tool>", "  <args>"]
            lines.extend(_argument_element(key, value, "    ") for key, value in call.arguments.items())
            lines += ["  </args>", "</call>"]
            blocks.append("\n".join(lines))
        return "\n".join(blocks)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with XML only: one <call> element per call. Inside it, put the tool's name in <tool> and "
                "the arguments in <args>, one element per argument named after it. Write values as plain text "
                "(numbers and true/false as they are, lists and objects as JSON) and escape & < > as "
                "&amp; &lt; &gt;.\n"
                "<call>\n  <tool>tool_name</tool>\n  <args>\n    <argument>value</argument>\n  </args>\n</call>")


PROTOCOL = XmlGenericCall()
