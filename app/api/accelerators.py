"""Accelerators: list, CSV export, detail."""

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
from app.schemas.accelerator import AcceleratorRead
from app.schemas.listing import AcceleratorListItem, AcceleratorPage, AcceleratorQuery
from app.services import accelerators

router = APIRouter(prefix=API_PREFIX, tags=["accelerators"])

ACCELERATOR_CSV_COLUMNS = tuple(AcceleratorListItem.model_fields)
SlugPath = Annotated[str, Path(max_length=200, description="accelerator slug")]


@router.get(
    "/accelerators",
    response_model=AcceleratorPage,
    operation_id="listAccelerators",
    summary="List accelerators",
    responses=GET_RESPONSES,
    openapi_extra=query_openapi(AcceleratorQuery),
)
def list_accelerators(request: Request) -> Response:
    """Accelerators matching the filters, sorted and paged."""
    query = parse_query(request, AcceleratorQuery)
    return cached_page(
        request, lambda session: accelerators.list_accelerators(session, query=query)
    )


@router.get(
    "/accelerators.csv",
    operation_id="exportAcceleratorsCsv",
    summary="Export accelerators as CSV",
    response_class=Response,
    responses=CSV_RESPONSE | GET_RESPONSES,
    openapi_extra=query_openapi(AcceleratorQuery),
)
def export_accelerators_csv(request: Request) -> Response:
    """Every accelerator matching the filters (paging ignored), as a CSV attachment."""
    query = parse_query(request, AcceleratorQuery)
    return cached_csv(
        request,
        filename="tierline-accelerators.csv",
        columns=ACCELERATOR_CSV_COLUMNS,
        rows=lambda session: accelerators.matching_accelerators(session, query=query),
    )


@router.get(
    "/accelerators/{slug}",
    response_model=AcceleratorRead,
    operation_id="getAccelerator",
    summary="Get an accelerator",
    responses=GET_RESPONSES | NOT_FOUND,
)
def get_accelerator(request: Request, slug: SlugPath) -> Response:
    """The full accelerator record with its sources; the ETag is the record version."""
    return cached_json(
        request,
        lambda session: accelerators.get_accelerator(session, slug=slug),
        etag=record_etag,
    )
