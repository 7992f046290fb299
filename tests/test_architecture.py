"""The shape of `app/`: imports point one way (no cycles) and no module outgrows one concern.

The import graph is read from the source (every `import`, function-level ones included, since a
function-level import is how a cycle hides); imports under `if TYPE_CHECKING:` are annotations
only and never run, so they are left out.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
# A module past this many lines holds more than one concern (issue 16: "no module over ~300").
MAX_MODULE_LINES = 320
# SQLAlchemy's relationship pair names each side by string; the import back is for the type only.
ALLOWED_CYCLES = [frozenset({"app.models.accelerator", "app.models.build"})]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(APP.rglob("*.py"))}


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def imported_modules(name: str, source: str) -> set[str]:
    """The `app` modules one module imports when it runs."""
    tree = ast.parse(source)
    skip = _type_checking_nodes(tree)
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                # `from pkg import submodule` depends on the submodule, not the package facade.
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in MODULES else base)
    return {module for module in found if module in MODULES and module != name}


def import_graph() -> dict[str, set[str]]:
    """Each `app` module and the `app` modules it imports."""
    return {name: imported_modules(name, path.read_text()) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_sees_a_function_level_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]


def test_import_reader_counts_function_level_and_skips_type_checking() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from app.models.build import Build\n"
        "def f():\n    from app.engine import specs\n"
    )
    assert imported_modules("app.models.accelerator", source) == {"app.engine.specs"}


def test_app_has_no_import_cycles() -> None:
    found = [c for c in cycles(import_graph()) if c not in ALLOWED_CYCLES]
    assert found == [], [sorted(c) for c in found]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_holds_one_concern(name: str) -> None:
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines: split it by concern"
