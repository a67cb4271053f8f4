"""Tools from Python functions: signatures, type hints and docstrings → tool definitions.

Each function becomes a tool in the bare OpenAI shape ``{"name", "description",
"parameters"}``: its name (or ``@tool(name=...)``), the first paragraph of its docstring
(or ``@tool(description=...)``), and a JSON Schema 2020-12 object with one property per
parameter, typed from the parameter's hint (see :func:`hint_schema`), described from the
docstring's ``Args:`` / ``Parameters`` / ``:param:`` entries (``docstring_parser`` reads
Google, NumPy, reST and Epydoc alike), required unless it has a default.

**Safety.** Loading a ``.py`` path or a dotted module name *imports* it, and importing a
module runs its code, with this process's rights.  Load only files you would run.  A
module object or functions already imported are only inspected: nothing of theirs is
called or modified.

Choices made here:

* ``Optional[T]`` / ``T | None`` lets ``null`` through: ``{"type": [T, "null"]}`` when ``T``
  is a plain typed schema (an enum gains ``null`` as a member), else ``anyOf`` with
  ``{"type": "null"}``.  Whether the parameter is required depends only on its default.
* A description written in ``Annotated[T, "text"]`` wins over the docstring's: it sits on
  the parameter itself, where a docstring entry can drift from the signature.
* Recursive dataclasses and TypedDicts become ``$defs`` entries referenced with
  ``{"$ref": "#/$defs/<Name>"}`` (the JSON reader resolves them); pydantic models keep the
  ``$defs`` ``model_json_schema()`` gives them, moved to the tool's root.
* pydantic and annotated_types are never imported here: a class is a pydantic model only
  when pydantic is already loaded (a model's module imported it), and annotated_types
  constraints are recognised by their module and class names.
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import enum
import hashlib
import importlib
import importlib.util
import inspect
import math
import sys
import traceback
import types
import typing
from pathlib import Path
from typing import Any, Callable, Iterable

import attrs

from ..errors import LoaderError
from ..jsonvalues import json_type_of
from ..limits import DEFAULT_LIMITS, Limits

#: the attribute :func:`tool` sets on a function it marks (a :class:`ToolMark`)
TOOL_MARK_ATTRIBUTE = "__toolform_tool__"


@attrs.frozen
class PythonTools:
    """What :func:`read_python` found: ``entries`` as ``(where, tool definition)`` pairs (the definition in
    the bare OpenAI shape ``{"name", "description", "parameters"}``, its parameters JSON Schema 2020-12),
    the functions by tool name, and the source's name (a file path, a module name, ``<object>``)."""

    entries: list[tuple[str, dict[str, Any]]]
    executors: dict[str, Callable[..., Any]]
    source: str


@attrs.frozen
class ToolMark:
    """What ``@tool`` recorded on a function: the name and description that override its own."""

    name: str | None = None
    description: str | None = None


