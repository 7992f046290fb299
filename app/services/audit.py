"""The audit log: who changed which record, with the record before and after."""

import json
from dataclasses import dataclass
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


@dataclass(frozen=True)
class FieldChange:
    """One field of a record that an event changed: its dotted path and both values as text."""

    field: str
    before: str | None  # None: the field did not exist before (or the record did not)
    after: str | None  # None: the field is gone (or the record was deleted)

    def __str__(self) -> str:
        return f"{self.field} {self.before or '(none)'} → {self.after or '(none)'}"


def _value_text(value: Any, limit: int = 200) -> str:
    # JSON spelling, so text reads "text" and an empty value reads null; a stored 10000.0 reads
    # 10000, as the person typed it.
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value


def field_changes(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> list[FieldChange]:
    """What an event changed, field by field (nested objects by dotted path, lists whole), in
    field order: "price_usd 10000 → 9800" rather than two whole documents. Version counters are
    left out: they change on every write and say nothing about what changed."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    _flatten(before or {}, "", old)
    _flatten(after or {}, "", new)
    fields = list(old) + [k for k in new if k not in old]
    changes = []
    for name in fields:
        if name == "version" or (name in old and name in new and old[name] == new[name]):
            continue
        changes.append(
            FieldChange(
                name,
                _value_text(old[name]) if name in old else None,
                _value_text(new[name]) if name in new else None,
            )
        )
    return changes
