"""Admin writes of measurements: the record pattern (ETag / If-Match, audit, all or nothing)."""

from typing import Any

from fastapi.testclient import TestClient

from tests.admin.test_admin_pages import sign_in
from tests.services.test_measurements import measurement

PATH = "/api/v1/admin/measurements"


def test_put_creates_then_replaces_with_the_etag(admin_client: TestClient) -> None:
    created = admin_client.put(f"{PATH}/adm-m1", json=measurement("adm-m1"))
    assert created.status_code == 201, created.text
    etag = created.headers["etag"]
    stale = admin_client.put(f"{PATH}/adm-m1", json=measurement("adm-m1", value=140.0))
    assert stale.status_code == 428
    replaced = admin_client.put(
        f"{PATH}/adm-m1", json=measurement("adm-m1", value=140.0), headers={"If-Match": etag}
    )
    assert replaced.status_code == 200 and replaced.json()["value"] == 140.0
    public = admin_client.get("/api/v1/measurements/adm-m1")
    assert public.json()["value"] == 140.0 and public.headers["etag"] == replaced.headers["etag"]


def test_a_write_is_audited_and_changes_the_accuracy_page(admin_client: TestClient) -> None:
    before = admin_client.get("/accuracy.json").json()["measurements"]
    assert admin_client.put(f"{PATH}/adm-m2", json=measurement("adm-m2")).status_code == 201
    assert admin_client.get("/accuracy.json").json()["measurements"] == before + 1
    events = admin_client.get(
        "/api/v1/admin/audit", params={"kind": "measurement", "slug": "adm-m2"}
    ).json()["items"]
    assert [e["action"] for e in events] == ["create"]


def test_an_invalid_measurement_is_refused_naming_the_field(admin_client: TestClient) -> None:
    body: dict[str, Any] = measurement("adm-m3", model="no-such-model")
    refused = admin_client.put(f"{PATH}/adm-m3", json=body)
    assert refused.status_code == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["model"]
    assert admin_client.get("/api/v1/measurements/adm-m3").status_code == 404


def test_import_of_measurements_is_all_or_nothing(admin_client: TestClient) -> None:
    document = {"measurements": [measurement("adm-ok"), measurement("adm-bad", unit="ms")]}
    refused = admin_client.post("/api/v1/admin/import", json=document)
    assert refused.status_code == 422
    assert admin_client.get("/api/v1/measurements/adm-ok").status_code == 404
    document["measurements"].pop()
    assert admin_client.post("/api/v1/admin/import", json=document).status_code == 200
    assert admin_client.get("/api/v1/measurements/adm-ok").status_code == 200


def test_admin_pages_list_and_show_measurements(client: TestClient, admin_token: str) -> None:
    sign_in(client, admin_token)
    listing = client.get("/admin/measurements")
    assert listing.status_code == 200
    slug = "d01-llamacpp-llama-3-8b-rtx3090-q4-0"
    assert slug in listing.text
    edit = client.get(f"/admin/measurements/{slug}")
    assert edit.status_code == 200 and "hardware.accelerator" in edit.text
