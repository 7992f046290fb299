"""The engine's entry point: fit, plan, speed, cost, verdict, findings, assumptions."""

from __future__ import annotations

from types import MappingProxyType

from .cost import cost_figures
from .plan import Need, Prepared, candidate_splits, kv_share, need_per_accel, prepare
from .precision import PRECISIONS, rule_of_thumb_gb
from .prep import GB, peak_flops, validate
from .results import (
    Estimate,
    Finding,
    MemoryBreakdown,
    ParallelPlan,
    Throughput,
    TrainingFigures,
)
from .runtime import (
    MLA_FIXED_S_PER_LAYER,
    MOE_FIXED_S_PER_LAYER,
    RUNTIMES,
    UNIFIED_USABLE_FRACTION,
)
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .speed import throughput
from .tiers import derive_tier
from .training import training_figures

_DEFAULT_COSTS = CostAssumptions()

# Fixed wording, built once; the per-call ones are added in _assumptions.
_BASE_ASSUMPTIONS = (
    "GB = 1e9 bytes; bandwidths per direction",
    "Fit is judged per accelerator with whole layers per pipeline stage; memory that is not "
    "pooled is never summed",
    "Decode step = max(bytes read / (bandwidth x efficiency), FLOPs / (peak x efficiency)) "
    "+ all-reduce and pipeline-hop time + fixed per-layer and per-step costs",
    "MoE decode reads E x (1 - (1 - k/E)^batch) distinct experts per layer (uniform routing)",
    f"Each MoE layer adds {MOE_FIXED_S_PER_LAYER * 1e6:g} µs and each MLA layer "
    f"{MLA_FIXED_S_PER_LAYER * 1e6:g} µs of fixed kernel time per forward pass (routing, "
    "dispatch/combine, absorbed-attention kernels); no speculative decoding / MTP",
    "Prefill time is for one prompt of prompt_tokens; time to first token excludes queueing",
)


def _fmt(gb: float) -> str:
    return f"{gb:,.0f}" if gb >= 10 else f"{gb:,.1f}"


def _plan_description(tp: int, pp: int, dp: int, ep: int, lps: int, build: BuildSpec) -> str:
    parts = []
    if tp > 1:
        parts.append(f"tensor parallel {tp}")
    if pp > 1:
        parts.append(f"pipeline {pp} stages of {lps} layers")
    if ep > 1:
        parts.append(f"experts spread over {ep}")
    if dp > 1:
        parts.append(f"{dp} data-parallel replicas")
    if not parts:
        return f"one {build.accelerator.name}"
    return ", ".join(parts)


