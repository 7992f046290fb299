"""The catalog services answer with typed results, not `dict[str, Any]` (issue 16).

An AST walk over the services whose answers the API and pages serve: a public module-level
function annotated to return `dict[str, Any]` (alone, optional, or inside a list, page or
tuple) fails, unless it is in NOT_YET_TYPED below with the reason it still returns a dict.
The catalog rows keep their typed list item and record only, not plain-dict twins of them.
"""

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from app.schemas.build import BuildListItem
from app.services.accelerators import AcceleratorRow
from app.services.build_rows import BuildRow
from app.services.measurements import MeasurementRow
from app.services.model_profiles import ModelProfileRow

SERVICES = Path(__file__).resolve().parents[2] / "app" / "services"
TYPED_SERVICES = (
    "builds",
    "build_rows",
    "accelerators",
    "model_profiles",
    "measurements",
    "tiers",
    "compare",
    "compare_rows",
    "estimates",
    "estimate_answers",
    "engine_runs",
    "specs",
    "listing",
    "serving",
    "serving_answers",
    "recommend",
    "recommend_slo",
)
# module.function -> why it still returns a dict. Shrink this list; never grow it.
NOT_YET_TYPED: dict[str, str] = {}


def untyped_returns(source: str) -> list[str]:
    """Public module-level functions whose return annotation mentions `dict[str, Any]`."""
    found = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        if node.returns is not None and "dict[str, Any]" in ast.unparse(node.returns):
            found.append(node.name)
    return found


def test_the_walk_finds_a_dict_answer_in_any_form() -> None:
    source = (
        "def a() -> dict[str, Any]: ...\n"
        "def b() -> ListResult[dict[str, Any]]: ...\n"
        "def c() -> dict[str, Any] | None: ...\n"
        "def _private() -> dict[str, Any]: ...\n"
        "def typed() -> BuildRead: ...\n"
    )
    assert untyped_returns(source) == ["a", "b", "c"]


@pytest.mark.parametrize("module", TYPED_SERVICES)
def test_public_service_functions_return_typed_results(module: str) -> None:
    source = (SERVICES / f"{module}.py").read_text()
    untyped = [f"{module}.{name}" for name in untyped_returns(source)]
    assert [name for name in untyped if name not in NOT_YET_TYPED] == []


def test_the_allow_list_names_only_functions_that_still_return_dicts() -> None:
    untyped = {
        f"{module}.{name}"
        for module in TYPED_SERVICES
        for name in untyped_returns((SERVICES / f"{module}.py").read_text())
    }
    assert set(NOT_YET_TYPED) <= untyped  # a stale entry would hide a regression


def dict_fields(row_type: type) -> list[str]:
    """The dataclass fields of a row type annotated as a plain dict."""
    return [
        f.name
        for f in dataclasses.fields(row_type)
        if str(f.type).startswith(("dict", "typing.Dict")) or f.type is dict
    ]


def test_the_dict_field_check_finds_a_dict_twin() -> None:
    @dataclasses.dataclass(frozen=True)
    class TwinRow:
        slug: str
        item: dict[str, Any]
        list_item: BuildListItem

    assert dict_fields(TwinRow) == ["item"]


@pytest.mark.parametrize("row_type", [BuildRow, AcceleratorRow, ModelProfileRow, MeasurementRow])
def test_catalog_rows_carry_typed_answers_not_dict_twins(row_type: type) -> None:
    names = {f.name for f in dataclasses.fields(row_type)}
    assert {"slug", "list_item", "record"} <= names
    assert dict_fields(row_type) == []
