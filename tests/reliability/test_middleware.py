"""Security headers on every response, request-body limits, request logs, the catch-all handler."""

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.config import Settings
from app.main import create_app
from app.middleware.admission import BodySizeLimitMiddleware
from app.middleware.edge import CONTENT_SECURITY_POLICY
from app.services.tokens import create_token


class Payload(BaseModel):
    name: str


def add_test_routes(app: FastAPI) -> None:
    """Test-only routes on this test's own app instance: a failing route, an echo route."""

    @app.get("/api/v1/_test/boom")
    def api_boom() -> None:
        raise RuntimeError('boom in /srv/app/secret.py: SELECT password FROM "user"')

    @app.get("/_test/boom")
    def page_boom() -> None:
        raise RuntimeError('boom in /srv/app/secret.py: SELECT password FROM "user"')

    @app.post("/api/v1/_test/echo")
    def echo(payload: Payload) -> dict[str, str]:
        return {"name": payload.name}

    @app.get("/api/v1/_test/items/{item}")
    def item(item: str) -> dict[str, str]:
        return {"item": item}


@pytest.fixture
def app_client(settings: Settings) -> Iterator[TestClient]:
    small = settings.model_copy(update={"max_body_bytes": 1000, "max_import_bytes": 5000})
    app = create_app(small)
    add_test_routes(app)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _assert_security_headers(response) -> None:  # type: ignore[no-untyped-def]
    headers = response.headers
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"]


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/healthz", {}, 200),
        ("GET", "/api/v1/no-such-thing", {}, 404),
        ("GET", "/no-such-page", {"headers": {"accept": "text/html"}}, 404),
        ("POST", "/api/v1/_test/echo", {"content": b"{not json", "headers": {
            "content-type": "application/json"}}, 422),
        ("POST", "/api/v1/_test/echo", {"content": b"x" * 2000}, 413),
        ("GET", "/api/v1/_test/boom", {}, 500),
        ("GET", "/_test/boom", {"headers": {"accept": "text/html"}}, 500),
        ("GET", "/metrics", {}, 200),
        ("GET", "/docs", {}, 200),
    ],
)
def test_security_headers_on_every_response(app_client, method, path, kwargs, status) -> None:  # type: ignore[no-untyped-def]
    response = app_client.request(method, path, **kwargs)
    assert response.status_code == status, response.text[:300]
    _assert_security_headers(response)


