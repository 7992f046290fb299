"""The catalog version: one counter in the database that every catalog write raises.

Caches in every worker process key on it, so a change is visible everywhere right after it
commits (no per-process invalidation to forget).
"""

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.models import CatalogState
from app.models._mixins import utcnow


def current_catalog_version(session: Session) -> int:
    """The version of the catalog as this session sees it."""
    return session.scalar(select(CatalogState.version).where(CatalogState.id == 1)) or 0


def bump_catalog_version(session: Session) -> None:
    """Raise the version inside the caller's transaction (it commits with the change)."""
    session.execute(
        update(CatalogState)
        .where(CatalogState.id == 1)
        .values(version=CatalogState.version + 1, updated_at=utcnow())
    )
