"""`tierline admin`: create, list and revoke admin API tokens."""

from contextlib import AbstractContextManager
from typing import Annotated

import typer
from sqlalchemy.orm import Session

from app.cli.common import catalog_session, cli_settings
from app.errors import DomainError
from app.services.tokens import create_token, list_tokens, revoke_token

admin_cli = typer.Typer(help="Admin API tokens.", no_args_is_help=True, add_completion=False)

NameArg = Annotated[str, typer.Argument(help="token name; it is the actor in the audit log")]


def _catalog() -> AbstractContextManager[Session]:
    settings = cli_settings()
    return catalog_session(settings, may_write=settings.is_sqlite)


def _fail(error: DomainError) -> None:
    reasons = "".join(f"\n  {e.field}: {e.message}" for e in error.errors)
    typer.secho(f"{error.detail}{reasons}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code=1)


@admin_cli.command("create-token")
def create_token_command(name: NameArg) -> None:
    """Create a token and print it once, as the last line (only its hash is stored)."""
    with _catalog() as session:
        try:
            token = create_token(session, name=name)
        except DomainError as exc:
            _fail(exc)
    typer.echo(f"created admin token '{name}'; store it now, it is not shown again:")
    typer.echo(token)


@admin_cli.command("list-tokens")
def list_tokens_command() -> None:
    """List tokens: name, created, last used, active or revoked (never the token itself)."""
    with _catalog() as session:
        tokens = list_tokens(session)
    if not tokens:
        typer.echo("no tokens; create one with `tierline admin create-token NAME`")
        return
    typer.echo(f"{'name':<24} {'created':<20} {'last used':<20} status")
    for token in tokens:
        status = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "active"
        last = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
        typer.echo(f"{token.name:<24} {token.created_at:%Y-%m-%d %H:%M}{'':<4} {last:<20} {status}")


@admin_cli.command("revoke-token")
def revoke_token_command(name: NameArg) -> None:
    """Revoke a token; API calls and page sessions using it stop working at once."""
    with _catalog() as session:
        try:
            revoke_token(session, name=name)
        except DomainError as exc:
            _fail(exc)
    typer.echo(f"revoked admin token '{name}'")
