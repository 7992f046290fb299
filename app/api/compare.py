"""Builds side by side."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.api._common import API_PREFIX, GET_RESPONSES, NOT_FOUND, cached_json, settings_of
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
)
def compare(request: Request, query: Annotated[CompareQuery, Query()]) -> Response:
    """2 to 6 builds side by side: the tier-line rows (connection, GPU-to-GPU bandwidth, memory
    pooling, "Run a N GB model?" with the engine's verdict, failover, scheduling, power, total
    VRAM, price) and, with `model`, its fit, speed and cost on each build. Without `model` the
    "Run a N GB model?" row uses deepseek-v3 (the tier-line story) at `precision`."""
    costs = cost_assumptions(settings_of(request))
    return cached_json(request, lambda session: compare_builds(session, query=query, costs=costs))
