"""Issues 12 and 14: cards without fast FP16 (Pascal CC 6.1: Tesla P40, GTX 10xx) are rated at
the int8 (dp4a) / FP32 rates llama.cpp's CUDA kernels use there, not at their 1/64-rate FP16."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from app.engine import (
    RUNTIMES,
    AcceleratorGroup,
    AcceleratorSpec,
    BuildSpec,
    IntraNodeLink,
    Workload,
    estimate,
)
from app.engine.parts_split import split_compute
from app.engine.precision import PRECISIONS
from app.engine.prep import (
    card_peak_flops,
    matmul_compute,
    matmul_peak,
    prefill_peak_flops,
    slow_fp16,
)

from .shapes import H200, LLAMA_3_8B, P40, RTX4090

P100 = AcceleratorSpec("NVIDIA Tesla P100", 16, 732, 18.7, vendor="NVIDIA")  # fast FP16, no dp4a
RTX8000 = AcceleratorSpec("NVIDIA Quadro RTX 8000", 48, 672, 130.5, vendor="NVIDIA")
LLAMA, OLLAMA, VLLM = RUNTIMES["llama.cpp"], RUNTIMES["ollama"], RUNTIMES["vllm"]


def test_only_a_card_whose_fp16_is_far_below_its_int8_rate_is_slow_fp16():
    assert slow_fp16(P40)
    # Tensor-core cards: int8 is 2x fp16, or 4x on GeForce (FP32-accumulate fp16 figure).
    assert not slow_fp16(RTX4090) and not slow_fp16(H200)
    assert not slow_fp16(P100) and not slow_fp16(RTX8000)  # no int8 figure: nothing to infer


def test_slow_fp16_card_fp32_rate_is_a_quarter_of_its_dp4a_rate():
    assert card_peak_flops(P40, "fp32") == (pytest.approx(11.75e12), "fp32")
    assert card_peak_flops(P40, "int8") == (47e12, "int8")
    # A tensor-core card keeps TF32 at half its FP16 rate.
    assert card_peak_flops(RTX4090, "fp32") == (pytest.approx(82.6e12), "tf32")


def test_llama_cpp_on_a_slow_fp16_card_runs_quants_in_int8_and_16_bit_weights_in_fp32():
    for rt in (LLAMA, OLLAMA):
        assert matmul_compute(rt, P40, PRECISIONS["q4_0"]) == "int8"
        assert matmul_compute(rt, P40, PRECISIONS["q4_k_m"]) == "int8"
        assert matmul_compute(rt, P40, PRECISIONS["fp16"]) == "fp32"
        assert matmul_compute(rt, P40, PRECISIONS["mxfp4-f16"]) == "fp32"  # F16 outside experts
    # A non-native backend's quantized kernels are not modelled: the FP32 rate.
    assert matmul_compute(LLAMA, P40, PRECISIONS["q4_0"], "vulkan") == "fp32"
    # Other runtimes, and llama.cpp on a card with fast FP16, keep the precision's kind.
    assert matmul_compute(VLLM, P40, PRECISIONS["fp16"]) == "fp16"
    assert matmul_compute(LLAMA, RTX4090, PRECISIONS["q4_0"]) == "fp16"
    assert matmul_peak(LLAMA, P40, PRECISIONS["q4_0"]) == 47e12


def test_llama_cpp_prefill_attention_on_a_slow_fp16_card_runs_at_fp32():
    peak, attention = prefill_peak_flops(LLAMA, BuildSpec("p40", P40), "int8")
    assert peak == 47e12 and attention == pytest.approx(11.75e12)
    assert prefill_peak_flops(VLLM, BuildSpec("p40", P40), "fp16") == (0.18e12, 0.18e12)


def test_p40_llama_cpp_decode_is_memory_bound_and_prefill_far_faster_than_at_fp16():
    w = Workload(
        precision="q4_0", runtime="llama.cpp", prompt_tokens=512, context_tokens=640
    )
    t = estimate(BuildSpec("p40", P40), LLAMA_3_8B, w).throughput
    assert t.decode_memory_s > t.decode_compute_s
    # The same card without its int8 figure falls back to the 1/64-rate FP16 everywhere.
    old = estimate(BuildSpec("p40", replace(P40, int8_tops=None)), LLAMA_3_8B, w).throughput
    assert old.decode_compute_s > old.decode_memory_s
    assert t.prefill_tokens_per_s > 50 * old.prefill_tokens_per_s


def test_mixed_cards_scale_compute_by_each_cards_matmul_rate():
    p = SimpleNamespace(runtime=LLAMA, precision=PRECISIONS["q4_k_m"])
    cards = [(RTX8000, 15.75), (P40, 3.94)]
    _, scale = split_compute(None, cards, [2, 1], p)  # type: ignore[arg-type]
    assert scale == pytest.approx(2 / 3 + 1 / 3 * 130.5 / 47)
    build = BuildSpec.of_groups(
        "RTX 8000 + P40",
        (AcceleratorGroup(RTX8000, 1), AcceleratorGroup(P40, 1)),
        intra_node_link=IntraNodeLink("pcie", 15.75),
    )
    w = Workload(precision="q4_k_m", runtime="llama.cpp", tensor_split=(1.0, 1.0))
    t = estimate(build, LLAMA_3_8B, w).throughput
    assert t.decode_memory_s > t.decode_compute_s  # the P40's half is not compute-bound


def test_prompt_time_guess_of_a_build_led_by_a_slow_fp16_card_uses_its_matmul_rate():
    from app.engine.parts_split import ttft_guess

    rt = replace(LLAMA, compute_efficiency=0.5)
    p = SimpleNamespace(runtime=rt, precision=PRECISIONS["q4_0"])
    w = Workload(precision="q4_0", runtime="llama.cpp", prompt_tokens=512)
    guess = ttft_guess(p, LLAMA_3_8B, w, [(P40, 3.94)])  # type: ignore[arg-type]
    assert guess == pytest.approx(2.0 * LLAMA_3_8B.params_active_matmul * 512 / (47e12 * 0.5))
