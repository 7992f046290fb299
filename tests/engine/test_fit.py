"""Fit: memory per accelerator, the verdict, what else would fit (memory.py, findings.py)."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import AcceleratorSpec, BuildSpec, IntraNodeLink, Workload, estimate

from .shapes import (
    CLUSTER,
    DEEPSEEK_V3,
    DESKTOP,
    GEMMA3_27B,
    H100,
    H200,
    LLAMA_3_8B,
    LLAMA_3_70B,
    LLAMA_8B,
    LLAMA_70B,
    M2_ULTRA,
    RTX4090,
    RTX6000,
    TWO_DGX_H200,
    spec,
)


def test_deepseek_fp8_does_not_fit_four_isolated_4090s():
    e = estimate(DESKTOP, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    assert not e.fits
    assert e.throughput is None
    # Four "24 GB" cards hold 4 x 24 GiB = 103 x 1e9 bytes; memory is never summed over them.
    assert e.verdict.startswith("No — 4 isolated 24 GB cards (103 GB in all); needs ")
    assert any(f.severity == "blocker" for f in e.findings)


def test_deepseek_fp8_fits_two_dgx_h200():
    e = estimate(CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    assert e.fits
    # 16 x 141 GiB x vLLM's 90 % = 2,180 x 1e9 bytes usable.
    assert e.verdict.startswith("Yes — 2,180 GB usable of 2,422 GB, needs ")
    assert e.verdict.endswith("GB to spare")
    assert e.plan.tensor_parallel == 8
    assert e.throughput is not None and e.throughput.decode_tokens_per_s > 0
    assert e.memory.rule_of_thumb_gb == pytest.approx(805, abs=1)


def test_156_gb_model_fits_cluster_but_not_desktop():
    # Llama 3.1 70B in BF16 is ~141 GB of weights; with KV and overheads ~156 GB.
    model = spec(LLAMA_70B)
    desk = estimate(DESKTOP, model, Workload(precision="bf16", context_tokens=32768))
    clus = estimate(CLUSTER, model, Workload(precision="bf16", context_tokens=32768))
    assert 140 < clus.memory.total_gb < 175
    assert not desk.fits and clus.fits


def test_fit_is_judged_per_accelerator_not_summed():
    # 4 x 24 GB = 96 GB sums above ~70 GB of FP8 weights, but the layer split still fits; a
    # model whose single layer-stage exceeds one card must not fit even if the sum would.
    model = spec(LLAMA_70B)
    e = estimate(DESKTOP, model, Workload(precision="fp8", context_tokens=2048))
    assert e.memory.per_accelerator_gb <= e.memory.available_per_accelerator_gb
    assert e.plan.tensor_parallel * e.plan.pipeline_parallel >= 3
    one = estimate(
        BuildSpec("1x RTX 4090", RTX4090), model, Workload(precision="fp8", context_tokens=2048)
    )
    assert not one.fits


def test_sliding_window_caps_kv_cache():
    gemma = spec(GEMMA3_27B)
    build = BuildSpec("1x H200", H200)
    full = dataclasses.replace(gemma, sliding_window=None, sliding_window_layers=0)
    w = Workload(precision="bf16", context_tokens=32768)
    assert (
        estimate(build, gemma, w).memory.kv_cache_gb
        < estimate(build, full, w).memory.kv_cache_gb / 4
    )


def test_max_context_and_batch_are_consistent_with_fit():
    build = BuildSpec("1x 4090", RTX4090)
    e = estimate(build, spec(LLAMA_8B), Workload(precision="q4_k_m", runtime="llama.cpp"))
    assert e.fits and e.max_context_tokens_that_fit >= 4096
    ctx = min(e.max_context_tokens_that_fit, 131072)
    assert estimate(
        build, spec(LLAMA_8B), Workload(precision="q4_k_m", runtime="llama.cpp", context_tokens=ctx)
    ).fits
    assert e.max_batch_that_fits >= 1


def test_unified_memory_uses_three_quarters_of_ram():
    e = estimate(BuildSpec("Mac Studio", M2_ULTRA), spec(LLAMA_8B), Workload(runtime="llama.cpp"))
    # macOS wires ~75 % of RAM for the GPU by default; "192 GB" of RAM is 192 GiB.
    assert e.memory.available_per_accelerator_gb == pytest.approx(192 * 2**30 * 0.75 / 1e9)


@pytest.mark.parametrize("ram_gb", [8, 16, 32])
def test_macs_up_to_32_gb_wire_two_thirds_of_ram(ram_gb):
    # Metal's recommendedMaxWorkingSetSize on 16 / 32 GB Macs is 10922.67 / 21845.34 MiB.
    mac = AcceleratorSpec(f"Apple M2 ({ram_gb} GB)", ram_gb, 100, 3.6, memory_kind="unified")
    e = estimate(BuildSpec("Mac", mac), spec(LLAMA_8B), Workload(runtime="llama.cpp"))
    assert e.memory.available_per_accelerator_gb == pytest.approx(ram_gb * 2**30 * 2 / 3 / 1e9)


def test_llama_3_8b_q4_k_m_at_8k_tokens_does_not_fit_an_8_gb_mac():
    # XiongjieDai's M1 8 GB table: Llama 3 8B Q4_K_M runs at 4,096 tokens, is out of memory
    # at 8,192 (llama-bench, Metal).
    m1 = AcceleratorSpec("Apple M1 (8 GB)", 8, 68.25, 2.29, memory_kind="unified")
    build = BuildSpec("MacBook Air", m1)

    def fits(tokens: int) -> bool:
        work = Workload(precision="q4_k_m", runtime="llama.cpp", context_tokens=tokens)
        return estimate(build, LLAMA_3_8B, work).fits

    assert fits(4096) and not fits(8192)


EIGHT_H100 = BuildSpec("8x H100", H100, 1, 8, IntraNodeLink("nvswitch", 450))


def test_training_memory_is_sixteen_bytes_per_param_plus_activations():
    model = spec(LLAMA_8B)
    e = estimate(EIGHT_H100, model, Workload(mode="training", context_tokens=4096, batch=1))
    states = e.memory.weights_gb + e.memory.gradients_gb + e.memory.optimizer_gb
    assert states == pytest.approx(model.params_total * 16 / 1e9, rel=0.01)
    assert e.memory.activations_gb > 0


def test_zero3_divides_states_over_data_parallel():
    model = spec(LLAMA_8B)
    dp_only = {"tensor_parallel": 1, "pipeline_parallel": 1}
    z0 = estimate(EIGHT_H100, model, Workload(mode="training", zero_stage=0, batch=1, **dp_only))
    z3 = estimate(EIGHT_H100, model, Workload(mode="training", zero_stage=3, batch=1, **dp_only))
    assert not z0.fits and z3.fits
    # DeepSpeed's estimator: 18 bytes/param / 8 GPUs + a gather buffer, against 16 bytes/param.
    assert z3.memory.per_accelerator_gb < z0.memory.per_accelerator_gb / 3
    assert z3.training is not None and z3.training.tokens_per_s > 0


def test_qlora_fits_70b_on_48_gb():
    build = BuildSpec("1x RTX 6000 Ada", RTX6000)
    w = Workload(
        mode="qlora",
        context_tokens=2048,
        batch=1,
        activation_recomputation=True,
        training_tokens=10_000_000,
    )
    e = estimate(build, spec(LLAMA_70B), w)
    assert e.fits
    assert e.training is not None and e.training.time_to_train_hours > 0
    assert not estimate(build, spec(LLAMA_70B), dataclasses.replace(w, mode="lora")).fits


def test_a_16_gb_card_fits_llama_3_8b_f16_at_4k_in_llama_cpp():
    card = AcceleratorSpec("16 GB card", 16, 448, 44)
    e = estimate(
        BuildSpec("1x 16 GB", card), LLAMA_3_8B, Workload(precision="fp16", runtime="llama.cpp")
    )
    assert e.fits, e.verdict
    # 16 GiB of capacity, shown in GB (1e9 bytes).
    assert e.memory.available_per_accelerator_gb == pytest.approx(16 * 2**30 / 1e9)


def test_dgx_spark_exposes_at_least_110_gb():
    gb10 = AcceleratorSpec(
        "NVIDIA GB10 Superchip (DGX Spark, 128 GB)", 128, 273, 62.5, memory_kind="unified"
    )
    e = estimate(
        BuildSpec("DGX Spark", gb10, intra_node_link=IntraNodeLink("unified", None)),
        LLAMA_3_8B,
        Workload(),
    )
    assert e.memory.available_per_accelerator_gb >= 110
    apple = AcceleratorSpec(
        "Apple M4 Max (40-core GPU, 128 GB)", 128, 546, 34, memory_kind="unified"
    )
    mac = estimate(BuildSpec("Mac", apple), LLAMA_3_8B, Workload())
    assert mac.runtime == "llama.cpp"  # Apple builds default to llama.cpp
    assert mac.memory.available_per_accelerator_gb < e.memory.available_per_accelerator_gb


def test_kv_cache_defaults_to_bf16_for_fp8_weights():
    e = estimate(TWO_DGX_H200, LLAMA_3_70B, Workload(precision="fp8"))
    assert any("KV cache bf16" in a for a in e.assumptions)
    fp8kv = estimate(TWO_DGX_H200, LLAMA_3_70B, Workload(precision="fp8", kv_cache_precision="fp8"))
    assert fp8kv.memory.kv_cache_gb < e.memory.kv_cache_gb


def test_llama_cpp_keeps_the_input_embedding_in_host_ram():
    # src/llama-model.cpp pins the input layer to the CPU; vLLM holds it on the card.
    model = LLAMA_3_8B
    card = AcceleratorSpec("24 GB card", 24, 936, 71)
    build = BuildSpec("1x 24 GB", card)
    work = Workload(precision="fp16", context_tokens=4096)
    cpp = estimate(build, model, dataclasses.replace(work, runtime="llama.cpp"))
    vllm = estimate(build, model, dataclasses.replace(work, runtime="vllm"))
    embedding_gb = model.vocab_size * model.hidden_size * 2 / 1e9
    assert vllm.memory.weights_gb - cpp.memory.weights_gb == pytest.approx(embedding_gb, rel=1e-6)


def test_llama_cpp_layer_split_puts_the_output_layer_on_the_last_card():
    # 80 layers + the output layer over 6 cards: llama.cpp gives the first card 14 layers and
    # the last 12 layers and the 2.1 GB output projection, none of them the embedding.
    rtx3090 = AcceleratorSpec("RTX 3090", 24, 936, 71)
    cards = BuildSpec("6x 3090", rtx3090, 1, 6, IntraNodeLink("pcie", 32))
    work = Workload(precision="fp16", context_tokens=512, runtime="llama.cpp")
    e = estimate(cards, LLAMA_3_70B, work)
    assert e.plan.pipeline_parallel == 6
    layer_gb = (e.memory.weights_gb - LLAMA_3_70B.vocab_size * LLAMA_3_70B.hidden_size * 2 / 1e9)
    layer_gb /= LLAMA_3_70B.num_hidden_layers
    fullest_weights = e.memory.per_accelerator_gb - (
        e.memory.kv_cache_gb + e.memory.activations_gb + e.memory.overhead_gb
    ) / 6
    assert fullest_weights == pytest.approx(14 * layer_gb, rel=0.01)
    assert e.fits, e.verdict


def test_llama_cpp_without_flash_attention_holds_the_scores_of_a_micro_batch():
    # Without flash attention ggml materialises K*Q in F32: n_ubatch x n_ctx x heads x 4 bytes.
    card = AcceleratorSpec("24 GB card", 24, 936, 71)
    build = BuildSpec("1x 24 GB", card)
    on = Workload(precision="fp16", context_tokens=8192, runtime="llama.cpp")
    off = dataclasses.replace(on, flash_attention=False)
    with_fa = estimate(build, LLAMA_3_8B, on).memory.activations_gb
    without = estimate(build, LLAMA_3_8B, off).memory.activations_gb
    scores_gb = 512 * 8192 * LLAMA_3_8B.num_attention_heads * 4 / 1e9
    logits_gb = 512 * LLAMA_3_8B.vocab_size * 4 / 1e9
    # The buffer is its largest phase: the scores replace the logits of the micro-batch.
    assert without - with_fa == pytest.approx(scores_gb - logits_gb, rel=1e-6)
    # vLLM never materialises the scores.
    vllm = dataclasses.replace(off, runtime="vllm")
    assert estimate(build, LLAMA_3_8B, vllm).memory.activations_gb < with_fa
