"""Pure ASGI middlewares: security headers, request-body limits, request logs and metrics, and a
last-resort error handler that answers without details.

Order, outermost first: security headers (so every response carries them, errors included),
request log + metrics (so the status and duration of every response are recorded), the 405 `Allow`
fix, the catch-all error handler (inside the above, unlike Starlette's ServerErrorMiddleware, so
even a 500 gets the headers and a log line), the admin credential check and the bounded body read
(both before admission: a slow or unauthenticated client never holds a slot), admission, then the
application.

The first four run as one layer (`EdgeMiddleware`) with one `send` wrapper: every request passes
through them, so each saved layer, closure and header-list copy counts at thousands of requests
per second. Header lists are precomputed; log records are only built when the level lets them
through.
"""

import asyncio
import gc
import html
import json
import logging
import re
import sys
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.errors import DomainError, RequestTimeout, ServiceUnavailable

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


# Methods the app's routes may serve; a 405's Allow header lists those that match the path.
PROBED_METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


def allowed_methods(app: Any, path: str) -> list[str]:
    """Every method some route of `app` serves at `path` (HEAD wherever GET is).

    Asks each route whether it fully matches the path under each method (Starlette's public
    `BaseRoute.matches`), so routes of included routers answer for themselves.
    """
    found: set[str] = set()
    for method in PROBED_METHODS:
        probe: Scope = {"type": "http", "path": path, "root_path": "", "method": method}
        if any(route.matches(probe)[0] is Match.FULL for route in app.router.routes):
            found.add(method)
    if "GET" in found:
        found.add("HEAD")
    return sorted(found)


# Methods whose requests are answered without reading a body.
BODYLESS_METHODS = ("GET", "HEAD", "OPTIONS")


class BodyReader:
    """Reads a whole request body ahead of the application, bounded in size and in time.

    A declared Content-Length over the limit is refused before any byte is read. Otherwise the
    body is read chunk by chunk, counting, up to the limit (bodies are parsed whole by the app
    anyway); the first chunk past it ends the request with 413, and a body still incomplete after
    `timeout_s` with 408, so a client that stops sending holds nothing but its own socket.
    """

    def __init__(self, *, max_body_bytes: int, max_import_bytes: int, timeout_s: float) -> None:
        self.max_body_bytes = max_body_bytes
        self.max_import_bytes = max_import_bytes
        self.timeout_s = timeout_s

    def limit_for(self, path: str) -> int:
        """The import routes get the larger limit; everything else the default."""
        if path.rstrip("/") in IMPORT_PATHS:
            return self.max_import_bytes
        return self.max_body_bytes

    async def read(self, scope: Scope, receive: Receive) -> Receive:
        """A `receive` replaying the whole body; raises PayloadTooLarge or RequestTimeout."""
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            raise _too_large(limit)
        buffered: list[Message] = []
        try:
            async with asyncio.timeout(self.timeout_s):
                received = 0
                while True:
                    message = await receive()
                    if message["type"] != "http.request":  # the client went away
                        buffered.append(message)
                        break
                    received += len(message.get("body", b""))
                    if received > limit:
                        raise _too_large(limit)
                    buffered.append(message)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            raise RequestTimeout(
                f"the request body did not arrive within {self.timeout_s:g} seconds",
                headers={"Connection": "close"},
            ) from None

        async def replay() -> Message:
            if buffered:
                return buffered.pop(0)
            return await receive()

        return replay


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"the request body is larger than this route accepts ({limit} bytes)",
        headers={"Connection": "close"},
    )


