"""EdgeMiddleware: security headers, request id, the request's log line and metrics, the 405
`Allow` fix and the catch-all error handler, as one pure ASGI layer around admission.
"""

import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import DomainError
from app.metrics import observe_request
from app.middleware.admission import (
    BODYLESS_METHODS,
    DEFAULT_MAX_CONCURRENT_REQUESTS,
    UNGATED_PATHS,
    AdmissionGate,
    BodyReader,
)
from app.middleware.failures import answer_unhandled, log_unhandled, render
from app.middleware.logs import log_request

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
REQUEST_ID_HEADER = b"x-request-id"
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")

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


# Security header names, for the check that a response did not set its own (SVG charts do).
_SECURITY_NAMES = frozenset(name for name, _ in SECURITY_HEADERS)
_HEAD_OF_RESPONSE = "http.response.start"


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
        self.gate = AdmissionGate(max_concurrent)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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

        gate = None if scope["path"] in UNGATED_PATHS else self.gate.for_running_loop()
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
                        await render(scope, refusal)(scope, receive, edge_send)
                        return
                if gate is None:
                    await self.app(scope, receive, edge_send)
                else:
                    async with gate:  # asyncio.Semaphore wakes waiters first come, first served
                        await self.app(scope, receive, edge_send)
            except Exception as exc:
                if started:  # too late for a clean answer; the server closes the connection
                    log_unhandled(scope, exc, request_id)
                    raise
                await answer_unhandled(scope, receive, edge_send, exc, request_id)
        finally:
            duration = time.perf_counter() - start
            route = route_template(scope)
            observe_request(method, route, status, duration)
            log_request(
                {
                    "request_id": request_id,
                    "method": method,
                    "path": scope["path"],
                    "route": route,
                    "status": status,
                    "duration_ms": round(duration * 1000, 2),
                    "client": (scope.get("client") or ("", 0))[0],
                }
            )
