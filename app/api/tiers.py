"""The tier line."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.api._common import API_PREFIX, GET_RESPONSES, cached_json
from app.schemas.tiers import TiersOut, TiersQuery
from app.services.tiers import tier_line

router = APIRouter(prefix=API_PREFIX, tags=["tiers"])


@router.get(
    "/tiers",
    response_model=TiersOut,
    operation_id="getTiers",
    summary="The tier line",
    responses=GET_RESPONSES,
)
def tiers(request: Request, query: Annotated[TiersQuery, Query()]) -> Response:
    """desktop -> dgx -> cluster with every build's total and pooled memory, price and the
    largest catalog model it runs at `precision` (default fp8) with one sequence."""
    return cached_json(
        request,
        lambda session: tier_line(
            session, precision=query.precision, context_tokens=query.context_tokens
        ),
    )
