"""Training and fine-tuning: recipes, FLOPs per token, FP8, the gradient exchange (training.py)."""

from __future__ import annotations

import pytest

from app.engine import BuildSpec, InterNodeLink, IntraNodeLink, Workload, estimate

from .shapes import GEFORCE_4090, H200_SXM, LLAMA_3_8B, LLAMA_3_70B


def test_qlora_8b_at_4k_fits_a_24_gb_card_with_defaults():
    e = estimate(BuildSpec("1x RTX 4090", GEFORCE_4090), LLAMA_3_8B, Workload(mode="qlora"))
    assert e.fits, e.verdict
    assert e.training is not None and e.training.recomputation
    off = estimate(
        BuildSpec("1x RTX 4090", GEFORCE_4090),
        LLAMA_3_8B,
        Workload(mode="qlora", activation_recomputation=False),
    )
    assert off.memory.activations_gb > e.memory.activations_gb


def test_recomputation_costs_8n_instead_of_6n():
    build = BuildSpec("8x H200", H200_SXM, 1, 8, IntraNodeLink("nvswitch", 450))
    plain = estimate(build, LLAMA_3_8B, Workload(mode="training", context_tokens=128, zero_stage=3))
    recompute = estimate(
        build,
        LLAMA_3_8B,
        Workload(mode="training", context_tokens=128, zero_stage=3, activation_recomputation=True),
    )
    assert plain.training is not None and recompute.training is not None
    assert recompute.training.flops_per_token / plain.training.flops_per_token == pytest.approx(
        8 / 6, rel=0.02
    )


def test_fp8_training_is_not_twice_bf16():
    build = BuildSpec("8x H200", H200_SXM, 1, 8, IntraNodeLink("nvswitch", 450))
    # Large steps (8 x 4,096 tokens per replica): the gradient exchange hides under backward.
    bf16 = estimate(
        build, LLAMA_3_8B, Workload(mode="training", context_tokens=4096, batch=8, zero_stage=3)
    )
    fp8 = estimate(
        build,
        LLAMA_3_8B,
        Workload(mode="training", precision="fp8", context_tokens=4096, batch=8, zero_stage=3),
    )
    assert bf16.training is not None and fp8.training is not None
    ratio = fp8.training.tokens_per_s / bf16.training.tokens_per_s
    assert 1.3 <= ratio <= 1.5


def test_inter_node_link_shows_in_data_parallel_training_time():
    def cluster(kind: str, gbps: float) -> BuildSpec:
        return BuildSpec(
            "4 nodes", H200_SXM, 4, 8, IntraNodeLink("nvswitch", 450), InterNodeLink(kind, gbps)
        )

    w = Workload(mode="training", context_tokens=2048, zero_stage=3, training_tokens=10**9)
    ib = estimate(cluster("infiniband", 3200), LLAMA_3_70B, w)
    eth = estimate(cluster("ethernet", 100), LLAMA_3_70B, w)
    assert ib.training is not None and eth.training is not None
    assert eth.training.time_to_train_hours > ib.training.time_to_train_hours
    assert eth.training.communication_s_per_step > ib.training.communication_s_per_step
