"""Alembic environment: the URL comes from config.attributes (tests) or the app settings."""

from alembic import context
from sqlalchemy import Connection

import app.models  # noqa: F401  (registers every table)
from app.config import get_settings
from app.db import Base, make_engine

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER constraints in place; batch mode rebuilds the table.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.attributes.get("url") or get_settings().database_url
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


def run_migrations_offline() -> None:
    url = config.attributes.get("url") or get_settings().database_url
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
