"""Gated DeltaNet (linear-attention) layers: Qwen3-Next, Qwen3.5 (model_shape.py, params.py)."""

from __future__ import annotations

import pytest

from app.engine import BuildSpec, Workload, estimate
from app.engine.prepared import kv_tokens_weighted, prepare

from .shapes import RTX4090, spec
from .test_parts import ONE_4090

# Qwen3-Next-80B-A3B: THUDM/slime scripts/models/qwen3-next-80B-A3B.sh @af61a8e for the widths,
# transformers' Qwen3NextConfig @008e574 for the linear-attention heads (its defaults are the
# 80B-A3B's); full attention on every fourth layer.
QWEN3_NEXT = {
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "intermediate_size": 5120,
    "num_hidden_layers": 48,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "vocab_size": 151936,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "tie_word_embeddings": False,
}

# Qwen3.5-35B-A3B (THUDM/slime scripts/models/qwen3.5-35B-A3B.sh @10cefc3), as its config.json
# nests it: a text_config with layer_types, an explicit output gate and no dense MLP width.
QWEN35_35B_TEXT = {
    "model_type": "qwen3_5_moe_text",
    "hidden_size": 2048,
    "num_hidden_layers": 40,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "vocab_size": 248320,
    "num_experts": 256,
    "num_experts_per_tok": 8,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "attn_output_gate": True,
    "layer_types": ["linear_attention"] * 3 * 10 + ["full_attention"] * 10,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "tie_word_embeddings": False,
}


def test_qwen3_next_counts_three_linear_layers_in_four_and_its_published_size():
    m = spec(QWEN3_NEXT)
    assert (m.linear_attention_layers, m.cached_attention_layers) == (36, 12)
    # "80B total, 3B activated", whole billions; the active figure without embedding and head.
    assert 79.5e9 <= m.params_total < 80.5e9
    assert 2.5e9 <= m.params_active - m.embedding_params - m.lm_head_params < 3.5e9


def test_gated_deltanet_layer_weights_follow_its_projections():
    m = spec(QWEN3_NEXT)
    full = spec({**QWEN3_NEXT, "linear_num_value_heads": None, "full_attention_interval": 1})
    assert full.linear_attention_layers == 0
    h, conv = 2048, 2 * 16 * 128 + 32 * 128
    linear_layer = h * (conv + 32 * 128) + h * 2 * 32 + conv * 4 + 2 * 32 + 128 + 32 * 128 * h
    gated_full_layer = h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h
    norms = 2 * h
    assert m.attention_params_per_layer * 48 == 36 * (linear_layer + norms) + 12 * (
        gated_full_layer + norms
    )
    # Without the config's linear heads every layer is gated full attention.
    assert full.attention_params_per_layer == gated_full_layer + norms


def test_only_full_attention_layers_keep_a_kv_cache():
    m = spec(QWEN3_NEXT)
    per_layer = 2 * 2 * 256 * 2  # K and V, 2 KV heads of 256, 16-bit
    assert m.kv_cache_bytes_per_token("bf16") == 12 * per_layer
    # The delta-rule state (32 value heads x 128 x 128) and 3 conv steps of q, k, v, in FP32.
    assert m.linear_state_bytes == 4 * (32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128))


def test_the_state_is_held_and_read_whatever_the_context():
    m = spec(QWEN3_NEXT)
    short = prepare(ONE_4090, m, Workload(precision="q4_k_m", context_tokens=4096))
    long = prepare(ONE_4090, m, Workload(precision="q4_k_m", context_tokens=8192))
    kv_tl = short.kv_token_layer_bytes
    # The cache grows by the full-attention layers only; the 36 states are there at any length.
    assert long.kv_seq_bytes - short.kv_seq_bytes == pytest.approx(4096 * 12 * kv_tl)
    assert short.kv_seq_bytes == pytest.approx(4096 * 12 * kv_tl + 36 * m.linear_state_bytes)
    # A decode step reads and rewrites each state: twice its bytes, at every context.
    state_read = kv_tokens_weighted(short, 1) - 12
    assert state_read * kv_tl == pytest.approx(2 * 36 * m.linear_state_bytes)
    assert kv_tokens_weighted(long, 8192) - kv_tokens_weighted(long, 4096) == 4096 * 12


def test_qwen35_text_config_reads_layer_types_and_needs_no_dense_width():
    m = spec({"model_type": "qwen3_5_moe", "text_config": QWEN35_35B_TEXT})
    assert (m.linear_attention_layers, m.moe_layers, m.dense_layers) == (30, 40, 0)
    assert m.attn_output_gate
    # llama-bench prints 34.66 B for the text model's GGUF (no vision tower, no MTP layer).
    assert m.params_total == pytest.approx(34.66e9, rel=0.001)


def test_a_hybrid_needs_less_cache_and_decodes_faster_than_its_full_attention_reading():
    hybrid = spec({"model_type": "qwen3_5_moe", "text_config": QWEN35_35B_TEXT})
    as_full = spec(
        {
            **QWEN35_35B_TEXT,
            "layer_types": None,
            "linear_num_value_heads": None,
            "model_type": "qwen3_moe",
        }
    )
    one = BuildSpec("RTX 4090", RTX4090)
    long = Workload(precision="q4_k_m", context_tokens=65536, runtime="llama.cpp")
    # Ten cached layers instead of forty: at 64k tokens only the hybrid fits on the card.
    assert estimate(one, hybrid, long).fits and not estimate(one, as_full, long).fits
    work = Workload(precision="q4_k_m", context_tokens=16384, runtime="llama.cpp")
    fast, slow = estimate(one, hybrid, work).throughput, estimate(one, as_full, work).throughput
    assert fast and slow
    assert fast.decode_tokens_per_s > slow.decode_tokens_per_s
