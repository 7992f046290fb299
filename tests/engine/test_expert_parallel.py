"""Expert parallel with data-parallel attention as a serving plan (issue 17)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    InterNodeLink,
    IntraNodeLink,
    ModelSpec,
    Workload,
    estimate,
    model_spec_from_hf_config,
)
from app.engine.expert_parallel import ExpertParallel, all_to_all_s, ep_sizes
from app.engine.serving import ServiceLevel, ServingWorkload, best_at_slo, serving_curve

from .shapes import CLUSTER, DEEPSEEK_V3, H100, H200, LLAMA_70B, MIXTRAL, QWEN3_235B

DGX_H200 = BuildSpec(
    "DGX H200", H200, 1, 8, IntraNodeLink("nvswitch", 450), power_w=10_200, price_usd=400_000
)
DEEPSEEK = model_spec_from_hf_config(DEEPSEEK_V3, name="DeepSeek-V3")
QWEN3 = model_spec_from_hf_config(QWEN3_235B, name="Qwen3-235B-A22B")
LLAMA70 = model_spec_from_hf_config(LLAMA_70B, name="Llama 3.1 70B")
FP8 = Workload(precision="fp8")
CHAT = ServingWorkload(input_tokens=1024, output_tokens=1024)
# Many users at a modest per-user speed: the throughput end of the curve.
HIGH_LOAD = ServiceLevel(tokens_per_s_per_user_min=10, concurrent_users=5000)


@pytest.mark.parametrize(
    ("runtime", "model"),
    [("vllm", DEEPSEEK), ("vllm", QWEN3), ("sglang", DEEPSEEK)],
    ids=["vllm-DeepSeek-V3", "vllm-Qwen3-235B", "sglang-DeepSeek-V3"],
)
def test_expert_parallel_is_chosen_at_high_concurrency_and_beats_tp8(
    model: ModelSpec, runtime: str
) -> None:
    wl = replace(FP8, runtime=runtime)
    chosen = serving_curve(DGX_H200, model, wl, CHAT, HIGH_LOAD)
    tp8 = serving_curve(DGX_H200, model, replace(wl, tensor_parallel=8), CHAT, HIGH_LOAD)
    assert chosen.plan.expert_parallel == 8 and chosen.plan.tensor_parallel == 1
    assert "expert parallel 8" in chosen.plan.description
    assert chosen.at_slo is not None and tp8.at_slo is not None
    assert chosen.at_slo.point.tokens_per_s_total > tp8.at_slo.point.tokens_per_s_total
    assert chosen.at_slo.copies_needed is not None and tp8.at_slo.copies_needed is not None
    assert chosen.at_slo.copies_needed <= tp8.at_slo.copies_needed
    assert any("Expert parallel 8" in f.message for f in chosen.findings)


def test_sglang_qwen3_at_high_concurrency_picks_a_plan_that_beats_tp8() -> None:
    # SGLang's fitted routed-expert prefill share is at its grid floor (docs/engine.md §7): its
    # MoE prompts prefill slowly, and four TP2 replicas then serve more than EP8. Whatever the
    # search picks must beat one TP8 group.
    wl = replace(FP8, runtime="sglang")
    chosen = serving_curve(DGX_H200, QWEN3, wl, CHAT, HIGH_LOAD)
    tp8 = serving_curve(DGX_H200, QWEN3, replace(wl, tensor_parallel=8), CHAT, HIGH_LOAD)
    assert chosen.at_slo is not None and tp8.at_slo is not None
    assert chosen.at_slo.point.tokens_per_s_total > tp8.at_slo.point.tokens_per_s_total


def test_deepseek_on_vllm_runs_expert_parallel_over_the_whole_node() -> None:
    chosen = serving_curve(DGX_H200, DEEPSEEK, FP8, CHAT, HIGH_LOAD)
    assert chosen.plan.expert_parallel == 8 and chosen.plan.tensor_parallel == 1


def test_the_fast_slo_search_picks_the_same_expert_parallel_plan() -> None:
    curve = serving_curve(DGX_H200, DEEPSEEK, FP8, CHAT, HIGH_LOAD)
    found = best_at_slo(DGX_H200, DEEPSEEK, FP8, CHAT, HIGH_LOAD)
    assert found is not None and curve.at_slo is not None
    assert found[0] == curve.plan
    assert found[1].point.concurrency == curve.at_slo.point.concurrency


def test_the_launch_command_runs_expert_parallel_in_each_runtimes_form() -> None:
    commands = {
        rt: serving_curve(DGX_H200, DEEPSEEK, replace(FP8, runtime=rt), CHAT, HIGH_LOAD)
        .plan.launch_command
        for rt in ("vllm", "sglang", "trt-llm")
    }
    assert (
        "--tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel"
        in commands["vllm"]
    )
    assert "--tp 8 --dp 8 --ep 8 --enable-dp-attention" in commands["sglang"]
    assert "--tp_size 8 --pp_size 1 --ep_size 8" in commands["trt-llm"]
    assert "enable_attention_dp: true" in commands["trt-llm"]


def test_data_parallel_attention_holds_many_more_requests_than_tp8_for_mla() -> None:
    # TP replicates the MLA latent cache on every rank; DP attention keeps each request's
    # cache on one GPU only, so the same memory holds several times more requests.
    chosen = serving_curve(DGX_H200, DEEPSEEK, FP8, CHAT, HIGH_LOAD)
    tp8 = serving_curve(DGX_H200, DEEPSEEK, replace(FP8, tensor_parallel=8), CHAT)
    assert chosen.max_concurrency > 4 * tp8.max_concurrency


def test_one_user_at_a_strict_speed_keeps_the_tensor_parallel_plan() -> None:
    # One request decodes faster when all eight GPUs split every weight read (TP) than when
    # one GPU reads the whole replicated attention (EP): at a tight per-user limit TP wins
    # (one request: ~57 tokens/s under TP 8, ~41 under EP 8, today's MLA kernels).
    slo = ServiceLevel(tokens_per_s_per_user_min=48)
    curve = serving_curve(DGX_H200, DEEPSEEK, FP8, CHAT, slo)
    assert curve.at_slo is not None
    assert curve.plan.expert_parallel == curve.plan.tensor_parallel == 8


def test_llama_cpp_never_uses_expert_parallel() -> None:
    wl = replace(FP8, runtime="llama.cpp", precision="q4_k_m")
    assert ep_sizes(DGX_H200, QWEN3, "llama.cpp") == ()
    curve = serving_curve(DGX_H200, QWEN3, wl, CHAT, HIGH_LOAD)
    assert "expert parallel" not in curve.plan.description
    assert "--enable-expert-parallel" not in curve.plan.launch_command


def test_dense_models_never_use_expert_parallel() -> None:
    assert ep_sizes(DGX_H200, LLAMA70, "vllm") == ()
    curve = serving_curve(DGX_H200, LLAMA70, FP8, CHAT, HIGH_LOAD)
    assert curve.plan.expert_parallel == 1
    assert "expert parallel" not in curve.plan.description


def test_ep_sizes_are_the_node_and_the_whole_cluster_when_the_experts_divide() -> None:
    assert ep_sizes(CLUSTER, DEEPSEEK, "sglang") == (8, 16)  # 256 experts over 8 and 16
    mixtral = model_spec_from_hf_config(MIXTRAL, name="Mixtral")
    assert ep_sizes(CLUSTER, mixtral, "vllm") == (8,)  # 8 experts cannot split over 16


def test_all_to_all_time_is_bytes_over_the_link_plus_latency_per_moe_layer() -> None:
    card = AcceleratorSpec("card", 80, 2000, 500)
    build = BuildSpec("2 cards", card, 1, 2, IntraNodeLink("nvlink", 100, latency_us=10))
    mixtral = model_spec_from_hf_config(MIXTRAL, name="Mixtral")  # 32 MoE layers, h 4096, k 2
    # Ranks a token reaches: 2 x (1 - (1/2)^2) = 1.5, half of them remote: 0.75 copies.
    # 100 tokens x 0.75 x 4096 x (2 + 2) bytes = 1,228,800 bytes / (100e9 x 0.75) = 16.384 us;
    # latency 2 calls x 10 us x (1 + log2(2)/2) = 30 us; (16.384 + 30) us x 32 = 1,484.3 us.
    seconds = all_to_all_s(build, mixtral, 2, 100, 2.0, 1)
    assert seconds == pytest.approx(1484.288e-6, rel=1e-6)


def test_expert_weights_per_gpu_shrink_with_the_group() -> None:
    # Each GPU holds attention and shared weights whole, and 1/N of the routed experts:
    # going from 8 to 16 GPUs frees half of a GPU's expert bytes.
    wl = Workload(precision="fp8", runtime="sglang", context_tokens=2048, prompt_tokens=1024)
    base = estimate(CLUSTER, DEEPSEEK, wl)
    per_gpu = {
        n: ExpertParallel(n, base)(CLUSTER, DEEPSEEK, wl, CostAssumptions()).memory
        .per_accelerator_gb
        for n in (8, 16)
    }
    # Routed experts: 58 layers x 256 x 3 x 7168 x 2048 x 1 byte = 653.8 GB; /8 - /16 = 40.9 GB.
    assert per_gpu[8] - per_gpu[16] == pytest.approx(40.86, abs=0.05)


def test_expert_parallel_spans_nodes_when_one_node_cannot_hold_the_experts() -> None:
    # DeepSeek-V3 FP8 on 2x 8 H100 80 GB: 654 GB of routed experts / 8 GPUs = 82 GB cannot sit
    # beside the replicated attention on one 80 GB card; / 16 = 41 GB can.
    two_nodes = BuildSpec("2x DGX H100", H100, 2, 8, IntraNodeLink("nvswitch", 450),
                          InterNodeLink("infiniband", 3200))
    assert ep_sizes(two_nodes, DEEPSEEK, "vllm") == (8, 16)
    curve = serving_curve(two_nodes, DEEPSEEK, FP8, CHAT, HIGH_LOAD)
    assert curve.plan.expert_parallel == 16
    assert curve.plan.nodes_used == 2 and "spread over 2 nodes" in curve.plan.description
    assert "--data-parallel-size 16 --enable-expert-parallel" in curve.plan.launch_command


def test_an_nvl72_domain_takes_the_largest_group_the_experts_divide() -> None:
    nvl72 = BuildSpec("GB200 NVL72", H200, 18, 4, IntraNodeLink("nvlink", 900),
                      InterNodeLink("infiniband", 400), scale_up_domain_accelerators=72)
    assert ep_sizes(nvl72, DEEPSEEK, "sglang") == (64,)  # 256 experts: 64 divides, 72 does not


def test_a_rank_packs_its_own_short_prompts_into_one_prefill_pass() -> None:
    # 256-token prompts, 16 requests per rank: 32 of them fill one 8,192-token pass, which
    # reads the rank's weights and pays its fixed costs once for all, so a prompt's share is
    # below its prefill alone (by little here: one rank's prefill is compute-bound).
    wl = replace(FP8, runtime="sglang", prompt_tokens=256, context_tokens=512)
    first = estimate(DGX_H200, DEEPSEEK, wl)
    est = ExpertParallel(8, first)(DGX_H200, DEEPSEEK, replace(wl, batch=128), CostAssumptions())
    t = est.throughput
    assert t is not None and t.packed_prefill_s is not None
    assert t.packed_prefill_s < t.time_to_first_token_s
    alone = ExpertParallel(8, first)(DGX_H200, DEEPSEEK, replace(wl, batch=8), CostAssumptions())
    assert alone.throughput is not None and alone.throughput.packed_prefill_s is None
