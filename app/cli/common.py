"""What the commands share: failing with a message, reading input files, opening the catalog,
running a service."""

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
import yaml
from alembic.util import CommandError
from pydantic import BaseModel, ValidationError
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.config import Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.errors import DomainError, field_errors
from app.migrate import schema_revisions, upgrade_to_head
from app.models import Build


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print `message` in red on stderr and exit with `code`."""
    typer.secho(message, err=True, fg=typer.colors.RED)
    raise typer.Exit(code=code)


def echo_field_errors(exc: ValidationError) -> None:
    """Each refused field on stderr as "field.path: reason" (the API's own wording)."""
    for err in field_errors(exc.errors(include_url=False)):
        typer.echo(f"{err.field}: {err.message}", err=True)


M = TypeVar("M", bound=BaseModel)


def validated(schema: type[M], values: Mapping[str, Any]) -> M:
    """The API's own validation of a command's input, so the command refuses what the endpoint
    refuses: each refused field on stderr, exit 2."""
    try:
        return schema.model_validate(values)
    except ValidationError as exc:
        echo_field_errors(exc)
        raise typer.Exit(code=2) from None


def echo_json(answer: Any) -> None:
    """The API's JSON answer, indented."""
    typer.echo(json.dumps(answer, indent=2, ensure_ascii=False))


def read_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON or YAML object from a file, or exit naming the file and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"{path}: cannot read: {exc.strerror or exc}")
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        fail(f"{path}: not valid JSON/YAML: {exc}")
    if not isinstance(data, dict):
        fail(f"{path}: {what} must be a JSON/YAML object")
    return data


def cli_settings() -> Settings:
    """The settings, or exit 2 naming each refused TIERLINE_ setting and the reason."""
    try:
        return get_settings()
    except ValidationError as exc:
        for err in field_errors(exc.errors(include_url=False)):
            typer.secho(f"TIERLINE_{err.field.upper()}: {err.message}", err=True, fg="red")
        raise typer.Exit(code=2) from None


def catalog_is_empty(url: str) -> bool:
    """True when the database at `url` holds no builds (a fresh install to seed)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return (conn.scalar(select(func.count()).select_from(Build)) or 0) == 0
    finally:
        engine.dispose()


def shown_url(url: str) -> str:
    """A database URL fit to print: its password hidden."""
    return make_url(url).render_as_string(hide_password=True)


def read_seed_document(source: Path) -> dict[str, Any]:
    """The catalog document of a seed directory or one YAML/JSON file, or exit naming it."""
    from app.services.catalog import load_document_file, load_seed_directory

    if not source.exists():
        fail(f"{source}: no such file or directory")
    try:
        return load_seed_directory(source) if source.is_dir() else load_document_file(source)
    except (OSError, yaml.YAMLError) as exc:
        fail(f"{source}: cannot read: {exc}")


def prepare_catalog(settings: Settings, *, may_write: bool, seed: bool) -> None:
    """Bring the database to what `serve` starts on: the schema at head and, with `seed` and no
    builds yet, the shipped catalog. Without `may_write`, a schema not at head exits naming the
    database and the command to run (progress goes to stderr: stdout may be JSON)."""
    from app.services.catalog import import_document

    shown = shown_url(settings.database_url)
    try:
        current, heads = schema_revisions(settings.database_url)
        if current != heads and not may_write:
            if current:
                state = f"is at schema revision {', '.join(sorted(current))}, not "
                state += f"{', '.join(sorted(heads))}: run `tierline migrate` first"
            else:
                state = "has no tierline schema yet: run `tierline migrate` and `tierline seed`"
            fail(f"the database {shown} {state}")
        if current != heads:
            upgrade_to_head(settings.database_url)
            typer.echo(f"database at head: {shown}", err=True)
        if may_write and seed and catalog_is_empty(settings.database_url):
            document = read_seed_document(settings.seed_dir)
            with _session(settings.database_url) as session:
                result = import_document(session, document, actor="cli:seed")
            if result.errors:
                fail(f"{settings.seed_dir}: invalid records, nothing seeded: run `tierline seed`")
            typer.echo(
                f"seeded the empty catalog from {settings.seed_dir}: {len(result.created)} records",
                err=True,
            )
    except (SQLAlchemyError, CommandError) as exc:  # unreachable, or a schema newer than this code
        # The driver's words on one line, without SQLAlchemy's link.
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
        fail(f"cannot open the database {shown}: {exc.__class__.__name__}: {reason}")


@contextmanager
def _session(url: str) -> Iterator[Session]:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            yield session
    finally:
        engine.dispose()


@contextmanager
def catalog_session(
    settings: Settings, *, may_write: bool, seed: bool = False
) -> Iterator[Session]:
    """A session on the configured database prepared as `serve` prepares it
    (`prepare_catalog`); its engine is disposed when the command is done."""
    prepare_catalog(settings, may_write=may_write, seed=seed)
    with _session(settings.database_url) as session:
        yield session


def engine_answer(run: Callable[[Session, Settings], Any], *, error_code: int = 2) -> Any:
    """Run a service call on the configured catalog; domain errors exit `error_code` naming
    the field."""
    settings = cli_settings()
    try:
        # The CLI changes only a local SQLite file unasked; other databases are migrated
        # deliberately (`tierline migrate`, `serve`: docs/deploy.md, "Several hosts").
        with catalog_session(
            settings, may_write=settings.is_sqlite, seed=settings.seed_on_start
        ) as session:
            return run(session, settings)
    except DomainError as exc:
        for err in exc.errors:
            typer.echo(f"{err.field}: {err.message}", err=True)
        fail(exc.detail, code=error_code)
