"""The accuracy page: the engine against published measurements, beside a naive roofline."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app.api._common import cached_json
from app.caching import snapshot
from app.deps import SessionDep
from app.services.accuracy import METRIC_LABELS, SPEED_METRICS, accuracy_report
from app.web.charts import SVG_HEADERS, AccuracyPoint, accuracy_scatter_svg, cached_chart
from app.web.common import cached_page, render

router = APIRouter(include_in_schema=False)

# Legend entries of the scatter: throughputs and latencies in two families each.
SCATTER_SERIES = {
    "decode_tokens_per_s": "decode tokens/s",
    "prefill_tokens_per_s": "prefill tokens/s",
    "output_tokens_per_s_total": "serving output tokens/s",
    "ttft_s": "serving latency (TTFT, ITL, end to end)",
    "itl_ms": "serving latency (TTFT, ITL, end to end)",
    "e2e_latency_s": "serving latency (TTFT, ITL, end to end)",
}


@router.get("/accuracy", response_class=HTMLResponse)
def accuracy_page(request: Request, session: SessionDep) -> Response:
    """The error table by metric, runtime and device class, the scatter and the worst misses."""
    return cached_page(request, session, lambda: _accuracy_page(request, session))


def _accuracy_page(request: Request, session: Session) -> HTMLResponse:
    report = accuracy_report(snapshot(session))
    return render(
        request,
        session,
        "accuracy/page.html",
        {
            "report": report,
            "metric_labels": METRIC_LABELS,
            "chart_url": f"/accuracy.svg?v={report['catalog_version']}",
        },
        json_url="/accuracy.json",
        canonical="/accuracy",
    )


@router.get("/accuracy.json")
def accuracy_json(request: Request) -> Response:
    """The accuracy page as data: every group, every row with its prediction and source."""
    return cached_json(request, lambda session: accuracy_report(snapshot(session)), model=None)


@router.get("/accuracy.svg")
def accuracy_chart(session: SessionDep) -> Response:
    """Predicted against measured for every speed and latency measurement (log-log SVG)."""
    snap = snapshot(session)

    def draw() -> str:
        rows = accuracy_report(snap)["rows"]
        points = [
            AccuracyPoint(float(r["measured"]), float(r["predicted"]), SCATTER_SERIES[r["metric"]])
            for r in rows
            if r["metric"] in SPEED_METRICS and r["predicted"] is not None
        ]
        return accuracy_scatter_svg(points)

    svg = cached_chart(snap, ("accuracy",), draw)
    return Response(svg, media_type="image/svg+xml", headers=SVG_HEADERS)
