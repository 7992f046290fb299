"""Columns every catalog record shares: public slug, provenance, optimistic-concurrency version."""

from datetime import UTC, date, datetime

from sqlalchemy import JSON, Date, DateTime, Integer, String, Text
from sqlalchemy.orm import Mapped, declared_attr, mapped_column

SLUG_LENGTH = 80
NAME_LENGTH = 160
URL_LENGTH = 500
SHORT_TEXT_LENGTH = 200
NOTES_LENGTH = 4000


def utcnow() -> datetime:
    return datetime.now(UTC)


class CatalogRecord:
    """Slug identity, sources and a version counter used as the ETag (stale edits fail)."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(SLUG_LENGTH), unique=True, index=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    notes: Mapped[str] = mapped_column(Text, default="")
    # Field names whose values are estimates rather than published figures.
    estimated: Mapped[list[str]] = mapped_column(JSON, default=list)
    source_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    as_of: Mapped[date] = mapped_column(Date)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, object]:  # noqa: N805
        # SQLAlchemy adds "AND version = :old" to every UPDATE/DELETE and bumps it, so two
        # concurrent edits of one record can never both succeed.
        return {"version_id_col": cls.version}
