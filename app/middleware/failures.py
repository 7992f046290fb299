"""The last resort: an exception no handler answered becomes a 500 without details (a 503 when the
database is unreachable), logged in full; if even the error page fails, a page that needs nothing.
"""

import html
from typing import Any

from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import Receive, Scope, Send

from app.errors import DomainError, ServiceUnavailable
from app.middleware.logs import error_log
from app.problems import PROBLEM_JSON, render_problem, wants_html


class InternalServerError(DomainError):
    status_code = 500
    title = "Internal server error"


def render(scope: Scope, error: DomainError) -> Any:
    """The app's own renderer: a friendly page for pages, problem+json for the API."""
    return render_problem(Request(scope), error)


# Connection-level database failures: the database is down or unreachable, not a bug.
_DATABASE_DOWN = (DisconnectionError, PoolTimeoutError)


def database_unreachable(exc: BaseException) -> bool:
    """True for errors that mean the database cannot be reached (answer 503, not 500)."""
    if isinstance(exc, _DATABASE_DOWN):
        return True
    return isinstance(exc, DBAPIError) and (
        exc.connection_invalidated or type(exc).__name__ in ("OperationalError", "InterfaceError")
    )


def log_unhandled(scope: Scope, exc: BaseException, request_id: str | None) -> None:
    """Log an unhandled error with its traceback (server-side only) and the request id."""
    error_log.error(
        "unhandled error",
        exc_info=exc,
        extra={"fields": {"request_id": request_id, "path": scope["path"]}},
    )


async def answer_unhandled(
    scope: Scope, receive: Receive, send: Send, exc: Exception, request_id: str | None
) -> None:
    """A 500 without details (a 503 when the database is unreachable), logged in full."""
    log_unhandled(scope, exc, request_id)
    error: DomainError
    if database_unreachable(exc):
        error = ServiceUnavailable(
            "the database is unreachable; try again shortly",
            headers={"Retry-After": "5"},
        )
    else:
        ref = f" (reference {request_id})" if request_id else ""
        error = InternalServerError(f"something went wrong on our side{ref}")
    try:
        response = render(scope, error)
    except Exception:  # the error page itself failed: a page that needs nothing
        error_log.exception("error page failed", extra={"fields": {"path": scope["path"]}})
        response = bare_response(scope, error)
    await response(scope, receive, send)


def bare_response(scope: Scope, error: DomainError) -> Response:
    """The error as a page or problem+json built from nothing but the error itself."""
    if wants_html(Request(scope)):
        body = _BARE_PAGE.format(title=html.escape(error.title), detail=html.escape(error.detail))
        return HTMLResponse(body, status_code=error.status_code, headers=error.headers)
    return JSONResponse(
        error.problem(), status_code=error.status_code, media_type=PROBLEM_JSON,
        headers=error.headers,
    )


_BARE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} - tierline</title></head>
<body><main><h1>{title}</h1><p>{detail}</p><p><a href="/">tierline home</a></p></main></body>
</html>
"""
