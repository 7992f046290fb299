"""Pure ASGI middlewares: security headers, request-body limits, request logs and metrics, and a
last-resort error handler that answers without details.

Order, outermost first: security headers (so every response carries them, errors included),
request log + metrics (so the status and duration of every response are recorded), the catch-all
error handler (inside the two above, unlike Starlette's ServerErrorMiddleware, so even a 500 gets
the headers and a log line), then the body-size limit, then the application.
"""

import html
import json
import logging
import re
import sys
import time
import traceback
import uuid
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.errors import DomainError, ServiceUnavailable

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
# Bulk imports may be larger than ordinary bodies (JSON API and the admin page's upload form).
IMPORT_PATHS = ("/api/v1/admin/import", "/admin/import")
REQUEST_ID_HEADER = b"x-request-id"
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")

access_log = logging.getLogger("tierline.access")
error_log = logging.getLogger("tierline.error")


class PayloadTooLarge(DomainError):
    status_code = 413
    title = "Payload too large"


class InternalServerError(DomainError):
    status_code = 500
    title = "Internal server error"


def _render(scope: Scope, error: DomainError) -> Any:
    """The app's own renderer: a friendly page for pages, problem+json for the API."""
    from app.main import render_problem  # main imports this module

    return render_problem(Request(scope), error)


class SecurityHeadersMiddleware:
    """Adds the security headers to every HTTP response that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class AllowHeaderMiddleware:
    """On 405, lists in `Allow` every method the path supports across all routes (RFC 9110).

    The router answers 405 from the first route whose path matched, so a path served by several
    routes (GET in one router, PUT/PATCH/DELETE in another) would advertise only that route's
    methods.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_allow(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                methods = allowed_methods(scope["app"], scope["path"]) if "app" in scope else []
                if methods:
                    headers = [h for h in message.get("headers", []) if h[0].lower() != b"allow"]
                    headers.append((b"allow", ", ".join(methods).encode()))
                    message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_allow)


def allowed_methods(app: Any, path: str) -> list[str]:
    """Every method some route of `app` serves at `path` (HEAD implied by GET)."""
    table: list[tuple[re.Pattern[str], frozenset[str]]] | None = getattr(
        app.state, "method_table", None
    )
    if table is None:
        table = []
        for context in iter_route_contexts(app.routes):
            methods = getattr(context.original_route, "methods", None)
            if isinstance(context.path, str) and methods:
                table.append((compile_path(context.path)[0], frozenset(methods)))
        app.state.method_table = table
    found: set[str] = set()
    for regex, methods in table:
        if regex.match(path):
            found |= methods
    return sorted(found)


class BodySizeLimitMiddleware:
    """Answers 413 when a request body exceeds its limit, without ever holding more than that.

    A declared Content-Length over the limit is refused before any byte is read. Otherwise the body
    is read ahead chunk by chunk, counting, up to the limit (bodies are parsed whole by the app
    anyway), and replayed to the app; the first chunk past the limit ends it with 413.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, max_import_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_import_bytes = max_import_bytes

    def limit_for(self, path: str) -> int:
        """The import routes get the larger limit; everything else the default."""
        if path.rstrip("/") in IMPORT_PATHS:
            return self.max_import_bytes
        return self.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send, limit)
            return

        buffered: list[Message] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                buffered.append(message)
                break
            received += len(message.get("body", b""))
            if received > limit:
                await self._refuse(scope, receive, send, limit)
                return
            buffered.append(message)
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            if buffered:
                return buffered.pop(0)
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        error = PayloadTooLarge(
            f"the request body is larger than this route accepts ({limit} bytes)",
            headers={"Connection": "close"},
        )
        await _render(scope, error)(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _full_paths(app: Any, *, refresh: bool = False) -> dict[int, str]:
    """id(route) -> its full path template, included routers' prefixes applied (cached per app)."""
    cached: dict[int, str] | None = getattr(app.state, "route_templates", None)
    if cached is None or refresh:
        cached = {}
        for context in iter_route_contexts(app.routes):
            if isinstance(context.path, str):
                cached[id(context.original_route)] = context.path
        app.state.route_templates = cached
    return cached


