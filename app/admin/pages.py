"""Admin pages under /admin: sign-in, record lists and edit forms, import with preview, audit log.

The pages call the same services as the admin JSON API. Every POST goes through `verified_form`
(CSRF), and every page but the sign-in/out through `require_admin` (the signed session cookie).
"""

import json
from datetime import date
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData, UploadFile

from app.admin.csrf import csrf_token, rotate_csrf_token, verified_form
from app.admin.documents import MAX_LISTED_ERRORS, parse_document
from app.admin.forms import BoundForm, display_values, kind_fields, record_from_form
from app.admin.hub_form import create_model_from_hub, file_hub_errors
from app.admin.schemas import NoNul
from app.catalog_version import current_catalog_version
from app.deps import ADMIN_SESSION_KEY, AdminDep, SessionDep, SettingsDep, require_admin
from app.errors import (
    Conflict,
    DomainError,
    FieldError,
    InvalidInput,
    NotFound,
    PreconditionFailed,
    TooManyRequests,
    Unauthorized,
)
from app.services.admin_records import (
    Preconditions,
    delete_record,
    describe_import,
    put_record,
    read_record,
    restore_from_audit,
)
from app.services.admin_sessions import end_session, start_session
from app.services.audit import field_changes, get_event, list_events
from app.services.catalog import import_document
from app.services.records import (
    KIND_BY_KEY,
    KIND_BY_NAME,
    KINDS,
    Kind,
    all_records,
    get_record,
    record_document,
)
from app.services.sign_in import sign_in
from app.web.common import Notice, render

FormDep = Annotated[FormData, Depends(verified_form)]
# PostgreSQL text cannot hold NUL: such a slug is refused (422 naming it) before any query.
SlugSegment = Annotated[str, NoNul, Path(max_length=200)]
AUDIT_PAGE_SIZE = 50

public = APIRouter(prefix="/admin", include_in_schema=False)
pages = APIRouter(prefix="/admin", include_in_schema=False, dependencies=[Depends(require_admin)])


def _page(
    request: Request,
    session: Any,
    template: str,
    context: dict[str, Any],
    *,
    status_code: int = 200,
    actor: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    ctx = {"csrf_token": csrf_token(request), "actor": actor, "kinds": KINDS, **context}
    # The JSON twins under /api/v1/admin take a Bearer token, not this cookie: named on the
    # page as text (api_url), not linked as rel=alternate.
    return render(
        request,
        session,
        template,
        ctx,
        json_url=None,
        status_code=status_code,
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def _redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})


def _kind(key: str) -> Kind:
    kind = KIND_BY_KEY.get(key)
    if kind is None:
        raise NotFound(f"there is no admin page at /admin/{key}")
    return kind


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _iso_date(value: Any) -> str:
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _safe_next(target: str) -> str:
    # Only paths inside the admin area: never another host ("//evil", "https://...").
    if target.startswith("/admin") and not target.startswith("//") and "\\" not in target:
        return target
    return "/admin"


# ---- sign in / out ---------------------------------------------------------------------------


@public.get("/login")
def login_form(request: Request, session: SessionDep, next: str = "/admin") -> Response:
    """The sign-in form (a token from `tierline admin create-token`)."""
    return _page(request, session, "admin/login.html", {"next": _safe_next(next), "error": None})


@public.post("/login")
def login(request: Request, session: SessionDep, settings: SettingsDep, form: FormDep) -> Response:
    """Sign in with a token: rate limited per client across workers, CSRF-checked."""
    next_url = _safe_next(_text(form, "next"))
    client = request.client.host if request.client else "unknown"
    try:
        token = sign_in(
            session,
            token=_text(form, "token").strip(),
            client_key=f"ip:{client}",
            attempts_per_minute=settings.login_attempts_per_minute,
        )
    except (Unauthorized, TooManyRequests) as exc:
        return _page(
            request,
            session,
            "admin/login.html",
            {"next": next_url, "error": exc.detail},
            status_code=exc.status_code,
            headers=exc.headers,
        )
    # A fresh session (and CSRF token) on sign-in, so nothing planted before it carries over.
    request.session.clear()
    request.session[ADMIN_SESSION_KEY] = start_session(
        session, token=token, max_age_s=settings.admin_session_max_age_s
    )
    rotate_csrf_token(request)
    return _redirect(next_url)


@public.post("/logout")
def logout(request: Request, session: SessionDep, form: FormDep) -> Response:
    """Sign out (CSRF-checked, so another site cannot sign you out either): the server-side
    session ends, so a copy of the cookie is worthless from now on."""
    session_id = request.session.get(ADMIN_SESSION_KEY)
    if isinstance(session_id, str):
        end_session(session, session_id)
    request.session.clear()
    return _redirect("/admin/login")


# ---- dashboard and lists ---------------------------------------------------------------------


