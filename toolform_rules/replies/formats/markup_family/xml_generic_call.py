"""xml_generic_call: ``<call><tool>f</tool><args><a>1</a></args></call>`` — arguments as named elements.

Grammar: ``grammars/xml_generic_call.lark``.  Each argument is an element named after it; its content is text
(references decoded, white space at the ends dropped), typed from the tool's schema (``text_values``).  An
argument element that holds elements is an object (``<c><x>1</x></c>`` is ``{"x": "1"}``), or a list when its
children are all ``<item>``; repeated children make a list.  The renderer writes objects and lists as JSON
text, and an argument whose name is not an XML name, or is one of the format's tags, as ``<arg name="...">``.
A reply in the rendered shape is read by two regular expressions (the fast path); any other by the grammar,
within the reply's ``Limits.reply_grammar_chars``.

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

from ....calls import ToolCall
from ....grammar import GrammarFailure, Transformer, parse
from ....limits import Limits
from ....schema.toolset import Toolset
from ..base import Extraction, Protocol, ProtocolInfo, RawCall
from ..duplicates import where
from ..reading import GrammarBudget
from .shared import (excerpt, located_notes, only_fences, tag_attribute, text_of, xml_escape, xml_text,
                            xml_unescape)

RESERVED = frozenset({"call", "calls", "tool", "args", "arg"})
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_TAG_NAME = re.compile(r"</?([A-Za-z_][\w.:-]*)")
_RESERVED_TAG = re.compile(r"</?(?:calls?|tool|args)(?:[\s>/]|$)", re.I)
_CANONICAL_CALL = re.compile(r"<call>\s*<tool>([^<]*)</tool>\s*<args>((?:\s*<([A-Za-z_][\w.-]*)>[^<]*</\3>)*)\s*"
                             r"</args>\s*</call>")
_CANONICAL_ARGUMENT = re.compile(r"<([A-Za-z_][\w.-]*)>([^<]*)</\1>")
_SPACE = re.compile(r"\s*")
_NONE_FOUND = "no <call> element was found"


class _Element:
    """An argument element: its tag's name, the argument's (the tag's, or ``name`` on an ``<arg>``), where it
    starts, whether it is closed, its elements and its text; an <args> element is one without a name."""

    __slots__ = ("tag", "name", "start", "closed", "children", "texts")

    def __init__(self, tag: str, start: int) -> None:
        found = _TAG_NAME.match(tag)
        self.tag = found.group(1) if found else ""
        attribute = tag_attribute(tag, "name") if self.tag.lower() == "arg" else None
        self.name = self.tag if attribute is None else attribute
        self.start, self.closed = start, False
        self.children: list[_Element] = []
        self.texts: list[tuple[str, int]] = []


class _Call:
    __slots__ = ("name", "arguments", "closed", "start", "end", "notes")

    def __init__(self, name: str | None, start: int, end: int) -> None:
        self.name, self.start, self.end, self.closed = name, start, end, False
        self.arguments: _Element | None = None
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
        return "tool", xml_unescape(text.strip()), items[0].start_pos, items[-1].type == "TOOL_CLOSE", items[-1].end_pos

    def args(self, items: list) -> tuple[str, _Element, int, bool, int]:
        """The <args> element and the elements in it, their tags paired."""
        stack = [_Element("", items[0].start_pos)]
        for token in items[1:-1] if items[-1].type == "ARGS_CLOSE" else items[1:]:
            if token.type == "VALUE_TEXT":
                stack[-1].texts.append((str(token), token.start_pos))
            elif token.type == "TAG_CLOSE":
                self._close(stack, token)
            else:
                element = _Element(str(token), token.start_pos)
                element.closed = token.type == "TAG_EMPTY"
                stack[-1].children.append(element)
                stack += [] if element.closed else [element]
        self.notes += [(element.start, f"the <{element.name}> element is not closed") for element in stack[1:]]
        return "args", stack[0], items[0].start_pos, items[-1].type == "ARGS_CLOSE", items[-1].end_pos

    def _close(self, stack: list[_Element], token: Any) -> None:
        """A closing tag closes the innermost open element of its name (those inside it are not closed), or
        nothing: it is ignored."""
        tag = _Element(str(token), token.start_pos).tag
        depth = next((depth for depth in range(len(stack) - 1, 0, -1) if stack[depth].tag == tag), 0)
        if depth == 0:
            self.notes.append((token.start_pos, f"the closing tag {str(token)!r} closes nothing and was ignored"))
            return
        self.notes += [(element.start, f"the <{element.name}> element is not closed") for element in stack[depth + 1:]]
        stack[depth].closed = True
        del stack[depth:]

    def call(self, items: list) -> _Call:
        opening = items[0]
        call = _Call(tag_attribute(str(opening), "tool") or tag_attribute(str(opening), "name"), opening.start_pos,
                     opening.end_pos)
        for item in items[1:]:
            if hasattr(item, "type"):  # a token (the other items are the tool's and the args' tuples)
                call.end, call.closed = item.end_pos, call.closed or item.type == "CALL_CLOSE"
                if item.type != "CALL_CLOSE" and not item.isspace():
                    call.notes.append((item.start_pos, "text between the tags was ignored: " + excerpt(item)))
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
        self.notes += [(item.start_pos, "text between the tags was ignored: " + excerpt(item)) for item in items[1:]
                       if getattr(item, "type", None) == "TEXT" and not item.isspace()]
        if getattr(items[-1], "type", None) != "CALLS_CLOSE":
            self.notes.append((items[0].start_pos, "the <calls> element is not closed"))

    def start(self, items: list) -> XmlGenericTree:
        self.outside = [str(item) for item in items if isinstance(item, str)]
        return self


def _value(element: _Element, notes: list[tuple[int, str]]) -> Any:
    """An element's value: its text; or an object of its elements (a list when they are all <item>, or of those
    repeated), with a note on the text beside them."""
    if not element.children:
        raw = "".join(t for t, _ in element.texts).strip()
        return xml_unescape(raw) if ("&" in raw or "<" in raw) else raw
    beside = next(((text, at) for text, at in element.texts if not text.isspace()), None)
    if beside is not None:
        notes.append((beside[1], f"text beside the elements of <{element.name}> was ignored: {excerpt(beside[0])}"))
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
    stray = next(((text, at) for text, at in root.texts if not text.isspace()), None)
    if stray is not None:
        notes.append((stray[1], f"text inside <args> was ignored: {excerpt(stray[0])}"))
    arguments: dict[str, Any] = {}
    for child in root.children:
        if child.name in arguments:
            notes.append((child.start, f"argument {child.name!r} is given twice; the last one counts"))
            twice.append(where((), child.name))
        arguments[child.name] = _value(child, notes)
    return arguments


def _from_tree(tree: XmlGenericTree, text: str) -> Extraction:
    calls: list[RawCall] = []
    notes = list(tree.notes)
    for call in tree.found:
        notes += call.notes
        if not call.name:
            notes.append((call.start, "a <call> without a <tool> was skipped"))
            continue
        twice: list[str] = []
        arguments = _arguments(call.arguments, notes, twice) if call.arguments is not None else {}
        calls.append(RawCall(call.name, arguments, (call.start, call.end), tuple(dict.fromkeys(twice))))
    words = located_notes(text, notes)
    return Extraction(tuple(calls), words or (() if calls else (_NONE_FOUND,)),
                      bool(calls) and not words and only_fences("".join(tree.outside)))


def _canonical(text: str) -> Extraction | None:
    """The fast path: a reply in the rendered shape — a row of <call> elements with plain-text arguments, prose
    without the format's tags around it — read by two regular expressions; ``None`` for any other."""
    start = pos = text.find("<call>")
    calls: list[RawCall] = []
    while (found := _CANONICAL_CALL.match(text, pos) if pos >= 0 else None) is not None:
        arguments: dict[str, Any] = {}
        for key, raw in _CANONICAL_ARGUMENT.findall(found.group(2)):
            if key.lower() in RESERVED or key in arguments:
                return None
            arguments[key] = xml_unescape(raw.strip())
        calls.append(RawCall(xml_unescape(found.group(1).strip()), arguments, found.span()))
        pos = _SPACE.match(text, found.end()).end()  # type: ignore[union-attr]
        pos = pos if text.startswith("<call>", pos) else -1
    end = calls[-1].span[1] if calls else 0  # type: ignore[index]
    if not calls or _RESERVED_TAG.search(text, 0, start) or _RESERVED_TAG.search(text, end):
        return None
    return Extraction(tuple(calls), (), only_fences(text[:start] + text[end:]))


