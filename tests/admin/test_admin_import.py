"""Bulk import: dry run equals the run, all or nothing, idempotent, JSON or YAML, size-limited."""

import copy
import json
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.config import Settings
from app.main import create_app
from app.services.catalog import export_document
from tests.admin.conftest import ACCELERATORS, BUILDS

URL = "/api/v1/admin/import"


def new_document() -> dict[str, Any]:
    """One new accelerator, a new build on it, and an edit of an existing build."""
    accelerator = {**copy.deepcopy(ACCELERATORS[0]), "slug": "adm-imported-gpu",
                   "name": "Imported GPU"}
    build = {**copy.deepcopy(BUILDS[0]), "slug": "adm-imported-build",
             "accelerator": "adm-imported-gpu"}
    edited = {**copy.deepcopy(BUILDS[1]), "notes": "edited by import"}
    return {"accelerators": [accelerator], "builds": [build, edited]}


def fresh_export(session: Session) -> dict[str, Any]:
    session.rollback()
    return export_document(session)


def test_dry_run_answers_like_the_real_run_and_writes_nothing(
    admin_client: TestClient, session: Session
) -> None:
    before = fresh_export(session)
    dry = admin_client.post(URL, params={"dry_run": "true"}, json=new_document())
    assert dry.status_code == 200, dry.text
    assert fresh_export(session) == before
    real = admin_client.post(URL, params={"dry_run": "false"}, json=new_document())
    assert real.status_code == 200
    assert dry.json() == real.json()
    answer = real.json()
    assert {(r["kind"], r["slug"]) for r in answer["created"]} == {
        ("accelerator", "adm-imported-gpu"), ("build", "adm-imported-build")}
    assert answer["updated"] == [{"kind": "build", "slug": "adm-dgx-h200"}]
    assert answer["errors"] == []
    after = fresh_export(session)
    assert after != before
    assert "adm-imported-build" in {b["slug"] for b in after["builds"]}


def test_importing_twice_creates_and_updates_nothing(
    admin_client: TestClient, session: Session
) -> None:
    assert admin_client.post(URL, json=new_document()).status_code == 200
    session.rollback()
    version = current_catalog_version(session)
    second = admin_client.post(URL, json=new_document()).json()
    assert second["created"] == [] and second["updated"] == []
    assert len(second["unchanged"]) == 3
    session.rollback()
    assert current_catalog_version(session) == version


def test_one_bad_record_leaves_the_database_byte_for_byte_unchanged(
    admin_client: TestClient, session: Session
) -> None:
    before = json.dumps(fresh_export(session), sort_keys=True)
    document = new_document()
    document["builds"].append({**copy.deepcopy(BUILDS[0]), "slug": "adm-bad",
                               "accelerators_per_node": 0})
    for dry_run in ("true", "false"):
        response = admin_client.post(URL, params={"dry_run": dry_run}, json=document)
        assert response.status_code == 422
        body = response.json()
        assert body["created"] == [] and body["updated"] == []
        assert body["errors"] == [{"kind": "build", "slug": "adm-bad", "index": 2,
                                   "field": "accelerators_per_node",
                                   "message": body["errors"][0]["message"]}]
    assert json.dumps(fresh_export(session), sort_keys=True) == before


def test_every_error_is_listed_with_record_and_field(admin_client: TestClient) -> None:
    document = {
        "accelerators": [{**ACCELERATORS[0], "slug": "adm-x", "memory_gb": -1}],
        "builds": [{**BUILDS[0], "slug": "adm-y", "accelerator": "nope"}],
        "gpus": [],
    }
    errors = admin_client.post(URL, json=document).json()["errors"]
    found = {(e["kind"], e["slug"], e["field"]) for e in errors}
    assert ("accelerator", "adm-x", "memory_gb") in found
    assert ("build", "adm-y", "accelerator") in found
    assert ("document", None, "gpus") in found


def test_export_import_round_trip_changes_nothing(
    admin_client: TestClient, session: Session
) -> None:
    exported = fresh_export(session)
    for content_type, body in (
        ("application/json", json.dumps(exported)),
        ("application/yaml", yaml.safe_dump(exported, sort_keys=False, allow_unicode=True)),
    ):
        response = admin_client.post(URL, content=body.encode(),
                                     headers={"Content-Type": content_type})
        assert response.status_code == 200, response.text[:500]
        answer = response.json()
        assert answer["created"] == [] and answer["updated"] == [], answer
        assert len(answer["unchanged"]) == sum(len(v) for v in exported.values())
    assert fresh_export(session) == exported


