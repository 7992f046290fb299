"""One engine run, or a batch of them."""

from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.api._common import (
    API_PREFIX,
    BODY_ERRORS,
    INVALID,
    NOT_FOUND,
    UNAVAILABLE,
    catalog_memo,
    catalog_session,
    model_body,
    settings_of,
)
from app.schemas.estimate import MAX_BATCH_REQUESTS, EstimateRequest
from app.schemas.estimate_answer import BatchOut, EstimateOut
from app.services.estimates import cost_assumptions, run_batch, run_estimate

router = APIRouter(prefix=API_PREFIX, tags=["estimate"])

EXAMPLES = {
    "catalog": {
        "summary": "Catalog build and model",
        "value": {
            "build": "2x-dgx-h200-cluster",
            "model": "deepseek-v3",
            "workload": {"precision": "fp8", "context_tokens": 8192, "batch": 8},
        },
    },
    "inline": {
        "summary": "Inline build, pasted config.json",
        "value": {
            "build": {
                "name": "2x RTX 3090",
                "accelerators_per_node": 2,
                "accelerator": {
                    "name": "RTX 3090",
                    "memory_gb": 24,
                    "memory_bandwidth_gbs": 936,
                    "fp16_tflops": 71,
                },
                "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 25},
                "price_usd": 2500,
            },
            "model": {
                "name": "my-8b",
                "config": {
                    "model_type": "llama",
                    "num_hidden_layers": 32,
                    "hidden_size": 4096,
                    "num_attention_heads": 32,
                    "num_key_value_heads": 8,
                    "intermediate_size": 14336,
                    "vocab_size": 128256,
                    "max_position_embeddings": 131072,
                },
            },
            "workload": {"precision": "bf16", "context_tokens": 8192},
        },
    },
}


@router.post(
    "/estimate",
    response_model=EstimateOut,
    operation_id="estimate",
    summary="Estimate fit, speed and cost",
    responses=BODY_ERRORS | INVALID | NOT_FOUND | UNAVAILABLE,
)
def estimate(
    request: Request,
    body: Annotated[EstimateRequest, Body(openapi_examples=EXAMPLES)],
) -> Response:
    """One engine run for a build and a model (each a catalog slug or inline) under a workload
    (every field defaulted; precision defaults to fp8). When the model does not fit, `fits` is
    false and the speed figures are null. All figures are estimates."""
    costs = cost_assumptions(settings_of(request))

    def render(session: Session, _version: int = 0) -> bytes:
        return model_body(EstimateOut, run_estimate(session, request=body, costs=costs))

    if isinstance(body.build, str) and isinstance(body.model, str):
        # Catalog-only requests are small and repeat: keep their bytes per catalog version.
        content = catalog_memo(request, ("estimate_json", body.model_dump_json(), costs), render)
    else:
        with catalog_session(request) as session:
            content = render(session)
    return Response(content=content, media_type="application/json")


@router.post(
    "/estimate/batch",
    response_model=BatchOut,
    operation_id="estimateBatch",
    summary="Estimate several runs at once",
    responses=BODY_ERRORS | INVALID | UNAVAILABLE,
)
def estimate_batch(
    request: Request,
    requests: Annotated[
        list[EstimateRequest],
        Body(
            min_length=1,
            max_length=MAX_BATCH_REQUESTS,
            description=f"1 to {MAX_BATCH_REQUESTS} estimate requests",
            openapi_examples={
                "sweep": {
                    "summary": "One model on two builds",
                    "value": [
                        {"build": "4x-rtx-4090-workstation", "model": "llama-3-1-70b"},
                        {"build": "2x-dgx-h200-cluster", "model": "llama-3-1-70b"},
                    ],
                }
            },
        ),
    ],
) -> Response:
    """Up to 100 estimates in one call, answered in order. A request that fails schema
    validation fails the whole call (422 naming `<index>.<field>`); an unknown slug or an input
    the engine refuses fails only its own entry (`ok: false` with its problem details)."""
    costs = cost_assumptions(settings_of(request))
    with catalog_session(request) as session:
        answer = run_batch(session, requests=requests, costs=costs)
    return Response(content=model_body(BatchOut, answer), media_type="application/json")