def _argument_element(key: str, value: Any) -> str:
    body = xml_text(text_of(value))
    if _XML_NAME.fullmatch(key) and key.lower() not in RESERVED:
        return f"    <{key}>{body}</{key}>"
    return f'    <arg name="{xml_escape(key, attribute=True)}">{body}</arg>'


class XmlGenericCall(Protocol):
    info = ProtocolInfo(id="xml_generic_call", name="<call><tool>..</tool><args>..</args></call>", text_values=True,
                        description="A <call> element per call: the tool in <tool>, each argument an element named "
                                    "after it in <args>; values are text.")
    closes_calls = True

    def read(self, text: str, tools: Toolset | None, limits: Limits) -> Extraction:
        fast = _canonical(text)
        if fast is not None:
            return fast
        if _RESERVED_TAG.search(text) is None:  # no tag of the format: the grammar's TEXT, nothing else
            return Extraction((), (_NONE_FOUND,), False)
        try:  # the grammar reads what the fast path does not within the reply's budget (seconds a megabyte)
            GrammarBudget.of(limits).spend(self.info.id, text)
        except GrammarFailure as refused:
            return Extraction((), (f"the XML could not be read: {refused.describe()}",), False)
        return self.by_grammar(text)

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
                                    *(_argument_element(key, value) for key, value in call.arguments.items()),
                                    "  </args>", "</call>"]) for call in calls)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with XML only: one <call> element per call. Inside it, put the tool's name in <tool> and "
                "the arguments in <args>, one element per argument named after it. Write values as plain text "
                "(numbers and true/false as they are, lists and objects as JSON) and escape & < > as "
                "&amp; &lt; &gt;.\n"
                "<call>\n  <tool>tool_name</tool>\n  <args>\n    <argument>value</argument>\n  </args>\n</call>")


PROTOCOL = XmlGenericCall()
