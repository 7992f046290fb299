"""Serving curves: throughput against interactivity, the SLO operating point, sizing."""

from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import Response

from app.api._common import (
    API_PREFIX,
    BODY_ERRORS,
    INVALID,
    NOT_FOUND,
    UNAVAILABLE,
    catalog_session,
    model_body,
    settings_of,
)
from app.schemas.serving import ServingOut, ServingRequest
from app.services.estimates import cost_assumptions
from app.services.serving import run_serving

router = APIRouter(prefix=API_PREFIX, tags=["serving"])

EXAMPLES = {
    "slo": {
        "summary": "DeepSeek-V3 with MTP on a DGX H200, sized for 2,000 users",
        "value": {
            "build": "dgx-h200",
            "model": "deepseek-v3",
            "workload": {"precision": "fp8"},
            "serving": {
                "input_tokens": 1024,
                "output_tokens": 1024,
                "ttft_s_max": 1,
                "tokens_per_s_per_user_min": 30,
                "concurrent_users": 2000,
                "speculative": {"kind": "mtp"},
            },
        },
    },
    "curve": {
        "summary": "The whole curve, no SLO",
        "value": {"build": "4x-rtx-4090-workstation", "model": "llama-3-1-8b"},
    },
}


@router.post(
    "/serving",
    response_model=ServingOut,
    operation_id="serving",
    summary="Serving curve, SLO operating point and sizing",
    responses=BODY_ERRORS | INVALID | NOT_FOUND | UNAVAILABLE,
)
def serving(
    request: Request,
    body: Annotated[ServingRequest, Body(openapi_examples=EXAMPLES)],
) -> Response:
    """Concurrency from 1 to the largest batch that fits: tokens/s per user, in total and per
    accelerator, time to first token, inter-token latency and $ per million input and output
    tokens; with limits in `serving`, the best operating point and the copies a target load
    needs. All figures are estimates."""
    costs = cost_assumptions(settings_of(request), body.costs)
    with catalog_session(request) as session:
        answer = run_serving(session, request=body, costs=costs)
    return Response(content=model_body(ServingOut, answer), media_type="application/json")
