"""Admin record pages: the dashboard, lists per kind, create and edit forms, delete."""

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import Response

from app.admin.forms import BoundForm, display_values, kind_fields, record_from_form
from app.admin.hub_form import create_model_from_hub, file_hub_errors
from app.admin.pages import (
    FormDep,
    SlugSegment,
    admin_page,
    admin_pages_router,
    form_text,
    kind_for_key,
    see_other,
)
from app.deps import AdminDep, SessionDep, SettingsDep
from app.errors import Conflict, DomainError, FieldError, InvalidInput, PreconditionFailed
from app.services.admin_records import delete_record, put_record, read_record
from app.services.audit import list_events
from app.services.build_card_forms import follow_edited_card_form
from app.services.preconditions import Preconditions
from app.services.records import KINDS, Kind, all_records, record_document
from app.web.common import Notice

pages = admin_pages_router()


@pages.get("")
def dashboard(request: Request, session: SessionDep, actor: AdminDep) -> Response:
    """Counts per kind and the latest changes."""
    counts = {kind.key: len(all_records(session, kind)) for kind in KINDS}
    events, _ = list_events(session, page=1, per_page=10)
    return admin_page(
        request, session, "admin/index.html", {"counts": counts, "events": events}, actor=actor
    )


@pages.get("/{key}")
def record_list(request: Request, session: SessionDep, actor: AdminDep, key: str) -> Response:
    """Every record of a kind, with links to edit each."""
    kind = kind_for_key(key)
    return admin_page(
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
    kind = kind_for_key(key)
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
    kind = kind_for_key(key)
    fields = kind_fields(kind, with_slug=True)
    raw, submitted, errors = record_from_form(fields, form)
    bound = BoundForm(fields, submitted)
    hf_id = form_text(form, "hf_id")
    if kind.name == "model" and hf_id and not errors:
        try:
            created = create_model_from_hub(session, raw, hf_id=hf_id, actor=actor,
                                            settings=settings)
        except DomainError as exc:
            session.rollback()
            file_hub_errors(bound, exc, hf_id=hf_id)
            return _form_page(request, session, actor, kind, bound, record=None,
                              status_code=exc.status_code)
        return see_other(f"/admin/{kind.key}/{created}?created=1")
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
        return _refused_page(request, session, actor, kind, bound, exc, record=None)
    except PreconditionFailed:
        bound.add_errors([FieldError("slug", f"a {kind.name} '{slug}' already exists")])
        return _form_page(request, session, actor, kind, bound, record=None, status_code=409)
    return see_other(f"/admin/{kind.key}/{slug}?created=1")


@pages.get("/{key}/{slug}")
def edit_form(
    request: Request, session: SessionDep, actor: AdminDep, key: str, slug: SlugSegment
) -> Response:
    """The record's fields as a form, its version, its history and a delete button."""
    kind = kind_for_key(key)
    record = read_record(session, kind, slug)
    bound = _saved_form(kind, record)
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
    kind = kind_for_key(key)
    record = read_record(session, kind, slug)
    fields = kind_fields(kind, with_slug=False)
    raw, submitted, errors = record_from_form(fields, form)
    bound = BoundForm(fields, submitted)
    if errors:
        bound.add_errors(errors)
        return _form_page(request, session, actor, kind, bound, record=record, status_code=422)
    if kind.name == "build":
        follow_edited_card_form(record_document(record), raw)
    version = form_text(form, "version")
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
        return _refused_page(request, session, actor, kind, bound, exc, record=record)
    return see_other(f"/admin/{kind.key}/{slug}?saved=1")


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
    kind = kind_for_key(key)
    try:
        delete_record(
            session,
            kind,
            slug,
            actor=actor,
            preconditions=Preconditions(if_match=frozenset({form_text(form, "version")})),
        )
    except (PreconditionFailed, Conflict) as exc:
        session.rollback()
        record = read_record(session, kind, slug)
        return _form_page(
            request,
            session,
            actor,
            kind,
            _saved_form(kind, record),
            record=record,
            notices=[Notice(exc.detail)],
            status_code=exc.status_code,
        )
    return see_other(f"/admin/audit?{urlencode({'kind': kind.name, 'slug': slug})}")


def _saved_form(kind: Kind, record: Any) -> BoundForm:
    """The edit form filled with the record as saved."""
    fields = kind_fields(kind, with_slug=False)
    return BoundForm(fields, display_values(fields, record_document(record)))


def _refused_page(
    request: Request,
    session: Any,
    actor: str,
    kind: Kind,
    bound: BoundForm,
    exc: InvalidInput | Conflict,
    *,
    record: Any,
) -> Response:
    """The form again with the write's refusal beside its fields (or the whole record)."""
    bound.add_errors(exc.errors or [FieldError("(record)", exc.detail)])
    return _form_page(
        request, session, actor, kind, bound, record=record, status_code=exc.status_code
    )


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
    return admin_page(
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
