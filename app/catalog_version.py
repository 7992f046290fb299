"""The catalog version: one counter in the database that every catalog write raises.

Caches in every worker process key on it, so a change is visible everywhere right after it
commits (no per-process invalidation to forget). This module holds the one query that reads it
(the caches, the health check and the metrics scrape all call `read_catalog_version`).
"""

from sqlalchemy import update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.models import CatalogState
from app.models._mixins import utcnow

# Plain SQL: it runs on every request, and building the ORM statement each time costs more than
# the query itself.
VERSION_SQL = f"SELECT version FROM {CatalogState.__tablename__} WHERE id = 1"


def read_catalog_version(connection: Connection) -> int | None:
    """The catalog version on `connection` (inside its transaction), or None without the row.

    Sent on the DB-API cursor: SQLAlchemy's result set-up costs more than the query itself on a
    request that is otherwise answered from the cache. On any error the query is sent again
    through SQLAlchemy, which wraps the error (a lost database becomes OperationalError, hence
    503) and invalidates a dead connection.
    """
    try:
        cursor = connection.connection.cursor()
        try:
            cursor.execute(VERSION_SQL)
            row = cursor.fetchone()
        finally:
            cursor.close()
    except Exception:
        value = connection.exec_driver_sql(VERSION_SQL).scalar()
    else:
        value = row[0] if row else None
    return None if value is None else int(value)


def current_catalog_version(session: Session) -> int:
    """The version of the catalog as this session sees it (0 before the first write)."""
    return read_catalog_version(session.connection()) or 0


def bump_catalog_version(session: Session) -> None:
    """Raise the version inside the caller's transaction (it commits with the change)."""
    session.execute(
        update(CatalogState)
        .where(CatalogState.id == 1)
        .values(version=CatalogState.version + 1, updated_at=utcnow())
    )
