"""The serving page: the calculator's inputs plus lengths, SLO, load and speculation, as a GET
form; the curve as an SVG chart and a table, the operating point in words; /serving.json twin.

Build, model, workload and cost fields are the calculator's (app.web.form_fields.FORM_FIELDS, read
by app.web.estimate_form.request_from_form, so custom builds and pasted configs work here too);
SERVING_FIELDS add the `serving` part of POST /api/v1/serving.
"""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.caching import snapshot
from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.engine import KV_BITS, RUNTIMES
from app.errors import DomainError, FieldError, InvalidInput
from app.problems import PROBLEM_JSON
from app.schemas.serving import ServingOut
from app.services.estimates import cost_assumptions
from app.services.serving import parse_serving_request, run_serving
from app.web.charts import SVG_HEADERS, CurveSeries, cached_chart, serving_curve_svg
from app.web.common import Notice, raw_query, render
from app.web.estimate_form import request_from_form, with_hub_config
from app.web.form_fields import FORM_FIELDS, build_model_context, form_field
from app.web.pages import filter_options, precision_options
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)

SERVING_FIELDS = {
    "input_tokens": "serving.input_tokens",
    "output_tokens": "serving.output_tokens",
    "ttft_s_max": "serving.ttft_s_max",
    "itl_ms_max": "serving.itl_ms_max",
    "tokens_per_s_per_user_min": "serving.tokens_per_s_per_user_min",
    "concurrent_users": "serving.concurrent_users",
    "requests_per_s": "serving.requests_per_s",
    "speculative": "serving.speculative.kind",
    "acceptance_rate": "serving.speculative.acceptance_rate",
    "draft_tokens": "serving.speculative.draft_tokens",
    "draft_model": "serving.speculative.draft_model",
}
ALL_FIELDS = {**FORM_FIELDS, **SERVING_FIELDS}
FIELD_FOR_PATH = {path: name for name, path in ALL_FIELDS.items()}
SPECULATIVE_KINDS = (
    ("none", "None"),
    ("mtp", "Multi-token prediction heads (MTP)"),
    ("draft", "A draft model"),
)
EXAMPLE_QUERY = (
    "/serving.json?build=dgx-h200&model=deepseek-v3&input_tokens=1024&output_tokens=1024"
    "&ttft_s_max=1&tokens_per_s_per_user_min=30&concurrent_users=2000&speculative=mtp"
)


def _request_body(raw: dict[str, str]) -> tuple[dict[str, Any] | None, list[FieldError]]:
    body, errors = request_from_form(raw)
    if body is None:
        return None, errors
    serving: dict[str, Any] = {}
    spec: dict[str, Any] = {}
    for name, path in SERVING_FIELDS.items():
        if name in raw:
            leaf = path.rsplit(".", 1)[-1]
            (spec if path.startswith("serving.speculative.") else serving)[leaf] = raw[name]
    body.get("workload", {}).pop("batch", None)  # the curve sweeps concurrency itself
    if spec:
        serving["speculative"] = spec
    body["serving"] = serving
    return body, errors


def evaluate(
    session: Any, settings: Settings, raw: dict[str, str]
) -> tuple[ServingOut | None, list[FieldError], int]:
    """(answer or None, field errors, status) for a serving query."""
    try:
        raw = with_hub_config(raw, settings)  # a model by its Hugging Face id, as the calculator
    except DomainError as error:
        return None, error.errors, error.status_code
    body, errors = _request_body(raw)
    if body is None and not errors:
        return None, [], 200
    if errors:
        return None, errors, 422
    try:
        request = parse_serving_request(body)
        costs = cost_assumptions(settings, request.costs)
        return run_serving(session, request=request, costs=costs), [], 200
    except DomainError as error:
        return None, error.errors or [FieldError("(request)", error.detail)], error.status_code


def field_notices(errors: list[FieldError]) -> list[Notice]:
    """Refused serving fields as notices beside their form fields."""
    return [
        Notice(f"{e.field}: {e.message}", field=form_field(e.field, FIELD_FOR_PATH))
        for e in errors
    ]


def min_user_speed(answer: ServingOut) -> float | None:
    """The per-user speed the limits require (ITL limit as tokens/s), for shading the chart."""
    s = answer.serving
    limits = [s.tokens_per_s_per_user_min or 0.0]
    if s.itl_ms_max:
        limits.append(1000.0 / s.itl_ms_max)
    best = max(limits)
    return best if best > 0 else None


def curve_series(answer: ServingOut) -> CurveSeries:
    """A serving answer as one chart series (reusable by the build and compare pages)."""
    at = answer.at_slo
    return CurveSeries(
        name=answer.build.name,
        points=tuple(
            (p.tokens_per_s_per_user, p.tokens_per_s_per_accelerator) for p in answer.curve
        ),
        operating_point=(at.tokens_per_s_per_user, at.tokens_per_s_per_accelerator)
        if at
        else None,
    )


@router.get("/serving", response_class=HTMLResponse)
def serving_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """Serving: throughput against interactivity, the operating point at an SLO, sizing."""
    raw = raw_query(request)
    answer, errors, status = evaluate(session, settings, raw)
    query = request.url.query
    return render(
        request,
        session,
        "serving/page.html",
        {
            "raw": raw,
            "answer": answer,
            "notices": field_notices(errors),
            **build_model_context(raw, filter_options(session)),
            "precisions": precision_options(),
            "kv_precisions": [(k, k.upper()) for k in KV_BITS],
            "runtimes": [(r, r) for r in RUNTIMES],
            "speculative_kinds": SPECULATIVE_KINDS,
            "chart_url": f"/serving/curve.svg?{query}" if answer and answer.curve else None,
            "share_url": f"/serving?{query}" if query else "/serving",
            "defaults": cost_assumptions(settings),
        },
        json_url=f"/serving.json?{query}" if query else "/serving.json",
        status_code=status,
    )


@router.get("/serving.json")
def serving_json(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The serving page's JSON twin: the POST /api/v1/serving answer for the same query."""
    raw = raw_query(request)
    if not raw:
        return JSONResponse(
            {
                "description": "GET /serving.json?<query> answers like POST /api/v1/serving; "
                "each query field maps to a request field",
                "fields": ALL_FIELDS,
                "example": EXAMPLE_QUERY,
            }
        )
    answer, errors, status = evaluate(session, settings, raw)
    if answer is None:
        errors = errors or [FieldError("build", "choose one"), FieldError("model", "choose one")]
        error = InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors), errors=errors)
        error.status_code = status if status >= 400 else 422
        return JSONResponse(error.problem(instance=request.url.path),
                            status_code=error.status_code, media_type=PROBLEM_JSON)
    return JSONResponse(answer.model_dump(mode="json"))


@router.get("/serving/curve.svg")
def serving_chart(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The serving curve of the page's query as an SVG chart."""
    raw = raw_query(request)
    answer, _, status = evaluate(session, settings, raw)
    if answer is None or not answer.curve:
        return Response("no serving curve for this query",
                        status_code=status if status >= 400 else 422, media_type="text/plain")
    key = ("serving", with_query("", sorted(raw.items())))
    found = answer
    svg = cached_chart(
        snapshot(session),
        key,
        lambda: serving_curve_svg([curve_series(found)],
                                  min_tokens_per_s_per_user=min_user_speed(found)),
    )
    return Response(svg, media_type="image/svg+xml", headers=SVG_HEADERS)
