"""Admin record routes: read, create-or-replace, patch and delete one record, with ETags."""

from typing import Annotated, Any

from fastapi import Body, Header, Path
from fastapi.responses import JSONResponse, Response
from starlette.convertors import StringConvertor, register_url_convertor

from app.admin.api import (
    BODY_ERRORS,
    NO_STORE,
    admin_problem,
    admin_router,
    created_response,
    record_response,
)
from app.admin.schemas import (
    AcceleratorAdmin,
    BuildAdmin,
    MeasurementAdmin,
    ModelAdmin,
    ModelFromConfig,
    StorableText,
)
from app.deps import AdminDep, SessionDep, SettingsDep
from app.schemas.model_profile import RESERVED_MODEL_SLUGS
from app.services.admin_records import (
    delete_record,
    model_from_config,
    patch_record,
    put_record,
    read_record,
    record_with_version,
)
from app.services.hf_hub import fetch_config
from app.services.preconditions import parse_preconditions
from app.services.records import KINDS, MODEL, Kind

router = admin_router()

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
    str, StorableText, Path(max_length=200, description="the record's slug")
]
ModelSlugPath = Annotated[
    str,
    StorableText,
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
        return record_response(result, status_code=201 if result.created else 200)

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
        return record_response(result)

    def delete_one(
        slug: slug_path, session: SessionDep, actor: AdminDep, if_match: IfMatch = None
    ) -> Response:
        result = delete_record(
            session, kind, slug, actor=actor, preconditions=parse_preconditions(if_match, None)
        )
        return record_response(result)

    errors: dict[int | str, dict[str, Any]] = {
        404: admin_problem(f"no such {kind.name}"),
        409: admin_problem("conflicts with another record (e.g. an accelerator still in use)"),
        412: admin_problem("If-Match is stale: someone changed the record since you read it"),
        422: admin_problem("invalid record; `errors` names each field and the reason"),
        428: admin_problem("If-Match is required to change an existing record"),
    }
    reserved: dict[int | str, dict[str, Any]] = {}
    if kind is MODEL:
        reserved[405] = admin_problem(
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
        404: admin_problem("hf_id: no such model on the Hub"),
        409: admin_problem("a model with this slug exists (PUT replaces it)"),
        422: admin_problem("invalid config or fields; hf_id malformed, gated or not a config"),
        503: admin_problem("hf_id: the Hub could not be reached"),
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
    return created_response(result)


for _kind in KINDS:
    _add_record_routes(_kind)
