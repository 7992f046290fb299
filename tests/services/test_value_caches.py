"""Caches keyed by value: engine results and chart SVGs survive catalog edits that leave their
inputs unchanged, and are recomputed exactly when an input changes."""

from typing import Any

import pytest
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.services import engine_runs as runs_module
from app.services.catalog import export_document, import_document
from app.services.tiers import tier_line
from app.web.charts import catalog

from ..engine.shapes import LLAMA_8B as _CONFIG


@pytest.fixture
def engine_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every engine evaluation as (build name, model name), from an empty value cache."""
    runs: list[tuple[str, str]] = []
    real = runs_module.estimate

    def counting(build: Any, model: Any, workload: Any, costs: Any, **options: Any) -> Any:
        runs.append((build.name, model.name))
        return real(build, model, workload, costs, **options)

    monkeypatch.setattr(runs_module, "estimate", counting)
    runs_module.ENGINE_RESULTS.clear()
    return runs


def _edit_build(session: Session, slug: str, **changes: Any) -> None:
    build = next(b for b in export_document(session)["builds"] if b["slug"] == slug)
    build.update(changes)
    result = import_document(session, {"builds": [build]}, actor="test")
    assert result.ok and result.updated, result.errors


def test_engine_results_survive_an_edit_that_leaves_the_specs_alone(
    session: Session, engine_runs: list[tuple[str, str]]
) -> None:
    first = tier_line(session)
    assert engine_runs  # the sweep ran the engine
    version = current_catalog_version(session)

    engine_runs.clear()
    _edit_build(session, "2x-dgx-h200-cluster", notes="edited: notes are not an engine input")
    session.commit()
    assert current_catalog_version(session) > version
    again = tier_line(session)
    assert engine_runs == []  # a new catalog version, yet no engine run repeated
    assert again == first


def test_an_edited_spec_is_evaluated_again_and_only_that_build(
    session: Session, engine_runs: list[tuple[str, str]]
) -> None:
    tier_line(session)
    swept = len(engine_runs)
    build = next(b for b in export_document(session)["builds"]
                 if b["slug"] == "4x-rtx-4090-workstation")

    engine_runs.clear()
    _edit_build(session, "4x-rtx-4090-workstation", name=build["name"] + " (renamed)")
    session.commit()
    line = tier_line(session)
    names = {b for b, _ in engine_runs}
    assert names == {build["name"] + " (renamed)"}  # only the edited build, by its new value
    assert 0 < len(engine_runs) < swept
    renamed = [b for t in line.tiers for b in t.builds
               if b.slug == "4x-rtx-4090-workstation"]
    assert renamed[0].name.endswith("(renamed)")


def test_a_chart_is_drawn_once_per_distinct_data(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[int] = []
    real = catalog._cost_speed_svg

    def counting(points: Any, *, phone: bool = False) -> str:
        drawn.append(len(points))
        return real(points, phone=phone)

    monkeypatch.setattr(catalog, "_cost_speed_svg", counting)
    catalog.SVG_BY_DATA.clear()
    points = [
        catalog.CostSpeedPoint("A", "desktop", 8000.0, 40.0, True),
        catalog.CostSpeedPoint("B", "dgx", 300000.0, 90.0, True),
    ]
    svg = catalog.cost_speed_svg(points)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    # Equal data (a new list of equal points) is not drawn again.
    assert catalog.cost_speed_svg(list(points)) == svg
    assert drawn == [2]
    moved = [points[0], catalog.CostSpeedPoint("B", "dgx", 300000.0, 95.0, True)]
    assert catalog.cost_speed_svg(moved) != svg
    assert drawn == [2, 2]



def test_a_config_that_fails_to_parse_names_the_missing_field_every_time() -> None:
    from app.errors import InvalidInput
    from app.schemas.inline import InlineModel

    broken = InlineModel(name="m", config={k: v for k, v in _CONFIG.items() if k != "vocab_size"})
    for _ in range(2):
        with pytest.raises(InvalidInput, match="vocab_size"):
            runs_module.inline_model_spec(broken)
