"""Serving curves: throughput against interactivity, the operating point at an SLO, sizing.

Built on the engine's public entry point only (`estimate`): every concurrency point is one
estimate at batch = concurrency, and the serving figures are derived from its decode-step parts
and prefill rate. docs/engine.md, "Serving curves and SLOs", states every formula and source.
"""

from __future__ import annotations

from dataclasses import replace

from .estimate import estimate
from .expert_parallel import ExpertParallel, ep_sizes
from .results import Estimate, ParallelPlan
from .serving_inputs import (
    DRAFT_TOKENS,
    MTP_DRAFT_TOKENS,
    ServiceLevel,
    ServingWorkload,
    Speculative,
    concurrency_grid,
    default_acceptance,
    expected_tokens_per_step,
    resolved_speculation,
    serving_base_workload,
    validate_serving,
)
from .serving_point import Context, Estimator, estimate_at, serving_point, weight_read_s
from .serving_results import ServingCurve, ServingPoint, SloPoint
from .serving_slots import estimator_for, max_slots, slots_findings
from .serving_words import serving_assumptions, serving_findings
from .slo import better, meets, mmc_wait_s, pick, size
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .token_budget import mixes_prefill, token_budget

# The public serving API, importable from this one module.
__all__ = [
    "DRAFT_TOKENS",
    "MTP_DRAFT_TOKENS",
    "ServiceLevel",
    "ServingCurve",
    "ServingPoint",
    "ServingWorkload",
    "SloPoint",
    "Speculative",
    "best_at_slo",
    "concurrency_grid",
    "default_acceptance",
    "expected_tokens_per_step",
    "meets",
    "mmc_wait_s",
    "serving_base_workload",
    "serving_curve",
]

_DEFAULT_COSTS = CostAssumptions()


# A plan to draw a curve for: its batch-1 estimate and the estimator of its points.
Candidate = tuple[Estimate, Estimator]


def _context(build: BuildSpec, model: ModelSpec, workload: Workload, serving: ServingWorkload,
             costs: CostAssumptions, candidate: Candidate) -> Context:
    spec = serving.speculative
    acceptance, k = resolved_speculation(spec, model)
    plan = candidate[0].plan
    # The plan names the runtime the engine resolved (workload.runtime may be None = automatic):
    # every point of the curve runs on that one.
    base = replace(serving_base_workload(workload, serving), runtime=plan.runtime)
    if candidate[1] is estimate:
        base = replace(base, tensor_parallel=plan.tensor_parallel,
                       pipeline_parallel=plan.pipeline_parallel)
    return Context(
        build=build, model=model, base=base, costs=costs,
        input_tokens=serving.input_tokens, output_tokens=serving.output_tokens,
        chunk_tokens=token_budget(plan.runtime, base),
        acceptance=acceptance, draft_tokens=k, kind=spec.kind, draft_model=spec.draft_model,
        estimator=estimator_for(candidate[0]) if candidate[1] is estimate else candidate[1],
        speed_context_tokens=serving.input_tokens + serving.output_tokens // 2,
        weight_read_s=weight_read_s(candidate[0]),
        mixed_prefill=mixes_prefill(plan.runtime, base),
    )


def _plan_candidates(build: BuildSpec, model: ModelSpec, workload: Workload,
                     serving: ServingWorkload, costs: CostAssumptions, *, search: bool
                     ) -> list[Candidate]:
    """The plans a serving deployment could use, the engine's own first.

    The engine's automatic inference plan spans the pooled domain with one tensor-parallel
    group; serving may prefer more replicas of smaller groups, or, for a mixture-of-experts
    model on a runtime that has it, expert parallel over data-parallel attention. Pinned plans
    (tensor_parallel or pipeline_parallel in the workload) are kept as given.
    """
    first = estimate(build, model, serving_base_workload(workload, serving), costs)
    out: list[Candidate] = [(first, estimate)]
    if not search or workload.tensor_parallel or workload.pipeline_parallel or not first.fits:
        return out
    tp = first.plan.tensor_parallel // 2
    while tp >= 1:
        if model.num_attention_heads % tp == 0:
            wl = replace(serving_base_workload(workload, serving), tensor_parallel=tp,
                         pipeline_parallel=first.plan.pipeline_parallel)
            est = estimate(build, model, wl, costs)
            if not est.fits:
                break
            out.append((est, estimate))
        tp //= 2
    if first.placement is None:  # mixed cards and host-RAM offload have no EP
        base = replace(serving_base_workload(workload, serving), runtime=first.plan.runtime)
        for ep in ep_sizes(build, model, first.plan.runtime):
            plan = ExpertParallel(ep, first)
            est = plan(build, model, base, costs)
            if est.fits:
                out.append((est, plan))
    return out


def _curve_points(ctx: Context, max_batch: int) -> tuple[tuple[ServingPoint, ...], list[int]]:
    points = []
    slower = []  # concurrencies at which speculation lengthens the inter-token latency
    last_fit = 0
    for c in concurrency_grid(max_batch):
        est: Estimate | None = estimate_at(ctx, c)
        top = False
        if est is None or est.throughput is None:
            # The closed-form largest batch leaves out memory that grows with the batch
            # (activations), so the top of the grid can miss: bisect for the true largest.
            c, est = _largest_fitting(ctx, last_fit, c)
            top = True
        if est is not None:
            point, plain_itl_ms = serving_point(ctx, est, c)
            if ctx.kind != "none" and point.itl_ms > plain_itl_ms:
                slower.append(c)
            points.append(point)
            last_fit = c
        if top:
            break
    return tuple(points), slower


