"""FastAPI dependencies as Annotated aliases."""

from collections.abc import Iterator
from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from app.config import Settings
from app.errors import Unauthorized
from app.services.admin_sessions import session_token
from app.services.tokens import mark_used, verify_token


def get_settings_dep(request: Request) -> Settings:
    """The settings the app was created with."""
    return request.app.state.settings  # type: ignore[no-any-return]


def get_session(request: Request) -> Iterator[Session]:
    """A session per request; reads never commit, write services commit once."""
    session: Session = request.app.state.sessionmaker()
    try:
        yield session
    finally:
        session.close()


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]


# ---- admin authentication -------------------------------------------------------------------

# The signed cookie holds a random server-side session id (app/services/admin_sessions.py), never
# a token id: a cookie is only as good as a live session row.
ADMIN_SESSION_KEY = "admin_session"


def require_admin(request: Request) -> str:
    """The admin token's name: `Authorization: Bearer <token>`, or the signed session on pages."""
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    is_page = not request.url.path.startswith("/api/")
    with request.app.state.sessionmaker() as db:
        if scheme.lower() == "bearer" and credentials.strip():
            token = verify_token(db, credentials.strip())
            if token is not None:
                return token.name
        # The cookie only counts on pages (which check CSRF); the JSON API takes Bearer tokens
        # alone, so a cross-site request can never ride on a browser's session.
        elif is_page and "session" in request.scope:
            session_id = request.session.get(ADMIN_SESSION_KEY)
            token = session_token(db, session_id) if isinstance(session_id, str) else None
            if token is not None:
                mark_used(db, token)
                return token.name
            request.session.pop(ADMIN_SESSION_KEY, None)
    if is_page and request.method in ("GET", "HEAD") and not header:
        raise HTTPException(
            status_code=303, headers={"Location": f"/admin/login?next={quote(request.url.path)}"}
        )
    raise admin_token_required()


def admin_token_required() -> Unauthorized:
    """The 401 every admin route answers without valid credentials."""
    return Unauthorized(
        "a valid admin token is required (Authorization: Bearer <token>)",
        headers={"WWW-Authenticate": 'Bearer realm="tierline admin"'},
    )


AdminDep = Annotated[str, Depends(require_admin)]

