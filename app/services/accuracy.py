"""How close the engine comes to published measurements, beside a naive roofline.

Contract (callers: the /accuracy page and its JSON twin, build and model pages, benchmarks):
- `measurement_cases(snap) -> Cases`: every catalog measurement resolved into engine inputs
  (BuildSpec, ModelSpec, Workload, built with the helpers of app.services.estimates), or skipped
  with the reason (mixed GPUs, CPU offload, a runtime or precision the engine does not model).
- `evaluate(cases, predictor) -> list[RowResult]`: a predictor's figure and error for each case.
  A predictor is any `Callable[[Case], Predicted]`; `engine_predictor` runs `app.engine.estimate`,
  `roofline_predictor` the naive roofline. A calibration can fit constants on the cases whose
  `source_url` differs from one source and evaluate on that source (leave-one-source-out).
- `summarize(engine, roofline) -> list[GroupSummary]`: per metric x runtime x device class,
  rows, median and p90 absolute relative error for both; fit facts as agreement counts.
- `accuracy_report(snap) -> dict`: the page's whole content, memoised per catalog version.
- `prediction_for(snap, row) -> RowResult | None` and `group_note(snap, ...)`: what build and
  model pages and estimates show.

Error of a figure: |predicted - measured| / measured. A speed the engine cannot give because it
says the model does not fit counts as a 100 % miss (the run was measured, so it did fit).
"""

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from app.caching import Snapshot, ValueCache
from app.engine import (
    PRECISIONS,
    RUNTIMES,
    BuildSpec,
    CostAssumptions,
    Estimate,
    ModelSpec,
    Workload,
)
from app.engine.prep import accelerator_class, resolve_runtime
from app.engine.runtime import DEVICE_CLASSES as ENGINE_DEVICE_CLASSES
from app.engine.runtime import device_class
from app.errors import DomainError
from app.models import METRIC_UNITS
from app.schemas.build import HostIn, InterNodeLinkIn, IntraNodeLinkIn
from app.schemas.estimate import EstimateRequest, WorkloadIn
from app.schemas.inline import InlineAccelerator, InlineAcceleratorGroup, InlineBuild
from app.schemas.measurement import MeasurementIn
from app.services.accelerators import accelerator_rows
from app.services.build_rows import build_rows, find_build
from app.services.engine_runs import inline_build_spec, run_engine, workload_spec
from app.services.measurements import MeasurementRow, measurement_rows
from app.services.model_profiles import model_profile_rows

# Runs on mixed cards or with weights in host RAM form their own group (issue 14).
PARTS_CLASS = "mixed cards / CPU offload"
DEVICE_CLASSES = (*ENGINE_DEVICE_CLASSES, PARTS_CLASS)
SPEED_METRICS = (
    "decode_tokens_per_s",
    "prefill_tokens_per_s",
    "ttft_s",
    "itl_ms",
    "e2e_latency_s",
    "output_tokens_per_s_total",
)
FIT_METRIC = "out_of_memory"
# Figures of a serving benchmark: one published without batch or concurrency is a run with an
# unbounded request rate (vllm bench serve --request-rate inf), i.e. at the largest batch.
SERVING_METRICS = ("ttft_s", "itl_ms", "e2e_latency_s", "output_tokens_per_s_total")
METRIC_LABELS = {
    "decode_tokens_per_s": "decode tokens/s",
    "prefill_tokens_per_s": "prefill tokens/s",
    "ttft_s": "time to first token",
    "itl_ms": "inter-token latency",
    "e2e_latency_s": "end-to-end latency",
    "output_tokens_per_s_total": "serving output tokens/s",
    "out_of_memory": "fits or not",
}
# Names sources use for one of the engine's formats (llama.cpp writes f16; AWQ and GPTQ
# checkpoints are the engine's int4 family). Formats without an exact counterpart stay unmodelled.
PRECISION_ALIASES = {"f16": "fp16", "f32": "fp32", "int4-awq": "int4", "int4-gptq": "int4"}
# llama-bench's default prompt (pp512): used for a prefill figure whose prompt is not published.
UNPUBLISHED_PROMPT_TOKENS = 512
WORST_MISSES = 15
POOLED = "all"
MAX_BATCH_ATTEMPTS = 8  # runtime and device class of the by-metric table
# Engine runs by input value (the same key space as estimates.ENGINE_RESULTS; ~1,000 rows).
PREDICTIONS = ValueCache(max_entries=5_000)