def _search(
    p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload
) -> tuple[bool, int, int, int, Need]:
    n = build.accelerator_count
    usable = p.usable_per_accel
    last: tuple[int, int, int, Need] | None = None
    for tp, pp in candidate_splits(build, model, workload):
        dp = max(1, n // (tp * pp))
        need = need_per_accel(p, model, build, workload, tp, pp, dp)
        last = (tp, pp, dp, need)
        if need.total <= usable:
            return True, tp, pp, dp, need
    if last is None:  # no candidate at all (cannot happen after validation); one accelerator
        need = need_per_accel(p, model, build, workload, 1, 1, n)
        return False, 1, 1, n, need
    tp, pp, dp, need = last
    return False, tp, pp, dp, need


def _max_context(
    p: Prepared, model: ModelSpec, workload: Workload, tp: int, pp: int, dp: int, need: Need
) -> int | None:
    """Largest context_tokens that fits at the workload's batch (closed form)."""
    free = p.usable_per_accel - (need.weights + need.activations + need.overhead)
    if free <= 0:
        return 0
    layers = model.num_hidden_layers
    frac = -(-layers // pp) / layers
    batch_r = -(-workload.batch // dp)
    a = batch_r * p.kv_token_layer_bytes * kv_share(model, tp) * frac
    cap = model.max_position_embeddings
    if a <= 0:
        return cap
    lw, lf, w = p.windowed_layers, p.full_layers, p.window
    if lw and (lf + lw) * w * a >= free:
        tokens = free / (a * (lf + lw))
    elif lw:
        if lf == 0:
            return cap  # every layer is windowed: the cache stops growing at the window
        tokens = (free - a * lw * w) / (a * lf)
    else:
        tokens = free / (a * lf)
    result = int(tokens)
    return min(result, cap) if cap else result


def _max_batch(p: Prepared, model: ModelSpec, tp: int, pp: int, dp: int, need: Need) -> int:
    """Most concurrent sequences at context_tokens over all replicas (closed form)."""
    free = p.usable_per_accel - (need.weights + need.activations + need.overhead)
    if free <= 0:
        return 0
    frac = -(-model.num_hidden_layers // pp) / model.num_hidden_layers
    per_seq = p.kv_seq_bytes * frac * kv_share(model, tp)
    if per_seq <= 0:
        return 0
    return int(free // per_seq) * dp


def _verdict(
    fits: bool, build: BuildSpec, mem: MemoryBreakdown, tp: int, pp: int, need_accel: float
) -> str:
    n = build.accelerator_count
    size = _fmt(build.accelerator.memory_gb)
    total_raw = _fmt(mem.build_memory_gb)
    if fits:
        return (
            f"Yes — {_fmt(mem.available_total_gb)} GB usable of {total_raw} GB, needs "
            f"{_fmt(mem.total_gb)} GB, {_fmt(mem.spare_gb)} GB to spare"
        )
    if n > 1 and not build.memory_pooled:
        where = f"{total_raw} GB total across {n} isolated {size} GB cards"
    elif n > 1:
        where = f"{total_raw} GB total across {n} × {size} GB {build.accelerator.name}"
    else:
        where = f"{size} GB on one {build.accelerator.name}"
    if mem.total_gb > mem.available_total_gb:
        return f"No — {where}; needs {_fmt(mem.total_gb)} GB"
    split = f"{pp} stages" if pp > 1 else "one stage"
    if tp > 1:
        split += f" × tensor parallel {tp}"
    return (
        f"No — {where}; split over {split} the fullest accelerator needs "
        f"{_fmt(need_accel / GB)} GB of {_fmt(mem.available_per_accelerator_gb)} GB usable"
    )


def _findings(
    p: Prepared,
    fits: bool,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    tp: int,
    pp: int,
    mem: MemoryBreakdown,
    tput: Throughput | None,
    max_ctx: int | None,
) -> tuple[Finding, ...]:
    out: list[Finding] = []
    if not fits:
        out.append(
            Finding(
                "blocker",
                f"Does not fit: needs {_fmt(mem.total_gb)} GB, "
                f"{_fmt(mem.available_total_gb)} GB usable",
            )
        )
    if (
        build.nodes > 1
        and build.inter_node_link.kind == "none"
        and tp * pp > build.accelerators_per_node
    ):
        out.append(Finding("blocker", "The split spans nodes but the build has no inter-node link"))
    compute = p.precision.compute
    _, used = peak_flops(build, compute)
    if compute in ("fp8", "fp4", "int8") and used != compute:
        out.append(
            Finding(
                "caution",
                f"{build.accelerator.name} has no {compute.upper()} tensor rate: "
                f"weights are stored at {p.precision.name} but compute runs at "
                f"{used.upper()}",
            )
        )
    if p.precision.family == "gguf" and workload.runtime not in ("llama.cpp", "ollama"):
        out.append(
            Finding(
                "caution",
                "GGUF formats are native to llama.cpp; other runtimes support them partially",
            )
        )
    if (
        tp > 1
        and build.intra_node_link.kind in ("pcie", "none")
        and tp <= build.accelerators_per_node
    ):
        out.append(
            Finding(
                "caution",
                f"Tensor parallel {tp} over {build.intra_node_link.kind}: "
                "two all-reduces per layer cross a slow link",
            )
        )
    if tp > 1 and not model.kv_lora_rank and model.num_key_value_heads < tp:
        out.append(
            Finding(
                "info",
                f"{model.num_key_value_heads} KV heads over tensor parallel "
                f"{tp}: KV heads are replicated",
            )
        )
    if tp > 1 and model.kv_lora_rank:
        out.append(Finding("info", "MLA latent cache is replicated on every tensor-parallel rank"))
    if pp > 1 and workload.batch < pp and p.mode == "inference":
        out.append(
            Finding(
                "info",
                f"Pipeline of {pp} stages with batch {workload.batch}: stages "
                "run one after another, so a single stream is no faster "
                "than one accelerator",
            )
        )
    cap = model.max_position_embeddings
    if cap and workload.context_tokens > cap:
        out.append(
            Finding(
                "caution",
                f"context_tokens {workload.context_tokens:,} exceeds the model's {cap:,} positions",
            )
        )
    if fits and mem.available_per_accelerator_gb > 0:
        headroom = 1.0 - mem.per_accelerator_gb / mem.available_per_accelerator_gb
        if headroom < 0.05:
            out.append(
                Finding("caution", "Less than 5 % memory headroom on the fullest accelerator")
            )
    if build.accelerator.memory_kind == "unified" and workload.memory_utilization is None:
        out.append(
            Finding(
                "info",
                f"Unified memory: {UNIFIED_USABLE_FRACTION:.0%} of RAM assumed "
                "usable by the GPU (raise the limit to use more)",
            )
        )
    if tput is not None:
        fixed_share = tput.decode_fixed_s / tput.decode_step_s
        if fixed_share > 0.3:
            out.append(
                Finding(
                    "info",
                    f"Fixed per-step costs are {fixed_share:.0%} of decode "
                    "time: the model is too small to saturate bandwidth",
                )
            )
        if tput.compute_bound_batch is not None:
            out.append(
                Finding(
                    "info",
                    f"Decode turns compute-bound from about "
                    f"{tput.compute_bound_batch:,} concurrent sequences",
                )
            )
    if fits and max_ctx is not None and p.mode == "inference" and max_ctx < workload.context_tokens:
        out.append(Finding("caution", f"Only {max_ctx:,} tokens of context fit at this batch"))
    return tuple(out)


# Per-precision and per-runtime wording, built once at import (read-only mappings).
_PRECISION_TEXT = MappingProxyType(
    {
        name: f"Weights {p.name} at {p.bits_per_weight:.4g} bits/weight ({p.source})"
        for name, p in PRECISIONS.items()
    }
)
_RUNTIME_TEXT = MappingProxyType(
    {
        name: (
            f"Runtime {rt.name}: {rt.overhead_gb:g} GB overhead per accelerator, bandwidth "
            f"efficiency {rt.bandwidth_efficiency:.0%}, prefill compute efficiency "
            f"{rt.compute_efficiency:.0%}, decode compute efficiency "
            f"{rt.decode_compute_efficiency:.0%}, fixed {rt.fixed_s_per_layer * 1e6:g} µs/layer + "
            f"{rt.fixed_s_per_step * 1e3:g} ms/step"
        )
        for name, rt in RUNTIMES.items()
    }
)


# Assumption tuples repeat for every build of a sweep: memoise them (bounded, frozen keys).
_ASSUMPTIONS_CACHE: dict[tuple[str, str, str, CostAssumptions, float], tuple[str, ...]] = {}
_ASSUMPTIONS_CACHE_MAX = 256


def _assumptions(p: Prepared, costs: CostAssumptions, util: float) -> tuple[str, ...]:
    key = (p.precision.name, p.kv_precision, p.runtime.name, costs, util)
    hit = _ASSUMPTIONS_CACHE.get(key)
    if hit is None:
        if len(_ASSUMPTIONS_CACHE) >= _ASSUMPTIONS_CACHE_MAX:
            _ASSUMPTIONS_CACHE.clear()
        hit = _ASSUMPTIONS_CACHE[key] = _assumption_texts(p, costs, util)
    return hit


def _assumption_texts(p: Prepared, costs: CostAssumptions, util: float) -> tuple[str, ...]:
    return _BASE_ASSUMPTIONS + (
        f"{_PRECISION_TEXT[p.precision.name]}; KV cache {p.kv_precision}",
        f"{_RUNTIME_TEXT[p.runtime.name]}; {util:.0%} of each accelerator's memory usable",
        f"Costs: purchase amortised over {costs.amortization_years:g} years, electricity "
        f"${costs.electricity_usd_per_kwh:g}/kWh at PUE {costs.pue:g}, utilisation "
        f"{costs.utilization:.0%}, host power +{costs.host_power_fraction:.0%} of accelerator TDP "
        "when the build's power is unknown",
    )


def estimate(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions = _DEFAULT_COSTS,
) -> Estimate:
    """Estimate fit, parallel plan, speed and cost of running `model` on `build`."""
    validate(build, model, workload, costs)
    p = prepare(build, model, workload)
    fits, tp, pp, dp, need = _search(p, model, build, workload)
    n = build.accelerator_count
    layers = model.num_hidden_layers
    lps = -(-layers // pp)
    ep = tp if model.is_moe and tp > 1 else 1
    used = tp * pp * dp if fits else tp * pp
    plan = ParallelPlan(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        data_parallel=dp if fits else 1,
        expert_parallel=ep,
        accelerators_used=min(used, n),
        layers_per_stage=lps,
        description=_plan_description(tp, pp, dp if fits else 1, ep, lps, build),
    )
    group = tp * pp
    usable = p.usable_per_accel
    weights_total = p.body_bytes + p.embed_bytes + p.head_params_bytes
    if p.mode != "inference":
        weights_total = need.weights * group if workload.zero_stage < 3 else need.weights * n
    kv_total = need.kv * group
    act_total = need.activations * group
    overhead_total = need.overhead * group
    optim_total = need.optimizer * (group * dp if workload.zero_stage >= 1 else group)
    grads_total = need.gradients * (group * dp if workload.zero_stage >= 2 else group)
    if p.mode == "training" and workload.zero_stage >= 1:
        optim_total = model.params_total * 12.0
    if p.mode == "training" and workload.zero_stage >= 2:
        grads_total = model.params_total * 2.0
    total = weights_total + kv_total + act_total + overhead_total + optim_total + grads_total
    available_total = usable * n
    util = usable / (build.accelerator.memory_gb * GB)
    memory = MemoryBreakdown(
        total_gb=total / GB,
        per_accelerator_gb=need.total / GB,
        available_per_accelerator_gb=usable / GB,
        available_total_gb=available_total / GB,
        weights_gb=weights_total / GB,
        kv_cache_gb=kv_total / GB,
        activations_gb=act_total / GB,
        overhead_gb=overhead_total / GB,
        optimizer_gb=optim_total / GB,
        gradients_gb=grads_total / GB,
        rule_of_thumb_gb=rule_of_thumb_gb(model.params_total, p.precision.name),
        spare_gb=(available_total - total) / GB,
        build_memory_gb=build.total_memory_gb,
        kv_cache_gb_per_token=p.kv_token_layer_bytes * layers / GB,
    )
    tput: Throughput | None = None
    training: TrainingFigures | None = None
    max_ctx: int | None = None
    max_batch: int | None = None
    if p.mode == "inference":
        max_ctx = _max_context(p, model, workload, tp, pp, dp, need)
        max_batch = _max_batch(p, model, tp, pp, dp, need)
        if fits:
            tput = throughput(p, model, build, workload, tp, pp, dp)
    cost = cost_figures(build, costs, tput.aggregate_decode_tokens_per_s if tput else None)
    if p.mode != "inference" and fits:
        training = training_figures(p, model, build, workload, cost)
    verdict = _verdict(fits, build, memory, tp, pp, need.total)
    findings = _findings(p, fits, model, build, workload, tp, pp, memory, tput, max_ctx)
    return Estimate(
        fits=fits,
        verdict=verdict,
        memory=memory,
        plan=plan,
        throughput=tput,
        cost=cost,
        training=training,
        findings=findings,
        assumptions=_assumptions(p, costs, util),
        max_context_tokens_that_fit=max_ctx,
        max_batch_that_fits=max_batch,
        tier=derive_tier(build),
    )
