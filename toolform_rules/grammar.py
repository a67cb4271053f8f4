"""The parser module: the only place that builds Lark parsers and reads Lark's errors.

A grammar file in ``grammars/`` is the source of truth for a format.  ``load_parser``
builds an LALR parser for it once (``%import`` of the shared pieces resolves inside
``grammars/``); ``parse`` runs it and turns any Lark error into a
:class:`GrammarFailure` that says where the grammar stopped (line, column) and what it
expected there.  Protocol modules and the policy expression reader receive trees and transform them
with their own ``Transformer``; nothing past them sees Lark.

Lark itself is imported when first needed — a parser built, a tree transformed, or one
of the names it lends (``Token``, ``Tree``, ``v_args``) asked for — so a process that only
validates calls, or reads a reply that is strict JSON, never loads it.  :class:`Transformer`
is this module's own base class: a protocol defines (and instantiates) its grammar's
transformer at import without Lark; Lark's ``Transformer`` is mixed in at the first
``transform``.
"""

from __future__ import annotations

import functools
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .errors import ToolformRulesError

if TYPE_CHECKING:
    from lark import Lark, Token, Tree, v_args

#: The names this module lends from Lark, imported on first use (PEP 562).
_FROM_LARK = frozenset({"Token", "Tree", "v_args"})

__all__ = ["GrammarFailure", "Token", "Transformer", "Tree", "grammars_directory", "load_parser", "parse", "transform",
           "v_args"]


def __getattr__(name: str) -> Any:
    """``Token``, ``Tree`` and ``v_args``: Lark's, imported when first asked for."""
    if name not in _FROM_LARK:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import lark

    value = getattr(lark, name)
    globals()[name] = value
    return value


class Transformer:
    """Base class of a grammar's transformer: a tree → Python values, bottom-up, in Lark's way.

    A subclass names its methods after the grammar's rules (called with the transformed
    children) and terminals (called with the token), as for ``lark.Transformer``, whose
    ``transform`` (and ``__default__``, ``__default_token__``, ``v_args``) it gets.  Defining
    the subclass, or making an instance, imports nothing: Lark's ``Transformer`` is mixed in
    when the instance first transforms a tree (the tree came from :func:`parse`, so Lark is
    loaded by then) — the instance's class becomes a subclass of the same name that adds
    ``lark.Transformer`` after it, made once per class.
    """

    def transform(self, tree: Tree) -> Any:
        """``tree`` transformed by this object's methods (``lark.Transformer.transform``)."""
        from lark import Transformer as LarkTransformer

        if not isinstance(self, LarkTransformer):
            self.__class__ = _with_lark(cast(type, self.__class__))
        return LarkTransformer.transform(cast("LarkTransformer[Any, Any]", self), tree)


@functools.cache
def _with_lark(cls: type) -> type:
    """``cls`` with ``lark.Transformer`` mixed in after it (same name, module and documentation)."""
    from lark import Transformer as LarkTransformer

    def body(namespace: dict[str, Any]) -> None:
        namespace.update(__module__=cls.__module__, __qualname__=cls.__qualname__, __doc__=cls.__doc__)

    return types.new_class(cls.__name__, (cls, LarkTransformer), exec_body=body)


def grammars_directory() -> Path:
    """Where the grammar files are: inside the installed package, else the source tree."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "grammars", here.parent / "grammars"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the grammars directory is missing from the installation ({here})")


class GrammarFailure(ToolformRulesError):
    """Where a grammar stopped on a text: 1-based line and column, and what it expected."""

    def __init__(self, grammar: str, line: int, column: int, expected: tuple[str, ...] = (), found: str = "") -> None:
        self.grammar, self.line, self.column, self.expected, self.found = grammar, line, column, expected, found
        super().__init__(f"{grammar}: {self.describe()}")

    def describe(self) -> str:
        """``line 1, column 9: expected ',' or '}', found ']'`` — for a reply's note."""
        where = f"line {self.line}, column {self.column}"
        wanted = " or ".join(self.expected[:6]) + (" or ..." if len(self.expected) > 6 else "")
        if not wanted:
            return f"{where}: {self.found}" if self.found else where
        found = f", found {self.found}" if self.found else ""
        return f"{where}: expected {wanted}{found}"


@functools.cache
def load_parser(name: str, start: str = "start", positions: bool = False) -> Lark:
    """The LALR parser of ``grammars/<name>.lark`` (built once); ``positions`` fills each tree's ``meta``."""
    from lark import Lark

    directory = grammars_directory()
    text = (directory / f"{name}.lark").read_text(encoding="utf-8")
    return Lark(text, parser="lalr", start=start, import_paths=[directory], propagate_positions=positions,
                maybe_placeholders=False)


_TERMINAL_WORDS = {"$END": "the end of the text", "<END-OF-FILE>": "the end of the text"}
#: Terminals of the shared grammars, in words (whatever grammar imported them).
_SHARED_TERMINAL_WORDS = {"DOUBLE_QUOTED": "a double-quoted string", "SINGLE_QUOTED": "a single-quoted string",
                          "SIGNED_NUMBER": "a number", "NUMBER": "a number", "TRUE": "true", "FALSE": "false",
                          "NULL": "null", "STRING": "a string", "NAME": "a name", "CNAME": "a name"}


def _pretty(terminals: Any, parser: Lark) -> tuple[str, ...]:
    names = []
    for name in sorted(terminals or ()):
        if name in _TERMINAL_WORDS:
            names.append(_TERMINAL_WORDS[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
        except KeyError:
            names.append(name)
            continue
        shown = name.rsplit("__", 1)[-1]  # an imported terminal: json_values__DOUBLE_QUOTED
        if pattern.type == "str":
            names.append(repr(pattern.value))
        else:
            names.append(_SHARED_TERMINAL_WORDS.get(shown.upper(), shown.lower().lstrip("_").replace("_", " ")))
    return tuple(dict.fromkeys(names))


def parse(name: str, text: str, start: str = "start", positions: bool = False) -> Tree:
    """Parse ``text`` with grammar ``name``; a failure is a :class:`GrammarFailure`, never a Lark error."""
    from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

    parser = load_parser(name, start, positions)
    try:
        return parser.parse(text)
    except UnexpectedEOF as err:
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
        raise GrammarFailure(name, line, column, _pretty(err.expected, parser), "the end of the text") from None
    except UnexpectedToken as err:
        found = "the end of the text" if err.token.type == "$END" else repr(str(err.token))
        raise GrammarFailure(name, err.line if err.line > 0 else 1, err.column if err.column > 0 else 1,
                             _pretty(err.expected, parser), found) from None
    except UnexpectedCharacters as err:
        position = err.pos_in_stream if isinstance(err.pos_in_stream, int) else -1
        char = text[position] if 0 <= position < len(text) else ""
        raise GrammarFailure(name, err.line, err.column, _pretty(err.allowed, parser), repr(char)) from None
    except UnexpectedInput as err:  # any other position-bearing failure
        raise GrammarFailure(name, getattr(err, "line", 1) or 1, getattr(err, "column", 1) or 1) from None
    except (LarkError, RecursionError) as err:
        raise GrammarFailure(name, 1, 1, (), type(err).__name__) from None


def transform(transformer: Transformer, tree: Tree) -> Any:
    """``transformer.transform(tree)``, re-raising a callback's own exception rather than Lark's wrapper."""
    from lark.exceptions import VisitError

    try:
        return transformer.transform(tree)
    except VisitError as err:
        raise err.orig_exc from None
