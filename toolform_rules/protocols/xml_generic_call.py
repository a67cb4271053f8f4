"""xml_generic_call: ``<call><tool>f</tool><args><a>1</a></args></call>`` — arguments as named elements.

Grammar: ``grammars/xml_generic_call.lark``.  Each argument is an element named after it;
its content is text (references decoded, white space at the ends dropped), typed from the
tool's schema by the pipeline (``text_values``).  An argument element that holds elements
is an object (``<c><x>1</x></c>`` is ``{"x": "1"}``), or a list when its children are all
``<item>``; repeated children make a list.  The renderer writes objects and lists as JSON
text, which the schema types back.  An argument whose name is not an XML name, or is one of
the format's own tags, is written ``<arg name="...">``.

Fast paths (as in every tag format): replies in the rendered shape (tags exactly as written, no
markup inside values) are read by three regular expressions; any other reply by one pass over its
tokens, lexed in C as the grammar's contextual lexer lexes them and fed to the same transformer.
The grammar runs only where that pass stops, on a bounded stretch (``Limits.reply_grammar_chars``).

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
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo, RawCall
from .duplicates import where
from .markup_family import (Stopped, TagFormat, TaggedReply, canonical_reply, excerpt, tag_attribute, text_of,
                            top_level_resumes, xml_escape, xml_text, xml_unescape)
from .reading import GrammarBudget

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


class XmlGenericTree(TaggedReply):
    """An ``xml_generic_call.lark`` tree → the calls, each with its <args> element tree."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[_Call] = []

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


def _from_tree(tree: XmlGenericTree, text: str, budget: GrammarBudget | None = None) -> Extraction:
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
    return tree.extraction(calls, notes, text, "no <call> element was found")


# ---------------------------------------------------------------------------------------------
# the fast path for any reply: the grammar's contextual lexer and parser, followed in one pass

# the format's tags (the grammar's priority-5 terminals), by group: which one matched
_FORMAT = re.compile(r"<(?:(calls)(?:\s[^<>]*)?>|/(calls)\s*>|(call)(?:\s[^<>]*)?>|/(call)\s*>|(tool)(?:\s[^<>]*)?>"
                     r"|/(tool)\s*>|(args)(?:\s[^<>]*)?>|/(args)\s*>)", re.I)
(_CALLS_OPEN, _CALLS_CLOSE, _CALL_OPEN, _CALL_CLOSE, _TOOL_OPEN, _TOOL_CLOSE, _ARGS_OPEN,
 _ARGS_CLOSE) = range(1, 9)
_KINDS = (None, "CALLS_OPEN", "CALLS_CLOSE", "CALL_OPEN", "CALL_CLOSE", "TOOL_OPEN", "TOOL_CLOSE", "ARGS_OPEN",
          "ARGS_CLOSE")
# TAG_EMPTY, TAG_OPEN, TAG_CLOSE (in that order of priority)
_ELEMENT_TAG = re.compile(r"<(?:([A-Za-z_][\w.:-]*(?:\s[^<>]*)?/>)|[A-Za-z_][\w.:-]*(?:\s[^<>]*)?>"
                          r"|(/)[A-Za-z_][\w.:-]*\s*>)")
