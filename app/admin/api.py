"""Admin JSON API under /api/v1/admin: record writes with ETags, bulk import, the audit log.

Every route here sits behind `require_admin` (a Bearer token; cookies do not count under /api, so
no cross-site request can use a browser's session).
"""

from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.convertors import StringConvertor, register_url_convertor

from app.admin.documents import MAX_LISTED_ERRORS, parse_document, read_bounded_body
from app.admin.schemas import (
    AcceleratorAdmin,
    AuditEventOut,
    AuditPage,
    BuildAdmin,
    ImportResultOut,
    MeasurementAdmin,
    ModelAdmin,
    ModelFromConfig,
    NoNul,
)
from app.deps import AdminDep, SessionDep, SettingsDep, require_admin
from app.errors import NotFound
from app.models import AuditEvent
from app.problems import PROBLEM_JSON, RECORD_PROBLEM_SCHEMA, problem_response
from app.schemas.model_profile import RESERVED_MODEL_SLUGS
from app.services.admin_records import (
    WriteResult,
    delete_record,
    model_from_config,
    parse_preconditions,
    patch_record,
    put_record,
    read_record,
    record_with_version,
    restore_from_audit,
)
from app.services.audit import get_event, list_events
from app.services.catalog import import_document
from app.services.hf_hub import fetch_config
from app.services.records import KINDS, MODEL, Kind

NO_STORE = {"Cache-Control": "no-store"}
MAX_ID = 2**31 - 1  # an INTEGER column on every backend


def _problem(description: str) -> dict[str, Any]:
    return problem_response(description, schema=RECORD_PROBLEM_SCHEMA)


# Routes that read a JSON body: an undecodable one is 400, one past max_body_bytes is 413.
BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: _problem("the body is not decodable JSON"),
    413: _problem("the body exceeds max_body_bytes"),
}


router = APIRouter(
    prefix="/api/v1/admin",
    tags=["admin"],
    dependencies=[Depends(require_admin)],
    responses={
        401: _problem("no valid admin token (missing, unknown or revoked)"),
        422: _problem("invalid input; `errors` names each field and the reason"),
    },
)

ADMIN_SHAPES: dict[str, type] = {
    "accelerator": AcceleratorAdmin,
    "build": BuildAdmin,
    "model": ModelAdmin,
    "measurement": MeasurementAdmin,
}
IfMatch = Annotated[
    str | None,
    Header(description='the ETag from GET, e.g. "3"; required to change an existing record'),
]
IfNoneMatch = Annotated[
    str | None, Header(description="`*` to create only (412 if the record exists)")
]
SlugPath = Annotated[
    str, NoNul, Path(max_length=200, description="the record's slug")
]
ModelSlugPath = Annotated[
    str,
    NoNul,
    Path(
        max_length=200,
        description="the model's slug (never `from-config`: that segment is its own route)",
        json_schema_extra={"not": {"enum": list(RESERVED_MODEL_SLUGS)}},
    ),
]


class _ModelSlugConvertor(StringConvertor):
    """A path segment other than a reserved one, so /models/from-config is only the POST route:
    the router then answers 405 with `Allow: POST` there instead of treating it as a slug."""

    regex = "(?!(?:" + "|".join(RESERVED_MODEL_SLUGS) + ")$)[^/]+"


register_url_convertor("tierline_model_slug", _ModelSlugConvertor())


def _record_response(result: WriteResult, *, status_code: int = 200) -> Response:
    if result.document is None:
        return Response(status_code=204, headers=NO_STORE)
    return JSONResponse(
        {**result.document, "version": result.version},
        status_code=status_code,
        headers={"ETag": f'"{result.version}"', **NO_STORE},
    )


