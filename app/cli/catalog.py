"""Catalog commands: migrate the schema, seed records, export the catalog."""

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from sqlalchemy.exc import SQLAlchemyError

from app.cli.common import catalog_session, cli_settings, fail, read_seed_document, shown_url
from app.migrate import upgrade_to_head


class ExportFormat(StrEnum):
    yaml = "yaml"
    json = "json"


def migrate() -> None:
    """Upgrade the database schema to the newest revision."""
    settings = cli_settings()
    try:
        upgrade_to_head(settings.database_url)
    except SQLAlchemyError as exc:
        fail(f"migration failed: {exc.__class__.__name__}: {exc}")
    typer.echo(f"database at head: {shown_url(settings.database_url)}")


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
    from app.services.catalog import import_document

    settings = cli_settings()
    source = path or settings.seed_dir
    document = read_seed_document(source)
    # A dry run changes nothing, the schema included.
    with catalog_session(settings, may_write=settings.is_sqlite and not dry_run) as session:
        result = import_document(session, document, actor="cli:seed", dry_run=dry_run)
    if result.errors:
        for err in result.errors:
            where = f"{err.kind} '{err.slug}'" if err.slug else f"{err.kind} #{err.index}"
            typer.echo(f"{source}: {where}: {err.field}: {err.message}", err=True)
        fail(f"{len(result.errors)} invalid record(s); nothing was written")
    verb = "would" if dry_run else "did"
    for label, refs in (("create", result.created), ("update", result.updated)):
        for ref in refs:
            typer.echo(f"{label} {ref.kind} {ref.slug}")
    typer.echo(
        f"{verb} create {len(result.created)}, update {len(result.updated)}, "
        f"leave {len(result.unchanged)} unchanged"
    )


def export(
    format: Annotated[ExportFormat, typer.Option("--format", help="yaml or json")] = (
        ExportFormat.yaml
    ),
    output: Annotated[Path | None, typer.Option("-o", "--output", help="file to write")] = None,
) -> None:
    """Write the whole catalog as one document that `tierline seed` accepts."""
    from app.services.catalog import export_document

    # Never writes: seeding or migrating first would export something the database did not
    # hold (a mistyped path exporting the shipped catalog looks like a good backup).
    with catalog_session(cli_settings(), may_write=False) as session:
        document: dict[str, Any] = export_document(session)
    if format is ExportFormat.json:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)
