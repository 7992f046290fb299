"""Single-record admin writes: PUT/PATCH/DELETE with ETags, validation, audit, restore."""

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.models import AuditEvent
from app.services.catalog import export_document
from tests.admin.conftest import ACCELERATORS, BUILDS, LLAMA_8B_CONFIG, MODELS, etag_of

BUILD = "adm-4x-4090"


def build_body(**changes: Any) -> dict[str, Any]:
    body = copy.deepcopy(BUILDS[0])
    body.update(changes)
    return body


def catalog_version(session: Session) -> int:
    session.rollback()  # see other connections' commits
    return current_catalog_version(session)


def test_get_answers_the_record_with_its_version_as_etag(admin_client: TestClient) -> None:
    response = admin_client.get(f"/api/v1/admin/builds/{BUILD}")
    assert response.status_code == 200
    body = response.json()
    assert response.headers["etag"] == f'"{body["version"]}"'
    assert body["tier"] == "desktop"
    assert body["accelerator"] == "adm-rtx-4090"
    assert response.headers["cache-control"] == "no-store"


def test_put_creates_a_new_record_without_if_match(admin_client: TestClient) -> None:
    body = build_body(slug="adm-new-build", name="A new build")
    response = admin_client.put("/api/v1/admin/builds/adm-new-build", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["version"] == 1
    assert response.headers["etag"] == '"1"'
    assert admin_client.get("/api/v1/admin/builds/adm-new-build").json()["name"] == "A new build"


def test_put_replaces_with_the_current_etag_and_bumps_version(
    admin_client: TestClient, session: Session
) -> None:
    before_catalog = catalog_version(session)
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.put(
        f"/api/v1/admin/builds/{BUILD}", json=build_body(power_w=2500), headers={"If-Match": etag}
    )
    assert response.status_code == 200, response.text
    assert response.json()["power_w"] == 2500
    assert response.headers["etag"] != etag
    assert catalog_version(session) == before_catalog + 1


def test_get_body_can_be_put_back_unchanged(admin_client: TestClient) -> None:
    got = admin_client.get(f"/api/v1/admin/builds/{BUILD}")
    response = admin_client.put(
        f"/api/v1/admin/builds/{BUILD}", json=got.json(), headers={"If-Match": got.headers["etag"]}
    )
    assert response.status_code == 200, response.text
    # Nothing changed, so the version (and ETag) stays.
    assert response.headers["etag"] == got.headers["etag"]


def test_replacing_without_if_match_is_refused_with_428(admin_client: TestClient) -> None:
    response = admin_client.put(f"/api/v1/admin/builds/{BUILD}", json=build_body(power_w=1))
    assert response.status_code == 428
    assert response.headers["content-type"].startswith("application/problem+json")
    assert admin_client.get(f"/api/v1/admin/builds/{BUILD}").json()["power_w"] == 2400


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_stale_if_match_is_412_and_changes_nothing(
    admin_client: TestClient, session: Session, method: str
) -> None:
    old_etag = etag_of(admin_client, "builds", BUILD)
    first = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}", json={"power_w": 2600}, headers={"If-Match": old_etag}
    )
    assert first.status_code == 200
    before = export_document(session)
    version = catalog_version(session)
    kwargs: dict[str, Any] = {"headers": {"If-Match": old_etag}}
    if method == "put":
        kwargs["json"] = build_body(power_w=9999)
    elif method == "patch":
        kwargs["json"] = {"power_w": 9999}
    response = admin_client.request(method.upper(), f"/api/v1/admin/builds/{BUILD}", **kwargs)
    assert response.status_code == 412, response.text
    assert catalog_version(session) == version
    assert export_document(session) == before


def test_if_none_match_star_refuses_to_overwrite(admin_client: TestClient) -> None:
    response = admin_client.put(
        f"/api/v1/admin/builds/{BUILD}", json=build_body(), headers={"If-None-Match": "*"}
    )
    assert response.status_code == 412


def test_if_match_on_a_missing_record_is_412(admin_client: TestClient) -> None:
    body = build_body(slug="adm-missing")
    response = admin_client.put(
        "/api/v1/admin/builds/adm-missing", json=body, headers={"If-Match": '"1"'}
    )
    assert response.status_code == 412
    assert admin_client.get("/api/v1/admin/builds/adm-missing").status_code == 404


