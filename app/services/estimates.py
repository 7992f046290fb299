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

import marshal
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.config import Settings
from app.engine import BuildSpec, CostAssumptions, Estimate, ModelSpec, Workload
from app.errors import ContentTooLarge, DomainError, FieldError
from app.metrics import count_engine_evaluations
from app.schemas.estimate import CostsIn, EstimateRequest
from app.schemas.estimate_answer import BatchOut, EstimateOut, ModelSubjectOut
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
from app.services.estimate_answers import estimate_answer, model_fit, model_subject
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


class _Entry:
    """One estimate on its way through the steps: its inputs, then its answer."""

    __slots__ = (
        "costs", "workload", "build_spec", "model_spec", "build_row", "model_row", "est",
        "failover", "answer",
    )  # fmt: skip
    costs: CostAssumptions
    workload: Workload
    build_spec: BuildSpec
    model_spec: ModelSpec
    build_row: BuildRow | None
    model_row: ModelProfileRow | None
    est: Estimate
    failover: Sequence[Any]
    answer: EstimateOut | None  # set when the answer is known before the engine steps

    def __init__(self, costs: CostAssumptions) -> None:
        self.costs = costs
        self.answer = None


def _inputs(
    snap: Snapshot,
    request: EstimateRequest,
    costs: CostAssumptions,
    pasted: dict[tuple[Any, ...], ModelSpec] | None = None,
) -> _Entry:
    """Step 1: the engine inputs (unknown slugs are 404s, unreadable inline values 422s)."""
    entry = _Entry(costs)
    entry.workload = workload_spec(request.workload)
    entry.build_row = entry.model_row = None
    if isinstance(request.build, str):
        entry.build_row = find_build(snap, request.build, field="build")
        entry.build_spec = entry.build_row.spec
    else:
        entry.build_spec = inline_build_spec(snap, request.build)
    if isinstance(request.model, str):
        entry.model_row = find_model_profile(snap, request.model, field="model")
        entry.model_spec = entry.model_row.spec
    else:
        entry.model_spec = _pasted_model_spec(request.model, pasted)
    if entry.build_row is not None and entry.model_row is not None:
        # Catalog answers are memoised whole per catalog version (a hit skips the other steps).
        row_b, row_m, workload = entry.build_row, entry.model_row, entry.workload
        entry.answer = snap.memo(
            ("estimate_answer", row_b.slug, row_m.slug, workload, costs),
            lambda: _answer(_failover(_engine(entry, snap))),
        )
    return entry


def _engine(entry: _Entry, snap: Snapshot, counted: bool = True) -> _Entry:
    """Step 2: the engine estimate (catalog pairs memoised by value); `counted=False`: the
    caller counts the run in the metrics."""
    if entry.build_row is not None and entry.model_row is not None:
        entry.est = catalog_estimate(
            snap, build=entry.build_row, model=entry.model_row, workload=entry.workload,
            costs=entry.costs,
        )  # fmt: skip
    else:
        entry.est = run_engine(
            entry.build_spec, entry.model_spec, entry.workload, entry.costs,
            ref=model_ref(entry.model_row), counted=counted,
        )  # fmt: skip
    return entry


def _failover(entry: _Entry) -> _Entry:
    """Step 3: the failover cases."""
    entry.failover = failover_cases(entry.build_spec, entry.model_spec, entry.workload, entry.costs)
    return entry


def _answer(entry: _Entry, models: dict[int, ModelSubjectOut] | None = None) -> EstimateOut:
    """Step 4: the typed answer (its words are computed here, as the answer reads them).

    `models`: a batch's model parts by the identity of their spec (one spec per pasted config
    or catalog model): entries of one model share one part (~10K instructions an entry)."""
    build_row, model_row = entry.build_row, entry.model_row
    model_slug = None if model_row is None else model_row.slug
    model_out = None
    if models is not None:
        model_out = models.get(id(entry.model_spec))  # the entries keep their specs alive
        if model_out is None:
            model_out = models[id(entry.model_spec)] = model_subject(
                entry.model_spec, slug=model_slug
            )
    return estimate_answer(
        entry.est,
        build=entry.build_spec,
        model=entry.model_spec,
        workload=entry.workload,
        build_slug=None if build_row is None else build_row.slug,
        build_tier=None if build_row is None else build_row.list_item.tier,
        model_slug=model_slug,
        failover=entry.failover,
        model_out=model_out,
    )


