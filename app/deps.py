"""FastAPI dependencies as Annotated aliases."""

from collections.abc import Iterator
from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from app.config import Settings
from app.errors import Unauthorized
from app.services.tokens import active_token, verify_token


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

ADMIN_SESSION_KEY = "admin_token_id"


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
            token_id = request.session.get(ADMIN_SESSION_KEY)
            token = active_token(db, token_id) if isinstance(token_id, int) else None
            if token is not None:
                return token.name
            request.session.pop(ADMIN_SESSION_KEY, None)
    if is_page and request.method in ("GET", "HEAD") and not header:
        raise HTTPException(
            status_code=303, headers={"Location": f"/admin/login?next={quote(request.url.path)}"}
        )
    raise Unauthorized(
        "a valid admin token is required (Authorization: Bearer <token>)",
        headers={"WWW-Authenticate": 'Bearer realm="tierline admin"'},
    )


AdminDep = Annotated[str, Depends(require_admin)]
