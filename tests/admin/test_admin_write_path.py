"""Imports and single-record writes share one audited write path, and lose races cleanly."""

import copy
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.errors import Conflict
from app.main import create_app
from app.models import AuditEvent
from app.services.admin_records import patch_record
from app.services.catalog import export_document, import_document
from app.services.preconditions import Preconditions
from app.services.records import BUILD, get_record, record_document
from tests.admin.conftest import BUILDS, MODELS, backend_url
from tests.admin.test_admin_pages import csrf_of, sign_in

SLUG = "adm-4x-4090"


def _events(session: Session, slug: str) -> list[AuditEvent]:
    session.rollback()  # see other connections' commits
    stmt = select(AuditEvent).where(AuditEvent.slug == slug).order_by(AuditEvent.id)
    return list(session.scalars(stmt))


def _exported(session: Session, key: str, slug: str) -> dict[str, Any]:
    session.rollback()
    return next(r for r in export_document(session)[key] if r["slug"] == slug)


def _save_meanwhile(make: Any) -> None:
    """Another admin saves the build (read at version 1) in a session of its own."""
    with make() as other:
        patch_record(other, BUILD, SLUG, {"notes": "saved meanwhile"}, actor="other",
                     preconditions=Preconditions(if_match=frozenset({"1"})))


# A build without its (derived) tier and a model: the shapes whose audit documents differed.
RECORDS = [
    pytest.param("builds", {**copy.deepcopy(BUILDS[0]), "slug": "adm-same-path"}, id="build"),
    pytest.param("models", {**copy.deepcopy(MODELS[0]), "slug": "adm-same-path"}, id="model"),
]


@pytest.mark.parametrize(("key", "body"), RECORDS)
def test_an_import_and_a_put_of_one_record_audit_the_same_after_document(
    admin_client: TestClient, session: Session, key: str, body: dict[str, Any]
) -> None:
    slug = body["slug"]
    assert "tier" not in body
    imported = admin_client.post("/api/v1/admin/import", json={key: [body]})
    assert imported.status_code == 200, imported.text
    exported = _exported(session, key, slug)
    etag = admin_client.get(f"/api/v1/admin/{key}/{slug}").headers["etag"]
    assert admin_client.delete(f"/api/v1/admin/{key}/{slug}",
                               headers={"If-Match": etag}).status_code == 204
    put = admin_client.put(f"/api/v1/admin/{key}/{slug}", json=body)
    assert put.status_code == 201, put.text

    by_import, deleted, by_put = _events(session, slug)
    assert (by_import.action, deleted.action, by_put.action) == ("create", "delete", "create")
    assert by_import.after == by_put.after == exported == deleted.before


@pytest.mark.parametrize(("key", "body"), RECORDS)
def test_an_import_update_and_a_put_update_audit_the_same_documents(
    admin_client: TestClient, session: Session, key: str, body: dict[str, Any]
) -> None:
    slug = body["slug"]
    assert admin_client.post("/api/v1/admin/import", json={key: [body]}).status_code == 200
    changed = {**body, "notes": "first change"}
    assert admin_client.post("/api/v1/admin/import", json={key: [changed]}).status_code == 200
    by_import = _events(session, slug)[-1]
    exported = _exported(session, key, slug)
    etag = admin_client.get(f"/api/v1/admin/{key}/{slug}").headers["etag"]
    put = admin_client.put(f"/api/v1/admin/{key}/{slug}", json={**body, "notes": "second"},
                           headers={"If-Match": etag})
    assert put.status_code == 200, put.text
    by_put = _events(session, slug)[-1]

    assert (by_import.action, by_put.action) == ("update", "update")
    assert by_import.after == exported
    assert by_put.before == exported
    assert by_put.after == {**exported, "notes": "second"}


@pytest.mark.parametrize("written_by", ["import", "put"])
def test_a_record_written_either_way_is_restored_from_the_audit_log(
    admin_client: TestClient, session: Session, written_by: str
) -> None:
    body = {**copy.deepcopy(BUILDS[0]), "slug": "adm-restored", "notes": written_by}
    if written_by == "import":
        response = admin_client.post("/api/v1/admin/import", json={"builds": [body]})
    else:
        response = admin_client.put("/api/v1/admin/builds/adm-restored", json=body)
    assert response.status_code in (200, 201), response.text
    written = _exported(session, "builds", "adm-restored")
    etag = admin_client.get("/api/v1/admin/builds/adm-restored").headers["etag"]
    admin_client.delete("/api/v1/admin/builds/adm-restored", headers={"If-Match": etag})
    deleted = _events(session, "adm-restored")[-1]

    restored = admin_client.post(f"/api/v1/admin/audit/{deleted.id}/restore")

    assert restored.status_code == 201, restored.text
    assert _exported(session, "builds", "adm-restored") == written
    assert _events(session, "adm-restored")[-1].after == written


# ---- an import racing another writer ---------------------------------------------------------


