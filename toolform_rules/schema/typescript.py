"""Tools from TypeScript declarations, read with ``grammars/typescript.lark``: nothing is executed.

Each function a file declares (``function``, ``declare function``, ``export function``,
``export default function``, ``async function``) is a tool: its parameters become a JSON
Schema 2020-12 object, its JSDoc comment the tool's and the parameters' descriptions.  When
the file exports any function, only the exported ones and the ``declare`` ones are tools:
the others are its helpers.
Interfaces and type aliases declared anywhere in the file are resolved by name; a type
that refers to itself becomes a ``$defs`` entry reached by ``$ref``.  One object parameter
named ``args``, ``params``, ``input`` or ``options`` (or a destructured one) is flattened:
its properties are the tool's parameters.

Reading is three linear passes: a scanner blanks function bodies (keeping line breaks) and
collects the ``/** ... */`` comments, the LALR grammar parses the declarations, and one
:class:`_DeclarationReader` transformer turns the tree into records that
:class:`_SchemaBuilder` turns into schemas.  Every failure is a :class:`LoaderError` with
the line and column it concerns.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any, TypedDict, TypeGuard

import attrs

from ..errors import LoaderError
from ..jsonvalues import json_type_of
from ..grammar import GrammarFailure, Token, Transformer, Tree, parse, transform, v_args
from ..limits import DEFAULT_LIMITS, Limits

#: the names of a single object parameter whose properties become the tool's parameters
FLATTENED_PARAMETER_NAMES = ("args", "params", "input", "options")

#: words that, where the grammar stopped on them, say which unsupported construct was met
_REFUSED_WORDS = {
    "class": "classes are not read; declare each tool as a function",
    "abstract": "classes are not read; declare each tool as a function",
    "const": "variable statements are not read; declare each tool as a function",
    "let": "variable statements are not read; declare each tool as a function",
    "var": "variable statements are not read; declare each tool as a function",
    "enum": "enums are not read; use a union of literal types (\"a\" | \"b\")",
    "namespace": "namespaces and modules are not read",
    "module": "namespaces and modules are not read",
    "extends": "conditional types (A extends B ? C : D) are not supported",
    "in": "mapped types ({ [K in T]: U }) are not supported",
    "`": "template literal types are not supported",
    "is": "type predicates are not supported",
    "asserts": "assertion signatures are not supported",
    "new": "constructor types are not supported",
}

_PRIMITIVES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"}, "number": {"type": "number"}, "boolean": {"type": "boolean"},
    "bigint": {"type": "integer"}, "object": {"type": "object"}, "Object": {"type": "object"},
    "any": {}, "unknown": {}, "null": {"type": "null"}, "undefined": {"type": "null"},
}
_NO_VALUE_TYPES = {"void": "void", "never": "never", "symbol": "a symbol", "Function": "a function"}
_LITERAL_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
_STATEMENT_WORDS = frozenset({"function", "interface", "type", "export", "declare", "import", "class", "const",
                              "let", "var", "enum", "namespace", "module", "async", "abstract"})
# after these words a "/" starts a regular expression, not a division
_REGEX_AFTER_WORDS = frozenset({"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
                                "case", "do", "else", "yield", "await"})
# after these words in a return type, a "{" is an object type, not the body
_TYPE_PREFIX_WORDS = frozenset({"keyof", "typeof", "readonly", "is", "asserts", "infer", "extends", "new", "unique"})


# --- records -------------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class _Node:
    """Where a type expression starts (1-based line and column)."""

    line: int
    column: int


@attrs.frozen(kw_only=True)
class _NamedType(_Node):
    name: str
    arguments: tuple[_Node, ...] = ()


@attrs.frozen(kw_only=True)
class _LiteralType(_Node):
    value: Any


@attrs.frozen(kw_only=True)
class _ArrayType(_Node):
    item: _Node


@attrs.frozen(kw_only=True)
class _TupleElement(_Node):
    type: _Node
    optional: bool = False
    rest: bool = False


@attrs.frozen(kw_only=True)
class _TupleType(_Node):
    elements: tuple[_TupleElement, ...]


@attrs.frozen(kw_only=True)
class _UnionType(_Node):
    members: tuple[_Node, ...]


@attrs.frozen(kw_only=True)
class _IntersectionType(_Node):
    members: tuple[_Node, ...]


@attrs.frozen(kw_only=True)
class _RefusedType(_Node):
    """A construct the grammar reads only to refuse it where it is used (keyof, a method, ...)."""

    reason: str


@attrs.frozen(kw_only=True)
class _PropertyDecl(_Node):
    name: str
    type: _Node
    optional: bool
    offset: int  # where the member starts, to find its JSDoc comment


@attrs.frozen(kw_only=True)
class _ObjectType(_Node):
    properties: tuple[_PropertyDecl, ...]
    index: _Node | None = None
    refused: _RefusedType | None = None


@attrs.frozen
class _Default:
    """A parameter's default value (a literal)."""

    value: Any


@attrs.frozen(kw_only=True)
class _Parameter(_Node):
    name: str
    type: _Node | None
    optional: bool = False
    default: _Default | None = None
    rest: bool = False
    pattern: tuple[tuple[str, _Default | None], ...] | None = None  # a destructured object's names
    offset: int


@attrs.frozen(kw_only=True)
class _FunctionDecl(_Node):
    name: str | None
    parameters: tuple[_Parameter, ...]
    modifiers: frozenset[str]
    generic: bool
    offset: int


@attrs.frozen(kw_only=True)
class _TypeDecl(_Node):
    """An interface (``body`` an object type, ``extends`` its parents) or a type alias."""

    name: str
    body: _Node
    extends: tuple[_NamedType, ...] = ()
    interface: bool = False
    generic: bool = False
    modifiers: frozenset[str] = frozenset()


@attrs.frozen
class _ParamDoc:
    description: str
    optional: bool
    default: _Default | None


@attrs.frozen
class _JSDoc:
    """A ``/** ... */`` comment: the text before its first tag (the description) and its ``@param`` tags."""

    description: str
    parameters: dict[str, _ParamDoc]


# --- the pre-pass: function bodies blanked, JSDoc comments collected ------------------------

@attrs.frozen
class _Scanned:
    text: str  # the source with each function body's contents blanked (line breaks kept)
    docs: dict[int, str]  # a /** */ comment's text by the offset of the code that follows it


