"""Predictors of a case's figure (the engine, the naive roofline), errors, cross-validation."""

import math
from collections.abc import Callable, Iterable, Sequence

from app.engine import PRECISIONS, BuildSpec, CostAssumptions, Estimate, ModelSpec, Workload
from app.errors import DomainError
from app.services.cache import ValueCache
from app.services.estimates import run_engine

from .groups import FIT_METRIC, Case, Predicted, RowResult

# Engine runs by input value (the same key space as estimates.ENGINE_RESULTS; ~1,000 rows).
PREDICTIONS = ValueCache(max_entries=5_000)


def serving_figure(
    metric: str, *, ttft_s: float, step_s: float, batch: int, output_tokens: int
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
    request these are ttft_s, ttft_s + output x step_s and step_s."""
    out = max(1, output_tokens)
    cycle = batch * ttft_s + out * step_s
    first_token = ttft_s * (batch + 1) / 2.0
    if metric == "ttft_s":
        return first_token
    if metric == "itl_ms":
        if output_tokens <= 0:  # no output length published: no turnover to spread
            return step_s * 1000.0
        return (cycle - first_token) / out * 1000.0
    if metric == "e2e_latency_s":
        return cycle
    if metric == "output_tokens_per_s_total":
        return batch * out / cycle
    raise ValueError(f"not a serving metric: {metric}")


def estimate_for(build: BuildSpec, model: ModelSpec, workload: Workload) -> Estimate:
    """The engine's estimate for these inputs, memoised by value."""
    return PREDICTIONS.get(
        (build, model, workload), lambda: run_engine(build, model, workload, CostAssumptions())
    )


def _engine_estimate(case: Case) -> Estimate:
    return estimate_for(case.build, case.model, case.workload)


def engine_predictor(case: Case) -> Predicted:
    """What app.engine.estimate says for the case (None: it says the model does not fit)."""
    return figure_of(case, _engine_estimate(case))


def uncached_engine_predictor(case: Case) -> Predicted:
    """engine_predictor without the memo: for a calibration evaluating candidate constants."""
    return figure_of(case, run_engine(case.build, case.model, case.workload, CostAssumptions()))


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
    figure = serving_figure(
        metric,
        ttft_s=t.time_to_first_token_s,
        step_s=t.decode_step_s,
        batch=t.batch_per_replica,
        output_tokens=case.output_tokens,
    )
    # Throughput over all data-parallel replicas; latencies are per request.
    return figure * est.plan.data_parallel if metric == "output_tokens_per_s_total" else figure


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
