"""ETag / If-None-Match on every GET, Cache-Control, and changes visible right after a commit."""

import pytest

from app.services.catalog import export_document, import_document

GETS = [
    "/api/v1/builds?tier=dgx",
    "/api/v1/builds/2x-dgx-h200-cluster",
    "/api/v1/builds.csv",
    "/api/v1/accelerators",
    "/api/v1/accelerators/rtx-4090",
    "/api/v1/accelerators.csv",
    "/api/v1/models",
    "/api/v1/models/deepseek-v3",
    "/api/v1/models.csv",
    "/api/v1/compare?builds=4x-rtx-4090-workstation,2x-dgx-h200-cluster",
    "/api/v1/recommend?model=llama-3-1-8b",
    "/api/v1/tiers",
]


@pytest.mark.parametrize("path", GETS)
def test_if_none_match_answers_304(api, path):
    first = api.get(path)
    assert first.status_code == 200
    etag = first.headers["etag"]
    assert etag.startswith('"') and "no-cache" in first.headers["cache-control"]
    again = api.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    weak = api.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
    assert weak.status_code == 304
    other = api.get(path, headers={"If-None-Match": '"something-else"'})
    assert other.status_code == 200 and other.content == first.content


def test_different_queries_have_different_etags(api):
    a = api.get("/api/v1/builds", params={"tier": "dgx"}).headers["etag"]
    b = api.get("/api/v1/builds", params={"tier": "cluster"}).headers["etag"]
    assert a != b


def _reprice(session, slug, price):
    document = export_document(session)
    for build in document["builds"]:
        if build["slug"] == slug:
            build["price_usd"] = price
    result = import_document(session, {"builds": document["builds"]}, actor="test")
    assert result.ok and [r.slug for r in result.updated] == [slug]


def test_a_committed_change_is_served_at_once_with_new_etags(client, session):
    slug = "4x-rtx-4090-workstation"
    list_before = client.get("/api/v1/builds", params={"q": "4090"})
    detail_before = client.get(f"/api/v1/builds/{slug}")
    tiers_before = client.get("/api/v1/tiers")
    old_price = detail_before.json()["price_usd"]

    # Written outside the app, as another worker (or the CLI) would: nothing tells this
    # process, yet the next request must see the change.
    _reprice(session, slug, old_price + 1234)

    list_after = client.get(
        "/api/v1/builds", params={"q": "4090"},
        headers={"If-None-Match": list_before.headers["etag"]},
    )
    assert list_after.status_code == 200
    item = next(i for i in list_after.json()["items"] if i["slug"] == slug)
    assert item["price_usd"] == old_price + 1234
    detail_after = client.get(
        f"/api/v1/builds/{slug}", headers={"If-None-Match": detail_before.headers["etag"]}
    )
    assert detail_after.status_code == 200
    assert detail_after.json()["version"] == detail_before.json()["version"] + 1
    assert detail_after.headers["etag"] == f'"{detail_after.json()["version"]}"'
    tiers_after = client.get("/api/v1/tiers")
    assert tiers_after.headers["etag"] != tiers_before.headers["etag"]


def test_a_second_app_on_the_same_database_sees_the_change(app, client, session, settings):
    from fastapi.testclient import TestClient

    from app.main import create_app

    slug = "2x-dgx-h200-cluster"
    with TestClient(create_app(settings)) as other:
        assert other.get(f"/api/v1/builds/{slug}").status_code == 200
        _reprice(session, slug, 1_000_000)
        assert other.get(f"/api/v1/builds/{slug}").json()["price_usd"] == 1_000_000
        assert client.get(f"/api/v1/builds/{slug}").json()["price_usd"] == 1_000_000
