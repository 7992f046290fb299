"""`tierline serve`: migrate, seed an empty catalog and run uvicorn."""

from typing import Annotated, Any

import typer

from app.cli.common import cli_settings, prepare_catalog
from app.config import Settings
from app.metrics import multiprocess_directory


def serve(
    host: Annotated[str | None, typer.Option(help="interface to bind")] = None,
    port: Annotated[int | None, typer.Option(help="port to listen on")] = None,
    workers: Annotated[int | None, typer.Option(help="worker processes")] = None,
    no_migrate: Annotated[
        bool, typer.Option("--no-migrate", help="skip migrations and seeding (multi-host deploys)")
    ] = False,
) -> None:
    """Migrate, seed an empty catalog, and serve the site and API."""
    import uvicorn

    settings = cli_settings()
    problem = settings.exposure_problem(host or settings.host)
    if problem is not None:
        typer.echo(f"refusing to start: {problem}", err=True)
        raise typer.Exit(2)
    if not no_migrate:
        prepare_catalog(settings, may_write=True, seed=settings.seed_on_start)
    options = uvicorn_options(settings, host=host, port=port, workers=workers)
    # Several workers share their Prometheus metrics through a fresh directory (app/metrics.py).
    with multiprocess_directory(options["workers"]):
        uvicorn.run("app.main:app_factory", factory=True, **options)


def uvicorn_options(
    settings: Settings,
    *,
    host: str | None = None,
    port: int | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """How `serve` runs uvicorn (benchmarks/http_bench.py runs its baseline the same way)."""
    return {
        "host": host or settings.host,
        "port": port or settings.port,
        "workers": workers or settings.workers,
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
        "log_level": settings.log_level,
        # One log line per request: the app's JSON line (app/middleware/logs.py) carries the
        # method, route, status, duration and request id, so uvicorn's text line would repeat it.
        "access_log": False,
        "timeout_graceful_shutdown": 20,
        # uvicorn kills a worker whose health-check thread does not answer within 5 s by default;
        # on a small, saturated box a busy worker answers late, and killing it (its requests
        # with it) turned slowness into errors and, at start-up, a restart loop. A worker
        # silent for 30 s is still replaced.
        "timeout_worker_healthcheck": 30,
    }
