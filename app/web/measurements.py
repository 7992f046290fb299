"""The measurements list: published figures with their sources, filterable and sortable."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app.deps import SessionDep
from app.models import MEASUREMENT_RUNTIMES, METRICS
from app.schemas.measurement import MeasurementQuery
from app.services.accuracy import METRIC_LABELS
from app.services.measurements import list_measurements
from app.web.common import cached_page
from app.web.list_pages import render_list_page

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
    return render_list_page(
        request,
        session,
        schema=MeasurementQuery,
        list_rows=lambda session, query: list_measurements(session, query=query),
        template="measurements/list.html",
        path="/measurements",
        api_path="/api/v1/measurements",
        context={
            "columns": MEASUREMENT_COLUMNS,
            "runtimes": [(r, r) for r in MEASUREMENT_RUNTIMES],
            "metrics": [(m, METRIC_LABELS[m]) for m in METRICS],
            "metric_labels": METRIC_LABELS,
        },
    )
