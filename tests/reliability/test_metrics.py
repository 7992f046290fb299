"""`GET /metrics`: Prometheus text with per-route-template request metrics, engine evaluations and
the catalog version read from the database; aggregated across workers under `serve --workers`."""

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.config import Settings
from app.main import create_app
from app.metrics import count_engine_evaluations
from app.services.catalog import export_document, import_document
from tests._servers import served


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus exposition (0 when absent)."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


@pytest.fixture
def metrics_client(settings: Settings) -> Iterator[TestClient]:
    app = create_app(settings)

    @app.get("/api/v1/_test/items/{item}")
    def item(item: str) -> dict[str, str]:
        return {"item": item}

    with TestClient(app) as client:
        yield client


def test_requests_are_counted_per_route_template(metrics_client) -> None:  # type: ignore[no-untyped-def]
    name = "tierline_http_requests_total"
    labels = {"method": "GET", "route": "/api/v1/_test/items/{item}", "status": "200"}
    before = sample(metrics_client.get("/metrics").text, name, **labels)
    for value in ("alpha", "beta", "gamma"):
        assert metrics_client.get(f"/api/v1/_test/items/{value}").status_code == 200
    text = metrics_client.get("/metrics").text
    assert sample(text, name, **labels) == before + 3
    # Raw paths never become labels: cardinality stays bounded whatever clients send.
    assert "alpha" not in text and "gamma" not in text
    count = sample(text, "tierline_http_request_duration_seconds_count",
                   method="GET", route="/api/v1/_test/items/{item}")
    assert count >= 3


def test_unknown_paths_share_one_label(metrics_client) -> None:  # type: ignore[no-untyped-def]
    for i in range(3):
        metrics_client.get(f"/api/v1/random-{i}")
    text = metrics_client.get("/metrics").text
    assert "random-" not in text
    assert sample(text, "tierline_http_requests_total", route="<unmatched>", status="404") >= 3


def test_engine_evaluations_are_counted(metrics_client) -> None:  # type: ignore[no-untyped-def]
    before = sample(metrics_client.get("/metrics").text, "tierline_engine_evaluations_total")
    count_engine_evaluations(4)
    after = sample(metrics_client.get("/metrics").text, "tierline_engine_evaluations_total")
    assert after == before + 4


def test_catalog_version_is_read_from_the_database(metrics_client, session) -> None:  # type: ignore[no-untyped-def]
    from app.catalog_version import current_catalog_version

    text = metrics_client.get("/metrics").text
    assert sample(text, "tierline_database_up") == 1
    assert sample(text, "tierline_catalog_version") == current_catalog_version(session)
    # A write made elsewhere (another worker, the CLI) shows at the next scrape.
    document = export_document(session)
    build = document["builds"][0]
    build["notes"] = (build.get("notes") or "") + " (edited for the metrics test)"
    result = import_document(session, {"builds": [build]}, actor="test")
    assert result.ok and result.updated
    text = metrics_client.get("/metrics").text
    assert sample(text, "tierline_catalog_version") == current_catalog_version(session)



# Generous: under a loaded machine a request may queue, but an answer must come.
REQUEST_TIMEOUT_S = 30.0


def test_two_workers_report_the_same_aggregated_counts(database_url: str, tmp_path: Path) -> None:
    """`tierline serve --workers 2`: any worker's scrape covers the requests of both."""
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(TIERLINE_DATABASE_URL=database_url, TIERLINE_SEED_ON_START="false",
               TIERLINE_LOG_LEVEL="warning")
    with served(["--no-migrate", "--workers", "2"], env, tmp_path / "serve.log") as server:
        served_count = 40
        # Fresh connections so the kernel spreads them over both workers.
        with httpx.Client(base_url=server.base_url, timeout=REQUEST_TIMEOUT_S,
                          headers={"connection": "close"}) as client:
            for _ in range(served_count):
                response = client.get("/openapi.json")
                assert response.status_code == 200, server.log_tail()
            scrapes = [client.get("/metrics").text for _ in range(6)]
        for text in scrapes:
            counted = sample(text, "tierline_http_requests_total",
                             method="GET", route="/openapi.json", status="200")
            assert counted == served_count, "a scrape saw one worker's counts only"
