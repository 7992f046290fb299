"""What the commands share: failing with a message, reading input files, running a service."""

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
import yaml
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from app.config import Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.errors import DomainError, field_errors


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


@contextmanager
def catalog_session(settings: Settings) -> Iterator[Session]:
    """A session on the configured database; its engine is disposed when the command is done."""
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            yield session
    finally:
        engine.dispose()


def engine_answer(run: Callable[[Session, Settings], Any], *, error_code: int = 2) -> Any:
    """Run a service call on the configured catalog; domain errors exit `error_code` naming
    the field."""
    settings = get_settings()
    try:
        with catalog_session(settings) as session:
            return run(session, settings)
    except DomainError as exc:
        for err in exc.errors:
            typer.echo(f"{err.field}: {err.message}", err=True)
        fail(exc.detail, code=error_code)
