"""Friendly HTML error pages for domain errors and unknown paths."""

from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import DomainError
from app.services.pages import Provenance, catalog_provenance
from app.web.common import NAV
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


def _wants_html(request: Request) -> bool:
    from app.main import wants_html  # late import: app.main imports this package

    return wants_html(request)


async def http_error_page(request: Request, exc: StarletteHTTPException) -> Response:
    """Unknown paths and wrong methods outside the API as HTML pages; the API keeps JSON."""
    if not _wants_html(request):
        return await http_exception_handler(request, exc)
    if exc.status_code == 404:
        detail = f"There is no page at {request.url.path}."
    elif exc.status_code == 405:
        detail = f"{request.method} is not accepted at {request.url.path}."
    else:
        detail = str(exc.detail)
    return _page(
        request,
        status_code=exc.status_code,
        title=_STATUS_TITLES.get(exc.status_code, "Error"),
        detail=detail,
        errors=[],
        headers=dict(exc.headers or {}),
    )