def test_export_into_an_empty_catalog_recreates_it(
    admin_client: TestClient, session: Session, empty_catalog_url: str, admin_token: str
) -> None:
    exported = fresh_export(session)
    from app.db import make_engine, make_sessionmaker
    from app.services.tokens import create_token

    engine = make_engine(empty_catalog_url)
    with make_sessionmaker(engine)() as empty_session:
        token = create_token(empty_session, name="bob")
        settings = Settings(database_url=empty_catalog_url, seed_on_start=False)
        with TestClient(create_app(settings)) as other:
            response = other.post(URL, json=exported, headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text[:500]
        assert export_document(empty_session) == exported
    engine.dispose()


def test_yaml_body_is_accepted(admin_client: TestClient) -> None:
    text = yaml.safe_dump(new_document())
    response = admin_client.post(URL, content=text, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 200, response.text
    assert len(response.json()["created"]) == 2


def test_yaml_aliases_are_refused(admin_client: TestClient) -> None:
    text = "a: &x [1, 2]\nb: *x\n"
    response = admin_client.post(URL, content=text, headers={"Content-Type": "text/yaml"})
    assert response.status_code == 422
    assert "aliases" in response.json()["detail"]


@pytest.mark.parametrize(
    ("content", "content_type", "status"),
    [
        (b"{not json", "application/json", 422),
        (b"\xff\xfe\x00", "application/json", 422),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", 422),
        (b"key: [unclosed", "application/yaml", 422),
        (b"accelerators: 3", "application/yaml", 422),
        (b"[]", "application/json", 422),
        (b'{"models": {}}', "application/json", 422),
        (b'{"builds": null}', "application/json", 422),
        (b"accelerators: []\nbuilds: []\nmodels: {}\n", "application/yaml", 422),
        (b"<xml/>", "application/xml", 415),
    ],
)
def test_malformed_documents_are_4xx(
    admin_client: TestClient, content: bytes, content_type: str, status: int
) -> None:
    response = admin_client.post(URL, content=content, headers={"Content-Type": content_type})
    assert response.status_code == status, response.text[:300]


def test_body_over_the_limit_is_413_before_it_is_read_whole(
    database_url: str, auth: dict[str, str]
) -> None:
    settings = Settings(database_url=database_url, seed_on_start=False, max_import_bytes=1000)
    with TestClient(create_app(settings)) as small:
        big = json.dumps({"accelerators": [ACCELERATORS[0]] * 20}).encode()
        assert len(big) > 1000
        response = small.post(URL, content=big, headers={**auth,
                                                         "Content-Type": "application/json"})
        assert response.status_code == 413

        # Without Content-Length (chunked), the streamed count still stops it.
        def chunks():  # type: ignore[no-untyped-def]
            for i in range(0, len(big), 100):
                yield big[i:i + 100]

        response = small.post(URL, content=chunks(), headers={**auth,
                                                              "Content-Type": "application/json"})
        assert response.status_code == 413
        ok = small.post(URL, json={"accelerators": []}, headers=auth)
        assert ok.status_code == 200


def test_import_is_audited_under_the_token_name(admin_client: TestClient) -> None:
    admin_client.post(URL, json=new_document())
    events = admin_client.get("/api/v1/admin/audit", params={"actor": "alice"}).json()["items"]
    assert {(e["action"], e["slug"]) for e in events} >= {
        ("create", "adm-imported-gpu"), ("update", "adm-dgx-h200")}


@pytest.mark.parametrize("value", [{}, None, "", 0, False])
def test_a_section_that_is_not_a_list_is_refused_naming_it(
    admin_client: TestClient, session: Session, value: Any
) -> None:
    before = fresh_export(session)
    document = {**new_document(), "models": value}
    for dry_run in ("true", "false"):
        response = admin_client.post(URL, params={"dry_run": dry_run}, json=document)
        assert response.status_code == 422, response.text
        assert [(e["kind"], e["field"]) for e in response.json()["errors"]] == [
            ("document", "models")
        ]
    assert fresh_export(session) == before


def test_a_document_with_many_bad_records_lists_the_first_hundred_and_counts_all(
    admin_client: TestClient,
) -> None:
    document = {"builds": [{"slug": f"bad-{i}", "nodes": "many"} for i in range(400)]}
    response = admin_client.post(URL, json=document)
    assert response.status_code == 422
    body = response.json()
    assert body["error_count"] > 400  # several problems per record
    assert len(body["errors"]) == 100
    assert body["errors"][0]["slug"] == "bad-0"


def test_an_integer_past_the_digit_limit_is_a_422_naming_the_document(
    admin_client: TestClient,
) -> None:
    digits = "7" * 4301
    for media, text in (("application/json", '{"builds": [{"nodes": ' + digits + "}]}"),
                        ("application/yaml", f"builds:\n- nodes: {digits}\n")):
        response = admin_client.post(URL, content=text, headers={"Content-Type": media})
        assert response.status_code == 422, (media, response.text[:300])
        assert response.json()["errors"][0]["field"] == "(document)"


def test_a_nested_alias_is_refused_by_the_fast_loader(admin_client: TestClient) -> None:
    text = "builds:\n- &a {slug: x, notes: [1, 2]}\n- {slug: y, notes: *a}\n"
    response = admin_client.post(URL, content=text, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 422
    assert "aliases" in response.text
