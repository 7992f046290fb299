"""Instruction-issue time of llama.cpp's CUDA batch-1 quantized mat-vec kernels (ggml-cuda MMVQ):
operations per weight by block format, over the CUDA cores' issue rate (docs/engine.md 5)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from statistics import median
from types import MappingProxyType

from .graph_capture import pre_ampere_nvidia
from .precision import Precision
from .prep import foreign_backend, half_rate_fp32_accumulate, native_backend, slow_fp16
from .runtime import RuntimeProfile
from .specs import AcceleratorSpec, BuildSpec, Workload

# ggml-cuda's MMVQ (mmvq.cu) dot products, one thread's source-level operations per weight of each
# ggml block type (ggml-org/llama.cpp ggml/src/ggml-cuda/vecdotq.cuh, vec_dot_<type>_q8_1 and its
# _impl_mmvq): weight, scale and activation loads (get_int_b2 = two 16-bit loads, a shift and an
# or), integer unpacking (shifts, masks, __vsubss4 counted as 4: no native SIMD subtract since
# Maxwell), dp4a products, int->float conversions and float multiply-adds, divided by the weights
# one call covers; index arithmetic is left out for every type. E.g. Q2_K: one call covers 16
# weights (one int of 2-bit planes against four q8_1 blocks, four dp4a for the quants and four for
# the block minimums, four scale bytes unpacked) = 82 operations; Q4_0: 16 weights, 4 dp4a, 32.
# An estimate: the compiler's instruction count differs, the ratios between types are the point.
MMVQ_OPS_PER_WEIGHT: MappingProxyType[str, float] = MappingProxyType(
    {
        "q4_0": 32 / 16, "q4_1": 28 / 16, "q8_0": 20 / 8, "q2_k": 82 / 16, "q3_k": 141 / 16,
        "q4_k": 54 / 16, "q5_k": 72 / 16, "q6_k": 48 / 8, "iq1_s": 72 / 32, "mxfp4": 58 / 16,
    }
)
# Bits per weight of each pure block (ggml-common.h): the operations above per byte of weights.
_BLOCK_BITS: MappingProxyType[str, float] = MappingProxyType(
    {
        "q4_0": 4.5, "q4_1": 5.0, "q8_0": 8.5, "q2_k": 2.625, "q3_k": 3.4375, "q4_k": 4.5,
        "q5_k": 5.5, "q6_k": 6.5625, "iq1_s": 1.5625, "mxfp4": 4.25,
    }
)
# The block type that holds most of a GGUF precision's weights (a K_M / K_S mix keeps a few
# tensors at a higher type; its file bytes are costed at the main type's rate), and the routed
# experts' type where it differs (mxfp4-f16: MXFP4 experts, the rest F16, which MMVQ does not run).
_MMVQ_BLOCK: MappingProxyType[str, tuple[str | None, str | None]] = MappingProxyType(
    {
        "q4_0": ("q4_0", "q4_0"), "q4_1": ("q4_1", "q4_1"), "q8_0": ("q8_0", "q8_0"),
        "q2_k": ("q2_k", "q2_k"), "q3_k_s": ("q3_k", "q3_k"), "q3_k_m": ("q3_k", "q3_k"),
        "q4_k_m": ("q4_k", "q4_k"), "q5_k_s": ("q5_k", "q5_k"), "q5_k_m": ("q5_k", "q5_k"),
        "q6_k": ("q6_k", "q6_k"), "iq1_s": ("iq1_s", "iq1_s"), "mxfp4": ("mxfp4", "mxfp4"),
        "mxfp4-f16": (None, "mxfp4"),
    }
)

# Achieved share of the issue rate in MMVQ (each thread's short dependent chain of loads,
# unpacking and dp4a leaves most issue slots idle). Hand-set from the only rows where the issue
# time binds, Llama 2 7B Q2_K and Q3_K_S single-stream decode, read per source: each source's
# reading is the median of the values its rows need with the engine of 2026-12-03, the constant
# the median over sources (docs/engine.md 5). Those rows are not independent evidence for it:
# benchmarks/calibrate.py's leave-one-source-out folds take the median of the other sources'
# readings (calibrate.ANCHORED). All three are JohannesGaessler's tables (his RTX 3090 and P40).
MMVQ_ISSUE_EFFICIENCY_READINGS: Mapping[str, float] = MappingProxyType(
    {
        # PR #4766 (January 2024), tg128: Q2_K 0.245 on the RTX 3090 and on the P40, Q3_K_S 0.34.
        "github.com/ggml-org/llama.cpp/pull/4766": 0.2925,
        # PR #5351 (February 2024), RTX 3090 pp512 at batch 1: Q2_K_M 0.28, Q3_K_S 0.395.
        "github.com/ggml-org/llama.cpp/pull/5351": 0.3375,
        # PR #5434 (February 2024, build b2110), RTX 3090 pp512 at batch 1: Q2_K_M 0.285,
        # Q3_K_S 0.405.
        "github.com/ggml-org/llama.cpp/pull/5434": 0.345,
    }
)
MMVQ_ISSUE_EFFICIENCY = median(MMVQ_ISSUE_EFFICIENCY_READINGS.values())
# ggml-cuda runs a quantized matmul as MMVQ up to this many columns (mmvq.cuh
# MMVQ_MAX_BATCH_SIZE), as MMQ tiles beyond, whose unpacking is shared by a tile of columns.
MMVQ_MAX_BATCH = 8
# An SM issues 128 thread instructions per clock (four schedulers of one 32-thread warp
# instruction), Pascal to Blackwell. The catalogue has no SM count or clock, but two of its figures
# are fixed multiples of them: dp4a's int8 rate on a slow_fp16 Pascal card is 128 lanes x 4
# products x 2 ops (P40: 47 TOPS = 30 SMs x 1.53 GHz x 1024), and the GeForce FP16 tensor figure
# with FP32 accumulate is 512 FLOP per SM per clock on Turing to Blackwell (RTX 3090: 82 x 1.695
# GHz x 512 = 71 TFLOPS; RTX 4090: 128 x 2.52 x 512 = 165; RTX 5090: 170 x 2.41 x 512 = 209.5).
DP4A_OPS_PER_ISSUE_LANE = 8.0
GEFORCE_FP16_FLOP_PER_ISSUE_LANE = 4.0
# Volta and Turing cards outside GeForce run FP16 tensor products at the full rate with FP32
# accumulate: 8 tensor cores x 64 FMA x 2 = 1,024 FLOP per SM per clock, 8 per issue lane.
# Quadro RTX 8000: 72 SMs x 1.77 GHz x 1,024 = 130.5 TFLOPS (NVIDIA's figure as Leadtek's
# spec sheet prints it, beside 16.3 FP32 TFLOPS = 4,608 cores x 2 x 1.77 GHz); Tesla T4
# 40 x 1.59 x 1,024 = 65; Tesla V100 SXM2 80 x 1.53 x 1,024 = 125. (Ampere and later
# workstation and datacenter parts differ by generation: A100 2,048, H100 4,096.)
FULL_RATE_TENSOR_FLOP_PER_ISSUE_LANE = 8.0
# Volta (7.0) and Turing (7.5) cards with full-rate tensor cores (graph_capture's names).
VOLTA_TURING_FULL_RATE = re.compile(
    r"\bquadro rtx\b|\b(?:tesla )?(?:t4|v100)\b|\bquadro gv100\b|\btitan (?:v|rtx)\b"
)


def mmvq_ops_per_byte(precision: Precision) -> tuple[float, float]:
    """(non-expert, routed-expert) MMVQ operations per byte of weights read for a precision
    (MMVQ_OPS_PER_WEIGHT over its block's bytes per weight); 0 where MMVQ does not run it."""
    main, experts = _MMVQ_BLOCK.get(precision.name, (None, None))
    return _ops_per_byte(main), _ops_per_byte(experts)


def _ops_per_byte(block: str | None) -> float:
    return 0.0 if block is None else MMVQ_OPS_PER_WEIGHT[block] * 8.0 / _BLOCK_BITS[block]


def cuda_issue_rate(acc: AcceleratorSpec) -> float | None:
    """Thread instructions per second the card's CUDA cores issue (SMs x clock x 128), from the
    catalogue figures that are fixed multiples of it: Pascal's dp4a rate, the GeForce tensor
    rate, the full tensor rate of Volta / Turing workstation and datacenter cards; None
    elsewhere (Ampere-and-later non-GeForce tensor rates per SM differ; non-NVIDIA devices)."""
    if slow_fp16(acc) and acc.int8_tops:
        return acc.int8_tops * 1e12 / DP4A_OPS_PER_ISSUE_LANE
    if half_rate_fp32_accumulate(acc) and native_backend(acc) == "cuda":
        return acc.fp16_tflops * 1e12 / GEFORCE_FP16_FLOP_PER_ISSUE_LANE
    if pre_ampere_nvidia(acc) and VOLTA_TURING_FULL_RATE.search(acc.name.lower()):
        return acc.fp16_tflops * 1e12 / FULL_RATE_TENSOR_FLOP_PER_ISSUE_LANE
    return None


def mmvq_s_per_byte(
    rt: RuntimeProfile, build: BuildSpec, precision: Precision, workload: Workload, tp: int = 1
) -> tuple[float, float]:
    """(non-expert, routed-expert) seconds of MMVQ instruction issue per byte of weights a decode
    pass reads, the bytes spread over `tp` ranks: operations per byte over the card's issue rate
    times MMVQ_ISSUE_EFFICIENCY. (0, 0) off llama.cpp's CUDA backend or where the catalogue gives
    no issue rate (cuda_issue_rate)."""
    if not rt.ggml_layout or precision.name not in _MMVQ_BLOCK:
        return 0.0, 0.0
    rate = cuda_issue_rate(build.accelerator)
    if rate is None or foreign_backend(rt, build, workload) is not None:
        return 0.0, 0.0
    main, experts = mmvq_ops_per_byte(precision)
    per_op = 1.0 / (rate * MMVQ_ISSUE_EFFICIENCY * tp)
    return main * per_op, experts * per_op


def mmvq_pass_s(
    per_byte: tuple[float, float], batch: float, nonexpert_bytes: float, weight_bytes: float
) -> float:
    """Issue seconds of one decode pass of `batch` sequences reading `weight_bytes` of weights,
    `nonexpert_bytes` of them outside the routed experts: paid once per pass up to
    MMVQ_MAX_BATCH (one launch's columns share the unpacked weights), 0 beyond (MMQ tiles)."""
    if batch > MMVQ_MAX_BATCH:
        return 0.0
    return nonexpert_bytes * per_byte[0] + (weight_bytes - nonexpert_bytes) * per_byte[1]
