"""`GET /metrics` in the Prometheus text format."""

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from app.metrics import render_metrics

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
def metrics(request: Request) -> Response:
    """Prometheus metrics: requests and latency per route, engine evaluations, catalog version."""
    return Response(render_metrics(request.app.state.engine), media_type=CONTENT_TYPE_LATEST)
