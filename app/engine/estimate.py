"""The engine's entry point: fit, plan, speed, cost, verdict, findings, assumptions."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from types import MappingProxyType

from .cost import billed_tokens_per_s, cost_figures
from .errors import EngineInputError
from .launch import launch_command, model_ref_for
from .parts import needs_parts, with_parts
from .plan import (
    Need,
    Prepared,
    check_explicit_plan,
    kv_share,
    need_per_accel,
    prepare,
    stage_counts,
    tensor_parallel_sizes,
)
from .precision import PRECISIONS, rule_of_thumb_gb
from .prep import GB, GIB, is_apple, link_for, peak_flops, usable_fraction, validate
from .results import (
    Estimate,
    FailoverCase,
    Finding,
    MemoryBreakdown,
    ParallelPlan,
    Throughput,
    TrainingFigures,
)
from .runtime import (
    MLA_FIXED_S_PER_LAYER,
    MOE_FIXED_S_PER_LAYER_LLAMA_CPP,
    MOE_FIXED_S_PER_LAYER_VLLM,
    RUNTIMES,
)
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .speed import DecodeModel, throughput
from .tiers import derive_tier
from .training import training_figures

_DEFAULT_COSTS = CostAssumptions()

# Fixed wording, built once; the per-call ones are added in _assumptions.
_BASE_ASSUMPTIONS = (
    "Capacities as vendors state them are binary (a 24 GB card holds 24 GiB = 25.77e9 "
    "bytes); every figure is shown in GB = 1e9 bytes; bandwidths per direction",
    "Fit is judged per accelerator with whole layers per pipeline stage; memory that is not "
    "pooled is never summed",
    "Decode step = max(bytes read / (bandwidth x efficiency), FLOPs / (peak x efficiency)) "
    "+ all-reduce and pipeline-hop time + fixed per-layer and per-step costs",
    "MoE decode reads E x (1 - (1 - k/E)^batch) distinct experts per layer (uniform routing)",
    f"Each MoE layer adds {MOE_FIXED_S_PER_LAYER_VLLM * 1e6:g} µs (vLLM/SGLang/TensorRT-LLM) "
    f"or {MOE_FIXED_S_PER_LAYER_LLAMA_CPP * 1e6:g} µs (llama.cpp/Ollama) and each MLA layer "
    f"{MLA_FIXED_S_PER_LAYER * 1e6:g} µs of fixed kernel time per forward pass (routing, "
    "dispatch/combine, absorbed-attention kernels); no speculative decoding / MTP",
    "Prefill time is for one prompt of prompt_tokens; time to first token excludes queueing",
    "Aggregate tokens/s counts only replicas that hold sequences; $ and J per token divide the "
    "whole build's cost and power (idle accelerators included) by generated tokens/s with each "
    "request's prefill time included",
)

# Plan search objectives, stated in every answer.
OBJECTIVE_LATENCY = "lowest latency per token for one sequence"
OBJECTIVE_AGGREGATE = "highest aggregate decode throughput for {batch} concurrent sequences"
OBJECTIVE_TRAINING = "most data-parallel replicas (fewest accelerators per replica)"


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


class _Choice:
    """The plan the search settled on."""

    __slots__ = ("fits", "tp", "pp", "dp", "need", "dm", "parts", "evaluated", "objective")

    def __init__(
        self,
        fits: bool,
        tp: int,
        pp: int,
        dp: int,
        need: Need,
        dm: DecodeModel | None,
        evaluated: int,
        objective: str,
    ) -> None:
        self.fits, self.tp, self.pp, self.dp, self.need = fits, tp, pp, dp, need
        self.dm, self.evaluated, self.objective = dm, evaluated, objective
        self.parts: tuple[float, float, float, float, float] | None = None


def _search(p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload) -> _Choice:
    """Evaluate the splits the runtime would use and keep the best that fits.

    Candidates are at most (tensor-parallel sizes <= 8) x (distinct pipeline stage sizes,
    about 2 sqrt(layers)), whatever the accelerator count, so the search is bounded.
    """
    split = p.runtime.split
    n = build.accelerator_count
    usable = p.usable_per_accel
    explicit_tp = workload.tensor_parallel
    explicit_pp = workload.pipeline_parallel
    if explicit_tp is not None or explicit_pp is not None:
        check_explicit_plan(build, model, workload, split)
    evaluated = 0
    options = candidate_options(
        split,
        build.accelerator_count,
        build.accelerators_per_node,
        build.pooled_domain_accelerators,
        model.num_attention_heads,
        model.num_key_value_heads,
        bool(model.kv_lora_rank),
        model.num_hidden_layers,
        workload.parallelism,
        explicit_tp,
        explicit_pp,
    )

    def first_fit(tp: int, pps: tuple[int, ...], replicas: bool) -> tuple[int, int, Need] | None:
        nonlocal evaluated
        for pp in pps:
            dp = max(1, n // (tp * pp)) if replicas else 1
            need = need_per_accel(p, model, build, workload, tp, pp, dp)
            evaluated += 1
            if need.total <= usable:
                return pp, dp, need
        return None

    if p.mode != "inference":
        # Training: the fewest accelerators per replica that fit (most data parallelism).
        found: tuple[int, int, int, Need] | None = None
        for tp, pps, replicas in sorted(options, key=lambda o: o[0]):
            hit = first_fit(tp, pps, replicas)
            if hit is not None and (found is None or tp * hit[0] < found[0] * found[1]):
                found = (tp, hit[0], hit[1], hit[2])
        if found is not None:
            tp, pp, dp, need = found
            return _Choice(True, tp, pp, dp, need, None, evaluated, OBJECTIVE_TRAINING)
        return _no_fit(p, model, build, workload, options, evaluated, OBJECTIVE_TRAINING)

    objective = (
        OBJECTIVE_LATENCY
        if workload.batch == 1
        else OBJECTIVE_AGGREGATE.format(batch=workload.batch)
    )
    # Lower bound of a decode step for a tensor-parallel size: the non-expert weights read at
    # tp x bandwidth plus the fixed per-pass costs (both in every candidate's step), so
    # candidates that cannot beat the best so far are skipped without a speed model.
    bw1 = build.accelerator.memory_bandwidth_gbs * 1e9 * p.bandwidth_efficiency
    fixed = p.runtime.fixed_s_per_step + p.fixed_pass_s
    floor_bytes = p.nonexpert_body_bytes + p.head_bytes
    best: _Choice | None = None
    best_step = float("inf")
    for tp, pps, replicas in options:
        if best is not None and floor_bytes / (bw1 * tp) + fixed >= best_step:
            continue
        hit = first_fit(tp, pps, replicas)
        if hit is None:
            continue
        pp, dp, need = hit
        dm = DecodeModel(p, model, build, workload, tp, pp)
        parts = dm.step(-(-workload.batch // dp))
        if parts[0] < best_step:
            best_step = parts[0]
            best = _Choice(True, tp, pp, dp, need, dm, evaluated, objective)
            best.parts = parts
    if best is not None:
        best.evaluated = evaluated
        return best
    return _no_fit(p, model, build, workload, options, evaluated, objective)


Options = tuple[tuple[int, tuple[int, ...], bool], ...]


@lru_cache(maxsize=1024)
def candidate_options(
    split: str,
    n: int,
    apn: int,
    pooled_domain: int,
    heads: int,
    kv_heads: int,
    mla: bool,
    layers: int,
    parallelism: str,
    explicit_tp: int | None,
    explicit_pp: int | None,
) -> Options:
    """(tensor-parallel size, pipeline sizes to try in order, replicas allowed) per candidate
    the runtime would consider; a pure function of the shapes, memoised."""
    if split == "single":
        return ((1, (1,), False),)
    if split == "layers":
        # llama.cpp / Ollama: every local GPU of one machine, layers split (or rows with
        # parallelism="tensor"); no automatic replicas.
        if explicit_tp is not None and explicit_tp > 1:
            return ((explicit_tp, (1,), False),)
        if explicit_pp is not None:
            return ((1, (explicit_pp,), False),)
        if parallelism == "tensor":
            return ((apn, (1,), False),)
        return ((1, (min(apn, layers),), False),)
    domain = min(n, max(apn, pooled_domain))
    if explicit_tp is not None:
        tps: tuple[int, ...] = (explicit_tp,)
    elif explicit_pp is not None or parallelism == "pipeline":
        tps = (1,)
    else:
        tps = tensor_parallel_sizes(heads, kv_heads, mla, domain) or (1,)
        if parallelism == "tensor":
            tps = tps[:1]
    if explicit_pp is not None:
        return tuple((tp, (explicit_pp,), True) for tp in tps)
    return tuple((tp, stage_counts(layers, max(1, n // tp)), True) for tp in tps)


def _no_fit(
    p: Prepared,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    options: Options,
    evaluated: int,
    objective: str,
) -> _Choice:
    """Nothing fits: report the widest split (largest tp, most stages) the runtime allows."""
    tp, pps, _ = max(options, key=lambda o: o[0] * o[1][-1])
    pp = pps[-1]
    need = need_per_accel(p, model, build, workload, tp, pp, 1)
    return _Choice(False, tp, pp, 1, need, None, evaluated + 1, objective)


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
        where = f"{n} isolated {size} GB cards ({total_raw} GB in all)"
    elif n > 1:
        where = f"{n} × {size} GB {build.accelerator.name} ({total_raw} GB in all)"
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
    mem_replicas: int = 1,
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
    if p.precision.family == "gguf" and p.runtime.name not in ("llama.cpp", "ollama"):
        out.append(
            Finding(
                "caution",
                "GGUF formats are native to llama.cpp; other runtimes support them partially",
            )
        )
    elif (
        p.mode == "inference"
        and p.precision.family != "gguf"
        and p.runtime.name in ("llama.cpp", "ollama")
        and p.precision.bits_per_weight < 16
    ):
        closest = "Q8_0" if p.precision.bits_per_weight >= 8 else "Q4_K_M"
        out.append(
            Finding(
                "caution",
                f"{p.runtime.name} runs GGUF files: {p.precision.name} weights are estimated "
                f"as given; the closest GGUF format is {closest}",
            )
        )
    if (
        tp > 1
        and build.intra_node_link.kind in ("pcie", "none")
        and tp <= build.accelerators_per_node
    ):
        kind = link_for(build, tp)[2]
        out.append(
            Finding(
                "caution",
                f"Tensor parallel {tp} over {kind}: two all-reduces per layer cross a slow link",
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
    if fits and p.mode == "inference":
        idle = build.accelerator_count - tp * pp * min(workload.batch, mem_replicas)
        if idle > 0:
            out.append(
                Finding(
                    "info",
                    f"{idle} accelerator(s) hold no sequence at batch {workload.batch}: they "
                    "add no tokens/s but still draw power and cost money",
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
        share = usable_fraction(build, workload, p.runtime)
        how = (
            "macOS default wired limit; raise it with sysctl iogpu.wired_limit_mb and set "
            "memory_utilization"
            if is_apple(build)
            else "the platform's GPU allocation; set memory_utilization to override"
        )
        out.append(
            Finding("info", f"Unified memory: {share:.0%} of RAM assumed usable by the GPU ({how})")
        )
    if tput is not None:
        fixed_share = tput.decode_fixed_s / tput.decode_step_s
        if fixed_share > 0.3:
            out.append(
                Finding(
                    "info",
                    f"Fixed per-layer and per-step costs (kernel launches, MoE routing, "
                    f"scheduling) are {fixed_share:.0%} of each decode step",
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


def _node_usage(build: BuildSpec, group: int, replicas: int) -> tuple[int, str]:
    """(nodes used, how) for replicas of `group` accelerators each."""
    apn = build.accelerators_per_node
    if build.nodes == 1:
        return 1, "single node"
    nodes = min(build.nodes, -(-(group * replicas) // apn))
    if group > apn:
        return nodes, "spread over nodes"
    return nodes, "replicas per node"


class _Layout:
    """How the chosen split sits on the build: replicas, experts, nodes, in words."""

    __slots__ = ("dp", "lps", "ep", "group", "active", "nodes_used", "node_usage", "description")

    def __init__(
        self, choice: _Choice, model: ModelSpec, build: BuildSpec, workload: Workload, mode: str
    ) -> None:
        tp, pp = choice.tp, choice.pp
        self.dp = choice.dp if choice.fits else 1
        self.lps = -(-model.num_hidden_layers // pp)
        self.ep = tp if model.is_moe and tp > 1 else 1
        self.group = tp * pp
        # Replicas that hold sequences: at batch 1 one replica works and the others idle.
        self.active = min(self.dp, workload.batch) if mode == "inference" else self.dp
        self.nodes_used, self.node_usage = _node_usage(build, self.group, self.active)
        description = _plan_description(tp, pp, self.active, self.ep, self.lps, build)
        if self.node_usage == "spread over nodes":
            description += f", model spread over {self.nodes_used} nodes"
        elif self.node_usage == "replicas per node" and self.active > 1:
            description += f" on {self.nodes_used} nodes"
        self.description = description


def estimate(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions = _DEFAULT_COSTS,
    *,
    model_ref: str | None = None,
) -> Estimate:
    """Estimate fit, parallel plan, speed and cost of running `model` on `build`.

    `model_ref` (a Hugging Face repository id) names the weights in the launch command; by
    default a slug of the model's name. Mixed cards and host-RAM offload are re-derived by
    engine/parts.py from the estimate of the build's first card kind.
    """
    result = _estimate(build, model, workload, costs, model_ref=model_ref)
    if not needs_parts(build, workload, result):
        return result
    work = workload
    if workload.runtime is None and not result.fits and build.host is not None:
        # Offloading is what llama.cpp does (-ngl / --n-cpu-moe); vLLM would stream weights.
        work = replace(workload, runtime="llama.cpp")
    single = replace(build, groups=(), host=None) if build.is_mixed else build
    if single is not build or work is not workload:
        result = _estimate(single, model, work, costs, model_ref=model_ref)
    return with_parts(build, model, work, costs, result, prepare(single, model, work))


def _estimate(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    *,
    model_ref: str | None,
) -> Estimate:
    """The estimate for a build of one card kind, everything in accelerator memory."""
    validate(build, model, workload, costs)
    p = prepare(build, model, workload)
    choice = _search(p, model, build, workload)
    fits, tp, pp, need = choice.fits, choice.tp, choice.pp, choice.need
    layout = _Layout(choice, model, build, workload, p.mode)
    dp, ep, group, active = layout.dp, layout.ep, layout.group, layout.active
    n = build.accelerator_count
    layers = model.num_hidden_layers
    inference = p.mode == "inference"
    runtime = p.runtime.name
    usable = p.usable_per_accel
    util = usable / (build.accelerator.memory_gb * GIB)
    command = launch_command(
        runtime=runtime,
        model_ref=model_ref_for(model_ref or model.name, runtime, workload.precision),
        build=build,
        workload=workload,
        tp=tp,
        pp=pp,
        replicas=active,
        expert_parallel=ep > 1,
        memory_utilization=util,
        kv_precision=p.kv_precision,
    )
    plan = ParallelPlan(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        data_parallel=dp,
        expert_parallel=ep,
        accelerators_used=min(group * dp, n),  # occupied by the plan, idle replicas too
        layers_per_stage=layout.lps,
        description=layout.description,
        runtime=runtime,
        objective=choice.objective,
        launch_command=command,
        replicas_active=active,
        nodes_used=layout.nodes_used,
        node_usage=layout.node_usage,
        plans_evaluated=choice.evaluated,
    )
    weights_total = p.body_bytes + p.embed_bytes + p.head_params_bytes
    if not inference:
        weights_total = need.weights * group if workload.zero_stage < 3 else need.weights * n
    kv_total = need.kv * group
    act_total = need.activations * group
    overhead_total = need.overhead * group
    optim_total = need.optimizer * (group * dp if workload.zero_stage >= 1 else group)
    grads_total = need.gradients * group
    if p.mode == "training" and workload.zero_stage >= 1:
        optim_total = model.params_total * 12.0
    total = weights_total + kv_total + act_total + overhead_total + optim_total + grads_total
    available_total = usable * n
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
        # Spare: usable memory that no running replica uses.
        spare_gb=(available_total - need.total * group * (active if fits else 1)) / GB,
        build_memory_gb=build.total_memory_gb * GIB / GB,
        kv_cache_gb_per_token=p.kv_token_layer_bytes * layers / GB,
    )
    tput: Throughput | None = None
    training: TrainingFigures | None = None
    max_ctx: int | None = None
    max_batch: int | None = None
    billed: float | None = None
    if inference:
        max_ctx = _max_context(p, model, workload, tp, pp, dp, need)
        max_batch = _max_batch(p, model, tp, pp, dp, need)
        if fits:
            tput = throughput(p, model, build, workload, tp, pp, dp, choice.dm, choice.parts)
            billed = billed_tokens_per_s(
                per_sequence=tput.decode_tokens_per_s,
                batch=workload.batch,
                batch_per_replica=tput.batch_per_replica,
                ttft_s=tput.time_to_first_token_s,
                generated=max(1, workload.context_tokens - workload.prompt_tokens),
            )
    cost = cost_figures(build, costs, billed)
    if not inference and fits:
        training = training_figures(p, model, build, workload, cost, tp, pp, dp)
    verdict = _verdict(fits, build, memory, tp, pp, need.total)
    findings = _findings(p, fits, model, build, workload, tp, pp, memory, tput, max_ctx, dp)
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
        runtime=runtime,
    )


def _failover_case(
    lost: str, build: BuildSpec | None, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> FailoverCase:
    if build is None:
        return FailoverCase(lost, 0, False, None, None, "nothing left to run on")
    try:
        validate(build, model, workload, costs)
        p = prepare(build, model, workload)
        choice = _search(p, model, build, workload)
    except EngineInputError as exc:  # an explicit split the smaller build cannot hold
        return FailoverCase(lost, build.accelerator_count, False, None, None, exc.reason)
    if not choice.fits:
        # The verdict needs the whole memory breakdown: the full estimate says it.
        est = estimate(build, model, workload, costs)
        return FailoverCase(lost, build.accelerator_count, False, None, None, est.verdict)
    # A case reads only the fit, the decode rate and the plan's description, so it stops after
    # the plan search (which computed the decode step) instead of running the whole estimate:
    # the same figures as estimate()'s throughput (per sequence = 1 / step, aggregate = per
    # sequence x batch), without prefill, costs, findings and texts nobody reads.
    per_seq: float | None = None
    aggregate: float | None = None
    if p.mode == "inference" and choice.parts is not None:
        per_seq = 1.0 / choice.parts[0]
        aggregate = per_seq * workload.batch
    layout = _Layout(choice, model, build, workload, p.mode)
    return FailoverCase(
        lost, build.accelerator_count, True, per_seq, aggregate, layout.description
    )


def failover(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions = _DEFAULT_COSTS,
) -> tuple[FailoverCase, ...]:
    """Fit and speed after losing one accelerator, and after losing one node (N-1).

    In a multi-node build a failed accelerator takes its node's share of the split with it
    (tensor-parallel groups do not re-form over a partial node), so both cases run on N-1
    nodes; in one node the runtime restarts on the remaining cards.
    """
    cases = []
    if build.nodes > 1:
        smaller: BuildSpec | None = replace(build, nodes=build.nodes - 1)
        cases.append(_failover_case("one accelerator", smaller, model, workload, costs))
        cases.append(_failover_case("one node", smaller, model, workload, costs))
        return tuple(cases)
    apn = build.accelerators_per_node
    smaller = None
    if apn > 1:
        smaller = replace(
            build,
            accelerators_per_node=apn - 1,
            scale_up_domain_accelerators=None
            if build.scale_up_domain_accelerators is None
            else min(build.scale_up_domain_accelerators, apn - 1),
        )
        if build.groups:
            # A mixed node loses one card of its last group (the groups must keep summing up).
            *rest, last = build.groups
            left = (*rest, replace(last, count_per_node=last.count_per_node - 1))
            left = tuple(g for g in left if g.count_per_node > 0)
            smaller = replace(smaller, groups=left, accelerator=left[0].accelerator)
    cases.append(_failover_case("one accelerator", smaller, model, workload, costs))
    return tuple(cases)
