"""/healthz: 200 with the database status, 503 when the database is unreachable."""

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app


def test_healthz_reports_the_database_and_catalog_version(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert body["catalog_version"] >= 1


def test_healthz_answers_503_when_the_database_is_unreachable() -> None:
    # Port 9 (discard) refuses connections at once on this machine.
    settings = Settings(
        database_url="postgresql+psycopg://postgres@127.0.0.1:9/none",
        seed_on_start=False,
        db_connect_timeout_s=1,
    )
    with TestClient(create_app(settings)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"
    assert response.headers["retry-after"]
