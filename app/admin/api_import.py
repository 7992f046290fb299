"""Admin bulk import: a whole catalog document (JSON or YAML), all or nothing."""

from typing import Annotated, Any

import anyio
from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse, Response

from app.admin.api import NO_STORE, admin_problem, admin_router
from app.admin.documents import MAX_LISTED_ERRORS, parse_document, read_bounded_body
from app.admin.schemas import ImportResultOut
from app.deps import AdminDep, SessionDep
from app.problems import PROBLEM_JSON
from app.services.catalog import import_document
from app.services.records import KINDS

router = admin_router()

async def import_document_body(request: Request) -> Any:
    """The request body as a document, refused with 413 past max_import_bytes."""
    body = await read_bounded_body(request, request.app.state.settings.max_import_bytes)
    # Parsing megabytes takes a while even with libyaml: in the thread pool, so the event loop
    # keeps answering everyone else meanwhile.
    return await anyio.to_thread.run_sync(
        parse_document, body, request.headers.get("content-type")
    )


_DOCUMENT_SCHEMA = {
    "type": "object",
    "properties": {
        key: {"type": "array", "items": {"type": "object"}}
        for key in (kind.key for kind in KINDS)
    },
    "additionalProperties": False,
}


@router.post(
    "/import",
    response_model=ImportResultOut,
    operation_id="admin_import",
    summary="Import a catalog document (JSON or YAML), all or nothing",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": _DOCUMENT_SCHEMA},
                "application/yaml": {"schema": _DOCUMENT_SCHEMA},
            },
        }
    },
    responses={
        413: admin_problem("the document exceeds max_import_bytes"),
        415: admin_problem("neither JSON nor YAML"),
        422: admin_problem(
            "invalid document: `errors` names each record and field (the first "
            f"{MAX_LISTED_ERRORS}; `error_count` counts them all), and "
            "`created`/`updated`/`unchanged` are empty; nothing was written"
        ),
    },
)
def import_catalog(
    document: Annotated[Any, Depends(import_document_body)],
    session: SessionDep,
    actor: AdminDep,
    dry_run: Annotated[bool, Query(description="validate and report, change nothing")] = False,
) -> Response:
    """Upsert by slug the document's accelerators, builds, models and measurements (the
    seed/export format).

    Answers what was (or in a dry run would be) created, updated and left unchanged; the dry
    run's answer equals the real run's. Any invalid record means nothing is written.
    """
    result = import_document(session, document, actor=actor, dry_run=dry_run)
    body = result.as_dict()
    body["error_count"] = len(result.errors)
    body["errors"] = body["errors"][:MAX_LISTED_ERRORS]
    if result.errors:
        problem = {
            "type": "about:blank",
            "title": "Invalid input",
            "status": 422,
            "detail": f"{len(result.errors)} problem(s) in the document; nothing was written",
            **body,
        }
        return JSONResponse(problem, status_code=422, media_type=PROBLEM_JSON, headers=NO_STORE)
    return JSONResponse(body, headers=NO_STORE)
