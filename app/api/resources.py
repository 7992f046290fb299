"""A catalog resource's three read routes (list, CSV export, detail) from one description.

Builds, accelerators, model profiles and measurements share this shape; a new resource is one
`CatalogResource(...)` and one `resource_router(...)` call (see docs/architecture.md).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.api._common import (
    API_PREFIX,
    CSV_RESPONSE,
    GET_RESPONSES,
    NOT_FOUND,
    Responses,
    cached_csv,
    cached_json,
    cached_page,
    parse_query,
    query_openapi,
    record_etag,
)
from app.pagination import ListResult


@dataclass(frozen=True)
class Operation:
    """What OpenAPI says about one route: its id, summary and description (Markdown, as
    served: line breaks included)."""

    operation_id: str
    summary: str
    description: str


@dataclass(frozen=True)
class CatalogResource:
    """One catalog resource as the API serves it."""

    collection: str  # URL segment: /api/v1/<collection>, .csv and /{slug}
    tag: str
    noun: str  # "build": the slug parameter is described as "build slug"
    query_model: type[BaseModel]
    page_model: type[BaseModel]
    list_item_model: type[BaseModel]  # the CSV columns are its fields
    read_model: type[BaseModel]
    list_page: Callable[[Session, Any], ListResult[Any]]
    matching: Callable[[Session, Any], Iterable[BaseModel]]
    get_record: Callable[[Session, str], BaseModel]
    list_op: Operation
    csv_op: Operation
    get_op: Operation
    # Extra documented answers of the list and CSV routes (builds: 404 for an unknown fits_model).
    list_responses: Responses | None = None

    @property
    def csv_columns(self) -> tuple[str, ...]:
        """The CSV header: the list item's field names (units in them)."""
        return tuple(self.list_item_model.model_fields)


def resource_router(resource: CatalogResource) -> APIRouter:
    """The list, CSV and detail routes of `resource` under /api/v1."""
    router = APIRouter(prefix=API_PREFIX, tags=[resource.tag])
    r = resource
    extra = r.list_responses or {}
    query_model = r.query_model
    csv_columns = r.csv_columns
    filename = f"tierline-{r.collection}.csv"
    slug_path = Annotated[str, Path(max_length=200, description=f"{r.noun} slug")]

    def list_records(request: Request) -> Response:
        query = parse_query(request, query_model)
        return cached_page(
            request, lambda session: r.list_page(session, query), model=r.page_model
        )

    def export_csv(request: Request) -> Response:
        query = parse_query(request, query_model)
        return cached_csv(
            request,
            filename=filename,
            columns=csv_columns,
            rows=lambda session: r.matching(session, query),
        )

    def get_record(request: Request, slug: slug_path) -> Response:  # type: ignore[valid-type]
        return cached_json(
            request,
            lambda session: r.get_record(session, slug),
            model=r.read_model,
            etag=record_etag,
        )

    router.add_api_route(
        f"/{r.collection}",
        list_records,
        methods=["GET"],
        response_model=r.page_model,
        operation_id=r.list_op.operation_id,
        summary=r.list_op.summary,
        description=r.list_op.description,
        responses=GET_RESPONSES | extra,
        openapi_extra=query_openapi(query_model),
    )
    router.add_api_route(
        f"/{r.collection}.csv",
        export_csv,
        methods=["GET"],
        operation_id=r.csv_op.operation_id,
        summary=r.csv_op.summary,
        description=r.csv_op.description,
        response_class=Response,
        responses=CSV_RESPONSE | GET_RESPONSES | extra,
        openapi_extra=query_openapi(query_model),
    )
    router.add_api_route(
        f"/{r.collection}/{{slug}}",
        get_record,
        methods=["GET"],
        response_model=r.read_model,
        operation_id=r.get_op.operation_id,
        summary=r.get_op.summary,
        description=r.get_op.description,
        responses=GET_RESPONSES | NOT_FOUND,
    )
    return router
