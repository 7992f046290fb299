"""Today's MLA decode kernels in the serving runtimes: the share of early-2025 kernel time left.

Documented in docs/engine.md section 5 ("Today's MLA kernels").
"""

from __future__ import annotations

import math

from .specs import AcceleratorSpec, ModelSpec, Workload

# Share of an MLA model's fixed MLA + MoE kernel time (runtime.MLA_FIXED_S_PER_LAYER and the
# runtime's moe_fixed_s_per_layer) that vLLM, SGLang and TensorRT-LLM builds from April 2025 on
# still pay: the MLA decode kernels (FlashMLA, FA3 MLA, SGLang's default on Hopper since PR
# #5210) and DeepGEMM's block-FP8 GEMMs (both open-sourced by DeepSeek in February 2025)
# replaced the early kernels. Hand-set from one source, tenstorrent/tt-inference-server issue
# #356 (DeepSeek-R1-0528, July 2025, one request): vLLM on 8x H100 at 16.1 ms a token needs 0.40
# of the early figure, SGLang on 2x 8 H100 at 23.1 ms needs 0.48; their mean, an estimate.
MLA_KERNEL_SHARE = 0.44
# Runtimes whose MLA path those kernels changed (llama.cpp runs its own ggml kernels).
MLA_KERNEL_RUNTIMES = frozenset({"vllm", "sglang", "trt-llm"})

# Achieved share of a card's dense 16-bit rate (attention runs on the BF16 latent cache) of the
# early-2025 Triton MLA decode kernels (SGLang's default before FlashInfer MLA / FlashMLA,
# vLLM's TRITON_MLA, the ROCm builds of both): their time grows with batch x context beyond
# the cache read (sgl-project/sglang PR #3550: Triton "deteriorated significantly as the
# prompt length increased"). From vllm-project/vllm PR #13747 (2025-02-25, 8x H200,
# DeepSeek-R1 TP8, 100 prompts of 3000 in / 1000 out): TRITON_MLA 634.90 and FLASHMLA 692.34
# output tokens/s, i.e. 13.1 ms more per decode step of 100 sequences at 3500 tokens mean
# context; with FlashMLA itself reading the cache at ~90 % of 4.8 TB/s (its README: 3000 GB/s
# on H800's 3.35), Triton's step is ~18.8 ms for 7.4e11 FLOPs a rank: ~40 TFLOPS of 989, 0.04.
EARLY_MLA_ATTENTION_SHARE = 0.04


def triton_attention_rate(
    acc: AcceleratorSpec, model: ModelSpec, workload: Workload, ranks: int
) -> float:
    """FLOP/s of the early Triton MLA decode kernel over `ranks` cards (inf: a run without it)."""
    if not (workload.triton_mla_decode and model.kv_lora_rank):
        return math.inf
    return acc.fp16_tflops * 1e12 * EARLY_MLA_ATTENTION_SHARE * ranks
