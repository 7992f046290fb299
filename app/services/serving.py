"""Serving curves for the API, the /serving page and the CLI: resolve and run (the answer
shape is `serving_answers`).

Contract (callers: POST /api/v1/serving, /serving and /serving.json, `tierline serving`):
- `run_serving(session, *, request: ServingRequest, costs) -> ServingOut`.
  Unknown slugs raise NotFound naming `build` / `model` / `serving.speculative.draft_model`;
  invalid inputs raise InvalidInput naming the request field.
- `rank_at_slo(snap, *, model, workload, serving, slo, costs) -> list[SloRanked]`: every
  catalog build at the SLO operating point, cheapest per million output tokens first (for
  recommend).
- `parse_serving_request(raw) -> ServingRequest`: form text validated like the API (422 naming
  the field).
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.engine import BuildSpec, CostAssumptions, EngineInputError, ModelSpec, Workload
from app.engine.serving import (
    ServiceLevel,
    ServingCurve,
    ServingWorkload,
    SloPoint,
    Speculative,
    best_at_slo,
    serving_curve,
)
from app.errors import FieldError, InvalidInput
from app.metrics import count_engine_evaluations
from app.schemas.build import BuildListItem
from app.schemas.inline import InlineModel
from app.schemas.serving import ServingIn, ServingOut, ServingRequest
from app.services.build_rows import build_rows, find_build
from app.services.engine_runs import (
    inline_build_spec,
    inline_model_spec,
    run_engine,
    validate_form_text,
    workload_spec,
)
from app.services.estimate_answers import build_subject, model_subject
from app.services.model_profiles import find_model_profile
from app.services.serving_answers import serving_answer

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
) -> ServingOut:
    """One serving curve (ServingOut shape)."""
    snap = snapshot(session)
    workload = workload_spec(request.workload)
    if isinstance(request.build, str):
        row = find_build(snap, request.build, field="build")
        build = row.spec
        build_out = build_subject(build, slug=row.slug, tier=row.list_item.tier)
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


def parse_serving_request(raw: Any) -> ServingRequest:
    """Validate a raw serving request from form text (the /serving page), raising InvalidInput."""
    return validate_form_text(ServingRequest, raw)


@dataclass(frozen=True)
class SloRanked:
    """One catalog build at its best operating point under the SLO, and the plan chosen."""

    build: BuildListItem
    plan: str
    at: SloPoint


def rank_at_slo(
    snap: Snapshot,
    *,
    model: ModelSpec,
    workload: Workload,
    serving: ServingWorkload,
    slo: ServiceLevel,
    costs: CostAssumptions,
) -> list[SloRanked]:
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
        out.append(SloRanked(build=row.list_item, plan=plan.description, at=at))
    out.sort(
        key=lambda item: (
            item.at.point.usd_per_million_output_tokens is None,
            item.at.point.usd_per_million_output_tokens or 0.0,
            item.build.slug,
        )
    )
    return out
