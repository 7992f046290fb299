"""Admin page sessions: no public key can sign one, several workers share the generated key,
and signing out ends the session server-side (a copied cookie is worthless afterwards)."""

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.admin.session import SESSION_COOKIE
from app.config import Settings
from app.main import create_app
from app.models import AppSecret
from app.services.tokens import list_tokens
from tests.admin.test_admin_pages import csrf_of, sign_in

PUBLISHED_DEFAULT = "change-me-in-production"


def forged_cookie(secret_key: str, content: dict[str, object]) -> str:
    """A session cookie signed with `secret_key` by Starlette's own SessionMiddleware."""

    def plant(request: Request) -> PlainTextResponse:
        request.session.update(content)
        return PlainTextResponse("planted")

    forger = Starlette(
        routes=[Route("/admin/plant", plant)],
        middleware=[Middleware(SessionMiddleware, secret_key=secret_key,  # type: ignore[arg-type]
                               session_cookie=SESSION_COOKIE, path="/admin")],
    )
    with TestClient(forger) as client:
        response = client.get("/admin/plant")
    cookie = response.cookies.get(SESSION_COOKIE)
    assert cookie, "the forger did not set a cookie"
    return cookie


def default_settings(database_url: str) -> Settings:
    """What an operator gets without configuring a secret key."""
    return Settings(database_url=database_url, seed_on_start=False)


def test_the_published_placeholder_key_is_refused() -> None:
    with pytest.raises(ValidationError, match="secret_key"):
        Settings(secret_key=PUBLISHED_DEFAULT)


def test_cookie_signed_with_the_old_public_default_opens_nothing(
    database_url: str, admin_token: str, session: Session
) -> None:
    token_id = list_tokens(session)[0].id
    with TestClient(create_app(default_settings(database_url))) as client:
        csrf = "x" * 43
        client.cookies.set(
            SESSION_COOKIE,
            forged_cookie(PUBLISHED_DEFAULT, {"admin_token_id": token_id, "csrf": csrf}),
            path="/admin",
        )
        assert client.get("/admin", follow_redirects=False).status_code == 303
        response = client.post("/admin/create/builds", data={"csrf_token": csrf},
                               follow_redirects=False)
        assert response.status_code in (401, 403), response.status_code


def test_cookie_signed_with_the_real_key_still_needs_a_live_session(
    database_url: str, admin_token: str, session: Session
) -> None:
    # Even someone who learns the signing key cannot mint a session: the cookie must name a
    # server-side session, and token ids (sequential, guessable) are not sessions.
    key = "a-configured-secret-key-of-some-length"
    settings = Settings(database_url=database_url, seed_on_start=False, secret_key=key)
    token_id = list_tokens(session)[0].id
    with TestClient(create_app(settings)) as client:
        for content in ({"admin_token_id": token_id}, {"admin_session": str(token_id)}):
            client.cookies.set(SESSION_COOKIE, forged_cookie(key, content), path="/admin")
            assert client.get("/admin", follow_redirects=False).status_code == 303, content


def test_generated_key_is_kept_in_the_database_and_shared_by_workers(
    database_url: str, admin_token: str, session: Session
) -> None:
    # Two apps on one database stand for two workers (or hosts) started without a key.
    first = create_app(default_settings(database_url))
    second = create_app(default_settings(database_url))
    with TestClient(first) as one, TestClient(second) as two:
        sign_in(one, admin_token)
        cookie = one.cookies.get(SESSION_COOKIE)
        assert cookie
        two.cookies.set(SESSION_COOKIE, cookie, path="/admin")
        assert two.get("/admin", follow_redirects=False).status_code == 200
    session.rollback()
    secrets = list(session.scalars(select(AppSecret.value)))
    assert len(secrets) == 1 and len(secrets[0]) >= 43  # one key, 256 random bits or more
    assert secrets[0] != PUBLISHED_DEFAULT


def test_logout_ends_the_session_for_every_copy_of_the_cookie(
    client: TestClient, admin_token: str
) -> None:
    sign_in(client, admin_token)
    copied = client.cookies.get(SESSION_COOKIE)
    csrf = csrf_of(client, "/admin")
    assert copied
    response = client.post("/admin/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert response.status_code == 303
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, copied, path="/admin")
    assert client.get("/admin", follow_redirects=False).status_code == 303
    # The copy still carries a valid CSRF token, and still changes nothing.
    attempt = client.post("/admin/create/builds", data={"csrf_token": csrf, "slug": "x"},
                          follow_redirects=False)
    assert attempt.status_code in (401, 403), attempt.status_code


def test_sign_in_after_logout_starts_a_new_session(
    client: TestClient, admin_token: str, session: Session
) -> None:
    from app.models import AdminSession

    sign_in(client, admin_token)
    client.post("/admin/logout", data={"csrf_token": csrf_of(client, "/admin")})
    sign_in(client, admin_token)
    assert client.get("/admin", follow_redirects=False).status_code == 200
    session.rollback()
    live = session.scalar(
        select(func.count()).select_from(AdminSession).where(AdminSession.ended_at.is_(None))
    )
    assert live == 1


# ---- the session is checked before a page POST's body is read -----------------------------------


def _oversized_import(client: TestClient, csrf: str) -> int:
    """POST to /admin/import a body past max_import_bytes: 413 once the body is read."""
    body = {"csrf_token": csrf, "text": "x" * 5000, "action": "preview"}
    return client.post("/admin/import", data=body, follow_redirects=False).status_code


def _small_import_settings(database_url: str, **overrides: object) -> Settings:
    return Settings(database_url=database_url, seed_on_start=False, max_import_bytes=1000,
                    **overrides)  # type: ignore[arg-type]


def test_a_forged_cookie_is_refused_before_the_body_is_read(
    database_url: str, admin_token: str, session: Session
) -> None:
    # 401, not 413: the cookie (signed with a key the server does not use) is judged first, so
    # no one without a session makes the server take in an import-sized body.
    token_id = list_tokens(session)[0].id
    settings = _small_import_settings(database_url)
    with TestClient(create_app(settings)) as client:
        forged = forged_cookie(PUBLISHED_DEFAULT, {"admin_session": str(token_id), "csrf": "x"})
        client.cookies.set(SESSION_COOKIE, forged, path="/admin")
        assert _oversized_import(client, "x") == 401


def test_an_ended_session_is_refused_before_the_body_is_read(
    database_url: str, admin_token: str
) -> None:
    with TestClient(create_app(_small_import_settings(database_url))) as client:
        sign_in(client, admin_token)
        copied = client.cookies.get(SESSION_COOKIE)
        csrf = csrf_of(client, "/admin")
        assert copied
        assert _oversized_import(client, csrf) == 413  # signed in: the body limit applies
        client.post("/admin/logout", data={"csrf_token": csrf}, follow_redirects=False)
        client.cookies.clear()
        client.cookies.set(SESSION_COOKIE, copied, path="/admin")
        assert _oversized_import(client, csrf) == 401