Predicted = float | bool | None


@dataclass(frozen=True)
class Group:
    """What accuracy is reported by."""

    metric: str
    runtime: str
    device_class: str

    @property
    def label(self) -> str:
        """ "decode tokens/s, llama.cpp, Apple unified"."""
        if self.runtime == POOLED:
            return f"{METRIC_LABELS[self.metric]}, all runtimes and devices"
        return f"{METRIC_LABELS[self.metric]}, {self.runtime}, {self.device_class}"


@dataclass(frozen=True)
class Case:
    """One measurement with the engine inputs for the same run."""

    slug: str
    source_url: str
    source_title: str | None
    group: Group
    measured: float | bool
    build: BuildSpec
    model: ModelSpec
    workload: Workload
    output_tokens: int
    label: str


@dataclass(frozen=True)
class Skipped:
    """A measurement no prediction is made for, and why."""

    slug: str
    reason: str


@dataclass(frozen=True)
class Cases:
    """Every catalog measurement, resolved or skipped."""

    cases: tuple[Case, ...]
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True)
class RowResult:
    """A predictor's figure for one case and its error (None for fit facts)."""

    case: Case
    predicted: Predicted
    error: float | None
    agrees: bool | None = None
    note: str = ""


# ---- device class and engine inputs -----------------------------------------------------------


class _Skip(Exception):
    """A measurement the engine cannot be asked about (the message says why)."""


def _hardware(snap: Snapshot, record: MeasurementIn) -> tuple[BuildSpec, str]:
    hw = record.hardware
    host = (
        None
        if hw.host is None
        else HostIn(
            cpu=hw.host.cpu, ram_gb=hw.host.ram_gb, ram_bandwidth_gbs=hw.host.ram_bandwidth_gbs
        )
    )
    if hw.groups:
        try:
            mixed = InlineBuild(
                name=record.slug,
                nodes=hw.nodes,
                accelerators=[
                    InlineAcceleratorGroup(accelerator=g.accelerator, count=g.count)
                    for g in hw.groups
                ],
                host=host,
            )
        except ValidationError as exc:
            raise _Skip(f"hardware cannot be evaluated: {exc.errors()[0]['msg']}") from None
        return inline_build_spec(snap, mixed), PARTS_CLASS
    if record.offload and (host is None or host.ram_gb is None):
        raise _Skip("CPU offload run without the host's RAM size published")
    accelerators = accelerator_rows(snap)
    if hw.build is not None:
        row = build_rows(snap).by_slug.get(hw.build)
        if row is None:
            raise _Skip(f"build '{hw.build}' is no longer in the catalog")
        acc = accelerators[row.accelerator_slug].item
        kind = device_class(
            memory_kind=acc["memory_kind"], vendor=acc["vendor"], memory_type=acc["memory_type"]
        )
        return row.spec, kind
    spec = hw.accelerator_spec
    catalog_row = accelerators.get(str(hw.accelerator))
    accelerator: str | InlineAccelerator
    # An inline spec's memory system, for the engine's fitted constants of its device class.
    memory_system: tuple[str | None, str | None] | None = None
    if catalog_row is not None:
        # A catalog accelerator is the reviewed record: it wins over a spec carried by the row.
        acc = catalog_row.item
        accelerator = catalog_row.slug
        kind = device_class(
            memory_kind=acc["memory_kind"], vendor=acc["vendor"], memory_type=acc["memory_type"]
        )
    elif spec is not None:
        accelerator = InlineAccelerator(
            name=spec.name,
            memory_gb=spec.memory_gb,
            memory_bandwidth_gbs=spec.memory_bandwidth_gbs,
            fp16_tflops=spec.fp16_tflops,
            fp8_tflops=spec.fp8_tflops,
            int8_tops=spec.int8_tops,
            fp4_tflops=spec.fp4_tflops,
            tdp_w=spec.tdp_w,
            memory_kind="unified" if spec.memory_kind == "unified" else "discrete",
        )
        kind = device_class(memory_kind=spec.memory_kind, vendor=spec.vendor, memory_type=None)
        memory_system = (spec.vendor, "HBM" if spec.memory_kind == "hbm" else None)
    else:
        raise _Skip(f"accelerator '{hw.accelerator}' is no longer in the catalog")
    if hw.nodes > 1 and hw.inter_node_link is None:
        raise _Skip("several nodes but no inter_node_link published")
    try:
        build = InlineBuild(
            name=record.slug,
            nodes=hw.nodes,
            accelerators_per_node=hw.accelerators_per_node,
            accelerator=accelerator,
            intra_node_link=(
                None if hw.intra_node_link is None else IntraNodeLinkIn(kind=hw.intra_node_link)
            ),
            inter_node_link=(
                None if hw.inter_node_link is None else InterNodeLinkIn(kind=hw.inter_node_link)
            ),
            host=host,
        )
    except ValidationError as exc:
        raise _Skip(f"hardware cannot be evaluated: {exc.errors()[0]['msg']}") from None
    spec_out = inline_build_spec(snap, build)
    if memory_system is not None:
        vendor, memory_type = memory_system
        accelerator_out = replace(spec_out.accelerator, vendor=vendor, memory_type=memory_type)
        spec_out = replace(spec_out, accelerator=accelerator_out)
    return spec_out, PARTS_CLASS if record.offload else kind


