"""The backup procedure of docs/deploy.md: pg_dump a seeded database, pg_restore it into a new one,
and find every record and the schema at head."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url

from app.db import make_engine, make_sessionmaker
from app.migrate import alembic_config
from app.services.catalog import export_document
from app.services.tokens import create_token
from tests.reliability.rel_support import seed_database

pytestmark = pytest.mark.postgres


def _libpq(url: str) -> str:
    """The URL without SQLAlchemy's driver suffix, as pg_dump and pg_restore take it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _fresh_database(factory, name: str) -> str:  # type: ignore[no-untyped-def]
    with factory.admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        conn.execute(text(f"CREATE DATABASE {name}"))
    return factory.url(name)


def _contents(url: str) -> tuple[dict, dict[str, int], str | None]:  # type: ignore[type-arg]
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            document = export_document(session)
        with engine.connect() as conn:
            tables = sorted(inspect(conn).get_table_names())
            counts = {t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one()
                      for t in tables}
            revision = MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
    return document, counts, revision


def test_pg_dump_and_pg_restore_round_trip(postgres_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for tool in ("pg_dump", "pg_restore"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (postgresql-client)")
    suffix = os.getpid()
    source = _fresh_database(postgres_factory, f"rel_backup_src_{suffix}")
    target = _fresh_database(postgres_factory, f"rel_backup_dst_{suffix}")
    try:
        seed_database(source)
        engine = make_engine(source)
        with make_sessionmaker(engine)() as session:
            create_token(session, name="backup-test")  # admin state is part of the backup too
        engine.dispose()

        dump = tmp_path / "tierline.dump"
        subprocess.run(
            ["pg_dump", "--format=custom", "--no-owner", f"--file={dump}", _libpq(source)],
            check=True, capture_output=True, timeout=120,
        )
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={_libpq(target)}",
             str(dump)],
            check=True, capture_output=True, timeout=120,
        )

        document, counts, revision = _contents(source)
        restored_document, restored_counts, restored_revision = _contents(target)
        head = ScriptDirectory.from_config(alembic_config(target)).get_current_head()
        assert restored_revision == head
        assert revision == head
        assert restored_counts == counts
        assert counts["build"] > 0 and counts["api_token"] == 1 and counts["audit_event"] > 0
        assert restored_document == document
    finally:
        postgres_factory.drop(f"rel_backup_src_{suffix}")
        postgres_factory.drop(f"rel_backup_dst_{suffix}")
