"""What every page shares: the footer's provenance, canonical and JSON-twin links, notices."""

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from app.caching import snapshot
from app.errors import FieldError, InvalidInput, field_errors
from app.web.pages import catalog_provenance
from app.web.templating import get_templates
from app.web.urls import absolute

NAV = (
    ("/", "Tier line"),
    ("/builds", "Builds"),
    ("/models", "Models"),
    ("/compare", "Compare"),
    ("/estimate", "Calculator"),
    ("/serving", "Serving"),
    ("/recommend", "Recommend"),
    ("/accuracy", "Accuracy"),
    ("/glossary", "Glossary"),
    ("/about", "About the numbers"),
)


@dataclass(frozen=True)
class Notice:
    """A message shown above a page's content: "error" for refused input, "info" otherwise."""

    message: str
    level: str = "error"
    field: str | None = None


def notices_from(errors: Iterable[FieldError]) -> list[Notice]:
    """Field errors as page notices naming the field and the reason."""
    return [Notice(f"{e.field}: {e.message}", field=e.field) for e in errors]


def validation_notices(exc: ValidationError) -> list[Notice]:
    """A Pydantic error as notices ("min_memory_gb: input should be a valid number, got 'x'")."""
    return notices_from(field_errors(exc.errors(include_url=False), fallback="(query)"))


def render(
    request: Request,
    session: Session | None,
    template: str,
    context: dict[str, Any],
    *,
    json_url: str | None,
    canonical: str | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """Render a page with the shared context: nav, provenance, canonical and JSON-twin links."""
    provenance = catalog_provenance(session) if session is not None else None
    canonical_path = canonical if canonical is not None else _current_path(request)
    ctx = {
        "nav": NAV,
        "current_path": request.url.path,
        "provenance": provenance,
        "json_url": json_url,
        "canonical_url": absolute(request, canonical_path),
        "notices": [],
        **context,
    }
    return get_templates(request).TemplateResponse(
        request, template, ctx, status_code=status_code, headers=dict(headers or {})
    )


# Pages are the same for every visitor, so a rendered page is kept per catalog version and URL;
# browsers revalidate (cheap 304s) and see an edit right after it commits.
PAGE_CACHE_CONTROL = "public, no-cache"


def cached_page(
    request: Request, session: Session, build: Callable[[], Response]
) -> Response:
    """The page `build()` renders, kept per catalog version and URL, with an ETag and 304s.

    For public GET pages whose content depends only on the URL and the catalog: rendering the
    tier line's template alone costs several milliseconds, a cache hit a few microseconds.
    """
    snap = snapshot(session)

    def render_once() -> tuple[bytes, int, str, str]:
        response = build()
        body = bytes(response.body)
        tag = f'"p{snap.version}-{hashlib.blake2b(body, digest_size=8).hexdigest()}"'
        return body, response.status_code, response.media_type or "text/html", tag

    body, status, media_type, tag = snap.memo(("page", str(request.url)), render_once)
    headers = {"ETag": tag, "Cache-Control": PAGE_CACHE_CONTROL}
    if status == 200 and tag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(body, status_code=status, media_type=media_type, headers=headers)


def _current_path(request: Request) -> str:
    query = request.url.query
    return f"{request.url.path}?{query}" if query else request.url.path


M = TypeVar("M", bound=BaseModel)


@dataclass
class ParsedQuery(Generic[M]):
    """A page's query: the validated model, the raw values for the form, and notices."""

    query: M
    raw: dict[str, str]
    notices: list[Notice]


def raw_query(request: Request) -> dict[str, str]:
    """Query parameters with empty values dropped (a GET form sends every field)."""
    return {
        k: v.replace("\x00", "")
        for k, v in request.query_params.items()
        if v.strip() != ""
    }


def parse_query(schema: type[M], raw: Mapping[str, Any]) -> ParsedQuery[M]:
    """Validate a page's query; refused fields become notices and fall back to their defaults,
    so a bad parameter gives the page with a clear message instead of an error."""
    values = dict(raw)
    try:
        return ParsedQuery(schema.model_validate(values), dict(raw), [])
    except ValidationError as exc:
        notices = validation_notices(exc)
        bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
    cleaned = {k: v for k, v in values.items() if k not in bad}
    try:
        query = schema.model_validate(cleaned)
    except ValidationError:
        try:
            query = schema.model_validate({})
        except ValidationError:
            # A required field was refused: there is no default page to fall back to.
            errors = [FieldError(n.field or "(query)", n.message) for n in notices]
            summary = "; ".join(f"{e.field}: {e.message}" for e in errors[:5])
            raise InvalidInput(summary or "invalid query", errors=errors) from None
    return ParsedQuery(query, dict(raw), notices)
