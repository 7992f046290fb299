"""Device and runtime facts every later step shares: peak rates, links, efficiencies, memory."""

from __future__ import annotations

from .graph_capture import runs_without_graphs
from .mla_kernels import MLA_KERNEL_RUNTIMES, MLA_KERNEL_SHARE
from .moe_kernels import moe_fixed_s_per_layer
from .precision import PRECISIONS, Precision, gemm_compute, ggml_gemm_compute
from .runtime import (
    LINK_DEFAULT_GBS,
    LINK_LATENCY_US,
    MLA_FIXED_S_PER_LAYER,
    PRE_CUDA_GRAPH_S_PER_LAYER,
    Efficiency,
    RuntimeProfile,
    device_class,
)
from .runtime import efficiency as runtime_efficiency
from .specs import AcceleratorSpec, BuildSpec, ModelSpec, Workload
from .unified_memory import (
    APPLE_SMALL_RAM_GIB,
    APPLE_SMALL_RAM_USABLE_FRACTION,
    UNIFIED_USABLE_BY_PLATFORM,
)

GB = 1e9  # the unit every figure is displayed in
# Vendors state memory capacities in binary units: a "24 GB" card holds 24 GiB. Capacities are
# converted to bytes with this factor; needs are computed in bytes; both display in GB (1e9).
GIB = float(2**30)


def default_kv_precision(precision: Precision) -> str:
    """KV-cache format used when the workload does not name one."""
    return precision.kv_default


def peak_flops(build: BuildSpec, compute: str) -> tuple[float, str]:
    """Dense tensor rate (FLOP/s) for a compute kind, falling back to FP16 when unsupported."""
    return card_peak_flops(build.accelerator, compute)


# ggml-cuda takes its FP16 paths only where fast_fp16_available (ggml-cuda/common.cuh: CC >= 6.0
# except 6.1). The CC 6.1 Pascal chips (GP102-GP107: Tesla P40/P4, GTX 10xx) run FP16 at 1/64 of
# FP32 but have __dp4a, four int8 products per FP32 FMA slot, so their datasheet INT8 figure is
# 4x FP32 (P40: 47 TOPS, 11.8 TFLOPS). The catalogue has no compute-capability field: such a card
# is one whose fp16_tflops is under an eighth of its int8_tops (tensor-core cards have 2x or, for
# GeForce's FP32-accumulate fp16 figure, 4x; the P100, CC 6.0, has fast FP16 and no dp4a).
SLOW_FP16_INT8_RATIO = 8.0
DP4A_INT8_PER_FP32 = 4.0


def slow_fp16(acc: AcceleratorSpec) -> bool:
    """True for a card without fast FP16 whose int8 rate is dp4a's (see SLOW_FP16_INT8_RATIO)."""
    return acc.int8_tops is not None and acc.fp16_tflops * SLOW_FP16_INT8_RATIO < acc.int8_tops


def card_peak_flops(acc: AcceleratorSpec, compute: str) -> tuple[float, str]:
    """peak_flops for one card."""
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
        if slow_fp16(acc) and acc.int8_tops:  # no tensor cores: the FP32 CUDA-core rate
            return acc.int8_tops / DP4A_INT8_PER_FP32 * 1e12, "fp32"
        return acc.fp16_tflops * 0.5e12, "tf32"  # TF32 tensor rate is half the FP16 rate
    return acc.fp16_tflops * 1e12, "fp16"


def matmul_compute(
    rt: RuntimeProfile, acc: AcceleratorSpec, precision: Precision, backend: str | None = None
) -> str:
    """The rate kind a runtime's weight matmuls run at on a card: gemm_compute, except for
    llama.cpp (ggml) on a slow_fp16 card, where ggml-cuda's quantized kernels (MMVQ mat-vec, MMQ
    at every batch size: no FP16 MMA hardware, mmq.cu ggml_cuda_should_use_mmq) take dp4a int8
    products ("int8") and F16/BF16/F32 weights run FP32 cuBLAS and mat-vec kernels ("fp32"); a
    non-native backend is rated at FP32 too (its quantized paths are not modelled)."""
    if rt.ggml_layout and slow_fp16(acc):
        quantized = precision.family == "gguf" and precision.bits_per_weight < 16.0
        return "int8" if quantized and backend is None else "fp32"
    return (ggml_gemm_compute if rt.ggml_layout else gemm_compute)(precision, backend)