def route_template(scope: Scope) -> str:
    """The matched route's path template (bounded label values), never the raw path."""
    route = scope.get("route")
    if route is not None and "app" in scope:
        # A route of an included router knows only its own path; the app knows the full one.
        full = _full_paths(scope["app"]).get(id(route))
        if full is None:
            full = _full_paths(scope["app"], refresh=True).get(id(route))
        if full is not None:
            return full
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path or "/"
    # Plain Starlette routes and mounts (openapi.json, /static) leave only their endpoint in the
    # scope; find it among the router's routes.
    endpoint = scope.get("endpoint")
    if endpoint is not None:
        for candidate in getattr(scope.get("router"), "routes", ()):
            if isinstance(candidate, Mount) and candidate.app is endpoint:
                return f"{candidate.path}/{{path}}"  # one label for everything under a mount
            if getattr(candidate, "endpoint", None) is endpoint:
                return str(candidate.path)
    return "<unmatched>"


def _request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == REQUEST_ID_HEADER:
            candidate = value.decode("latin-1")
            if _REQUEST_ID_RE.fullmatch(candidate):
                return candidate
    return uuid.uuid4().hex


class RequestLogMiddleware:
    """One structured log line and the Prometheus request metrics for every HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from app.metrics import observe_request

        request_id = _request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        start = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER, request_id.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            duration = time.perf_counter() - start
            route = route_template(scope)
            observe_request(scope["method"], route, status, duration)
            access_log.info(
                "request",
                extra={
                    "fields": {
                        "request_id": request_id,
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": route,
                        "status": status,
                        "duration_ms": round(duration * 1000, 2),
                        "client": (scope.get("client") or ("", 0))[0],
                    }
                },
            )


# Connection-level database failures: the database is down or unreachable, not a bug.
_DATABASE_DOWN = (DisconnectionError, PoolTimeoutError)


def database_unreachable(exc: BaseException) -> bool:
    """True for errors that mean the database cannot be reached (answer 503, not 500)."""
    if isinstance(exc, _DATABASE_DOWN):
        return True
    return isinstance(exc, DBAPIError) and (
        exc.connection_invalidated or type(exc).__name__ in ("OperationalError", "InterfaceError")
    )


class CatchAllMiddleware:
    """Turns any unhandled exception into a 500 without details (logged server-side in full).

    Database-unreachable errors that escaped the app's handlers (raised while a dependency was
    being torn down, or by the error-page renderer itself) become 503 with Retry-After.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            request_id = scope.get("state", {}).get("request_id")
            error_log.error(
                "unhandled error",
                exc_info=exc,
                extra={"fields": {"request_id": request_id, "path": scope["path"]}},
            )
            if started:  # too late for a clean answer; the server closes the connection
                raise
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
                response = _render(scope, error)
            except Exception:  # the error page itself failed: a page that needs nothing
                error_log.exception("error page failed", extra={"fields": {"path": scope["path"]}})
                response = _bare_response(scope, error)
            await response(scope, receive, send)


def _bare_response(scope: Scope, error: DomainError) -> Response:
    from app.main import PROBLEM_JSON, wants_html

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


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            # Server-side only: the traceback goes to the log, never into a response.
            entry["traceback"] = "".join(traceback.format_exception(*record.exc_info))
        return json.dumps(entry, default=str)


def configure_logging(level: str) -> None:
    """Send the `tierline` loggers to stderr as JSON lines (once per process)."""
    logger = logging.getLogger("tierline")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_tierline_json", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._tierline_json = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def add_production_middleware(app: FastAPI, settings: Settings) -> None:
    """Install the middlewares (outermost last, as Starlette stacks them) and JSON logging."""
    configure_logging(settings.log_level)
    app.add_middleware(
        BodySizeLimitMiddleware,
        max_body_bytes=settings.max_body_bytes,
        max_import_bytes=settings.max_import_bytes,
    )
    app.add_middleware(CatchAllMiddleware)
    app.add_middleware(AllowHeaderMiddleware)
    app.add_middleware(RequestLogMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
