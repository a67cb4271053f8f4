"""function_tags: ``<function=f><parameter=a>1</parameter></function>`` (Qwen3-Coder, functionary).

Grammar: ``grammars/function_tags.lark``.  A parameter's content is raw text — the format
has no escaping — minus the one newline the Qwen3-Coder template writes after the opening
tag and the one before the closing tag; the pipeline types it from the tool's schema
(``text_values``).  A function whose body is a JSON object (functionary's shape) takes its
arguments from the JSON.  Calls may be wrapped in ``<tool_call>`` as vLLM's qwen3_coder
format writes them.  Missing closing tags are tolerated and noted.

A value cannot hold the format's own tags (``</parameter>``, ``<parameter=``,
``</function>``, ``<function=``, ``<tool_call>``): there is no way to escape them.

Fast path: replies in the rendered shape are read by two regular expressions; anything
else by the grammar.

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
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo, RawCall
from ..grammar import GrammarFailure, parse
from .markup_family import GRAMMAR_LIMIT, TaggedReply, excerpt, line_column, never_raises, read_within, text_of
from .values import loads_lenient

_TEXT = r"(?:[^<]|<(?!/?(?:function|parameter)[=>]|/?tool_call>))*"
_CANONICAL_FUNCTION = re.compile(r"(<tool_call>\s*)?(<function=([^<>\n]*)>((?:\s*<parameter=[^<>\n]*>" + _TEXT
                                 + r"</parameter>)*)\s*</function>)(\s*</tool_call>)?")
_CANONICAL_PARAMETER = re.compile(r"<parameter=([^<>\n]*)>(" + _TEXT + r")</parameter>")
_OWN_TAG = re.compile(r"</?(?:function|parameter)[=>]|</?tool_call>")
_FENCE_ONLY = re.compile(r"(?:```[\w.+-]*)?(?:```)?")


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
        self.prose: list[str] = []
        self.notes: list[tuple[int, str]] = []

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
        self.wrapper(items, "WRAPPER_CLOSE", "the <tool_call> wrapper is not closed")



def _from_tree(tree: FunctionTagsTree, text: str) -> Extraction:
    calls: list[RawCall] = []
    notes = list(tree.notes)
    for function in tree.functions:
        if not function.closed:
            notes.append((function.start, "the <function=...> element is not closed"))
        arguments: dict[str, Any] = {}
        for key, raw, closed, start in function.parameters:
            if not closed:
                notes.append((start, "the <parameter=...> element is not closed"))
            if key in arguments:
                notes.append((start, f"parameter {key!r} is given twice; the last one counts"))
            arguments[key] = value_text(raw)
        body = "".join(piece for piece, _ in function.body).strip()
        if body:
            at = next(at for piece, at in function.body if piece.strip())
            if not function.parameters and body.startswith("{"):  # functionary: a JSON body
                try:
                    parsed = loads_lenient(body)
                except GrammarFailure as failure:
                    notes.append((at, f"the function's JSON body could not be read: {failure.describe()}"))
                    parsed = None
                except RecursionError:
                    notes.append((at, "the function's JSON body is nested too deeply to read"))
                    parsed = None
                if isinstance(parsed, dict):
                    arguments = parsed
                elif parsed is not None:
                    notes.append((at, "the function's JSON body is not an object"))
            else:
                notes.append((at, "text between the tags was ignored: " + excerpt(body)))
        if not function.name:
            notes.append((function.start, "a <function=> without a name was skipped"))
            continue
        calls.append(RawCall(function.name, arguments, (function.start, function.end)))
    notes.sort(key=lambda note: note[0])
    words = tuple("line {}, column {}: {}".format(*line_column(text, at), what) for at, what in notes)
    clean = not words
    if not calls and not words:
        words = ("no <function=...> element was found",)
    outside = "".join("".join(piece.split()) for piece in tree.prose)
    compliant = bool(calls) and clean and _FENCE_ONLY.fullmatch(outside) is not None
    return Extraction(tuple(calls), words, compliant)


def _by_grammar(text: str) -> Extraction:
    tree = FunctionTagsTree()
    tree.transform(parse("function_tags", text))
    return _from_tree(tree, text)


def _canonical(text: str) -> Extraction | None:
    """Replies in the rendered shape: a row of functions (each maybe in <tool_call>), parameters only."""
    starts = [at for at in (text.find("<tool_call>"), text.find("<function=")) if at >= 0]
    if not starts:
        return None
    start = min(starts)
    calls: list[RawCall] = []
    pos = start
    n = len(text)
    while True:
        found = _CANONICAL_FUNCTION.match(text, pos)
        if found is None or (found.group(1) is None) != (found.group(5) is None):
            break
        arguments: dict[str, Any] = {}
        for key, raw in _CANONICAL_PARAMETER.findall(found.group(4)):
            key = key.strip()
            if key in arguments:
                return None
            arguments[key] = value_text(raw)
        name = found.group(3).strip()
        if not name:
            return None
        calls.append(RawCall(name, arguments, found.span(2)))
        pos = found.end()
        while pos < n and text[pos].isspace():
            pos += 1
        if not (text.startswith("<function=", pos) or text.startswith("<tool_call>", pos)):
            break
    if not calls:
        return None
    before, after = text[:start], text[pos:]
    if ("<" in before and _OWN_TAG.search(before)) or ("<" in after and _OWN_TAG.search(after)):
        return None
    outside = before + after
    compliant = not outside or outside.isspace() or _FENCE_ONLY.fullmatch("".join(outside.split())) is not None
    return Extraction(tuple(calls), (), compliant)


class FunctionTags(Protocol):
    info = ProtocolInfo(
        id="function_tags",
        name="<function=...> tags",
        description="A call as <function=NAME> with one <parameter=KEY>value</parameter> per argument (or a JSON "
                    "body), as the Qwen3-Coder and functionary templates write it; values are raw text.",
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
        return read_within(text, _by_grammar, limit=GRAMMAR_LIMIT, what="the tags")

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        blocks = []
        for call in calls:
            lines = [f"<function={call.name}>"]
            for key, value in call.arguments.items():
                lines.append(f"<parameter={key}>\n{text_of(value)}\n</parameter>")
            lines.append("</function>")
            blocks.append("\n".join(lines))
        return "\n".join(blocks)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("For each call write <function=TOOL_NAME> on its own line, then for every argument "
                "<parameter=ARGUMENT>, the value on the next line, and </parameter>; close the call with "
                "</function>. Values are plain text: no quotes around strings, numbers and true/false as they "
                "are, lists and objects as JSON.\n"
                "<function=tool_name>\n<parameter=argument>\nvalue\n</parameter>\n</function>")


PROTOCOL = FunctionTags()
