"""The calculator: a GET form, so every result has a shareable URL.

The form's fields map onto the POST /api/v1/estimate request (FORM_FIELDS); the page validates
it with the same schema and runs the same service, and /estimate.json answers the same query
with the API's JSON.
"""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.caching import snapshot
from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.engine import KV_BITS, PRECISIONS
from app.errors import DomainError, FieldError, InvalidInput
from app.problems import PROBLEM_JSON
from app.schemas.estimate_answer import EstimateOut
from app.schemas.inline import InlineModel
from app.services.accuracy import accuracy_notes_for_estimate
from app.services.estimates import (
    cost_assumptions,
    inline_model_spec,
    parse_estimate_request,
    run_estimate,
)
from app.services.recommend import lower_precisions
from app.web.charts import SVG_HEADERS, cached_chart, memory_breakdown_svg
from app.web.common import Notice, raw_query, render
from app.web.estimate_form import EXAMPLE_QUERY, request_from_form, with_hub_config
from app.web.form_choices import MODES, OFFLOAD_CHOICES, PARALLELISM, RUNTIME_OPTIONS
from app.web.form_fields import FORM_FIELDS, build_model_context, form_notices
from app.web.pages import filter_options, precision_options
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)


def evaluate(
    session: Any, settings: Settings, raw: dict[str, str]
) -> tuple[EstimateOut | None, list[Notice], int]:
    """(answer or None, notices, status) for a calculator query."""
    try:
        raw = with_hub_config(raw, settings)
    except DomainError as error:
        return None, form_notices(error.errors), error.status_code
    body, errors = request_from_form(raw)
    if body is None and not errors:
        return None, [], 200
    if errors:
        return None, form_notices(errors), 422
    try:
        request = parse_estimate_request(body)
        answer = run_estimate(session, request=request, costs=cost_assumptions(settings))
    except DomainError as error:
        problems = error.errors or [FieldError("(request)", error.detail)]
        return None, form_notices(problems), error.status_code
    return answer, [], 200


# ---- the "No" verdict's ways out and the parsed-config panel -------------------------------


def no_verdict_help(
    session: Any, settings: Settings, raw: dict[str, str], answer: EstimateOut | None
) -> dict[str, Any] | None:
    """For an inference "No": links to the catalog builds that run the model at this precision,
    the longest context that fits here, and the highest lower precision that fits here (each
    lower precision is one more engine run, stopped at the first that fits)."""
    if answer is None or answer.fits or answer.workload.mode != "inference":
        return None
    precision = answer.workload.precision
    slug = answer.model.slug
    builds_url = (
        with_query("/builds", {"fits_model": slug, "precision": precision,
                               "context_tokens": answer.workload.context_tokens})
        if slug
        else None
    )
    longest = answer.max_context_tokens_that_fit
    context_url = (
        with_query("/estimate", {**raw, "context_tokens": longest}) if longest else None
    )
    fitting_precision = None
    for lower in lower_precisions(precision):
        candidate = {**raw, "precision": lower}
        there, _notices, _status = evaluate(session, settings, candidate)
        if there is not None and there.fits:
            fitting_precision = {"precision": lower, "url": with_query("/estimate", candidate)}
            break
    return {
        "builds_url": builds_url,
        "longest_context": longest,
        "context_url": context_url,
        "fitting_precision": fitting_precision,
    }


def parsed_config(settings: Settings, raw: dict[str, str]) -> dict[str, Any] | None:
    """What the engine read from a pasted (or fetched) config.json, so users can check the
    parse; None unless the model came from a config that parses."""
    try:
        body, errors = request_from_form(with_hub_config(raw, settings))
        if body is None or errors:
            return None
        request = parse_estimate_request(body)
        if not isinstance(request.model, InlineModel):
            return None
        spec = inline_model_spec(request.model)
    except DomainError:
        return None  # the page already shows the error beside the form
    kv_precision = request.workload.kv_cache_precision or PRECISIONS[
        request.workload.precision
    ].kv_default
    return {
        "params_total": spec.params_total_published or spec.params_total,
        "params_active": spec.params_active_published or spec.params_active,
        "params_computed": spec.params_total,
        "routed_experts": spec.n_routed_experts,
        "experts_per_token": spec.num_experts_per_tok,
        "shared_experts": spec.n_shared_experts,
        "attention_kind": spec.attention_kind,
        "layers": spec.num_hidden_layers,
        "kv_precision": kv_precision,
        "kv_bytes_per_token": spec.kv_cache_bytes_per_token(kv_precision),
        "sliding_window": spec.sliding_window,
    }


