"""Model profiles: list, CSV export, detail."""

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from app.api._common import (
    API_PREFIX,
    CSV_RESPONSE,
    GET_RESPONSES,
    NOT_FOUND,
    cached_csv,
    cached_json,
    cached_page,
    parse_query,
    query_openapi,
    record_etag,
)
from app.schemas.listing import ModelPage, ModelQuery
from app.schemas.model_profile import ModelListItem, ModelRead
from app.services import model_profiles

router = APIRouter(prefix=API_PREFIX, tags=["models"])

MODEL_CSV_COLUMNS = tuple(ModelListItem.model_fields)
SlugPath = Annotated[str, Path(max_length=200, description="model slug")]


@router.get(
    "/models",
    response_model=ModelPage,
    operation_id="listModels",
    summary="List model profiles",
    responses=GET_RESPONSES,
    openapi_extra=query_openapi(ModelQuery),
)
def list_model_profiles(request: Request) -> Response:
    """Model profiles matching the filters, sorted and paged."""
    query = parse_query(request, ModelQuery)
    return cached_page(
        request, lambda session: model_profiles.list_model_profiles(session, query=query)
    )


@router.get(
    "/models.csv",
    operation_id="exportModelsCsv",
    summary="Export model profiles as CSV",
    response_class=Response,
    responses=CSV_RESPONSE | GET_RESPONSES,
    openapi_extra=query_openapi(ModelQuery),
)
def export_models_csv(request: Request) -> Response:
    """Every model matching the filters (paging ignored), as a CSV attachment."""
    query = parse_query(request, ModelQuery)
    return cached_csv(
        request,
        filename="tierline-models.csv",
        columns=MODEL_CSV_COLUMNS,
        rows=lambda session: model_profiles.matching_model_profiles(session, query=query),
    )


@router.get(
    "/models/{slug}",
    response_model=ModelRead,
    operation_id="getModel",
    summary="Get a model profile",
    responses=GET_RESPONSES | NOT_FOUND,
)
def get_model_profile(request: Request, slug: SlugPath) -> Response:
    """The full model profile: its config.json, the architecture the engine reads from it and
    the computed parameter counts beside the published ones. The ETag is the record version."""
    return cached_json(
        request,
        lambda session: model_profiles.get_model_profile(session, slug=slug),
        etag=record_etag,
    )
