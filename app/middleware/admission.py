"""Admission: request bodies are read whole (bounded in size and time) before a request may take
one of the few slots that let it into the application.

With many more connections than cores, requests that all run at once share the GIL and the cores,
so every one of them takes as long as the slowest mix of the others, and each thread-pool hop of a
request (dependencies, endpoint, teardown) queues behind newcomers. Letting a few in at a time, in
arrival order, gives the same throughput with a far shorter tail: a request waits once, at the
door, then runs nearly alone. Metrics scrapes and health checks skip the queue: an overloaded
worker still reports, and a load balancer's probe (one small query) is not timed out behind a
queue of page renders and the worker taken out of service for being busy.
"""

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import DomainError, RequestTimeout
from app.middleware.failures import render

# Bulk imports may be larger than ordinary bodies (JSON API and the admin page's upload form).
IMPORT_PATHS = ("/api/v1/admin/import", "/admin/import")
DEFAULT_MAX_CONCURRENT_REQUESTS = 4
UNGATED_PATHS = frozenset({"/metrics", "/healthz"})


class PayloadTooLarge(DomainError):
    status_code = 413
    title = "Payload too large"


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
            await render(scope, error)(scope, receive, send)
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


class AdmissionGate:
    """At most `max_concurrent` requests inside at once, admitted first come, first served."""

    def __init__(self, max_concurrent: int) -> None:
        self.max_concurrent = max_concurrent
        self._gate: asyncio.Semaphore | None = None
        self._gate_loop: asyncio.AbstractEventLoop | None = None

    def for_running_loop(self) -> asyncio.Semaphore:
        """The semaphore of the running event loop (a test client may start several in turn)."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate_loop is not loop:
            self._gate = asyncio.Semaphore(self.max_concurrent)
            self._gate_loop = loop
        return self._gate