def _workload(record: MeasurementIn) -> Workload:
    if record.precision is None:
        raise _Skip("the source does not give the precision")
    precision = PRECISION_ALIASES.get(record.precision, record.precision)
    if precision not in PRECISIONS:
        raise _Skip(f"precision '{record.precision}' is not modelled by the engine")
    if record.runtime not in RUNTIMES:
        raise _Skip(f"runtime '{record.runtime}' is not modelled by the engine")
    depth = record.context_depth_tokens or 0
    prompt = record.prompt_tokens or 0
    output = record.output_tokens or 0
    metric = record.metric
    if metric in ("prefill_tokens_per_s", "ttft_s"):
        prompt = prompt or UNPUBLISHED_PROMPT_TOKENS
        context = depth + prompt
    elif metric == FIT_METRIC:
        # The KV cache must hold the whole run; with nothing published, the API's default.
        context = depth + prompt + output or WorkloadIn.model_fields["context_tokens"].default
    else:
        # Decode is quoted at the mean context over the generated tokens.
        context = depth + prompt + output // 2
    batch = record.batch or record.concurrency or 1
    return workload_spec(
        WorkloadIn(
            precision=precision,
            context_tokens=max(1, context),
            prompt_tokens=min(prompt, max(1, context)) or None,
            batch=batch,
            runtime=record.runtime,
            tensor_parallel=record.tensor_parallel,
            pipeline_parallel=record.pipeline_parallel,
        )
    )


def _max_throughput_batch(build: BuildSpec, model: ModelSpec, workload: Workload) -> Workload:
    """A serving figure published without its batch is a maximum-throughput run: quote it at
    the largest batch the engine says fits (the same batch for every predictor). The engine's
    `max_batch_that_fits` is read at one batch and re-checked at that batch, a few times, since
    activation memory grows with the batch too."""
    fitting = workload
    candidate = _estimate(build, model, workload).max_batch_that_fits
    for _attempt in range(MAX_BATCH_ATTEMPTS):
        if candidate is None or candidate <= fitting.batch:
            break
        trial = replace(workload, batch=candidate)
        est = _estimate(build, model, trial)
        if est.fits:
            fitting = trial
            break
        candidate = est.max_batch_that_fits
    return fitting


def _case(snap: Snapshot, row: MeasurementRow) -> Case:
    record = row.record
    model = model_profile_rows(snap).get(record.model)
    if model is None:
        raise _Skip(f"model '{record.model}' is no longer in the catalog")
    build, kind = _hardware(snap, record)
    workload = _workload(record)
    if record.metric in SERVING_METRICS and not (record.prompt_tokens or record.output_tokens):
        # A dataset run (ShareGPT) quoted without its token counts: no workload to model.
        raise _Skip("serving figure without prompt or output length")
    unpublished_batch = record.batch is None and record.concurrency is None
    if record.metric in SERVING_METRICS and unpublished_batch:
        try:
            workload = _max_throughput_batch(build, model.spec, workload)
        except DomainError as exc:
            raise _Skip(f"the engine refuses the inputs: {exc.detail}") from None
    return Case(
        slug=row.slug,
        source_url=record.source_url,
        source_title=record.source_title,
        group=Group(record.metric, record.runtime, kind),
        measured=record.value,
        build=build,
        model=model.spec,
        workload=workload,
        output_tokens=record.output_tokens or 0,
        label=f"{row.item['model']} on {row.item['accelerator_name']}",
    )