@router.get("/estimate", response_class=HTMLResponse)
def estimate_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """The calculator: verdict, memory breakdown chart, plan, speed, cost, findings."""
    raw = raw_query(request)
    answer, notices, status = evaluate(session, settings, raw)
    options = filter_options(session)
    query = request.url.query
    accuracy_notes: list[str] = []
    if answer is not None:
        # The query evaluate() answered (a fetched hf_id config is memoised by the Hub client).
        body, _ = request_from_form(with_hub_config(raw, settings))
        accuracy_notes = accuracy_notes_for_estimate(
            snapshot(session),
            parse_estimate_request(body),
            runtime=answer.plan.runtime,
            offloaded=answer.placement is not None and answer.placement.offload != "none",
        )
    return render(
        request,
        session,
        "estimate/page.html",
        {
            "raw": raw,
            "answer": answer,
            "accuracy_notes": accuracy_notes,
            "notices": notices,
            **build_model_context(raw, options),
            "precisions": precision_options(),
            "kv_precisions": [(k, k.upper()) for k in KV_BITS],
            "runtimes": RUNTIME_OPTIONS,
            "modes": MODES,
            "parallelism": PARALLELISM,
            "offload_choices": OFFLOAD_CHOICES,
            "chart_url": f"/estimate/memory.svg?{query}" if answer else None,
            "share_url": f"/estimate?{query}" if query else "/estimate",
            "defaults": cost_assumptions(settings),
            "no_help": no_verdict_help(session, settings, raw, answer),
            "parsed": parsed_config(settings, raw) if answer else None,
        },
        json_url=f"/estimate.json?{query}" if query else "/estimate.json",
        status_code=status,
    )


@router.get("/estimate.json")
def estimate_json(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The calculator's JSON twin: the POST /api/v1/estimate answer for the same query."""
    raw = raw_query(request)
    if not raw:
        # The empty calculator's twin describes the query it takes.
        return JSONResponse(
            {
                "description": "GET /estimate.json?<query> answers like POST /api/v1/estimate; "
                "each query field maps to a request field",
                "fields": {
                    **FORM_FIELDS,
                    "build_source": "catalog | custom",
                    "model_source": "catalog | config",
                    "b_accelerator": "build.accelerator (a slug, or custom)",
                },
                "example": EXAMPLE_QUERY,
            }
        )
    answer, notices, status = evaluate(session, settings, raw)
    if answer is None:
        errors = [FieldError(FORM_FIELDS.get(n.field or "", n.field or "(query)"),
                             n.message.split(": ", 1)[-1]) for n in notices]
        if not errors:
            errors = [FieldError("build", "choose one"), FieldError("model", "choose one")]
        error = InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors), errors=errors)
        if status != 422:
            error.status_code = status
        return JSONResponse(error.problem(instance=request.url.path), status_code=error.status_code,
                            media_type=PROBLEM_JSON)
    return JSONResponse(answer.model_dump(mode="json"))


@router.get("/estimate/memory.svg")
def estimate_memory_chart(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The memory breakdown of the calculator's query as an SVG chart."""
    raw = raw_query(request)
    answer, notices, status = evaluate(session, settings, raw)
    if answer is None:
        # Name what was refused, as the page and its JSON twin do.
        reasons = "; ".join(n.message for n in notices)
        return Response(f"no estimate for this query{': ' + reasons if reasons else ''}",
                        status_code=status if status >= 400 else 422, media_type="text/plain")
    snap = snapshot(session)
    key = ("memory", with_query("", sorted(raw.items())))
    svg = cached_chart(
        snap,
        key,
        lambda: memory_breakdown_svg(answer.memory.model_dump(),
                                     accelerators_used=answer.plan.accelerators_used),
    )
    return Response(svg, media_type="image/svg+xml",
                    headers=SVG_HEADERS)
