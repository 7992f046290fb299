"""Validation and the per-call quantities every later step shares."""

from __future__ import annotations

import math

from .errors import EngineInputError
from .precision import KV_BITS, PRECISIONS, Precision
from .runtime import (
    LINK_DEFAULT_GBS,
    LINK_LATENCY_US,
    MLA_FIXED_S_PER_LAYER,
    RUNTIMES,
    UNIFIED_USABLE_BY_PLATFORM,
    Efficiency,
    RuntimeProfile,
    device_class,
)
from .runtime import efficiency as runtime_efficiency
from .specs import (
    INTER_LINK_KINDS,
    INTRA_LINK_KINDS,
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    ModelSpec,
    Workload,
)

MODES = ("inference", "training", "lora", "qlora")
PARALLELISMS = ("auto", "tensor", "pipeline")
GB = 1e9  # the unit every figure is displayed in
# Vendors state memory capacities in binary units: a "24 GB" card holds 24 GiB. Capacities are
# converted to bytes with this factor; needs are computed in bytes; both display in GB (1e9).
GIB = float(2**30)


def _positive(value: float | int | None, field: str, *, allow_none: bool = False) -> None:
    if value is None:
        if allow_none:
            return
        raise EngineInputError(field, "is required")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EngineInputError(field, f"must be a finite number, got {value!r}")
    if value <= 0:
        raise EngineInputError(field, f"must be positive, got {value}")