def test_weak_etag_never_matches(admin_client: TestClient) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}", json={"power_w": 1}, headers={"If-Match": f"W/{etag}"}
    )
    assert response.status_code == 412


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"slug": "another-slug"}, "slug"),
        ({"accelerator": "no-such-accelerator"}, "accelerator"),
        ({"tier": "cluster"}, "tier"),
        ({"intra_node_link": {"kind": "carrier-pigeon"}}, "intra_node_link.kind"),
        ({"power_w": -5}, "power_w"),
        ({"power_w": 1e300}, "power_w"),
        ({"power_w": "lots"}, "power_w"),
        ({"power_w": True}, "power_w"),
        ({"power_w": "2400"}, "power_w"),
        ({"accelerators_per_node": 4.0}, "accelerators_per_node"),
        ({"intra_node_link": {"kind": "pcie", "bandwidth_gbs": False}},
         "intra_node_link.bandwidth_gbs"),
        ({"as_of": 1_700_000_000}, "as_of"),
        ({"accelerators_per_node": 2**40}, "accelerators_per_node"),
        ({"name": ""}, "name"),
        ({"name": "bad\x00name"}, "name"),
        ({"notes": "x" * 5000}, "notes"),
        ({"source_url": "ftp://example.com/x"}, "source_url"),
        ({"as_of": "yesterday"}, "as_of"),
        ({"unknown_field": 1}, "unknown_field"),
        ({"estimated": ["not_a_field"]}, "(record)"),
        ({"price_source_url": None, "price_as_of": None}, "(record)"),
    ],
)
def test_each_invalid_field_is_422_naming_it_and_changes_nothing(
    admin_client: TestClient, session: Session, changes: dict[str, Any], field: str
) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    before = export_document(session)
    body = {k: v for k, v in build_body(**changes).items() if v is not None}
    response = admin_client.put(f"/api/v1/admin/builds/{BUILD}", json=body,
                                headers={"If-Match": etag})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert field in [e["field"] for e in problem["errors"]], problem
    assert all(e["message"] for e in problem["errors"])
    assert export_document(session) == before


def test_missing_required_field_is_named(admin_client: TestClient) -> None:
    body = build_body(slug="adm-incomplete")
    del body["accelerators_per_node"]
    response = admin_client.put("/api/v1/admin/builds/adm-incomplete", json=body)
    assert response.status_code == 422
    assert "accelerators_per_node" in [e["field"] for e in response.json()["errors"]]


def test_model_with_broken_config_names_the_config_field(admin_client: TestClient) -> None:
    config = {k: v for k, v in LLAMA_8B_CONFIG.items() if k != "num_hidden_layers"}
    body = {**copy.deepcopy(MODELS[0]), "slug": "adm-broken", "config": config}
    response = admin_client.put("/api/v1/admin/models/adm-broken", json=body)
    assert response.status_code == 422
    assert "config.num_hidden_layers" in [e["field"] for e in response.json()["errors"]]


@pytest.mark.parametrize(
    ("fragment", "reason"),
    [
        ('{"architectures": "\\ud800"}', "architectures: must not contain unpaired surrogate"),
        ('{"\\udfff": 1}', "keys must not contain unpaired surrogate"),
        ('{"architectures": "a\\u0000b"}', "architectures: must not contain NUL"),
    ],
)
def test_config_text_no_database_can_store_is_422_and_changes_nothing(
    admin_client: TestClient, session: Session, fragment: str, reason: str
) -> None:
    # JSON's "\ud800" parses to a lone surrogate: no UTF-8 encoder takes it, so once saved the
    # record could not even be answered (it was a 500 after the write).
    slug = MODELS[0]["slug"]
    etag = etag_of(admin_client, "models", slug)
    before = export_document(session)
    text = '{"config": ' + fragment[:-1] + ', "model_type": "llama"}}'
    response = admin_client.patch(
        f"/api/v1/admin/models/{slug}", content=text.encode(),
        headers={"If-Match": etag, "Content-Type": "application/json"},
    )
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == "config" and reason in error["message"], error
    assert export_document(session) == before


def test_non_object_body_is_422(admin_client: TestClient) -> None:
    response = admin_client.put(f"/api/v1/admin/builds/{BUILD}", json=[1, 2])
    assert response.status_code == 422


def test_patch_merges_into_the_record_and_validates_the_whole(admin_client: TestClient) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}",
        json={"intra_node_link": {"bandwidth_gbs": 32}, "notes": "patched"},
        headers={"If-Match": etag},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["intra_node_link"] == {"kind": "pcie", "bandwidth_gbs": 32, "latency_us": None}
    assert body["notes"] == "patched"
    assert body["name"] == BUILDS[0]["name"]


