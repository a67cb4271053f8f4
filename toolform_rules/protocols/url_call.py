r"""url_call: ``POST /tool-name?arg=value&other=two+words`` — one HTTP request line per call.

Grammar: ``grammars/url_call.lark``.  The last path segment names the tool in kebab case
and maps back to the tool (``legal-draft-v3`` → ``legal_draft_v3``; resolved against the
toolset when one is given).  Arguments are the query: percent-encoded, ``+`` for a space,
so any text round-trips; nested values are JSON text.  Values are text
(``text_values``); a bare key (``&flag``) is the boolean ``true``, a key given again
makes a list, and a bracketed key (``details[status]=draft``, ``tags[]=a``) builds the
nested value the way query strings flatten it.

>>> from toolform_rules import ToolCall, sample_toolset
>>> text = PROTOCOL.render_calls([ToolCall("legal_draft_v3", {"counterparty": "A&B = 100%", "term_months": 12})])
>>> text
'POST /legal-draft-v3?counterparty=A%26B+%3D+100%25&term_months=12'
>>> call = PROTOCOL.parse(text, sample_toolset()).calls[0]
>>> call.name, call.arguments
('legal_draft_v3', {'counterparty': 'A&B = 100%', 'term_months': '12'})
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence
from urllib.parse import quote, quote_plus, unquote_plus

from ..calls import ToolCall
from ..limits import DEFAULT_LIMITS, Limits
from ..schema.toolset import Toolset
from .base import Extraction, Protocol, ProtocolInfo
from ..grammar import Token, Transformer, Tree
from .text_family import (GrammarBudget, LineStarts, Read, grammar_parse, kebab_argument_name, kebab_tool_name,
                          never_raises, read_calls, resolve_tool, terminal_regex, value_text)

GRAMMAR = "url_call"

_LINE = re.compile(
    rf"[ \t]*(?:{terminal_regex(GRAMMAR, 'METHOD')}[ \t]+)?(?:{terminal_regex(GRAMMAR, 'ORIGIN')})?"
    rf"(?P<path>(?:/{terminal_regex(GRAMMAR, 'SEGMENT')})+)/?"
    rf"(?:\?(?P<query>[^\s#]*))?(?:{terminal_regex(GRAMMAR, 'FRAGMENT')})?"
    rf"(?:[ \t]+{terminal_regex(GRAMMAR, 'VERSION')})?[ \t]*")
_QKEY = re.compile(terminal_regex(GRAMMAR, "QKEY"))
_START_SOURCE = (r"[ \t]*(?:(?i:get|post|put|patch|delete|head|options)[ \t]+)?"
                 r"(?:(?i:https?)://[^\s/?#]+)?/[^\s/?#&]")
_START = re.compile(_START_SOURCE)
_CANDIDATES = LineStarts(_START_SOURCE)
_BRACKETS = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])+)")

#: one query parameter as read: (key, raw value, or None for a bare key)
Param = tuple[str, "str | None"]


def _request_fast(segment: str) -> tuple[str, list[Param]] | None:
    """The tool segment and query parameters of one request line when it is written without
    inner spaces (the usual form), read with the grammar's terminals; else ``None``."""
    m = _LINE.fullmatch(segment)
    if m is None:
        return None
    tool = m.group("path").rsplit("/", 1)[-1]
    params: list[Param] = []
    query = m.group("query")
    if query:
        for part in query.split("&"):
            if not part:
                continue
            key, eq, raw = part.partition("=")
            if not key:
                return None
            params.append((key, raw if eq else None))
    return tool, params


class _Request(Transformer):
    def start(self, requests: list) -> list:
        return requests

    def request(self, items: list) -> tuple[str, list[Param]]:
        tool = ""
        params: list[Param] = []
        for item in items:
            if isinstance(item, tuple) and item[0] == "path":
                tool = item[1]
            elif isinstance(item, list):
                params = item
        return tool, params

    def path(self, items: list) -> tuple[str, str]:
        return "path", str(items[-1])

    def query(self, items: list) -> list[Param]:
        return [p for p in items if isinstance(p, tuple)]

    def flag(self, items: list) -> Param:
        return str(items[0]), None

    def pair(self, items: list) -> Param:
        return str(items[0]), (str(items[1]) if len(items) > 1 and isinstance(items[1], Token) else "")