# where TEXT stops (a "<" that starts a tag of the format) and where VALUE_TEXT stops (one that starts any tag)
_TEXT_STOP = re.compile(r"<(?=/?(?:calls?|tool|args)(?:[\s>/]|$))", re.I)
_VALUE_STOP = re.compile(r"<(?=/?[A-Za-z_][\w.:-]*(?:\s[^<>]*)?/?>)")
_BRACKET = re.compile(r"[<>]")
# the format tags each parser state's lexer takes (the LALR states of xml_generic_call.lark, by where
# they stand); a tag of the format outside its state's set is not lexed as one
_FOLLOW_CALL = frozenset({_CALL_OPEN, _CALLS_OPEN, _CALLS_CLOSE})
_TOP, _IN_CALLS = frozenset({_CALL_OPEN, _CALLS_OPEN}), frozenset({_CALL_OPEN, _CALLS_OPEN, _CALLS_CLOSE})
(_K_OPEN, _K_TEXT, _K_TOOL, _K_TOOL_TEXT, _K_ARGS, _K_ARGS_TEXT, _L_OPEN, _L_VALUE, _A) = range(9)
_ALLOWED = {state: _FOLLOW_CALL | more for states, more in (
    ((_K_OPEN, _K_TEXT), {_TOOL_OPEN, _ARGS_OPEN, _CALL_CLOSE}), ((_K_TOOL, _K_TOOL_TEXT), {_ARGS_OPEN, _CALL_CLOSE}),
    ((_K_ARGS, _K_ARGS_TEXT), {_CALL_CLOSE}), ((_L_OPEN, _L_VALUE), {_TOOL_CLOSE, _ARGS_OPEN, _CALL_CLOSE}),
    ((_A,), {_ARGS_CLOSE, _CALL_CLOSE})) for state in states}


class _Tok(str):
    """A token as the transformer reads it (Lark's ``Token`` has the same attributes)."""

    type: str
    start_pos: int
    end_pos: int


def _tok(kind: str, text: str, start: int, end: int) -> _Tok:
    token = _Tok(text[start:end])
    token.type, token.start_pos, token.end_pos = kind, start, end
    return token


def _lex(text: str, pos: int, tags: frozenset[int], elements: bool, values: bool) -> tuple[str, int, int]:
    """The token at ``pos`` as the lexer of a state lexes it (``tags``: the format tags it takes;
    ``elements``: it takes TAG_*; ``values``: VALUE_TEXT), highest priority first: (kind, kind of tag
    (0: none), end); kind "" where no terminal it takes matches."""
    if text[pos] == "<":
        found = _FORMAT.match(text, pos)
        if found is not None and found.lastindex in tags:
            return _KINDS[found.lastindex], found.lastindex, found.end()  # type: ignore[return-value]
        if elements:
            element = _ELEMENT_TAG.match(text, pos)
            if element is not None:
                kind = "TAG_EMPTY" if element.group(1) else "TAG_CLOSE" if element.group(2) else "TAG_OPEN"
                return kind, 0, element.end()
        if not values or _VALUE_STOP.match(text, pos) is not None:  # no VALUE_TEXT here: TEXT, if anything
            if _TEXT_STOP.match(text, pos) is not None:
                return "", 0, pos
            values = False
    stop = (_VALUE_STOP if values else _TEXT_STOP).search(text, pos + 1)
    return "VALUE_TEXT" if values else "TEXT", 0, stop.start() if stop is not None else len(text)