def test_patch_that_changes_the_shape_rederives_the_tier(admin_client: TestClient) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}",
        json={"nodes": 2, "inter_node_link": {"kind": "ethernet", "bandwidth_gbps": 100}},
        headers={"If-Match": etag},
    )
    assert response.status_code == 200, response.text
    assert response.json()["tier"] == "cluster"


def test_patch_null_removes_an_optional_field(admin_client: TestClient) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}", json={"power_w": None}, headers={"If-Match": etag}
    )
    assert response.status_code == 200
    assert response.json()["power_w"] is None


def test_patch_that_breaks_the_record_is_422(admin_client: TestClient) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}", json={"price_as_of": None}, headers={"If-Match": etag}
    )
    assert response.status_code == 422
    assert "price_usd" in response.json()["detail"]


def test_deleting_an_accelerator_in_use_is_409_naming_the_builds(
    admin_client: TestClient,
) -> None:
    etag = etag_of(admin_client, "accelerators", "adm-rtx-4090")
    response = admin_client.delete(
        "/api/v1/admin/accelerators/adm-rtx-4090", headers={"If-Match": etag}
    )
    assert response.status_code == 409
    assert BUILD in response.json()["detail"]
    assert admin_client.get("/api/v1/admin/accelerators/adm-rtx-4090").status_code == 200


def test_delete_removes_from_catalog_keeps_audit_and_restore_brings_it_back(
    admin_client: TestClient, session: Session
) -> None:
    original = admin_client.get(f"/api/v1/admin/builds/{BUILD}").json()
    version = catalog_version(session)
    response = admin_client.delete(
        f"/api/v1/admin/builds/{BUILD}", headers={"If-Match": f'"{original["version"]}"'}
    )
    assert response.status_code == 204
    assert admin_client.get(f"/api/v1/admin/builds/{BUILD}").status_code == 404
    assert BUILD not in [b["slug"] for b in export_document(session)["builds"]]
    assert catalog_version(session) == version + 1

    events = admin_client.get(
        "/api/v1/admin/audit", params={"slug": BUILD, "action": "delete"}
    ).json()["items"]
    assert len(events) == 1
    assert events[0]["actor"] == "alice"
    assert events[0]["before"]["power_w"] == original["power_w"]

    restored = admin_client.post(f"/api/v1/admin/audit/{events[0]['id']}/restore")
    assert restored.status_code == 201, restored.text
    again = admin_client.get(f"/api/v1/admin/builds/{BUILD}").json()
    assert {k: v for k, v in again.items() if k != "version"} == {
        k: v for k, v in original.items() if k != "version"
    }
    # A second restore of the same event is a conflict: the record exists again.
    assert admin_client.post(f"/api/v1/admin/audit/{events[0]['id']}/restore").status_code == 409


def test_restoring_an_update_event_is_refused(admin_client: TestClient) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    admin_client.patch(f"/api/v1/admin/builds/{BUILD}", json={"notes": "x"},
                       headers={"If-Match": etag})
    event = admin_client.get("/api/v1/admin/audit", params={"action": "update"}).json()["items"][0]
    assert admin_client.post(f"/api/v1/admin/audit/{event['id']}/restore").status_code == 409


def test_every_write_is_audited_with_actor_before_and_after(
    admin_client: TestClient, session: Session
) -> None:
    def count() -> int:
        session.rollback()
        return session.scalar(select(func.count()).select_from(AuditEvent)) or 0

    start = count()
    etag = etag_of(admin_client, "builds", BUILD)
    admin_client.patch(f"/api/v1/admin/builds/{BUILD}", json={"power_w": 2000},
                       headers={"If-Match": etag})
    admin_client.put("/api/v1/admin/builds/adm-b2", json=build_body(slug="adm-b2"))
    assert count() == start + 2
    page = admin_client.get("/api/v1/admin/audit", params={"per_page": 2}).json()
    created, updated = page["items"]
    assert (created["action"], created["slug"], created["before"]) == ("create", "adm-b2", None)
    assert (updated["action"], updated["actor"]) == ("update", "alice")
    assert (updated["before"]["power_w"], updated["after"]["power_w"]) == (2400, 2000)


