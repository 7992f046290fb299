"""Admin credentials checked before a request body is read (EdgeMiddleware calls this)."""

from typing import Any

import anyio
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import Message, Receive, Scope, Send

from app.admin.session import ADMIN_PREFIX, SESSION_COOKIE
from app.deps import ADMIN_SESSION_KEY, admin_token_required
from app.errors import Forbidden
from app.services.admin_sessions import session_token
from app.services.app_secrets import SESSION_SIGNING_KEY, shared_secret
from app.services.tokens import verify_token

# Sign-in and sign-out need no session, only the CSRF token kept in the cookie.
CSRF_ONLY_PAGES = frozenset({f"{ADMIN_PREFIX}/login", f"{ADMIN_PREFIX}/logout"})

ADMIN_API_PREFIX = "/api/v1/admin"


def _bearer(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            return credentials.strip() if scheme.lower() == "bearer" else ""
    return ""


def _has_session_cookie(scope: Scope) -> bool:
    prefix = f"{SESSION_COOKIE}=".encode()
    return any(
        name == b"cookie" and any(p.strip().startswith(prefix) for p in value.split(b";"))
        for name, value in scope.get("headers", ())
    )


async def _signed_in(scope: Scope) -> bool:
    """Whether the request's session cookie is validly signed and names a live session.

    The cookie is decoded by Starlette's own SessionMiddleware (with the key AdminSessionMiddleware
    signs with), run on a copy of the scope with no body and nothing sent, so the format stays
    Starlette's business; the session is then looked up as `require_admin` does.
    """
    state = scope["app"].state
    settings, sessionmaker = state.settings, state.sessionmaker

    def signing_key() -> str:
        with sessionmaker() as db:
            return shared_secret(db, SESSION_SIGNING_KEY)

    key = settings.secret_key or await anyio.to_thread.run_sync(signing_key)
    decoded: dict[str, Any] = {}

    async def keep_session(inner: Scope, _receive: Receive, _send: Send) -> None:
        decoded.update(inner.get("session") or {})

    async def no_body() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send_nothing(_message: Message) -> None:
        return None

    reader = SessionMiddleware(keep_session, secret_key=key, session_cookie=SESSION_COOKIE,
                               max_age=settings.admin_session_max_age_s)
    await reader({**scope, "type": "http"}, no_body, send_nothing)
    session_id = decoded.get(ADMIN_SESSION_KEY)
    if not isinstance(session_id, str):
        return False

    def live() -> bool:
        with sessionmaker() as db:
            return session_token(db, session_id) is not None

    return await anyio.to_thread.run_sync(live)


async def authenticate_before_body(scope: Scope) -> None:
    """Refuse an admin request that carries a body before a byte of it is read or parsed.

    Under /api/v1/admin the Bearer token is verified here (so a bad body without a token is 401,
    not 400/422, and no one unauthenticated makes the server buffer a 10 MiB import). Admin
    pages sign in with a cookie: a POST is refused here (401) unless the cookie is validly signed
    and names a live session, so a forged or stale cookie never makes the server buffer a 10 MiB
    import either. Sign-in and sign-out need the CSRF token only: without the cookie, 403.
    """
    path: str = scope["path"]
    if path == ADMIN_API_PREFIX or path.startswith(ADMIN_API_PREFIX + "/"):
        presented = _bearer(scope)
        sessionmaker = scope["app"].state.sessionmaker

        def verify() -> bool:
            with sessionmaker() as db:
                return verify_token(db, presented) is not None

        if not presented or not await anyio.to_thread.run_sync(verify):
            raise admin_token_required()
    elif path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/"):
        if path in CSRF_ONLY_PAGES:
            if not _has_session_cookie(scope):
                raise Forbidden(
                    "this form's security token is missing (the sign-in cookie did not arrive); "
                    "open the page again and resubmit it"
                )
        elif not _has_session_cookie(scope) or not await _signed_in(scope):
            raise admin_token_required()
