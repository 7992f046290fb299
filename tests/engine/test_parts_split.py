"""Issue 14: a stated llama.cpp --tensor-split, and a placement given by hand without a host."""

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
    estimate,
    model_spec_from_hf_config,
    ram_bandwidth_gbs,
)
from app.engine.mmvq import MMVQ_ISSUE_EFFICIENCY, cuda_issue_rate, mmvq_ops_per_byte
from app.engine.parts_split import card_issue_s, cards_of, split_by_ratio, split_compute
from app.engine.precision import PRECISIONS
from app.engine.prepared import prepare
from app.engine.runtime import LINK_EFFICIENCY

from .shapes import LLAMA_3_8B, P40, QWEN3_235B
from .test_parts import GPT_OSS, LLAMA_70B, MIXED, MXFP4_LLAMA_CPP, ONE_4090, Q4, RTX3090


def test_tensor_split_assigns_units_by_upper_bound_like_llama_cpp():
    sizes = [1.0] * 48
    # 48 layers + the output layer = 49 units; unit u goes to the first card whose cumulative
    # share exceeds u / 49: 11:1 puts units 0..44 on the first card (44/49 < 11/12 <= 45/49).
    assert split_by_ratio(sizes, [100.0, 100.0], (11, 1), 49) == [45, 3]
    assert split_by_ratio(sizes, [100.0, 100.0], (1, 1), 49) == [25, 23]
    # Output layer in RAM (-ngl 48 of 48): 48 units, an even split is even.
    assert split_by_ratio(sizes, [100.0, 100.0], (1, 1), 48) == [24, 24]


def test_tensor_split_that_overfills_a_card_does_not_fit():
    assert split_by_ratio([1.0] * 10, [3.0, 100.0], (1, 1), 10) is None
    assert split_by_ratio([1.0] * 10, [100.0, 100.0], (1, 1, 1), 10) is None  # one share per card


def test_a_stated_split_moves_layers_and_time_to_the_named_card():
    default = estimate(MIXED, LLAMA_70B, Q4)
    stated = estimate(MIXED, LLAMA_70B, replace(Q4, tensor_split=(1.0, 1.0, 2.0)))
    assert default.placement is not None and stated.placement is not None
    layers = [c.layers for c in stated.placement.cards]
    # 81 units (80 layers + output): the 4090 (last card) takes half of them.
    assert layers == [21, 20, 39]
    assert "as the tensor split states: 21 + 20 on 2× RTX 3090, 39 on RTX 4090" in (
        stated.placement.description
    )
    assert "by memory" in default.placement.description
    assert "--tensor-split 21,20,39" in stated.plan.launch_command
    # More layers on the 4090 (1008 GB/s) than the free-memory split gives it: faster decode.
    assert default.throughput is not None and stated.throughput is not None
    assert stated.throughput.decode_tokens_per_s > default.throughput.decode_tokens_per_s


def test_a_stated_split_of_the_wrong_length_is_ignored():
    default = estimate(MIXED, LLAMA_70B, Q4)
    wrong = estimate(MIXED, LLAMA_70B, replace(Q4, tensor_split=(1.0, 1.0)))
    assert wrong.placement is not None and default.placement is not None
    assert [c.layers for c in wrong.placement.cards] == [c.layers for c in default.placement.cards]


def test_a_placement_given_by_hand_is_honoured_without_a_stated_host():
    no_host: BuildSpec = replace(ONE_4090, host=None)
    auto = estimate(no_host, GPT_OSS, MXFP4_LLAMA_CPP)
    given = estimate(no_host, GPT_OSS, replace(MXFP4_LLAMA_CPP, cpu_moe_layers=36))
    # Without a host the engine offloads nothing of its own accord...
    assert not auto.fits
    # ...but a run that says where its weights went (llama.cpp --n-cpu-moe, Ollama num_gpu) is
    # evaluated as stated: VRAM is checked, RAM (not stated) is not.
    assert given.fits and given.placement is not None
    assert given.placement.expert_layers_in_ram == 36 and given.placement.ram_usable_gb is None
    assert given.placement.ram_needed_gb > 50


def test_a_stated_split_changes_nothing_for_a_tensor_parallel_runtime():
    two = BuildSpec("2x 3090", RTX3090, accelerators_per_node=2, price_usd=3000)
    vllm = replace(Q4, precision="fp8", runtime="vllm")
    assert estimate(two, LLAMA_70B, replace(vllm, tensor_split=(3.0, 1.0))) == estimate(
        two, LLAMA_70B, vllm
    )


