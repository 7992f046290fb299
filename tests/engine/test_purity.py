"""The engine is pure: standard library and its own modules only, imported without cycles."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "app" / "engine"
MODULES = sorted(ENGINE.glob("*.py"))


def _imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in an engine module, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                out.append((node.module or "", node.lineno))
            elif node.module:  # `from .x import y` inside app/engine
                out.append((f"app.engine.{node.module}", node.lineno))
            else:  # `from . import x`: the package facade
                out.append(("app.engine", node.lineno))
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_imports_only_the_standard_library_and_itself(path: Path) -> None:
    for name, line in _imports(path):
        allowed = name.split(".")[0] in sys.stdlib_module_names or name.startswith("app.engine.")
        assert allowed, f"{path.name}:{line} imports {name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_import_each_other_by_module_path_not_the_facade(path: Path) -> None:
    if path.name == "__init__.py":
        return
    facade = [line for name, line in _imports(path) if name == "app.engine"]
    assert not facade, f"{path.name} imports the app.engine package at lines {facade}"


def test_engine_modules_import_no_cycle() -> None:
    graph = {
        f"app.engine.{p.stem}": {
            name for name, _ in _imports(p) if name.startswith("app.engine.")
        }
        for p in MODULES
        if p.name != "__init__.py"
    }
    visiting: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> None:
        if module in done:
            return
        assert module not in visiting, " -> ".join([*visiting[visiting.index(module):], module])
        visiting.append(module)
        for target in sorted(graph.get(module, ())):
            visit(target)
        visiting.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
