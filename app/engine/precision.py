"""Number formats: bits per weight, which tensor-core rate they run at, default KV format."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .errors import EngineInputError


@dataclass(frozen=True, slots=True)
class Precision:
    """A weight (or KV-cache) storage format."""

    name: str
    bits_per_weight: float  # effective average, including block scales
    compute: str  # tensor-core rate used for matmuls: "fp32" | "fp16" | "fp8" | "int8" | "fp4"
    family: str  # "float" | "int" (AWQ/GPTQ/bitsandbytes) | "gguf" (llama.cpp) | "mlx" (MLX)
    kv_default: str  # KV-cache format used when Workload.kv_cache_precision is None
    # Embedding and output matrices are left in 16-bit by AWQ/GPTQ/FP8 checkpoints.
    embeddings_16bit: bool
    source: str
    # MoE routed experts stored in another format than the rest (None: the same format).
    expert_bits_per_weight: float | None = None

    @property
    def bytes_per_weight(self) -> float:
        """Bytes per weight (bits / 8)."""
        return self.bits_per_weight / 8.0

    @property
    def expert_bytes_per_weight(self) -> float:
        """Bytes per routed-expert weight (the format's own unless experts have theirs)."""
        bits = self.expert_bits_per_weight
        return (self.bits_per_weight if bits is None else bits) / 8.0


_GGML = "ggml-org/llama.cpp ggml/src/ggml-common.h block layouts"
_QUANT_README = "ggml-org/llama.cpp tools/quantize/README.md bits/weight table"
_MLX = "ml-explore mlx.core.quantize docs: affine, group 64, 16-bit scale + bias"

_ALL = (
    Precision("fp32", 32.0, "fp32", "float", "fp32", False, "IEEE 754 single"),
    Precision("fp16", 16.0, "fp16", "float", "fp16", False, "IEEE 754 half"),
    Precision("bf16", 16.0, "fp16", "float", "bf16", False, "bfloat16"),
    # One scale per 128x128 block (DeepSeek-V3 FP8) adds 32/16384 bit: negligible.
    # KV cache in the activation dtype (bf16) unless FP8 KV is chosen: vLLM/SGLang
    # --kv-cache-dtype auto keeps the model dtype even for FP8/FP4 weight checkpoints.
    Precision("fp8", 8.0, "fp8", "float", "bf16", True, "OCP FP8 E4M3, per-tensor/block scales"),
    # W8A8 (SmoothQuant / compressed-tensors): one fp16 scale per output channel.
    Precision("int8", 8.0, "int8", "int", "bf16", True, "W8A8 per-channel scales"),
    # AWQ/GPTQ group 128: 4-bit weight + fp16 scale + 4-bit zero per 128 weights.
    Precision("int4", 4.0 + (16 + 4) / 128, "fp16", "int", "bf16", True, "AWQ/GPTQ group-128"),
    # NVFP4: E2M1 + one E4M3 scale per 16 weights (+ one fp32 per tensor).
    Precision("fp4", 4.0 + 8 / 16, "fp4", "float", "bf16", True, "NVIDIA NVFP4 (16-weight blocks)"),
    Precision(
        "nvfp4", 4.0 + 8 / 16, "fp4", "float", "bf16", True, "NVIDIA NVFP4 (16-weight blocks)"
    ),
    # MXFP4: E2M1 + one E8M0 scale per 32 weights (OCP MX spec; gpt-oss experts).
    Precision("mxfp4", 4.0 + 8 / 32, "fp4", "float", "bf16", True, "OCP MXFP4 (32-weight blocks)"),
    # MLX affine 4-bit (mlx.nn.quantize defaults, used by mlx_lm convert -q): group 64, one
    # scale and one bias per group in the model dtype (16-bit); Embedding layers are quantised
    # too. Run by MLX (resolve_runtime), whose quantised matmuls compute in 16-bit.
    # Cross-check: 70.55B x 4.5 / 8 = 39.7 GB; LM Studio lists mlx-community/Llama-3.3-70B-
    # Instruct-4bit at 39.71 GB (lmstudio-ai/lmstudio-bug-tracker#260, 2024-12-20).
    Precision("int4-mlx", 4.0 + (16 + 16) / 64, "fp16", "mlx", "bf16", False, _MLX),
    # QLoRA NormalFloat4: block 64 + double-quantised scales (Dettmers et al. 2023) ~4.127 bpw.
    Precision(
        "nf4", 4.0 + 8 / 64 + 32 / (64 * 256), "fp16", "int", "bf16", True, "bitsandbytes NF4"
    ),
    # GGUF: llama.cpp dequantises blocks inside its matmul kernels; we rate them at the FP16
    # tensor rate (its int8 MMQ path measures no faster than FP16 on the data we have), except
    # on a card without fast FP16, where it runs at the int8 dp4a rate (prep.matmul_compute).
    # GGUF: pure block formats use the ggml block size; the K_M mixes keep some tensors at a
    # higher type, so we use the whole-file average llama.cpp measured on Llama 3.1 8B.
    Precision("q8_0", 8.5008, "fp16", "gguf", "fp16", False, f"34 B/32 w; {_QUANT_README}"),
    Precision("q6_k", 6.5633, "fp16", "gguf", "fp16", False, f"210 B/256 w; {_QUANT_README}"),
    Precision(
        "q5_k_m", 5.7036, "fp16", "gguf", "fp16", False, f"Q5_K 176 B/256 mix; {_QUANT_README}"
    ),
    Precision(
        "q4_k_m", 4.8944, "fp16", "gguf", "fp16", False, f"Q4_K 144 B/256 mix; {_QUANT_README}"
    ),
    # Q4_0 is a pure format (18 B/32 w) except output.weight at Q6_K: ~+0.1 bpw on an 8B model.
    Precision("q4_0", 4.5, "fp16", "gguf", "fp16", False, f"18 B/32 w; {_GGML}"),
    # Llama 2 7B row of the same README (the Llama 3.1 table has no Q3_K_M row).
    Precision(
        "q3_k_m", 3.91, "fp16", "gguf", "fp16", False, f"Q3_K 110 B/256 mix; {_QUANT_README}"
    ),
    Precision("q2_k", 3.1593, "fp16", "gguf", "fp16", False, f"Q2_K 84 B/256 mix; {_QUANT_README}"),
    # Q4_1: Q4_0 plus a 16-bit minimum per block (20 B/32 w); pure like q4_0 (no README row).
    Precision("q4_1", 5.0, "fp16", "gguf", "fp16", False, f"20 B/32 w; {_GGML}"),
    # The _S mixes keep fewer tensors at a higher type than _M: Llama 3.1 8B file averages.
    Precision(
        "q5_k_s", 5.5704, "fp16", "gguf", "fp16", False, f"Q5_K 176 B/256 mix; {_QUANT_README}"
    ),
    Precision(
        "q3_k_s", 3.6429, "fp16", "gguf", "fp16", False, f"Q3_K 110 B/256 mix; {_QUANT_README}"
    ),
    # IQ1_S: 50 B/256 w. The pure block, not the README's Llama 3.1 8B file average (2.0042 bpw):
    # that mix keeps embeddings/output at higher types, 13 % of an 8B model's weights but 0.3 %
    # of DeepSeek-R1's, the size of model this format is used for.
    Precision("iq1_s", 1.5625, "fp16", "gguf", "fp16", False, f"50 B/256 w; {_GGML}"),
    # gpt-oss "F16" GGUF (ggml-org convert_hf_to_gguf --outtype f16): the routed experts stay
    # MXFP4 (17 B/32 w, ggml block_mxfp4), attention, embeddings and output are F16.
    Precision(
        "mxfp4-f16",
        16.0,
        "fp16",
        "gguf",
        "fp16",
        True,
        f"experts MXFP4 17 B/32 w, the rest F16; {_GGML}",
        expert_bits_per_weight=4.0 + 8 / 32,
    ),
)

PRECISIONS: MappingProxyType[str, Precision] = MappingProxyType({p.name: p for p in _ALL})

# Kernel backends whose BF16 weight GEMMs run a scalar FP32 shader: ggml-vulkan builds
# matmul_bf16 / matmul_id_bf16 "reusing CREATE_MM from the fp32 path" with scalar tiles unless the
# device reports bf16 cooperative matrices (ggml-org/llama.cpp ggml/src/ggml-vulkan/ggml-vulkan.cpp,
# ggml_vk_load_shaders); the only Vulkan BF16 rows (kyuz0 Strix Halo, RADV, b6486) log "bf16: 0".
# The engine has no device-capability input, so it assumes that case for Vulkan.
BF16_SCALAR_BACKENDS = frozenset({"vulkan"})


# GGUF file types for formats outside the gguf family: 16/32-bit floats and MXFP4
# (gguf-py GGMLQuantizationType).
_GGUF_FLOAT_TYPES = MappingProxyType(
    {"fp32": "F32", "fp16": "F16", "bf16": "BF16", "mxfp4": "MXFP4"}
)


def is_gguf_type(precision: Precision) -> bool:
    """True when a GGUF file can hold weights in this very format."""
    return precision.family == "gguf" or precision.name in _GGUF_FLOAT_TYPES


def gguf_file_type(precision: Precision) -> str:
    """The GGUF type a llama.cpp file of this precision is named for: its own for GGUF formats
    and the float types GGUF has, else the closest one llama.cpp ships (GGUF has no FP8, INT8 or
    AWQ/GPTQ type: 8-bit formats become Q8_0, smaller ones Q4_K_M)."""
    if precision.family == "gguf":
        return precision.name.upper()
    if precision.name in _GGUF_FLOAT_TYPES:
        return _GGUF_FLOAT_TYPES[precision.name]
    return "Q8_0" if precision.bits_per_weight >= 8 else "Q4_K_M"


def gemm_compute(precision: Precision, backend: str | None) -> str:
    """The rate kind a precision's weight GEMMs run at on a kernel backend: "fp32" for BF16 on
    a backend without a bf16 matrix path (BF16_SCALAR_BACKENDS), else precision.compute."""
    if precision.name == "bf16" and backend in BF16_SCALAR_BACKENDS:
        return "fp32"
    return precision.compute


# MXFP4 in a GGUF file is one more ggml block format (block_mxfp4, 17 B / 32 weights) to
# llama.cpp and Ollama: ggml-cuda's MMQ takes it like Q4_0 or Q8_0 (ggml_cuda_should_use_mmq lists
# GGML_TYPE_MXFP4 with them; on Turing and newer MMQ serves every batch size), quantising the
# activations to q8_1 and multiplying on int8 MMA, and MMVQ does the same dot products for
# decode. It is not the card's FP4 tensor rate, which a vLLM / TensorRT-LLM FP4 GEMM reaches.
# Native FP4 MMA on Blackwell came with ggml-org/llama.cpp PR #17906 (2025-12, "experimental",
# pp512 1.26x on an RTX PRO 6000, not FP4's 2x over int8): the engine rates MXFP4 GGUF like
# the other GGUF formats, an estimate that is a little slow for those builds.
GGML_BLOCK_FP4 = frozenset({"mxfp4"})


def ggml_gemm_compute(precision: Precision, backend: str | None) -> str:
    """gemm_compute for llama.cpp and Ollama: a ggml block format (MXFP4 included) at the
    GGUF rate."""
    if precision.name in GGML_BLOCK_FP4:
        return PRECISIONS["q4_0"].compute
    return gemm_compute(precision, backend)

# KV-cache formats (vLLM --kv-cache-dtype, llama.cpp --cache-type-k/v).
KV_BITS: MappingProxyType[str, float] = MappingProxyType(
    {
        "fp32": 32.0,
        "fp16": 16.0,
        "bf16": 16.0,
        "fp8": 8.0,
        "int8": 8.0,
        "q8_0": 8.5,
        "q4_0": 4.5,
    }
)

# Bytes per parameter used by rule_of_thumb_gb and the training states.
RULE_OF_THUMB_FACTOR = 1.2


def get_precision(name: str, field: str = "precision") -> Precision:
    """Look a precision up by name, raising EngineInputError naming the field."""
    p = PRECISIONS.get(name.lower() if name else name)
    if p is None:
        known = ", ".join(PRECISIONS)
        raise EngineInputError(field, f"unknown precision {name!r}; known: {known}")
    return p


def kv_bytes(name: str, field: str = "kv_cache_precision") -> float:
    """Bytes per KV element for a KV-cache format name."""
    bits = KV_BITS.get(name.lower() if name else name)
    if bits is None:
        known = ", ".join(KV_BITS)
        raise EngineInputError(field, f"unknown KV-cache precision {name!r}; known: {known}")
    return bits / 8.0


def rule_of_thumb_gb(params: int, precision: str | Precision) -> float:
    """Parameters x bytes per parameter x 1.2, in GB (1e9 bytes)."""
    p = precision if isinstance(precision, Precision) else get_precision(precision)
    return params * p.bytes_per_weight * RULE_OF_THUMB_FACTOR / 1e9
