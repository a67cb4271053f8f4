"""Hypothesis strategies for the constraint expression language: well-formed expression text,
the lists a policy binds, and argument dicts that do not always fit the expressions.

Text is generated (not trees) so that the reader is exercised too: precedence without
parentheses, redundant parentheses, escapes and unicode in strings, comments and line
breaks between tokens.  Every piece carries its grammar level (``grammars/expr.lark``:
or < and < not < comparison < sum < product < unary < postfix) so that an operand is
parenthesised exactly when the grammar needs it, and sometimes when it does not.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from toolform_rules.policy.functions import FUNCTIONS

# Grammar levels, lowest binding first.
OR, AND, NOT, COMPARISON, SUM, PRODUCT, UNARY, POSTFIX = range(8)

#: Argument names the expressions read; the dicts hold some of them, with kinds that often fit.
ARG_NAMES = ("n", "m", "s", "t", "b", "xs", "ss", "obj", "none")
#: Names the expressions read that the dicts never hold (a ``missing`` error, or ``has`` false).
ABSENT_NAMES = ("absent",)
LOOP_VARIABLES = ("x", "y", "z")
LIST_NAMES = ("names", "nums", "mixed", "empty")
#: Patterns RE2 accepts; ``(a)\\1`` (a back-reference) it refuses.
PATTERNS = ("^a", "b$", "[0-9]+", "é", "a|b", "^$", "(?i)AB", ".*x.*", "\\\\d{2}", "(a)\\\\1")

#: The lists a policy binds (the same for both evaluators); unicode on purpose.
LISTS: dict[str, list[Any]] = {
    "names": ["alice", "bob", "Zoë", "ß", ""],
    "nums": [0, 1, 2.5, -3],
    "mixed": ["a", 1, True, None, [1], {"k": "v"}],
    "empty": [],
}

Piece = tuple[str, int]  # text, grammar level


def _group(piece: Piece, level: int, draw: Any) -> str:
    """The piece's text as an operand that must be at least ``level``: parenthesised when needed,
    and sometimes when not (redundant parentheses must change nothing)."""
    text, own = piece
    if own < level or draw(st.integers(0, 9)) == 0:
        return f"({text})"
    return text


# --- tokens -------------------------------------------------------------------------------

_SPACE = st.sampled_from([" ", " ", " ", "  ", "\n", "\t", " # note\n", "\r\n"])


def _quote(value: str, draw: Any) -> str:
    """A string literal whose body reads back as ``value`` (escapes chosen at random)."""
    quote = draw(st.sampled_from(['"', "'"]))
    out = []
    for char in value:
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif char == quote:
            out.append("\\" + quote)
        elif char in "\n\r\t\0":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}[char])
        elif draw(st.integers(0, 5)) == 0:  # an escape where a plain character would do
            if code <= 0xFF and draw(st.booleans()):
                out.append(f"\\x{code:02x}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04X}")
            else:
                out.append(f"\\U{code:08x}")
        else:
            out.append(char)
    return quote + "".join(out) + quote


@st.composite
def string_literals(draw: Any) -> Piece:
    value = draw(st.one_of(
        st.sampled_from(["", "a", "alice", "Zoë", "ß", "é", "a\"b", "it's", "x\\y", "^a", "ab", "AB", "🙂"]),
        st.text(max_size=8),
    ))
    return _quote(value, draw), POSTFIX


@st.composite
def number_literals(draw: Any) -> Piece:
    text = draw(st.one_of(
        st.integers(0, 10**6).map(str),
        st.sampled_from(["0", "1", "2", "10", "0.5", "2.5", "1e3", "1E-2", "3.0e+2", "007", "1" + "0" * 30]),
        st.floats(0, 1e6, allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: "e" not in t or "." in t),
    ))
    if draw(st.integers(0, 4)) == 0:
        return "-" + text, UNARY  # folded into a negative literal by the reader
    return text, POSTFIX


_CONSTANTS = st.sampled_from(["true", "false", "null", "True", "False", "None"]).map(lambda t: (t, POSTFIX))


@st.composite
def references(draw: Any, variables: tuple[str, ...]) -> Piece:
    """``args.x``, ``norm.x``, ``call.name``, ``lists.x``, a loop variable, members and indexes."""
    choices = ["args", "args", "args", "norm", "call", "lists", "argsitem"]
    if variables:
        choices += ["var", "var", "var"]
    kind = draw(st.sampled_from(choices))
    if kind == "args":
        text = "args." + draw(st.sampled_from(ARG_NAMES + ABSENT_NAMES))
    elif kind == "argsitem":
        text = "args[" + _quote(draw(st.sampled_from(ARG_NAMES + ABSENT_NAMES)), draw) + "]"
    elif kind == "norm":
        text = "norm." + draw(st.sampled_from(ARG_NAMES))
    elif kind == "call":
        text = draw(st.sampled_from(["call.name", "call"]))
    elif kind == "lists":
        text = "lists." + draw(st.sampled_from(LIST_NAMES))
    else:
        text = draw(st.sampled_from(variables))
    for _ in range(draw(st.integers(0, 2))):
        step = draw(st.sampled_from(["member", "index", "key"]))
        if step == "member":
            text += "." + draw(st.sampled_from(("k", "a", "n", "name")))
        elif step == "index":
            text += "[" + draw(st.sampled_from(["0", "1", "-1", "5"])) + "]"
        else:
            text += "[" + _quote(draw(st.sampled_from(["k", "a", "é"])), draw) + "]"
    return text, POSTFIX


def atoms(variables: tuple[str, ...]) -> st.SearchStrategy[Piece]:
    return st.one_of(references(variables), references(variables), number_literals(), string_literals(),
                     _CONSTANTS)


# --- compound expressions -------------------------------------------------------------------

_FUNCTION_NAMES = tuple(sorted(FUNCTIONS))


def _join(draw: Any, *parts: str) -> str:
    """Tokens joined by white space (sometimes a comment or a line break)."""
    out = parts[0]
    for part in parts[1:]:
        out += draw(_SPACE) + part
    return out


@st.composite
def expressions(draw: Any, variables: tuple[str, ...] = (), depth: int = 4) -> Piece:
    """One expression over the vocabulary; ``depth`` bounds its nesting (the reader's limits
    are far away: no generated text is refused for its size)."""
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(atoms(variables))
    sub = lambda: draw(expressions(variables, depth - 1))  # noqa: E731
    kind = draw(st.sampled_from(["or", "and", "not", "compare", "compare", "compare", "sum", "product", "negative",
                                 "postfix", "list", "call", "call", "has", "quantifier", "quantifier"]))
    if kind in ("or", "and"):
        own = OR if kind == "or" else AND
        return _join(draw, _group(sub(), own, draw), kind, _group(sub(), own + 1, draw)), own
    if kind == "not":
        return _join(draw, "not", _group(sub(), NOT, draw)), NOT
    if kind == "compare":
        count = draw(st.integers(1, 3))
        parts = [_group(sub(), SUM, draw)]
        for _ in range(count):
            op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "in", "==", "not  in"]))
            if op == "in" and draw(st.booleans()):
                parts += ["in", "lists." + draw(st.sampled_from(LIST_NAMES))]
                continue
            parts += [op, _group(sub(), SUM, draw)]
        return _join(draw, *parts), COMPARISON
    if kind == "sum":
        op = draw(st.sampled_from(["+", "-"]))
        return _join(draw, _group(sub(), SUM, draw), op, _group(sub(), PRODUCT, draw)), SUM
    if kind == "product":
        op = draw(st.sampled_from(["*", "/"]))
        return _join(draw, _group(sub(), PRODUCT, draw), op, _group(sub(), UNARY, draw)), PRODUCT
    if kind == "negative":
        return "-" + _group(sub(), UNARY, draw), UNARY
    if kind == "postfix":
        target = _group(sub(), POSTFIX, draw)
        if draw(st.booleans()):
            return f"{target}.{draw(st.sampled_from(('k', 'n', 'name')))}", POSTFIX
        return f"{target}[{sub()[0]}]", POSTFIX
    if kind == "list":
        items = [sub()[0] for _ in range(draw(st.integers(0, 3)))]
        trailing = "," if items and draw(st.booleans()) else ""
        return "[" + ", ".join(items) + trailing + "]", POSTFIX
    if kind == "has":
        return f"has({draw(references(variables))[0]})", POSTFIX
    if kind == "call":
        name = draw(st.sampled_from(_FUNCTION_NAMES))
        arity = len(FUNCTIONS[name].parameters)
        if draw(st.integers(0, 9)) == 0:  # the wrong number of arguments: an error, the same in both
            arity = draw(st.integers(0, 3))
        arguments = [sub()[0] for _ in range(arity)]
        if name == "matches" and arity == 2 and draw(st.integers(0, 3)) > 0:
            arguments[1] = f'"{draw(st.sampled_from(PATTERNS))}"'
        return f"{name}({', '.join(arguments)})", POSTFIX
    # a quantifier: the loop variable is visible in its body and condition only
    function = draw(st.sampled_from(["all", "any", "none", "count"]))
    variable = draw(st.sampled_from(LOOP_VARIABLES))
    inner = variables + (variable,) if variable not in variables else variables
    if draw(st.booleans()):
        iterable = draw(st.sampled_from(["args.xs", "args.ss", "args.obj", "lists.names", "lists.nums",
                                         "lists.mixed", "lists.empty", "[1, 2, 3]", "['a', 'é']"]))
    else:
        iterable = sub()[0]
    body = draw(expressions(inner, depth - 1))[0]
    text = _join(draw, f"{function}({body}", "for", variable, "in", iterable)
    if draw(st.booleans()):
        text = _join(draw, text, "if", draw(expressions(inner, depth - 1))[0])
    return text + ")", POSTFIX


def expression_texts(depth: int = 4) -> st.SearchStrategy[str]:
    """Well-formed expression text (always read without error under the default limits)."""
    return expressions((), depth).map(lambda piece: piece[0])


def boolean_expression_texts(depth: int = 4) -> st.SearchStrategy[str]:
    """Text whose top is a comparison, logical operator or quantifier: most often a boolean."""
    return st.one_of(
        expressions((), depth).filter(lambda piece: piece[1] <= COMPARISON).map(lambda piece: piece[0]),
        expression_texts(depth),
    )


# --- argument dicts ---------------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(-10**6, 10**6), st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10), st.sampled_from(["alice", "bob", "Zoë", "a", "ab", "", "12", "x@y.org"]),
    # a lone surrogate (JSON's "\ud800" reads as one) and an integer no float can hold
    st.sampled_from(["\ud800", "a\udfffb", 10**400, -(10**400)]),
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(["k", "a", "n", "name", "é"]), children, max_size=3)),
    max_leaves=8,
)

#: The kind each argument usually has, so that most evaluations get past the first operand.
_FITTING = {
    "n": st.one_of(st.integers(-100, 100), st.floats(-1e3, 1e3, allow_nan=False), st.just(10**400)),
    "m": st.integers(0, 10),
    "s": st.sampled_from(["alice", "bob", "Zoë", "a", "ab", "", "^a", "x@y.org", "http://h/p", "\ud800@x"]),
    "t": st.text(max_size=12),
    "b": st.booleans(),
    "xs": st.lists(st.integers(-5, 5), max_size=6),
    "ss": st.lists(st.sampled_from(["alice", "bob", "a", "é"]), max_size=6),
    "obj": st.dictionaries(st.sampled_from(["k", "a", "n", "name"]), st.one_of(st.integers(0, 3), st.text(max_size=3)),
                           max_size=3),
    "none": st.none(),
}


@st.composite
def argument_dicts(draw: Any) -> dict[str, Any]:
    """Arguments that sometimes lack a key and sometimes hold a value of the wrong kind."""
    out: dict[str, Any] = {}
    for name in ARG_NAMES:
        roll = draw(st.integers(0, 9))
        if roll == 0:
            continue  # missing
        out[name] = draw(JSON_VALUES) if roll == 1 else draw(_FITTING[name])
    return out


# --- comparing results ------------------------------------------------------------------------

def same_value(left: Any, right: Any) -> bool:
    """Equality that tells kinds apart (``True`` is not ``1``, ``1`` is not ``1.0``) and takes NaN as itself."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return (math.isnan(left) and math.isnan(right)) or left == right
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    return bool(left == right)


#: Fragments of the grammar's tokens, for text that is mostly not an expression at all.
TOKENS = ("(", ")", "[", "]", ",", ".", "==", "!=", "<=", ">=", "<", ">", "=", "in", "not in", "not", "and", "or",
          "+", "-", "*", "/", "for", "if", "all", "any", "none", "count", "has", "len", "matches", "lower",
          "args", "lists", "call", "norm", "x", "true", "null", "None", "1", "2.5", "1e3", "1e999", "9" * 30,
          '"s"', "'é'", '"\\u00e9"', '"\\q"', '"\\', "'", '"', "#c", "\n", " ", "\t", "\\", "@", "$", "\x00", "🙂")
