"""The audit log: who changed which record, with the record before and after."""

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import AuditEvent


def record_change(
    session: Session,
    *,
    actor: str,
    action: str,
    kind: str,
    slug: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    """Add an audit event to the caller's transaction (it commits with the change)."""
    session.add(
        AuditEvent(actor=actor, action=action, kind=kind, slug=slug, before=before, after=after)
    )


def list_events(
    session: Session,
    *,
    kind: str | None = None,
    slug: str | None = None,
    action: str | None = None,
    actor: str | None = None,
    page: int = 1,
    per_page: int = 50,
) -> tuple[list[AuditEvent], int]:
    """One page of audit events, newest first, with the total matching the filters."""
    stmt = select(AuditEvent)
    for column, value in (
        (AuditEvent.kind, kind),
        (AuditEvent.slug, slug),
        (AuditEvent.action, action),
        (AuditEvent.actor, actor),
    ):
        if value:
            stmt = stmt.where(column == value)
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = session.scalars(
        stmt.order_by(AuditEvent.id.desc()).offset((page - 1) * per_page).limit(per_page)
    )
    return list(rows), total


def get_event(session: Session, event_id: int) -> AuditEvent | None:
    """One audit event by id."""
    return session.get(AuditEvent, event_id)
