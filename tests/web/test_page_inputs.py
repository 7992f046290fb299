"""Build-page memos keyed by their input records (app/web/page_inputs.py): an admin edit to one
build recomputes that build's fits and serving section only, and no page shows stale figures."""

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.services.catalog import export_document, import_document
from app.web import pages, serving_sections
from app.web.page_inputs import PAGE_VALUES

EDITED = "4x-rtx-4090-workstation"
UNTOUCHED = "dgx-h200"


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Each fits sweep (one per precision) and serving curve the build page computes, by build."""
    calls: dict[str, list[str]] = {"fits": [], "serving": []}
    real_fits, real_section = pages.model_fits_for_build, serving_sections.serving_section

    def fits(session: Session, *, slug: str, **kwargs: Any) -> Any:
        calls["fits"].append(slug)
        return real_fits(session, slug=slug, **kwargs)

    def section(*args: Any, build: str, **kwargs: Any) -> Any:
        calls["serving"].append(build)
        return real_section(*args, build=build, **kwargs)

    monkeypatch.setattr(pages, "model_fits_for_build", fits)
    monkeypatch.setattr(serving_sections, "serving_section", section)
    PAGE_VALUES.clear()
    return calls


def _edit(session: Session, collection: str, slug: str, **changes: Any) -> None:
    record = next(r for r in export_document(session)[collection] if r["slug"] == slug)
    record.update(changes)
    result = import_document(session, {collection: [record]}, actor="test")
    assert result.ok and result.updated, result.errors
    session.commit()


def test_an_edit_to_one_build_recomputes_that_build_only(
    client: TestClient, session: Session, computed: dict[str, list[str]]
) -> None:
    for slug in (EDITED, UNTOUCHED):
        assert client.get(f"/builds/{slug}").status_code == 200
    assert computed["fits"].count(UNTOUCHED) == 3  # bf16, fp8, int4
    assert UNTOUCHED in computed["serving"]

    _edit(session, "builds", EDITED, notes="edited while the pages were cached")
    computed["fits"].clear()
    computed["serving"].clear()
    untouched = client.get(f"/builds/{UNTOUCHED}")
    edited = client.get(f"/builds/{EDITED}")

    assert untouched.status_code == edited.status_code == 200
    assert computed["fits"] == [EDITED] * 3
    assert set(computed["serving"]) == {EDITED}
    assert "edited while the pages were cached" in edited.text  # the new catalog version's page


def test_an_edit_to_a_model_recomputes_every_build(
    client: TestClient, session: Session, computed: dict[str, list[str]]
) -> None:
    assert client.get(f"/builds/{UNTOUCHED}").status_code == 200
    model = export_document(session)["models"][0]

    _edit(session, "models", model["slug"], name=model["name"] + " (renamed)")
    computed["fits"].clear()
    page = client.get(f"/builds/{UNTOUCHED}")

    assert computed["fits"] == [UNTOUCHED] * 3  # every build's fits list every model
    assert model["name"] + " (renamed)" in page.text