class BodySizeLimitMiddleware:
    """The BodyReader as a middleware of its own (EdgeMiddleware reads bodies itself, before
    admission; this stands alone for apps without it)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        max_import_bytes: int,
        timeout_s: float = 60.0,
    ) -> None:
        self.app = app
        self.reader = BodyReader(
            max_body_bytes=max_body_bytes, max_import_bytes=max_import_bytes, timeout_s=timeout_s
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in BODYLESS_METHODS:
            await self.app(scope, receive, send)
            return
        try:
            replay = await self.reader.read(scope, receive)
        except DomainError as error:
            await _render(scope, error)(scope, receive, send)
            return
        await self.app(scope, replay, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def route_template(scope: Scope) -> str:
    """The matched route's path template (bounded label values), never the raw path.

    Every router declares its full prefix itself (app/api/__init__.py), so a route's own `path`
    is its full template.
    """
    route = scope.get("route")
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


# Connection-level database failures: the database is down or unreachable, not a bug.
_DATABASE_DOWN = (DisconnectionError, PoolTimeoutError)


def database_unreachable(exc: BaseException) -> bool:
    """True for errors that mean the database cannot be reached (answer 503, not 500)."""
    if isinstance(exc, _DATABASE_DOWN):
        return True
    return isinstance(exc, DBAPIError) and (
        exc.connection_invalidated or type(exc).__name__ in ("OperationalError", "InterfaceError")
    )


# Security header names, for the check that a response did not set its own (SVG charts do).
_SECURITY_NAMES = frozenset(name for name, _ in SECURITY_HEADERS)
_HEAD_OF_RESPONSE = "http.response.start"
# Admission control. With many more connections than cores, requests that all run at once share
# the GIL and the cores, so every one of them takes as long as the slowest mix of the others, and
# each thread-pool hop of a request (dependencies, endpoint, teardown) queues behind newcomers.
# Letting a few in at a time, in arrival order, gives the same throughput with a far shorter tail:
# a request waits once, at the door, then runs nearly alone. Metrics scrapes skip the queue so
# an overloaded worker still reports (health checks queue like any request: their latency is
# the service's).
DEFAULT_MAX_CONCURRENT_REQUESTS = 4
UNGATED_PATHS = frozenset({"/metrics"})


class EdgeMiddleware:
    """Security headers, request id, log line and metrics, the 405 `Allow` fix and the catch-all
    error handler, in that order (outermost first), as one pure ASGI layer."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
        body_reader: BodyReader | None = None,
        check_before_body: Callable[[Scope], Awaitable[None]] | None = None,
        hsts_max_age_s: int = 0,
    ) -> None:
        self.app = app
        self.max_concurrent = max_concurrent
        # Bodies are read (or refused, or timed out) before a request takes an admission slot,
        # so clients that send slowly, or not at all, never hold one; `check_before_body` may
        # refuse a request (admin routes without valid credentials) before its body is read.
        self.body_reader = body_reader
        self.check_before_body = check_before_body
        self.hsts_header = (
            (b"strict-transport-security", f"max-age={hsts_max_age_s}".encode())
            if hsts_max_age_s > 0
            else None
        )
        self._gate: asyncio.Semaphore | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None

    def _gate_of_loop(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop (a test client may start several in turn).
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate_loop is not loop:
            self._gate = asyncio.Semaphore(self.max_concurrent)
            self._gate_loop = loop
        return self._gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from app.metrics import observe_request

        request_id = _request_id(scope)
        method = scope["method"]
        # HEAD is answered wherever GET is (load balancers probe with it): the app runs the GET
        # and the body is dropped here; the headers (Content-Length included) are the GET's.
        # The server keeps its own scope (with HEAD): it then sends no body and checks none.
        head = method == "HEAD"
        if head:
            scope = {**scope, "method": "GET"}
        request_id_header = (REQUEST_ID_HEADER, request_id.encode())
        state = scope.get("state")
        if state is None:
            scope["state"] = state = {}
        state["request_id"] = request_id
        start = time.perf_counter()
        status = 500
        started = False

        async def edge_send(message: Message) -> None:
            nonlocal status, started
            if message["type"] == _HEAD_OF_RESPONSE:
                started = True
                status = message["status"]
                headers = message.get("headers") or []
                own = [h for h in headers if h[0].lower() in _SECURITY_NAMES]
                if own:
                    present = {h[0].lower() for h in own}
                    extra = [h for h in SECURITY_HEADERS if h[0] not in present]
                else:
                    extra = SECURITY_HEADERS  # type: ignore[assignment]
                if status == 405 and "app" in scope:
                    methods = allowed_methods(scope["app"], scope["path"])
                    if methods:
                        headers = [h for h in headers if h[0].lower() != b"allow"]
                        headers.append((b"allow", ", ".join(methods).encode()))
                # A new list: the response's own header list is never changed in place.
                message["headers"] = [*headers, request_id_header, *extra]
                if hsts is not None:
                    message["headers"].append(hsts)
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        gate = None if scope["path"] in UNGATED_PATHS else self._gate_of_loop()
        # HSTS only means something on a response that arrived over HTTPS (RFC 6797 7.2).
        hsts = self.hsts_header if scope.get("scheme") == "https" else None
        try:
            try:
                if self.body_reader is not None and method not in BODYLESS_METHODS:
                    try:
                        if self.check_before_body is not None:
                            await self.check_before_body(scope)
                        receive = await self.body_reader.read(scope, receive)
                    except DomainError as refusal:
                        await _render(scope, refusal)(scope, receive, edge_send)
                        return
                if gate is None:
                    await self.app(scope, receive, edge_send)
                else:
                    async with gate:  # asyncio.Semaphore wakes waiters first come, first served
                        await self.app(scope, receive, edge_send)
            except Exception as exc:
                if started:  # too late for a clean answer; the server closes the connection
                    _log_unhandled(scope, exc, request_id)
                    raise
                await _answer_unhandled(scope, receive, edge_send, exc, request_id)
        finally:
            duration = time.perf_counter() - start
            route = route_template(scope)
            observe_request(method, route, status, duration)
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "request",
                    extra={
                        "fields": {
                            "request_id": request_id,
                            "method": method,
                            "path": scope["path"],
                            "route": route,
                            "status": status,
                            "duration_ms": round(duration * 1000, 2),
                            "client": (scope.get("client") or ("", 0))[0],
                        }
                    },
                )