def measurement_cases(snap: Snapshot) -> Cases:
    """Every measurement of the catalog as a Case, or Skipped with the reason."""

    def compute() -> Cases:
        cases, skipped = [], []
        for row in measurement_rows(snap):
            try:
                cases.append(_case(snap, row))
            except _Skip as exc:
                skipped.append(Skipped(row.slug, str(exc)))
        return Cases(tuple(cases), tuple(skipped))

    return snap.memo("measurement_cases", compute)


# ---- predictors --------------------------------------------------------------------------------


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


def _estimate(build: BuildSpec, model: ModelSpec, workload: Workload) -> Estimate:
    return PREDICTIONS.get(
        (build, model, workload), lambda: run_engine(build, model, workload, CostAssumptions())
    )


def _engine_estimate(case: Case) -> Estimate:
    return _estimate(case.build, case.model, case.workload)


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


# ---- summaries ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty sequence."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass(frozen=True)
class ErrorStats:
    """Median and 90th-percentile absolute relative error over some rows."""

    rows: int
    median: float | None
    p90: float | None

    @classmethod
    def of(cls, errors: Sequence[float]) -> "ErrorStats":
        """Stats of a list of errors (None when empty)."""
        if not errors:
            return cls(0, None, None)
        return cls(len(errors), percentile(errors, 0.5), percentile(errors, 0.9))

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "median_error": self.median, "p90_error": self.p90}


@dataclass(frozen=True)
class GroupSummary:
    """One line of the error table."""

    group: Group
    engine: ErrorStats
    roofline: ErrorStats
    fit_agreeing: int | None = None
    roofline_fit_agreeing: int | None = None

    @property
    def engine_better(self) -> bool | None:
        """True when the engine's median error is below the roofline's (fit: more verdicts
        agree); None when there is nothing to compare or both agree equally often."""
        if self.fit_agreeing is not None and self.roofline_fit_agreeing is not None:
            if self.fit_agreeing == self.roofline_fit_agreeing:
                return None
            return self.fit_agreeing > self.roofline_fit_agreeing
        if self.engine.median is None or self.roofline.median is None:
            return None
        return self.engine.median < self.roofline.median

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.group.metric,
            "runtime": self.group.runtime,
            "device_class": self.group.device_class,
            "label": self.group.label,
            "rows": self.engine.rows,
            "engine": self.engine.as_dict(),
            "naive_roofline": self.roofline.as_dict(),
            "fit_agreeing": self.fit_agreeing,
            "naive_roofline_fit_agreeing": self.roofline_fit_agreeing,
            "engine_better": self.engine_better,
        }


def _summary(group: Group, engine: list[RowResult], roofline: list[RowResult]) -> GroupSummary:
    if group.metric == FIT_METRIC:
        return GroupSummary(
            group,
            ErrorStats(len(engine), None, None),
            ErrorStats(len(roofline), None, None),
            fit_agreeing=sum(1 for r in engine if r.agrees),
            roofline_fit_agreeing=sum(1 for r in roofline if r.agrees),
        )
    return GroupSummary(
        group,
        ErrorStats.of([r.error for r in engine if r.error is not None]),
        ErrorStats.of([r.error for r in roofline if r.error is not None]),
    )


def _group_order(group: Group) -> tuple[int, str, int]:
    metrics = (*SPEED_METRICS, FIT_METRIC)
    return (metrics.index(group.metric), group.runtime, DEVICE_CLASSES.index(group.device_class))


def summarize(engine: Sequence[RowResult], roofline: Sequence[RowResult]) -> list[GroupSummary]:
    """Per metric x runtime x device class: the engine's errors beside the naive roofline's
    (both lists hold results for the same cases, in the same order)."""
    by_group: dict[Group, tuple[list[RowResult], list[RowResult]]] = {}
    for mine, naive in zip(engine, roofline, strict=True):
        pair = by_group.setdefault(mine.case.group, ([], []))
        pair[0].append(mine)
        pair[1].append(naive)
    return [_summary(g, *by_group[g]) for g in sorted(by_group, key=_group_order)]


