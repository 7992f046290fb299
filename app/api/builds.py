"""Builds: list, CSV export, detail."""

from app.api._common import NOT_FOUND
from app.api.resources import CatalogResource, Operation, resource_router
from app.schemas.build import BuildListItem, BuildRead
from app.schemas.listing import BuildPage, BuildQuery
from app.services import builds

router = resource_router(
    CatalogResource(
        collection="builds",
        tag="builds",
        noun="build",
        query_model=BuildQuery,
        page_model=BuildPage,
        list_item_model=BuildListItem,
        read_model=BuildRead,
        list_page=lambda session, query: builds.list_builds(session, query=query),
        matching=lambda session, query: builds.matching_builds(session, query=query),
        get_record=lambda session, slug: builds.get_build(session, slug=slug),
        list_op=Operation(
            "listBuilds",
            "List builds",
            "Builds matching the filters, sorted and paged; `Link: <...>; rel=\"next\"` on all "
            "but the\n"
            "last page. `fits_model` keeps builds on which the engine says the model fits (404 "
            "if the\n"
            "model is unknown).",
        ),
        csv_op=Operation(
            "exportBuildsCsv",
            "Export builds as CSV",
            "Every build matching the filters (paging ignored), as a CSV attachment.",
        ),
        get_op=Operation(
            "getBuild",
            "Get a build",
            "The full build record with its sources; its JSON can be sent back unchanged to "
            "the admin\n"
            "PUT. The ETag is the record version.",
        ),
        list_responses=NOT_FOUND,
    )
)