class _Lines:
    """Offsets → 1-based (line, column)."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


_WORD = re.compile(r"[\w$]+")  # a name or a number: what _is_word_char accepts, in a run
_SPACE = re.compile(r"\s+")  # (what str.isspace accepts)
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char in "_$"


class _Scanner:
    """One linear walk over the source that finds each function's body and blanks it.

    The walk knows strings, template literals, comments and regular expressions well enough
    not to mistake a brace inside them for the body's end; a declaration's signature is
    followed from ``function`` through its parameters and return type to a ``{`` that
    begins its body (or to the end of the declaration, for one without a body).
    """

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        self.blanks: list[tuple[int, int]] = []
        self.docs: dict[int, str] = {}
        self.lines = _Lines(text)
        self.pending_doc: str | None = None
        # the signature being followed: "" (none), "head" (before the parameters), "params",
        # "after" (after them), "returns" (in the return type)
        self.state = ""
        self.depth = 0  # the parentheses open in the parameters
        self.closers: list[str] = []  # what closes each bracket open in the return type
        self.type_ended = False  # whether the return type read so far may be whole (a "{" then begins the body)
        # in a body: "{" a block, "${" a template's substitution, "`" inside a template
        self.stack: list[str] = []
        self.regex_allowed = True
        self.no_regex_before = -1  # a "/" before this offset is a division: a regex scan failed there

    def fail(self, message: str, offset: int) -> LoaderError:
        line, column = self.lines.at(offset)
        return LoaderError(message, source=self.source, line=line, column=column)

    def scan(self) -> _Scanned:
        i = 0
        while i < len(self.text):
            skipped = self.trivia(i, keep_docs=True)
            if skipped is not None:
                i = skipped
                continue
            if self.pending_doc is not None:  # the comment documents the code that follows it
                self.docs[i], self.pending_doc = self.pending_doc, None
            ended = self.after_parameters(i) if self.state == "after" else \
                self.return_type_end(i) if self.state == "returns" and not self.closers else None
            i = self.token(i) if ended is None else ended
        return _Scanned(self.blanked(), self.docs)

    def trivia(self, i: int, *, keep_docs: bool) -> int | None:
        """The offset after the white space or comment at ``i`` (``None``: there is none); ``keep_docs``:
        a ``/** */`` comment is kept for the code that follows it."""
        text = self.text
        if text[i].isspace():
            return _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if text.startswith("//", i):
            end = text.find("\n", i)
            return len(text) if end < 0 else end
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise self.fail("the comment is not closed: expected '*/'", i)
            if keep_docs and text.startswith("/**", i) and not text.startswith("/**/", i):
                self.pending_doc = text[i:end + 2]
            return end + 2
        return None

    def after_parameters(self, i: int) -> int | None:
        """After a signature's ")": its body, a return type, or (``None``) no more of the signature."""
        self.state = ""
        if self.text[i] == "{":
            return self.body(i)
        if self.text[i] == ":":
            self.state, self.closers, self.type_ended = "returns", [], False
            return i + 1
        return None

    def return_type_end(self, i: int) -> int | None:
        """Outside any bracket of a return type: its body, or (``None``) the token read as usual."""
        if self.text[i] == "{" and self.type_ended:
            self.state = ""
            return self.body(i)
        if self.text[i] in ";,)]}":
            self.state = ""
        return None

    def token(self, i: int) -> int:
        """The offset after the token at ``i`` (outside bodies), the signature followed through it."""
        char = self.text[i]
        if char in "\"'`":
            self.type_ended = True
            return self.quoted(i) if char != "`" else self.template_type(i)
        if _is_word_char(char):
            return self.word(i)
        follow = self.SIGNATURE_PUNCTUATION.get(self.state)
        return i + 1 if follow is None else follow(self, char, i + 1)

    def word(self, i: int) -> int:
        end = _WORD.match(self.text, i).end()  # type: ignore[union-attr]
        word = self.text[i:end]
        if self.state == "returns" and not self.closers and self.type_ended and word in _STATEMENT_WORDS:
            self.state = ""
        if word == "function" and not self.state and (i == 0 or self.text[i - 1] != "."):
            self.state = "head"
        self.type_ended = word not in _TYPE_PREFIX_WORDS
        return end

    def in_head(self, char: str, i: int) -> int:
        """A name, generics: anything but "(" and these is no signature."""
        if char == "(":
            self.state, self.depth = "params", 1
        elif char in ":?;}":
            self.state = ""
        return i

    def in_parameters(self, char: str, i: int) -> int:
        self.depth += {"(": 1, ")": -1}.get(char, 0)
        if self.depth == 0:
            self.state = "after"
        return i

    def in_return_type(self, char: str, i: int) -> int:
        self.type_ended = char in ")]}>"
        if char == "=" and self.text.startswith(">", i):
            self.type_ended = False  # "=>": what follows is a type
            return i + 1
        if char in _CLOSERS:
            self.closers.append(_CLOSERS[char])
        elif self.closers and char == self.closers[-1]:
            self.closers.pop()
        return i

    def blanked(self) -> str:
        if not self.blanks:
            return self.text
        parts, last = [], 0
        for start, end in self.blanks:
            parts.append(self.text[last:start])
            parts.append(re.sub(r"[^\n]", " ", self.text[start:end]))
            last = end
        parts.append(self.text[last:])
        return "".join(parts)

    def quoted(self, i: int) -> int:
        """The offset after the string literal at ``i`` (a string ends at its line's end at the latest)."""
        text, quote, j = self.text, self.text[i], i + 1
        while j < len(text):
            char = text[j]
            if char == "\\":
                j += 2
                continue
            if char == quote:
                return j + 1
            if char == "\n":
                return j
            j += 1
        return j

    def template_type(self, i: int) -> int:
        """The offset after a template literal type (which the grammar then refuses)."""
        j = i + 1
        while j < len(self.text) and self.text[j] != "`":
            j += 2 if self.text[j] == "\\" else 1
        return min(j + 1, len(self.text))

    def body(self, open_brace: int) -> int:
        """Blank the body whose "{" is at ``open_brace``; the offset after its "}"."""
        self.stack, self.regex_allowed, self.no_regex_before = ["{"], True, -1
        i = open_brace + 1
        while i < len(self.text):
            if self.stack[-1] == "`":
                i = self.in_template(i)
                continue
            skipped = self.trivia(i, keep_docs=False)
            i = self.code(i) if skipped is None else skipped
            if not self.stack:
                self.blanks.append((open_brace + 1, i - 1))
                return i
        raise self.fail("the function's body is not closed: expected '}'", open_brace)

    def in_template(self, i: int) -> int:
        """The offset after what is at ``i`` inside a template literal in a body."""
        if self.text[i] == "\\":
            return i + 2
        if self.text[i] == "`":
            self.stack.pop()
            self.regex_allowed = False
            return i + 1
        if self.text.startswith("${", i):
            self.stack.append("${")
            self.regex_allowed = True
            return i + 2
        return i + 1

    def code(self, i: int) -> int:
        """The offset after the token at ``i`` in a body (a "/" is a regular expression where one may begin)."""
        char = self.text[i]
        if char in "\"'":
            self.regex_allowed = False
            return self.quoted(i)
        if char == "`":
            self.stack.append(char)
            return i + 1
        if char == "{":
            self.stack.append(char)
            self.regex_allowed = True
            return i + 1
        if char == "}":
            self.stack.pop()
            self.regex_allowed = False
            return i + 1
        if char == "/" and self.regex_allowed and i >= self.no_regex_before:
            return self.slash(i)
        if _is_word_char(char):
            end = _WORD.match(self.text, i).end()  # type: ignore[union-attr]
            self.regex_allowed = self.text[i:end] in _REGEX_AFTER_WORDS
            return end
        self.regex_allowed = char not in ")]"
        return i + 1

    def slash(self, i: int) -> int:
        """A regular expression at ``i``; else a division (and no regular expression on its line before it)."""
        end = self.regex(i)
        self.regex_allowed = end < 0
        if end < 0:
            self.no_regex_before = -end
            return i + 1
        return end


    def regex(self, i: int) -> int:
        """The offset after the regular expression at ``i``, or minus its line's end if it is none."""
        text, j, in_class = self.text, i + 1, False
        while j < len(text):
            char = text[j]
            if char == "\n":
                return -j
            if char == "\\":
                j += 2
                continue
            if in_class:
                in_class = char != "]"
            elif char == "[":
                in_class = True
            elif char == "/":
                return j + 1
            j += 1
        return -len(text)

    #: what a punctuation character does to the signature being followed, in each state
    SIGNATURE_PUNCTUATION = {"head": in_head, "params": in_parameters, "returns": in_return_type}


# --- JSDoc ------------------------------------------------------------------------------------

_DOC_LINE_START = re.compile(r"^[ \t]{0,1000}\*(?: |(?=\S)|$)", re.MULTILINE)
_PARAM_TAG = re.compile(r"@(?:param|arg|argument)\b")
_TAG_LINE = re.compile(r"^[ \t]{0,1000}@", re.MULTILINE)


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _read_jsdoc(comment: str | None) -> _JSDoc:
    """The description (first paragraph before any tag, whitespace normalised) and ``@param`` tags."""
    if not comment:
        return _JSDoc("", {})
    inner = comment[3:-2]
    inner = _DOC_LINE_START.sub("", inner)
    first_tag = _TAG_LINE.search(inner)
    head = inner if first_tag is None else inner[:first_tag.start()]
    paragraphs = [p for p in re.split(r"\n[ \t]{0,1000}\n", head.strip()) if p.strip()]
    description = _normalise(paragraphs[0]) if paragraphs else ""
    parameters: dict[str, _ParamDoc] = {}
    if first_tag is not None:
        tags = re.split(r"(?m)^[ \t]{0,1000}(?=@)", inner[first_tag.start():])
        for tag in tags:
            param_tag = _PARAM_TAG.match(tag)
            if param_tag is not None:
                _read_param_tag(tag[param_tag.end():], parameters)
    return _JSDoc(description, parameters)


def _read_param_tag(rest: str, parameters: dict[str, _ParamDoc]) -> None:
    """One ``@param`` tag's text after the tag word: ``{type} name - text``, ``[name=default] text``."""
    rest = rest.strip()
    if rest.startswith("{"):  # the type in braces (nested braces allowed): the declaration's type wins
        depth = 0
        for index, char in enumerate(rest):
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                rest = rest[index + 1:].strip()
                break
        else:
            return
    optional, default = False, None
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            return
        inside, rest = rest[1:end].strip(), rest[end + 1:]
        name, equals, written = inside.partition("=")
        optional = True
        if equals:
            default = _jsdoc_default(written.strip())
    else:
        match = re.match(r"[^\s]{1,1000}", rest)
        if match is None:
            return
        name, rest = match.group(), rest[match.end():]
    text = rest.strip()
    if text.startswith("-"):
        text = text[1:]
    parameters[name.strip()] = _ParamDoc(_normalise(text), optional, default)


def _jsdoc_default(written: str) -> _Default | None:
    """A JSDoc default as a value, when it is a JSON-like literal ('x' and "x", numbers, true/false/null)."""
    if len(written) >= 2 and written[0] == written[-1] == "'":
        written = json.dumps(written[1:-1])
    try:
        value = json.loads(written)
    except ValueError:
        return None
    return None if isinstance(value, (dict, list)) else _Default(value)


# --- the transformer ----------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unquote(token: str) -> str:
    """A JavaScript string literal's value (escapes read, nothing evaluated)."""
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 >= len(body):
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4]):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif code == "u" and body[i + 2:i + 3] == "{":
            end = body.find("}", i + 3)
            digits = body[i + 3:end] if end > 0 else ""
            if re.fullmatch(r"[0-9a-fA-F]{1,6}", digits) and int(digits, 16) <= 0x10FFFF:
                out.append(chr(int(digits, 16)))
                i = end + 1
            else:
                out.append(code)
                i += 2
        elif code == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif code == "\n":  # a line continuation
            i += 2
        else:
            out.append(code)
            i += 2
    return "".join(out)