def test_audit_list_filters_and_paginates(admin_client: TestClient) -> None:
    for i in range(3):
        etag = etag_of(admin_client, "builds", BUILD)
        admin_client.patch(f"/api/v1/admin/builds/{BUILD}", json={"notes": f"n{i}"},
                           headers={"If-Match": etag})
    first = admin_client.get("/api/v1/admin/audit", params={"slug": BUILD, "per_page": 2})
    body = first.json()
    assert body["total"] >= 3 and len(body["items"]) == 2
    assert all(e["slug"] == BUILD for e in body["items"])
    assert 'rel="next"' in first.headers["link"]
    second_response = admin_client.get(body["next_url"])
    second = second_response.json()
    assert second["page"] == 2
    # The audit log pages like the catalog lists: the second page links back and to the first.
    assert 'rel="prev"' in second_response.headers["link"]
    assert 'rel="first"' in second_response.headers["link"]
    assert {e["id"] for e in second["items"]}.isdisjoint({e["id"] for e in body["items"]})
    models = admin_client.get("/api/v1/admin/audit", params={"kind": "model"}).json()["items"]
    assert all(e["kind"] == "model" for e in models)
    assert admin_client.get("/api/v1/admin/audit", params={"kind": "nonsense"}).status_code == 422


def test_model_from_config_computes_and_marks_missing_counts(admin_client: TestClient) -> None:
    response = admin_client.post(
        "/api/v1/admin/models/from-config",
        json={
            "slug": "adm-from-config",
            "name": "From config",
            "config": LLAMA_8B_CONFIG,
            "source_url": "https://huggingface.co/meta-llama/Llama-3.1-8B",
        },
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body["estimated"]) == {"params_total", "params_active"}
    # The engine counts Llama 3.1 8B within 1 % of its published 8.03B.
    assert abs(body["params_total"] - MODELS[0]["params_total"]) / MODELS[0]["params_total"] < 0.01
    assert body["params_active"] == body["params_total"]  # dense
    assert body["max_context_tokens"] == LLAMA_8B_CONFIG["max_position_embeddings"]
    assert response.headers["location"] == "/api/v1/admin/models/adm-from-config"


def test_model_from_config_keeps_published_counts_unmarked(admin_client: TestClient) -> None:
    response = admin_client.post(
        "/api/v1/admin/models/from-config",
        json={
            "slug": "adm-from-config-2",
            "name": "From config",
            "config": LLAMA_8B_CONFIG,
            "params_total": 8_030_261_248,
            "params_active": 8_030_261_248,
            "source_url": "https://huggingface.co/meta-llama/Llama-3.1-8B",
        },
    )
    assert response.status_code == 201
    assert response.json()["estimated"] == []


def test_model_from_config_refuses_existing_slug_and_bad_config(admin_client: TestClient) -> None:
    base = {"name": "x", "source_url": "https://example.com/x"}
    dup = {**base, "slug": "adm-llama-8b", "config": LLAMA_8B_CONFIG}
    assert admin_client.post("/api/v1/admin/models/from-config", json=dup).status_code == 409
    bad = {**base, "slug": "adm-bad", "config": {"model_type": "llama"}}
    response = admin_client.post("/api/v1/admin/models/from-config", json=bad)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"].startswith("config.")


@pytest.mark.parametrize(
    ("kind_key", "slug"),
    [("builds", BUILD), ("accelerators", "adm-h200"), ("models", "adm-llama-8b")],
)
def test_the_public_get_body_puts_back_unchanged(
    admin_client: TestClient, kind_key: str, slug: str
) -> None:
    public = admin_client.get(f"/api/v1/{kind_key}/{slug}")
    assert public.status_code == 200
    etag = etag_of(admin_client, kind_key, slug)
    response = admin_client.put(f"/api/v1/admin/{kind_key}/{slug}", json=public.json(),
                                headers={"If-Match": etag})
    assert response.status_code == 200, response.text
    assert response.headers["etag"] == etag  # nothing changed


def test_public_api_shows_an_edit_right_after_it_commits(admin_client: TestClient) -> None:
    before = admin_client.get(f"/api/v1/builds/{BUILD}")
    assert before.json()["power_w"] == 2400
    etag = etag_of(admin_client, "builds", BUILD)
    admin_client.patch(f"/api/v1/admin/builds/{BUILD}", json={"power_w": 3100},
                       headers={"If-Match": etag})
    after = admin_client.get(f"/api/v1/builds/{BUILD}", headers={
        "If-None-Match": before.headers.get("etag", '"none"')})
    assert after.status_code == 200
    assert after.json()["power_w"] == 3100


