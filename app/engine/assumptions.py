"""The assumptions every estimate states: fixed wording plus precision, runtime and costs."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from .mla_kernels import MLA_KERNEL_SHARE
from .moe_kernels import (
    MOE_FIXED_S_PER_LAYER_EARLY,
    MOE_FIXED_S_PER_LAYER_LLAMA_CPP,
    MOE_FIXED_S_PER_LAYER_MXFP4,
    MOE_FIXED_S_PER_LAYER_VLLM,
)
from .precision import PRECISIONS
from .prep import accelerator_class, efficiency, foreign_backend, prefill_efficiency
from .prepared import Prepared, calibrated_memo
from .runtime import (
    CALIBRATION,
    CALIBRATION_ALIASES,
    MLA_FIXED_S_PER_LAYER,
    Efficiency,
    RuntimeProfile,
)
from .specs import BuildSpec, CostAssumptions, Workload

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
    f"Each MoE layer adds {MOE_FIXED_S_PER_LAYER_VLLM * 1e6:g} µs (vLLM/SGLang/TensorRT-LLM "
    f"fused-MoE kernels under CUDA graphs; {MOE_FIXED_S_PER_LAYER_MXFP4 * 1e6:g} µs for MXFP4 "
    f"experts, which take other kernels) or {MOE_FIXED_S_PER_LAYER_LLAMA_CPP * 1e6:g} µs "
    "(llama.cpp/Ollama/MLX) of fixed kernel time per forward pass (routing, token sort, "
    "activation and sum kernels; expert-parallel all-to-all is counted apart), and each MLA "
    f"layer {MLA_FIXED_S_PER_LAYER * 1e6:g} µs (absorbed-attention kernels); an MLA model "
    "(DeepSeek) on vLLM/SGLang/TensorRT-LLM pays the early-2025 "
    f"{MOE_FIXED_S_PER_LAYER_EARLY * 1e6:g} µs per MoE layer, and today's kernels take "
    f"{MLA_KERNEL_SHARE:g} of that and its MLA time, an estimate; no speculative decoding / MTP",
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


def runtime_text(rt: RuntimeProfile, device: str, eff: Efficiency) -> str:
    """The runtime's constants as this estimate used them: the shares fitted for its device
    class (runtime.efficiency), not the profile's hand-set starting values."""
    fitted = (CALIBRATION_ALIASES.get(rt.name, rt.name), device) in CALIBRATION
    source = (
        "fitted to the catalog's measurements where they suffice (benchmarks/calibrate.py), "
        "else hand-set"
        if fitted
        else "hand-set (too few measurements of this runtime to fit)"
    )
    return (
        f"Runtime {rt.name} on {device}: {rt.overhead_gb:g} GB overhead per accelerator; "
        f"achieved shares {source}: bandwidth {eff.bandwidth:.0%}, prefill compute "
        f"{eff.prefill_compute:.0%} (routed experts {eff.routed_prefill_compute:.0%}), decode "
        f"compute {eff.decode_compute:.0%}; fixed {eff.fixed_s_per_layer * 1e6:.3g} µs/layer + "
        f"{rt.fixed_s_per_step * 1e3:g} ms/step"
    )


# Assumption tuples repeat for every build of a sweep and every entry of a batch: memoised
# (bounded) by what they read, the runtime profile by identity (the cached value holds it, so
# its id is not reused). They state the fitted constants: a calibration swapping them clears
# the memo (prepared.clear_prepared).
_AssumptionsKey = tuple[int, str, str, str, str | None, CostAssumptions, float]
_Worded = tuple[RuntimeProfile, tuple[str, ...]]
_ASSUMPTIONS_CACHE: dict[_AssumptionsKey, _Worded] = calibrated_memo({})
_ASSUMPTIONS_CACHE_MAX = 256


def assumptions(
    p: Prepared, costs: CostAssumptions, util: float, build: BuildSpec, workload: Workload
) -> tuple[str, ...]:
    """The assumptions stated with an estimate (memoised per precision, runtime, device class,
    kernel backend and costs)."""
    rt = p.runtime
    device = accelerator_class(build.accelerator)
    backend = None if workload.backend is None else foreign_backend(rt, build, workload)
    key = (id(rt), p.precision.name, p.kv_precision, device, backend, costs, util)
    hit = _ASSUMPTIONS_CACHE.get(key)
    if hit is None:
        # Decode reads the device class's shares; prefill those of the workload's backend.
        prefill = prefill_efficiency(rt, build, workload)
        eff = replace(
            efficiency(rt, build),
            prefill_compute=prefill.prefill_compute,
            moe_prefill_compute=prefill.moe_prefill_compute,
        )
        if len(_ASSUMPTIONS_CACHE) >= _ASSUMPTIONS_CACHE_MAX:
            _ASSUMPTIONS_CACHE.clear()
        hit = _ASSUMPTIONS_CACHE[key] = (rt, _assumption_texts(p, costs, util, device, eff))
    return hit[1]


def _assumption_texts(
    p: Prepared, costs: CostAssumptions, util: float, device: str, eff: Efficiency
) -> tuple[str, ...]:
    return _BASE_ASSUMPTIONS + (
        f"{_PRECISION_TEXT[p.precision.name]}; KV cache {p.kv_precision}",
        f"{runtime_text(p.runtime, device, eff)}; {util:.0%} of each accelerator's memory usable",
        f"Costs: purchase amortised over {costs.amortization_years:g} years, electricity "
        f"${costs.electricity_usd_per_kwh:g}/kWh at PUE {costs.pue:g}, utilisation "
        f"{costs.utilization:.0%}, host power +{costs.host_power_fraction:.0%} of accelerator TDP "
        "when the build's power is unknown",
    )
