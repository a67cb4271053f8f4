"""xml_generic_call: ``<call><tool>f</tool><args><a>1</a></args></call>`` — arguments as named elements.

Grammar: ``grammars/xml_generic_call.lark``.  Each argument is an element named after it;
its content is text (references decoded, white space at the ends dropped), typed from the
tool's schema by the pipeline (``text_values``).  An argument element that holds elements
is an object (``<c><x>1</x></c>`` is ``{"x": "1"}``), or a list when its children are all
``<item>``; repeated children make a list.  The renderer writes objects and lists as JSON
text, which the schema types back.  An argument whose name is not an XML name, or is one of
the format's own tags, is written ``<arg name="...">``.

A reply in the rendered shape (a row of ``<call>`` elements, plain-text arguments) is read by two regular
expressions, held to the grammar by a differential test; any other reply by the grammar.

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
from collections import Counter
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..grammar import GrammarFailure, Transformer, parse
from ..limits import Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from .duplicates import where
from .markup_family import (excerpt, located_notes, only_fences, tag_attribute, text_of, xml_escape, xml_text,
                            xml_unescape)

RESERVED = frozenset({"call", "calls", "tool", "args", "arg"})
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_TAG_NAME = re.compile(r"</?([A-Za-z_][\w.:-]*)")
_RESERVED_TAG = re.compile(r"</?(?:calls?|tool|args)(?:[\s>/]|$)", re.I)
_CANONICAL_CALL = re.compile(r"<call>\s*<tool>([^<]*)</tool>\s*<args>((?:\s*<([A-Za-z_][\w.-]*)>[^<]*</\3>)*)\s*"
                             r"</args>\s*</call>")
_CANONICAL_ARGUMENT = re.compile(r"<([A-Za-z_][\w.-]*)>([^<]*)</\1>")
_SPACE = re.compile(r"\s*")


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


class XmlGenericTree(Transformer):
    """An ``xml_generic_call.lark`` tree → the calls, each with its <args> element tree, the prose outside every
    element, and notes placed by offset."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[_Call] = []
        self.outside: list[str] = []
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
            if hasattr(item, "type"):  # a token (the other items are the tool's and the args' tuples)
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
        for item in items[1:]:
            if getattr(item, "type", None) == "TEXT" and not item.isspace():
                self.notes.append((item.start_pos or 0, "text between the tags was ignored: " + excerpt(item)))
        if getattr(items[-1], "type", None) != "CALLS_CLOSE":
            self.notes.append((items[0].start_pos, "the <calls> element is not closed"))

    def start(self, items: list) -> XmlGenericTree:
        self.outside = [str(item) for item in items if isinstance(item, str)]
        return self


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
    counts = Counter(child.name for child in element.children)
    out: dict[str, Any] = {}
    for child in element.children:
        value = _value(child, notes)
        if counts[child.name] > 1:  # a repeated child: a list
            out.setdefault(child.name, []).append(value)
        else:
            out[child.name] = value
    return out


def _arguments(root: _Element, notes: list[tuple[int, str]], twice: list[str]) -> dict[str, Any]:
    """The arguments an <args> element holds; ``twice`` gets where one is given twice (its last value counts)."""
    for text, at in root.texts:
        if not text.isspace():
            notes.append((at, f"text inside <args> was ignored: {excerpt(text)}"))
            break
    arguments: dict[str, Any] = {}
    for child in root.children:
        if child.name in arguments:
            notes.append((child.start, f"argument {child.name!r} is given twice; the last one counts"))
            twice.append(where((), child.name))
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
        twice: list[str] = []
        arguments = _arguments(call.arguments, notes, twice) if call.arguments is not None else {}
        calls.append(RawCall(call.name, arguments, (call.start, call.end), tuple(dict.fromkeys(twice))))
    words = located_notes(text, notes)
    return Extraction(tuple(calls), words or (() if calls else ("no <call> element was found",)),
                      bool(calls) and not words and only_fences("".join(tree.outside)))


def _canonical(text: str) -> Extraction | None:
    """The fast path: a reply in the rendered shape — a row of <call> elements with plain-text arguments, prose
    without the format's tags around it — read by two regular expressions; ``None`` for any other."""
    start = pos = text.find("<call>")
    calls: list[RawCall] = []
    while pos >= 0:
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
        pos = _SPACE.match(text, found.end()).end()  # type: ignore[union-attr]
        if not text.startswith("<call>", pos):
            break
    end = calls[-1].span[1] if calls else 0  # type: ignore[index]
    if not calls or _RESERVED_TAG.search(text, 0, start) or _RESERVED_TAG.search(text, end):
        return None
    return Extraction(tuple(calls), (), only_fences(text[:start] + text[end:]))


def _argument_element(key: str, value: Any, indent: str) -> str:
    body = xml_text(text_of(value))
    if _XML_NAME.fullmatch(key) and key.lower() not in RESERVED:
        return f"{indent}<{key}>{body}</{key}>"
    return f'{indent}<arg name="{xml_escape(key, attribute=True)}">{body}</arg>'


class XmlGenericCall(Protocol):
    info = ProtocolInfo(id="xml_generic_call", name="<call><tool>..</tool><args>..</args></call>", text_values=True,
                        description="A <call> element per call: the tool in <tool>, each argument an element named "
                                    "after it in <args>; values are text.")
    closes_calls = True

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        fast = _canonical(text)
        return fast if fast is not None else self.by_grammar(text)

    def by_grammar(self, text: str, tools: Toolset | None = None) -> Extraction:
        """What the grammar reads of ``text``: the specification the fast path is held to, and the reader of
        every reply it does not take."""
        try:
            return _from_tree(XmlGenericTree().transform(parse("xml_generic_call", text)), text)
        except GrammarFailure as failure:
            return Extraction((), (f"the XML could not be read: {failure.describe()}",), False)
        except RecursionError:  # elements nested deeper than Python's stack
            return Extraction((), ("the XML is nested too deeply to read",), False)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join("\n".join(["<call>", f"  <tool>{xml_text(call.name)}</tool>", "  <args>",
                                    *(_argument_element(key, value, "    ") for key, value in call.arguments.items()),
                                    "  </args>", "</call>"]) for call in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with XML only: one <call> element per call. Inside it, put the tool's name in <tool> and "
                "the arguments in <args>, one element per argument named after it. Write values as plain text "
                "(numbers and true/false as they are, lists and objects as JSON) and escape & < > as "
                "&amp; &lt; &gt;.\n"
                "<call>\n  <tool>tool_name</tool>\n  <args>\n    <argument>value</argument>\n  </args>\n</call>")


PROTOCOL = XmlGenericCall()