def _scan_or_stop(text: str) -> XmlGenericTree | Stopped:
    """The reply's tree as the grammar builds it (the grammar's tokens, its rules' items handed to its
    transformer in the order Lark hands them), or where the grammar stops and where it can start over."""
    tree = XmlGenericTree()
    top: list[Any] = []  # the items of start
    calls: list[Any] | None = None  # the items of the open <calls>
    call: list[Any] | None = None  # the items of the open <call>
    part: list[Any] | None = None  # the items of the open <tool> or <args>
    state = _K_OPEN
    last: tuple[bool, int, int] | None = None  # the last top-level item: is it text, start, end
    before: tuple[bool, int, int] | None = None  # the one before the open top-level element
    pos = 0
    n = len(text)

    def end_part() -> None:
        nonlocal part, state
        if part is not None and call is not None:
            if state in (_L_OPEN, _L_VALUE):
                call.append(tree.tool(part))
                state = _K_TOOL
            else:
                call.append(tree.args(part))
                state = _K_ARGS
        part = None

    def end_call(at: int) -> None:
        nonlocal call, last
        end_part()
        if call is not None:
            done = tree.call(call)
            if calls is not None:
                calls.append(done)
            else:
                top.append(done)
                last = (False, call[0].start_pos, at)
        call = None

    def end_calls(at: int) -> None:
        nonlocal calls, last
        end_call(at)
        if calls is not None:
            tree.calls(calls)
            top.append(None)
            last = (False, calls[0].start_pos, at)
        calls = None

    while pos < n:
        if call is None:
            tags = _IN_CALLS if calls is not None else _TOP
            kind, tag, end = _lex(text, pos, tags, False, False)
        else:
            kind, tag, end = _lex(text, pos, _ALLOWED[state], state == _A, state in (_A, _L_OPEN))
        if not kind:  # no terminal of this state takes the text here
            break
        token = _tok(kind, text, pos, end)
        if call is not None and part is not None:  # in <tool> or <args>
            if (state == _A and kind[:4] == "TAG_") or (kind == "VALUE_TEXT" and state in (_A, _L_OPEN)):
                part.append(token)
                state = _L_VALUE if state == _L_OPEN else state
                pos = end
                continue
            if tag == _TOOL_CLOSE or tag == _ARGS_CLOSE:
                part.append(token)
                end_part()
                pos = end
                continue
            end_part()  # anything else ends the element (its closing tag missing)
        if call is not None:
            if kind == "TEXT" and state in (_K_OPEN, _K_TOOL, _K_ARGS):
                call.append(token)
                state += 1
                pos = end
                continue
            if tag == _TOOL_OPEN and state in (_K_OPEN, _K_TEXT):
                part, state = [token], _L_OPEN
                pos = end
                continue
            if tag == _ARGS_OPEN and state in (_K_OPEN, _K_TEXT, _K_TOOL, _K_TOOL_TEXT):
                part, state = [token], _A
                pos = end
                continue
            if tag == _CALL_CLOSE:
                call.append(token)
                end_call(end)
                pos = end
                continue
            end_call(pos)  # anything else follows the call (its closing tag missing)
        if tag == _CALL_OPEN:
            if calls is None:
                before = last
            call, state = [token], _K_OPEN
        elif kind == "TEXT":
            if calls is not None:
                calls.append(token)
            else:
                top.append(token)
                last = (True, pos, end)
        elif tag == _CALLS_OPEN:
            end_calls(pos)
            before = last
            calls = [token]
        elif tag == _CALLS_CLOSE and calls is not None:
            calls.append(token)
            end_calls(end)
        else:
            break  # a token the grammar does not take here
        pos = end
    if pos < n:
        opened = calls[0].start_pos if calls is not None else call[0].start_pos if call is not None else pos
        context = before if (calls is not None or call is not None) else last
        # the token as the grammar's root lexer has it, and what its patterns look at after it (up to the next
        # "<" or ">": a stretch cut shorter could lex otherwise)
        kind, _, stop = _lex(text, pos, frozenset(range(1, 9)), True, True)
        stop = stop if kind else pos + 1
        bracket = _BRACKET.search(text, stop + 1)  # (a lookahead at the token's end reads to the next bracket)
        end = bracket.end() if bracket is not None else n
        return Stopped(pos, end, top_level_resumes(context, opened), text[pos:stop])
    end_calls(n) if calls is not None else end_call(n)
    tree.start(top)
    return tree


def _canonical(text: str) -> Extraction | None:
    """Replies in the rendered shape: a row of <call> elements with plain-text arguments."""
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
    return canonical_reply(text, start, calls[-1].span[1], calls, _RESERVED_TAG) if calls else None  # type: ignore[index]


def _argument_element(key: str, value: Any, indent: str) -> str:
    body = xml_text(text_of(value))
    if _XML_NAME.fullmatch(key) and key.lower() not in RESERVED:
        return f"{indent}<{key}>{body}</{key}>"
    return f'{indent}<arg name="{xml_escape(key, attribute=True)}">{body}</arg>'


class XmlGenericCall(TagFormat):
    info = ProtocolInfo(id="xml_generic_call", name="<call><tool>..</tool><args>..</args></call>", text_values=True,
                        description="A <call> element per call: the tool in <tool>, each argument an element named "
                                    "after it in <args>; values are text.")
    markup = "the XML"
    tree, canonical, scan, extraction = XmlGenericTree, staticmethod(_canonical), staticmethod(_scan_or_stop), \
        staticmethod(_from_tree)

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
