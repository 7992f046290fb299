"""The assumptions every estimate states: fixed wording plus precision, runtime and costs."""

from __future__ import annotations

from types import MappingProxyType

from .mla_kernels import MLA_KERNEL_SHARE
from .precision import PRECISIONS
from .prepared import Prepared
from .runtime import (
    MLA_FIXED_S_PER_LAYER,
    MOE_FIXED_S_PER_LAYER_LLAMA_CPP,
    MOE_FIXED_S_PER_LAYER_VLLM,
    RUNTIMES,
)
from .specs import CostAssumptions

# Fixed wording, built once; the per-call ones are added in _assumptions.
_BASE_ASSUMPTIONS = (
    "Capacities as vendors state them are binary (a 24 GB card holds 24 GiB = 25.77e9 "
    "bytes); every figure is shown in GB = 1e9 bytes; bandwidths per direction",
    "Fit is judged per accelerator with whole layers per pipeline stage; memory that is not "
    "pooled is never summed",
    "Decode step = max(bytes read / (bandwidth x efficiency), FLOPs / (peak x efficiency), "
    "for llama.cpp's CUDA mat-vec kernels up to 8 sequences their unpacking and dp4a "
    "instructions per weight format / the cores' issue rate) + all-reduce and pipeline-hop "
    "time + fixed per-layer and per-step costs",
    "MoE decode reads E x (1 - (1 - k/E)^batch) distinct experts per layer (uniform routing)",
    f"Each MoE layer adds {MOE_FIXED_S_PER_LAYER_VLLM * 1e6:g} µs (vLLM/SGLang/TensorRT-LLM) "
    f"or {MOE_FIXED_S_PER_LAYER_LLAMA_CPP * 1e6:g} µs (llama.cpp/Ollama/MLX) and each MLA layer "
    f"{MLA_FIXED_S_PER_LAYER * 1e6:g} µs of fixed kernel time per forward pass (routing, "
    "dispatch/combine, absorbed-attention kernels); today's vLLM/SGLang/TensorRT-LLM MLA and "
    f"block-FP8 kernels take {MLA_KERNEL_SHARE:g} of both for an MLA model (DeepSeek), an "
    "estimate; no speculative decoding / MTP",
    "Prefill time is for one prompt of prompt_tokens; time to first token excludes queueing",
    "Aggregate tokens/s counts only replicas that hold sequences; $ and J per token divide the "
    "whole build's cost and power (idle accelerators included) by generated tokens/s with each "
    "request's prefill time included",
)


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


def assumptions(p: Prepared, costs: CostAssumptions, util: float) -> tuple[str, ...]:
    """The assumptions stated with an estimate (memoised per precision, runtime and costs)."""
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