def _p40_and_3090(p40: AcceleratorSpec) -> BuildSpec:
    return BuildSpec.of_groups(
        "3090 + P40",
        (AcceleratorGroup(RTX3090, 1), AcceleratorGroup(p40, 1)),
        intra_node_link=IntraNodeLink("pcie", 15.8),
    )


def test_each_card_of_a_split_pays_its_own_mmvq_issue_time():
    # Q2_K on a Tesla P40 issues more MMVQ instructions per byte than its 47 dp4a TOPS clear at
    # its 346 GB/s (docs/engine.md 5). Before, the P40's share of a split was the first card's
    # (RTX 3090) compute scaled by the two matmul rates, 57 of the step's 98 ms; a single P40
    # pays its own issue time for the same bytes, and so does its share of a split now.
    work = Workload(precision="q2_k", runtime="llama.cpp", context_tokens=512)
    build = _p40_and_3090(P40)
    result = estimate(build, LLAMA_70B, work)
    t, placement = result.throughput, result.placement
    assert t is not None and placement is not None
    held = placement.cards[1].layers
    assert held > 0
    p = prepare(build, LLAMA_70B, work)
    weight = p.nonexpert_body_bytes / LLAMA_70B.num_hidden_layers * held + p.head_bytes
    ops = mmvq_ops_per_byte(PRECISIONS["q2_k"])[0] * weight
    p40_issue = ops / (47e12 / 8 * MMVQ_ISSUE_EFFICIENCY)
    assert p40_issue > placement.cards[1].decode_s  # issue-bound: longer than its reads
    assert t.decode_compute_s >= p40_issue


def test_card_issue_time_is_the_cards_bytes_at_its_own_rate_and_compute_takes_the_longer():
    build = _p40_and_3090(P40)
    work = Workload(precision="q2_k", runtime="llama.cpp")
    p = prepare(build, LLAMA_70B, work)
    cards = cards_of(build)
    issue = card_issue_s(p, build, work, cards, [(1e9, 1e9), (1e9, 1e9)])
    per_op = 1.0 / MMVQ_ISSUE_EFFICIENCY
    ops = mmvq_ops_per_byte(PRECISIONS["q2_k"])[0] * 1e9
    assert issue == [
        pytest.approx(ops * per_op / cuda_issue_rate(RTX3090)),
        pytest.approx(ops * per_op / (47e12 / 8)),
    ]
    base = estimate(BuildSpec("one 3090", RTX3090), LLAMA_3_8B, work).throughput
    assert base is not None
    # A card whose issue time is the longer contributes that, the other its share of the base's
    # compute (the first card kind's own figure: scale 1).
    assert split_compute(base, cards, [40, 40], p, [0.0, 1.0])[0] == pytest.approx(
        base.decode_compute_s * 40 / 80 + 1.0
    )


def test_offloaded_prefill_copies_every_routed_expert_at_the_pcie_floor():
    # ubergarm's mainline run (ik_llama.cpp PR #370): Qwen3-235B-A22B Q8_0 on one RTX A6000 with
    # the experts of 80 of 94 layers in RAM. 512 tokens x top-8 of 128 route to every expert, so
    # a micro-batch copies 80 x 128 experts of 3 x 4096 x 1536 Q8_0 weights (34 bytes per 32)
    # over the default PCIe 4.0 x16 slot (31.5 GB/s) at LINK_EFFICIENCY: ~8.7 s, 57 tokens/s.
    qwen = model_spec_from_hf_config(QWEN3_235B, name="Qwen3-235B-A22B")
    a6000 = AcceleratorSpec("NVIDIA RTX A6000", 48, 768, 154.8)
    host = HostSpec("Threadripper PRO 7965WX", 24, 256, ram_bandwidth_gbs(8, 4800))
    work = Workload(
        precision="q8_0",
        runtime="llama.cpp",
        prompt_tokens=512,
        context_tokens=640,
        gpu_layers=99,
        cpu_moe_layers=80,
    )
    result = estimate(BuildSpec("A6000 + 256 GB", a6000, host=host), qwen, work)
    assert result.placement is not None and result.placement.expert_layers_in_ram == 80
    expert_bytes = 3 * 4096 * 1536 * 34 / 32
    floor_s = 80 * 128 * expert_bytes / (31.5e9 * LINK_EFFICIENCY)
    assert result.placement.prefill_pcie_s == pytest.approx(floor_s, rel=0.01)