@pages.get("")
def dashboard(request: Request, session: SessionDep, actor: AdminDep) -> Response:
    """Counts per kind and the latest changes."""
    counts = {kind.key: len(all_records(session, kind)) for kind in KINDS}
    events, _ = list_events(session, page=1, per_page=10)
    return _page(
        request, session, "admin/index.html", {"counts": counts, "events": events}, actor=actor
    )


@pages.get("/import")
def import_form(request: Request, session: SessionDep, actor: AdminDep) -> Response:
    """Upload or paste a catalog document; a preview of its changes comes before applying."""
    return _page(request, session, "admin/import.html", {"stage": "upload"}, actor=actor)


@pages.post("/import")
def import_post(request: Request, session: SessionDep, actor: AdminDep, form: FormDep) -> Response:
    """Preview (a dry run, field by field) or apply an import document."""
    upload = form.get("file")
    try:
        if isinstance(upload, UploadFile) and upload.filename:
            name = upload.filename.lower()
            media = (
                "application/json"
                if name.endswith(".json")
                else "application/yaml"
                if name.endswith((".yaml", ".yml"))
                else None
            )
            document = parse_document(upload.file.read(), media)
        else:
            text = _text(form, "text")
            if not text.strip():
                raise InvalidInput(
                    "choose a file or paste a document",
                    errors=[FieldError("file", "no document given")],
                )
            document = parse_document(text, None)
    except DomainError as exc:
        return _page(
            request,
            session,
            "admin/import.html",
            {"stage": "upload", "problem": exc},
            actor=actor,
            status_code=exc.status_code,
        )

    apply = _text(form, "action") == "apply"
    seen_version = _text(form, "catalog_version")
    version = current_catalog_version(session)
    notice = None
    if apply and seen_version != str(version):
        # What was previewed is no longer what would happen: show the new preview instead.
        apply = False
        notice = Notice("The catalog changed since your preview; review the changes again.")
    # Describe the changes against the catalog as it is before anything is written.
    result = import_document(session, document, actor=actor, dry_run=True)
    changes = [] if result.errors else describe_import(session, document, result)
    if apply and result.ok:
        result = import_document(session, document, actor=actor, dry_run=False)
    context = {
        "stage": "applied" if apply and result.ok else "preview",
        "result": result,
        "changes": changes,
        # YAML documents hold dates (seed files write `as_of: 2024-06-01` unquoted); the
        # carried-over text states them as the ISO strings the schemas read back.
        "document_text": json.dumps(document, ensure_ascii=False, default=_iso_date),
        "listed_errors": MAX_LISTED_ERRORS,
        "catalog_version": version,
        "notices": [notice] if notice else [],
    }
    status = 422 if result.errors else 409 if notice else 200
    return _page(request, session, "admin/import.html", context, actor=actor, status_code=status)


