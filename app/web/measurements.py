"""The measurements list: published figures with their sources, filterable and sortable."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app.deps import SessionDep
from app.models import MEASUREMENT_RUNTIMES, METRICS
from app.schemas.measurement import MeasurementQuery
from app.services.accuracy import METRIC_LABELS
from app.services.measurements import list_measurements
from app.web.common import cached_page, parse_query, raw_query, render
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)

# Columns of the list: (label, sort key or None, numeric, unit hint)
MEASUREMENT_COLUMNS = (
    ("Run", "name", False, None),
    ("Metric", "metric", False, None),
    ("Runtime", "runtime", False, None),
    ("Accelerators", "accelerator_count", True, None),
    ("Batch", "batch", True, None),
    ("Prompt", "prompt_tokens", True, "tokens"),
    ("Measured", "value", True, None),
    ("As of", "as_of", False, None),
)


@router.get("/measurements", response_class=HTMLResponse)
def measurements_page(request: Request, session: SessionDep) -> Response:
    """Published measurements: filters, sortable columns, pages and JSON/CSV links."""
    return cached_page(request, session, lambda: _measurements_page(request, session))


def _measurements_page(request: Request, session: Session) -> HTMLResponse:
    raw = raw_query(request)
    parsed = parse_query(MeasurementQuery, raw)
    query = parsed.query
    result = list_measurements(session, query=query)
    state: dict[str, Any] = {**query.filters(), "sort": query.sort}
    if query.per_page != MeasurementQuery.model_fields["per_page"].default:
        state["per_page"] = query.per_page
    paged = {**state, "page": query.page if query.page > 1 else None}
    return render(
        request,
        session,
        "measurements/list.html",
        {
            "result": result,
            "query": query,
            "raw": raw,
            "state": state,
            "sort": query.sort or MeasurementQuery.DEFAULT_SORT,
            "columns": MEASUREMENT_COLUMNS,
            "runtimes": [(r, r) for r in MEASUREMENT_RUNTIMES],
            "metrics": [(m, METRIC_LABELS[m]) for m in METRICS],
            "metric_labels": METRIC_LABELS,
            "csv_url": with_query("/api/v1/measurements.csv", state),
            "notices": parsed.notices,
        },
        json_url=with_query("/api/v1/measurements", paged),
        canonical=with_query("/measurements", paged),
    )