def _number(token: str) -> int | float:
    text = token.replace("_", "")
    lowered = text.lower()
    for prefix, base in (("0x", 16), ("0b", 2), ("0o", 8)):
        if lowered.startswith(prefix):
            return int(text[2:], base)
    if re.fullmatch(r"\d{1,4300}", text):
        return int(text)
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2 ** 53 and "e" not in lowered else value


class _Place(TypedDict):
    line: int
    column: int


def _at(meta: Any) -> _Place:
    """A tree node's 1-based line and column, as keyword arguments."""
    return {"line": getattr(meta, "line", 1), "column": getattr(meta, "column", 1)}


class _DeclarationReader(Transformer):
    """The tree of ``grammars/typescript.lark`` → declaration records (``None`` for skipped statements)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, message: str, meta: Any) -> LoaderError:
        return LoaderError(message, source=self.source, **_at(meta))

    def start(self, children: list[Any]) -> list[Any]:
        return [child for child in children if child is not None]

    def _skipped(self, children: list[Any]) -> None:
        return None

    # statements and type parameters that make no tool and no type: read only to be skipped
    import_decl = export_list = type_param = _skipped

    def modifiers(self, children: list[Token]) -> frozenset[str]:
        return frozenset(str(child) for child in children)

    def body(self, children: list[Any]) -> str:
        return "body"

    @v_args(meta=True)
    def type_params(self, meta: Any, children: list[Any]) -> str:
        return "generic"

    @v_args(meta=True)
    def function_decl(self, meta: Any, children: list[Any]) -> _FunctionDecl:
        modifiers: frozenset[str] = frozenset()
        name, parameters, generic = None, [], False
        for child in children:
            if isinstance(child, frozenset):
                modifiers = child
            elif isinstance(child, Token) and child.type == "NAME":
                name = str(child)
            elif isinstance(child, _Parameter):
                parameters.append(child)
            elif child == "generic":
                generic = True
        if "default" in modifiers and "export" not in modifiers:
            raise self.fail("'default' is written after 'export'", meta)
        return _FunctionDecl(name=name, parameters=tuple(parameters), modifiers=modifiers, generic=generic,
                             offset=meta.start_pos, **_at(meta))

    @v_args(meta=True)
    def interface_decl(self, meta: Any, children: list[Any]) -> _TypeDecl:
        modifiers = next((c for c in children if isinstance(c, frozenset)), frozenset())
        name = next(str(c) for c in children if isinstance(c, Token) and c.type == "NAME")
        parents = tuple(c for c in children if isinstance(c, _NamedType))
        body = next(c for c in children if isinstance(c, _ObjectType))
        self._declaration_modifiers(modifiers, "an interface", meta)
        return _TypeDecl(name=name, body=body, extends=parents, interface=True, generic="generic" in children,
                         modifiers=modifiers, **_at(meta))

    @v_args(meta=True)
    def alias_decl(self, meta: Any, children: list[Any]) -> _TypeDecl:
        modifiers = next((c for c in children if isinstance(c, frozenset)), frozenset())
        name = next(str(c) for c in children if isinstance(c, Token) and c.type == "NAME")
        self._declaration_modifiers(modifiers, "a type alias", meta)
        return _TypeDecl(name=name, body=children[-1], generic="generic" in children, modifiers=modifiers,
                         **_at(meta))

    def _declaration_modifiers(self, modifiers: frozenset[str], what: str, meta: Any) -> None:
        if "async" in modifiers:
            raise self.fail(f"'async' is written before a function, not {what}", meta)

    # parameters

    @v_args(meta=True)
    def named_param(self, meta: Any, children: list[Any]) -> _Parameter:
        name = str(children[0])
        optional = any(isinstance(c, Token) and c.type == "OPTIONAL" for c in children)
        declared = next((c for c in children[1:] if isinstance(c, _Node)), None)
        default = next((c for c in children if isinstance(c, _Default)), None)
        return _Parameter(name=name, type=declared, optional=optional, default=default, offset=meta.start_pos,
                          **_at(meta))

    @v_args(meta=True)
    def rest_param(self, meta: Any, children: list[Any]) -> _Parameter:
        return _Parameter(name=str(children[0]), type=next((c for c in children if isinstance(c, _Node)), None),
                          rest=True, offset=meta.start_pos, **_at(meta))

    @v_args(meta=True)
    def pattern_param(self, meta: Any, children: list[Any]) -> _Parameter:
        declared = next((c for c in children[1:] if isinstance(c, _Node)), None)
        default = next((c for c in children[1:] if isinstance(c, _Default)), None)
        return _Parameter(name="{...}", type=declared, default=default, pattern=children[0], offset=meta.start_pos,
                          **_at(meta))

    def object_pattern(self, children: list[Any]) -> tuple[tuple[str, _Default | None], ...]:
        return tuple(children)

    def pattern_entry(self, children: list[Any]) -> tuple[str, _Default | None]:
        default = next((c for c in children if isinstance(c, _Default)), None)
        return str(children[0]), default

    def default_value(self, children: list[Any]) -> _Default:
        return _UNDEFINED if children[0] is _UNDEFINED else _Default(children[0])

    # literals (defaults)

    def string_value(self, children: list[Token]) -> str:
        return _unquote(str(children[0]))

    def number_value(self, children: list[Token]) -> int | float:
        return _number(str(children[0]))

    def negative_value(self, children: list[Token]) -> int | float:
        return -_number(str(children[0]))

    @v_args(meta=True)
    def word_value(self, meta: Any, children: list[Token]) -> Any:
        word = str(children[0])
        if word == "undefined":
            return _UNDEFINED
        if word not in _LITERAL_WORDS:
            raise self.fail(f"a parameter's default must be a literal (a string, a number, true, false, null, "
                            f"an array or an object of them), found {word!r}", meta)
        return _LITERAL_WORDS[word]

    def array_value(self, children: list[Any]) -> list[Any]:
        # undefined inside an array is sent as null, and a property holding it is left out (JSON.stringify)
        return [None if child is _UNDEFINED else child for child in children if not isinstance(child, Token)]

    def object_value(self, children: list[Any]) -> dict[str, Any]:
        return {key: value for key, value in children if value is not _UNDEFINED}

    def literal_pair(self, children: list[Any]) -> tuple[str, Any]:
        key = str(children[0])
        if children[0].type == "STRING":
            key = _unquote(key)
        elif children[0].type == "NUMBER":
            key = str(_number(key))
        return key, children[1]

    # types

    @v_args(meta=True)
    def type_ref(self, meta: Any, children: list[Any]) -> _NamedType:
        names = [str(c) for c in children if isinstance(c, Token)]
        arguments = next((c for c in children if isinstance(c, tuple)), ())
        return _NamedType(name=".".join(names), arguments=arguments, **_at(meta))

    def type_args(self, children: list[Any]) -> tuple[_Node, ...]:
        return tuple(children)

    @v_args(meta=True)
    def string_literal(self, meta: Any, children: list[Token]) -> _LiteralType:
        return _LiteralType(value=_unquote(str(children[0])), **_at(meta))

    @v_args(meta=True)
    def number_literal(self, meta: Any, children: list[Token]) -> _LiteralType:
        return _LiteralType(value=_number(str(children[0])), **_at(meta))

    @v_args(meta=True)
    def negative_literal(self, meta: Any, children: list[Token]) -> _LiteralType:
        return _LiteralType(value=-_number(str(children[0])), **_at(meta))

    @v_args(meta=True)
    def union(self, meta: Any, children: list[_Node]) -> _UnionType:
        return _UnionType(members=tuple(children), **_at(meta))

    @v_args(meta=True)
    def intersection(self, meta: Any, children: list[_Node]) -> _IntersectionType:
        return _IntersectionType(members=tuple(children), **_at(meta))

    @v_args(meta=True)
    def array(self, meta: Any, children: list[Any]) -> _Node:
        node = children[0]
        for _suffix in children[1:]:
            node = _ArrayType(item=node, **_at(meta))
        return node

    @v_args(meta=True)
    def readonly_type(self, meta: Any, children: list[Any]) -> _Node:
        if not isinstance(children[1], (_ArrayType, _TupleType)):
            return _RefusedType(reason="'readonly' is written before an array or tuple type", **_at(meta))
        return children[1]

    @v_args(meta=True)
    def type_operator(self, meta: Any, children: list[Any]) -> _RefusedType:
        return _RefusedType(reason=f"the type operator {str(children[0])!r} is not supported", **_at(meta))

    @v_args(meta=True)
    def tuple_type(self, meta: Any, children: list[Any]) -> _TupleType:
        return _TupleType(elements=tuple(c for c in children if isinstance(c, _TupleElement)), **_at(meta))

    @v_args(meta=True)
    def tuple_element(self, meta: Any, children: list[Any]) -> _TupleElement:
        optional = any(isinstance(c, Token) and c.type == "OPTIONAL" for c in children)
        return _TupleElement(type=next(c for c in children if isinstance(c, _Node)), optional=optional,
                             **_at(meta))

    @v_args(meta=True)
    def rest_element(self, meta: Any, children: list[Any]) -> _TupleElement:
        return _TupleElement(type=children[0], rest=True, **_at(meta))

    @v_args(meta=True)
    def object_type(self, meta: Any, children: list[Any]) -> _ObjectType:
        properties = tuple(c for c in children if isinstance(c, _PropertyDecl))
        indexes = [c for c in children if isinstance(c, tuple)]
        refused = next((c for c in children if isinstance(c, _RefusedType)), None)
        if len(indexes) > 1 and refused is None:
            refused = _RefusedType(reason="an object type has one index signature at most", **_at(meta))
        return _ObjectType(properties=properties, index=indexes[0][1] if indexes else None, refused=refused,
                           **_at(meta))

    @v_args(meta=True)
    def property(self, meta: Any, children: list[Any]) -> _PropertyDecl:
        name = next(c for c in children if isinstance(c, str) and not isinstance(c, Token))
        optional = any(isinstance(c, Token) and c.type == "OPTIONAL" for c in children)
        return _PropertyDecl(name=name, type=children[-1], optional=optional, offset=meta.start_pos, **_at(meta))

    def property_name(self, children: list[Token]) -> str:
        token = children[0]
        return _unquote(str(token)) if token.type == "STRING" else str(token)

    @v_args(meta=True)
    def index_signature(self, meta: Any, children: list[Any]) -> Any:
        key_type, value_type = [c for c in children if isinstance(c, _Node)]
        if not (isinstance(key_type, _NamedType) and key_type.name == "string"):
            return _RefusedType(reason="an index signature's key is a string ([key: string]: T)", **_at(meta))
        return ("index", value_type)

    @v_args(meta=True)
    def method(self, meta: Any, children: list[Any]) -> _RefusedType:
        return _RefusedType(reason="methods are not supported in a parameter's type (a tool's arguments are data)",
                            **_at(meta))


_UNDEFINED = _Default("undefined")  # a default of undefined: no default at all


def _too_deep(tree: Tree, limit: int) -> Tree | None:
    """The first node of ``tree`` deeper than ``limit`` levels, if any (walked without recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return None


# --- schemas -----------------------------------------------------------------------------------

def _is_plain_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" and set(schema) <= {"type", "properties", "required", "description",
                                                               "additionalProperties"}


