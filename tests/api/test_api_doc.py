"""docs/api.md is checked against /openapi.json: every public operation, parameter and field of
every request and response schema is named in it (the admin API has its own contract notes)."""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


@pytest.fixture(scope="module")
def spec(api: Any) -> dict[str, Any]:
    return api.get("/openapi.json").json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def doc() -> str:
    return API_DOC.read_text(encoding="utf-8")


def public_operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        if "/admin" not in path:
            for method, op in item.items():
                yield path, method, op


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def schemas_used(spec: dict[str, Any]) -> set[str]:
    """Every component schema a public request body or success answer reaches."""
    components = spec["components"]["schemas"]
    pending = []
    for _, _, op in public_operations(spec):
        pending += list(_refs(op.get("requestBody", {})))
        for status, answer in op["responses"].items():
            if status.startswith("2"):
                pending += list(_refs(answer))
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending += list(_refs(components[name]))
    return seen


def _named(doc: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", doc) is not None


def test_every_public_operation_is_documented_by_its_operation_id(spec, doc):
    missing = [op["operationId"] for _, _, op in public_operations(spec)]
    missing = [op_id for op_id in missing if not _named(doc, op_id)]
    assert not missing, f"docs/api.md does not name these operations: {missing}"


def test_every_public_path_is_documented(spec, doc):
    missing = [path for path, _, _ in public_operations(spec) if path.rsplit("/", 1)[-1] not in doc]
    assert not missing, f"docs/api.md does not show these paths: {missing}"


def test_every_query_parameter_is_documented(spec, doc):
    missing = sorted(
        {
            f"{path}?{param['name']}"
            for path, _, op in public_operations(spec)
            for param in op.get("parameters", [])
            if not _named(doc, param["name"])
        }
    )
    assert not missing, f"docs/api.md does not name these parameters: {missing}"


def test_every_field_of_every_request_and_answer_schema_is_documented(spec, doc):
    components = spec["components"]["schemas"]
    missing = sorted(
        f"{name}.{field}"
        for name in schemas_used(spec)
        for field in components[name].get("properties", {})
        if not _named(doc, field)
    )
    assert not missing, f"docs/api.md does not name these fields: {missing}"


def test_the_check_finds_an_undocumented_field(spec):
    """The walk reaches nested answer parts, so an undocumented nested field would be caught."""
    used = schemas_used(spec)
    assert {"EstimateOut", "PlanOut", "BuildPage", "ServingOut"} <= used
    assert not _named("`per_page`, `page`", "next_url")
