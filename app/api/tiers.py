"""The tier line."""

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.api._common import API_PREFIX, GET_RESPONSES, cached_json, parse_query, query_openapi
from app.schemas.tiers import TiersOut, TiersQuery
from app.services.tiers import tier_line

router = APIRouter(prefix=API_PREFIX, tags=["tiers"])


@router.get(
    "/tiers",
    response_model=TiersOut,
    operation_id="getTiers",
    summary="The tier line",
    responses=GET_RESPONSES,
    openapi_extra=query_openapi(TiersQuery),
)
def tiers(request: Request) -> Response:
    """desktop -> dgx -> cluster with every build's total and pooled memory, price and the
    largest catalog model it runs at `precision` (default fp8) with one sequence."""
    query = parse_query(request, TiersQuery)
    return cached_json(
        request,
        lambda session: tier_line(
            session, precision=query.precision, context_tokens=query.context_tokens
        ),
        model=TiersOut,
    )
