"""Predictors of a case's figure (the engine, the naive roofline), errors, cross-validation."""

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from app.caching import ValueCache
from app.engine import PRECISIONS, BuildSpec, CostAssumptions, Estimate, ModelSpec, Workload
from app.errors import DomainError
from app.services.engine_runs import run_engine

from .groups import FIT_METRIC, SERVING_METRICS, Case, Predicted, RowResult

# Engine runs by input value (the same key space as estimates.ENGINE_RESULTS; ~1,000 rows).
PREDICTIONS = ValueCache(max_entries=5_000)
MAX_BATCH_ATTEMPTS = 8


def serving_figure(
    metric: str,
    *,
    ttft_s: float,
    step_s: float,
    batch: int,
    output_tokens: int,
    in_flight: float | None = None,
    packed_prefill_s: float | None = None,
    arrival: str | None = None,
    wave: float | None = None,
) -> float:
    """A serving metric from one prompt's prefill time `ttft_s` and a decode step `step_s`
    (one token for each of `batch` sequences), for a benchmark that keeps `batch` requests in
    flight (vllm bench serve --max-concurrency, SGLang bench_serving, trtllm-bench).

    In steady state the batch turns over once per cycle = batch x ttft_s + output x step_s:
    every request's prompt is prefilled (one prompt at a time, between decode steps) and every
    request decodes `output` steps. Throughput = batch x output / cycle; by Little's law each
    request lives one cycle (end-to-end); a request waits on average for (batch + 1) / 2
    prefills before its first token; the rest of its life, spread over its output tokens, is
    its inter-token latency (decode steps stalled by the other requests' prefills). With one
    request these are ttft_s, ttft_s + output x step_s and step_s.

    With more requests in flight (`in_flight`) than the `batch` the KV cache holds, the rest
    queue: throughput and ITL stay those of `batch`, and by Little's law for a closed loop each
    request lives in_flight / batch cycles, the extra ones spent waiting before its prefill.

    Short prompts share prefill passes (`packed_prefill_s` per prompt, the runtime's token
    budget per pass): the other requests' prompts cost that much each, a request's own ttft_s.

    The arrival process decides the queue ahead of a prompt: a burst (every request of a wave
    sent at once) queues it behind half the batch's prefills; in a steady closed loop the
    arrivals are spread over the cycle, so a prompt meets only its own prefill. A burst of
    `wave` requests with no cap on those in flight runs as wave / batch sub-waves, one after
    another: on average a request waits for half of the others."""
    out = max(1, output_tokens)
    shared = ttft_s if packed_prefill_s is None else min(ttft_s, packed_prefill_s)
    cycle = ttft_s + (batch - 1) * shared + out * step_s
    first_token = ttft_s if arrival == "steady" else ttft_s + shared * (batch - 1) / 2.0
    waiting = (max(in_flight or batch, batch) / batch - 1.0) * cycle
    if wave is not None and wave > batch:
        waiting = (wave / batch - 1.0) / 2.0 * cycle
    if metric == "ttft_s":
        return waiting + first_token
    if metric == "itl_ms":
        if output_tokens <= 0:  # no output length published: no turnover to spread
            return step_s * 1000.0
        return (cycle - first_token) / out * 1000.0
    if metric == "e2e_latency_s":
        return waiting + cycle
    if metric == "output_tokens_per_s_total":
        return batch * out / cycle
    raise ValueError(f"not a serving metric: {metric}")


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
    if est.throughput is None and case.group.metric in SERVING_METRICS:
        # More requests in flight than the KV cache holds: the runtime runs what fits and
        # queues the rest (serving_figure's `in_flight`).
        est = _within_capacity(case.workload, estimate) or est
    return figure_of(case, est)


def engine_predictor(case: Case) -> Predicted:
    """What app.engine.estimate says for the case (None: it says the model does not fit)."""
    return _engine_figure(case, lambda w: estimate_for(case.build, case.model, w))


def uncached_engine_predictor(case: Case) -> Predicted:
    """engine_predictor without the memo: for a calibration evaluating candidate constants."""
    return _engine_figure(case, lambda w: run_engine(case.build, case.model, w, CostAssumptions()))


def figure_of(case: Case, est: Estimate) -> Predicted:
    """The case's metric read from an engine estimate for its inputs."""
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
        return t.prefill_tokens_per_s
    replicas = est.plan.data_parallel
    figure = serving_figure(
        metric,
        ttft_s=t.time_to_first_token_s,
        step_s=t.decode_step_s,
        batch=t.batch_per_replica,
        output_tokens=case.output_tokens,
        in_flight=case.workload.batch / replicas,
        packed_prefill_s=t.packed_prefill_s,
        arrival=case.arrival,
        wave=_uncapped_wave(case, replicas),
    )
    # Throughput over all data-parallel replicas; latencies are per request.
    return figure * replicas if metric == "output_tokens_per_s_total" else figure


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
    bytes_per_weight = PRECISIONS[workload.precision].bytes_per_weight
    active = model.params_active_published or model.params_active
    total = model.params_total_published or model.params_total
    if case.group.metric == FIT_METRIC:
        return total * bytes_per_weight > build.total_memory_gb * 1e9
    step_s = active * bytes_per_weight / (count * build.accelerator.memory_bandwidth_gbs * 1e9)
    prefill = count * build.accelerator.fp16_tflops * 1e12 / (2 * active)
    metric = case.group.metric
    if metric == "decode_tokens_per_s":
        return workload.batch / step_s
    if metric == "prefill_tokens_per_s":
        return prefill
    return serving_figure(
        metric,
        ttft_s=workload.prompt_tokens / prefill,
        step_s=step_s,
        batch=workload.batch,
        output_tokens=case.output_tokens,
        arrival=case.arrival,
        wave=_uncapped_wave(case, 1),
    )


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
    """Leave-one-source-out: for each source_url, `fit` gets every case of the other sources and
    returns a predictor, which is evaluated on the held-out source's cases. Results come back
    in the order of `cases` (ready for `summarize`). No fitting happens here: `fit` is the
    calibration's."""
    by_source: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        by_source.setdefault(case.source_url, []).append(index)
    out: list[RowResult | None] = [None] * len(cases)
    for source, indices in by_source.items():
        predictor = fit([c for c in cases if c.source_url != source])
        held_out = [cases[i] for i in indices]
        for index, result in zip(indices, evaluate(held_out, predictor), strict=True):
            out[index] = result
    return [r for r in out if r is not None]
