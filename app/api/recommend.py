"""What to buy for a model."""

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.api._common import (
    API_PREFIX,
    GET_RESPONSES,
    NOT_FOUND,
    cached_json,
    parse_query,
    query_openapi,
    settings_of,
)
from app.schemas.recommend import RecommendOut, RecommendQuery
from app.services.estimates import cost_assumptions
from app.services.recommend import recommend

router = APIRouter(prefix=API_PREFIX, tags=["recommend"])


@router.get(
    "/recommend",
    response_model=RecommendOut,
    operation_id="recommendBuilds",
    summary="Recommend builds for a model",
    responses=GET_RESPONSES | NOT_FOUND,
    openapi_extra=query_openapi(RecommendQuery),
)
def recommend_builds(request: Request) -> Response:
    """The builds on which the model fits at the precision, context and batch, ranked by
    `sort` (price by default), each with its speed and cost; `pareto: true` marks the front of
    price (lower is better) against per-sequence decode tokens/s (higher is better)."""
    query = parse_query(request, RecommendQuery)
    costs = cost_assumptions(settings_of(request))
    return cached_json(
        request, lambda session: recommend(session, query=query, costs=costs), model=RecommendOut
    )
