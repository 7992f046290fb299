"""Admin audit log: who changed what, one event, and restoring a deleted record."""

from typing import Annotated, Any, Literal

from fastapi import Path, Query, Request
from fastapi.responses import JSONResponse, Response

from app.admin.api import MAX_ID, NO_STORE, admin_problem, admin_router, created_response
from app.admin.schemas import AuditEventOut, AuditPage, StorableText
from app.deps import AdminDep, SessionDep
from app.errors import NotFound
from app.models import AuditEvent
from app.pagination import ListResult, page_links
from app.services.admin_records import restore_from_audit
from app.services.audit import get_event, list_events

router = admin_router()

def audit_event_out(event: AuditEvent) -> dict[str, Any]:
    """An audit event as JSON-ready data."""
    return AuditEventOut.model_validate(event, from_attributes=True).model_dump(mode="json")


@router.get(
    "/audit",
    response_model=AuditPage,
    operation_id="admin_list_audit",
    summary="The audit log, newest first",
)
def list_audit(
    request: Request,
    session: SessionDep,
    kind: Literal["accelerator", "build", "model", "measurement"] | None = None,
    slug: Annotated[str | None, StorableText, Query(max_length=200)] = None,
    action: Literal["create", "update", "delete", "restore"] | None = None,
    actor: Annotated[str | None, StorableText, Query(max_length=80)] = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Response:
    """Who changed what and when, filtered by kind, slug, action or actor; paginated."""
    events, total = list_events(
        session, kind=kind, slug=slug, action=action, actor=actor, page=page, per_page=per_page
    )
    result = ListResult(
        items=[audit_event_out(e) for e in events], total=total, page=page, per_page=per_page
    )
    next_url, link = page_links(request.url, result)
    headers = {**NO_STORE, "Link": link}
    body = {
        "items": result.items,
        "total": total,
        "page": page,
        "per_page": per_page,
        "next_url": next_url,
    }
    return JSONResponse(body, headers=headers)


EventId = Annotated[int, Path(ge=1, le=MAX_ID)]


@router.get(
    "/audit/{event_id}",
    response_model=AuditEventOut,
    operation_id="admin_get_audit_event",
    summary="One audit event",
    responses={404: admin_problem("no such event")},
)
def read_audit_event(event_id: EventId, session: SessionDep) -> Response:
    """One change with the record before and after."""
    event = get_event(session, event_id)
    if event is None:
        raise NotFound(f"no audit event {event_id}")
    return JSONResponse(audit_event_out(event), headers=NO_STORE)


@router.post(
    "/audit/{event_id}/restore",
    status_code=201,
    operation_id="admin_restore_from_audit",
    summary="Restore a deleted record from its delete event",
    responses={
        404: admin_problem("no such event"),
        409: admin_problem("not a delete event, or the record exists again"),
        422: admin_problem("the old record is no longer valid (e.g. its accelerator is gone)"),
    },
)
def restore_audit_event(event_id: EventId, session: SessionDep, actor: AdminDep) -> Response:
    """Recreate the record as it was when deleted (a new version 1), audited as a restore."""
    result = restore_from_audit(session, event_id, actor=actor)
    return created_response(result)
