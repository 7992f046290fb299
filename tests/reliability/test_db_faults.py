"""Database faults: with the database down or hanging, every route answers quickly with 503 (or
does not need the database), never 500; once it is back the same app serves again.

The database here is a private PostgreSQL cluster the test stops and starts (see conftest.py),
never the shared instance.
"""

import socket
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.models import Accelerator, Build, ModelProfile
from tests.reliability.rel_support import app_routes, fill_path, seed_database

pytestmark = pytest.mark.postgres

# "Within a few seconds": the app's connect timeout is 2 s here; anything near this bound means
# a request hung on the database instead of failing fast.
ANSWER_WITHIN_S = 8.0
# Routes that answer without the database (documentation, the OpenAPI document, static text).
NO_DATABASE_NEEDED = ("/openapi.json", "/docs", "/docs/init.js")
# Routes that must report the outage themselves.
MUST_REPORT = ("/healthz", "/api/v1/builds", "/")


def _slugs(url: str) -> dict[str, str]:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return {
                "builds": session.scalars(select(Build.slug).limit(1)).one(),
                "accelerators": session.scalars(select(Accelerator.slug).limit(1)).one(),
                "models": session.scalars(select(ModelProfile.slug).limit(1)).one(),
            }
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def faults(private_cluster) -> Iterator[tuple[TestClient, list[str], object]]:  # type: ignore[no-untyped-def]
    url = private_cluster.create_database("rel_faults")
    seed_database(url)
    slugs = _slugs(url)
    settings = Settings(
        database_url=url, seed_on_start=False, secret_key="test-secret", db_connect_timeout_s=2
    )
    app = create_app(settings)
    paths = []
    for path, methods in app_routes(app):
        if "GET" in methods and not path.startswith("/docs/assets"):
            filled = fill_path(path, slugs)
            if filled is not None:
                paths.append(filled)
    with TestClient(app, raise_server_exceptions=False, follow_redirects=False) as client:
        yield client, paths, private_cluster
    if not private_cluster.is_running():
        private_cluster.start()


def _check_down(client: TestClient, path: str) -> None:
    start = time.monotonic()
    response = client.get(path)
    elapsed = time.monotonic() - start
    assert elapsed < ANSWER_WITHIN_S, f"{path} took {elapsed:.1f}s with the database down"
    assert response.status_code != 500, f"{path}: 500 with the database down: {response.text[:300]}"
    if response.status_code == 503:
        assert response.headers.get("retry-after"), f"{path}: 503 without Retry-After"
        ctype = response.headers["content-type"]
        # JSON twins of pages (/about.json, /estimate.json) answer as JSON, errors included.
        if path.startswith("/api/") or path in ("/healthz", "/metrics") or path.endswith(".json"):
            assert ctype.startswith(("application/problem+json", "application/json")), path
        else:
            assert ctype.startswith("text/html"), f"{path}: a page answered {ctype}"
    elif path not in NO_DATABASE_NEEDED and path != "/metrics":
        # Anything else may only answer without the database if it truly does not use it:
        # redirects and auth challenges are fine, a 200 from a catalog page is not.
        assert response.status_code in (200, 303, 308, 401, 404, 422), (path, response.status_code)
    if path in MUST_REPORT:
        assert response.status_code == 503, (path, response.status_code)


def test_database_down_then_back(faults) -> None:  # type: ignore[no-untyped-def]
    client, paths, cluster = faults
    for path in MUST_REPORT:
        if path in paths:
            assert client.get(path).status_code == 200, path

    cluster.stop()
    try:
        for path in paths:
            _check_down(client, path)
        health = client.get("/healthz").json()
        assert health["database"] == "unreachable"
        metrics = client.get("/metrics")
        assert metrics.status_code == 200
        assert "tierline_database_up 0.0" in metrics.text
        # A page asked for as HTML gets the friendly page, the API problem+json.
        page = client.get("/", headers={"accept": "text/html"})
        if page.status_code == 503:
            assert "<html" in page.text.lower()
        problem = client.get("/api/v1/builds")
        if problem.status_code == 503:
            assert problem.json()["status"] == 503
    finally:
        cluster.start()

    # The same app, without a restart: the pool drops dead connections (pre-ping) and reconnects.
    for path in MUST_REPORT:
        if path in paths:
            response = client.get(path)
            assert response.status_code == 200, (path, response.status_code, response.text[:200])
    assert client.get("/healthz").json()["database"] == "ok"
    assert "tierline_database_up 1.0" in client.get("/metrics").text


@pytest.fixture
def blackhole() -> Iterator[int]:
    """A TCP port that accepts connections into its backlog and never says a word."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    for port in range(55400, 55500):
        try:
            sock.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    sock.listen(64)
    yield sock.getsockname()[1]
    sock.close()


def test_hanging_database_answers_503_within_the_connect_timeout(blackhole: int) -> None:
    url = f"postgresql+psycopg://postgres@127.0.0.1:{blackhole}/nothing"
    settings = Settings(
        database_url=url, seed_on_start=False, secret_key="test-secret", db_connect_timeout_s=1
    )
    app = create_app(settings)
    served = {path for path, _ in app_routes(app)}
    with TestClient(app, raise_server_exceptions=False) as client:
        for path in [p for p in MUST_REPORT if p in served]:
            start = time.monotonic()
            response = client.get(path)
            elapsed = time.monotonic() - start
            assert response.status_code == 503, (path, response.status_code, response.text[:200])
            assert response.headers.get("retry-after")
            assert elapsed < ANSWER_WITHIN_S, f"{path} hung {elapsed:.1f}s on a silent database"
