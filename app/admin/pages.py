"""Admin pages under /admin: what the page modules share (router, rendering, form helpers).

The pages live by concern: `pages_auth` (sign-in/out), `pages_import` (import with preview),
`pages_audit` (the audit log and restores) and `pages_records` (dashboard, lists, edit forms).
They call the same services as the admin JSON API. Every POST goes through `verified_form`
(CSRF), and every page but the sign-in/out through `require_admin` (the signed session cookie).
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData

from app.admin.csrf import csrf_token, verified_form
from app.admin.schemas import StorableText
from app.deps import require_admin
from app.errors import NotFound
from app.services.records import KIND_BY_KEY, KINDS, Kind
from app.web.common import render

FormDep = Annotated[FormData, Depends(verified_form)]
# PostgreSQL text cannot hold NUL: such a slug is refused (422 naming it) before any query.
SlugSegment = Annotated[str, StorableText, Path(max_length=200)]


def admin_pages_router() -> APIRouter:
    """A router for signed-in admin pages (kept out of the OpenAPI document)."""
    return APIRouter(
        prefix="/admin", include_in_schema=False, dependencies=[Depends(require_admin)]
    )


def admin_page(
    request: Request,
    session: Any,
    template: str,
    context: dict[str, Any],
    *,
    status_code: int = 200,
    actor: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """Render an admin template: never cached, with the CSRF token and the signed-in actor."""
    ctx = {"csrf_token": csrf_token(request), "actor": actor, "kinds": KINDS, **context}
    # The JSON twins under /api/v1/admin take a Bearer token, not this cookie: named on the
    # page as text (api_url), not linked as rel=alternate.
    return render(
        request,
        session,
        template,
        ctx,
        json_url=None,
        status_code=status_code,
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def see_other(url: str) -> RedirectResponse:
    """A 303 redirect after a form POST (never cached)."""
    return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})


def kind_for_key(key: str) -> Kind:
    """The record kind an /admin/{key} path names, or NotFound."""
    kind = KIND_BY_KEY.get(key)
    if kind is None:
        raise NotFound(f"there is no admin page at /admin/{key}")
    return kind


def form_text(form: FormData, name: str) -> str:
    """A text field of a submitted form ("" when absent or a file)."""
    value = form.get(name)
    return value if isinstance(value, str) else ""
