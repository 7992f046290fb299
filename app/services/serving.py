"""Serving curves for the API, the /serving page and the CLI: resolve, run, serialise.

Contract (callers: POST /api/v1/serving, /serving and /serving.json, `tierline serving`):
- `run_serving(session, *, request: ServingRequest, costs) -> dict`: the `ServingOut` shape.
  Unknown slugs raise NotFound naming `build` / `model` / `serving.speculative.draft_model`;
  invalid inputs raise InvalidInput naming the request field.
- `rank_at_slo(snap, *, model, workload, serving, slo, costs) -> list[dict]`: every catalog
  build at the SLO operating point, cheapest per million output tokens first (for recommend).
- `operating_point_words(...)`: the operating point as one sentence.
- `parse_serving_request(raw) -> ServingRequest`: form text validated like the API (422 naming
  the field).
"""

from dataclasses import asdict
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.engine import BuildSpec, CostAssumptions, EngineInputError, ModelSpec, Workload
from app.engine.serving import (
    DRAFT_TOKENS,
    MTP_DRAFT_TOKENS,
    ServiceLevel,
    ServingCurve,
    ServingPoint,
    ServingWorkload,
    SloPoint,
    Speculative,
    best_at_slo,
    default_acceptance,
    serving_curve,
)
from app.errors import FieldError, InvalidInput
from app.metrics import count_engine_evaluations
from app.schemas.estimate import FORM_TEXT, InlineModel
from app.schemas.serving import ServingIn, ServingRequest
from app.services.builds import build_rows, find_build
from app.services.cache import Snapshot, snapshot
from app.services.estimates import (
    build_subject,
    inline_build_spec,
    inline_model_spec,
    model_subject,
    run_engine,
    workload_out,
    workload_spec,
)
from app.services.model_profiles import find_model_profile

DEFAULT_OUTPUT_TOKENS = 1024


def _model_spec(
    snap: Snapshot, ref: str | InlineModel, *, field: str
) -> tuple[ModelSpec, str | None]:
    if isinstance(ref, str):
        row = find_model_profile(snap, ref, field=field)
        return row.spec, row.slug
    return inline_model_spec(ref), None


def serving_inputs(
    serving: ServingIn, workload: Workload, draft: ModelSpec | None
) -> tuple[ServingWorkload, ServiceLevel]:
    """Engine inputs for the `serving` part of a request (lengths default from the workload)."""
    input_tokens = serving.input_tokens or workload.prompt_tokens
    output_tokens = serving.output_tokens or (
        workload.context_tokens - input_tokens
        if workload.context_tokens > input_tokens
        else DEFAULT_OUTPUT_TOKENS
    )
    spec = serving.speculative
    return (
        ServingWorkload(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            speculative=Speculative(
                kind=spec.kind,
                acceptance_rate=spec.acceptance_rate,
                draft_tokens=spec.draft_tokens,
                draft_model=draft,
            ),
        ),
        ServiceLevel(
            ttft_s_max=serving.ttft_s_max,
            itl_ms_max=serving.itl_ms_max,
            tokens_per_s_per_user_min=serving.tokens_per_s_per_user_min,
            concurrent_users=serving.concurrent_users,
            requests_per_s=serving.requests_per_s,
        ),
    )


def _serving_error(exc: EngineInputError) -> InvalidInput:
    field = exc.field if exc.field.startswith("serving.") else f"serving.{exc.field}"
    if field == "serving.mode":
        field = "workload.mode"
    return InvalidInput(f"{field}: {exc.reason}", errors=[FieldError(field, exc.reason)])


def point_out(point: ServingPoint) -> dict[str, Any]:
    """One curve point in the API's shape."""
    return {
        "concurrency": point.concurrency,
        "tokens_per_s_per_user": point.tokens_per_s_per_user,
        "tokens_per_s_total": point.tokens_per_s_total,
        "tokens_per_s_per_accelerator": point.tokens_per_s_per_accelerator,
        "ttft_s": point.ttft_s,
        "itl_ms": point.itl_ms,
        "usd_per_million_input_tokens": point.usd_per_million_input_tokens,
        "usd_per_million_output_tokens": point.usd_per_million_output_tokens,
        "requests_per_s": point.requests_per_s,
        "input_tokens_per_s": point.input_tokens_per_s,
        "prefill_share": point.prefill_share,
        "queue_wait_s": point.queue_wait_s,
        "tokens_per_step": point.tokens_per_step,
        "bottleneck": point.bottleneck,
    }


