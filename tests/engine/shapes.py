"""Model shapes, accelerators and builds shared by the engine tests.

Model shapes are the models' Hugging Face config.json fields (the config URLs are in
seed_data/models.yaml); accelerator figures are the vendors' datasheet numbers (dense rates, no
sparsity), as in seed_data/accelerators.yaml.
"""

from __future__ import annotations

from typing import Any

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    InterNodeLink,
    IntraNodeLink,
    ModelSpec,
    model_spec_from_hf_config,
)

LLAMA_8B = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}
LLAMA_70B = {
    "model_type": "llama",
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
}
LLAMA_405B = {
    "model_type": "llama",
    "num_hidden_layers": 126,
    "hidden_size": 16384,
    "num_attention_heads": 128,
    "num_key_value_heads": 8,
    "intermediate_size": 53248,
    "vocab_size": 128256,
}
MIXTRAL = {
    "model_type": "mixtral",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}
QWEN3_235B = {
    "model_type": "qwen3_moe",
    "num_hidden_layers": 94,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "vocab_size": 151936,
    "num_experts": 128,
    "num_experts_per_tok": 8,
}
DEEPSEEK_V3 = {
    "model_type": "deepseek_v3",
    "num_hidden_layers": 61,
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "vocab_size": 129280,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "n_shared_experts": 1,
    "first_k_dense_replace": 3,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "max_position_embeddings": 163840,
}
KIMI_K2 = dict(
    DEEPSEEK_V3,
    model_type="kimi_k2",
    num_attention_heads=64,
    num_key_value_heads=64,
    vocab_size=163840,
    n_routed_experts=384,
    first_k_dense_replace=1,
)
GPT_OSS_120B = {
    "model_type": "gpt_oss",
    "num_hidden_layers": 36,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "vocab_size": 201088,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "attention_bias": True,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
}
GEMMA3_27B = {
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "num_hidden_layers": 62,
        "hidden_size": 5376,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "intermediate_size": 21504,
        "vocab_size": 262208,
        "sliding_window": 1024,
    },
}

RTX4090 = AcceleratorSpec(
    "RTX 4090", 24, 1008, 165.2, fp8_tflops=660.6, int8_tops=660.6, tdp_w=450, price_usd=1599
)
H200 = AcceleratorSpec(
    "H200", 141, 4800, 989, fp8_tflops=1979, int8_tops=1979, tdp_w=700, price_usd=32000
)
H100 = AcceleratorSpec("H100 SXM", 80, 3350, 989, fp8_tflops=1979, tdp_w=700)
RTX6000 = AcceleratorSpec("RTX 6000 Ada", 48, 960, 364, fp8_tflops=728, tdp_w=300)
M2_ULTRA = AcceleratorSpec("M2 Ultra", 192, 800, 27.2, memory_kind="unified")
# The catalogue's Tesla P40: FP16 at 1/64 of FP32 (estimate), NVIDIA's 47 TOPS INT8.
P40 = AcceleratorSpec(
    "NVIDIA Tesla P40", 24, 346, 0.18, int8_tops=47, vendor="NVIDIA", memory_type="GDDR5"
)
DESKTOP = BuildSpec("4x RTX 4090", RTX4090, 1, 4, IntraNodeLink("pcie", 32))
CLUSTER = BuildSpec(
    "2x DGX H200", H200, 2, 8, IntraNodeLink("nvswitch", 450), InterNodeLink("infiniband", 400)
)


def spec(config: dict[str, Any], **kw: Any) -> ModelSpec:
    """The ModelSpec of a config.json dict, named "test"."""
    return model_spec_from_hf_config(config, name="test", **kw)


# The issue 11 rigs: a GeForce 4090 (no PCIe peer-to-peer on the stock driver; FP8 at the
# GeForce half rate with FP32 accumulate), four of them on PCIe, and two DGX H200 nodes.
LLAMA_3_8B = model_spec_from_hf_config(LLAMA_8B, name="Llama 3 8B")
LLAMA_3_70B = model_spec_from_hf_config(LLAMA_70B, name="Llama 3 70B")
GEFORCE_4090 = AcceleratorSpec(
    "NVIDIA GeForce RTX 4090", 24, 1008, 165.2, fp8_tflops=330.3, tdp_w=450, price_usd=1599
)
FOUR_4090 = BuildSpec(
    "4x RTX 4090", GEFORCE_4090, 1, 4, IntraNodeLink("pcie", 25), price_usd=10000
)
H200_SXM = AcceleratorSpec("H200 SXM", 141, 4800, 989, fp8_tflops=1979, tdp_w=700)
TWO_DGX_H200 = BuildSpec(
    "2x DGX H200",
    H200_SXM,
    2,
    8,
    IntraNodeLink("nvswitch", 450),
    InterNodeLink("infiniband", 3200),
    price_usd=930000,
)