def _request_grammar(segment: str, budget: GrammarBudget | None = None) -> tuple[str, list[Param]]:
    tree = grammar_parse(GRAMMAR, segment, budget)
    requests = _Request().transform(tree) if isinstance(tree, Tree) else []
    return requests[0] if requests else ("", [])


def _decode(text: str) -> str:
    if "%" in text:
        return unquote_plus(text, errors="replace")
    return text.replace("+", " ") if "+" in text else text


def build_call(segment_name: str, params: list[Param], tools: Toolset | None) -> Read:
    name = kebab_tool_name(_decode(segment_name), tools)
    tool = resolve_tool(name, tools)
    arguments: dict[str, Any] = {}
    notes: list[str] = []
    repeated: set[str] = set()
    for raw_key, raw_value in params:
        key = _decode(raw_key)
        value: Any = True if raw_value is None else _decode(raw_value)
        nested = _BRACKETS.fullmatch(key)
        if nested is not None:
            base = kebab_argument_name(nested.group(1), tool)
            path = re.findall(r"\[([^\[\]]*)\]", nested.group(2))
            if not _put_nested(arguments, base, path, value):
                notes.append(f"{name}: {key} does not fit the other values given for {base}; it is left out")
            continue
        key = kebab_argument_name(key, tool)
        if key not in arguments:
            arguments[key] = value
        elif key in repeated:
            arguments[key].append(value)
        else:
            notes.append(f"{name}: {key} is given more than once; its values are read as a list")
            arguments[key] = [arguments[key], value]
            repeated.add(key)
    return name, arguments, notes, True


def _put_nested(arguments: dict[str, Any], base: str, path: list[str], value: Any) -> bool:
    """Put ``value`` at ``base[path...]`` (``[]`` appends to a list); ``False`` when the value
    already there is of another kind."""
    container: Any = arguments
    key: Any = base
    for step in path:
        want: type = list if step == "" else dict
        current = container.get(key) if isinstance(container, dict) else None
        if isinstance(container, list):
            current = None
        if current is None:
            current = want()
            if isinstance(container, dict):
                container[key] = current
            else:
                container.append(current)
        elif not isinstance(current, want):
            return False
        container, key = current, (None if step == "" else step)
    if isinstance(container, list):
        container.append(value)
    else:
        container[key] = value
    return True


def _quote_value(text: str) -> str:
    return quote_plus(text, safe="", errors="surrogatepass")


def _path_name(name: str) -> str:
    body = name.lstrip("_")
    return quote(name[:len(name) - len(body)] + body.replace("_", "-"), safe="", errors="surrogatepass")


class UrlCall(Protocol):
    info = ProtocolInfo(
        id="url_call",
        name="HTTP request line",
        description="`POST /tool-name?arg=value`: the tool in the path, the arguments percent-encoded in the "
                    "query; values are text, typed from the schema.",
        parallel=True,
        text_values=True,
    )

    def parse(self, text: str, tools: Toolset | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        return never_raises(self.id, self._parse, text, tools, limits)

    def _parse(self, text: str, tools: Toolset | None, limits: Limits = DEFAULT_LIMITS) -> Extraction:
        budget = GrammarBudget.of(limits)

        def read_one(segment: str) -> Read:
            found = _request_fast(segment)
            if found is None:
                found = _request_grammar(segment, budget)
            return build_call(found[0], found[1], tools)

        return read_calls(self.id, text, lambda head: _START.match(head) is not None, read_one,
                          what="request line", candidates=_CANDIDATES)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(self._render(call) for call in calls)

    @staticmethod
    def _render(call: ToolCall) -> str:
        line = "POST /" + _path_name(call.name)
        query = "&".join(f"{_quote_value(key)}={_quote_value(value_text(value))}"
                         for key, value in call.arguments.items())
        return f"{line}?{query}" if query else line

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one HTTP request line per call and nothing else: POST, a slash, the tool's name "
                "with hyphens for underscores, then the arguments as a URL query string, percent-encoding "
                "special characters (a space may be +). Write a nested object or list as JSON, encoded too:\n"
                "POST /tool-name?city=New+York&days=3&tags=%5B%22a%22%5D")


PROTOCOL = UrlCall()
