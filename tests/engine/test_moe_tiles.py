"""llama.cpp's routed-expert GEMMs run whole 128-column tiles per expert (moe_tiles.py)."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import BuildSpec, Workload, estimate
from app.engine.moe_tiles import MMQ_X_MAX, expected_tiles, tile_use

from .shapes import H100, QWEN3_235B, spec


def test_tiles_count_an_experts_tokens_in_whole_tiles() -> None:
    # Many tokens per expert: ceil(Y / 128) ~ mean / 128 + 1/2; none: no tile at all.
    assert expected_tiles(0.0) == 0.0
    assert expected_tiles(1280.0) == pytest.approx(10.5, abs=0.05)
    assert expected_tiles(16.0) == pytest.approx(1.0, abs=1e-6)  # P(Y = 0) ~ 1e-7


def test_few_tokens_per_expert_use_a_fraction_of_each_tile() -> None:
    assert tile_use(16.0) == pytest.approx(16 / MMQ_X_MAX, rel=1e-3)
    assert tile_use(64.0) == pytest.approx(0.5, rel=1e-3)
    assert tile_use(16.0) < tile_use(64.0) < tile_use(256.0) < tile_use(4096.0) <= 1.0
    assert tile_use(4096.0) > 0.95


def test_a_larger_ubatch_prefills_llama_cpp_moe_faster_per_token() -> None:
    # A Qwen3-30B-A3B shape (128 experts, top 8) on one card: 512-token passes give 32 tokens
    # per expert, a quarter of each tile; 2048-token passes give 128. The routed experts'
    # time shrinks far more than the fewer weight reads alone would make it (vLLM's figure).
    model = spec(
        {**QWEN3_235B, "num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 32,
         "moe_intermediate_size": 768, "intermediate_size": 6144}
    )
    build = BuildSpec("1x H100", dataclasses.replace(H100, vendor="NVIDIA"))
    w = Workload(precision="q8_0", runtime="llama.cpp", prompt_tokens=2048, context_tokens=2100)

    def gain(workload: Workload) -> float:
        small = estimate(build, model, workload).throughput.prefill_tokens_per_s
        one_pass = dataclasses.replace(workload, prefill_token_budget=2048)
        return estimate(build, model, one_pass).throughput.prefill_tokens_per_s / small

    assert gain(w) > 1.5
    assert gain(dataclasses.replace(w, precision="fp8", runtime="vllm")) < 1.2
