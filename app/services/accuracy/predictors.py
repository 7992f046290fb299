"""Predictors of a case's figure (the engine, the naive roofline), errors, cross-validation."""

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from app.caching import ValueCache
from app.engine import PRECISIONS, BuildSpec, CostAssumptions, Estimate, ModelSpec, Workload
from app.engine.expert_parallel import ExpertParallel, ep_sizes
from app.engine.results import Throughput
from app.engine.serving_point import plain_context, serving_point
from app.engine.serving_results import ServingPoint
from app.engine.serving_traffic import Traffic, request_times
from app.errors import DomainError
from app.services.engine_runs import run_engine

from .groups import FIT_METRIC, SERVING_METRICS, Case, Predicted, RowResult

# Engine runs by input value (the same key space as estimates.ENGINE_RESULTS; ~1,000 rows).
PREDICTIONS = ValueCache(max_entries=5_000)
MAX_BATCH_ATTEMPTS = 8
DEFAULT_COSTS = CostAssumptions()


def estimate_for(build: BuildSpec, model: ModelSpec, workload: Workload) -> Estimate:
    """The engine's estimate for these inputs, memoised by value."""
    return PREDICTIONS.get(
        (build, model, workload), lambda: run_engine(build, model, workload, CostAssumptions())
    )


Estimator = Callable[[Workload], Estimate]


def _within_capacity(workload: Workload, estimate: Estimator) -> Estimate | None:
    """The estimate at the largest batch below `workload.batch` that the engine says fits
    (None when none does). `max_batch_that_fits` is read at one batch and re-checked at the
    next, a few times, since activation memory shrinks with the batch too."""
    batch = workload.batch
    candidate = estimate(workload).max_batch_that_fits
    for _attempt in range(MAX_BATCH_ATTEMPTS):
        if candidate is None or not 1 <= candidate < batch:
            return None
        est = estimate(replace(workload, batch=candidate))
        if est.throughput is not None:
            return est
        batch, candidate = candidate, est.max_batch_that_fits
    return None


def _engine_figure(case: Case, estimate: Estimator) -> Predicted:
    est = estimate(case.workload)
    if case.group.metric in SERVING_METRICS:
        # More requests in flight than the KV cache holds: the runtime runs what fits and
        # queues the rest (Traffic.in_flight). A run capped at a published concurrency must
        # hold its requests at their whole length (prompt + answer; the requests of a wave of
        # fixed lengths reach it together), as the product's curve fits them; its speed is
        # read at the mean KV length (case.workload). A row without its batch is already
        # quoted at the most requests that fit at the mean (inputs._max_throughput_batch).
        fit = case.workload
        if case.concurrency is not None:
            fit = replace(fit, context_tokens=_whole_request_tokens(case))
        if estimate(fit).throughput is None:
            fitting = _within_capacity(fit, estimate)
            if fitting is not None and fitting.throughput is not None:
                batch = fitting.throughput.batch_per_replica * fitting.plan.data_parallel
                est = estimate(replace(case.workload, batch=min(batch, case.workload.batch)))
    return figure_of(case, est, lambda: estimate(replace(case.workload, batch=1)))


