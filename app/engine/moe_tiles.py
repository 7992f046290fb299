"""Column tiles of llama.cpp's grouped routed-expert GEMMs in a prefill pass (issue 12).

ggml-cuda multiplies a quantised MoE layer in one MMQ launch with the token ids
(`ggml_cuda_mul_mat_id` -> `ggml_cuda_mul_mat_q(..., ids, ...)`, ggml-org/llama.cpp
`ggml/src/ggml-cuda/ggml-cuda.cu`). The launch picks one column-tile width for all experts
(`mul_mat_q_case`, `mmq.cuh`: the fewest waves, up to `get_mmq_x_max_host`, 128 on Turing and
newer and on AMD MFMA / WMMA), so a prompt pass runs 128-wide tiles and an expert's `c` tokens
fill `ceil(c / 128)` of them: a tile costs the same MMA work however many of its columns hold
tokens. ggml-vulkan's `matmul_id` does the same with its large 128 x 128 tile, chosen from the
pass's token count, one column block per expert (`ggml_vk_guess_matmul_id_pipeline`); Metal's
kernel is assumed to behave alike (no llama.cpp MoE prefill row on Apple). With uniform routing
an expert's tokens are Poisson with mean `pass tokens x top_k / experts`. Stdlib only.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from .precision import GGML_BLOCK_FP4, Precision

if TYPE_CHECKING:
    from .model_shape import ModelSpec
    from .plan import Prepared

MMQ_X_MAX = 128  # ggml-cuda mmq.cuh get_mmq_x_max_host (MMA-capable NVIDIA, AMD MFMA / WMMA)
_TAIL_SIGMAS = 12.0  # Poisson mass beyond mean + 12 sigma is below 1e-30


@lru_cache(maxsize=4096)
def expected_tiles(mean_tokens: float, width: int = MMQ_X_MAX) -> float:
    """E[ceil(Y / width)] for Y ~ Poisson(mean_tokens): the column tiles one expert's GEMM
    runs (an expert no token chose runs none)."""
    if mean_tokens <= 0.0:
        return 0.0
    top = int(mean_tokens + _TAIL_SIGMAS * math.sqrt(mean_tokens) + width)
    log_mean = math.log(mean_tokens)
    total = 0.0
    for k in range(1, top + 1):
        pmf = math.exp(k * log_mean - mean_tokens - math.lgamma(k + 1.0))
        total += pmf * -(-k // width)
    return total


def tile_use(mean_tokens: float, width: int = MMQ_X_MAX) -> float:
    """Share of the routed experts' tile columns that hold tokens (1.0: full tiles)."""
    tiles = expected_tiles(round(mean_tokens, 3), width)
    return 1.0 if tiles <= 0.0 else min(1.0, mean_tokens / (width * tiles))


def grouped_experts(precision: Precision) -> bool:
    """True when llama.cpp multiplies the routed experts in one grouped kernel over the pass's
    tiles: a ggml block format (MXFP4 included; ggml-cuda's MMQ, Vulkan's matmul_id). 16-bit
    experts take ggml-cuda's per-expert BLAS fallback (`ggml_cuda_mul_mat_id`), not modelled
    here."""
    if precision.name in GGML_BLOCK_FP4:
        return True
    bits = precision.expert_bits_per_weight or precision.bits_per_weight
    return precision.family == "gguf" and bits < 16.0


def routed_tile_use(p: Prepared, model: ModelSpec, tokens: int) -> float:
    """tile_use of the routed-expert GEMMs of a prefill of `tokens` tokens in passes of the
    runtime's chunk, for a ggml runtime (llama.cpp, Ollama) on quantised experts; 1.0
    elsewhere (other runtimes' grouped GEMMs keep their fitted share alone)."""
    rt = p.runtime
    experts = model.n_routed_experts
    if not rt.ggml_layout or experts <= 0 or not grouped_experts(p.precision):
        return 1.0
    pass_tokens = min(tokens, rt.prefill_chunk_tokens)
    return tile_use(pass_tokens * model.num_experts_per_tok / experts)
