"""Builds: list, CSV export, detail."""

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
from app.schemas.build import BuildListItem, BuildRead
from app.schemas.listing import BuildPage, BuildQuery
from app.services import builds

router = APIRouter(prefix=API_PREFIX, tags=["builds"])

BUILD_CSV_COLUMNS = tuple(BuildListItem.model_fields)
SlugPath = Annotated[str, Path(max_length=200, description="build slug")]


@router.get(
    "/builds",
    response_model=BuildPage,
    operation_id="listBuilds",
    summary="List builds",
    responses=GET_RESPONSES | NOT_FOUND,
    openapi_extra=query_openapi(BuildQuery),
)
def list_builds(request: Request) -> Response:
    """Builds matching the filters, sorted and paged; `Link: <...>; rel="next"` on all but the
    last page. `fits_model` keeps builds on which the engine says the model fits (404 if the
    model is unknown)."""
    query = parse_query(request, BuildQuery)
    return cached_page(request, lambda session: builds.list_builds(session, query=query))


@router.get(
    "/builds.csv",
    operation_id="exportBuildsCsv",
    summary="Export builds as CSV",
    response_class=Response,
    responses=CSV_RESPONSE | GET_RESPONSES | NOT_FOUND,
    openapi_extra=query_openapi(BuildQuery),
)
def export_builds_csv(request: Request) -> Response:
    """Every build matching the filters (paging ignored), as a CSV attachment."""
    query = parse_query(request, BuildQuery)
    return cached_csv(
        request,
        filename="tierline-builds.csv",
        columns=BUILD_CSV_COLUMNS,
        rows=lambda session: builds.matching_builds(session, query=query),
    )


@router.get(
    "/builds/{slug}",
    response_model=BuildRead,
    operation_id="getBuild",
    summary="Get a build",
    responses=GET_RESPONSES | NOT_FOUND,
)
def get_build(request: Request, slug: SlugPath) -> Response:
    """The full build record with its sources; its JSON can be sent back unchanged to the admin
    PUT. The ETag is the record version."""
    return cached_json(
        request, lambda session: builds.get_build(session, slug=slug), etag=record_etag
    )
