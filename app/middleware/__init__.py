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

import gc
from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from starlette.types import Scope

from app.config import Settings
from app.middleware.admission import BodyReader
from app.middleware.edge import EdgeMiddleware
from app.middleware.logs import configure_logging

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
