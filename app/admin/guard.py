"""Admin credentials checked before a request body is read (EdgeMiddleware calls this)."""

import anyio
from starlette.types import Scope

from app.admin.session import ADMIN_PREFIX, SESSION_COOKIE
from app.deps import admin_token_required
from app.errors import Forbidden
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


async def authenticate_before_body(scope: Scope) -> None:
    """Refuse an admin request that carries a body before a byte of it is read or parsed.

    Under /api/v1/admin the Bearer token is verified here (so a bad body without a token is 401,
    not 400/422, and no one unauthenticated makes the server buffer a 10 MiB import). Admin
    pages sign in with a cookie whose session is checked inside the app; a POST arriving without
    that cookie could pass neither that check nor CSRF, so it is refused here already (401, or
    403 on sign-in and sign-out, which need the CSRF token only).
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
    elif (path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")) and not (
        _has_session_cookie(scope)
    ):
        if path in CSRF_ONLY_PAGES:
            raise Forbidden(
                "this form's security token is missing (the sign-in cookie did not arrive); "
                "open the page again and resubmit it"
            )
        raise admin_token_required()
