"""Shared pieces of the JSON API: problem responses, cached JSON with ETags, pages, CSV."""

import copy
import csv
import functools
import hashlib
import io
import json
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, TypeAdapter, ValidationError
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.caching import memo_at_current_version
from app.config import Settings
from app.pagination import ListResult, page_links
from app.problems import problem_example, problem_response

# Catalog answers may be stored by any cache but must be revalidated (cheap 304s), so a change
# is visible right after it commits.
CACHE_CONTROL = "public, no-cache"
API_PREFIX = "/api/v1"
JSON = "application/json"


def _problem(description: str, status: int, title: str, detail: str, field: str) -> dict[str, Any]:
    return problem_response(description, example=problem_example(status, title, detail, field))


Responses = dict[int | str, dict[str, Any]]

INVALID: Responses = {
    422: _problem(
        "Invalid input: the problem names each field and the reason",
        422,
        "Invalid input",
        "per_page: Input should be less than or equal to 200",
        "per_page",
    )
}
NOT_FOUND: Responses = {
    404: _problem("Unknown slug", 404, "Not found", "unknown build 'no-such-build'", "slug")
}
BODY_ERRORS: Responses = {
    400: {"description": "The body is not decodable JSON text"},
    413: _problem(
        "The body exceeds TIERLINE_MAX_BODY_BYTES",
        413,
        "Payload too large",
        "the request body exceeds 1048576 bytes",
        "(body)",
    ),
}
NOT_MODIFIED: Responses = {304: {"description": "Not modified (If-None-Match matched the ETag)"}}
UNAVAILABLE: Responses = {
    503: _problem(
        "The database is unreachable; retry after the Retry-After seconds",
        503,
        "Service unavailable",
        "the database is unreachable; try again shortly",
        "(service)",
    )
}
GET_RESPONSES: Responses = {**NOT_MODIFIED, **INVALID, **UNAVAILABLE}


def dumps(value: Any) -> bytes:
    """Compact JSON; NaN/Infinity are refused (the services never produce them)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


@functools.cache
def _adapter(model: type[BaseModel]) -> TypeAdapter[Any]:
    return TypeAdapter(model)


def model_body(model: type[BaseModel], value: Any) -> bytes:
    """The JSON body of `value` as the route's declared response model: validated as `model`
    (a typed result passes as is) and serialised by it, so every body has the documented shape.
    Callers cache the bytes where the answer repeats, so validation runs once per answer."""
    adapter = _adapter(model)
    return adapter.dump_json(adapter.validate_python(value))


def _etag_of(body: bytes, version: int) -> str:
    return f'"c{version}-{hashlib.blake2b(body, digest_size=8).hexdigest()}"'


def etag_matches(header: str | None, etag: str) -> bool:
    """If-None-Match uses weak comparison: W/ prefixes are ignored; '*' matches anything."""
    if not header:
        return False
    bare = etag.removeprefix("W/")
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == bare:
            return True
    return False


def _respond(
    request: Request, body: bytes, etag: str, headers: dict[str, str], media_type: str
) -> Response:
    all_headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL, **headers}
    if etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=all_headers)
    return Response(content=body, media_type=media_type, headers=all_headers)


@contextmanager
def catalog_session(request: Request) -> Iterator[Session]:
    """A read-only session for one request.

    The read routes open it themselves rather than through SessionDep: a generator dependency
    costs two extra thread-pool hops per request, a large share of a cached answer's time.
    """
    session: Session = request.app.state.sessionmaker()
    try:
        yield session
    finally:
        session.close()


Rendered = tuple[bytes, str, dict[str, str]]  # body, ETag, extra headers
MemoT = TypeVar("MemoT")


def catalog_memo(
    request: Request, key: Hashable, render: Callable[[Session, int], MemoT]
) -> MemoT:
    """`render(session, catalog_version)` memoised under `key` at the current catalog version:
    a hit reads only the version (no ORM Session); a miss renders with a read-only session
    opened on the connection the version was read on (its data is never older than the key)."""

    def compute(connection: Connection, version: int) -> MemoT:
        session: Session = request.app.state.sessionmaker(bind=connection)
        try:
            return render(session, version)
        finally:
            session.close()

    return memo_at_current_version(request.app.state.engine, key, compute)


def _cached_http(request: Request, render: Callable[[Session, int], Rendered]) -> Rendered:
    """The rendered answer for this URL at the current catalog version, memoised."""
    return catalog_memo(request, ("http", str(request.url)), render)


def settings_of(request: Request) -> Settings:
    """The app's settings (read directly: a sync dependency would cost a thread-pool hop)."""
    return request.app.state.settings  # type: ignore[no-any-return]


