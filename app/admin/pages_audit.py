"""Admin audit pages: the log, one event before and after, restoring a deleted record."""

import json
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Query, Request
from fastapi.responses import Response

from app.admin.pages import FormDep, admin_page, admin_pages_router, see_other
from app.admin.schemas import StorableText
from app.deps import AdminDep, SessionDep
from app.errors import Conflict, DomainError, InvalidInput, NotFound
from app.services.admin_records import restore_from_audit
from app.services.audit import field_changes, get_event, list_events
from app.services.records import KIND_BY_NAME, get_record

pages = admin_pages_router()
AUDIT_PAGE_SIZE = 50


@pages.get("/audit")
def audit_log(
    request: Request,
    session: SessionDep,
    actor: AdminDep,
    kind: Annotated[str, Query(max_length=20)] = "",
    slug: Annotated[str, StorableText, Query(max_length=200)] = "",
    action: Annotated[str, Query(max_length=20)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    """The audit log, newest first, filtered by kind, slug and action."""
    events, total = list_events(
        session,
        kind=kind or None,
        slug=slug or None,
        action=action or None,
        page=page,
        per_page=AUDIT_PAGE_SIZE,
    )
    filters = {"kind": kind, "slug": slug, "action": action}
    query = {k: v for k, v in filters.items() if v}
    pages_total = max(1, -(-total // AUDIT_PAGE_SIZE))
    json_url = "/api/v1/admin/audit" + (f"?{urlencode(query)}" if query else "")
    links = {
        "prev": f"/admin/audit?{urlencode({**query, 'page': page - 1})}" if page > 1 else None,
        "next": (
            f"/admin/audit?{urlencode({**query, 'page': page + 1})}" if page < pages_total else None
        ),
    }
    return admin_page(
        request,
        session,
        "admin/audit.html",
        {
            "events": events,
            "total": total,
            "page": page,
            "pages_total": pages_total,
            "filters": filters,
            "links": links,
            "api_url": json_url,
        },
        actor=actor,
    )


@pages.get("/audit/{event_id}")
def audit_event(request: Request, session: SessionDep, actor: AdminDep, event_id: int) -> Response:
    """One change: the record before and after; a deleted record can be restored from here."""
    return _event_page(request, session, actor, event_id)


def _event_page(
    request: Request, session: Any, actor: str, event_id: int, problem: DomainError | None = None
) -> Response:
    event = get_event(session, event_id) if 0 < event_id < 2**31 else None
    if event is None:
        raise NotFound(f"no audit event {event_id}")
    kind = KIND_BY_NAME.get(event.kind)
    exists = kind is not None and get_record(session, kind, event.slug) is not None
    before, after = event.before or {}, event.after or {}
    changes = field_changes(before, after)
    return admin_page(
        request,
        session,
        "admin/audit_event.html",
        {
            "event": event,
            "kind": kind,
            "exists": exists,
            "changes": changes,
            "before_json": json.dumps(event.before, indent=2, ensure_ascii=False),
            "after_json": json.dumps(event.after, indent=2, ensure_ascii=False),
            "can_restore": event.action == "delete" and not exists,
            "problem": problem,
            "api_url": f"/api/v1/admin/audit/{event.id}",
        },
        actor=actor,
        status_code=problem.status_code if problem else 200,
    )


@pages.post("/audit/{event_id}/restore")
def audit_restore(
    request: Request, session: SessionDep, actor: AdminDep, form: FormDep, event_id: int
) -> Response:
    """Recreate a deleted record as it was."""
    try:
        result = restore_from_audit(session, event_id, actor=actor)
    except (Conflict, InvalidInput) as exc:
        session.rollback()
        return _event_page(request, session, actor, event_id, problem=exc)
    return see_other(f"/admin/{result.kind.key}/{result.slug}?restored=1")
