"""Estimate use cases: one engine run or a batch, for slug-or-inline builds and models.

Contract (callers: the JSON API, the HTML calculator, the build page, the CLI):
- `cost_assumptions(settings, overrides=None) -> CostAssumptions`: the server's cost defaults
  (TIERLINE_AMORTIZATION_YEARS, _ELECTRICITY_USD_PER_KWH, _PUE) with optional overrides.
- `run_estimate(session, *, request: EstimateRequest, costs) -> EstimateOut`: one engine run
  for a slug-or-inline build and model. Unknown slugs raise
  NotFound naming `build` / `model`; engine input errors raise InvalidInput naming the field
  (`build.*`, `model.config.*`, `workload.*`).
- `run_batch(session, *, requests, costs) -> BatchOut`: each entry is the answer
  or the problem that stopped it (one bad entry does not fail the others). The request has a
  cost budget (`REQUEST_PLAN_BUDGET` candidate plans, failover searches included); beyond it
  the whole request is a 413 (ContentTooLarge) and nothing is answered.
- Every answer carries the runtime the engine used (`workload.runtime`, `plan.runtime`), the
  plan's `launch_command` (catalog models named by their Hugging Face repository, from the
  model's source URL: `engine_runs.model_ref`) and `failover` (`engine_runs.failover_cases`).
- `model_fits_for_build(session, *, slug, precision, context_tokens, batch, costs,
  runtime=None, parallelism="auto") -> list[ModelFitOut]`: every catalog model on one build with
  its figures (the build page's "what it runs").
Engine calls live in `engine_runs`, answer shapes in `estimate_answers`.
"""


import json
from dataclasses import asdict
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.config import Settings
from app.engine import CostAssumptions, ModelSpec
from app.errors import ContentTooLarge, DomainError, FieldError
from app.schemas.estimate import CostsIn, EstimateRequest
from app.schemas.estimate_answer import BatchOut, EstimateOut
from app.schemas.inline import InlineModel
from app.schemas.recommend import ModelFitOut
from app.services.build_rows import BuildRow, find_build
from app.services.engine_runs import (
    catalog_estimate,
    failover_cases,
    inline_build_spec,
    inline_model_spec,
    model_ref,
    run_engine,
    simple_workload,
    validate_form_text,
    workload_spec,
)
from app.services.estimate_answers import build_subject, estimate_answer, model_fit, model_subject
from app.services.model_profiles import ModelProfileRow, find_model_profile, model_profile_rows


def cost_assumptions(
    settings: Settings | None, overrides: CostsIn | None = None
) -> CostAssumptions:
    """The cost assumptions the server quotes, with a request's overrides applied."""
    base = CostAssumptions()
    values = asdict(base)
    if settings is not None:
        values.update(
            amortization_years=settings.amortization_years,
            electricity_usd_per_kwh=settings.electricity_usd_per_kwh,
            pue=settings.pue,
        )
    if overrides is not None:
        values.update({k: v for k, v in overrides.model_dump().items() if v is not None})
    return CostAssumptions(**values)


def _estimate_at(
    snap: Snapshot,
    request: EstimateRequest,
    costs: CostAssumptions,
    pasted: dict[str, ModelSpec] | None = None,
) -> EstimateOut:
    workload = workload_spec(request.workload)
    build_row: BuildRow | None = None
    model_row: ModelProfileRow | None = None
    if isinstance(request.build, str):
        build_row = find_build(snap, request.build, field="build")
        build_spec_ = build_row.spec
        build = build_subject(build_spec_, slug=build_row.slug, tier=build_row.list_item.tier)
    else:
        build_spec_ = inline_build_spec(snap, request.build)
        build = build_subject(build_spec_, slug=None)
    if isinstance(request.model, str):
        model_row = find_model_profile(snap, request.model, field="model")
        model_spec_ = model_row.spec
        model = model_subject(model_spec_, slug=model_row.slug)
    else:
        model_spec_ = _pasted_model_spec(request.model, pasted)
        model = model_subject(model_spec_, slug=None)
    if build_row is not None and model_row is not None:
        # Catalog answers are memoised whole per catalog version (a hit skips building them).
        row_b, row_m = build_row, model_row
        return snap.memo(
            ("estimate_answer", row_b.slug, row_m.slug, workload, costs),
            lambda: estimate_answer(
                catalog_estimate(snap, build=row_b, model=row_m, workload=workload, costs=costs),
                build=build,
                model=model,
                workload=workload,
                failover=failover_cases(row_b.spec, row_m.spec, workload, costs),
            ),
        )
    est = run_engine(build_spec_, model_spec_, workload, costs, ref=model_ref(model_row))
    return estimate_answer(
        est,
        build=build,
        model=model,
        workload=workload,
        failover=failover_cases(build_spec_, model_spec_, workload, costs),
    )