def test_declared_body_over_the_limit_is_refused_with_413(app_client) -> None:  # type: ignore[no-untyped-def]
    response = app_client.post("/api/v1/_test/echo", content=b'{"name": "' + b"a" * 2000 + b'"}',
                               headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 413


def test_body_under_the_limit_reaches_the_route(app_client) -> None:  # type: ignore[no-untyped-def]
    response = app_client.post("/api/v1/_test/echo", json={"name": "a" * 900})
    assert response.status_code == 200
    assert response.json() == {"name": "a" * 900}


def test_import_route_has_the_larger_limit(app_client, session) -> None:  # type: ignore[no-untyped-def]
    body = {"accelerators": [], "padding": "x" * 3000}  # over the default limit, under imports'
    assert app_client.post("/api/v1/_test/echo", json=body).status_code == 413
    auth = {"Authorization": f"Bearer {create_token(session, name='limits')}"}
    # Not 413: the import route's own limit applies (422: "padding" is no catalog key).
    assert app_client.post("/api/v1/admin/import", json=body, headers=auth).status_code == 422
    body["padding"] = "x" * 6000
    assert app_client.post("/api/v1/admin/import", json=body, headers=auth).status_code == 413
    # Without a token, the credentials are refused before the size is even looked at.
    assert app_client.post("/api/v1/admin/import", json=body).status_code == 401


def test_streamed_body_stops_being_read_past_the_limit() -> None:
    """Without a Content-Length, chunks are counted and reading stops at the first one too many."""
    reached_app = False

    async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        nonlocal reached_app
        reached_app = True

    chunks_read = 0

    async def receive():  # type: ignore[no-untyped-def]
        nonlocal chunks_read
        chunks_read += 1
        return {"type": "http.request", "body": b"x" * 100, "more_body": chunks_read < 1000}

    sent: list[dict] = []  # type: ignore[type-arg]

    async def send(message) -> None:  # type: ignore[no-untyped-def]
        sent.append(message)

    middleware = BodySizeLimitMiddleware(app, max_body_bytes=1000, max_import_bytes=5000)
    scope = {"type": "http", "method": "POST", "path": "/api/v1/x", "headers": [],
             "query_string": b"", "root_path": "", "scheme": "http", "server": None,
             "app": create_app(Settings(database_url="sqlite://"))}
    asyncio.run(middleware(scope, receive, send))
    assert not reached_app
    assert chunks_read == 11  # 10 chunks fill the limit exactly; the 11th goes past it
    assert sent[0]["status"] == 413


def test_unhandled_error_is_a_500_without_details(app_client) -> None:  # type: ignore[no-untyped-def]
    api = app_client.get("/api/v1/_test/boom")
    assert api.status_code == 500
    assert api.headers["content-type"].startswith("application/problem+json")
    page = app_client.get("/_test/boom", headers={"accept": "text/html"})
    assert page.status_code == 500
    assert page.headers["content-type"].startswith("text/html")
    for body in (api.text, page.text):
        for leak in ("secret.py", "SELECT", "password", "Traceback", "RuntimeError"):
            assert leak not in body


def test_unhandled_error_is_logged_with_its_traceback(app_client, caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.ERROR, logger="tierline.error"):
        response = app_client.get("/api/v1/_test/boom")
    records = [r for r in caplog.records if r.name == "tierline.error"]
    assert records and records[0].exc_info is not None
    assert records[0].fields["request_id"] == response.headers["x-request-id"]  # type: ignore[attr-defined]
    assert response.headers["x-request-id"] in response.json()["detail"]


def test_request_log_is_one_json_line_per_request(app_client, caplog) -> None:  # type: ignore[no-untyped-def]
    from app.middleware.logs import JsonFormatter

    with caplog.at_level(logging.INFO, logger="tierline.access"):
        response = app_client.get("/api/v1/_test/items/abc", headers={"x-request-id": "req-123"})
    assert response.headers["x-request-id"] == "req-123"
    records = [r for r in caplog.records if r.name == "tierline.access"]
    assert len(records) == 1
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["method"] == "GET"
    assert line["path"] == "/api/v1/_test/items/abc"
    assert line["route"] == "/api/v1/_test/items/{item}"
    assert line["status"] == 200
    assert line["request_id"] == "req-123"
    assert isinstance(line["duration_ms"], float)


def test_unsafe_request_id_is_replaced(app_client) -> None:  # type: ignore[no-untyped-def]
    response = app_client.get("/healthz", headers={"x-request-id": "bad id\x7f<script>"})
    assert response.headers["x-request-id"] != "bad id\x7f<script>"
    assert len(response.headers["x-request-id"]) == 32


def test_docs_load_nothing_from_other_hosts(app_client) -> None:  # type: ignore[no-untyped-def]
    page = app_client.get("/docs")
    assert page.status_code == 200
    assert "http://" not in page.text and "https://" not in page.text
    assert "<script>" not in page.text  # only <script src=...>: no inline script under the CSP
    for asset in ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css",
                  "/docs/init.js"):
        assert app_client.get(asset).status_code == 200, asset


def test_hsts_is_sent_over_https_only(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"hsts_max_age_s": 86400}))
    with TestClient(app, base_url="https://testserver") as secure:
        for path in ("/healthz", "/", "/api/v1/builds", "/no-such-page"):
            assert secure.get(path).headers.get("strict-transport-security") == "max-age=86400"
    with TestClient(app) as plain:
        assert "strict-transport-security" not in plain.get("/healthz").headers
    off = create_app(settings.model_copy(update={"hsts_max_age_s": 0}))
    with TestClient(off, base_url="https://testserver") as secure:
        assert "strict-transport-security" not in secure.get("/healthz").headers