def matmul_peak(rt: RuntimeProfile, acc: AcceleratorSpec, precision: Precision) -> float:
    """Dense rate (FLOP/s) of a card's weight matmuls for this runtime and precision."""
    return card_peak_flops(acc, matmul_compute(rt, acc, precision))[0]


_HALF_RATE_CACHE: dict[str, bool] = {}


def half_rate_fp32_accumulate(acc: AcceleratorSpec) -> bool:
    """True for NVIDIA's consumer tensor-core configuration: GeForce cards and GB10 (DGX Spark,
    whose catalogue FP16 figure is derived from the GeForce Blackwell configuration). There an
    FP16 product accumulated in FP32 runs at half the FP16-accumulate rate, and the catalogue's
    fp16_tflops holds the FP32-accumulate figure (seed_data/accelerators.yaml notes)."""
    hit = _HALF_RATE_CACHE.get(acc.name)
    if hit is None:
        gb10 = acc.memory_kind == "unified" and unified_platform(acc) == "gb10"
        hit = gb10 or "geforce" in acc.name.lower()
        if len(_HALF_RATE_CACHE) >= 1024:
            _HALF_RATE_CACHE.clear()
        _HALF_RATE_CACHE[acc.name] = hit
    return hit


def prefill_peak_flops(rt: RuntimeProfile, build: BuildSpec, compute: str) -> tuple[float, float]:
    """(weight GEMMs, 16-bit attention) dense rates of a runtime's prefill: peak_flops, a
    16-bit rate doubled where the runtime accumulates in FP16 on a card whose catalogue figure
    is the half-rate FP32-accumulate one (RuntimeProfile.fp16_accumulate,
    half_rate_fp32_accumulate)."""
    peak, used = peak_flops(build, compute)
    if rt.ggml_layout and slow_fp16(build.accelerator):
        # F16 attention runs ggml-cuda's FP32 paths on a card without fast FP16 (matmul_compute).
        return peak, peak_flops(build, "fp32")[0]
    half = peak if used == "fp16" else peak_flops(build, "fp16")[0]
    if rt.fp16_accumulate and half_rate_fp32_accumulate(build.accelerator):
        return (2.0 * peak if used == "fp16" else peak), 2.0 * half
    return peak, half


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

    GGUF precisions run in llama.cpp, MLX-quantised ones in MLX; Apple machines default to
    llama.cpp (Metal); training loops are PyTorch; everything else defaults to vLLM.
    """
    if workload.mode != "inference":
        return "pytorch"
    if workload.runtime is not None:
        return workload.runtime
    family = PRECISIONS[workload.precision].family
    if family == "mlx":
        return "mlx"
    if family == "gguf" or is_apple(build):
        return "llama.cpp"
    return "vllm"


def usable_fraction(build: BuildSpec, workload: Workload, runtime: RuntimeProfile) -> float:
    """Share of each accelerator's memory (GiB as stated) the model may use."""
    if workload.memory_utilization is not None:
        return workload.memory_utilization
    acc = build.accelerator
    if acc.memory_kind == "unified":
        platform = unified_platform(acc)
        if platform == "apple" and acc.memory_gb <= APPLE_SMALL_RAM_GIB:
            return APPLE_SMALL_RAM_USABLE_FRACTION
        return UNIFIED_USABLE_BY_PLATFORM[platform]
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


# Every estimate asks for its card's class several times (plan candidates, prefill); the
# answer depends on four strings of the card, whose hashes Python keeps: memoised, bounded.
_CLASS_CACHE: dict[tuple[str, str | None, str | None, str], str] = {}


def accelerator_class(acc: AcceleratorSpec) -> str:
    """The device class whose fitted constants apply (runtime.device_class); a unified device
    without a vendor is Apple when its name says so."""
    key = (acc.memory_kind, acc.vendor, acc.memory_type, acc.name)
    hit = _CLASS_CACHE.get(key)
    if hit is None:
        vendor = acc.vendor
        if vendor is None and acc.memory_kind == "unified" and unified_platform(acc) == "apple":
            vendor = "Apple"
        hit = device_class(memory_kind=acc.memory_kind, vendor=vendor, memory_type=acc.memory_type)
        if len(_CLASS_CACHE) >= 1024:
            _CLASS_CACHE.clear()
        _CLASS_CACHE[key] = hit
    return hit


