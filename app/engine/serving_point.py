"""One point of a serving curve: a decode step with chunked prefill, speculation, TTFT, $."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .errors import EngineInputError
from .estimate import estimate
from .results import Estimate, Throughput
from .serving_inputs import expected_tokens_per_step
from .serving_results import ServingPoint
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload


def _step_with_prefill(t: Throughput, prefill_s: float) -> float:
    """Decode step time when `prefill_s` of prefill compute rides in the same step.

    Chunked prefill (Sarathi-Serve) fuses prompt chunks with the decode batch: their compute
    adds to the decode compute, and hides under the step's weight reads while decode is
    memory-bound.
    """
    roof = max(t.decode_memory_s, t.decode_compute_s)
    return t.decode_step_s - roof + max(t.decode_memory_s, t.decode_compute_s + prefill_s)


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


def estimate_at(ctx: Context, batch: int) -> Estimate:
    """The engine's estimate of the curve's plan at `batch` concurrent requests."""
    return ctx.estimator(ctx.build, ctx.model, replace(ctx.base, batch=batch), ctx.costs)


def _verify_step(ctx: Context, batch: int, plain: Throughput) -> Throughput:
    """Decode-step parts of a verify pass: k+1 tokens per sequence in one forward pass.

    Evaluated as batch x (k+1) sequences at context / (k+1): the same KV bytes read, (k+1)x the
    matmul FLOPs and all-reduce bytes, and the distinct experts k+1 tokens per sequence touch.
    """
    width = ctx.draft_tokens + 1
    context = -(-ctx.base.context_tokens // width)
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


def serving_point(ctx: Context, est: Estimate, concurrency: int) -> tuple[ServingPoint, float]:
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
