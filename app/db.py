"""Database plumbing: declarative base with a constraint naming convention, engine factory."""

from typing import Any

from sqlalchemy import MetaData, event
from sqlalchemy.engine import Engine, create_engine
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base of every ORM model; constraint names follow NAMING_CONVENTION."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    # WAL lets readers proceed while one writer commits (several workers on one file).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def make_engine(url: str, *, connect_timeout_s: float = 3.0) -> Engine:
    """Create an Engine; SQLite gets foreign keys on, PostgreSQL a short connect timeout."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=10,
        pool_timeout=connect_timeout_s,
        connect_args={"connect_timeout": max(1, int(connect_timeout_s))},
    )


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded attributes after commit (templates read them afterwards)."""
    return sessionmaker(engine, expire_on_commit=False)
