"""Friendly HTML error pages for domain errors (app.main routes framework errors here too)."""

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.exc import SQLAlchemyError

from app.errors import DomainError
from app.web.common import NAV
from app.web.pages import Provenance, catalog_provenance
from app.web.templating import get_templates

_STATUS_TITLES = {
    400: "Bad request",
    401: "Sign-in needed",
    403: "Not allowed",
    404: "Page not found",
    405: "Method not allowed",
    409: "Conflict",
    412: "Out of date",
    413: "Too large",
    422: "Invalid input",
    429: "Too many requests",
    503: "Service unavailable",
}


def _provenance(request: Request, status_code: int) -> Provenance | None:
    # The footer is a nicety on an error page: never let it turn a 4xx into a 500, and do not
    # touch a database that has just been reported unreachable.
    if status_code >= 500:
        return None
    try:
        with request.app.state.sessionmaker() as session:
            return catalog_provenance(session)
    except SQLAlchemyError:
        return None


def _page(
    request: Request,
    *,
    status_code: int,
    title: str,
    detail: str,
    errors: list[tuple[str, str]],
    headers: dict[str, str] | None = None,
) -> Response:
    context = {
        "nav": NAV,
        "current_path": request.url.path,
        "provenance": _provenance(request, status_code),
        "json_url": None,
        "canonical_url": None,
        "notices": [],
        "status_code": status_code,
        "error_title": title,
        "detail": detail,
        "errors": errors,
    }
    return get_templates(request).TemplateResponse(
        request, "error.html", context, status_code=status_code, headers=headers
    )


def render_error_page(request: Request, error: DomainError) -> Response:
    """A friendly HTML page for a domain error: what went wrong, which field, what to do next."""
    return _page(
        request,
        status_code=error.status_code,
        title=_STATUS_TITLES.get(error.status_code, error.title),
        detail=error.detail,
        errors=[(e.field, e.message) for e in error.errors],
        headers=error.headers,
    )
