"""Builds side by side."""

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
from app.schemas.compare import CompareOut, CompareQuery
from app.services.compare import compare_builds
from app.services.estimates import cost_assumptions

router = APIRouter(prefix=API_PREFIX, tags=["compare"])


@router.get(
    "/compare",
    response_model=CompareOut,
    operation_id="compareBuilds",
    summary="Compare builds side by side",
    responses=GET_RESPONSES | NOT_FOUND,
    openapi_extra=query_openapi(CompareQuery),
)
def compare(request: Request) -> Response:
    """2 to 6 builds side by side: the tier-line rows (connection, GPU-to-GPU bandwidth, memory
    pooling, "Run a N GB model?" with the engine's verdict, failover, scheduling, power, total
    VRAM, price) and, with `model`, its fit, speed and cost on each build. Without `model` the
    "Run a N GB model?" row uses deepseek-v3 (the tier-line story) at `precision`."""
    query = parse_query(request, CompareQuery)
    costs = cost_assumptions(settings_of(request))
    return cached_json(
        request, lambda session: compare_builds(session, query=query, costs=costs), model=CompareOut
    )