class _SchemaBuilder:
    """Declaration records → tool definitions: names resolved, depth and size bounded."""

    def __init__(self, declarations: list[Any], docs: dict[int, str], *, source: str, limits: Limits,
                 budget: int) -> None:
        self.source, self.limits, self.docs = source, limits, docs
        self.budget = budget  # how many schema nodes may still be made (an alias used twice in one used twice...)
        self.types: dict[str, _TypeDecl] = {}
        self.functions = [d for d in declarations if isinstance(d, _FunctionDecl)]
        for declaration in declarations:
            if isinstance(declaration, _TypeDecl):
                if declaration.name in self.types or declaration.name in _PRIMITIVES:
                    first = self.types.get(declaration.name)
                    where = f" (first at line {first.line})" if first else " (a built-in type)"
                    raise LoaderError(f"the type {declaration.name!r} is declared twice{where}", source=source,
                                      line=declaration.line, column=declaration.column)
                self.types[declaration.name] = declaration
        self.tool: str | None = None
        self.expanding: list[str] = []
        self.definitions: dict[str, dict[str, Any]] = {}
        self.wanted: list[str] = []

    def fail(self, message: str, node: Any) -> LoaderError:
        return LoaderError(message, source=self.source, tool=self.tool, line=node.line, column=node.column)

    def tools(self) -> list[tuple[str, dict[str, Any]]]:
        # a module that exports functions has helpers too: its tools are what it exports or declares
        exported = any("export" in f.modifiers for f in self.functions)
        chosen = [f for f in self.functions if not exported or f.modifiers & {"export", "declare"}]
        seen: dict[str, _FunctionDecl] = {}
        entries = []
        for function in chosen:
            if function.name is None:
                raise LoaderError("a tool needs a name: 'export default function' has none", source=self.source,
                                  line=function.line, column=function.column)
            if function.name in seen:
                raise LoaderError(f"the function {function.name!r} is declared twice (first at line "
                                  f"{seen[function.name].line}); overloads are not read", source=self.source,
                                  tool=function.name, line=function.line, column=function.column)
            seen[function.name] = function
            entries.append((f"line:{function.line}", self.tool_definition(function)))
        return entries

    def tool_definition(self, function: _FunctionDecl) -> dict[str, Any]:
        self.tool, self.definitions, self.wanted = function.name, {}, []
        if function.generic:
            raise self.fail("generic functions are not supported: expected '(' after the function's name", function)
        doc = _read_jsdoc(self.docs.get(function.offset))
        parameters = [p for p in function.parameters if p.name != "this"]
        flattened = self.flattened(parameters, doc)
        if flattened is not None:
            schema = flattened
        else:
            properties: dict[str, Any] = {}
            required = []
            for parameter in parameters:
                if parameter.rest:
                    raise self.fail("rest parameters (...name) are not supported", parameter)
                if parameter.pattern is not None:
                    raise self.fail("a destructured parameter is read only as a function's one parameter", parameter)
                if parameter.name in properties:
                    raise self.fail(f"the parameter {parameter.name!r} is declared twice", parameter)
                property_schema, optional = self.parameter(parameter, doc.parameters.get(parameter.name))
                properties[parameter.name] = property_schema
                if not optional:
                    required.append(parameter.name)
                self.dotted_descriptions(parameter.name, property_schema, doc)
            schema = {"type": "object", "properties": properties}
            if required:
                schema["required"] = required
        self.add_definitions(schema)
        definition: dict[str, Any] = {"name": function.name}
        if doc.description:
            definition["description"] = doc.description
        definition["parameters"] = schema
        return definition

    def add_definitions(self, schema: dict[str, Any]) -> None:
        while self.wanted:
            name = self.wanted.pop()
            if name in self.definitions:
                continue
            self.definitions[name] = {}  # reserved while it is built: a self-reference is a $ref
            declaration = self.types[name]
            self.expanding = [name]
            self.definitions[name] = self.declared(declaration, 1)
            self.expanding = []
        if self.definitions:
            schema["$defs"] = self.definitions

    def flattened(self, parameters: list[_Parameter], doc: _JSDoc) -> dict[str, Any] | None:
        """The one object parameter's schema, when it is one the tool's parameters are read from."""
        if len(parameters) != 1:
            return None
        parameter = parameters[0]
        if parameter.pattern is None and parameter.name not in FLATTENED_PARAMETER_NAMES:
            return None
        schema = self.object_parameter(parameter)
        if schema is None:
            return None
        for name, default in parameter.pattern or ():  # a destructured name's default
            properties = schema.get("properties", {})
            if default is not None and default is not _UNDEFINED and name in properties:
                properties[name] = {**properties[name], "default": default.value}
                if name in schema.get("required", []):
                    schema["required"] = [r for r in schema["required"] if r != name]
        if "required" in schema and not schema["required"]:
            del schema["required"]
        if parameter.pattern is None:
            self.dotted_descriptions(parameter.name, schema, doc)
        else:  # the names are the tool's parameters
            for dotted, param_doc in doc.parameters.items():
                self.describe(schema, dotted.split("."), param_doc)
        return schema

    def object_parameter(self, parameter: _Parameter) -> dict[str, Any] | None:
        """The schema (a new dict, without a description) of a parameter that is an object, else ``None``."""
        if parameter.type is None and parameter.pattern is None:
            return None
        if parameter.type is None:
            return {"type": "object", "properties": {name: {} for name, _default in parameter.pattern or ()}}
        schema = self.schema(parameter.type, 1)
        if schema.get("type") != "object" or "$ref" in schema:
            if parameter.pattern is not None:
                raise self.fail("a destructured parameter's type is an object type", parameter)
            return None
        return {key: value for key, value in schema.items() if key != "description"}

    def dotted_descriptions(self, name: str, schema: dict[str, Any], doc: _JSDoc) -> None:
        for dotted, param_doc in doc.parameters.items():
            path = dotted.split(".")
            if len(path) > 1 and path[0] == name:
                self.describe(schema, path[1:], param_doc)

    def describe(self, schema: dict[str, Any], path: list[str], param_doc: _ParamDoc) -> None:
        """Fill the description of the property at ``path`` (its own comment, if any, wins)."""
        node = schema
        for part in path[:-1]:
            node = node.get("properties", {}).get(part)
            if not isinstance(node, dict):
                return
        properties = node.get("properties", {})
        if not path or path[-1] not in properties:
            return
        target = properties[path[-1]]
        if param_doc.description and "description" not in target:
            properties[path[-1]] = target = {**target, "description": param_doc.description}
        if param_doc.optional and path[-1] in node.get("required", []):
            node["required"] = [r for r in node["required"] if r != path[-1]]
            if not node["required"]:
                del node["required"]

    def parameter(self, parameter: _Parameter, param_doc: _ParamDoc | None) -> tuple[dict[str, Any], bool]:
        optional = parameter.optional or parameter.default is not None
        if parameter.type is not None:
            schema, undefined = self.member_schema(parameter.type, 1)
            optional = optional or undefined
        elif parameter.default is not None and parameter.default is not _UNDEFINED:
            schema = self.inferred(parameter.default.value)
        else:
            schema = {}
        schema = dict(schema)
        if parameter.default is not None and parameter.default is not _UNDEFINED:
            schema["default"] = parameter.default.value
        elif param_doc is not None and param_doc.default is not None:
            schema["default"] = param_doc.default.value
        description = param_doc.description if param_doc is not None else ""
        if not description:
            description = _read_jsdoc(self.docs.get(parameter.offset)).description
        if description:
            schema["description"] = description
        if param_doc is not None and param_doc.optional:
            optional = True
        return schema, optional

    def inferred(self, value: Any) -> dict[str, Any]:
        """The type TypeScript gives a parameter from its default: a literal's type, widened."""
        kind = _json_type(value)
        return {"type": kind} if kind in ("boolean", "number", "string", "array", "object") else {}

    def node(self, node: _Node, depth: int) -> None:
        """Count one schema made at ``depth``; refuse past the depth limit or the size budget."""
        if depth > self.limits.max_depth:
            raise self.fail(f"the type is nested deeper than {self.limits.max_depth} levels", node)
        self.budget -= 1
        if self.budget < 0:
            raise self.fail("the types expand to too many schemas (types used many times within types used "
                            "many times); declare fewer", node)

    def member_schema(self, node: _Node, depth: int) -> tuple[dict[str, Any], bool]:
        """A property's or a parameter's schema, and whether ``| undefined`` makes it optional."""
        if isinstance(node, _UnionType):
            members = self.union_members(node)
            kept = tuple(m for m in members if not (isinstance(m, _NamedType) and m.name == "undefined"))
            if len(kept) < len(members):
                if not kept:
                    return self.schema(members[0], depth), True
                if len(kept) == 1:
                    return self.schema(kept[0], depth), True
                return self.union(_UnionType(members=kept, line=node.line, column=node.column), depth), True
        return self.schema(node, depth), False

    def union_members(self, node: _UnionType) -> tuple[_Node, ...]:
        members: list[_Node] = []
        stack = list(reversed(node.members))
        while stack:
            member = stack.pop()
            if isinstance(member, _UnionType):
                stack.extend(reversed(member.members))
            else:
                members.append(member)
        return tuple(members)

    def schema(self, node: _Node, depth: int) -> dict[str, Any]:
        self.node(node, depth)
        if isinstance(node, _NamedType):
            return self.named(node, depth)
        if isinstance(node, _LiteralType):
            return {"type": _json_type(node.value), "enum": [node.value]}
        if isinstance(node, _ArrayType):
            return {"type": "array", "items": self.schema(node.item, depth + 1)}
        if isinstance(node, _TupleType):
            return self.tuple(node, depth)
        if isinstance(node, _UnionType):
            return self.union(node, depth)
        if isinstance(node, _IntersectionType):
            return self.intersection(node, depth)
        if isinstance(node, _ObjectType):
            return self.object(node, depth)
        if isinstance(node, _RefusedType):
            raise self.fail(node.reason, node)
        raise self.fail(f"cannot read this type ({type(node).__name__})", node)

    def named(self, node: _NamedType, depth: int) -> dict[str, Any]:
        name = node.name
        if name in self.types:
            if node.arguments:
                raise self.fail(f"generic types are not supported: {name!r} takes no type arguments", node)
            if name in self.expanding:  # a type that contains itself: reached through $defs
                if name not in self.definitions:
                    self.wanted.append(name)
                return {"$ref": f"#/$defs/{name}"}
            self.expanding.append(name)
            try:
                return self.declared(self.types[name], depth)
            finally:
                self.expanding.pop()
        if name in ("true", "false"):
            return {"type": "boolean", "enum": [name == "true"]}
        if name in _PRIMITIVES:
            if node.arguments:
                raise self.fail(f"{name!r} takes no type arguments", node)
            return dict(_PRIMITIVES[name])
        if name in ("Array", "ReadonlyArray"):
            if len(node.arguments) != 1:
                raise self.fail(f"{name}<T> takes one type argument, got {len(node.arguments)}", node)
            return {"type": "array", "items": self.schema(node.arguments[0], depth + 1)}
        if name == "Record":
            return self.record(node, depth)
        if name in _NO_VALUE_TYPES:
            raise self.fail(f"a parameter cannot hold {_NO_VALUE_TYPES[name]} ({name!r}) in JSON", node)
        known = ", ".join(sorted(self.types)) or "none"
        raise self.fail(f"unknown type {name!r}: expected string, number, boolean, any, unknown, null, object, "
                        f"Array<T>, ReadonlyArray<T>, Record<string, T> or a type declared in the file "
                        f"(declared: {known})", node)

    def declared(self, declaration: _TypeDecl, depth: int) -> dict[str, Any]:
        if declaration.generic:
            raise self.fail(f"generic types are not supported ({declaration.name!r} has type parameters)",
                            declaration)
        schema = self.schema(declaration.body, depth) if not declaration.extends else self.extended(declaration,
                                                                                                      depth)
        return schema

    def extended(self, declaration: _TypeDecl, depth: int) -> dict[str, Any]:
        """An interface with ``extends``: its parents' properties, then its own (which win)."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        extra: Any = None
        for parent in declaration.extends:
            parent_schema = self.schema(parent, depth)
            if "$ref" in parent_schema or not _is_plain_object(parent_schema):
                raise self.fail(f"an interface extends object types; {parent.name!r} is not one", parent)
            for name, sub in parent_schema.get("properties", {}).items():
                properties[name] = sub
                required = [r for r in required if r != name]
            required.extend(parent_schema.get("required", []))
            extra = parent_schema.get("additionalProperties", extra)
        own = self.schema(declaration.body, depth)
        for name, sub in own.get("properties", {}).items():
            properties[name] = sub
            required = [r for r in required if r != name]
        required.extend(own.get("required", []))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        extra = own.get("additionalProperties", extra)
        if extra is not None:
            schema["additionalProperties"] = extra
        return schema

    def record(self, node: _NamedType, depth: int) -> dict[str, Any]:
        if len(node.arguments) != 2:
            raise self.fail(f"Record<K, V> takes two type arguments, got {len(node.arguments)}", node)
        key, value = node.arguments
        if isinstance(key, _NamedType) and key.name == "string":
            return {"type": "object", "additionalProperties": self.schema(value, depth + 1)}
        keys = self.union_members(key) if isinstance(key, _UnionType) else (key,)
        if all(isinstance(k, _LiteralType) and isinstance(k.value, str) for k in keys):
            names = list(dict.fromkeys(k.value for k in keys if isinstance(k, _LiteralType)))
            return {"type": "object", "properties": {name: self.schema(value, depth + 1) for name in names},
                    "required": names}
        raise self.fail("Record's key type is string or a union of string literals", key)

    def tuple(self, node: _TupleType, depth: int) -> dict[str, Any]:
        prefix, minimum, rest = [], 0, None
        for index, element in enumerate(node.elements):
            if element.rest:
                if index != len(node.elements) - 1:
                    raise self.fail("a tuple's rest element (...T[]) comes last", element)
                rest_schema = self.schema(element.type, depth + 1)
                if rest_schema.get("type") != "array" or "items" not in rest_schema:
                    raise self.fail("a tuple's rest element is an array type (...T[])", element)
                rest = rest_schema["items"]
                continue
            prefix.append(self.schema(element.type, depth + 1))
            if not element.optional:
                if minimum < len(prefix) - 1:
                    raise self.fail("a required tuple element cannot follow an optional one", element)
                minimum = len(prefix)
        schema: dict[str, Any] = {"type": "array", "prefixItems": prefix, "minItems": minimum}
        if rest is None:
            schema["maxItems"] = len(prefix)
        else:
            schema["items"] = rest
        return schema

    def union(self, node: _UnionType, depth: int) -> dict[str, Any]:
        """Literals → one enum (with their types), ``T | null`` → T's type and "null", else anyOf."""
        literals: list[Any] = []
        others: list[dict[str, Any]] = []
        null = False
        for member in self.union_members(node):
            if isinstance(member, _LiteralType):
                literals.append(member.value)
            elif _is_named(member, "true", "false"):
                literals.append(member.name == "true")
            elif _is_named(member, "null", "undefined"):
                null = True
            else:
                schema = self.schema(member, depth)
                if schema == {}:
                    return {}
                others.append(schema)
        others = _enum_branch(_distinct(literals)) + others
        return _or_null(others) if null else _any_of(others)

    def intersection(self, node: _IntersectionType, depth: int) -> dict[str, Any]:
        schemas = [self.schema(member, depth) for member in node.members]
        if all(_is_plain_object(s) for s in schemas):
            names = [name for s in schemas for name in s.get("properties", {})]
            extras = [s["additionalProperties"] for s in schemas if "additionalProperties" in s]
            if len(names) == len(set(names)) and len(extras) <= 1:
                merged: dict[str, Any] = {"type": "object",
                                          "properties": {k: v for s in schemas for k, v in s.get("properties", {}).items()}}
                required = [r for s in schemas for r in s.get("required", [])]
                if required:
                    merged["required"] = required
                if extras:
                    merged["additionalProperties"] = extras[0]
                return merged
        return {"allOf": schemas}

    def object(self, node: _ObjectType, depth: int) -> dict[str, Any]:
        if node.refused is not None:
            raise self.fail(node.refused.reason, node.refused)
        properties: dict[str, Any] = {}
        required = []
        for member in node.properties:
            if member.name in properties:
                raise self.fail(f"the property {member.name!r} is declared twice", member)
            schema, undefined = self.member_schema(member.type, depth + 1)
            description = _read_jsdoc(self.docs.get(member.offset)).description
            if description:
                schema = {**schema, "description": description}
            properties[member.name] = schema
            if not (member.optional or undefined):
                required.append(member.name)
        result: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            result["required"] = required
        if node.index is not None:
            result["additionalProperties"] = self.schema(node.index, depth + 1)
        if not properties and node.index is not None:
            del result["properties"]
        return result