def _add_record_routes(kind: Kind) -> None:
    shape = ADMIN_SHAPES[kind.name]
    path = f"/{kind.key}/{{slug}}"
    slug_path: Any = SlugPath
    if kind is MODEL:
        path = f"/{kind.key}/{{slug:tierline_model_slug}}"
        slug_path = ModelSlugPath
    public = f"GET /api/v1/{kind.key}/{{slug}}"

    def read_one(slug: slug_path, session: SessionDep) -> Response:
        record = read_record(session, kind, slug)
        return JSONResponse(
            record_with_version(record),
            headers={"ETag": f'"{record.version}"', **NO_STORE},
        )

    def put_one(
        slug: slug_path,
        body: Annotated[dict[str, Any], Body(description=f"the record, as {public} answers it")],
        session: SessionDep,
        actor: AdminDep,
        if_match: IfMatch = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response:
        result = put_record(
            session,
            kind,
            slug,
            body,
            actor=actor,
            preconditions=parse_preconditions(if_match, if_none_match),
        )
        return _record_response(result, status_code=201 if result.created else 200)

    def patch_one(
        slug: slug_path,
        body: Annotated[
            dict[str, Any], Body(description="JSON merge patch (RFC 7396): null removes a field")
        ],
        session: SessionDep,
        actor: AdminDep,
        if_match: IfMatch = None,
    ) -> Response:
        result = patch_record(
            session,
            kind,
            slug,
            body,
            actor=actor,
            preconditions=parse_preconditions(if_match, None),
        )
        return _record_response(result)

    def delete_one(
        slug: slug_path, session: SessionDep, actor: AdminDep, if_match: IfMatch = None
    ) -> Response:
        result = delete_record(
            session, kind, slug, actor=actor, preconditions=parse_preconditions(if_match, None)
        )
        return _record_response(result)

    errors: dict[int | str, dict[str, Any]] = {
        404: _problem(f"no such {kind.name}"),
        409: _problem("conflicts with another record (e.g. an accelerator still in use)"),
        412: _problem("If-Match is stale: someone changed the record since you read it"),
        422: _problem("invalid record; `errors` names each field and the reason"),
        428: _problem("If-Match is required to change an existing record"),
    }
    reserved: dict[int | str, dict[str, Any]] = {}
    if kind is MODEL:
        reserved[405] = _problem(
            "the slug is reserved: /models/from-config is the POST-only from-config route"
        )
    router.add_api_route(
        path,
        read_one,
        methods=["GET"],
        response_model=shape,
        operation_id=f"admin_get_{kind.name}",
        summary=f"Read one {kind.name} with its ETag",
        description=f"The {kind.name} in document shape plus `version`; `ETag` is that version.",
        responses={404: errors[404], **reserved},
    )
    router.add_api_route(
        path,
        put_one,
        methods=["PUT"],
        response_model=shape,
        operation_id=f"admin_put_{kind.name}",
        summary=f"Create or replace one {kind.name}",
        description=(
            f"Creates the {kind.name} (201; send no If-Match, or `If-None-Match: *`) or replaces "
            f"it (200; `If-Match` required). The body may be exactly what {public} answers: "
            "derived, read-only fields are ignored. A slug in the body must match the URL."
        ),
        responses={
            201: {"description": "created"},
            **BODY_ERRORS,
            **reserved,
            **{code: doc for code, doc in errors.items() if code != 404},
        },
    )
    router.add_api_route(
        path,
        patch_one,
        methods=["PATCH"],
        response_model=shape,
        operation_id=f"admin_patch_{kind.name}",
        summary=f"Change fields of one {kind.name}",
        description="Merges the patch into the record, then validates the whole record.",
        responses={**BODY_ERRORS, **errors, **reserved},
    )
    router.add_api_route(
        path,
        delete_one,
        methods=["DELETE"],
        status_code=204,
        operation_id=f"admin_delete_{kind.name}",
        summary=f"Delete one {kind.name}",
        description="The record leaves the catalog; its audit entry keeps it for a restore.",
        responses={**errors, **reserved},
    )


# from-config is registered before the per-kind routes so that no route shadows it.
@router.post(
    "/models/from-config",
    status_code=201,
    response_model=ModelAdmin,
    operation_id="admin_model_from_config",
    summary="Create a model profile from a Hugging Face config.json",
    responses={
        **BODY_ERRORS,
        404: _problem("hf_id: no such model on the Hub"),
        409: _problem("a model with this slug exists (PUT replaces it)"),
        422: _problem("invalid config or fields; hf_id malformed, gated or not a config"),
        503: _problem("hf_id: the Hub could not be reached"),
    },
)
def create_model_from_config(
    body: ModelFromConfig, session: SessionDep, settings: SettingsDep, actor: AdminDep
) -> Response:
    """Parameter counts left out are computed by the engine and listed in `estimated`. With
    `hf_id` the config.json is fetched from the Hugging Face Hub first."""
    values = body.model_dump(exclude={"hf_id"})
    if body.hf_id is not None:
        fetched = fetch_config(body.hf_id, settings=settings)
        values["config"] = fetched.config
        values["source_url"] = body.source_url or fetched.page_url
    result = model_from_config(session, actor=actor, **values)
    response = _record_response(result, status_code=201)
    response.headers["Location"] = f"/api/v1/admin/models/{result.slug}"
    return response


for _kind in KINDS:
    _add_record_routes(_kind)


# ---- bulk import -----------------------------------------------------------------------------


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
        413: _problem("the document exceeds max_import_bytes"),
        415: _problem("neither JSON nor YAML"),
        422: _problem(
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


# ---- audit log -------------------------------------------------------------------------------


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
    slug: Annotated[str | None, NoNul, Query(max_length=200)] = None,
    action: Literal["create", "update", "delete", "restore"] | None = None,
    actor: Annotated[str | None, NoNul, Query(max_length=80)] = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Response:
    """Who changed what and when, filtered by kind, slug, action or actor; paginated."""
    events, total = list_events(
        session, kind=kind, slug=slug, action=action, actor=actor, page=page, per_page=per_page
    )
    next_url = None
    headers = dict(NO_STORE)
    if page * per_page < total:
        next_url = str(request.url.include_query_params(page=page + 1))
        headers["Link"] = f'<{next_url}>; rel="next"'
    body = {
        "items": [audit_event_out(e) for e in events],
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
    responses={404: _problem("no such event")},
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
        404: _problem("no such event"),
        409: _problem("not a delete event, or the record exists again"),
        422: _problem("the old record is no longer valid (e.g. its accelerator is gone)"),
    },
)
def restore_audit_event(event_id: EventId, session: SessionDep, actor: AdminDep) -> Response:
    """Recreate the record as it was when deleted (a new version 1), audited as a restore."""
    result = restore_from_audit(session, event_id, actor=actor)
    response = _record_response(result, status_code=201)
    response.headers["Location"] = f"/api/v1/admin/{result.kind.key}/{result.slug}"
    return response