def test_audit_times_are_utc_with_a_zone(admin_client: TestClient) -> None:
    # OpenAPI documents `at` as an RFC 3339 date-time, which needs a zone (SQLite keeps none).
    etag = etag_of(admin_client, "builds", BUILD)
    admin_client.patch(f"/api/v1/admin/builds/{BUILD}", json={"notes": "when?"},
                       headers={"If-Match": etag})
    listed = admin_client.get("/api/v1/admin/audit", params={"slug": BUILD}).json()["items"][0]
    one = admin_client.get(f"/api/v1/admin/audit/{listed['id']}").json()
    for event in (listed, one):
        at = datetime.fromisoformat(event["at"])
        assert at.utcoffset() == timedelta(0), event["at"]
        assert abs(datetime.now(UTC) - at) < timedelta(minutes=5)


def test_from_config_is_not_a_model_slug(admin_client: TestClient, session: Session) -> None:
    before = export_document(session)
    body = {**copy.deepcopy(MODELS[0]), "slug": "from-config"}
    # The admin route /models/from-config is POST only: it is never read as a slug ...
    for method in ("GET", "PUT", "PATCH", "DELETE", "OPTIONS"):
        response = admin_client.request(method, "/api/v1/admin/models/from-config", json=body)
        assert response.status_code == 405, (method, response.text)
        assert response.headers["allow"] == "POST"
    # ... so no model may take that slug, by any way in.
    response = admin_client.post("/api/v1/admin/models/from-config",
                                 json={**{k: body[k] for k in ("slug", "name", "config",
                                                                "source_url")}})
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["slug"]
    response = admin_client.post("/api/v1/admin/import", json={"models": [body]})
    assert response.status_code == 422
    assert [(e["kind"], e["field"]) for e in response.json()["errors"]] == [("model", "slug")]
    assert export_document(session) == before
    # Other kinds keep the slug (nothing shadows /accelerators/from-config).
    response = admin_client.put("/api/v1/admin/accelerators/from-config",
                                json={**copy.deepcopy(ACCELERATORS[0]), "slug": "from-config"})
    assert response.status_code == 201, response.text


def test_undecodable_json_body_is_a_documented_400_or_422(admin_client: TestClient) -> None:
    spec = admin_client.get("/openapi.json").json()
    for method in ("put", "patch"):
        documented = spec["paths"]["/api/v1/admin/builds/{slug}"][method]["responses"]
        response = admin_client.request(method.upper(), f"/api/v1/admin/builds/{BUILD}",
                                        content=b"{not json",
                                        headers={"Content-Type": "application/json"})
        assert 400 <= response.status_code < 500
        assert str(response.status_code) in documented, (method, response.status_code)


def _mixed_body(**changes: object) -> dict[str, object]:
    body = build_body(slug="adm-mixed")
    for key in ("accelerator", "accelerators_per_node"):
        body.pop(key)
    body["accelerators"] = [
        {"accelerator": "rtx-3090", "count": 2, "pcie_generation": 4, "pcie_lanes": 8},
        {"accelerator": "rtx-4090", "count": 1},
    ]
    body["host"] = {"cpu": "Test CPU", "ram_gb": 128, "ram_channels": 2, "ram_speed_mts": 5600}
    body.pop("host_memory_gb", None)
    body.update(changes)
    return body


def test_mixed_build_round_trips_through_put_and_get(admin_client: TestClient) -> None:
    url = "/api/v1/admin/builds/adm-mixed"
    assert admin_client.put(url, json=_mixed_body()).status_code == 201
    read = admin_client.get("/api/v1/builds/adm-mixed")
    body = read.json()
    assert body["accelerators_label"] == "2× RTX 3090 + 1× RTX 4090"
    assert body["host"]["ram_bandwidth_gbs"] == pytest.approx(89.6)
    assert body["host_memory_gb"] == 128
    # The read shape goes back unchanged: same version, nothing rewritten.
    again = admin_client.put(url, json=body, headers={"If-Match": read.headers["etag"]})
    assert again.status_code == 200
    assert again.headers["etag"] == read.headers["etag"]


