"""The admin import page: upload or paste a document, preview it field by field, apply it."""

import json
from datetime import date
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from app.admin.documents import MAX_LISTED_ERRORS, parse_document
from app.admin.pages import FormDep, admin_page, admin_pages_router, form_text
from app.catalog_version import current_catalog_version
from app.deps import AdminDep, SessionDep
from app.errors import DomainError, FieldError, InvalidInput
from app.services.catalog import import_document
from app.services.import_preview import describe_import
from app.services.record_writes import LostRace
from app.web.common import Notice

pages = admin_pages_router()


@pages.get("/import")
def import_form(request: Request, session: SessionDep, actor: AdminDep) -> Response:
    """Upload or paste a catalog document; a preview of its changes comes before applying."""
    return admin_page(request, session, "admin/import.html", {"stage": "upload"}, actor=actor)


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
            text = form_text(form, "text")
            if not text.strip():
                raise InvalidInput(
                    "choose a file or paste a document",
                    errors=[FieldError("file", "no document given")],
                )
            document = parse_document(text, None)
    except DomainError as exc:
        return admin_page(
            request,
            session,
            "admin/import.html",
            {"stage": "upload", "problem": exc},
            actor=actor,
            status_code=exc.status_code,
        )

    apply = form_text(form, "action") == "apply"
    seen_version = form_text(form, "catalog_version")
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
        try:
            result = import_document(session, document, actor=actor, dry_run=False)
        except LostRace as race:
            # Someone saved one of these records between the preview and now: nothing was
            # written; show the preview again with what happened.
            apply = False
            notice = Notice(f"Nothing was imported: {race.detail}.")
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
    return admin_page(
        request, session, "admin/import.html", context, actor=actor, status_code=status
    )



def _iso_date(value: Any) -> str:
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
