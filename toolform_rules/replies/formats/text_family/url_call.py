r"""url_call: ``POST /tool-name?arg=value&other=two+words`` — one HTTP request line per call.

Grammar: ``grammars/url_call.lark``.  The last path segment names the tool in kebab case
(``legal-draft-v3`` reads as ``legal_draft_v3``; the pipeline resolves it against the
toolset).  Arguments are the query: percent-encoded, ``+`` for a space, so any text
round-trips; nested values are JSON text.  Values are text (``text_values``); a bare key
(``&flag``) is the boolean ``true``, a key given again makes a list, and a bracketed key
(``details[status]=draft``, ``tags[]=a``) builds the nested value the way query strings
flatten it.  A raw space ends the request line; prose after it (``... &term_months=12 Done.``)
is left out where the last value's type ends it (see :func:`.text_family.split_trailing_prose`).

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
from typing import Any, Iterable
from urllib.parse import quote, quote_plus

from ....calls import ToolCall
from ....schema.toolset import Toolset
from .shared import Calls, Reading, TextProtocol, argument_names, value_text

#: the grammar's terminals (the tests hold them to ``grammars/url_call.lark``)
METHOD = r"(?i:get|post|put|patch|delete|head|options)(?![\w.\-])"
ORIGIN = r"(?i:https?)://[^\s/?#]+"
SEGMENT = r"[^\s/?#&]+"
QKEY = r"[^\s&=#]+"
FRAGMENT = r"#\S*"
VERSION = r"(?i:http)/\d(?:\.\d)?"

# a request line as the fast reader takes it (no spaces inside); prose may follow it after a space
_LINE = re.compile(
    rf"[ \t]*(?:{METHOD}[ \t]+)?(?:{ORIGIN})?(?:/{SEGMENT})*/(?P<tool>{SEGMENT})/?"
    rf"(?:\?(?P<query>[^\s#]*))?(?:{FRAGMENT})?(?:[ \t]+{VERSION})?[ \t]*(?P<tail>(?<=[ \t])[^\W\d_].*)?")
_BRACKETS = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])+)")
_INDEX = re.compile(r"\[([^\[\]]*)\]")

#: a request as read: the tool's path segment and the query parameters, (key, raw value or None for a bare key)
Request = tuple[str, list[tuple[str, "str | None"]]]


class _Request(Calls):
    def request(self, items: list) -> Request:  # the path's segment is the one plain str, the query the list
        return next(i for i in items if type(i) is str), next((i for i in items if type(i) is list), [])

    def path(self, items: list) -> str:
        return str(items[-1])

    def query(self, items: list) -> list[tuple[str, str | None]]:
        return [p for p in items if type(p) is tuple]

    def flag(self, items: list) -> tuple[str, str | None]:
        return str(items[0]), None

    def pair(self, items: list) -> tuple[str, str | None]:
        return str(items[0]), (str(items[1]) if len(items) > 1 else "")


_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def decode(text: str) -> str:
    """A query part as the text it stands for: ``+`` a space, ``%XX`` the UTF-8 bytes (an invalid
    sequence is U+FFFD, a ``%`` that starts none is kept) — what ``urllib.parse.unquote_plus(text,
    errors="replace")`` gives (an ASCII character never continues a UTF-8 sequence, so each run
    of ``%XX`` is decoded alone).

    >>> decode("A%26B+%3D+100%25"), decode("%E4%B8%AD%zz+%C3"), decode("plain")
    ('A&B = 100%', '中%zz \ufffd', 'plain')
    """
    text = text.replace("+", " ")
    if "%" not in text:
        return text
    return _PERCENT_RUN.sub(lambda run: bytes.fromhex(run.group().replace("%", "")).decode("utf-8", "replace"), text)


def _put_nested(arguments: dict[str, Any], base: str, path: list[str], value: Any) -> bool:
    """Put ``value`` at ``base[path...]`` (``[]`` appends to a list); ``False`` when the value
    already there is of another kind."""
    container: Any = arguments
    key: Any = base
    for step in path:
        want: type = list if step == "" else dict
        current = container.get(key) if isinstance(container, dict) else None
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


def _tool_name(segment: str) -> str:
    """The tool a path segment names: decoded, kebab case undone (the format writes names so)."""
    return decode(segment).replace("-", "_")


class UrlCall(TextProtocol):
    info = TextProtocol.about(
        "url_call", "HTTP request line",
        "`POST /tool-name?arg=value`: the tool in the path, the arguments percent-encoded in the query; "
        "values are text, typed from the schema.")
    grammar = "url_call"
    what = "request line"
    transformer = _Request
    start = rf"[ \t]*(?:{METHOD}[ \t]+)?(?:{ORIGIN})?/[^\s/?#&]"
    needle = "/"

    def read_fast(self, segment: str, reading: Reading | None = None) -> Request | None:
        """The tool segment and query parameters of a request line written without inner spaces
        (the usual form), read with the grammar's terminals.  Prose after it on its line is left
        out where the last value's type ends it (``reading`` tells the type), else ``None``."""
        line = _LINE.fullmatch(segment)
        if line is None:
            return None
        params = [(key, raw if eq else None) for key, eq, raw in
                  (part.partition("=") for part in (line.group("query") or "").split("&") if part)]
        if any(not key for key, _ in params):
            return None
        tail = line.group("tail")
        last = params[-1] if params else ("", None)
        if tail is not None and (reading is None or last[1] is None or reading.without_prose(
                _tool_name(line.group("tool")), decode(last[0]), f"{decode(last[1])} {tail}") != decode(last[1])):
            return None  # prose not after a value its type ends: the grammar says where it stops
        return line.group("tool"), params

    def build(self, found: Request, reading: Reading) -> list[tuple[str, dict[str, Any]]]:
        segment, params = found
        name = _tool_name(segment)
        spelled = argument_names(reading.tool(name))
        arguments: dict[str, Any] = {}
        listed: set[str] = set()  # the keys given more than once, whose values are a list
        for raw_key, raw_value in params:
            key = decode(raw_key)
            value: Any = True if raw_value is None else decode(raw_value)
            nested = _BRACKETS.fullmatch(key) if "[" in key else None
            if nested is not None:
                base = spelled.get(nested.group(1)) or nested.group(1).replace("-", "_")
                if not _put_nested(arguments, base, _INDEX.findall(nested.group(2)), value):
                    reading.note(f"{name}: {key} does not fit the other values given for {base}; it is left out")
                continue
            key = spelled.get(key) or key.replace("-", "_")
            if key in listed:
                arguments[key].append(value)
            elif key in arguments:
                reading.note(f"{name}: {key} is given more than once; its values are read as a list")
                arguments[key] = [arguments[key], value]
                listed.add(key)
            else:
                arguments[key] = value
        return [(name, arguments)]

    def render_call(self, call: ToolCall) -> str:
        body = call.name.lstrip("_")  # leading underscores stay: a kebab-case name starts with a letter
        line = "POST /" + quote(call.name[:len(call.name) - len(body)] + body.replace("_", "-"), safe="",
                                errors="surrogatepass")
        query = "&".join(f"{quote_plus(key, safe='', errors='surrogatepass')}="
                         f"{quote_plus(value_text(value), safe='', errors='surrogatepass')}"
                         for key, value in call.arguments.items())
        return f"{line}?{query}" if query else line

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Reply with one HTTP request line per call and nothing else: POST, a slash, the tool's name "
                "with hyphens for underscores, then the arguments as a URL query string, percent-encoding "
                "special characters (a space may be +). Write a nested object or list as JSON, encoded too:\n"
                "POST /tool-name?city=New+York&days=3&tags=%5B%22a%22%5D")


PROTOCOL = UrlCall()
