"""Fixed kernel time of one mixture-of-experts layer per forward pass, beyond its expert bytes.

Documented in docs/engine.md section 5 ("The fused-MoE layer under CUDA graphs").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .mla_kernels import MLA_KERNEL_RUNTIMES

if TYPE_CHECKING:
    from .specs import ModelSpec, Workload


class RuntimeProfile(Protocol):
    """The fields of runtime.RuntimeProfile read here (runtime imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def moe_fixed_s_per_layer(self) -> float: ...
    @property
    def moe_fixed_s_per_layer_mxfp4(self) -> float | None: ...


# MoE fixed cost per layer (docs/engine.md 5). vLLM / SGLang / TensorRT-LLM decode replays a
# CUDA graph, and at batch 1 the fused-MoE op (token sort/align, two grouped GEMMs, activation,
# weighted sum) takes 11-25 µs beyond reading its experts' bytes at the fitted bandwidth share
# in vLLM's own kernel benchmark (benchmark_moe.py, graph replay): Qwen3-30B-A3B BF16 on an A100
# PCIe 109 µs (vllm PR #19049), FP8 on an H100 40 µs (PR #24700), Qwen3-Next FP8 TP4 on an H100
# 29 µs (PR #44830), Qwen3.6-35B-A3B FP8 TP2 on an RTX PRO 6000 23.5 µs (issue #44688); plus the
# router GEMM and top-k softmax, two short kernels: 30 µs, an estimate from kernel timings.
MOE_FIXED_S_PER_LAYER_VLLM = 30e-6
# MXFP4 experts (gpt-oss) skip that kernel: vLLM runs them through Marlin weight-only FP4 on
# Ampere and SM12x, OpenAI's triton_kernels (matmul_ogs, its own routing kernels) on Hopper,
# FlashInfer on SM100 (vllm quantization/mxfp4.py get_mxfp4_backend). 200 µs, hand-set from
# gpt-oss-120b on one A100 (vllm issue #22331: 11.1 ms a token against ~3.4 ms of weight reads
# over 36 MoE layers); the figure every vLLM-family MoE layer paid until issue 12's round.
MOE_FIXED_S_PER_LAYER_MXFP4 = 200e-6
# The early-2025 MoE figure of the serving runtimes (200 µs, as MXFP4's): an MLA model's early
# fixed kernel time is made of it and MLA_FIXED_S_PER_LAYER, and MLA_KERNEL_SHARE (set on
# tt-inference-server #356 against that sum) scales both, so MLA models keep it
# (prep.moe_fixed_s_per_layer). Eager PyTorch (the training profile) keeps it too.
MOE_FIXED_S_PER_LAYER_EARLY = MOE_FIXED_S_PER_LAYER_MXFP4
MOE_FIXED_S_PER_LAYER_EAGER = MOE_FIXED_S_PER_LAYER_MXFP4
# llama.cpp runs the whole routed MLP of a layer as one fused mul_mat_id kernel per projection
# (ggml-cuda), so its fixed part is a few launches: 40 µs, an estimate (docs/engine.md 7).
MOE_FIXED_S_PER_LAYER_LLAMA_CPP = 40e-6


def moe_fixed_s_per_layer(rt: RuntimeProfile, model: ModelSpec, workload: Workload) -> float:
    """Fixed seconds of one MoE layer per forward pass beyond its expert bytes: the runtime's
    fused-MoE figure; its MXFP4 path's for MXFP4 weights; for an MLA model on vLLM / SGLang /
    TensorRT-LLM the early-2025 figure that MLA_KERNEL_SHARE scales (docs/engine.md 7)."""
    if model.kv_lora_rank and rt.name in MLA_KERNEL_RUNTIMES:
        return MOE_FIXED_S_PER_LAYER_EARLY
    if workload.precision == "mxfp4" and rt.moe_fixed_s_per_layer_mxfp4 is not None:
        return rt.moe_fixed_s_per_layer_mxfp4
    return rt.moe_fixed_s_per_layer
