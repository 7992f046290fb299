"""On PostgreSQL, NUL bytes, integers beyond 2^31 (and 2^63) and strings longer than a column are
refused with 4xx through the public API and the admin API, never a 500 from the database."""

import os
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.services.tokens import create_token
from tests.reliability.rel_support import seed_database

pytestmark = pytest.mark.postgres

NUL = "a\x00b"
BIG = 2**31 + 7
HUGE = 2**63 + 7
LONG = "x" * 100_000


@pytest.fixture(scope="module")
def hostile(postgres_factory) -> Iterator[tuple[TestClient, dict[str, str]]]:  # type: ignore[no-untyped-def]
    name = f"rel_hostile_{os.getpid()}"
    with postgres_factory.admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        conn.execute(text(f"CREATE DATABASE {name}"))
    url = postgres_factory.url(name)
    try:
        seed_database(url)
        engine = make_engine(url)
        with make_sessionmaker(engine)() as session:
            token = create_token(session, name="hostile")
        engine.dispose()
        app = create_app(Settings(database_url=url, seed_on_start=False, secret_key="test"))
        with TestClient(app, raise_server_exceptions=False) as client:
            client.headers["Authorization"] = f"Bearer {token}"
            builds = client.get("/api/v1/builds", params={"per_page": 2}).json()["items"]
            models = client.get("/api/v1/models", params={"per_page": 1}).json()["items"]
            slugs = {"build": builds[0]["slug"], "build2": builds[1]["slug"],
                     "model": models[0]["slug"]}
            yield client, slugs
    finally:
        postgres_factory.drop(name)


def _assert_4xx(response: Any, what: str) -> None:
    assert 400 <= response.status_code < 500, (
        f"{what}: {response.status_code} {response.text[:300]}"
    )


GET_CASES = [
    ("/api/v1/builds", {"q": NUL}),
    ("/api/v1/builds", {"q": LONG[:6000]}),
    ("/api/v1/builds", {"min_memory_gb": str(HUGE)}),
    ("/api/v1/builds", {"max_price_usd": "1e400"}),
    ("/api/v1/builds", {"page": str(BIG)}),
    ("/api/v1/builds", {"per_page": str(HUGE)}),
    ("/api/v1/builds", {"fits_model": NUL}),
    ("/api/v1/builds", {"sort": NUL}),
    ("/api/v1/builds.csv", {"q": NUL}),
    ("/api/v1/models", {"q": NUL}),
    ("/api/v1/accelerators", {"q": NUL}),
    ("/api/v1/builds/a%00b", {}),
    ("/api/v1/models/" + "x" * 5000, {}),
    ("/api/v1/compare", {"builds": f"{NUL},{NUL}"}),
    ("/api/v1/recommend", {"model": NUL}),
    ("/api/v1/recommend", {"model": "{model}", "context_tokens": str(HUGE)}),
    ("/api/v1/recommend", {"model": "{model}", "batch": str(BIG)}),
    ("/api/v1/admin/audit", {"page": str(HUGE)}),
    ("/api/v1/admin/audit/" + str(HUGE), {}),
    ("/api/v1/admin/audit", {"slug": NUL}),
    ("/api/v1/admin/audit", {"actor": NUL}),
    ("/api/v1/admin/builds/a%00b", {}),
    ("/api/v1/admin/models/a%00b", {}),
    ("/admin/audit", {"slug": NUL}),
    ("/admin/builds/a%00b", {}),
]


@pytest.mark.parametrize(("path", "params"), GET_CASES,
                         ids=[f"{p[:40]}?{','.join(q)}" for p, q in GET_CASES])