def _largest_fitting(ctx: Context, fits: int, misses: int) -> tuple[int, Estimate | None]:
    """The largest concurrency in (fits, misses) whose estimate fits, and that estimate."""
    best: tuple[int, Estimate | None] = (fits, None)
    lo, hi = fits, misses
    while hi - lo > 1:
        mid = (lo + hi) // 2
        est = estimate_at(ctx, mid)
        if est.throughput is not None:
            lo, best = mid, (mid, est)
        else:
            hi = mid
    return best


def serving_curve(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    serving: ServingWorkload = ServingWorkload(),
    slo: ServiceLevel = ServiceLevel(),
    costs: CostAssumptions = _DEFAULT_COSTS,
    *,
    search_plans: bool = True,
) -> ServingCurve:
    """The whole curve for one build, its operating point at the SLO and the plan chosen."""
    validate_serving(serving, slo, workload)
    resolved_speculation(serving.speculative, model)  # refuse bad speculation before any estimate
    candidates = _plan_candidates(build, model, workload, serving, costs,
                                  search=search_plans and slo.is_set)
    Drawn = tuple[Estimate, Context, tuple[ServingPoint, ...], SloPoint | None, list[int]]
    best: Drawn | None = None
    for candidate in candidates:
        first = candidate[0]
        if not first.fits:
            break
        ctx = _context(build, model, workload, serving, costs, candidate)
        points, slower = _curve_points(ctx, max_slots(ctx, first))
        at = pick(points, slo, build.accelerator_count) if slo.is_set else None
        if best is None or (at is not None and better(at, best[3])):
            best = (first, ctx, points, at, slower)
    if best is None:
        first = candidates[0][0]
        return ServingCurve(
            fits=False, curve=(), at_slo=None, plan=first.plan, max_concurrency=0,
            usd_per_hour=first.cost.usd_per_hour,
            findings=first.findings, assumptions=serving_assumptions(serving, model, first),
        )
    first, ctx, points, at, slower = best
    findings = list(first.findings)
    findings.extend(serving_findings(serving, slo, points, at, slower, model, first,
                                      len(candidates)))
    findings.extend(slots_findings(ctx, first, points[-1].concurrency if points else 0))
    return ServingCurve(
        fits=True,
        curve=points,
        at_slo=at,
        plan=first.plan,
        max_concurrency=points[-1].concurrency if points else 0,
        usd_per_hour=first.cost.usd_per_hour,
        findings=tuple(findings),
        assumptions=serving_assumptions(serving, model, first),
    )


def _point_at(ctx: Context, concurrency: int) -> ServingPoint | None:
    est = estimate_at(ctx, concurrency)
    return serving_point(ctx, est, concurrency)[0] if est.throughput is not None else None


def best_at_slo(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    serving: ServingWorkload,
    slo: ServiceLevel,
    costs: CostAssumptions = _DEFAULT_COSTS,
) -> tuple[ParallelPlan, SloPoint] | None:
    """The operating point at the SLO without drawing the whole curve (for catalog searches).

    Latency only grows with concurrency here (every part of a step is non-decreasing in the
    batch), so the points meeting the limits are a prefix of the grid: bisect for its end.
    """
    validate_serving(serving, slo, workload)
    best: tuple[ParallelPlan, SloPoint] | None = None
    for candidate in _plan_candidates(build, model, workload, serving, costs, search=slo.is_set):
        first = candidate[0]
        if not first.fits:
            break
        ctx = _context(build, model, workload, serving, costs, candidate)
        sized = _bisect_operating_point(ctx, max_slots(ctx, first), slo,
                                        build.accelerator_count)
        if sized is not None and (best is None or better(sized, best[1])):
            best = (first.plan, sized)
    return best


def _bisect_operating_point(ctx: Context, max_batch: int, slo: ServiceLevel,
                            accelerators: int) -> SloPoint | None:
    """The curve's operating point without drawing the curve: bisect the grid for the last
    point that fits and meets the limits; when what stopped it is memory, not the limits,
    refine up to the largest concurrency that really fits (as the curve's top does)."""
    grid = concurrency_grid(max_batch)
    lo, hi = -1, len(grid)  # grid[lo] fits and meets (or lo = -1); grid[hi] does not
    found: ServingPoint | None = None
    hi_missed_memory = False
    while hi - lo > 1:
        mid = (lo + hi) // 2
        point = _point_at(ctx, grid[mid])
        if point is not None and meets(point, slo):
            lo, found = mid, point
        else:
            hi, hi_missed_memory = mid, point is None
    if hi < len(grid) and hi_missed_memory:
        c, est = _largest_fitting(ctx, grid[lo] if lo >= 0 else 0, grid[hi])
        if est is not None:
            top = serving_point(ctx, est, c)[0]
            if meets(top, slo):
                lo, found = hi, top  # stands for grid[hi] corrected to what fits
    if found is None:
        return None
    # Under a requests/s load the point found may leave too little TTFT slack for queueing:
    # step down the grid to the first that sizes.
    index = lo
    while True:
        sized = size(found, slo, accelerators)
        if sized is not None or index <= 0:
            return sized
        index -= 1
        point = _point_at(ctx, grid[index])
        if point is None or not meets(point, slo):
            return None
        found = point
