"""The `tierline` command: serve, migrate, seed, export (and admin tokens)."""

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from app.admin.cli import admin_cli
from app.config import Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.migrate import upgrade_to_head
from app.models import Build

cli = typer.Typer(
    help="tierline: which AI hardware build runs this model, how fast, and at what cost.",
    no_args_is_help=True,
    add_completion=False,
)
cli.add_typer(admin_cli, name="admin")


class ExportFormat(StrEnum):
    yaml = "yaml"
    json = "json"


def _fail(message: str) -> None:
    typer.secho(message, err=True, fg=typer.colors.RED)
    raise typer.Exit(code=1)


@cli.command()
def migrate() -> None:
    """Upgrade the database schema to the newest revision."""
    settings = get_settings()
    try:
        upgrade_to_head(settings.database_url)
    except SQLAlchemyError as exc:
        _fail(f"migration failed: {exc.__class__.__name__}: {exc}")
    typer.echo(f"database at head: {settings.database_url}")


@cli.command()
def seed(
    path: Annotated[
        Path | None,
        typer.Argument(help="a seed directory or one YAML/JSON document (default: seed_data/)"),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print what would change and change nothing")
    ] = False,
) -> None:
    """Upsert catalog records by slug from seed files; all or nothing."""
    from app.services.catalog import import_document, load_document_file, load_seed_directory

    settings = get_settings()
    source = path or settings.seed_dir
    if not source.exists():
        _fail(f"{source}: no such file or directory")
    try:
        document = load_seed_directory(source) if source.is_dir() else load_document_file(source)
    except (OSError, yaml.YAMLError) as exc:
        _fail(f"{source}: cannot read: {exc}")
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            result = import_document(session, document, actor="cli:seed", dry_run=dry_run)
    finally:
        engine.dispose()
    if result.errors:
        for err in result.errors:
            where = f"{err.kind} '{err.slug}'" if err.slug else f"{err.kind} #{err.index}"
            typer.echo(f"{source}: {where}: {err.field}: {err.message}", err=True)
        _fail(f"{len(result.errors)} invalid record(s); nothing was written")
    verb = "would" if dry_run else "did"
    for label, refs in (("create", result.created), ("update", result.updated)):
        for ref in refs:
            typer.echo(f"{label} {ref.kind} {ref.slug}")
    typer.echo(
        f"{verb} create {len(result.created)}, update {len(result.updated)}, "
        f"leave {len(result.unchanged)} unchanged"
    )


@cli.command()
def export(
    format: Annotated[ExportFormat, typer.Option("--format", help="yaml or json")] = (
        ExportFormat.yaml
    ),
    output: Annotated[Path | None, typer.Option("-o", "--output", help="file to write")] = None,
) -> None:
    """Write the whole catalog as one document that `tierline seed` accepts."""
    from app.services.catalog import export_document

    settings = get_settings()
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            document: dict[str, Any] = export_document(session)
    finally:
        engine.dispose()
    if format is ExportFormat.json:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


@cli.command()
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

    settings = get_settings()
    problem = settings.exposure_problem(host or settings.host)
    if problem is not None:
        typer.echo(f"refusing to start: {problem}", err=True)
        raise typer.Exit(2)
    if not no_migrate:
        migrate()
        if settings.seed_on_start and _catalog_is_empty(settings.database_url):
            seed(None, dry_run=False)
    from app.metrics import multiprocess_directory

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
        # One log line per request: the app's JSON line (app/middleware.py) carries the
        # method, route, status, duration and request id, so uvicorn's text line would repeat it.
        "access_log": False,
        "timeout_graceful_shutdown": 20,
    }


def _catalog_is_empty(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return (conn.scalar(select(func.count()).select_from(Build)) or 0) == 0
    finally:
        engine.dispose()


def main() -> None:
    """Console-script entry point."""
    cli()
