"""Measurements: list, CSV export, detail (published figures with their sources)."""

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
from app.schemas.measurement import (
    MeasurementListItem,
    MeasurementPage,
    MeasurementQuery,
    MeasurementRead,
)
from app.services import measurements

router = APIRouter(prefix=API_PREFIX, tags=["measurements"])

MEASUREMENT_CSV_COLUMNS = tuple(MeasurementListItem.model_fields)
SlugPath = Annotated[str, Path(max_length=200, description="measurement slug")]


@router.get(
    "/measurements",
    response_model=MeasurementPage,
    operation_id="listMeasurements",
    summary="List measurements",
    responses=GET_RESPONSES,
    openapi_extra=query_openapi(MeasurementQuery),
)
def list_measurements(request: Request) -> Response:
    """Published measurements matching the filters, sorted and paged; each names its source.
    `accelerator` also matches runs on a catalog build of that accelerator."""
    query = parse_query(request, MeasurementQuery)
    return cached_page(
        request, lambda session: measurements.list_measurements(session, query=query)
    )


@router.get(
    "/measurements.csv",
    operation_id="exportMeasurementsCsv",
    summary="Export measurements as CSV",
    response_class=Response,
    responses=CSV_RESPONSE | GET_RESPONSES,
    openapi_extra=query_openapi(MeasurementQuery),
)
def export_measurements_csv(request: Request) -> Response:
    """Every measurement matching the filters (paging ignored), as a CSV attachment."""
    query = parse_query(request, MeasurementQuery)
    return cached_csv(
        request,
        filename="tierline-measurements.csv",
        columns=MEASUREMENT_CSV_COLUMNS,
        rows=lambda session: measurements.matching_measurements(session, query=query),
    )


@router.get(
    "/measurements/{slug}",
    response_model=MeasurementRead,
    operation_id="getMeasurement",
    summary="Get a measurement",
    responses=GET_RESPONSES | NOT_FOUND,
)
def get_measurement(request: Request, slug: SlugPath) -> Response:
    """The full measurement record as seeded (hardware, model, workload, value, source); its
    JSON can be sent back unchanged to the admin PUT. The ETag is the record version."""
    return cached_json(
        request,
        lambda session: measurements.get_measurement(session, slug=slug),
        etag=record_etag,
    )
