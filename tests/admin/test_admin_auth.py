"""Admin authentication: Bearer tokens, and no write route without the admin dependency."""

import re
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.deps import require_admin
from app.services.tokens import revoke_token
from tests.admin.conftest import BUILDS

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# Sign-in and sign-out cannot require a session; they are CSRF-checked instead.
CSRF_ONLY = {("POST", "/admin/login"), ("POST", "/admin/logout")}
# POSTs that compute an answer and write nothing. Adding a route here is a reviewed decision.
READ_ONLY_POSTS = {
    ("POST", "/api/v1/estimate"),
    ("POST", "/api/v1/estimate/batch"),
    ("POST", "/api/v1/serving"),
}


def _calls(dependant: Any) -> set[Any]:
    calls = set()
    for dep in dependant.dependencies:
        calls.add(dep.call)
        calls |= _calls(dep)
    return calls


def _write_routes(app: FastAPI) -> list[tuple[str, Any]]:
    # FastAPI composes included routers lazily; iter_route_contexts yields each effective route
    # with its full path and the dependencies its routers add.
    routes = []
    for context in iter_route_contexts(app.routes):
        for method in sorted(context.methods or ()):
            if method in WRITE_METHODS:
                routes.append((method, context))
    return routes


def test_every_write_route_requires_the_admin_dependency(app: FastAPI) -> None:
    from app.admin.csrf import verified_form

    unprotected = []
    for method, route in _write_routes(app):
        key = (method, route.path)
        if key in READ_ONLY_POSTS:
            assert not route.path.startswith(("/admin", "/api/v1/admin")), key
            continue
        if not isinstance(route.original_route, APIRoute):
            unprotected.append(f"{method} {route.path} (not an APIRoute; cannot verify)")
            continue
        calls = _calls(route.dependant)
        if key in CSRF_ONLY:
            if verified_form not in calls:
                unprotected.append(f"{method} {route.path} lacks the CSRF check")
        elif require_admin not in calls:
            unprotected.append(f"{method} {route.path} lacks AdminDep")
        if route.path.startswith("/admin") and verified_form not in calls:
            unprotected.append(f"{method} {route.path} (a page form) lacks the CSRF check")
    assert not unprotected, unprotected
    assert any(route.path == "/api/v1/admin/import" for _, route in _write_routes(app))


def test_every_write_route_answers_401_without_a_token(client: TestClient, app: FastAPI) -> None:
    checked = 0
    for method, route in _write_routes(app):
        key = (method, route.path)
        if key in READ_ONLY_POSTS:
            continue
        path = re.sub(r"\{[^}]*:int\}|\{event_id\}", "1", route.path)
        path = re.sub(r"\{[^}]+\}", "adm-4x-4090", path)
        response = client.request(method, path, json={})
        expected = 403 if key in CSRF_ONLY else 401
        assert response.status_code == expected, (method, path, response.status_code)
        checked += 1
    assert checked >= 12


def test_missing_token_is_401_with_www_authenticate(client: TestClient) -> None:
    response = client.get("/api/v1/admin/builds/adm-4x-4090")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    "header",
    ["Bearer wrong-token", "Bearer ", "Basic YWxpY2U6c2VjcmV0", "Bearer " + "x" * 10_000, "tl_"],
)
def test_wrong_tokens_are_401(client: TestClient, admin_token: str, header: str) -> None:
    response = client.put(
        "/api/v1/admin/builds/adm-4x-4090", json=BUILDS[0], headers={"Authorization": header}
    )
    assert response.status_code == 401


def test_the_token_without_bearer_prefix_is_refused(client: TestClient, admin_token: str) -> None:
    response = client.get(
        "/api/v1/admin/builds/adm-4x-4090", headers={"Authorization": admin_token}
    )
    assert response.status_code == 401


def test_revoked_token_is_401(client: TestClient, auth: dict[str, str], session: Session) -> None:
    assert client.get("/api/v1/admin/builds/adm-4x-4090", headers=auth).status_code == 200
    revoke_token(session, name="alice")
    assert client.get("/api/v1/admin/builds/adm-4x-4090", headers=auth).status_code == 401


def test_a_valid_token_records_last_use(
    client: TestClient, auth: dict[str, str], session: Session
) -> None:
    from app.services.tokens import list_tokens

    assert list_tokens(session)[0].last_used_at is None
    client.get("/api/v1/admin/audit", headers=auth)
    session.expire_all()
    assert list_tokens(session)[0].last_used_at is not None


@pytest.mark.parametrize("body", [b"{not json", b'{"price_usd": "many"}', b"[]"])
def test_admin_write_without_a_token_is_401_whatever_its_body(
    client: TestClient, body: bytes
) -> None:
    # Credentials come first: an unauthenticated client learns nothing from body errors.
    for method in ("PUT", "PATCH"):
        response = client.request(method, "/api/v1/admin/builds/adm-4x-4090", content=body,
                                  headers={"Content-Type": "application/json",
                                           "Authorization": "Bearer tl_wrong"})
        assert response.status_code == 401, (method, body, response.status_code)