def cached_json(
    request: Request,
    compute: Callable[[Session], Any],
    *,
    model: type[BaseModel] | None,
    etag: Callable[[Any], str] | None = None,
) -> Response:
    """A JSON answer of the declared `model`, memoised per catalog version and URL, with an
    ETag and 304 support. Every /api/v1 route names its model; `None` is only for a page's
    JSON twin outside the API, which has no declared schema.

    `etag` derives the ETag from the value (record detail: its version); by default it is the
    catalog version plus a hash of the body.
    """

    def render(session: Session, version: int) -> Rendered:
        value = compute(session)
        body = dumps(value) if model is None else model_body(model, value)
        tag = etag(value) if etag is not None else _etag_of(body, version)
        return body, tag, {}

    body, tag, extra = _cached_http(request, render)
    return _respond(request, body, tag, extra, JSON)


def page_body(request: Request, result: ListResult[Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A list page as `{items, total, page, per_page, next_url}` plus its RFC 8288 Link header."""
    next_url, link = page_links(request.url, result)
    body = {
        "items": result.items,
        "total": result.total,
        "page": result.page,
        "per_page": result.per_page,
        "next_url": next_url,
    }
    return body, {"Link": link}


def cached_page(
    request: Request, compute: Callable[[Session], ListResult[Any]], *, model: type[BaseModel]
) -> Response:
    """A list page of the declared page `model`, memoised per catalog version and URL, with its
    Link header."""

    def render(session: Session, version: int) -> Rendered:
        value, headers = page_body(request, compute(session))
        body = model_body(model, value)
        return body, _etag_of(body, version), headers

    body, tag, extra = _cached_http(request, render)
    return _respond(request, body, tag, extra, JSON)


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        # Spreadsheets would run it as a formula (CSV injection).
        return "'" + value
    return value


def cached_csv(
    request: Request,
    *,
    filename: str,
    columns: Sequence[str],
    rows: Callable[[Session], Iterable[BaseModel]],
) -> Response:
    """Every matching row as CSV (header row = field names, units in them), as an attachment.
    Each row is a typed list item; `columns` are its field names."""

    def render(session: Session, version: int) -> Rendered:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(columns)
        for row in rows(session):
            writer.writerow([_csv_cell(getattr(row, c)) for c in columns])
        body = out.getvalue().encode("utf-8")
        disposition = f'attachment; filename="{filename}"'
        return body, _etag_of(body, version), {"Content-Disposition": disposition}

    body, tag, extra = _cached_http(request, render)
    return _respond(request, body, tag, extra, "text/csv; charset=utf-8")


def record_etag(value: Any) -> str:
    """A record's ETag is its version (what admin If-Match compares against)."""
    return f'"{value.version}"'


CSV_RESPONSE: Responses = {
    200: {
        "description": "CSV, one row per record; units in the column names",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}


QueryModelT = TypeVar("QueryModelT", bound=BaseModel)


@functools.cache
def _documented_query_parameters(model: type[BaseModel]) -> tuple[dict[str, Any], ...]:
    """The OpenAPI parameters FastAPI writes for `Annotated[model, Query()]`, taken from the
    document of a one-route app (FastAPI's own public output, so the docs stay FastAPI's)."""
    shadow = FastAPI()

    @shadow.get("/shadow")
    def endpoint(query: Annotated[model, Query()]) -> None:  # type: ignore[valid-type]
        """Never served: only documented."""

    parameters = shadow.openapi()["paths"]["/shadow"]["get"]["parameters"]
    if "$ref" in json.dumps(parameters):
        raise TypeError(f"{model.__name__}: query parameters must not need components")
    return tuple(parameters)


def query_openapi(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` for a route that reads its query string with `parse_query(request, model)`.

    FastAPI's own query-model parsing re-inspects every field's annotation on every request
    (~0.5 ms for a list's dozen filters, more than answering the cached page), so list and
    compare routes take only the request and validate the query model themselves.
    """
    return {"parameters": copy.deepcopy(list(_documented_query_parameters(model)))}


def parse_query(request: Request, model: type[QueryModelT]) -> QueryModelT:
    """The query string validated as `model`; errors are FastAPI's 422 (`query.<field>`).

    A repeated key takes its last value, as FastAPI does for single-valued parameters.
    """
    try:
        return model.model_validate(dict(request.query_params))
    except ValidationError as exc:
        errors = [
            {**error, "loc": ("query", *error["loc"])} for error in exc.errors(include_url=False)
        ]
        raise RequestValidationError(errors) from None