def _is_named(node: _Node, *names: str) -> TypeGuard[_NamedType]:
    """Whether ``node`` is one of the type names ``names`` (without type arguments)."""
    return isinstance(node, _NamedType) and node.name in names and not node.arguments


def _enum_branch(literals: list[Any]) -> list[dict[str, Any]]:
    """The branch a union's literals make (none, when there are none): ``true | false`` is a boolean."""
    if not literals:
        return []
    if all(isinstance(v, bool) for v in literals) and len(literals) == 2:
        return [{"type": "boolean"}]
    types = list(dict.fromkeys(_json_type(v) for v in literals))
    return [{"type": types[0] if len(types) == 1 else types, "enum": literals}]


def _or_null(branches: list[dict[str, Any]]) -> dict[str, Any]:
    """The union of ``branches`` and null: null joins the types (and the enum) of a single typed branch."""
    if len(branches) == 1 and isinstance(branches[0].get("type"), (str, list)) and "$ref" not in branches[0]:
        only = dict(branches[0])
        types = only["type"] if isinstance(only["type"], list) else [only["type"]]
        only["type"] = types + ["null"] if "null" not in types else types
        if "enum" in only:
            only["enum"] = only["enum"] + [None]
        return only
    return _any_of(branches + [{"type": "null"}])