def _estimate_at(snap: Snapshot, request: EstimateRequest, costs: CostAssumptions) -> EstimateOut:
    entry = _inputs(snap, request, costs)
    if entry.answer is not None:
        return entry.answer
    return _answer(_failover(_engine(entry, snap)))


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


def _pasted_model_spec(
    model: InlineModel, pasted: dict[tuple[Any, ...], ModelSpec] | None
) -> ModelSpec:
    """The spec of a pasted config, read once per batch: a batch usually sweeps builds for one
    model. Keyed by the config's marshal bytes, which keep every JSON value's type and order
    (1, 1.0 and true stay distinct) and decode back to the value, so equal bytes are equal
    configs; bytes that differ for one value (the same keys in another order, a string
    interned or not) only miss. ~8.5K instructions against 22K for its repr (json.dumps was
    slower still) and ~25 µs to read the config; the memo lives only as long as one request."""
    if pasted is None:
        return inline_model_spec(model)
    key = (model.name, model.params_total, model.params_active, marshal.dumps(model.config))
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
    pasted: dict[tuple[Any, ...], ModelSpec] = {}
    # Each step runs over every entry before the next step starts (the same calls as one
    # estimate's, in another order): the interpreter then runs one step's code 100 times in a
    # row, which benchmarks/batch_service.py measured ~20 % faster than item after item.
    done: list[_Entry | dict[str, Any]] = []
    for index, request in enumerate(requests):
        done.append(_guarded(index, _inputs, snap, request, _request_costs(costs, request), pasted))
    inline_runs = 0
    for index, entry in enumerate(done):
        if isinstance(entry, _Entry) and entry.answer is None:
            inline_runs += entry.build_row is None or entry.model_row is None
            done[index] = _guarded(index, _engine, entry, snap, False)
    # Counted once for the batch: a metrics increment is ~9K instructions in a multi-worker
    # server (a lock and a write to its shared file), ~1 % of an entry.
    count_engine_evaluations(inline_runs)
    for index, entry in enumerate(done):
        if isinstance(entry, _Entry) and entry.answer is None:
            done[index] = _guarded(index, _failover, entry)
    results: list[dict[str, Any]] = []
    models: dict[int, ModelSubjectOut] = {}
    spent = 0
    for index, entry in enumerate(done):
        if isinstance(entry, dict):  # the problem that stopped it
            results.append({"index": index, "ok": False, "result": None, "error": entry})
            continue
        answer = entry.answer if entry.answer is not None else _answer(entry, models)
        spent += plans_in(answer)
        if spent > REQUEST_PLAN_BUDGET:
            raise ContentTooLarge(
                f"the batch needs more than {REQUEST_PLAN_BUDGET:,} candidate plans "
                f"(entry {index} crossed it); send fewer or smaller entries",
                errors=[FieldError(str(index), "exceeds the request's plan budget")],
            )
        results.append({"index": index, "ok": True, "result": answer, "error": None})
    # The answers are EstimateOut already: validation passes them through as they are.
    return _BATCH.validate_python({"results": results})


def _guarded(index: int, step: Callable[..., _Entry], *args: Any) -> _Entry | dict[str, Any]:
    """One step of entry `index`, or the problem details of the domain error that stopped it
    (fields prefixed with the index)."""
    try:
        return step(*args)
    except DomainError as exc:
        problem = exc.problem()
        for err in problem.get("errors", []):
            err["field"] = f"{index}.{err['field']}"
        return problem


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
