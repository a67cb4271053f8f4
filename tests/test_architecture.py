"""The package's layout shows its architecture, and no module imports itself through others.

Every import counts, those inside functions too (an import deferred to keep start-up fast
is still a dependency); imports under ``if TYPE_CHECKING:`` are left out here (``import_graph(type_checking=True)``
counts them: issue 29 asks for no cycle even through them, docs/architecture.md says what is left).  An edge to a package is an edge to its ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import toolform_rules

PACKAGE = Path(toolform_rules.__file__).resolve().parent
NAME = "toolform_rules"


def _module_name(path: Path) -> str:
    parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, type_checking: bool = False) -> list[ast.ImportFrom | ast.Import]:
    found: list[ast.ImportFrom | ast.Import] = []

    def visit(node: ast.AST) -> None:
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """module -> the package's modules it imports (also under ``TYPE_CHECKING`` when asked)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), type_checking):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                submodules = [f"{origin}.{alias.name}" for alias in node.names]
                # "from package import module" needs the module; the package is already on its way in
                targets = submodules if all(m in modules for m in submodules) else [origin] + submodules
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strongconnect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                strongconnect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)
    return out


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_layout_shows_the_flow_from_reply_text_to_report() -> None:
    subpackages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert subpackages == ["batch", "cli", "engine", "guard", "loop", "policy", "replies", "schema"]
    graph = import_graph()

    def edges(source: str, *targets: str) -> set[str]:
        return {t for m in graph if m.startswith(f"{NAME}.{source}") for t in graph[m]
                if t.startswith(tuple(f"{NAME}.{target}" for target in targets))}

    # the schema side is read by the engine, never the other way round
    assert not edges("schema", "engine", "policy", "replies")
    # the engine applies rules; replies are read before it
    assert not edges("engine", "replies", "loop", "batch", "cli")
    # the clients know nothing of the loop that uses them, the engine or the reply formats
    assert not edges("loop.clients", "loop.call_loop", "engine", "replies.formats")
    # batches run the library's verbs; only the command line runs batches
    batch = {m for m in graph if m.startswith(f"{NAME}.batch")}
    assert {m for m in graph if m not in batch and any(t in batch for t in graph[m])} <= {
        m for m in graph if m.startswith(f"{NAME}.cli")}