def _any_of(branches: list[dict[str, Any]]) -> dict[str, Any]:
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def _distinct(values: list[Any]) -> list[Any]:
    """``values`` without repeats (1 and true are different values here)."""
    seen: set[tuple[str, Any]] = set()
    out = []
    for value in values:
        key = (type(value).__name__, value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _json_type(value: Any) -> str:
    """A literal's JSON type (TypeScript has one number type)."""
    kind = json_type_of(value)
    return "number" if kind == "integer" else kind


# --- entry point --------------------------------------------------------------------------------

def _grammar_error(failure: GrammarFailure, text: str, source: str) -> LoaderError:
    found = failure.found
    line, column = failure.line, failure.column
    if found == "the end of the text":  # Lark places it on the last token; point past the text
        line, column = _Lines(text).at(len(text.rstrip()))
    word = found[1:-1] if len(found) >= 2 and found[0] == found[-1] == "'" else found
    wanted = " or ".join(failure.expected[:8]) + (" or ..." if len(failure.expected) > 8 else "")
    detail = f"expected {wanted}, found {found}" if wanted else f"cannot read this, found {found}"
    why = _REFUSED_WORDS.get(word)
    message = f"{why}: {detail}" if why else detail
    return LoaderError(message, source=source, line=line, column=column)


def read_typescript(text: str, *, source: str = "<string>",
                    limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, dict[str, Any]]]:
    """The tools ``text`` declares, as ``(where, tool definition)`` pairs: the definition in the bare OpenAI
    shape ``{"name", "description", "parameters"}`` (JSON Schema 2020-12), ``where`` naming its line.

    >>> [(where, tool)] = read_typescript('''
    ... /** Get the weather.
    ...  * @param city The city. */
    ... export function get_weather(city: string, unit: "c" | "f" = "c"): Promise<string> {
    ...   return fetch(`/w/${city}?u={unit}`).then(r => r.text());
    ... }''')
    >>> where, tool["name"], tool["description"]
    ('line:4', 'get_weather', 'Get the weather.')
    >>> tool["parameters"]["properties"]["unit"]
    {'type': 'string', 'enum': ['c', 'f'], 'default': 'c'}
    >>> read_typescript("function f(x: keyof T) {}", source="f.ts")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.LoaderError: f.ts:1:15: tool 'f': the type operator 'keyof' is not supported
    """
    if len(text) > limits.max_input_bytes:
        raise LoaderError(f"the text is longer than the {limits.max_input_bytes} allowed", source=source)
    scanned = _Scanner(text, source).scan()
    try:
        tree = parse("typescript", scanned.text, positions=True)
    except GrammarFailure as failure:
        raise _grammar_error(failure, scanned.text, source) from None
    # a type nests about three tree levels deep per schema level; the transformer recurses
    deep = _too_deep(tree, 4 * limits.max_depth + 16)
    if deep is not None:
        raise LoaderError(f"the declarations are nested deeper than {limits.max_depth} levels", source=source,
                          **_at(deep.meta))
    try:
        declarations = transform(_DeclarationReader(source), tree)
        builder = _SchemaBuilder(declarations, scanned.docs, source=source, limits=limits,
                                 budget=64 * len(text) + 100_000)
        return builder.tools()
    except RecursionError:  # only when limits.max_depth is raised past what Python's stack holds
        raise LoaderError(f"the declarations are nested too deeply to read (limits.max_depth is "
                          f"{limits.max_depth})", source=source) from None


__all__ = ["FLATTENED_PARAMETER_NAMES", "read_typescript"]
