"""Validation and the per-call quantities every later step shares."""

from __future__ import annotations

import math

from .errors import EngineInputError
from .precision import KV_BITS, PRECISIONS, Precision
from .runtime import (
    LINK_DEFAULT_GBS,
    LINK_LATENCY_US,
    RUNTIMES,
    UNIFIED_USABLE_FRACTION,
    RuntimeProfile,
)
from .specs import (
    INTER_LINK_KINDS,
    INTRA_LINK_KINDS,
    BuildSpec,
    CostAssumptions,
    ModelSpec,
    Workload,
)

MODES = ("inference", "training", "lora", "qlora")
PARALLELISMS = ("auto", "tensor", "pipeline")
GB = 1e9


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


def validate(
    build: BuildSpec, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> None:
    """Raise EngineInputError naming the first invalid field."""
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
    if workload.runtime not in RUNTIMES:
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


def usable_fraction(build: BuildSpec, workload: Workload, runtime: RuntimeProfile) -> float:
    """Share of each accelerator's memory the model may use."""
    if workload.memory_utilization is not None:
        return workload.memory_utilization
    if build.accelerator.memory_kind == "unified":
        return UNIFIED_USABLE_FRACTION
    return runtime.usable_fraction_discrete


def link_for(build: BuildSpec, group: int) -> tuple[float, float, str]:
    """(bandwidth bytes/s per direction, latency s, kind) for a group of `group` accelerators."""
    if group <= build.accelerators_per_node or group <= build.pooled_domain_accelerators:
        link = build.intra_node_link
        kind = link.kind
        if build.accelerator.memory_kind == "unified" and build.accelerators_per_node == 1:
            kind = "unified"
        bw = link.bandwidth_gbs if link.bandwidth_gbs else LINK_DEFAULT_GBS[kind]
        lat = link.latency_us if link.latency_us is not None else LINK_LATENCY_US[kind]
        return bw * 1e9, lat * 1e-6, kind
    net = build.inter_node_link
    kind = net.kind
    bw_gbs = net.bandwidth_gbps / 8 if net.bandwidth_gbps else LINK_DEFAULT_GBS[kind]
    # The node's NICs are shared by its accelerators when a group spans nodes.
    bw_gbs = bw_gbs / build.accelerators_per_node
    lat = net.latency_us if net.latency_us is not None else LINK_LATENCY_US[kind]
    return bw_gbs * 1e9, lat * 1e-6, kind