@pages.get("/audit")
def audit_log(
    request: Request,
    session: SessionDep,
    actor: AdminDep,
    kind: Annotated[str, Query(max_length=20)] = "",
    slug: Annotated[str, NoNul, Query(max_length=200)] = "",
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
    return _page(
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
    return _page(
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
    return _redirect(f"/admin/{result.kind.key}/{result.slug}?restored=1")


@pages.get("/{key}")
def record_list(request: Request, session: SessionDep, actor: AdminDep, key: str) -> Response:
    """Every record of a kind, with links to edit each."""
    kind = _kind(key)
    return _page(
        request,
        session,
        "admin/list.html",
        {"kind": kind, "records": all_records(session, kind)},
        actor=actor,
    )


# ---- create and edit -------------------------------------------------------------------------


@pages.get("/create/{key}")
def create_form(request: Request, session: SessionDep, actor: AdminDep, key: str) -> Response:
    """An empty form for a new record."""
    kind = _kind(key)
    fields = kind_fields(kind, with_slug=True)
    bound = BoundForm(fields, display_values(fields, {}))
    return _form_page(request, session, actor, kind, bound, record=None)


@pages.post("/create/{key}")
def create_record(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    actor: AdminDep,
    form: FormDep,
    key: str,
) -> Response:
    """Create a record from the form; errors come back next to their fields. A new model may
    name its Hugging Face id instead of pasting its config.json."""
    kind = _kind(key)
    fields = kind_fields(kind, with_slug=True)
    raw, submitted, errors = record_from_form(fields, form)
    bound = BoundForm(fields, submitted)
    hf_id = _text(form, "hf_id")
    if kind.name == "model" and hf_id and not errors:
        try:
            created = create_model_from_hub(session, raw, hf_id=hf_id, actor=actor,
                                            settings=settings)
        except DomainError as exc:
            session.rollback()
            file_hub_errors(bound, exc, hf_id=hf_id)
            return _form_page(request, session, actor, kind, bound, record=None,
                              status_code=exc.status_code)
        return _redirect(f"/admin/{kind.key}/{created}?created=1")
    slug = raw.get("slug") if isinstance(raw.get("slug"), str) else ""
    if errors or not slug:
        bound.add_errors(errors or [FieldError("slug", "Field required")])
        return _form_page(request, session, actor, kind, bound, record=None, status_code=422)
    try:
        put_record(
            session,
            kind,
            slug,
            raw,
            actor=actor,
            preconditions=Preconditions(if_none_match_any=True),
        )
    except (InvalidInput, Conflict) as exc:
        bound.add_errors(exc.errors or [FieldError("(record)", exc.detail)])
        return _form_page(
            request, session, actor, kind, bound, record=None, status_code=exc.status_code
        )
    except PreconditionFailed:
        bound.add_errors([FieldError("slug", f"a {kind.name} '{slug}' already exists")])
        return _form_page(request, session, actor, kind, bound, record=None, status_code=409)
    return _redirect(f"/admin/{kind.key}/{slug}?created=1")


@pages.get("/{key}/{slug}")
def edit_form(
    request: Request, session: SessionDep, actor: AdminDep, key: str, slug: SlugSegment
) -> Response:
    """The record's fields as a form, its version, its history and a delete button."""
    kind = _kind(key)
    record = read_record(session, kind, slug)
    fields = kind_fields(kind, with_slug=False)
    bound = BoundForm(fields, display_values(fields, record_document(record)))
    notices = []
    for flag, message in (
        ("saved", "Saved."),
        ("created", "Created."),
        ("restored", "Restored from the audit log."),
    ):
        if request.query_params.get(flag):
            notices.append(Notice(f"{message} This is version {record.version}.", level="info"))
    return _form_page(request, session, actor, kind, bound, record=record, notices=notices)


@pages.post("/{key}/{slug}")
def save_record(
    request: Request,
    session: SessionDep,
    actor: AdminDep,
    form: FormDep,
    key: str,
    slug: SlugSegment,
) -> Response:
    """Replace the record with the form's values, if no one changed it since the form loaded."""
    kind = _kind(key)
    record = read_record(session, kind, slug)
    fields = kind_fields(kind, with_slug=False)
    raw, submitted, errors = record_from_form(fields, form)
    bound = BoundForm(fields, submitted)
    if errors:
        bound.add_errors(errors)
        return _form_page(request, session, actor, kind, bound, record=record, status_code=422)
    version = _text(form, "version")
    try:
        put_record(
            session,
            kind,
            slug,
            raw,
            actor=actor,
            preconditions=Preconditions(if_match=frozenset({version})),
        )
    except PreconditionFailed:
        session.rollback()
        current = read_record(session, kind, slug)
        notice = Notice(
            f"Someone changed this {kind.name} after you opened the form (it is now version "
            f"{current.version}; see its history below). Your entries are kept: saving again "
            "replaces their change with yours."
        )
        return _form_page(
            request, session, actor, kind, bound, record=current, notices=[notice], status_code=412
        )
    except (InvalidInput, Conflict) as exc:
        session.rollback()
        bound.add_errors(exc.errors or [FieldError("(record)", exc.detail)])
        return _form_page(
            request, session, actor, kind, bound, record=record, status_code=exc.status_code
        )
    return _redirect(f"/admin/{kind.key}/{slug}?saved=1")


@pages.post("/{key}/{slug}/delete")
def delete_page(
    request: Request,
    session: SessionDep,
    actor: AdminDep,
    form: FormDep,
    key: str,
    slug: SlugSegment,
) -> Response:
    """Delete the record (it stays in the audit log, from which it can be restored)."""
    kind = _kind(key)
    try:
        delete_record(
            session,
            kind,
            slug,
            actor=actor,
            preconditions=Preconditions(if_match=frozenset({_text(form, "version")})),
        )
    except (PreconditionFailed, Conflict) as exc:
        session.rollback()
        record = read_record(session, kind, slug)
        fields = kind_fields(kind, with_slug=False)
        bound = BoundForm(fields, display_values(fields, record_document(record)))
        return _form_page(
            request,
            session,
            actor,
            kind,
            bound,
            record=record,
            notices=[Notice(exc.detail)],
            status_code=exc.status_code,
        )
    return _redirect(f"/admin/audit?{urlencode({'kind': kind.name, 'slug': slug})}")


def _form_page(
    request: Request,
    session: Any,
    actor: str,
    kind: Kind,
    bound: BoundForm,
    *,
    record: Any,
    notices: list[Notice] | None = None,
    status_code: int = 200,
) -> Response:
    history: list[Any] = []
    if record is not None:
        history, _ = list_events(session, kind=kind.name, slug=record.slug, per_page=20)
    return _page(
        request,
        session,
        "admin/edit.html",
        {
            "kind": kind,
            "record": record,
            "form": bound,
            "history": history,
            "notices": notices or [],
            "api_url": f"/api/v1/admin/{kind.key}/{record.slug}" if record is not None else None,
        },
        actor=actor,
        status_code=status_code,
    )