NEW_ACCELERATOR = {
    "slug": "adm-race-accelerator",
    "name": "Race test card",
    "vendor": "NVIDIA",
    "memory_gb": 16,
    "memory_bandwidth_gbs": 500,
    "fp16_tflops": 40,
    "tdp_w": 200,
    "source_url": "https://example.com/race-card",
    "as_of": "2024-01-01",
}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_put_between_an_imports_read_and_its_commit_is_a_409_naming_the_build(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """The import read the build at version 1; an admin edit commits before the import writes:
    the import answers a conflict naming the build, writes nothing, and the edit stays."""
    url = backend_url(backend, request)
    engine = make_engine(url)
    make = make_sessionmaker(engine)
    # The new model is written after the build (kinds go in dependency order): all or nothing
    # means it is not saved either.
    document = {
        "builds": [{**copy.deepcopy(BUILDS[0]), "notes": "from the import"}],
        "models": [{**copy.deepcopy(MODELS[0]), "slug": "adm-race-model"}],
    }
    with make() as db:
        version_before = current_catalog_version(db)

    edited = threading.Event()
    with make() as importer:
        def edit_meanwhile(flushing: Session, *_: Any) -> None:
            # The import has read the build and is about to write it: another admin saves first.
            if not edited.is_set() and any(getattr(o, "slug", None) == SLUG
                                           for o in flushing.dirty):
                edited.set()
                _save_meanwhile(make)

        event.listen(importer, "before_flush", edit_meanwhile)
        with pytest.raises(Conflict) as caught:
            import_document(importer, document, actor="importer")

    assert caught.value.status_code == 409
    assert f"build '{SLUG}'" in caught.value.detail
    assert [e.field for e in caught.value.errors] == [f"builds.{SLUG}"]
    with make() as db:
        build = get_record(db, BUILD, SLUG)
        assert build is not None and build.notes == "saved meanwhile" and build.version == 2
        assert db.scalar(
            select(func.count()).select_from(AuditEvent).where(AuditEvent.actor == "importer")
        ) == 0
        assert "adm-race-model" not in {m["slug"] for m in export_document(db)["models"]}
        assert current_catalog_version(db) == version_before + 1  # the edit's bump only
    engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_imports_creating_one_slug_at_once_create_it_once_and_the_other_is_a_409(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url = backend_url(backend, request)
    engine = make_engine(url)
    make = make_sessionmaker(engine)
    both_read = threading.Barrier(2, timeout=30)

    def run_import(notes: str) -> str:
        with make() as db:
            def wait_for_the_other(*_: Any) -> None:
                # Both imports have found the slug absent before either writes it.
                both_read.wait()

            event.listen(db, "before_flush", wait_for_the_other, once=True)
            try:
                import_document(db, {"accelerators": [{**NEW_ACCELERATOR, "notes": notes}]},
                                actor=notes)
            except Conflict as exc:
                assert "accelerator 'adm-race-accelerator'" in exc.detail
                return "409"
            return "ok"

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = sorted(pool.map(run_import, ["first", "second"]))

    assert outcomes == ["409", "ok"]
    with make() as db:
        created = [e for e in _events(db, "adm-race-accelerator")]
        assert [e.action for e in created] == ["create"]
        stored = _exported(db, "accelerators", "adm-race-accelerator")
        assert stored["notes"] == created[0].actor
    engine.dispose()


def test_the_api_answers_an_import_that_lost_a_race_as_a_409_problem(
    admin_client: TestClient, database_url: str
) -> None:
    engine = make_engine(database_url)
    make = make_sessionmaker(engine)

    edited = threading.Event()

    def edit_meanwhile(flushing: Session, *_: Any) -> None:
        if not edited.is_set() and any(getattr(o, "slug", None) == SLUG for o in flushing.dirty):
            edited.set()
            _save_meanwhile(make)

    event.listen(Session, "before_flush", edit_meanwhile)
    try:
        response = admin_client.post(
            "/api/v1/admin/import", json={"builds": [{**BUILDS[0], "notes": "from the import"}]}
        )
    finally:
        event.remove(Session, "before_flush", edit_meanwhile)

    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert SLUG in problem["detail"]
    assert problem["errors"] == [
        {"field": f"builds.{SLUG}", "message": "changed by someone else meanwhile"}
    ]
    with make() as db:
        build = get_record(db, BUILD, SLUG)
        assert build is not None
        assert record_document(build)["notes"] == "saved meanwhile"
    engine.dispose()


def test_the_import_page_answers_an_apply_that_lost_a_race_with_the_preview_again(
    database_url: str, admin_token: str
) -> None:
    engine = make_engine(database_url)
    make = make_sessionmaker(engine)
    build_flushes = []

    def edit_during_the_apply(flushing: Session, *_: Any) -> None:
        if any(getattr(o, "slug", None) == SLUG for o in flushing.dirty):
            build_flushes.append(1)
            if len(build_flushes) == 2:  # the first is the preview's dry run, this the apply
                _save_meanwhile(make)

    settings = Settings(database_url=database_url, seed_on_start=False)
    with TestClient(create_app(settings)) as browser:
        sign_in(browser, admin_token)
        csrf = csrf_of(browser, "/admin/import")
        with make() as db:
            version = current_catalog_version(db)
        text = json.dumps({"builds": [{**BUILDS[0], "notes": "from the page"}]})
        event.listen(Session, "before_flush", edit_during_the_apply)
        try:
            response = browser.post("/admin/import", data={
                "csrf_token": csrf, "action": "apply", "catalog_version": str(version),
                "text": text})
        finally:
            event.remove(Session, "before_flush", edit_during_the_apply)

    assert response.status_code == 409, response.text[:500]
    assert "Nothing was imported" in response.text and SLUG in response.text
    with make() as db:
        build = get_record(db, BUILD, SLUG)
        assert build is not None and build.notes == "saved meanwhile"
    engine.dispose()
