"""Model profiles: list, CSV export, detail."""

from app.api.resources import CatalogResource, Operation, resource_router
from app.schemas.listing import ModelPage, ModelQuery
from app.schemas.model_profile import ModelListItem, ModelRead
from app.services import model_profiles

router = resource_router(
    CatalogResource(
        collection="models",
        tag="models",
        noun="model",
        query_model=ModelQuery,
        page_model=ModelPage,
        list_item_model=ModelListItem,
        read_model=ModelRead,
        list_page=lambda session, query: model_profiles.list_model_profiles(session, query=query),
        matching=lambda session, query: model_profiles.matching_model_profiles(
            session, query=query
        ),
        get_record=lambda session, slug: model_profiles.get_model_profile(session, slug=slug),
        list_op=Operation(
            "listModels",
            "List model profiles",
            "Model profiles matching the filters, sorted and paged.",
        ),
        csv_op=Operation(
            "exportModelsCsv",
            "Export model profiles as CSV",
            "Every model matching the filters (paging ignored), as a CSV attachment.",
        ),
        get_op=Operation(
            "getModel",
            "Get a model profile",
            "The full model profile: its config.json, the architecture the engine reads from "
            "it and\n"
            "the computed parameter counts beside the published ones. The ETag is the record "
            "version.",
        ),
    )
)
