"""function_tags: ``<function=f><parameter=a>1</parameter></function>`` (Qwen3-Coder, functionary).

Grammar: ``grammars/function_tags.lark``.  A parameter's content is raw text — the format
has no escaping — minus the one newline the Qwen3-Coder template writes after the opening
tag and the one before the closing tag; the pipeline types it from the tool's schema
(``text_values``).  A function whose body is a JSON object (functionary's shape) takes its
arguments from the JSON.  Calls may be wrapped in ``<tool_call>`` as vLLM's qwen3_coder
format writes them.  Missing closing tags are tolerated and noted, and so is a missing opening
``<tool_call>`` (llama.cpp's Qwen3-Coder template: the model skips it before the first call, or
before every call, and still writes ``</tool_call>``): that ``</tool_call>`` is noted, not prose.

A value cannot hold the format's own tags (``</parameter>``, ``<parameter=``,
``</function>``, ``<function=``, ``<tool_call>``): there is no way to escape them.

Fast paths (as in every tag format): replies in the rendered shape are read by two regular
expressions; any other reply by one pass over its tags that follows the grammar's structure.
The grammar runs only where that pass stops, on a bounded stretch (``Limits.reply_grammar_chars``).

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
from typing import Any, Iterable, Sequence

from ..calls import ToolCall
from ..grammar import GrammarFailure
from ..schema.toolset import Toolset
from .base import Extraction, ProtocolInfo, RawCall
from .duplicates import noted, places, where
from .markup_family import (Stopped, TagFormat, TaggedReply, canonical_reply, excerpt, lenient_value, text_of,
                            top_level_resumes)
from .reading import GrammarBudget

# the grammar's TEXT (possessive: a run without "<" is one step, and nothing is given back)
_TEXT = r"(?:[^<]++|<(?!/?(?:function|parameter)[=>]|/?tool_call>))*+"
_CANONICAL_FUNCTION = re.compile(r"(<tool_call>\s*)?(<function=([^<>\n]*)>((?:\s*<parameter=[^<>\n]*>" + _TEXT
                                 + r"</parameter>)*+)\s*</function>)(\s*</tool_call>)?")
_CANONICAL_PARAMETER = re.compile(r"<parameter=([^<>\n]*)>(" + _TEXT + r")</parameter>")
_OWN_TAG = re.compile(r"</?(?:function|parameter)[=>]|</?tool_call>")
_SPACE = re.compile(r"\s*")
# the format's tags, each a terminal of the grammar; the last group: a tag TEXT cannot take and no terminal
# matches (``<function>``, ``<parameter=`` without its ``>``) — the grammar stops there
_TAG = re.compile(r"<(?:(tool_call>)|(/tool_call>)|(function=[^<>\n]*>)|(/function>)|(parameter=[^<>\n]*>)"
                  r"|(/parameter>)|(/?(?:function|parameter)[=>]))")
_UNCLOSED_WRAPPER = "the <tool_call> wrapper is not closed"
_UNOPENED_WRAPPER = "a </tool_call> without its opening <tool_call> was skipped"
_WRAPPER_OPEN, _WRAPPER_CLOSE, _FUNCTION_OPEN, _FUNCTION_CLOSE, _PARAMETER_OPEN, _PARAMETER_CLOSE, _STRAY = range(1, 8)


def value_text(raw: str) -> str:
    r"""A parameter's value: its raw text without the template's newline at each end.

    >>> value_text("\n  two lines\nhere \n"), value_text("inline")
    ('  two lines\nhere ', 'inline')
    """
    if raw.startswith("\n"):
        raw = raw[1:]
    if raw.endswith("\n"):
        raw = raw[:-1]
    return raw


def _tag_name(tag: str) -> str:
    return tag[tag.index("=") + 1:-1].strip()


class _Function:
    __slots__ = ("name", "parameters", "body", "closed", "start", "end")

    def __init__(self, name: str, start: int, end: int) -> None:
        self.name, self.start, self.end = name, start, end
        self.parameters: list[tuple[str, str, bool, int]] = []  # key, raw, closed, start
        self.body: list[tuple[str, int]] = []
        self.closed = False


class FunctionTagsTree(TaggedReply):
    """A ``function_tags.lark`` tree → the functions, the prose and the open wrappers."""

    def __init__(self) -> None:
        super().__init__()
        self.functions: list[_Function] = []

    def parameter(self, items: list) -> tuple[str, str, bool, int, int]:
        opening = items[0]
        raw = next((str(t) for t in items[1:] if t.type == "TEXT"), "")
        closed = items[-1].type == "PARAMETER_CLOSE"
        return _tag_name(str(opening)), raw, closed, opening.start_pos, items[-1].end_pos

    def function(self, items: list) -> _Function:
        opening = items[0]
        function = _Function(_tag_name(str(opening)), opening.start_pos, opening.end_pos)
        for item in items[1:]:
            if isinstance(item, tuple):
                function.parameters.append(item[:4])
                function.end = item[4]
            elif item.type == "TEXT":
                function.body.append((str(item), item.start_pos))
                function.end = item.end_pos
            else:
                function.closed = True
                function.end = item.end_pos
        self.functions.append(function)
        return function

    def tool_call(self, items: list) -> None:
        self.wrapper(items, "WRAPPER_CLOSE", _UNCLOSED_WRAPPER)

    def start(self, items: list) -> FunctionTagsTree:
        for item in items:
            if getattr(item, "type", None) == "WRAPPER_CLOSE":  # its <tool_call> skipped: a note, not prose
                self.notes.append((item.start_pos, _UNOPENED_WRAPPER))
            elif isinstance(item, str):
                self.outside.append(str(item))
        return self


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


def _from_tree(tree: FunctionTagsTree, text: str, budget: GrammarBudget | None = None) -> Extraction:
    """The extraction of a reply's tree; ``budget``: what the JSON grammar may still read of the reply (function
    bodies that are not strict JSON)."""
    budget = budget if budget is not None else GrammarBudget(200_000)
    calls: list[RawCall] = []
    notes = list(tree.notes)
    for function in tree.functions:
        if not function.closed:
            notes.append((function.start, "the <function=...> element is not closed"))
        arguments: dict[str, Any] = {}
        twice: list[str] = []
        for key, raw, closed, start in function.parameters:
            if not closed:
                notes.append((start, "the <parameter=...> element is not closed"))
            if key in arguments:
                notes.append((start, f"parameter {key!r} is given twice; the last one counts"))
                twice.append(where((), key))
            arguments[key] = value_text(raw)
        body = "".join(piece for piece, _ in function.body).strip()
        if body:
            at = next(at for piece, at in function.body if piece.strip())
            if not function.parameters and body.startswith("{"):  # functionary: a JSON body
                read = _json_body(body, at, budget, notes)
                if read is not None:
                    arguments, twice = read, list(places(read, body, budget))
                    if twice:
                        notes.append((at, noted(function.name, twice)))
            else:
                notes.append((at, "text between the tags was ignored: " + excerpt(body)))
        if not function.name:
            notes.append((function.start, "a <function=> without a name was skipped"))
            continue
        calls.append(RawCall(function.name, arguments, (function.start, function.end), tuple(dict.fromkeys(twice))))
    return tree.extraction(calls, notes, text, "no <function=...> element was found")


def _scan_or_stop(text: str) -> FunctionTagsTree | Stopped:
    """The fast path for any reply: the tags found in C, the grammar's structure followed over them
    (missing closing tags end an element where the grammar ends it), giving what the grammar's tree
    gives — or, where the grammar stops (a stray closing tag, a ``<parameter=...>`` outside a
    function, a tag no terminal takes), where that is."""
    tree = FunctionTagsTree()
    notes = tree.notes  # (the text between a wrapper's tags is noted where it stands; the notes are sorted later)
    wrapper = -1  # where the open <tool_call> starts
    function: _Function | None = None
    parameter: list[Any] | None = None  # key, raw, closed, start, end
    last: tuple[bool, int, int] | None = None  # the last top-level item: is it text, start, end
    before: tuple[bool, int, int] | None = None  # the one before the open top-level element

    def end_parameter() -> None:
        nonlocal parameter
        if parameter is not None and function is not None:
            function.parameters.append((parameter[0], parameter[1] or "", parameter[2], parameter[3]))
            function.end = parameter[4]
        parameter = None

    def end_function() -> None:
        nonlocal function, last
        end_parameter()
        if function is not None:
            tree.functions.append(function)
            if wrapper < 0:
                last = (False, function.start, function.end)
        function = None

    def end_wrapper(closed: bool, end: int) -> None:
        nonlocal wrapper, last
        end_function()
        if wrapper >= 0:
            last = (False, wrapper, end)
            if not closed:
                notes.append((wrapper, _UNCLOSED_WRAPPER))
        wrapper = -1

    def text_token(start: int, end: int) -> None:
        nonlocal last
        piece = text[start:end]
        if parameter is not None and parameter[1] is None:
            parameter[1], parameter[4] = piece, end
        elif function is not None:
            end_parameter()
            function.body.append((piece, start))
            function.end = end
        elif wrapper >= 0:
            if not piece.isspace():
                notes.append((start, "text between the tags was ignored: " + excerpt(piece)))
        else:
            tree.outside.append(piece)
            last = (True, start, end)

    def stop(found: re.Match[str]) -> Stopped:
        opened = wrapper if wrapper >= 0 else function.start if function is not None else found.start()
        context = before if (wrapper >= 0 or function is not None) else last
        return Stopped(found.start(), found.end(), top_level_resumes(context, opened), found.group(0))

    pos = 0
    for found in _TAG.finditer(text):
        at = found.start()
        if at > pos:  # the text before the tag: one TEXT token
            text_token(pos, at)
        pos = found.end()
        kind = found.lastindex
        if kind == _PARAMETER_OPEN:
            if function is None:
                return stop(found)
            end_parameter()
            parameter = [_tag_name(found.group(0)), None, False, at, pos]
        elif kind == _PARAMETER_CLOSE:
            if parameter is None:
                return stop(found)
            parameter[2], parameter[4] = True, pos
            end_parameter()
        elif kind == _FUNCTION_OPEN:
            end_function()
            if wrapper < 0:
                before = last
            function = _Function(_tag_name(found.group(0)), at, pos)
        elif kind == _FUNCTION_CLOSE:
            if function is None:
                return stop(found)
            end_parameter()
            function.closed, function.end = True, pos
            end_function()
        elif kind == _WRAPPER_OPEN:
            if wrapper >= 0 or function is not None:
                end_wrapper(False, at)
            before = last
            wrapper = at
        elif kind == _WRAPPER_CLOSE:
            if wrapper >= 0:
                end_wrapper(True, pos)
            else:  # the model skipped its <tool_call>: what is open ends, as before any top-level item
                end_function()
                notes.append((at, _UNOPENED_WRAPPER))
                last = (False, at, pos)
        else:
            return stop(found)
    if pos < len(text):
        text_token(pos, len(text))
    end_wrapper(False, len(text))
    return tree


def _canonical(text: str) -> Extraction | None:
    """Replies in the rendered shape: a row of functions (each maybe in <tool_call>), parameters only."""
    starts = [at for at in (text.find("<tool_call>"), text.find("<function=")) if at >= 0]
    if not starts:
        return None
    start = min(starts)
    calls: list[RawCall] = []
    pos = start
    while True:
        found = _CANONICAL_FUNCTION.match(text, pos)
        if found is None or (found.group(1) is None) != (found.group(5) is None):
            break
        arguments: dict[str, Any] = {}
        for key, raw in _CANONICAL_PARAMETER.findall(found.group(4)):
            key = key.strip()
            if key in arguments:
                return None
            arguments[key] = raw[raw.startswith("\n"):len(raw) - raw.endswith("\n")]  # (value_text, inline)
        name = found.group(3).strip()
        if not name:
            return None
        calls.append(RawCall(name, arguments, found.span(2)))
        pos = _SPACE.match(text, found.end()).end()  # type: ignore[union-attr]
        if not (text.startswith("<function=", pos) or text.startswith("<tool_call>", pos)):
            break
    return canonical_reply(text, start, pos, calls, _OWN_TAG)


class FunctionTags(TagFormat):
    info = ProtocolInfo(id="function_tags", name="<function=...> tags", text_values=True,
                        description="A call as <function=NAME> with one <parameter=KEY>value</parameter> per "
                                    "argument (or a JSON body), as the Qwen3-Coder and functionary templates write "
                                    "it; values are raw text.")
    markup = "the tags"
    tree, canonical, scan, extraction = FunctionTagsTree, staticmethod(_canonical), staticmethod(_scan_or_stop), \
        staticmethod(_from_tree)

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