def test_groups_only_edit_moves_the_version(admin_client: TestClient) -> None:
    url = "/api/v1/admin/builds/adm-mixed"
    admin_client.put(url, json=_mixed_body())
    read = admin_client.get(url)
    body = read.json()
    body["accelerators"][1]["count"] = 2
    body["accelerators_per_node"] = 4
    changed = admin_client.put(url, json=body, headers={"If-Match": read.headers["etag"]})
    assert changed.status_code == 200
    assert changed.headers["etag"] != read.headers["etag"]
    stale = admin_client.put(url, json=body, headers={"If-Match": read.headers["etag"]})
    assert stale.status_code == 412
    assert admin_client.get("/api/v1/builds/adm-mixed").json()["accelerator_count"] == 4


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"accelerator": "rtx-4090"}, "(record)"),
        ({"accelerators_per_node": 5}, "(record)"),
        (
            {"accelerators": [{"accelerator": "rtx-3090", "count": 1},
                              {"accelerator": "no-such-card", "count": 1}]},
            "accelerators.1.accelerator",
        ),
        ({"accelerators": [{"accelerator": "rtx-3090", "count": 0}]}, "accelerators.0.count"),
        ({"host_memory_gb": 64}, "(record)"),
    ],
)
def test_inconsistent_groups_or_host_are_refused_naming_the_field(
    admin_client: TestClient, changes: dict[str, object], field: str
) -> None:
    response = admin_client.put("/api/v1/admin/builds/adm-mixed", json=_mixed_body(**changes))
    assert response.status_code == 422, response.text
    errors = response.json()["errors"]
    assert field in [e["field"] for e in errors], errors
    assert admin_client.get("/api/v1/builds/adm-mixed").status_code == 404


# Issue 14: a stored build carries both forms (accelerator x accelerators_per_node and
# accelerators; host_memory_gb and host.ram_gb). A merge patch that gives one form must let the
# other follow it, not be refused because the stored copy of the other still says the old value.
@pytest.mark.parametrize(
    ("patch", "accelerators"),
    [
        ({"accelerators_per_node": 2}, [("adm-rtx-4090", 2)]),
        ({"accelerator": "adm-h200"}, [("adm-h200", 4)]),
        (
            {"accelerators": [{"accelerator": "adm-h200", "count": 1},
                              {"accelerator": "adm-rtx-4090", "count": 2}]},
            [("adm-h200", 1), ("adm-rtx-4090", 2)],
        ),
    ],
)
def test_patch_of_one_form_of_the_groups_lets_the_other_follow(
    admin_client: TestClient, patch: dict[str, Any], accelerators: list[Any]
) -> None:
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}", json=patch, headers={"If-Match": etag}
    )
    assert response.status_code == 200, response.text
    record = admin_client.get(f"/api/v1/builds/{BUILD}").json()
    assert [(g["accelerator"], g["count"]) for g in record["accelerators"]] == accelerators
    assert record["accelerator"] == accelerators[0][0]


def test_patch_of_the_host_ram_by_either_name_lets_the_other_follow(
    admin_client: TestClient,
) -> None:
    for patch, ram_gb in (
        ({"host": {"ram_gb": 96, "ram_bandwidth_gbs": 89.6}}, 96),
        ({"host": {"ram_gb": 64}}, 64),
        ({"host_memory_gb": 48}, 48),
    ):
        etag = etag_of(admin_client, "builds", BUILD)
        response = admin_client.patch(
            f"/api/v1/admin/builds/{BUILD}", json=patch, headers={"If-Match": etag}
        )
        assert response.status_code == 200, (patch, response.text)
        record = admin_client.get(f"/api/v1/builds/{BUILD}").json()
        assert record["host_memory_gb"] == record["host"]["ram_gb"] == ram_gb
        assert record["host"]["ram_bandwidth_gbs"] == 89.6


def test_patch_of_the_card_count_alone_on_a_mixed_build_is_still_refused(
    admin_client: TestClient,
) -> None:
    # Which group would the new count belong to? The patch must say (give accelerators).
    etag = etag_of(admin_client, "builds", BUILD)
    groups = [{"accelerator": "adm-h200", "count": 1}, {"accelerator": "adm-rtx-4090", "count": 2}]
    admin_client.patch(f"/api/v1/admin/builds/{BUILD}", json={"accelerators": groups},
                       headers={"If-Match": etag})
    etag = etag_of(admin_client, "builds", BUILD)
    response = admin_client.patch(
        f"/api/v1/admin/builds/{BUILD}", json={"accelerators_per_node": 4},
        headers={"If-Match": etag},
    )
    assert response.status_code == 422
    assert "accelerators_per_node" in response.json()["detail"]
