"""The `tierline` command: serve, migrate, seed, export, estimate, recommend, serving (and admin
tokens). Each group of commands lives in its own module; this one assembles them."""

import typer

from app.cli.catalog import export, migrate, seed
from app.cli.estimate import estimate, recommend
from app.cli.server import serve, uvicorn_options
from app.cli.serving import serving
from app.cli.tokens import admin_cli

__all__ = ["cli", "main", "uvicorn_options"]

cli = typer.Typer(
    help="tierline: which AI hardware build runs this model, how fast, and at what cost.",
    no_args_is_help=True,
    add_completion=False,
)
cli.add_typer(admin_cli, name="admin")
for command in (migrate, seed, export, serving, serve, estimate, recommend):
    cli.command()(command)


def main() -> None:
    """Console-script entry point."""
    cli()