def run_estimate(
    session: Session, *, request: EstimateRequest, costs: CostAssumptions
) -> EstimateOut:
    """One engine run."""
    return _estimate_at(snapshot(session), request, _request_costs(costs, request))


def _request_costs(costs: CostAssumptions, request: EstimateRequest) -> CostAssumptions:
    if request.costs is None:
        return costs
    values = asdict(costs)
    values.update({k: v for k, v in request.costs.model_dump().items() if v is not None})
    return CostAssumptions(**values)


_BATCH = TypeAdapter(BatchOut)

# Cost budget of one request, in candidate plans the engine evaluates (each ~3 µs). The plan
# search is bounded per estimate (<= 8 tensor-parallel sizes x ~2 sqrt(layers) stage counts,
# whatever the accelerator count), so a full batch of 100 stays well inside it; the budget is
# the backstop that turns a costlier request into a 413 instead of minutes of CPU.
REQUEST_PLAN_BUDGET = 100_000


def plans_in(answer: EstimateOut) -> int:
    """Candidate plans an answer cost: its own search and its failover searches."""
    return answer.plan.plans_evaluated * (1 + len(answer.failover))


def _pasted_model_spec(model: InlineModel, pasted: dict[str, ModelSpec] | None) -> ModelSpec:
    """The spec of a pasted config, read once per batch: a batch usually sweeps builds for one
    model. Keyed by the config's exact JSON text (1, 1.0 and true stay distinct), which costs a
    few µs against ~25 µs to read the config; the memo lives only as long as one request."""
    if pasted is None:
        return inline_model_spec(model)
    key = json.dumps(
        [model.name, model.params_total, model.params_active, model.config], sort_keys=True
    )
    spec = pasted.get(key)
    if spec is None:
        spec = pasted[key] = inline_model_spec(model)
    return spec


def run_batch(
    session: Session, *, requests: list[EstimateRequest], costs: CostAssumptions
) -> BatchOut:
    """Several engine runs; a failing entry carries its problem instead.

    Raises ContentTooLarge (413) when the entries together exceed REQUEST_PLAN_BUDGET."""
    snap = snapshot(session)
    results: list[dict[str, Any]] = []
    spent = 0
    pasted: dict[str, ModelSpec] = {}
    for index, request in enumerate(requests):
        try:
            answer = _estimate_at(snap, request, _request_costs(costs, request), pasted)
            spent += plans_in(answer)
            if spent > REQUEST_PLAN_BUDGET:
                raise ContentTooLarge(
                    f"the batch needs more than {REQUEST_PLAN_BUDGET:,} candidate plans "
                    f"(entry {index} crossed it); send fewer or smaller entries",
                    errors=[FieldError(str(index), "exceeds the request's plan budget")],
                )
        except ContentTooLarge:
            raise
        except DomainError as exc:
            problem = exc.problem()
            for err in problem.get("errors", []):
                err["field"] = f"{index}.{err['field']}"
            results.append({"index": index, "ok": False, "result": None, "error": problem})
        else:
            results.append({"index": index, "ok": True, "result": answer, "error": None})
    # The answers are EstimateOut already: validation passes them through as they are.
    return _BATCH.validate_python({"results": results})


def parse_estimate_request(raw: Any) -> EstimateRequest:
    """Validate a raw estimate request (for the HTML calculator), raising InvalidInput."""
    return validate_form_text(EstimateRequest, raw)


def model_fits_for_build(
    session: Session,
    *,
    slug: str,
    precision: str,
    context_tokens: int,
    batch: int = 1,
    costs: CostAssumptions,
    runtime: str | None = None,
    parallelism: str = "auto",
) -> list[ModelFitOut]:
    """Every catalog model on one build: fit, verdict, speed and cost, largest model first."""
    snap = snapshot(session)
    build = find_build(snap, slug)
    workload = simple_workload(
        precision=precision,
        context_tokens=context_tokens,
        batch=batch,
        runtime=runtime,
        parallelism=parallelism,
    )
    out = []
    for model in sorted(model_profile_rows(snap).values(), key=lambda m: (-m.params_total, m.slug)):
        est = catalog_estimate(snap, build=build, model=model, workload=workload, costs=costs)
        out.append(model_fit(est, model.list_item))
    return out