def _whole_request_tokens(case: Case) -> int:
    """The KV length a request of the case holds at its last token (inputs.py quotes the
    workload at the mean, prompt + output / 2)."""
    output = case.output_tokens
    return max(case.workload.context_tokens, case.workload.context_tokens + output - output // 2)


def plan_estimator(
    build: BuildSpec, model: ModelSpec, workload: Workload, data_parallel_attention: bool,
    run: Callable[[Workload], Estimate],
) -> Estimator:
    """The estimator of the run's plan from `run` (the engine's estimate of a workload): the
    engine's own plan, or for a run stating data-parallel attention (SGLang
    `--enable-dp-attention`) the engine's expert-parallel plan over one scale-up domain
    (expert_parallel.py), whose memory per GPU is that run's: attention replicated, each
    request's KV cache on one rank only, the routed experts' bytes split over the group (in
    slices by tensor parallel there, whole experts here: the same bytes); its MoE traffic is
    priced as the all-to-all (an all-gather / reduce-scatter there)."""
    if not data_parallel_attention:
        return run
    sizes = ep_sizes(build, model, workload.runtime or run(workload).plan.runtime)
    if not sizes:
        return run
    ep = sizes[0]

    def dp_attention(workload: Workload) -> Estimate:
        plan = ExpertParallel(ep, run(replace(workload, batch=1)))
        return plan(build, model, workload, DEFAULT_COSTS)

    return dp_attention


def engine_predictor(case: Case) -> Predicted:
    """What app.engine.estimate says for the case (None: it says the model does not fit)."""
    return _engine_figure(case, run_estimator(
        case.build, case.model, case.workload, case.data_parallel_attention, cached=True))


def uncached_engine_predictor(case: Case) -> Predicted:
    """engine_predictor without the memo: for a calibration evaluating candidate constants."""
    return _engine_figure(case, run_estimator(
        case.build, case.model, case.workload, case.data_parallel_attention, cached=False))


def run_estimator(
    build: BuildSpec, model: ModelSpec, workload: Workload, data_parallel_attention: bool,
    *, cached: bool,
) -> Estimator:
    """The estimator of a run's plan (plan_estimator), memoised by value when `cached`."""

    def run(w: Workload) -> Estimate:
        if cached:
            return estimate_for(build, model, w)
        return run_engine(build, model, w, CostAssumptions())

    plan = plan_estimator(build, model, workload, data_parallel_attention, run)
    if plan is run or not cached:
        return plan
    return lambda w: PREDICTIONS.get(("dp-attention", build, model, w), lambda: plan(w))


def figure_of(case: Case, est: Estimate, single: Callable[[], Estimate]) -> Predicted:
    """The case's metric read from an engine estimate for its inputs (`single`: the estimate
    at batch 1, which a serving figure reads its weight-read time from)."""
    metric = case.group.metric
    if metric == FIT_METRIC:
        return not est.fits
    t = est.throughput
    if t is None:
        return None
    if metric == "decode_tokens_per_s":
        return (
            t.decode_tokens_per_s if case.workload.batch == 1 else t.aggregate_decode_tokens_per_s
        )
    if metric == "prefill_tokens_per_s":
        # B prompts prefilled together (llama-batched-bench's S_PP): packed into the passes.
        packed = t.packed_prefill_s if case.workload.batch > 1 else None
        return t.prefill_tokens_per_s if packed is None else case.workload.prompt_tokens / packed
    return _serving_figure(case, est, t, single())


def _serving_figure(case: Case, est: Estimate, t: Throughput, single: Estimate) -> float:
    """The product's serving point (engine.serving_point) for the benchmark's traffic: the
    requests it kept in flight per replica and how it sent them."""
    replicas = est.plan.data_parallel
    ctx = plain_context(case.build, case.model, case.workload, est, case.output_tokens,
                        DEFAULT_COSTS, single)
    traffic = Traffic(
        # An unrecorded arrival process is taken as a burst (every request sent at once).
        arrival=case.arrival or "burst",
        in_flight=case.workload.batch / replicas,
        wave=_uncapped_wave(case, replicas),
        requests=_capped_requests(case, replicas),
    )
    served = min(case.workload.batch, t.batch_per_replica * replicas)
    point, _ = serving_point(ctx, est, served, traffic)
    return _metric_of(case.group.metric, point)


def _metric_of(metric: str, point: ServingPoint) -> float:
    if metric == "ttft_s":
        return point.ttft_s
    if metric == "itl_ms":
        return point.itl_ms
    if metric == "e2e_latency_s":
        return point.e2e_latency_s
    if metric == "output_tokens_per_s_total":
        return point.tokens_per_s_total
    raise ValueError(f"not a serving metric: {metric}")


def _capped_requests(case: Case, replicas: int) -> float | None:
    """Requests per replica a capped benchmark sent through its cap (None: uncapped or not
    published)."""
    if case.concurrency is None or case.requests is None:
        return None
    return case.requests / replicas


def _uncapped_wave(case: Case, replicas: int) -> float | None:
    """Requests per replica of a burst sent with no cap on those in flight (None otherwise)."""
    if case.arrival != "burst" or case.concurrency is not None or case.requests is None:
        return None
    return case.requests / replicas


def roofline_predictor(case: Case) -> Predicted:
    """The naive roofline: decode = peak memory bandwidth / bytes of active weights per token,
    prefill = dense peak FLOPS / (2 x active params), over every accelerator of the run; fit =
    weights within total memory. No efficiency, no KV cache, no overhead."""
    build, model, workload = case.build, case.model, case.workload
    count = build.accelerator_count
    precision = PRECISIONS[workload.precision]
    bytes_per_weight = precision.bytes_per_weight
    active = model.params_active_published or model.params_active
    total = model.params_total_published or model.params_total
    # A format whose routed experts have their own bits (mxfp4-f16) counts them at those.
    expert_saving = bytes_per_weight - precision.expert_bytes_per_weight
    total_bytes = total * bytes_per_weight - (
        model.moe_layers * model.n_routed_experts * model.expert_params * expert_saving
    )
    active_bytes = active * bytes_per_weight - (
        model.moe_layers * model.num_experts_per_tok * model.expert_params * expert_saving
    )
    if case.group.metric == FIT_METRIC:
        return total_bytes > build.total_memory_gb * 1e9
    step_s = active_bytes / (count * build.accelerator.memory_bandwidth_gbs * 1e9)
    prefill = count * build.accelerator.fp16_tflops * 1e12 / (2 * active)
    metric = case.group.metric
    if metric == "decode_tokens_per_s":
        return workload.batch / step_s
    if metric == "prefill_tokens_per_s":
        return prefill
    # The same request-time formula as the engine's serving point, on the naive figures: a
    # step with x seconds of prefill in it takes step_s + x (nothing hides under the reads).
    prompt = workload.prompt_tokens
    times = request_times(
        lambda x: step_s + x,
        prompt_tokens=prompt, output_tokens=case.output_tokens, chunk_tokens=max(1, prompt),
        prefill_rate=prefill, shared_prefill_s=prompt / prefill, batch=workload.batch,
        traffic=Traffic(arrival=case.arrival or "burst", wave=_uncapped_wave(case, 1)),
    )
    if metric == "ttft_s":
        return times.ttft_s
    if metric == "itl_ms":
        return times.itl_s * 1e3
    if metric == "e2e_latency_s":
        return times.e2e_s
    return workload.batch * max(1, case.output_tokens) / times.slot_s


Predictor = Callable[[Case], Predicted]


def evaluate(cases: Iterable[Case], predictor: Predictor) -> list[RowResult]:
    """Each case's predicted figure and its absolute relative error (fit facts: agreement)."""
    results = []
    for case in cases:
        try:
            predicted = predictor(case)
        except DomainError as exc:  # an input the engine refuses: a miss, with its reason
            results.append(RowResult(case, None, 1.0, note=exc.detail))
            continue
        if case.group.metric == FIT_METRIC:
            agrees = predicted is not None and bool(predicted) == bool(case.measured)
            results.append(RowResult(case, predicted, None, agrees=agrees))
        elif predicted is None or isinstance(predicted, bool) or not math.isfinite(predicted):
            results.append(RowResult(case, None, 1.0, note="predicted not to fit"))
        else:
            measured = float(case.measured)
            results.append(RowResult(case, predicted, abs(predicted - measured) / measured))
    return results


def cross_validate_by_source(
    cases: Sequence[Case], fit: Callable[[Sequence[Case]], Predictor]
) -> list[RowResult]:
    """Leave-one-source-out: for each source (`Case.source`: one document, whatever its locale
    or commit), `fit` gets every case of the other sources and returns a predictor, which is
    evaluated on the held-out source's cases. Results come back in the order of `cases` (ready
    for `summarize`). No fitting happens here: `fit` is the calibration's."""
    by_source: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        by_source.setdefault(case.source, []).append(index)
    out: list[RowResult | None] = [None] * len(cases)
    for source, indices in by_source.items():
        predictor = fit([c for c in cases if c.source != source])
        held_out = [cases[i] for i in indices]
        for index, result in zip(indices, evaluate(held_out, predictor), strict=True):
            out[index] = result
    return [r for r in out if r is not None]
