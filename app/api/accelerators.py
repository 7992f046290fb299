"""Accelerators: list, CSV export, detail."""

from app.api.resources import CatalogResource, Operation, resource_router
from app.schemas.accelerator import AcceleratorRead
from app.schemas.listing import AcceleratorListItem, AcceleratorPage, AcceleratorQuery
from app.services import accelerators

router = resource_router(
    CatalogResource(
        collection="accelerators",
        tag="accelerators",
        noun="accelerator",
        query_model=AcceleratorQuery,
        page_model=AcceleratorPage,
        list_item_model=AcceleratorListItem,
        read_model=AcceleratorRead,
        list_page=lambda session, query: accelerators.list_accelerators(session, query=query),
        matching=lambda session, query: accelerators.matching_accelerators(session, query=query),
        get_record=lambda session, slug: accelerators.get_accelerator(session, slug=slug),
        list_op=Operation(
            "listAccelerators",
            "List accelerators",
            "Accelerators matching the filters, sorted and paged.",
        ),
        csv_op=Operation(
            "exportAcceleratorsCsv",
            "Export accelerators as CSV",
            "Every accelerator matching the filters (paging ignored), as a CSV attachment.",
        ),
        get_op=Operation(
            "getAccelerator",
            "Get an accelerator",
            "The full accelerator record with its sources; the ETag is the record version.",
        ),
    )
)
