"""Today's MLA decode kernels in the serving runtimes: the share of early-2025 kernel time left.

Documented in docs/engine.md section 5 ("Today's MLA kernels").
"""

from __future__ import annotations

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