def summarize_by_metric(
    engine: Sequence[RowResult], roofline: Sequence[RowResult]
) -> list[GroupSummary]:
    """The same table with runtime and device class pooled ("all")."""
    pooled = [
        (
            RowResult(_pooled(e.case), e.predicted, e.error, e.agrees, e.note),
            RowResult(_pooled(r.case), r.predicted, r.error, r.agrees, r.note),
        )
        for e, r in zip(engine, roofline, strict=True)
    ]
    by_metric: dict[str, tuple[list[RowResult], list[RowResult]]] = {}
    for e, r in pooled:
        pair = by_metric.setdefault(e.case.group.metric, ([], []))
        pair[0].append(e)
        pair[1].append(r)
    metrics = (*SPEED_METRICS, FIT_METRIC)
    return [_summary(Group(m, POOLED, POOLED), *by_metric[m]) for m in metrics if m in by_metric]


def _pooled(case: Case) -> Case:
    return Case(
        slug=case.slug,
        source_url=case.source_url,
        source_title=case.source_title,
        group=Group(case.group.metric, POOLED, POOLED),
        measured=case.measured,
        build=case.build,
        model=case.model,
        workload=case.workload,
        output_tokens=case.output_tokens,
        label=case.label,
    )


# ---- the report ---------------------------------------------------------------------------------


def _row_out(mine: RowResult, naive: RowResult) -> dict[str, Any]:
    case = mine.case
    return {
        "slug": case.slug,
        "label": case.label,
        "metric": case.group.metric,
        "metric_label": METRIC_LABELS[case.group.metric],
        "unit": METRIC_UNITS[case.group.metric],
        "runtime": case.group.runtime,
        "device_class": case.group.device_class,
        "measured": case.measured,
        "predicted": mine.predicted,
        "error": mine.error,
        "agrees": mine.agrees,
        "naive_roofline_predicted": naive.predicted,
        "naive_roofline_error": naive.error,
        "note": mine.note,
        "source_url": case.source_url,
        "source_title": case.source_title,
    }


def results(snap: Snapshot) -> tuple[list[RowResult], list[RowResult]]:
    """Engine and roofline results for every resolved catalog measurement."""

    def compute() -> tuple[list[RowResult], list[RowResult]]:
        cases = measurement_cases(snap).cases
        return evaluate(cases, engine_predictor), evaluate(cases, roofline_predictor)

    return snap.memo("accuracy_results", compute)


def accuracy_report(snap: Snapshot) -> dict[str, Any]:
    """The /accuracy content: tables by group and by metric, every row, the worst misses."""

    def compute() -> dict[str, Any]:
        engine, roofline = results(snap)
        cases = measurement_cases(snap)
        rows = [_row_out(e, r) for e, r in zip(engine, roofline, strict=True)]
        misses = sorted(
            (r for r in rows if r["error"] is not None), key=lambda r: (-r["error"], r["slug"])
        )
        return {
            "catalog_version": snap.version,
            "measurements": len(cases.cases) + len(cases.skipped),
            "predicted": len(cases.cases),
            "sources": len({r.item["source_url"] for r in measurement_rows(snap)}),
            "predicted_sources": len({c.source_url for c in cases.cases}),
            "groups": [s.as_dict() for s in summarize(engine, roofline)],
            "overall": [s.as_dict() for s in summarize_by_metric(engine, roofline)],
            "worst_misses": misses[:WORST_MISSES],
            "rows": rows,
            "skipped": [{"slug": s.slug, "reason": s.reason} for s in cases.skipped],
            "estimated": True,
        }

    return snap.memo("accuracy_report", compute)


def _page_rows(snap: Snapshot, rows: Iterable[MeasurementRow]) -> list[dict[str, Any]]:
    report = accuracy_report(snap)
    by_slug = {r["slug"]: r for r in report["rows"]}
    skipped = {s["slug"]: s["reason"] for s in report["skipped"]}
    out = []
    for row in rows:
        item = row.item
        found = by_slug.get(row.slug)
        out.append(
            {
                "slug": row.slug,
                "label": f"{item['model']} on {item['accelerator_name']}",
                "model": item["model"],
                "hardware": item["accelerator_name"],
                "runtime": item["runtime"],
                "precision": item["precision"],
                "batch": item["batch"] or item["concurrency"] or 1,
                "metric_label": METRIC_LABELS[item["metric"]],
                "unit": item["unit"],
                "measured": item["value"],
                "predicted": found["predicted"] if found else None,
                "error": found["error"] if found else None,
                "agrees": found["agrees"] if found else None,
                "note": found["note"] if found else skipped.get(row.slug, ""),
                "source_url": item["source_url"],
                "source_title": item["source_title"],
                "as_of": item["as_of"],
            }
        )
    return out