def test_hostile_query_is_4xx(hostile, path: str, params: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    client, slugs = hostile
    params = {k: v.replace("{model}", slugs["model"]) for k, v in params.items()}
    response = client.get(path, params=params)
    if path.endswith("/builds") and set(params) == {"page"}:
        # A page past the end is a valid, empty page.
        assert response.status_code in (200, 422), response.text[:300]
        return
    _assert_4xx(response, f"GET {path} {list(params)}")


ESTIMATE_MUTATIONS: list[tuple[str, dict[str, Any]]] = [
    ("nul-workload-precision", {"workload": {"precision": NUL}}),
    ("huge-context", {"workload": {"context_tokens": HUGE}}),
    ("big-batch", {"workload": {"batch": BIG}}),
    ("nul-slug", {"build": NUL}),
    ("inline-build-nul-name", {"build": {"name": NUL, "accelerators_per_node": 1,
                                         "accelerator": {"name": "x", "memory_gb": 24,
                                                         "memory_bandwidth_gbs": 1000,
                                                         "fp16_tflops": 100}}}),
    ("inline-build-huge-count", {"build": {"name": "x", "accelerators_per_node": HUGE,
                                           "accelerator": {"name": "x", "memory_gb": 24,
                                                           "memory_bandwidth_gbs": 1000,
                                                           "fp16_tflops": 100}}}),
    ("inline-model-huge-config", {"model": {"name": "x", "config": {
        "hidden_size": HUGE, "num_hidden_layers": HUGE, "num_attention_heads": 1,
        "vocab_size": HUGE}}}),
    ("inline-model-nul-config", {"model": {"name": "x", "config": {"model_type": NUL}}}),
]


@pytest.mark.parametrize(("label", "mutation"), ESTIMATE_MUTATIONS,
                         ids=[m[0] for m in ESTIMATE_MUTATIONS])
def test_hostile_estimate_is_4xx(hostile, label: str, mutation: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    client, slugs = hostile
    body: dict[str, Any] = {"build": slugs["build"], "model": slugs["model"], "workload": {}}
    body.update(mutation)
    _assert_4xx(client.post("/api/v1/estimate", json=body), f"estimate {label}")
    batch = client.post("/api/v1/estimate/batch", json=[body])
    if batch.status_code == 200:  # per-item answers: the item itself must be refused with a 4xx
        (item,) = batch.json()["results"]
        assert not item["ok"] and 400 <= item["error"]["status"] < 500, (label, item)
    else:
        _assert_4xx(batch, f"batch {label}")


def _admin_record(client: TestClient, slug: str) -> tuple[dict[str, Any], str]:
    response = client.get(f"/api/v1/admin/builds/{slug}")
    assert response.status_code == 200, response.text[:300]
    return response.json(), response.headers.get("etag", "")


BUILD_MUTATIONS: list[tuple[str, dict[str, Any]]] = [
    ("nul-name", {"name": NUL}),
    ("nul-notes", {"notes": NUL}),
    ("nul-failover", {"failover": NUL}),
    ("long-name", {"name": LONG[:5000]}),
    ("long-notes", {"notes": LONG}),
    ("long-scheduling", {"scheduling": LONG[:5000]}),
    ("big-accelerators-per-node", {"accelerators_per_node": BIG}),
    ("huge-nodes", {"nodes": HUGE}),
    ("huge-power", {"power_w": HUGE}),
    ("huge-host-memory", {"host_memory_gb": HUGE}),
    ("nul-source-url", {"source_url": "https://example.org/\x00"}),
]


@pytest.mark.parametrize(("label", "mutation"), BUILD_MUTATIONS,
                         ids=[m[0] for m in BUILD_MUTATIONS])
def test_hostile_admin_build_write_is_4xx(hostile, label: str, mutation: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    client, slugs = hostile
    record, etag = _admin_record(client, slugs["build2"])
    before = client.get(f"/api/v1/builds/{slugs['build2']}").json()
    body = {**record, **mutation}
    headers = {"If-Match": etag} if etag else {}
    _assert_4xx(client.put(f"/api/v1/admin/builds/{slugs['build2']}", json=body,
                           headers=headers), f"PUT build {label}")
    _assert_4xx(client.patch(f"/api/v1/admin/builds/{slugs['build2']}", json=mutation,
                             headers=headers), f"PATCH build {label}")
    _assert_4xx(client.post("/api/v1/admin/import", json={"builds": [body]}),
                f"import build {label}")
    # Refused means unchanged.
    assert client.get(f"/api/v1/builds/{slugs['build2']}").json() == before


CONFIG_MUTATIONS: list[tuple[str, dict[str, Any]]] = [
    ("nul-in-config-value", {"model_type": NUL}),
    ("nul-in-config-key", {"a\x00b": 1}),
    ("huge-hidden-size", {"hidden_size": HUGE}),
    ("long-config-string", {"model_type": LONG}),
]


@pytest.mark.parametrize(("label", "mutation"), CONFIG_MUTATIONS,
                         ids=[m[0] for m in CONFIG_MUTATIONS])
def test_hostile_model_config_never_500s(  # type: ignore[no-untyped-def]
    hostile, label: str, mutation: dict[str, Any]
) -> None:
    client, slugs = hostile
    response = client.get(f"/api/v1/admin/models/{slugs['model']}")
    assert response.status_code == 200
    record = response.json()
    record["config"] = {**record.get("config", {}), **mutation}
    etag = response.headers.get("etag", "")
    result = client.put(f"/api/v1/admin/models/{slugs['model']}", json=record,
                        headers={"If-Match": etag} if etag else {})
    assert result.status_code != 500 and result.status_code < 500, (label, result.text[:300])
    from_config = client.post("/api/v1/admin/models/from-config",
                              json={"slug": "hostile-model", "name": "Hostile",
                                    "config": record["config"],
                                    "source_url": "https://example.org/config.json",
                                    "as_of": "2024-01-01"})
    assert from_config.status_code < 500, (label, from_config.text[:300])