def _log_unhandled(scope: Scope, exc: BaseException, request_id: str | None) -> None:
    error_log.error(
        "unhandled error",
        exc_info=exc,
        extra={"fields": {"request_id": request_id, "path": scope["path"]}},
    )


async def _answer_unhandled(
    scope: Scope, receive: Receive, send: Send, exc: Exception, request_id: str | None
) -> None:
    """A 500 without details (a 503 when the database is unreachable), logged in full."""
    _log_unhandled(scope, exc, request_id)
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


# Young-generation size for the garbage collector of a serving process (Python's default: 700).
# A page allocates thousands of container objects, so the default runs a collection several
# times per request and promotes enough to trigger full collections every few dozen requests.
GC_YOUNG_THRESHOLD = 20_000


def tune_gc_for_serving() -> None:
    """For a worker process about to serve: freeze what is already allocated and collect less
    often. Called by the uvicorn entry point (app.main.app_factory), not by tests.

    Modules, routes, schemas and matplotlib live as long as the process, yet every full
    collection walks all of them again (~200k objects: 100-400 ms with the GIL held, a stalled
    worker under load). gc.freeze() moves them out of the collector's sight; a larger young
    generation makes full collections rarer. Cycles are still collected, just in larger batches.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def configure_logging(level: str) -> None:
    """Send the `tierline` loggers to stderr as JSON lines (once per process)."""
    logger = logging.getLogger("tierline")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_tierline_json", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._tierline_json = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def add_production_middleware(
    app: FastAPI,
    settings: Settings,
    *,
    check_before_body: Callable[[Scope], Awaitable[None]] | None = None,
) -> None:
    """Install the middlewares (outermost last, as Starlette stacks them) and JSON logging."""
    configure_logging(settings.log_level)
    reader = BodyReader(
        max_body_bytes=settings.max_body_bytes,
        max_import_bytes=settings.max_import_bytes,
        timeout_s=settings.body_timeout_s,
    )
    app.add_middleware(
        EdgeMiddleware,
        max_concurrent=settings.max_concurrent_requests,
        body_reader=reader,
        check_before_body=check_before_body,
        hsts_max_age_s=settings.hsts_max_age_s,
    )
