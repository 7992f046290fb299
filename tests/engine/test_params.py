"""Parameter counts and shapes read from Hugging Face config.json (params.py, model_shape.py)."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import EngineInputError

from .shapes import (
    DEEPSEEK_V3,
    GEMMA3_27B,
    GPT_OSS_120B,
    KIMI_K2,
    LLAMA_8B,
    LLAMA_70B,
    LLAMA_405B,
    MIXTRAL,
    QWEN3_235B,
    spec,
)


@pytest.mark.parametrize(
    ("config", "total", "active", "attr"),
    [
        (LLAMA_8B, 8.03e9, None, "params_active"),
        (LLAMA_70B, 70.6e9, None, "params_active"),
        (LLAMA_405B, 405e9, None, "params_active"),
        # Mistral and Qwen publish active counts that include the embeddings.
        (MIXTRAL, 46.7e9, 12.9e9, "params_active"),
        (QWEN3_235B, 235e9, 22e9, "params_active"),
        # DeepSeek (README_WEIGHTS: 36.7B), Kimi and gpt-oss count matmul parameters per token.
        (DEEPSEEK_V3, 671e9, 36.7e9, "params_active_matmul"),
        (GPT_OSS_120B, 116.83e9, 5.13e9, "params_active_matmul"),
    ],
)
def test_parameter_counts_within_one_percent(config, total, active, attr):
    m = spec(config)
    assert m.params_total == pytest.approx(total, rel=0.01)
    if active:
        assert getattr(m, attr) == pytest.approx(active, rel=0.01)


def test_kimi_k2_counts_match_rounded_published_figures():
    m = spec(KIMI_K2)
    # "1T" is rounded to one significant figure; the architecture gives 1.026T.
    assert 0.95e12 <= m.params_total < 1.05e12
    assert m.params_active_matmul == pytest.approx(32e9, rel=0.01)


def test_deepseek_v3_excludes_the_mtp_module():
    assert spec(DEEPSEEK_V3).params_total == pytest.approx(671e9, rel=0.005)  # not 685B


def test_mla_kv_cache_is_far_smaller_than_mha_equivalent():
    mla = spec(DEEPSEEK_V3)
    mha = dataclasses.replace(mla, kv_lora_rank=None, head_dim=128)
    assert mla.kv_cache_bytes_per_token("bf16") * 20 < mha.kv_cache_bytes_per_token("bf16")
    assert mla.kv_cache_bytes_per_token("bf16") == (512 + 64) * 61 * 2


def test_gemma3_sliding_window_layers_follow_its_five_to_one_pattern():
    gemma = spec(GEMMA3_27B)
    assert gemma.sliding_window == 1024 and gemma.sliding_window_layers == 52


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (dict(LLAMA_8B, num_hidden_layers=0), "num_hidden_layers"),
        ({"model_type": "llama"}, "num_hidden_layers"),
        (dict(LLAMA_8B, num_key_value_heads=5), "num_key_value_heads"),
        (dict(LLAMA_8B, hidden_size=4096.5), "hidden_size"),
    ],
)
def test_a_bad_config_names_its_field(config, field):
    with pytest.raises(EngineInputError) as err:
        spec(config)
    assert err.value.field == field


# GLM-4.5-Air (seed_data/models.yaml, issue 14): fields of the HF config.json as vime's
# scripts/models/glm4.5-106B-A12B.sh @b332ffc transcribes them.
GLM_45_AIR = {
    "model_type": "glm4_moe",
    "hidden_size": 4096,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "num_hidden_layers": 46,
    "num_attention_heads": 96,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151552,
    "n_routed_experts": 128,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 1,
    "attention_bias": True,
    "tie_word_embeddings": False,
}


def test_glm4_moe_has_one_dense_layer_and_a_shared_expert_per_moe_layer():
    m = spec(GLM_45_AIR)
    assert (m.dense_layers, m.moe_layers) == (1, 45)
    # One shared expert of the routed width, on every MoE layer, beside the router.
    assert m.moe_layer_fixed_params == 3 * 4096 * 1408 + 4096 * 128
    # Z.ai publishes "106B total, 12B active" (rounded to whole billions); its active
    # figure leaves out the input embedding and the output head.
    assert m.params_total == pytest.approx(106e9, rel=0.01)
    body_active = m.params_active - m.embedding_params - m.lm_head_params
    assert 11.5e9 <= body_active < 12.5e9