def tool(fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
         description: str | None = None) -> Any:
    """Mark a function as a tool (bare ``@tool`` or ``@tool(name=..., description=...)``).

    The function is returned unchanged (still callable); only an attribute is added.

    >>> @tool(name="add_numbers")
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> add(2, 3), getattr(add, TOOL_MARK_ATTRIBUTE).name
    (5, 'add_numbers')
    """
    def mark(target: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(target) or isinstance(target, type):
            raise TypeError(f"@tool marks a function, got {type(target).__name__}")
        setattr(target, TOOL_MARK_ATTRIBUTE, ToolMark(name=name, description=description))
        return target

    return mark if fn is None else mark(fn)


def tool_mark(fn: Any) -> ToolMark | None:
    """The :class:`ToolMark` ``@tool`` left on ``fn``, or ``None``.

    >>> tool_mark(len) is None
    True
    """
    mark = getattr(fn, TOOL_MARK_ATTRIBUTE, None)
    return mark if isinstance(mark, ToolMark) else None


# --- where the functions come from -------------------------------------------------------------

@attrs.frozen
class _Functions:
    """The functions found, the source's name, and the module they came from (if any)."""

    functions: list[Callable[..., Any]]
    source: str
    module: types.ModuleType | None


def read_python(obj: Any, *, only_decorated: bool | None = None, limits: Limits = DEFAULT_LIMITS) -> PythonTools:
    """The tools of a module object, a dotted module name, a ``.py`` path, a function or a list of functions.

    ``only_decorated``: only the functions marked with :func:`tool`; ``None`` means those
    when the module marks any, else every public function the module defines.  Raises
    :class:`LoaderError` naming the file, line, tool and parameter of what cannot be read.

    >>> def get_weather(city: str, days: int = 3) -> str:
    ...     '''The forecast.
    ...
    ...     Args:
    ...         city: Where.
    ...     '''
    ...     return city
    >>> found = read_python(get_weather)
    >>> where, entry = found.entries[0]
    >>> entry["parameters"]["properties"]["city"], entry["parameters"]["required"]
    ({'type': 'string', 'description': 'Where.'}, ['city'])
    >>> found.executors["get_weather"] is get_weather, found.source
    (True, '<object>')
    """
    found = _find_functions(obj, only_decorated)
    entries: list[tuple[str, dict[str, Any]]] = []
    executors: dict[str, Callable[..., Any]] = {}
    index = SourceIndex()
    for fn in found.functions:
        source = found.source if _defined_in_file(fn, found.module) else _source_file(fn)
        entry = function_tool(fn, source=source, limits=limits, index=index)
        if entry["name"] in executors:
            raise LoaderError(f"two functions are tools named {entry['name']!r}", source=source,
                              tool=entry["name"], line=index.def_line(fn))
        executors[entry["name"]] = fn
        entries.append((_where(fn), entry))
    return PythonTools(entries=entries, executors=executors, source=found.source)


def _defined_in_file(fn: Callable[..., Any], module: types.ModuleType | None) -> bool:
    """Whether ``fn`` was written in the file ``module`` was loaded from (errors then name that file as given)."""
    return module is not None and _source_file(fn) == getattr(module, "__file__", None)


def _where(fn: Callable[..., Any]) -> str:
    """The entry's place for the JSON reader's messages: the function's qualified name (no spaces)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "function"
    return "_".join(str(name).split())


def _find_functions(obj: Any, only_decorated: bool | None) -> _Functions:
    if isinstance(obj, types.ModuleType):
        return _module_functions(obj, getattr(obj, "__file__", None) or obj.__name__, only_decorated)
    if isinstance(obj, Path) or isinstance(obj, str) and obj.strip().lower().endswith(".py"):
        path = Path(obj.strip() if isinstance(obj, str) else obj)
        return _module_functions(_import_path(path), str(path), only_decorated)
    if isinstance(obj, str):
        module = _import_dotted(obj.strip())
        return _module_functions(module, getattr(module, "__file__", None) or module.__name__, only_decorated)
    if _is_function(obj):
        return _Functions(_keep_marked([obj], only_decorated is True), "<object>", None)
    if isinstance(obj, (list, tuple)) and all(_is_function(item) for item in obj):
        return _Functions(_keep_marked(list(obj), only_decorated is True), "<object>", None)
    raise LoaderError("Python tools come from a module, a dotted module name, a .py path, a function or a list of "
                      f"functions, got {type(obj).__name__}", source="<object>")


def _is_function(obj: Any) -> bool:
    return callable(obj) and not isinstance(obj, type)


def _keep_marked(functions: list[Callable[..., Any]], only_marked: bool) -> list[Callable[..., Any]]:
    return [fn for fn in functions if tool_mark(fn) is not None] if only_marked else functions


def _module_functions(module: types.ModuleType, source: str, only_decorated: bool | None) -> _Functions:
    """The functions ``module`` defines, in definition order (an alias counts once)."""
    defined: list[Callable[..., Any]] = []
    for name, value in list(vars(module).items()):
        if (inspect.isfunction(value) and value.__module__ == module.__name__
                and all(value is not seen for seen in defined)
                and (not name.startswith("_") or tool_mark(value) is not None)):
            defined.append(value)
    marked = [fn for fn in defined if tool_mark(fn) is not None]
    use_marked = bool(marked) if only_decorated is None else only_decorated
    chosen = marked if use_marked else [fn for fn in defined if not fn.__name__.startswith("_")]
    return _Functions(chosen, source, module)


def _import_path(path: Path) -> types.ModuleType:
    """Import the file at ``path`` under a name of its own, registered in ``sys.modules``.

    The registration is what dataclasses and ``typing.get_type_hints`` need to resolve the
    module's names; the name is derived from the resolved path, so loading the same file
    again re-runs it in place of the previous copy.
    """
    try:
        if not path.is_file():
            raise LoaderError("no such file", source=str(path))
        resolved = path.resolve()
    except (OSError, ValueError) as err:
        raise LoaderError(f"cannot read the file: {err}", source=str(path)) from None
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = "".join(c if c.isalnum() else "_" for c in resolved.stem)
    name = f"toolform_rules_python_tools_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise LoaderError("cannot import the file as a Python module", source=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as err:  # the module's own code failed: report it, located
        sys.modules.pop(name, None)
        raise _import_error(err, str(path), str(resolved)) from None
    return module


def _import_dotted(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as err:
        origin = _module_origin(name)
        raise _import_error(err, origin or name, origin or "") from None


def _module_origin(name: str) -> str | None:
    """The file a dotted module name would be imported from, when it can be found."""
    try:
        spec = importlib.util.find_spec(name)
    except (Exception, SystemExit):  # finding it imports the parents, which may fail again
        return None
    return spec.origin if spec is not None else None


def _import_error(err: BaseException, source: str, filename: str) -> LoaderError:
    """A failed import as a :class:`LoaderError`: the exception's type and text, and its line in the file."""
    if isinstance(err, SyntaxError):
        same_file = not err.filename or err.filename == filename
        return LoaderError(f"the module does not parse: {err.msg}", source=source if same_file else err.filename,
                           line=err.lineno, column=err.offset)
    if isinstance(err, ModuleNotFoundError) and err.name == source:
        return LoaderError("no such module", source=source)
    line = None
    for frame in traceback.extract_tb(err.__traceback__):
        if filename and frame.filename == filename:
            line = frame.lineno
    return LoaderError(f"importing the module raised {type(err).__name__}: {err}", source=source, line=line)


# --- one function → one tool ------------------------------------------------------------------

def function_tool(fn: Callable[..., Any], *, source: str | None = None, limits: Limits = DEFAULT_LIMITS,
                  index: SourceIndex | None = None) -> dict[str, Any]:
    """One function's tool definition (bare OpenAI shape); ``source`` names its file in errors (default: the
    file its code says); ``index``: the source files already parsed (for the lines errors name).

    >>> def ping(host: str, count: int = 4):
    ...     '''Ping a host.'''
    >>> function_tool(ping)["parameters"]["properties"]["count"]
    {'type': 'integer', 'default': 4}
    """
    mark = tool_mark(fn) or ToolMark()
    name = mark.name or getattr(fn, "__name__", None) or "function"
    docs = _Docstring.of(fn)
    index = index or SourceIndex()
    place = _Place(source=source or _source_file(fn), tool=name, line=index.def_line(fn), limits=limits)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as err:
        raise place.fail(f"no signature can be read: {err}", None) from None
    lines = index.parameter_lines(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    builder = _SchemaBuilder(place)
    for parameter in signature.parameters.values():
        at = place.at_parameter(parameter.name, lines.get(parameter.name))
        _check_kind(parameter, at)
        schema = builder.parameter_schema(parameter, fn, at)
        description = _annotated_description(parameter.annotation) or docs.parameters.get(parameter.name)
        if description:
            schema["description"] = description
        properties[parameter.name] = schema
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    if builder.definitions:
        parameters["$defs"] = builder.definitions
    return {"name": name, "description": mark.description or docs.summary, "parameters": parameters}


@attrs.frozen
class _Place:
    """Where an error is: the file, the tool, the line, the JSON path; and the limits in force."""

    source: str
    tool: str
    line: int | None
    limits: Limits
    path: str = "parameters"

    def at_parameter(self, name: str, line: int | None) -> _Place:
        return attrs.evolve(self, path=f"parameters.properties.{name}", line=line or self.line)

    def fail(self, message: str, path: str | None) -> LoaderError:
        return LoaderError(message, source=self.source, tool=self.tool, path=path, line=self.line)


def _check_kind(parameter: inspect.Parameter, at: _Place) -> None:
    """Refuse parameters a call's named arguments cannot fill."""
    refused = {
        inspect.Parameter.VAR_POSITIONAL: f"*{parameter.name} cannot be given as a named argument",
        inspect.Parameter.VAR_KEYWORD: f"**{parameter.name} has no schema: its keys are unknown",
        inspect.Parameter.POSITIONAL_ONLY: f"{parameter.name} is positional-only; a tool's arguments are named",
    }
    if parameter.kind in refused:
        raise at.fail(refused[parameter.kind], at.path)


def _source_file(fn: Callable[..., Any]) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return code.co_filename if code is not None else "<object>"


class SourceIndex:
    """The ``def`` of each function in the source files read so far, each file parsed once (``linecache`` gives
    the text, so functions written in a doctest or a notebook cell are found too), by the line where the
    function's code begins (its first decorator's, else its ``def``'s)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[int, ast.FunctionDef | ast.AsyncFunctionDef]] = {}

    def node(self, fn: Callable[..., Any]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        code = getattr(inspect.unwrap(fn), "__code__", None)
        if code is None:
            return None
        nodes = self.files.get(code.co_filename)
        if nodes is None:
            nodes = self.files[code.co_filename] = self._functions(code.co_filename)
        return nodes.get(code.co_firstlineno)

    @staticmethod
    def _functions(filename: str) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
        import linecache

        linecache.checkcache(filename)  # (a file loaded again may have changed since)
        try:
            tree = ast.parse("".join(linecache.getlines(filename)))
        except (SyntaxError, ValueError):
            return {}
        out: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[min([node.lineno, *(d.lineno for d in node.decorator_list)])] = node
        return out

    def def_line(self, fn: Callable[..., Any]) -> int | None:
        """The line of ``def`` (after any decorators), else the code object's first line."""
        node = self.node(fn)
        if node is not None:
            return node.lineno
        code = getattr(inspect.unwrap(fn), "__code__", None)
        return code.co_firstlineno if code is not None else None

    def parameter_lines(self, fn: Callable[..., Any]) -> dict[str, int]:
        """Each parameter's line in the file (where its name is written), when the source is readable."""
        node = self.node(fn)
        if node is None:
            return {}
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                 *(a for a in (args.vararg, args.kwarg) if a is not None)]
        return {arg.arg: arg.lineno for arg in every}


# --- docstrings --------------------------------------------------------------------------------

@attrs.frozen
class _Docstring:
    """A docstring's first paragraph (whitespace-normalised) and its parameters' descriptions."""

    summary: str
    parameters: dict[str, str]

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> _Docstring:
        text = inspect.getdoc(fn) or ""
        if not text.strip():
            return cls("", {})
        import docstring_parser

        try:
            parsed = docstring_parser.parse(text)
        except docstring_parser.ParseError:  # malformed sections: keep the first paragraph only
            return cls(_first_paragraph(text), {})
        head = parsed.short_description or ""
        if parsed.long_description:
            head += ("\n\n" if parsed.blank_after_short_description else "\n") + parsed.long_description
        described = {p.arg_name.lstrip("*"): _normalise(p.description) for p in parsed.params if p.description}
        return cls(_first_paragraph(head), described)


def _first_paragraph(text: str) -> str:
    lines: list[str] = []
    for line in text.strip().splitlines():
        if not line.strip():
            break
        lines.append(line)
    return _normalise(" ".join(lines))


def _normalise(text: str | None) -> str:
    return " ".join((text or "").split())


def _annotated_description(hint: Any) -> str | None:
    """The first string in a top-level ``Annotated[T, ...]``'s metadata (a raw string hint is not read)."""
    if typing.get_origin(hint) is typing.Annotated:
        return next((_normalise(m) for m in hint.__metadata__ if isinstance(m, str)), None)
    return None


# --- type hints → JSON Schema ------------------------------------------------------------------

class _SchemaBuilder:
    """Turns one tool's hints into schemas; collects ``$defs`` for recursive and pydantic types."""

    def __init__(self, place: _Place) -> None:
        self.place = place
        self.definitions: dict[str, Any] = {}
        self.def_names: dict[Any, str] = {}  # class → its key in definitions
        self.open_classes: list[Any] = []  # the classes being expanded (a cycle refers back to one)
        self.referenced: set[str] = set()

    def fail(self, message: str, path: str) -> LoaderError:
        return self.place.fail(message, path)

    def parameter_schema(self, parameter: inspect.Parameter, fn: Callable[..., Any], at: _Place) -> dict[str, Any]:
        self.place = at
        if parameter.annotation is inspect.Parameter.empty:
            schema: dict[str, Any] = {}
        else:
            hint = self.resolve(parameter.name, parameter.annotation, inspect.unwrap(fn))
            schema = self.schema(hint, at.path, 0)
        if parameter.default is not inspect.Parameter.empty:
            expressible, value = json_value(parameter.default, self.place.limits.max_depth)
            if expressible:
                schema["default"] = value
        return schema

    def resolve(self, name: str, annotation: Any, fn: Any) -> Any:
        """The hint ``annotation`` means, forward references resolved in ``fn``'s module."""
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            return typing.get_type_hints(holder, globalns=getattr(fn, "__globals__", {}), include_extras=True)[name]
        except NameError as err:
            raise self.fail(f"the hint {annotation!r} names something undefined ({err})", self.place.path) from None
        except Exception as err:  # a string hint that does not parse, an invalid subscript, ...
            raise self.fail(f"the hint {annotation!r} cannot be evaluated: {type(err).__name__}: {err}",
                            self.place.path) from None

    def class_hints(self, cls: Any, path: str) -> dict[str, Any]:
        try:
            return typing.get_type_hints(cls, include_extras=True)
        except NameError as err:
            raise self.fail(f"a field of {cls.__qualname__} names something undefined ({err})", path) from None
        except Exception as err:
            raise self.fail(f"the fields of {cls.__qualname__} cannot be evaluated: {type(err).__name__}: {err}",
                            path) from None

    def schema(self, hint: Any, path: str, depth: int) -> dict[str, Any]:
        if depth > self.place.limits.max_depth:
            raise self.fail(f"the type is nested deeper than {self.place.limits.max_depth} levels", path)
        for applies, convert in HINT_FAMILIES:
            if applies(hint):
                return convert(self, hint, path, depth)
        raise self.fail(f"the hint {_hint_name(hint)} has no JSON Schema form (use str, int, float, bool, None, "
                        "lists, tuples, sets, dict[str, T], Literal, Enum, unions, TypedDict, dataclasses or "
                        "pydantic models)", path)

    def class_schema(self, cls: Any, path: str, depth: int, expand: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """A class's schema inline, or a ``$ref`` to ``$defs`` when the class refers to itself."""
        key = self.def_names.get(cls)
        if key is not None and (cls in self.open_classes or key in self.definitions):
            self.referenced.add(key)
            return {"$ref": f"#/$defs/{key}"}
        key = self.def_name(cls)
        self.open_classes.append(cls)
        try:
            schema = expand()
        finally:
            self.open_classes.pop()
        if key in self.referenced:
            self.definitions[key] = schema
            return {"$ref": f"#/$defs/{key}"}
        del self.def_names[cls]  # expanded inline: a later use expands it again
        return schema

    def def_name(self, cls: Any) -> str:
        base = "".join(c if c.isalnum() or c in "_-." else "_" for c in getattr(cls, "__qualname__", "Type"))
        key, n = base, 1
        taken = set(self.def_names.values()) | set(self.definitions)
        while key in taken:
            n += 1
            key = f"{base}_{n}"
        self.def_names[cls] = key
        return key

    def add_definitions(self, found: dict[str, Any], path: str) -> None:
        for key, schema in found.items():
            if key in self.definitions and self.definitions[key] != schema:
                raise self.fail(f"two different types are both named {key!r} in $defs", path)
            self.definitions[key] = schema


def _hint_name(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__qualname__
    return repr(hint).replace("typing.", "")


# Each family: (whether a hint belongs to it, how it becomes a schema).  The first that applies wins.

def _is_any(hint: Any) -> bool:
    return hint is typing.Any or hint is object


def _any_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    return {}


_SCALAR_TYPES: tuple[tuple[Any, str], ...] = (
    (str, "string"), (int, "integer"), (float, "number"), (bool, "boolean"), (type(None), "null"), (None, "null"))


def _scalar_type(hint: Any) -> str | None:
    # by identity: bool is an int, and a subclass of str (an Enum) is no plain string
    return next((name for python_type, name in _SCALAR_TYPES if hint is python_type), None)


def _is_scalar(hint: Any) -> bool:
    return _scalar_type(hint) is not None


def _scalar_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    return {"type": _scalar_type(hint)}


def _is_annotated(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.Annotated


def _annotated_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    schema = builder.schema(hint.__origin__, path, depth + 1)
    for item in hint.__metadata__:
        if isinstance(item, str):
            schema.setdefault("description", _normalise(item))
        else:
            for constraint in _constraints(item):
                _apply_constraint(builder, schema, constraint, path)
    return schema


def _constraints(item: Any) -> list[Any]:
    """An annotated_types object as single constraints (``Interval`` and ``Len`` group several)."""
    if type(item).__module__ != "annotated_types":
        return []
    if type(item).__name__ in ("Interval", "Len"):
        return list(item)  # GroupedMetadata: iterating yields Ge/Gt/Le/Lt or MinLen/MaxLen
    return [item]


_BOUNDS = {"Ge": ("ge", "minimum"), "Gt": ("gt", "exclusiveMinimum"), "Le": ("le", "maximum"),
           "Lt": ("lt", "exclusiveMaximum"), "MultipleOf": ("multiple_of", "multipleOf")}
_LENGTHS = {"MinLen": ("min_length", "min"), "MaxLen": ("max_length", "max")}
_COUNT_KEYWORDS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
                   "object": ("minProperties", "maxProperties")}


def _apply_constraint(builder: _SchemaBuilder, schema: dict[str, Any], constraint: Any, path: str) -> None:
    kind = type(constraint).__name__
    if kind in _BOUNDS:
        attribute, keyword = _BOUNDS[kind]
        value = getattr(constraint, attribute)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise builder.fail(f"{kind}({value!r}) is not a finite number", path)
        schema[keyword] = value
    elif kind in _LENGTHS:
        attribute, end = _LENGTHS[kind]
        declared = schema.get("type")
        types_ = declared if isinstance(declared, list) else [declared]
        counted = [t for t in types_ if t in _COUNT_KEYWORDS]
        if not counted:
            raise builder.fail(f"{kind} constrains a length, but the type is not a str, list or dict", path)
        for name in counted:
            schema[_COUNT_KEYWORDS[name][0 if end == "min" else 1]] = getattr(constraint, attribute)


def _is_literal(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.Literal


def _literal_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    members: list[Any] = []
    for member in typing.get_args(hint):
        expressible, value = json_value(member, 2)
        if not expressible or isinstance(value, (list, dict)):
            raise builder.fail(f"the Literal member {member!r} is not a JSON scalar", path)
        members.append(value)
    return _enum_schema_of(members)


def _enum_schema_of(members: list[Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    kinds = {json_type_of(m) for m in members}
    if len(kinds) == 1:
        schema["type"] = kinds.pop()
    schema["enum"] = members
    return schema


def _is_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, enum.Enum)


def _enum_class_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    members: list[Any] = []
    for member in hint:
        expressible, value = json_value(member.value, builder.place.limits.max_depth)
        if not expressible:
            raise builder.fail(f"{hint.__qualname__}.{member.name}'s value {member.value!r} is not JSON", path)
        members.append(value)
    if not members:
        raise builder.fail(f"the enum {hint.__qualname__} has no members", path)
    return _enum_schema_of(members)


_ARRAY_ORIGINS = (list, collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Iterable,
                  collections.abc.Collection)
_SET_ORIGINS = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
_DICT_ORIGINS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _origin(hint: Any) -> Any:
    """``list`` for ``list[int]``, ``List[int]``, ``List`` and ``list`` alike."""
    return typing.get_origin(hint) or (hint if isinstance(hint, type) else None)


def _is_array(hint: Any) -> bool:
    return _origin(hint) in _ARRAY_ORIGINS


def _array_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    args = typing.get_args(hint)
    schema: dict[str, Any] = {"type": "array"}
    if args:
        schema["items"] = builder.schema(args[0], f"{path}.items", depth + 1)
    return schema


def _is_set(hint: Any) -> bool:
    return _origin(hint) in _SET_ORIGINS


def _set_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    schema = _array_schema(builder, hint, path, depth)
    schema["uniqueItems"] = True
    return schema


def _is_tuple(hint: Any) -> bool:
    return _origin(hint) is tuple and not hasattr(hint, "_fields")  # a NamedTuple is a plain class here


def _tuple_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    args = typing.get_args(hint)
    schema: dict[str, Any] = {"type": "array"}
    if len(args) == 2 and args[1] is Ellipsis:
        schema["items"] = builder.schema(args[0], f"{path}.items", depth + 1)
    elif args == ((),):  # Tuple[()] is the empty tuple
        schema["maxItems"] = 0
    elif args:
        schema["prefixItems"] = [builder.schema(arg, f"{path}.prefixItems[{i}]", depth + 1)
                                 for i, arg in enumerate(args)]
        schema["minItems"] = schema["maxItems"] = len(args)
    return schema


def _is_dict(hint: Any) -> bool:
    return _origin(hint) in _DICT_ORIGINS and not typing.is_typeddict(hint)


def _dict_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    args = typing.get_args(hint)
    schema: dict[str, Any] = {"type": "object"}
    if args:
        key = args[0]
        if typing.get_origin(key) is typing.Annotated:
            key = key.__origin__
        if key is not str:
            raise builder.fail(f"{_hint_name(hint)} has {_hint_name(args[0])} keys, but JSON object keys are "
                               "strings (use dict[str, ...])", path)
        schema["additionalProperties"] = builder.schema(args[1], f"{path}.additionalProperties", depth + 1)
    return schema


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _union_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    members = typing.get_args(hint)
    nullable = type(None) in members
    branches = [builder.schema(m, f"{path}.anyOf[{i}]", depth + 1)
                for i, m in enumerate(m for m in members if m is not type(None))]
    if any(branch == {} for branch in branches):
        return {}  # Any in a union accepts every value already
    if all(set(branch) == {"type"} and isinstance(branch["type"], str) for branch in branches):
        names = list(dict.fromkeys(branch["type"] for branch in branches)) + (["null"] if nullable else [])
        return {"type": names[0] if len(names) == 1 else names}
    if len(branches) == 1 and nullable:
        return _with_null(branches[0])
    return {"anyOf": branches + ([{"type": "null"}] if nullable else [])}


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null``: in its type list (and enum) when it has one, else through anyOf."""
    declared = schema.get("type")
    if isinstance(declared, str) and "$ref" not in schema and "const" not in schema:
        out = dict(schema, type=[declared, "null"])
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


def _is_typeddict(hint: Any) -> bool:
    return typing.is_typeddict(hint)


def _typeddict_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    def expand() -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, field_hint in builder.class_hints(hint, path).items():
            # under ``from __future__ import annotations`` Python 3.11 leaves Required/NotRequired out of
            # __required_keys__ (the strings are not looked into): the hint's own wrapper decides
            is_required = name in hint.__required_keys__
            while typing.get_origin(field_hint) in (typing.Required, typing.NotRequired):
                is_required = typing.get_origin(field_hint) is typing.Required
                field_hint = typing.get_args(field_hint)[0]
            properties[name] = builder.schema(field_hint, f"{path}.properties.{name}", depth + 1)
            if is_required:
                required.append(name)
        return _object_schema(properties, required)

    return builder.class_schema(hint, path, depth, expand)


def _object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _is_dataclass(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _dataclass_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    def expand() -> dict[str, Any]:
        hints = builder.class_hints(hint, path)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in dataclasses.fields(hint):
            if not field.init:
                continue
            field_path = f"{path}.properties.{field.name}"
            schema = builder.schema(hints.get(field.name, typing.Any), field_path, depth + 1)
            if field.default is not dataclasses.MISSING:
                expressible, value = json_value(field.default, builder.place.limits.max_depth)
                if expressible:
                    schema["default"] = value
            elif field.default_factory is dataclasses.MISSING:
                required.append(field.name)
            properties[field.name] = schema
        return _object_schema(properties, required)

    return builder.class_schema(hint, path, depth, expand)


def _pydantic_base() -> Any:
    """pydantic's ``BaseModel`` when pydantic is loaded, else ``None``.

    A pydantic model's module imported pydantic before the model existed, so looking in
    ``sys.modules`` finds every model without ever importing pydantic ourselves.
    """
    pydantic = sys.modules.get("pydantic")
    return getattr(pydantic, "BaseModel", None) if pydantic is not None else None


def _is_pydantic_model(hint: Any) -> bool:
    base = _pydantic_base()
    return base is not None and isinstance(hint, type) and issubclass(hint, base)


def _pydantic_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    try:
        schema = hint.model_json_schema()
    except Exception as err:  # the model's own schema generation refused a field
        raise builder.fail(f"pydantic gives no JSON Schema for {hint.__qualname__}: {err}", path) from None
    builder.add_definitions(schema.pop("$defs", {}), path)
    return dict(schema)


def _is_new_type(hint: Any) -> bool:
    return isinstance(hint, typing.NewType)


def _new_type_schema(builder: _SchemaBuilder, hint: Any, path: str, depth: int) -> dict[str, Any]:
    return builder.schema(hint.__supertype__, path, depth + 1)


#: the hint families, in the order they are tried (Annotated and unions before the classes they hold;
#: Enum and TypedDict before the generic containers their bases are)
HINT_FAMILIES: tuple[tuple[Callable[[Any], bool], Callable[[_SchemaBuilder, Any, str, int], dict[str, Any]]], ...] = (
    (_is_annotated, _annotated_schema),
    (_is_any, _any_schema),
    (_is_scalar, _scalar_schema),
    (_is_literal, _literal_schema),
    (_is_union, _union_schema),
    (_is_enum, _enum_class_schema),
    (_is_typeddict, _typeddict_schema),
    (_is_pydantic_model, _pydantic_schema),
    (_is_dataclass, _dataclass_schema),
    (_is_new_type, _new_type_schema),
    (_is_tuple, _tuple_schema),
    (_is_set, _set_schema),
    (_is_dict, _dict_schema),
    (_is_array, _array_schema),
)


# --- defaults → JSON ---------------------------------------------------------------------------

def json_value(value: Any, max_depth: int) -> tuple[bool, Any]:
    """``(True, value as JSON)`` when ``value`` has a JSON form (tuples and sets → lists, enums → their
    values), else ``(False, None)``.

    >>> json_value((1, {2}), 8), json_value(object(), 8)[0], json_value(float("nan"), 8)[0]
    ((True, [1, [2]]), False, False)
    """
    return _json_value(value, max_depth, 0)


def _json_value(value: Any, max_depth: int, depth: int) -> tuple[bool, Any]:
    if depth > max_depth:
        return False, None
    if isinstance(value, enum.Enum):
        return _json_value(value.value, max_depth, depth + 1)
    if value is None or isinstance(value, (bool, int, str)):
        return True, value
    if isinstance(value, float):
        return (True, value) if math.isfinite(value) else (False, None)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = _ordered(value)
        converted = [_json_value(item, max_depth, depth + 1) for item in items]
        return (True, [v for _, v in converted]) if all(ok for ok, _ in converted) else (False, None)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        pairs = {k: _json_value(v, max_depth, depth + 1) for k, v in value.items()}
        return (True, {k: v for k, (_, v) in pairs.items()}) if all(ok for ok, _ in pairs.values()) else (False, None)
    return False, None


def _ordered(items: Iterable[Any]) -> list[Any]:
    """A set's members in a stable order (sorted when they compare), other sequences as they are."""
    if isinstance(items, (set, frozenset)):
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=repr)
    return list(items)
