"""One point of a serving curve: a decode step with chunked prefill, speculation, TTFT, $."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .errors import EngineInputError
from .estimate import estimate
from .results import Estimate, Throughput
from .serving_inputs import expected_tokens_per_step
from .serving_results import ServingPoint
from .serving_traffic import (
    STEADY,
    Traffic,
    prefill_room_s,
    request_times,
    turnover_prefill_s,
)
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .token_budget import mixes_prefill, token_budget


def _step_with_prefill(t: Throughput, prefill_s: float, weight_read_s: float) -> float:
    """Decode step time when `prefill_s` of prefill compute rides in the same step.

    Chunked prefill (Sarathi-Serve) fuses prompt chunks with the decode batch in one pass: in
    the matmuls their compute adds to the decode compute and hides under the weight reads
    while those are the longer part. The KV reads of decode attention run in their own
    kernels and hide nothing, so the headroom is the weight-read time (`weight_read_s`, a
    batch-1 step's memory time) less the decode compute.
    """
    headroom = max(0.0, min(weight_read_s, t.decode_memory_s) - t.decode_compute_s)
    return t.decode_step_s + max(0.0, prefill_s - headroom)


# What computes one point: engine.estimate's signature.
Estimator = Callable[[BuildSpec, ModelSpec, Workload, CostAssumptions], Estimate]


@dataclass(frozen=True, slots=True)
class Context:
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
    # The plan's estimator: engine.estimate, or an expert-parallel plan's (expert_parallel.py).
    estimator: Estimator = estimate
    # Seconds a replica's decode step spends reading weights (a batch-1 step's memory time).
    weight_read_s: float = 0.0
    # Decode speed is read at the mean KV length over an answer, input + output / 2 (the memory
    # fit reserves the whole request, `base.context_tokens`); None: at base.context_tokens.
    speed_context_tokens: int | None = None
    # Prompt chunks share a pass with the decode batch (token_budget.mixes_prefill); False:
    # prefill runs in passes of its own, which hide nothing under the decode's weight reads.
    mixed_prefill: bool = True


def plain_context(build: BuildSpec, model: ModelSpec, workload: Workload, est: Estimate,
                  output_tokens: int, costs: CostAssumptions, single: Estimate) -> Context:
    """The context of a request stream without speculation on `est`'s plan (a published
    serving run: its prompt is `workload.prompt_tokens`); `single` is the same run at batch 1."""
    return Context(
        build=build, model=model, base=workload, costs=costs,
        input_tokens=workload.prompt_tokens, output_tokens=output_tokens,
        chunk_tokens=token_budget(est.plan.runtime, workload),
        acceptance=0.0, draft_tokens=0, kind="none", draft_model=None,
        weight_read_s=weight_read_s(single),
        mixed_prefill=mixes_prefill(est.plan.runtime, workload),
    )


def weight_read_s(single: Estimate) -> float:
    """The weight-read seconds of a decode step, from a batch-1 estimate (0: it does not fit)."""
    t = single.throughput
    return 0.0 if t is None else t.decode_memory_s


def estimate_at(ctx: Context, batch: int) -> Estimate:
    """The engine's estimate of the curve's plan at `batch` concurrent requests (memory fit)."""
    return ctx.estimator(ctx.build, ctx.model, replace(ctx.base, batch=batch), ctx.costs)


def speed_estimate(ctx: Context, est: Estimate, batch: int) -> Estimate:
    """The estimate whose speed a point quotes: `est` (which fits) re-read at the mean KV
    length. Builds of parts keep `est`: their placement depends on the KV length reserved."""
    mean = ctx.speed_context_tokens
    if mean is None or mean == ctx.base.context_tokens or est.placement is not None:
        return est
    wl = replace(ctx.base, batch=batch, context_tokens=mean)
    at_mean = ctx.estimator(ctx.build, ctx.model, wl, ctx.costs)
    return at_mean if at_mean.throughput is not None else est


def _verify_step(ctx: Context, batch: int, plain: Throughput) -> Throughput:
    """Decode-step parts of a verify pass: k+1 tokens per sequence in one forward pass.

    Evaluated as batch x (k+1) sequences at context / (k+1): the same KV bytes read, (k+1)x the
    matmul FLOPs and all-reduce bytes, and the distinct experts k+1 tokens per sequence touch.
    """
    width = ctx.draft_tokens + 1
    context = -(-(ctx.speed_context_tokens or ctx.base.context_tokens) // width)
    wl = replace(ctx.base, batch=batch * width, context_tokens=context,
                 prompt_tokens=min(ctx.base.prompt_tokens, context))
    est = ctx.estimator(ctx.build, ctx.model, wl, ctx.costs)
    if est.throughput is not None:
        return est.throughput
    # Out of memory at the widened batch (activations): scale compute by k+1 instead.
    comp = plain.decode_compute_s * width
    step = plain.decode_step_s - max(plain.decode_memory_s, plain.decode_compute_s)
    return replace(plain, decode_compute_s=comp,
                   decode_step_s=step + max(plain.decode_memory_s, comp))


def _draft_seconds(ctx: Context, batch: int, plain: Throughput) -> float:
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


def shared_prefill_s(t: Throughput) -> float:
    """Prefill seconds of one prompt when the runtime packs it with others into a pass."""
    packed = t.packed_prefill_s
    own = t.time_to_first_token_s
    return own if packed is None else min(own, packed)


def serving_point(
    ctx: Context, est: Estimate, concurrency: int, traffic: Traffic = STEADY
) -> tuple[ServingPoint, float]:
    """The serving figures at one concurrency (`size` adds the wait for a slot under a request
    rate), and the inter-token latency without speculation, in ms. `est` is the estimate at
    this concurrency that fits; its speed is read at the mean KV length (speed_estimate)."""
    est = speed_estimate(ctx, est, concurrency)
    t = est.throughput
    assert t is not None
    b = t.batch_per_replica
    if ctx.kind == "none":
        gain = 1.0
        step_core = t
        draft_s = 0.0
    else:
        gain = expected_tokens_per_step(ctx.acceptance, ctx.draft_tokens)
        step_core = _verify_step(ctx, concurrency, t)
        draft_s = _draft_seconds(ctx, concurrency, t)
    shared = shared_prefill_s(t)
    # Prefill in passes of its own stalls the decode batch for all of its time.
    hidden_under = ctx.weight_read_s if ctx.mixed_prefill else 0.0
    times = request_times(
        lambda x: _step_with_prefill(step_core, x, hidden_under) + draft_s,
        prompt_tokens=ctx.input_tokens, output_tokens=ctx.output_tokens,
        chunk_tokens=ctx.chunk_tokens, prefill_rate=t.prefill_tokens_per_s,
        shared_prefill_s=shared, batch=b, gain=gain, traffic=traffic,
        token_budget=ctx.chunk_tokens, prefill_pass_tokens=ctx.chunk_tokens,
    )
    plain_prefill = min(turnover_prefill_s(b, 1.0, shared, ctx.output_tokens),
                        prefill_room_s(ctx.chunk_tokens, b, ctx.input_tokens, shared))
    plain_step = _step_with_prefill(t, plain_prefill, hidden_under)
    itl = times.itl_s
    out = max(1, ctx.output_tokens)
    requests = concurrency / times.slot_s
    out_tps = requests * out
    in_tps = requests * ctx.input_tokens
    # Every slot prefills one prompt per cycle, its own included: counting only the others'
    # prompts riding in its decode steps gave prompts no share at all with one user.
    prefill_share = min(1.0, b * shared / times.slot_s)
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
        ttft_s=times.ttft_s,
        itl_ms=itl * 1e3,
        usd_per_million_input_tokens=usd_in,
        usd_per_million_output_tokens=usd_out,
        requests_per_s=requests,
        input_tokens_per_s=in_tps,
        prefill_share=prefill_share,
        queue_wait_s=times.queue_wait_s,
        tokens_per_step=gain,
        bottleneck=step_core.bottleneck,
        e2e_latency_s=times.e2e_s,
    )
    return point, plain_step * 1e3