def efficiency(rt: RuntimeProfile, build: BuildSpec) -> Efficiency:
    """Achieved shares of peak bandwidth and compute and the per-layer launch cost for this
    runtime on this build's device class (fitted where the measurements allow, see
    runtime.efficiency; else the hand-set profile with the unified caps)."""
    return runtime_efficiency(rt, accelerator_class(build.accelerator))


_BACKEND_CACHE: dict[tuple[str, str | None, str], str | None] = {}


def native_backend(acc: AcceleratorSpec) -> str | None:
    """The kernel backend a runtime with several uses on this device when none is named: CUDA
    on NVIDIA, ROCm/HIP on AMD (AMD's own stack; Vulkan is the other common choice there),
    Metal on Apple; None when the vendor is unknown."""
    key = (acc.name, acc.vendor, acc.memory_kind)
    if key in _BACKEND_CACHE:
        return _BACKEND_CACHE[key]
    vendor = (acc.vendor or "").casefold()
    name = acc.name.casefold()
    platform = unified_platform(acc) if acc.memory_kind == "unified" else None
    found: str | None = None
    if platform == "apple" or vendor == "apple":
        found = "metal"
    elif vendor == "nvidia" or platform == "gb10" or "nvidia" in name or "geforce" in name:
        found = "cuda"
    elif vendor == "amd" or platform == "strix_halo" or "radeon" in name or "amd " in name:
        found = "rocm"
    if len(_BACKEND_CACHE) >= 1024:
        _BACKEND_CACHE.clear()
    _BACKEND_CACHE[key] = found
    return found


def foreign_backend(rt: RuntimeProfile, build: BuildSpec, workload: Workload) -> str | None:
    """The workload's kernel backend when it is not the device's native one (Vulkan on a
    Radeon or a GeForce), else None: the device class's constants are the native backend's."""
    backend = workload.backend
    if backend is None or not rt.kernel_backends:
        return None
    return None if backend == native_backend(build.accelerator) else backend


def prefill_efficiency(rt: RuntimeProfile, build: BuildSpec, workload: Workload) -> Efficiency:
    """efficiency(), with the prefill shares of the workload's kernel backend when it is not
    the device's native one (see runtime.efficiency)."""
    backend = None if workload.backend is None else foreign_backend(rt, build, workload)
    return runtime_efficiency(rt, accelerator_class(build.accelerator), backend)


def bandwidth_efficiency(rt: RuntimeProfile, build: BuildSpec, workload: Workload) -> float:
    """Achieved share of nominal memory bandwidth (unified SoCs reach less), the workload's
    kernel backend's own where it is not the device's native one (Vulkan's shaders)."""
    return prefill_efficiency(rt, build, workload).bandwidth


def fixed_per_layer(rt: RuntimeProfile, build: BuildSpec, workload: Workload) -> float:
    """Fixed seconds per layer per forward pass (kernel launches, syncs; Metal pays more)."""
    return prefill_efficiency(rt, build, workload).fixed_s_per_layer


def fixed_per_pass(
    rt: RuntimeProfile, build: BuildSpec, model: ModelSpec, workload: Workload
) -> float:
    """Fixed seconds of one forward pass over all layers: launches, MoE routing, MLA kernels."""
    kernels = moe_fixed_s_per_layer(rt, model, workload) * model.moe_layers
    if model.kv_lora_rank:
        kernels += MLA_FIXED_S_PER_LAYER * model.num_hidden_layers
        # Today's MLA and block-FP8 kernels (spring 2025 on) take a share of the early time.
        if rt.name in MLA_KERNEL_RUNTIMES and not workload.early_mla_kernels:
            kernels *= MLA_KERNEL_SHARE
    return fixed_per_layer(rt, build, workload) * model.num_hidden_layers + kernels


def launch_s_without_graphs(
    rt: RuntimeProfile, build: BuildSpec, model: ModelSpec, workload: Workload
) -> float:
    """Extra seconds per decode step of a llama.cpp-layout run without CUDA graphs, where the
    host launches each kernel of a token (runtime.PRE_CUDA_GRAPH_S_PER_LAYER): a build from
    before CUDA graphs (`workload.cuda_graphs` False) or a pre-Ampere card's CUDA backend today
    (graph_capture.cuda_without_graphs). 0 otherwise."""
    if not runs_without_graphs(rt, build, workload):
        return 0.0
    return PRE_CUDA_GRAPH_S_PER_LAYER * model.num_hidden_layers