def operating_point_words(
    at: SloPoint, *, build_name: str, slo: ServiceLevel, usd_per_hour: float | None
) -> str:
    """The operating point as one sentence ("3 × DGX H200 serve 2,000 concurrent users …")."""
    p = at.point
    copies = at.copies_needed
    who = f"{copies:,} × {build_name}" if copies is not None else build_name
    verb = "serve" if copies is not None and copies > 1 else "serves"
    if slo.concurrent_users is not None:
        load = f"{slo.concurrent_users:,} concurrent users"
    elif slo.requests_per_s is not None:
        load = f"{slo.requests_per_s:,.4g} requests/s"
    else:
        load = f"{p.concurrency:,} concurrent requests"
    text = (
        f"{who} {verb} {load} at about {p.tokens_per_s_per_user:,.0f} tokens/s each "
        f"({p.itl_ms:,.1f} ms per token), time to first token {p.ttft_s:,.2f} s, running "
        f"{p.concurrency:,} requests per copy for {p.tokens_per_s_total:,.0f} tokens/s a copy"
    )
    if p.usd_per_million_output_tokens is not None:
        text += f", ${p.usd_per_million_output_tokens:,.2f} per million output tokens"
    if usd_per_hour is not None and copies is not None:
        text += f" (${usd_per_hour * copies:,.0f}/hour for all copies)"
    if at.utilization is not None:
        text += (
            f"; each copy runs at {at.utilization:.0%} of its capacity and a request waits "
            f"{p.queue_wait_s:,.2f} s for a slot on average"
        )
    return text + " — an estimate."


def run_curve(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    serving: ServingWorkload,
    slo: ServiceLevel,
    costs: CostAssumptions,
) -> ServingCurve:
    """engine.serving_curve with input errors as 422s naming the request field."""
    # One plain estimate first: it refuses bad build/model/workload/cost values with the
    # estimate endpoint's field names (the one place that maps them).
    run_engine(build, model, workload, costs)
    count_engine_evaluations()
    try:
        return serving_curve(build, model, workload, serving, slo, costs)
    except EngineInputError as exc:
        raise _serving_error(exc) from None


def run_serving(
    session: Session, *, request: ServingRequest, costs: CostAssumptions
) -> dict[str, Any]:
    """One serving curve (ServingOut shape)."""
    snap = snapshot(session)
    workload = workload_spec(request.workload)
    if isinstance(request.build, str):
        row = find_build(snap, request.build, field="build")
        build = row.spec
        build_out = build_subject(build, slug=row.slug, tier=row.item["tier"])
    else:
        build = inline_build_spec(snap, request.build)
        build_out = build_subject(build, slug=None)
    model, model_slug = _model_spec(snap, request.model, field="model")
    spec_in = request.serving.speculative
    draft: ModelSpec | None = None
    draft_slug: str | None = None
    if spec_in.draft_model is not None:
        draft, draft_slug = _model_spec(
            snap, spec_in.draft_model, field="serving.speculative.draft_model"
        )
    serving, slo = serving_inputs(request.serving, workload, draft)
    curve = run_curve(build, model, workload, serving, slo, costs)
    return serving_answer(
        curve,
        build=build,
        build_out=build_out,
        model=model,
        model_out=model_subject(model, slug=model_slug),
        workload=workload,
        serving=serving,
        slo=slo,
        costs=costs,
        draft_name=draft_slug or (draft.name if draft else None),
    )


