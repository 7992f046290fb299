"""The app uses only public, documented FastAPI and Starlette APIs.

Private (`_`-prefixed) names change without notice between releases, and a missing one can fail
silently (a fast path that skips dependencies). This walks every module of `app/` and fails on a
private framework module, an imported private name, an attribute read of a private name off a
framework module, a `getattr(…, "_…")` on one, or one of the undocumented internals that earlier
versions of this code leaned on.
"""

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"
FRAMEWORKS = ("fastapi", "starlette")
# Public in the sense of "no underscore", but undocumented machinery of FastAPI's routing.
UNDOCUMENTED = frozenset(
    {"iter_route_contexts", "ModelField", "Dependant", "get_request_handler", "solve_dependencies"}
)


def _is_framework(module: str) -> bool:
    return module.split(".")[0] in FRAMEWORKS


def _private_parts(dotted: str) -> list[str]:
    return [part for part in dotted.split(".") if part.startswith("_") and part != "__init__"]


def _attribute_chain(node: ast.AST) -> list[str]:
    """`a.b.c` as ["a", "b", "c"]; [] for anything that is not a plain attribute chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not parts or not isinstance(node, ast.Name):
        return []
    return [node.id, *reversed(parts)]


def framework_misuses(source: str) -> list[str]:
    """Each use of a private or undocumented framework name in one module's source."""
    tree = ast.parse(source)
    framework_aliases: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_framework(alias.name):
                    framework_aliases.add((alias.asname or alias.name).split(".")[0])
                    found += [f"import {alias.name}" for _ in _private_parts(alias.name)[:1]]
        elif isinstance(node, ast.ImportFrom) and node.module and _is_framework(node.module):
            if _private_parts(node.module):
                found.append(f"from {node.module} import …")
            for alias in node.names:
                if alias.name.startswith("_") or alias.name in UNDOCUMENTED:
                    found.append(f"from {node.module} import {alias.name}")
                elif alias.asname is None:
                    framework_aliases.add(alias.name)
                else:
                    framework_aliases.add(alias.asname)
    for node in ast.walk(tree):
        chain = _attribute_chain(node)
        if chain and chain[0] in framework_aliases and (
            node.attr.startswith("_") or node.attr in UNDOCUMENTED  # type: ignore[attr-defined]
        ):
            found.append(".".join(chain))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in framework_aliases
            and isinstance(node.args[1], ast.Constant)
            and str(node.args[1].value).startswith("_")
        ):
            found.append(f"getattr({node.args[0].id}, {node.args[1].value!r})")
    return found


@pytest.mark.parametrize(
    "snippet",
    [
        "from fastapi.routing import iter_route_contexts",
        "from fastapi._compat import ModelField",
        "from fastapi import routing as r\nx = getattr(r, '_effective_route_context_var')",
        "import starlette.routing\nstarlette.routing._x",
        "from starlette.routing import _private",
    ],
)
def test_the_check_catches_private_uses(snippet: str) -> None:
    assert framework_misuses(snippet)


def test_public_uses_pass_the_check() -> None:
    source = "from fastapi import APIRouter, Request\nfrom starlette.routing import Match, Mount\n"
    assert framework_misuses(source) == []


def test_app_uses_no_private_framework_names() -> None:
    offenders = {
        str(path.relative_to(APP.parent)): misuses
        for path in sorted(APP.rglob("*.py"))
        if (misuses := framework_misuses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
