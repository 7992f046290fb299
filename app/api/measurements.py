"""Measurements: list, CSV export, detail."""

from app.api.resources import CatalogResource, Operation, resource_router
from app.schemas.measurement import (
    MeasurementListItem,
    MeasurementPage,
    MeasurementQuery,
    MeasurementRead,
)
from app.services import measurements

router = resource_router(
    CatalogResource(
        collection="measurements",
        tag="measurements",
        noun="measurement",
        query_model=MeasurementQuery,
        page_model=MeasurementPage,
        list_item_model=MeasurementListItem,
        read_model=MeasurementRead,
        list_page=lambda session, query: measurements.list_measurements(session, query=query),
        matching=lambda session, query: measurements.matching_measurements(session, query=query),
        get_record=lambda session, slug: measurements.get_measurement(session, slug=slug),
        list_op=Operation(
            "listMeasurements",
            "List measurements",
            "Published measurements matching the filters, sorted and paged; each names its "
            "source.\n"
            "`accelerator` also matches runs on a catalog build of that accelerator.",
        ),
        csv_op=Operation(
            "exportMeasurementsCsv",
            "Export measurements as CSV",
            "Every measurement matching the filters (paging ignored), as a CSV attachment.",
        ),
        get_op=Operation(
            "getMeasurement",
            "Get a measurement",
            "The full measurement record as seeded (hardware, model, workload, value, source); "
            "its\n"
            "JSON can be sent back unchanged to the admin PUT. The ETag is the record version.",
        ),
    )
)