def measured_vs_predicted_for_build(snap: Snapshot, *, slug: str) -> list[dict[str, Any]]:
    """Measurements on this build, or on exactly its accelerators (same kind, same count), each
    with the engine's prediction for the same inputs and the error."""
    build = build_rows(snap).by_slug.get(slug)
    if build is None:
        return []
    count = build.spec.accelerator_count
    rows = [
        r
        for r in measurement_rows(snap)
        if r.item["build"] == slug
        or (
            r.item["build"] is None
            and r.item["accelerator"] == build.accelerator_slug
            and r.item["accelerator_count"] == count
        )
    ]
    return _page_rows(snap, rows)


def build_device_class(snap: Snapshot, *, slug: str) -> str | None:
    """The device class of a catalog build's accelerator (None for an unknown build)."""
    build = build_rows(snap).by_slug.get(slug)
    if build is None:
        return None
    acc = accelerator_rows(snap)[build.accelerator_slug].item
    return device_class(
        memory_kind=acc["memory_kind"], vendor=acc["vendor"], memory_type=acc["memory_type"]
    )


def accuracy_notes_for_build(snap: Snapshot, *, slug: str) -> list[str]:
    """What the measurements say of the estimates that apply to this build: one sentence per
    metric and runtime measured on its device class."""
    kind = build_device_class(snap, slug=slug)
    if kind is None:
        return []
    notes = []
    for summary in accuracy_report(snap)["groups"]:
        if summary["device_class"] != kind or summary["metric"] == FIT_METRIC:
            continue
        note = group_note(
            snap, metric=summary["metric"], runtime=summary["runtime"], device_class=kind
        )
        if note is not None:
            notes.append(note)
    return notes


def accuracy_notes_for_estimate(snap: Snapshot, request: EstimateRequest) -> list[str]:
    """What the measurements say of an estimate request's figures: one sentence per metric
    measured for its runtime on its accelerator's device class."""
    if isinstance(request.build, str):
        build = find_build(snap, request.build, field="build").spec
    else:
        build = inline_build_spec(snap, request.build)
    kind = accelerator_class(build.accelerator)
    # The runtime the engine ran (the request may leave it to the inputs).
    runtime = resolve_runtime(build, workload_spec(request.workload))
    notes = []
    for metric in SPEED_METRICS:
        note = group_note(snap, metric=metric, runtime=runtime, device_class=kind)
        if note is not None:
            notes.append(note)
    return notes


def measured_vs_predicted_for_model(snap: Snapshot, *, slug: str) -> list[dict[str, Any]]:
    """Measurements of this model, each with the engine's prediction and the error."""
    return _page_rows(snap, [r for r in measurement_rows(snap) if r.item["model"] == slug])


def group_note(snap: Snapshot, *, metric: str, runtime: str, device_class: str) -> str | None:
    """ "decode tokens/s estimates for llama.cpp on Apple unified: median error 8 % over 14
    measurements", or None when no measurement is in that group."""
    for summary in accuracy_report(snap)["groups"]:
        if (summary["metric"], summary["runtime"], summary["device_class"]) != (
            metric,
            runtime,
            device_class,
        ):
            continue
        median = summary["engine"]["median_error"]
        if median is None:
            return None
        return (
            f"{METRIC_LABELS[metric]} estimates for {runtime} on {device_class}: median error "
            f"{median:.0%} over {summary['rows']} measurements"
        )
    return None


__all__ = [
    "DEVICE_CLASSES",
    "Case",
    "Group",
    "RowResult",
    "accuracy_report",
    "cross_validate_by_source",
    "device_class",
    "engine_predictor",
    "evaluate",
    "figure_of",
    "uncached_engine_predictor",
    "accuracy_notes_for_build",
    "accuracy_notes_for_estimate",
    "measured_vs_predicted_for_build",
    "measured_vs_predicted_for_model",
    "measurement_cases",
    "roofline_predictor",
    "serving_figure",
    "summarize",
]