def serving_answer(
    curve: ServingCurve,
    *,
    build: BuildSpec,
    build_out: dict[str, Any],
    model: ModelSpec,
    model_out: dict[str, Any],
    workload: Workload,
    serving: ServingWorkload,
    slo: ServiceLevel,
    costs: CostAssumptions,
    draft_name: str | None,
) -> dict[str, Any]:
    """A ServingCurve in the API's answer shape (ServingOut)."""
    at_out: dict[str, Any] | None = None
    if curve.at_slo is not None:
        at = curve.at_slo
        usd_per_hour = curve.usd_per_hour
        at_out = {
            **point_out(at.point),
            "copies_needed": at.copies_needed,
            "accelerators_needed": at.accelerators_needed,
            "utilization": at.utilization,
            "usd_per_hour_total": usd_per_hour * (at.copies_needed or 1)
            if usd_per_hour is not None
            else None,
            "summary": operating_point_words(
                at, build_name=build.name, slo=slo, usd_per_hour=usd_per_hour
            ),
        }
    spec = serving.speculative
    rate = spec.acceptance_rate
    if spec.kind != "none" and rate is None:
        rate = default_acceptance(spec.kind, model.name)
    return {
        "build": build_out,
        "model": model_out,
        "workload": workload_out(workload),
        "serving": {
            "input_tokens": serving.input_tokens,
            "output_tokens": serving.output_tokens,
            "ttft_s_max": slo.ttft_s_max,
            "itl_ms_max": slo.itl_ms_max,
            "tokens_per_s_per_user_min": slo.tokens_per_s_per_user_min,
            "concurrent_users": slo.concurrent_users,
            "requests_per_s": slo.requests_per_s,
            "speculative_kind": spec.kind,
            "acceptance_rate": rate,
            "draft_tokens": curve_draft_tokens(spec),
            "draft_model": draft_name,
        },
        "fits": curve.fits,
        "max_concurrency": curve.max_concurrency,
        "curve": [point_out(p) for p in curve.curve],
        "at_slo": at_out,
        # The same plan object as the estimate answer (launch command, runtime and all).
        "plan": asdict(curve.plan),
        "findings": [{"severity": f.severity, "message": f.message} for f in curve.findings],
        "assumptions": list(curve.assumptions),
        "estimated": True,
    }


def curve_draft_tokens(spec: Speculative) -> int | None:
    """Drafted tokens per step the engine used (None without speculation)."""
    if spec.kind == "none":
        return None
    if spec.draft_tokens is not None:
        return spec.draft_tokens
    return MTP_DRAFT_TOKENS if spec.kind == "mtp" else DRAFT_TOKENS


def parse_serving_request(raw: Any) -> ServingRequest:
    """Validate a raw serving request from form text (the /serving page), raising InvalidInput."""
    try:
        return ServingRequest.model_validate(raw, strict=False, context={FORM_TEXT: True})
    except ValidationError as exc:
        errors = [
            FieldError(".".join(str(p) for p in e["loc"]) or "(request)", e["msg"])
            for e in exc.errors(include_url=False)
        ]
        summary = "; ".join(f"{e.field}: {e.message}" for e in errors[:5])
        raise InvalidInput(summary, errors=errors) from None


def rank_at_slo(
    snap: Snapshot,
    *,
    model: ModelSpec,
    workload: Workload,
    serving: ServingWorkload,
    slo: ServiceLevel,
    costs: CostAssumptions,
) -> list[dict[str, Any]]:
    """Every catalog build at its SLO operating point, cheapest per million output tokens first
    (builds that cannot meet the limits are left out). For recommend (see the integrator note
    in docs/engine.md)."""
    out = []
    for row in build_rows(snap).rows:
        count_engine_evaluations()
        try:
            found = best_at_slo(row.spec, model, workload, serving, slo, costs)
        except EngineInputError as exc:
            raise _serving_error(exc) from None
        if found is None:
            continue
        plan, at = found
        out.append(
            {
                "build": row.item,
                "plan": plan.description,
                **point_out(at.point),
                "copies_needed": at.copies_needed,
                "accelerators_needed": at.accelerators_needed,
            }
        )
    out.sort(
        key=lambda item: (
            item["usd_per_million_output_tokens"] is None,
            item["usd_per_million_output_tokens"] or 0.0,
            item["build"]["slug"],
        )
    )
    return out
