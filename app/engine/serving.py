"""Serving curves: throughput against interactivity, the operating point at an SLO, sizing.

Built on the engine's public entry point only (`estimate`): every concurrency point is one
estimate at batch = concurrency, and the serving figures are derived from its decode-step parts
and prefill rate. docs/engine.md, "Serving curves and SLOs", states every formula and source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .errors import EngineInputError
from .estimate import estimate
from .results import Estimate, Finding, ParallelPlan, Throughput
from .runtime import RUNTIMES
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload

_DEFAULT_COSTS = CostAssumptions()
SPECULATIVE_KINDS = ("none", "mtp", "draft")

# Published multi-token-prediction acceptance per model family (name prefix, lower case).
# DeepSeek-V3 technical report (arXiv:2412.19437, section 5.4.3): "the acceptance rate of the
# second token prediction ranges between 85% and 90%"; we take the low end. One MTP module, so
# one drafted token per step. DeepSeek-R1 shares the V3 architecture and MTP module.
MTP_ACCEPTANCE = (("deepseek-v3", 0.85), ("deepseek-r1", 0.85))
MTP_DRAFT_TOKENS = 1
# A separate draft model: Leviathan et al. 2023 (arXiv:2211.17192) report empirical acceptance
# rates from about 0.5 to about 0.9 depending on the pair and sampling; 0.6 is deliberately low.
DRAFT_ACCEPTANCE = 0.6
DRAFT_TOKENS = 4
# With a load but no TTFT limit, copies are sized to keep each below this utilisation, so the
# queue stays finite (M/M/c waits grow without bound as utilisation approaches 1).
DEFAULT_MAX_UTILIZATION = 0.9
# Under a requests/s load, a point whose TTFT leaves room for waiting only below this utilisation
# is not an operating point: copies would sit nearly idle (a lower concurrency serves better).
MIN_UTILIZATION = 0.05


@dataclass(frozen=True, slots=True)
class Speculative:
    """Speculative decoding: none, multi-token-prediction heads, or a separate draft model."""

    kind: str = "none"  # none | mtp | draft
    acceptance_rate: float | None = None  # per drafted token; None = the family default
    draft_tokens: int | None = None  # tokens drafted per step; None = 1 for MTP, 4 for a draft
    draft_model: ModelSpec | None = None  # required when kind == "draft"


@dataclass(frozen=True, slots=True)
class ServingWorkload:
    """Requests the build serves: prompt and answer lengths, speculative decoding."""

    input_tokens: int = 2048
    output_tokens: int = 2048
    speculative: Speculative = Speculative()


@dataclass(frozen=True, slots=True)
class ServiceLevel:
    """Latency limits and an optional target load (concurrent users or requests per second)."""

    ttft_s_max: float | None = None
    itl_ms_max: float | None = None
    tokens_per_s_per_user_min: float | None = None
    concurrent_users: int | None = None
    requests_per_s: float | None = None

    @property
    def has_limits(self) -> bool:
        """True when any latency limit is set."""
        limits = (self.ttft_s_max, self.itl_ms_max, self.tokens_per_s_per_user_min)
        return any(v is not None for v in limits)

    @property
    def has_load(self) -> bool:
        """True when a target load is set."""
        return self.concurrent_users is not None or self.requests_per_s is not None

    @property
    def is_set(self) -> bool:
        """True when the caller asked an SLO or sizing question."""
        return self.has_limits or self.has_load


@dataclass(frozen=True, slots=True)
class ServingPoint:
    """One concurrency on the curve (all figures are estimates)."""

    concurrency: int  # requests in flight on the whole build
    tokens_per_s_per_user: float  # generated tokens/s each request sees while decoding
    tokens_per_s_total: float  # generated tokens/s over the whole build
    tokens_per_s_per_accelerator: float  # total / every accelerator of the build
    ttft_s: float  # time to first token, queueing for a slot included
    itl_ms: float  # inter-token latency (time per output token)
    usd_per_million_input_tokens: float | None
    usd_per_million_output_tokens: float | None
    requests_per_s: float  # completed requests per second
    input_tokens_per_s: float  # prompt tokens prefilled per second
    prefill_share: float  # share of GPU time spent on prefill chunks
    queue_wait_s: float  # part of ttft_s spent waiting for a slot
    tokens_per_step: float  # tokens each request gains per decode step (>1 with speculation)
    bottleneck: str


@dataclass(frozen=True, slots=True)
class SloPoint:
    """The best operating point under a service level and the copies a target load needs."""

    point: ServingPoint
    copies_needed: int | None  # None when no load was given
    accelerators_needed: int | None
    utilization: float | None  # offered requests / capacity of the copies (requests_per_s load)


@dataclass(frozen=True, slots=True)
class ServingCurve:
    """A build serving a model: the curve, the operating point at the SLO, plan and notes."""

    fits: bool
    curve: tuple[ServingPoint, ...]
    at_slo: SloPoint | None
    plan: ParallelPlan
    max_concurrency: int  # the largest concurrency that fits (0 when the model does not fit)
    usd_per_hour: float | None  # one copy of the build: purchase amortised plus power
    findings: tuple[Finding, ...]
    assumptions: tuple[str, ...]
    estimated: bool = True


# ---- inputs ---------------------------------------------------------------------------------


def default_acceptance(kind: str, model_name: str) -> float | None:
    """The published acceptance rate for a speculation kind and model family (None: unknown)."""
    if kind == "draft":
        return DRAFT_ACCEPTANCE
    if kind == "mtp":
        name = model_name.lower().replace(" ", "-")
        for prefix, rate in MTP_ACCEPTANCE:
            if name.startswith(prefix):
                return rate
    return None


def _resolved(spec: Speculative, model: ModelSpec) -> tuple[float, int]:
    """(acceptance rate, drafted tokens per step), validated."""
    if spec.kind not in SPECULATIVE_KINDS:
        raise EngineInputError("speculative.kind", f"must be one of {', '.join(SPECULATIVE_KINDS)}")
    if spec.kind == "none":
        return 0.0, 0
    rate = spec.acceptance_rate
    if rate is None:
        rate = default_acceptance(spec.kind, model.name)
        if rate is None:
            raise EngineInputError(
                "speculative.acceptance_rate",
                f"no published MTP acceptance rate for {model.name}; give one",
            )
    if not 0 <= rate < 1:
        raise EngineInputError("speculative.acceptance_rate", "must be in [0, 1)")
    if spec.kind == "draft" and spec.draft_model is None:
        raise EngineInputError("speculative.draft_model", "required when kind is draft")
    default_k = MTP_DRAFT_TOKENS if spec.kind == "mtp" else DRAFT_TOKENS
    k = spec.draft_tokens if spec.draft_tokens is not None else default_k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 16:
        raise EngineInputError("speculative.draft_tokens", "must be an integer from 1 to 16")
    return rate, k


def expected_tokens_per_step(acceptance_rate: float, draft_tokens: int) -> float:
    """Tokens a verify step yields per sequence: (1 - a^(k+1)) / (1 - a) (Leviathan et al.)."""
    if draft_tokens == 0:
        return 1.0
    a = acceptance_rate
    return (1.0 - a ** (draft_tokens + 1)) / (1.0 - a)


def _validate(serving: ServingWorkload, slo: ServiceLevel, workload: Workload) -> None:
    if workload.mode != "inference":
        raise EngineInputError("mode", "serving curves are for inference")
    for name in ("input_tokens", "output_tokens"):
        value = getattr(serving, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(f"serving.{name}", f"must be a positive integer, got {value!r}")
    for name in ("ttft_s_max", "itl_ms_max", "tokens_per_s_per_user_min", "requests_per_s"):
        value = getattr(slo, name)
        if value is not None and not (isinstance(value, int | float) and 0 < value < math.inf):
            raise EngineInputError(f"serving.{name}", "must be a positive finite number")
    users = slo.concurrent_users
    if users is not None and (isinstance(users, bool) or not isinstance(users, int) or users < 1):
        raise EngineInputError("serving.concurrent_users", "must be a positive integer")


def serving_base_workload(workload: Workload, serving: ServingWorkload) -> Workload:
    """The engine workload for serving: each slot holds a whole request (prompt + answer)."""
    return replace(
        workload,
        context_tokens=serving.input_tokens + serving.output_tokens,
        prompt_tokens=serving.input_tokens,
        batch=1,
    )


def concurrency_grid(max_batch: int) -> tuple[int, ...]:
    """1, 2, 3, 4, 6, 8, 12 … (powers of two and 1.5x steps) up to max_batch, which closes it."""
    out: list[int] = []
    power = 1
    while power <= max_batch:
        out.append(power)
        half_step = power * 3 // 2
        if power >= 2 and half_step <= max_batch:
            out.append(half_step)
        power *= 2
    if max_batch >= 1 and out[-1] != max_batch:
        out.append(max_batch)
    return tuple(out)


# ---- one point --------------------------------------------------------------------------------


def _step_with_prefill(t: Throughput, prefill_s: float) -> float:
    """Decode step time when `prefill_s` of prefill compute rides in the same step.

    Chunked prefill (Sarathi-Serve) fuses prompt chunks with the decode batch: their compute
    adds to the decode compute, and hides under the step's weight reads while decode is
    memory-bound.
    """
    roof = max(t.decode_memory_s, t.decode_compute_s)
    return t.decode_step_s - roof + max(t.decode_memory_s, t.decode_compute_s + prefill_s)


@dataclass(frozen=True, slots=True)
class _Context:
    """What every point of one curve shares."""

    build: BuildSpec
    model: ModelSpec
    base: Workload  # tensor/pipeline parallel pinned to the plan
    costs: CostAssumptions
    input_tokens: int
    output_tokens: int
    chunk_tokens: int
    acceptance: float
    draft_tokens: int
    kind: str
    draft_model: ModelSpec | None


def _estimate_at(ctx: _Context, batch: int) -> Estimate:
    return estimate(ctx.build, ctx.model, replace(ctx.base, batch=batch), ctx.costs)


def _verify_step(ctx: _Context, batch: int, plain: Throughput) -> Throughput:
    """Decode-step parts of a verify pass: k+1 tokens per sequence in one forward pass.

    Evaluated as batch x (k+1) sequences at context / (k+1): the same KV bytes read, (k+1)x the
    matmul FLOPs and all-reduce bytes, and the distinct experts k+1 tokens per sequence touch.
    """
    width = ctx.draft_tokens + 1
    context = -(-ctx.base.context_tokens // width)
    wl = replace(ctx.base, batch=batch * width, context_tokens=context,
                 prompt_tokens=min(ctx.base.prompt_tokens, context))
    est = estimate(ctx.build, ctx.model, wl, ctx.costs)
    if est.throughput is not None:
        return est.throughput
    # Out of memory at the widened batch (activations): scale compute by k+1 instead.
    comp = plain.decode_compute_s * width
    step = plain.decode_step_s - max(plain.decode_memory_s, plain.decode_compute_s)
    return replace(plain, decode_compute_s=comp,
                   decode_step_s=step + max(plain.decode_memory_s, comp))


def _draft_seconds(ctx: _Context, batch: int, plain: Throughput) -> float:
    """Seconds per step spent drafting k tokens for every sequence of a replica."""
    if ctx.kind == "mtp":
        # One MTP module is one extra decoder layer per drafted token (DeepSeek-V3, section 2.2).
        return ctx.draft_tokens * plain.decode_step_s / ctx.model.num_hidden_layers
    assert ctx.draft_model is not None
    wl = replace(ctx.base, batch=batch, tensor_parallel=None, pipeline_parallel=None)
    est = estimate(ctx.build, ctx.draft_model, wl, ctx.costs)
    if est.throughput is None:
        raise EngineInputError("speculative.draft_model", "the draft model does not fit")
    return ctx.draft_tokens * est.throughput.decode_step_s


def _point(ctx: _Context, est: Estimate, concurrency: int) -> tuple[ServingPoint, float]:
    """The serving figures at one concurrency (no queueing: `size` adds the wait for a slot),
    and the inter-token latency without speculation, in ms."""
    t = est.throughput
    assert t is not None
    b = t.batch_per_replica
    rate = t.prefill_tokens_per_s  # one replica, one prompt alone
    ratio = ctx.input_tokens / ctx.output_tokens
    plain_step = _step_with_prefill(t, b * ratio / rate)
    if ctx.kind == "none":
        gain = 1.0
        step_core = t
        draft_s = 0.0
    else:
        gain = expected_tokens_per_step(ctx.acceptance, ctx.draft_tokens)
        step_core = _verify_step(ctx, concurrency, t)
        draft_s = _draft_seconds(ctx, concurrency, t)
    # Steady arrivals: each decode step a replica must prefill the prompts of the requests that
    # its b sequences finish, b x gain / output of a request each, input tokens apiece.
    prefill_per_step_s = b * gain * ratio / rate
    step = _step_with_prefill(step_core, prefill_per_step_s) + draft_s
    itl = step / gain
    # The new prompt's own chunks: each shares a step with the running batch's decode.
    full, rest = divmod(ctx.input_tokens, ctx.chunk_tokens)
    ttft = full * _step_with_prefill(step_core, ctx.chunk_tokens / rate)
    if rest:
        ttft += _step_with_prefill(step_core, rest / rate)
    ttft += draft_s * (full + (1 if rest else 0))
    lifetime = ttft + (ctx.output_tokens - 1) * itl
    requests = concurrency / lifetime
    out_tps = requests * ctx.output_tokens
    in_tps = requests * ctx.input_tokens
    busy = prefill_per_step_s + step_core.decode_step_s + draft_s
    prefill_share = prefill_per_step_s / busy
    usd_in = usd_out = None
    per_hour = est.cost.usd_per_hour
    if per_hour is not None:
        hours = 3600.0 * ctx.costs.utilization
        usd_in = per_hour * prefill_share / (in_tps * hours) * 1e6
        usd_out = per_hour * (1.0 - prefill_share) / (out_tps * hours) * 1e6
    point = ServingPoint(
        concurrency=concurrency,
        tokens_per_s_per_user=1.0 / itl,
        tokens_per_s_total=out_tps,
        tokens_per_s_per_accelerator=out_tps / ctx.build.accelerator_count,
        ttft_s=ttft,
        itl_ms=itl * 1e3,
        usd_per_million_input_tokens=usd_in,
        usd_per_million_output_tokens=usd_out,
        requests_per_s=requests,
        input_tokens_per_s=in_tps,
        prefill_share=prefill_share,
        queue_wait_s=0.0,
        tokens_per_step=gain,
        bottleneck=step_core.bottleneck,
    )
    return point, plain_step * 1e3


# ---- the SLO and sizing ---------------------------------------------------------------------


def meets(point: ServingPoint, slo: ServiceLevel) -> bool:
    """True when the point is within every latency limit set."""
    if slo.ttft_s_max is not None and point.ttft_s > slo.ttft_s_max:
        return False
    if slo.itl_ms_max is not None and point.itl_ms > slo.itl_ms_max:
        return False
    return not (
        slo.tokens_per_s_per_user_min is not None
        and point.tokens_per_s_per_user < slo.tokens_per_s_per_user_min
    )


def mmc_wait_s(utilization: float, servers: int, service_s: float) -> float:
    """Mean wait for a slot in an M/M/c queue (Sakasegawa's approximation)."""
    if utilization >= 1.0:
        return math.inf
    if utilization <= 0.0:
        return 0.0
    exponent = math.sqrt(2.0 * (servers + 1)) - 1.0
    return service_s / servers * utilization**exponent / (1.0 - utilization)


def _max_utilization(point: ServingPoint, slo: ServiceLevel) -> float:
    """Highest utilisation whose queueing keeps TTFT within its limit (bisection)."""
    if slo.ttft_s_max is None:
        return DEFAULT_MAX_UTILIZATION
    slack = slo.ttft_s_max - point.ttft_s
    service_s = point.concurrency / point.requests_per_s
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if mmc_wait_s(mid, point.concurrency, service_s) <= slack:
            lo = mid
        else:
            hi = mid
    return lo


def size(point: ServingPoint, slo: ServiceLevel, accelerators: int) -> SloPoint | None:
    """Copies of the build a target load needs at this operating point.

    Concurrent users: each copy holds at most `concurrency` of them, so none waits for a slot.
    Requests per second: Poisson arrivals into `concurrency` slots per copy; copies are added
    until the mean wait for a slot fits inside the TTFT limit. None when the point leaves so
    little TTFT slack that copies would run below MIN_UTILIZATION (a lower concurrency fits).
    """
    copies: int | None = None
    utilization: float | None = None
    wait = 0.0
    if slo.concurrent_users is not None:
        copies = math.ceil(slo.concurrent_users / point.concurrency)
    if slo.requests_per_s is not None:
        cap = _max_utilization(point, slo)
        if cap < MIN_UTILIZATION:
            return None
        by_rate = max(1, math.ceil(slo.requests_per_s / (point.requests_per_s * cap) - 1e-9))
        copies = max(copies or 0, by_rate)
        utilization = slo.requests_per_s / (copies * point.requests_per_s)
        service_s = point.concurrency / point.requests_per_s
        wait = mmc_wait_s(utilization, point.concurrency, service_s)
    if wait > 0:
        point = replace(point, ttft_s=point.ttft_s + wait, queue_wait_s=wait)
    return SloPoint(
        point=point,
        copies_needed=copies,
        accelerators_needed=copies * accelerators if copies is not None else None,
        utilization=utilization,
    )


def _better(a: SloPoint, b: SloPoint | None) -> bool:
    """Fewer copies first (when sized), then more throughput per copy."""
    if b is None:
        return True
    a_copies, b_copies = a.copies_needed, b.copies_needed
    if a_copies is not None and b_copies is not None and a_copies != b_copies:
        return a_copies < b_copies
    return a.point.tokens_per_s_total > b.point.tokens_per_s_total


def pick(points: tuple[ServingPoint, ...], slo: ServiceLevel, accelerators: int
         ) -> SloPoint | None:
    """The best point meeting the limits (highest throughput; fewest copies under a load)."""
    best: SloPoint | None = None
    for point in points:
        if meets(point, slo):
            candidate = size(point, slo, accelerators)
            if candidate is not None and _better(candidate, best):
                best = candidate
    return best


# ---- curves and plans ------------------------------------------------------------------------


def _context(build: BuildSpec, model: ModelSpec, workload: Workload, serving: ServingWorkload,
             costs: CostAssumptions, plan: ParallelPlan) -> _Context:
    spec = serving.speculative
    acceptance, k = _resolved(spec, model)
    # The plan names the runtime the engine resolved (workload.runtime may be None = automatic):
    # every point of the curve runs on that one.
    base = replace(serving_base_workload(workload, serving), runtime=plan.runtime,
                   tensor_parallel=plan.tensor_parallel, pipeline_parallel=plan.pipeline_parallel)
    return _Context(
        build=build, model=model, base=base, costs=costs,
        input_tokens=serving.input_tokens, output_tokens=serving.output_tokens,
        chunk_tokens=RUNTIMES[plan.runtime].prefill_chunk_tokens,
        acceptance=acceptance, draft_tokens=k, kind=spec.kind, draft_model=spec.draft_model,
    )


def _plan_candidates(build: BuildSpec, model: ModelSpec, workload: Workload,
                     serving: ServingWorkload, costs: CostAssumptions, *, search: bool
                     ) -> list[Estimate]:
    """Batch-1 estimates of the plans a serving deployment could use, the engine's own first.

    The engine's automatic inference plan spans the pooled domain with one tensor-parallel
    group; serving may prefer more replicas of smaller groups. Pinned plans (tensor_parallel or
    pipeline_parallel in the workload) are kept as given.
    """
    first = estimate(build, model, serving_base_workload(workload, serving), costs)
    out = [first]
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
            out.append(est)
        tp //= 2
    return out


def _curve_points(ctx: _Context, max_batch: int) -> tuple[tuple[ServingPoint, ...], list[int]]:
    points = []
    slower = []  # concurrencies at which speculation lengthens the inter-token latency
    last_fit = 0
    for c in concurrency_grid(max_batch):
        est: Estimate | None = _estimate_at(ctx, c)
        top = False
        if est is None or est.throughput is None:
            # The closed-form largest batch leaves out memory that grows with the batch
            # (activations), so the top of the grid can miss: bisect for the true largest.
            c, est = _largest_fitting(ctx, last_fit, c)
            top = True
        if est is not None:
            point, plain_itl_ms = _point(ctx, est, c)
            if ctx.kind != "none" and point.itl_ms > plain_itl_ms:
                slower.append(c)
            points.append(point)
            last_fit = c
        if top:
            break
    return tuple(points), slower


def _largest_fitting(ctx: _Context, fits: int, misses: int) -> tuple[int, Estimate | None]:
    """The largest concurrency in (fits, misses) whose estimate fits, and that estimate."""
    best: tuple[int, Estimate | None] = (fits, None)
    lo, hi = fits, misses
    while hi - lo > 1:
        mid = (lo + hi) // 2
        est = _estimate_at(ctx, mid)
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
    _validate(serving, slo, workload)
    _resolved(serving.speculative, model)  # refuse bad speculation before any estimate
    candidates = _plan_candidates(build, model, workload, serving, costs,
                                  search=search_plans and slo.is_set)
    best: tuple[Estimate, tuple[ServingPoint, ...], SloPoint | None, list[int]] | None = None
    for first in candidates:
        if not first.fits:
            break
        ctx = _context(build, model, workload, serving, costs, first.plan)
        points, slower = _curve_points(ctx, first.max_batch_that_fits or 0)
        at = pick(points, slo, build.accelerator_count) if slo.is_set else None
        if best is None or (at is not None and _better(at, best[2])):
            best = (first, points, at, slower)
    if best is None:
        first = candidates[0]
        return ServingCurve(
            fits=False, curve=(), at_slo=None, plan=first.plan, max_concurrency=0,
            usd_per_hour=first.cost.usd_per_hour,
            findings=first.findings, assumptions=_assumptions(serving, model, first),
        )
    first, points, at, slower = best
    findings = list(first.findings)
    findings.extend(_serving_findings(serving, slo, points, at, slower, model, first,
                                      len(candidates)))
    return ServingCurve(
        fits=True,
        curve=points,
        at_slo=at,
        plan=first.plan,
        max_concurrency=points[-1].concurrency if points else 0,
        usd_per_hour=first.cost.usd_per_hour,
        findings=tuple(findings),
        assumptions=_assumptions(serving, model, first),
    )


def _point_at(ctx: _Context, concurrency: int) -> ServingPoint | None:
    est = _estimate_at(ctx, concurrency)
    return _point(ctx, est, concurrency)[0] if est.throughput is not None else None


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
    _validate(serving, slo, workload)
    best: tuple[ParallelPlan, SloPoint] | None = None
    for first in _plan_candidates(build, model, workload, serving, costs, search=slo.is_set):
        if not first.fits:
            break
        ctx = _context(build, model, workload, serving, costs, first.plan)
        sized = _bisect_operating_point(ctx, first.max_batch_that_fits or 0, slo,
                                        build.accelerator_count)
        if sized is not None and (best is None or _better(sized, best[1])):
            best = (first.plan, sized)
    return best


def _bisect_operating_point(ctx: _Context, max_batch: int, slo: ServiceLevel,
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
            top = _point(ctx, est, c)[0]
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


# ---- words ----------------------------------------------------------------------------------


def _serving_findings(
    serving: ServingWorkload,
    slo: ServiceLevel,
    points: tuple[ServingPoint, ...],
    at: SloPoint | None,
    slower: list[int],
    model: ModelSpec,
    first: Estimate,
    plans_tried: int,
) -> list[Finding]:
    out: list[Finding] = []
    if slo.has_limits and at is None and points:
        p = points[0]
        out.append(Finding(
            "caution",
            f"No concurrency meets the limits: even one request sees TTFT {p.ttft_s:.2f} s and "
            f"{p.itl_ms:.1f} ms per token ({p.tokens_per_s_per_user:.0f} tokens/s)",
        ))
    spec = serving.speculative
    if spec.kind != "none":
        rate, k = _resolved(spec, model)
        gain = expected_tokens_per_step(rate, k)
        if spec.kind == "mtp":
            what = "MTP heads"
        else:
            what = f"draft model {spec.draft_model.name if spec.draft_model else ''}".strip()
        out.append(Finding(
            "info",
            f"Speculative decoding with {what}: acceptance {rate:.0%}, {k} drafted "
            f"token{'s' if k > 1 else ''} per step, {gain:.2f} tokens per verify step; their "
            "weights are not counted in the memory fit",
        ))
        if slower:
            out.append(Finding(
                "caution",
                f"From concurrency {slower[0]:,} the verify passes cost more compute than "
                "speculation saves: inter-token latency is longer than without it",
            ))
    if plans_tried > 1:
        out.append(Finding(
            "info",
            f"Plan chosen for the SLO among {plans_tried} tensor-parallel group sizes: "
            f"{first.plan.description}",
        ))
    if at is not None and at.utilization is not None:
        out.append(Finding(
            "info",
            f"At {slo.requests_per_s:g} requests/s each copy runs at {at.utilization:.0%} of "
            f"its capacity; waiting for a slot adds {at.point.queue_wait_s:.3f} s to TTFT",
        ))
    return out


def _assumptions(serving: ServingWorkload, model: ModelSpec, first: Estimate) -> tuple[str, ...]:
    rt = "prefill chunk = the runtime's prefill_chunk_tokens"
    return first.assumptions + (
        f"Serving: {serving.input_tokens:,} prompt and {serving.output_tokens:,} answer tokens "
        "per request; each slot holds a whole request, and decode is evaluated at the full "
        "length (a conservative ITL)",
        "Continuous batching with chunked prefill: at steady arrivals every decode step also "
        "prefills batch x tokens per step x input/output prompt tokens; that prefill compute "
        f"adds to the step's compute and hides under its weight reads while memory-bound; {rt}",
        "TTFT = the prompt's own chunks, each sharing a step with the running batch; with a "
        "requests/s load, plus the mean M/M/c wait for a slot (Sakasegawa's approximation)",
        "$ per million tokens: the whole build's $/hour split between prompt and answer tokens "
        "by their share of GPU time, at the cost assumptions' utilisation",
        "Concurrent users are requests in flight (no think time); tokens/s per accelerator "
        "divides by every accelerator of the build",
        "Speculative decoding (when speculative.kind is not none, this replaces the estimate's "
        "'no speculative decoding / MTP'): tokens per verify step (1 - a^(k+1))/(1 - a) "
        "(Leviathan et al. 2023); a verify pass runs k+1 tokens per sequence; an MTP head costs "
        "one decoder layer per drafted token",
    )
