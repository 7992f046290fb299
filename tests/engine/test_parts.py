"""Issue 14: builds made of parts: mixed cards in one node, weights offloaded to host RAM."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.engine import (
    AcceleratorGroup,
    AcceleratorSpec,
    BuildSpec,
    HostSpec,
    IntraNodeLink,
    Workload,
    derive_tier,
    estimate,
    failover,
    model_spec_from_hf_config,
    ram_bandwidth_gbs,
)

from .shapes import DEEPSEEK_V3, GPT_OSS_120B

LLAMA_70B = model_spec_from_hf_config(
    {
        "model_type": "llama",
        "num_hidden_layers": 80,
        "hidden_size": 8192,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "intermediate_size": 28672,
        "vocab_size": 128256,
    },
    name="Llama 3 70B",
)
GPT_OSS = model_spec_from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")
RTX3090 = AcceleratorSpec("NVIDIA GeForce RTX 3090", 24, 936.2, 71, tdp_w=350, price_usd=1499)
RTX4090 = AcceleratorSpec(
    "NVIDIA GeForce RTX 4090", 24, 1008, 165.2, fp8_tflops=330.3, tdp_w=450, price_usd=1599
)
DDR5_DUAL = HostSpec("Ryzen 9 9950X", 16, 128, ram_bandwidth_gbs(2, 5600))
MIXED = BuildSpec.of_groups(
    "2x 3090 + 4090",
    (AcceleratorGroup(RTX3090, 2, 4, 8), AcceleratorGroup(RTX4090, 1, 4, 4)),
    intra_node_link=IntraNodeLink("pcie", 7.9),
    host=DDR5_DUAL,
    price_usd=5200,
)
ONE_4090 = BuildSpec("4090 + 128 GB", RTX4090, host=DDR5_DUAL, price_usd=3600)
Q4 = Workload(precision="q4_k_m")
MXFP4_LLAMA_CPP = Workload(precision="mxfp4", runtime="llama.cpp")


def test_groups_sum_cards_and_memory_and_keep_the_first_card():
    assert MIXED.accelerators_per_node == 3 and MIXED.accelerator is RTX3090
    assert MIXED.total_memory_gb == 72 and MIXED.is_mixed
    assert MIXED.slowest_pcie_gbs == pytest.approx(4 * 1.969)


def test_ram_bandwidth_is_channels_times_speed_times_eight_bytes():
    assert ram_bandwidth_gbs(12, 4800) == pytest.approx(460.8)


def test_mixed_pcie_build_is_a_desktop():
    assert derive_tier(MIXED) == "desktop"


def test_mixed_cards_split_whole_layers_by_memory_and_sum_their_times():
    result = estimate(MIXED, LLAMA_70B, Q4)
    assert result.fits and result.placement is not None
    cards = result.placement.cards
    assert sum(c.layers for c in cards) == 80
    assert all(c.memory_needed_gb <= c.memory_usable_gb for c in cards)
    assert "--tensor-split" in result.plan.launch_command
    t = result.throughput
    assert t is not None
    # A token is the sum of each card's share at its own bandwidth (plus fixed and hops).
    assert t.decode_memory_s == pytest.approx(sum(c.decode_s for c in cards))
    all_4090 = BuildSpec.of_groups(
        "3x 4090", (AcceleratorGroup(RTX4090, 3),), intra_node_link=IntraNodeLink("pcie", 7.9)
    )
    faster = estimate(all_4090, LLAMA_70B, Q4)
    assert faster.throughput is not None
    assert faster.throughput.decode_tokens_per_s > t.decode_tokens_per_s


def test_tensor_parallel_runtime_pipelines_mixed_cards_and_says_why():
    result = estimate(MIXED, LLAMA_70B, Workload(precision="int4", runtime="vllm"))
    assert result.fits and result.plan.tensor_parallel == 1
    assert any("needs identical cards" in f.message for f in result.findings)


def test_a_pipelined_serving_runtime_launches_and_notes_the_plan_it_runs():
    # The first card kind's own best plan (tensor parallel 2 and an idle card) was reported
    # beside the mixed cards' pipeline: its command, its TP-over-PCIe caution, its idle card.
    result = estimate(MIXED, LLAMA_70B, Workload(precision="int4", runtime="vllm"))
    assert result.fits and result.plan.pipeline_parallel == 3 and result.placement is not None
    command = result.plan.launch_command
    assert "--tensor-parallel-size 1 --pipeline-parallel-size 3" in command
    # vLLM splits layers evenly unless told the counts: the command gives the engine's split.
    counts = ",".join(str(c.layers) for c in result.placement.cards)
    assert command.startswith(f"VLLM_PP_LAYER_PARTITION={counts} vllm serve")
    assert not any("Tensor parallel 2" in f.message for f in result.findings)
    assert not any("hold no sequence" in f.message for f in result.findings)


def test_mixed_cards_a_pipeline_cannot_hold_say_no_and_a_desktop_switches_to_llama_cpp():
    stated = estimate(MIXED, GPT_OSS, Workload(precision="mxfp4", runtime="vllm"))
    assert not stated.fits and stated.verdict.startswith("No —")
    assert stated.cost.usd_per_million_tokens is None
    assert not any("datacenter" in f.message for f in stated.findings)
    automatic = estimate(MIXED, GPT_OSS, Workload(precision="mxfp4"))
    assert automatic.fits and automatic.plan.runtime == "llama.cpp"
    assert any("chosen automatically" in f.message for f in automatic.findings)


def test_moe_model_keeps_experts_in_ram_when_vram_is_short():
    result = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    assert result.fits
    placement = result.placement
    assert placement is not None and placement.offload == "experts"
    assert 0 < placement.expert_layers_in_ram <= GPT_OSS.moe_layers
    assert f"--n-cpu-moe {placement.expert_layers_in_ram}" in result.plan.launch_command
    assert "expert layers in RAM" in placement.description
    assert placement.ram_needed_gb <= (placement.ram_usable_gb or 0)
    t = result.throughput
    assert t is not None and t.decode_memory_s > placement.decode_ram_s > 0
    assert placement.prefill_pcie_s > 0  # prompts stream the RAM weights over PCIe


def test_an_offloaded_answer_claims_no_longest_context():
    # The context search assumes every weight on one card kind: for gpt-oss-120b on one 4090
    # it said 0 tokens beside a "Yes, with offload" at 4,096.
    result = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    assert result.fits and result.placement is not None
    assert result.max_context_tokens_that_fit is None


def test_fewest_expert_layers_go_to_ram():
    result = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    assert result.placement is not None
    fewer = result.placement.expert_layers_in_ram - 1
    assert fewer >= 0
    # One layer fewer in RAM would not fit on the card: the engine chose the minimum.
    assert result.memory.per_accelerator_gb <= result.memory.available_per_accelerator_gb


def test_faster_ram_means_faster_offloaded_decode():
    slow = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    epyc = replace(ONE_4090, host=HostSpec("EPYC 9554", 64, 768, ram_bandwidth_gbs(12, 4800)))
    fast = estimate(epyc, GPT_OSS, MXFP4_LLAMA_CPP)
    assert slow.throughput is not None and fast.throughput is not None
    assert fast.throughput.decode_tokens_per_s > 1.5 * slow.throughput.decode_tokens_per_s


def test_dense_model_offloads_whole_layers_with_ngl():
    result = estimate(ONE_4090, LLAMA_70B, Q4)
    assert result.fits and result.placement is not None
    assert result.placement.offload == "layers"
    gpu = result.placement.gpu_layers
    assert 0 < gpu < 80 and f"-ngl {gpu}" in result.plan.launch_command


def test_automatic_offload_leaves_llama_cpp_fit_margin_on_the_card():
    result = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    assert result.placement is not None
    card = result.placement.cards[0]
    # llama.cpp --fit leaves --fit-target (1024 MiB = 1.074 GB) free on each card it offloads from.
    assert card.memory_usable_gb - card.memory_needed_gb >= 1.0737


def test_a_published_n_cpu_moe_is_used_as_given():
    auto = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    given = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, cpu_moe_layers=36))
    assert auto.placement is not None and given.placement is not None
    assert auto.placement.expert_layers_in_ram < 36 == given.placement.expert_layers_in_ram
    assert "--n-cpu-moe 36" in given.plan.launch_command
    assert auto.throughput is not None and given.throughput is not None
    # More experts read from RAM each token: slower than the engine's own (fewest) choice.
    assert given.throughput.decode_tokens_per_s < auto.throughput.decode_tokens_per_s


def test_published_ngl_up_to_the_layer_count_leaves_the_output_layer_in_ram():
    model = replace(LLAMA_70B, num_hidden_layers=8, name="Llama 3 shape, 8 layers")
    all_layers = estimate(ONE_4090, model, replace(Q4, runtime="llama.cpp", gpu_layers=8))
    plus_output = estimate(ONE_4090, model, replace(Q4, runtime="llama.cpp", gpu_layers=9))
    assert all_layers.placement is not None and plus_output.placement is not None
    # llama.cpp: -ngl N <= n_layer keeps the output layer (vocab x hidden) on the CPU.
    assert all_layers.placement.ram_needed_gb > 0.3
    assert all_layers.placement.decode_ram_s > 0
    assert plus_output.placement.ram_needed_gb == 0


def test_a_published_placement_that_overflows_the_card_does_not_fit():
    result = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, cpu_moe_layers=0))
    assert not result.fits


def test_offload_none_keeps_the_no():
    result = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, offload="none"))
    assert not result.fits and result.placement is None


def test_offload_needs_enough_host_ram():
    small = replace(ONE_4090, host=HostSpec("tiny", 4, 16, 50.0))
    result = estimate(small, GPT_OSS, MXFP4_LLAMA_CPP)
    assert not result.fits
    assert any("host RAM" in f.message and f.severity == "blocker" for f in result.findings)


def test_automatic_runtime_offloads_with_llama_cpp():
    result = estimate(ONE_4090, GPT_OSS, Workload(precision="mxfp4"))
    assert result.fits and result.runtime == "llama.cpp"


def test_without_a_host_nothing_is_offloaded():
    result = estimate(replace(ONE_4090, host=None), GPT_OSS, MXFP4_LLAMA_CPP)
    assert not result.fits


def test_unified_memory_machines_are_unchanged():
    m4 = AcceleratorSpec("Apple M4 Max 128GB", 128, 546, 17.2, memory_kind="unified")
    box = BuildSpec("Mac", m4, host=DDR5_DUAL)
    with_host = estimate(box, GPT_OSS, MXFP4_LLAMA_CPP)
    without = estimate(replace(box, host=None), GPT_OSS, MXFP4_LLAMA_CPP)
    assert with_host == without and with_host.placement is None


def test_unstated_ram_bandwidth_assumes_slow_ddr4_and_says_so():
    stated = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    unstated = estimate(replace(ONE_4090, host=HostSpec(ram_gb=128)), GPT_OSS, MXFP4_LLAMA_CPP)
    assert unstated.fits and unstated.throughput is not None and stated.throughput is not None
    assert unstated.throughput.decode_tokens_per_s < stated.throughput.decode_tokens_per_s
    assert any("not stated" in f.message and f.severity == "caution" for f in unstated.findings)


def test_failover_of_a_mixed_node_drops_one_card_of_its_last_group():
    (case,) = failover(MIXED, LLAMA_70B, Q4)
    assert case.accelerators_left == 2


H100 = AcceleratorSpec(
    "NVIDIA H100 SXM5 80GB", 80, 3350, 989, fp8_tflops=1979, memory_type="HBM3", tdp_w=700
)
DGX_H100 = BuildSpec(
    "DGX H100", H100, 1, 8, IntraNodeLink("nvswitch", 450), host=HostSpec(ram_gb=2048)
)


def test_datacenter_build_keeps_its_serving_runtime_when_the_model_does_not_fit():
    deepseek = model_spec_from_hf_config(DEEPSEEK_V3, name="DeepSeek-V3")
    result = estimate(DGX_H100, deepseek, Workload(precision="fp8"))
    assert not result.fits and result.runtime == "vllm" and result.placement is None
    said = [f.message for f in result.findings if "llama.cpp with host RAM would run" in f.message]
    assert len(said) == 1 and said[0].startswith("Runtime chosen automatically for a datacenter")


def test_datacenter_build_offloads_when_llama_cpp_is_asked_for():
    deepseek = model_spec_from_hf_config(DEEPSEEK_V3, name="DeepSeek-V3")
    result = estimate(DGX_H100, deepseek, Workload(precision="q8_0", runtime="llama.cpp"))
    assert result.fits and result.runtime == "llama.cpp"
    assert result.placement is not None and result.placement.offload == "experts"


def test_desktop_automatic_runtime_states_the_llama_cpp_choice():
    result = estimate(ONE_4090, GPT_OSS, Workload(precision="mxfp4"))
    assert result.fits and result.runtime == "llama.cpp"
    assert any("llama.cpp chosen automatically" in f.message for f in result.findings)


def test_vllm_that_does_not_fit_names_the_llama_cpp_offload_answer():
    result = estimate(ONE_4090, GPT_OSS, Workload(precision="mxfp4", runtime="vllm"))
    offloaded = estimate(ONE_4090, GPT_OSS, MXFP4_LLAMA_CPP)
    assert not result.fits and result.runtime == "vllm" and offloaded.throughput is not None
    (said,) = [f.message for f in result.findings if "offload=auto does not apply" in f.message]
    assert f"~{offloaded.throughput.decode_tokens_per_s:,.1f} tokens/s" in said


def test_one_hbm_card_counts_as_a_datacenter_build():
    one_h100 = BuildSpec("H100 PCIe box", H100, host=HostSpec(ram_gb=512))
    result = estimate(one_h100, GPT_OSS, Workload(precision="bf16"))
    assert not result.fits and result.runtime == "vllm"


def test_offloaded_prefill_copies_only_the_experts_a_micro_batch_uses():
    # llama.cpp PR #15346: a micro-batch copies the experts it routes to, not all of them.
    short = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, prompt_tokens=40))
    full = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, prompt_tokens=512))
    assert short.placement is not None and full.placement is not None
    assert short.placement.expert_layers_in_ram == full.placement.expert_layers_in_ram
    # 40 tokens x 4 of 128 experts touch ~72 % of the experts; 512 tokens touch all of them.
    assert 0.6 < short.placement.prefill_pcie_s / full.placement.prefill_pcie_s < 0.8


def test_a_micro_batch_below_the_offload_batch_is_read_by_the_cpu():
    tiny = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, prompt_tokens=16))
    bigger = estimate(ONE_4090, GPT_OSS, replace(MXFP4_LLAMA_CPP, prompt_tokens=32))
    assert tiny.placement is not None and tiny.throughput is not None
    assert bigger.placement is not None and bigger.throughput is not None
    assert tiny.placement.prefill_pcie_s == 0 < bigger.placement.prefill_pcie_s
    # The CPU reads the ~51 experts per layer that 16 tokens route to (4 per token): many
    # times one decode step's RAM reads.
    assert tiny.throughput.time_to_first_token_s > 5 * tiny.placement.decode_ram_s