def _non_negative(value: float | int | None, field: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EngineInputError(field, f"must be a finite number, got {value!r}")
    if value < 0:
        raise EngineInputError(field, f"must not be negative, got {value}")


_NUM = (int, float)
_INF = float("inf")


def _fast_ok(
    build: BuildSpec, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> bool:
    """Cheap all-in-one check; the detailed checks run only when this fails."""
    acc = build.accelerator
    for v in (acc.memory_gb, acc.memory_bandwidth_gbs, acc.fp16_tflops):
        if type(v) not in _NUM or not 0 < v < _INF:
            return False
    for opt in (
        acc.fp8_tflops,
        acc.int8_tops,
        acc.fp4_tflops,
        acc.tdp_w,
        acc.price_usd,
        build.intra_node_link.bandwidth_gbs,
        build.inter_node_link.bandwidth_gbps,
        build.intra_node_link.latency_us,
        build.inter_node_link.latency_us,
        build.power_w,
        build.price_usd,
    ):
        if opt is not None and (type(opt) not in _NUM or not 0 <= opt < _INF):
            return False
    for v in (
        build.nodes,
        build.accelerators_per_node,
        model.num_hidden_layers,
        model.hidden_size,
        model.num_attention_heads,
        model.num_key_value_heads,
        model.head_dim,
        model.intermediate_size,
        model.vocab_size,
        workload.context_tokens,
        workload.prompt_tokens,
        workload.batch,
    ):
        if type(v) is not int or v < 1:
            return False
    w = workload
    return (
        acc.memory_kind in ("discrete", "unified")
        and build.intra_node_link.kind in INTRA_LINK_KINDS
        and build.inter_node_link.kind in INTER_LINK_KINDS
        and build.scale_up_domain_accelerators is None
        and model.num_attention_heads % model.num_key_value_heads == 0
        and (model.n_routed_experts == 0 or model.num_experts_per_tok <= model.n_routed_experts)
        and 0 <= model.sliding_window_layers <= model.num_hidden_layers
        and (not model.sliding_window_layers or bool(model.sliding_window))
        and w.mode in MODES
        and w.precision in PRECISIONS
        and (w.kv_cache_precision is None or w.kv_cache_precision in KV_BITS)
        and w.parallelism in PARALLELISMS
        and (w.runtime is None or w.runtime in RUNTIMES)
        and w.tensor_parallel is None
        and w.pipeline_parallel is None
        and w.memory_utilization is None
        and w.zero_stage in (0, 1, 2, 3)
        and type(w.training_tokens) is int
        and w.training_tokens >= 0
        and (w.mode not in ("lora", "qlora") or (type(w.lora_rank) is int and w.lora_rank > 0))
        and w.model_flops_utilization is None
        and type(costs.amortization_years) in _NUM
        and 0 < costs.amortization_years < _INF
        and type(costs.electricity_usd_per_kwh) in _NUM
        and 0 <= costs.electricity_usd_per_kwh < _INF
        and type(costs.pue) in _NUM
        and 1 <= costs.pue <= 3
        and type(costs.utilization) in _NUM
        and 0 < costs.utilization <= 1
        and type(costs.host_power_fraction) in _NUM
        and 0 <= costs.host_power_fraction < _INF
    )


def validate(
    build: BuildSpec, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> None:
    """Raise EngineInputError naming the first invalid field."""
    if _fast_ok(build, model, workload, costs):
        return  # the common case: every field valid; the slow path below names the culprit
    acc = build.accelerator
    _positive(acc.memory_gb, "accelerator.memory_gb")
    _positive(acc.memory_bandwidth_gbs, "accelerator.memory_bandwidth_gbs")
    _positive(acc.fp16_tflops, "accelerator.fp16_tflops")
    if acc.memory_kind not in ("discrete", "unified"):
        raise EngineInputError("accelerator.memory_kind", "must be 'discrete' or 'unified'")
    for name in ("fp8_tflops", "int8_tops", "fp4_tflops", "tdp_w", "price_usd"):
        _non_negative(getattr(acc, name), f"accelerator.{name}")
    for name in ("nodes", "accelerators_per_node"):
        value = getattr(build, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(name, f"must be a positive integer, got {value!r}")
    if build.intra_node_link.kind not in INTRA_LINK_KINDS:
        raise EngineInputError(
            "intra_node_link.kind", f"unknown link {build.intra_node_link.kind!r}"
        )
    if build.inter_node_link.kind not in INTER_LINK_KINDS:
        raise EngineInputError(
            "inter_node_link.kind", f"unknown link {build.inter_node_link.kind!r}"
        )
    _non_negative(build.intra_node_link.bandwidth_gbs, "intra_node_link.bandwidth_gbs")
    _non_negative(build.inter_node_link.bandwidth_gbps, "inter_node_link.bandwidth_gbps")
    _non_negative(build.intra_node_link.latency_us, "intra_node_link.latency_us")
    _non_negative(build.inter_node_link.latency_us, "inter_node_link.latency_us")
    if build.scale_up_domain_accelerators is not None:
        _positive(build.scale_up_domain_accelerators, "scale_up_domain_accelerators")
    _non_negative(build.power_w, "power_w")
    _non_negative(build.price_usd, "price_usd")

    for name in (
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "intermediate_size",
        "vocab_size",
    ):
        value = getattr(model, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(f"model.{name}", f"must be a positive integer, got {value!r}")
    if model.num_attention_heads % model.num_key_value_heads:
        raise EngineInputError("model.num_key_value_heads", "must divide num_attention_heads")
    if model.n_routed_experts and model.num_experts_per_tok > model.n_routed_experts:
        raise EngineInputError("model.num_experts_per_tok", "exceeds n_routed_experts")
    if model.sliding_window_layers > model.num_hidden_layers or model.sliding_window_layers < 0:
        raise EngineInputError("model.sliding_window_layers", "must be 0..num_hidden_layers")
    if model.sliding_window_layers and not model.sliding_window:
        raise EngineInputError("model.sliding_window", "required when sliding_window_layers > 0")

    if workload.mode not in MODES:
        raise EngineInputError("mode", f"must be one of {', '.join(MODES)}")
    if workload.precision not in PRECISIONS:
        raise EngineInputError(
            "precision", f"unknown precision {workload.precision!r}; known: {', '.join(PRECISIONS)}"
        )
    kv = workload.kv_cache_precision
    if kv is not None and kv not in KV_BITS:
        raise EngineInputError(
            "kv_cache_precision", f"unknown KV-cache precision {kv!r}; known: {', '.join(KV_BITS)}"
        )
    for name in ("context_tokens", "prompt_tokens", "batch"):
        value = getattr(workload, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(name, f"must be a positive integer, got {value!r}")
    if workload.parallelism not in PARALLELISMS:
        raise EngineInputError("parallelism", f"must be one of {', '.join(PARALLELISMS)}")
    if workload.runtime is not None and workload.runtime not in RUNTIMES:
        raise EngineInputError("runtime", f"unknown runtime; known: {', '.join(RUNTIMES)}")
    for name in ("tensor_parallel", "pipeline_parallel"):
        value = getattr(workload, name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise EngineInputError(name, f"must be a positive integer, got {value!r}")
    tp = workload.tensor_parallel or 1
    pp = workload.pipeline_parallel or 1
    if tp * pp > build.accelerator_count:
        raise EngineInputError(
            "tensor_parallel",
            f"{tp} x {pp} exceeds the build's {build.accelerator_count} accelerators",
        )
    if workload.memory_utilization is not None and not 0 < workload.memory_utilization <= 1:
        raise EngineInputError("memory_utilization", "must be in (0, 1]")
    if workload.zero_stage not in (0, 1, 2, 3):
        raise EngineInputError("zero_stage", "must be 0, 1, 2 or 3")
    _non_negative(workload.training_tokens, "training_tokens")
    if workload.mode in ("lora", "qlora"):
        _positive(workload.lora_rank, "lora_rank")
    mfu = workload.model_flops_utilization
    if mfu is not None and not 0 < mfu <= 1:
        raise EngineInputError("model_flops_utilization", "must be in (0, 1]")

    _positive(costs.amortization_years, "amortization_years")
    _non_negative(costs.electricity_usd_per_kwh, "electricity_usd_per_kwh")
    if not 1 <= costs.pue <= 3:
        raise EngineInputError("pue", "must be between 1 and 3")
    if not 0 < costs.utilization <= 1:
        raise EngineInputError("utilization", "must be in (0, 1]")
    _non_negative(costs.host_power_fraction, "host_power_fraction")


def default_kv_precision(precision: Precision) -> str:
    """KV-cache format used when the workload does not name one."""
    return precision.kv_default


def peak_flops(build: BuildSpec, compute: str) -> tuple[float, str]:
    """Dense tensor rate (FLOP/s) for a compute kind, falling back to FP16 when unsupported."""
    acc = build.accelerator
    if compute == "fp8" and acc.fp8_tflops:
        return acc.fp8_tflops * 1e12, "fp8"
    if compute == "int8" and acc.int8_tops:
        return acc.int8_tops * 1e12, "int8"
    if compute == "fp4":
        if acc.fp4_tflops:
            return acc.fp4_tflops * 1e12, "fp4"
        if acc.fp8_tflops:
            return acc.fp8_tflops * 1e12, "fp8"
    if compute == "fp32":
        return acc.fp16_tflops * 0.5e12, "tf32"  # TF32 tensor rate is half the FP16 rate
    return acc.fp16_tflops * 1e12, "fp16"


_PLATFORM_CACHE: dict[str, str] = {}


def unified_platform(acc: AcceleratorSpec) -> str:
    """ "apple", "gb10", "strix_halo" or "other" for a unified-memory device, from its name."""
    hit = _PLATFORM_CACHE.get(acc.name)
    if hit is None:
        name = acc.name.lower()
        if "apple" in name or name.startswith(("m1 ", "m2 ", "m3 ", "m4 ")):
            hit = "apple"
        elif "gb10" in name or "dgx spark" in name:
            hit = "gb10"
        elif "strix halo" in name or "ryzen ai max" in name:
            hit = "strix_halo"
        else:
            hit = "other"
        if len(_PLATFORM_CACHE) >= 1024:
            _PLATFORM_CACHE.clear()
        _PLATFORM_CACHE[acc.name] = hit
    return hit


def is_apple(build: BuildSpec) -> bool:
    """True for Apple silicon (Metal) builds."""
    acc = build.accelerator
    return acc.memory_kind == "unified" and unified_platform(acc) == "apple"


def resolve_runtime(build: BuildSpec, workload: Workload) -> str:
    """The runtime named by the workload, else the one its inputs imply.

    GGUF precisions run in llama.cpp; Apple machines default to llama.cpp (Metal); training
    loops are PyTorch; everything else defaults to vLLM.
    """
    if workload.mode != "inference":
        return "pytorch"
    if workload.runtime is not None:
        return workload.runtime
    if PRECISIONS[workload.precision].family == "gguf" or is_apple(build):
        return "llama.cpp"
    return "vllm"


def usable_fraction(build: BuildSpec, workload: Workload, runtime: RuntimeProfile) -> float:
    """Share of each accelerator's memory (GiB as stated) the model may use."""
    if workload.memory_utilization is not None:
        return workload.memory_utilization
    acc = build.accelerator
    if acc.memory_kind == "unified":
        return UNIFIED_USABLE_BY_PLATFORM[unified_platform(acc)]
    return runtime.usable_fraction_discrete


def peer_to_peer(acc: AcceleratorSpec) -> bool:
    """False for GeForce cards: NVIDIA's stock driver disables PCIe peer-to-peer on them, so
    collectives are staged through host memory (reference/accelerators.csv, RTX 4090/5090)."""
    return "geforce" not in acc.name.lower()


def link_for(build: BuildSpec, group: int) -> tuple[float, float, str]:
    """(bandwidth bytes/s per direction, latency s, kind) for a group of `group` accelerators."""
    if group <= build.accelerators_per_node or group <= build.pooled_domain_accelerators:
        link = build.intra_node_link
        kind = link.kind
        if build.accelerator.memory_kind == "unified" and build.accelerators_per_node == 1:
            kind = "unified"
        bw = link.bandwidth_gbs if link.bandwidth_gbs else LINK_DEFAULT_GBS[kind]
        lat = link.latency_us if link.latency_us is not None else LINK_LATENCY_US[kind]
        if kind == "pcie" and not peer_to_peer(build.accelerator):
            # Host-staged: each message crosses PCIe twice (GPU -> host -> GPU).
            bw /= 2.0
            if link.latency_us is None:
                lat = LINK_LATENCY_US["none"]
            kind = "pcie (no P2P)"
        return bw * 1e9, lat * 1e-6, kind
    net = build.inter_node_link
    kind = net.kind
    bw_gbs = net.bandwidth_gbps / 8 if net.bandwidth_gbps else LINK_DEFAULT_GBS[kind]
    # The node's NICs are shared by its accelerators when a group spans nodes.
    bw_gbs = bw_gbs / build.accelerators_per_node
    lat = net.latency_us if net.latency_us is not None else LINK_LATENCY_US[kind]
    return bw_gbs * 1e9, lat * 1e-6, kind


def accelerator_class(acc: AcceleratorSpec) -> str:
    """The device class whose fitted constants apply (runtime.device_class); a unified device
    without a vendor is Apple when its name says so."""
    vendor = acc.vendor
    if vendor is None and acc.memory_kind == "unified" and unified_platform(acc) == "apple":
        vendor = "Apple"
    return device_class(memory_kind=acc.memory_kind, vendor=vendor, memory_type=acc.memory_type)


def efficiency(rt: RuntimeProfile, build: BuildSpec) -> Efficiency:
    """Achieved shares of peak bandwidth and compute and the per-layer launch cost for this
    runtime on this build's device class (fitted where the measurements allow, see
    runtime.efficiency; else the hand-set profile with the unified caps)."""
    return runtime_efficiency(rt, accelerator_class(build.accelerator))


def bandwidth_efficiency(rt: RuntimeProfile, build: BuildSpec) -> float:
    """Achieved share of nominal memory bandwidth (unified SoCs reach less)."""
    return efficiency(rt, build).bandwidth


def fixed_per_layer(rt: RuntimeProfile, build: BuildSpec) -> float:
    """Fixed seconds per layer per forward pass (kernel launches, syncs; Metal pays more)."""
    return efficiency(rt, build).fixed_s_per_layer


def fixed_per_pass(rt: RuntimeProfile, build: BuildSpec, model: ModelSpec) -> float:
    """Fixed seconds of one forward pass over all layers: launches, MoE routing, MLA kernels."""
    fixed = fixed_per_layer(rt, build) * model.num_hidden_layers
    fixed += rt.moe_fixed_s_per_layer * model.moe_layers
    if model.kv_lora_rank:
        fixed += MLA_FIXED_S_PER_LAYER * model.num_hidden_layers
    return fixed
