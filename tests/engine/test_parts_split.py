"""Issue 14: a stated llama.cpp --tensor-split, and a placement given by hand without a host."""

from __future__ import annotations

from dataclasses import replace

from app.engine import BuildSpec, estimate
from app.engine.parts_split import split_by_ratio

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
