"""Named constants: runtime profiles, link defaults, memory reservations.

Every number here is documented in docs/engine.md with its source or calibration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from .calibrated import EFFICIENCY as FITTED_EFFICIENCY
from .efficiency import Efficiency
from .moe_kernels import (
    MOE_FIXED_S_PER_LAYER_EAGER,
    MOE_FIXED_S_PER_LAYER_LLAMA_CPP,
    MOE_FIXED_S_PER_LAYER_MXFP4,
    MOE_FIXED_S_PER_LAYER_VLLM,
)


@dataclass(frozen=True, slots=True)
class RuntimeProfile:
    """How one inference runtime uses a device: reservations, efficiencies, fixed costs."""

    name: str
    usable_fraction_discrete: float  # share of a discrete card's memory the runtime may fill
    overhead_gb: float  # per accelerator: CUDA context, graphs, allocator slack
    prefill_chunk_tokens: int  # tokens per forward pass during prefill (activation workspace)
    bandwidth_efficiency: float  # achieved / peak memory bandwidth in decode
    compute_efficiency: float  # achieved / peak dense tensor rate in prefill
    decode_compute_efficiency: float  # achieved / peak in batched decode (skinny GEMMs, GEMV)
    fixed_s_per_layer: float  # kernel launches / syncs per layer per decode step
    fixed_s_per_step: float  # scheduler, sampling, host work per decode step
    # Fixed time per forward pass of one mixture-of-experts layer beyond its expert bytes
    # (router, top-k, token sort/align, activation and sum kernels; EP all-to-all is separate).
    moe_fixed_s_per_layer: float
    # How the runtime splits a model by default:
    #   "tensor": tensor parallel inside a node, pipeline stages across nodes, replicas beyond
    #             (vLLM, SGLang, TensorRT-LLM);
    #   "layers": whole layers over every local GPU of one machine, no automatic replicas
    #             (llama.cpp / Ollama --split-mode layer);
    #   "single": one device of one machine (MLX).
    split: str
    # Prompt tokens per call whose micro-batches flow through pipeline stages together; the
    # stages drain at the end of each call. llama.cpp: n_batch (default 2048) of n_ubatch-token
    # micro-batches (ggml-org/llama.cpp PR #6017); None: the whole prompt (vLLM and kin).
    prefill_pipeline_tokens: int | None = None
    # 16-bit prefill GEMMs accumulate in FP16 (llama.cpp: cuBLAS CUBLAS_COMPUTE_16F, FP32 on CDNA
    # only; ggml_cuda_op_mul_mat_cublas): twice the FP32-accumulate rate of fp16_tflops on
    # GeForce-class tensor cores (prep.prefill_peak_flops); vLLM and kin accumulate in FP32.
    fp16_accumulate: bool = False
    # Several GPU kernel backends (llama.cpp: CUDA, ROCm, Vulkan, Metal): a non-native backend has
    # its own fitted prefill shares where the measurements pin them (prep.prefill_efficiency).
    kernel_backends: bool = False
    # ggml's graph layout (llama.cpp, Ollama): the input token embedding stays in host RAM
    # ("there is very little benefit to offloading the input layer, so always keep it on the
    # CPU", src/llama-model.cpp) and the layer split counts the output layer as one more unit
    # on the last card; without flash attention each card's compute buffer holds the F32
    # K*Q scores of one micro-batch (memory.score_buffer_bytes).
    ggml_layout: bool = False
    # Host seconds per layer to launch an eager (no CUDA graph) prefill pass's kernels, once a
    # pass; 0: no floor (graphs, or a runtime not measured). SGLANG_EAGER_PREFILL_S_PER_LAYER.
    prefill_host_s_per_layer: float = 0.0
    # A decode step run without CUDA graphs (`workload.cuda_graphs` False) by a runtime that
    # then launches its kernels from Python, as this multiple of the graphed step; 1: not
    # modelled (llama.cpp's graphless decode is graph_capture's launch count instead).
    eager_step_factor: float = 1.0
    # MoE fixed time of MXFP4 experts where the runtime runs them outside its fused-MoE kernel
    # (vLLM and kin: MOE_FIXED_S_PER_LAYER_MXFP4); None: moe_fixed_s_per_layer.
    moe_fixed_s_per_layer_mxfp4: float | None = None


# llama.cpp's default logical batch (llama-bench/llama-server -b 2048): one llama_decode call.
LLAMA_CPP_BATCH_TOKENS = 2048
OLLAMA_BATCH_TOKENS = 512  # Ollama's num_batch default: one micro-batch per call
# Per-GPU memory a llama.cpp (and Ollama) CUDA process holds outside its own buffers: context,
# cuBLAS, CUDA pool. An estimate inside the published 0.48-0.79 GB (docs/engine.md 4).
LLAMA_CPP_OVERHEAD_GB = 0.6

# SGLang replays CUDA graphs in decode only; a prefill pass launches its kernels from Python.
# sgl-project/sglang PR #12160 (2025-10): DeepSeek-V3, a one-token prefill's "forward cost"
# 82.6 ms eager, 23.1 ms as a CUDA graph: the eager pass is host-bound (max form, speed.prefill)
# at 82.6 ms / 61 layers, ~70 launches a layer at ~20 us (docs/engine.md 7).
SGLANG_EAGER_PREFILL_S_PER_LAYER = 82.6e-3 / 61
# TensorRT-LLM's PyTorch flow shipped with PyTorchConfig(use_cuda_graph=False,
# enable_overlap_scheduler=False) until spring 2025 (tensorrt_llm/_torch/pyexecutor/config.py at
# commit 9b931c0). NVIDIA's DeepSeek-R1 ablation (docs/source/blogs/tech_blog/blog3_Optimizing_
# DeepSeek_R1_Throughput_on_NVIDIA_Blackwell_GPUs.md, "Runtime Optimizations"): CUDA graphs a
# "22% E2E performance impact", the overlap scheduler 4%; a step without both takes their
# product of the graphed step's time (docs/engine.md 7).
TRTLLM_EAGER_STEP_FACTOR = 1.22 * 1.04
# Calibrated against benchmarks/data/measurements.csv (see docs/engine.md, "Calibration").
_VLLM = RuntimeProfile(
    "vllm",
    0.90,
    1.0,
    8192,
    0.80,
    0.55,
    0.30,
    4e-6,
    1.0e-3,
    MOE_FIXED_S_PER_LAYER_VLLM,
    "tensor",
    moe_fixed_s_per_layer_mxfp4=MOE_FIXED_S_PER_LAYER_MXFP4,
)
_LLAMA_CPP = RuntimeProfile(
    "llama.cpp",
    1.0,
    LLAMA_CPP_OVERHEAD_GB,
    512,
    0.80,
    0.60,
    0.15,
    8e-6,
    0.3e-3,
    MOE_FIXED_S_PER_LAYER_LLAMA_CPP,
    "layers",
    LLAMA_CPP_BATCH_TOKENS,
    fp16_accumulate=True,
    kernel_backends=True,
    ggml_layout=True,
)

RUNTIMES: MappingProxyType[str, RuntimeProfile] = MappingProxyType(
    {
        "vllm": _VLLM,
        "sglang": RuntimeProfile(
            "sglang",
            0.88,
            1.0,
            8192,
            0.80,
            0.55,
            0.30,
            4e-6,
            1.0e-3,
            MOE_FIXED_S_PER_LAYER_VLLM,
            "tensor",
            prefill_host_s_per_layer=SGLANG_EAGER_PREFILL_S_PER_LAYER,
            moe_fixed_s_per_layer_mxfp4=MOE_FIXED_S_PER_LAYER_MXFP4,
        ),
        "trt-llm": RuntimeProfile(
            "trt-llm",
            0.90,
            1.0,
            8192,
            0.80,
            0.60,
            0.30,
            3e-6,
            0.5e-3,
            MOE_FIXED_S_PER_LAYER_VLLM,
            "tensor",
            eager_step_factor=TRTLLM_EAGER_STEP_FACTOR,
            moe_fixed_s_per_layer_mxfp4=MOE_FIXED_S_PER_LAYER_MXFP4,
        ),
        "llama.cpp": _LLAMA_CPP,
        # Ollama runs llama.cpp: its profile, but one micro-batch per call (num_batch).
        "ollama": replace(_LLAMA_CPP, name="ollama", prefill_pipeline_tokens=OLLAMA_BATCH_TOKENS),
        "mlx": RuntimeProfile(
            "mlx",
            1.0,
            0.0,
            512,
            0.80,
            0.60,
            0.15,
            8e-6,
            0.3e-3,
            MOE_FIXED_S_PER_LAYER_LLAMA_CPP,  # SwitchGLU: a gather_qmm per projection (§7)
            "single",
        ),
        # Training / fine-tuning loops in PyTorch: whole card, allocator slack in overhead.
        "pytorch": RuntimeProfile(
            "pytorch",
            1.0,
            1.0,
            2048,
            0.70,
            0.40,
            0.20,
            10e-6,
            2.0e-3,
            MOE_FIXED_S_PER_LAYER_EAGER,  # eager PyTorch: no graph, the old hand-set figure
            "tensor",
        ),
    }
)

# Runtimes a user may name for inference (pytorch is the training loop).
INFERENCE_RUNTIMES = ("vllm", "sglang", "trt-llm", "llama.cpp", "ollama", "mlx")

# Unified-memory SoC GPUs (Apple M-series, Strix Halo) reach a smaller share of their nominal
# bandwidth in decode (llama.cpp on M2 Ultra: ~55-60 % of 800 GB/s); these replace the
# runtime's values when worse. The per-layer launch cost is Metal's (command encoding) and
# applies to Apple only; CUDA (GB10) and ROCm (Strix Halo) unified devices launch kernels like
# discrete cards, and their LPDDR5x reaches ~78-83 % of nominal (Strix Halo ~212 of 256 GB/s
# measured, reference/accelerators.csv).
UNIFIED_BANDWIDTH_EFFICIENCY = 0.60  # Apple (Metal)
UNIFIED_BANDWIDTH_EFFICIENCY_OTHER = 0.75  # CUDA / ROCm unified devices, an estimate
UNIFIED_FIXED_S_PER_LAYER = 60e-6  # Apple (Metal) only


# llama.cpp CUDA decode before CUDA graphs (PR #6766, merged 2024-05-08) launched every kernel
# from the host: the PR's tg gains on Llama 2 7B give 25 (RTX 3090), 13 (RTX 4090) and 27 us
# (H100 PCIe) per layer; their mean, an estimate, per layer of such builds (docs/engine.md 5).
PRE_CUDA_GRAPH_S_PER_LAYER = 22e-6

# Fixed time per decode forward pass of one multi-head-latent-attention layer (DeepSeek-V3,
# Kimi K2), beyond its bytes: absorbed MLA runs q_a/q_b/kv_a projections, two extra norms,
# RoPE on the decoupled key, two per-head absorption BMMs and a latent-attention kernel, with
# FP8 block-scaled activation quantisation before each projection. Hand-set from early-2025
# DeepSeek-V3 rows (SGLang on 8x H200, vLLM on 8x H20: ~33 ms per token; see mla_kernels.py).
MLA_FIXED_S_PER_LAYER = 250e-6

# Tensor parallelism beyond 8 ways is rare for one model replica: all-reduce latency dominates.
MAX_TENSOR_PARALLEL = 8

# Extra per-accelerator buffers when the model is split (NCCL channels, custom all-reduce).
COMM_BUFFER_GB = 0.25

# Default one-way latency of one small all-reduce / pipeline hop, by link kind (microseconds).
# NVLink/NVSwitch: NCCL/custom all-reduce of a few KB takes single-digit microseconds;
# PCIe P2P or host-staged copies take tens; InfiniBand adds NIC + switch + software.
LINK_LATENCY_US: MappingProxyType[str, float] = MappingProxyType(
    {
        "nvswitch": 6.0,
        "nvlink": 6.0,
        "infinity_fabric": 8.0,
        "unified": 2.0,
        "pcie": 25.0,
        "none": 40.0,  # no P2P: staged through host memory
        "infiniband": 20.0,
        "ethernet": 40.0,
    }
)

# Default bandwidth when a link's bandwidth is unknown (GB/s per direction per accelerator).
LINK_DEFAULT_GBS: MappingProxyType[str, float] = MappingProxyType(
    {
        "nvswitch": 450.0,
        "nvlink": 300.0,
        "infinity_fabric": 64.0 * 7,
        "unified": 200.0,
        "pcie": 25.0,  # PCIe 4.0 x16 achieved
        "none": 10.0,
        "infiniband": 400 / 8,
        "ethernet": 100 / 8,
    }
)

# Share of a link's nominal bandwidth collectives achieve (NCCL bus bandwidth vs line rate).
LINK_EFFICIENCY = 0.75

# Training: model-FLOPs utilisation defaults (Llama 3 405B pre-training reported 38-43 % BF16
# MFU on H100; LoRA/QLoRA loops are less efficient: small adapters, dequantisation).
MFU_DEFAULT = 0.40
MFU_LORA = 0.30
MFU_QLORA = 0.20

# FP8 training step speed-up over bf16 (NVIDIA Transformer Engine and torchao float8 report
# 1.3-1.5x end to end on H100 for large dense models); the midpoint, an estimate.
FP8_TRAINING_SPEEDUP = 1.4

# Share of the backward pass gradient communication can hide under (PyTorch DDP / FSDP
# bucketed all-reduce overlaps with the remaining backward; the last buckets cannot).
OVERLAPPED_SHARE_OF_BACKWARD = 0.8

# Device classes the efficiency constants are fitted for (benchmarks/calibrate.py): the memory
# system decides achieved bandwidth and, with the card's market segment, achieved compute.
DEVICE_CLASSES = ("discrete GDDR", "HBM datacenter", "Apple unified", "CUDA/ROCm unified")


def device_class(*, memory_kind: str, vendor: str | None, memory_type: str | None) -> str:
    """Discrete GDDR, HBM datacenter, Apple unified or CUDA/ROCm unified."""
    if memory_kind == "unified":
        return "Apple unified" if (vendor or "").casefold() == "apple" else "CUDA/ROCm unified"
    if memory_kind == "hbm" or "hbm" in (memory_type or "").casefold():
        return "HBM datacenter"
    return "discrete GDDR"


# Runtimes that embed another runtime's kernels share its fitted constants (ollama runs llama.cpp).
CALIBRATION_ALIASES: MappingProxyType[str, str] = MappingProxyType({"ollama": "llama.cpp"})

# Fitted by benchmarks/calibrate.py from the catalog measurements, per runtime x device class
# (app/engine/calibrated.py is generated; its header says from which rows and when). A pair the
# data could not pin down is absent and falls back to the runtime's hand-set profile. Keys of
# three (runtime, device class, backend) carry a kernel backend's own prefill shares
# (RuntimeProfile.kernel_backends); only prep.prefill_efficiency asks for them.
CALIBRATION: MappingProxyType[tuple[str, ...], Efficiency] = MappingProxyType(
    {key: Efficiency(*values) for key, values in FITTED_EFFICIENCY.items()}
)


def hand_set_efficiency(rt: RuntimeProfile, device: str) -> Efficiency:
    """The runtime profile's values, with the unified-SoC bandwidth caps and Metal's launch
    cost (Apple only: CUDA / ROCm unified devices launch kernels like discrete cards)."""
    bandwidth, fixed = rt.bandwidth_efficiency, rt.fixed_s_per_layer
    if device == "Apple unified":
        bandwidth = min(bandwidth, UNIFIED_BANDWIDTH_EFFICIENCY)
        fixed = max(fixed, UNIFIED_FIXED_S_PER_LAYER)
    elif device == "CUDA/ROCm unified":
        bandwidth = min(bandwidth, UNIFIED_BANDWIDTH_EFFICIENCY_OTHER)
    return Efficiency(bandwidth, rt.compute_efficiency, rt.decode_compute_efficiency, fixed,
                      prefill_host_s_per_layer=rt.prefill_host_s_per_layer)


def efficiency(rt: RuntimeProfile, device: str, backend: str | None = None) -> Efficiency:
    """Fitted efficiencies of a runtime on a device class, else the hand-set ones; with a
    kernel backend, its own fitted prefill shares where the measurements pinned them.

    Reads the module's CALIBRATION at call time, so a fitting script can evaluate candidate
    constants by replacing it (benchmarks/calibrate.py does, inside one process)."""
    name = CALIBRATION_ALIASES.get(rt.name, rt.name)
    if backend is not None and (name, device, backend) in CALIBRATION:
        return CALIBRATION[(name, device, backend)]
    found = CALIBRATION.get((name, device))
    return found if found is not None else hand_set_efficiency(rt, device)
