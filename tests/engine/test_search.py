"""The plan search: runtime-aware splits, the objective, a bounded search (search.py, plan.py)."""

from __future__ import annotations

import pytest

from app.engine import (
    OBJECTIVE_LATENCY,
    BuildSpec,
    EngineInputError,
    InterNodeLink,
    IntraNodeLink,
    Workload,
    estimate,
)

from .shapes import FOUR_4090, H200_SXM, LLAMA_3_8B, LLAMA_3_70B


def test_vllm_picks_tensor_parallel_4_over_a_pipeline_on_four_4090s():
    auto = estimate(FOUR_4090, LLAMA_3_70B, Workload(precision="int4", runtime="vllm"))
    pipe = estimate(
        FOUR_4090, LLAMA_3_70B, Workload(precision="int4", runtime="vllm", pipeline_parallel=3)
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
    e = estimate(FOUR_4090, LLAMA_3_70B, Workload(precision="q4_k_m"))
    assert e.runtime == "llama.cpp"  # GGUF precision: llama.cpp by default
    assert e.fits
    assert (e.plan.tensor_parallel, e.plan.pipeline_parallel, e.plan.data_parallel) == (1, 4, 1)
    assert e.plan.accelerators_used == 4 and e.plan.replicas_active == 1
    assert "--tensor-split 24,24,24,24" in e.plan.launch_command
    assert e.plan.launch_command.startswith("llama-server -m ")


def test_batch_one_aggregate_is_the_per_sequence_rate():
    # Four replicas of an 8B model, one sequence: three replicas are idle.
    w = Workload(precision="bf16", runtime="vllm", tensor_parallel=1)
    e = estimate(FOUR_4090, LLAMA_3_8B, w)
    assert e.plan.data_parallel == 4 and e.plan.replicas_active == 1
    assert e.throughput is not None
    assert e.throughput.aggregate_decode_tokens_per_s == pytest.approx(
        e.throughput.decode_tokens_per_s
    )
    four = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="bf16", tensor_parallel=1, batch=4))
    assert four.plan.replicas_active == 4
    assert four.throughput is not None and four.throughput.aggregate_decode_tokens_per_s > (
        3 * e.throughput.aggregate_decode_tokens_per_s
    )
    # Spare memory counts what no running replica uses: less spare with four replicas busy.
    assert four.memory.spare_gb < e.memory.spare_gb


def test_explicit_tensor_parallel_a_runtime_refuses_is_named():
    with pytest.raises(EngineInputError) as err:
        estimate(
            FOUR_4090, LLAMA_3_70B, Workload(precision="int4", runtime="vllm", tensor_parallel=3)
        )
    assert err.value.field == "tensor_parallel" and "attention heads" in err.value.reason
    with pytest.raises(EngineInputError) as err:
        estimate(FOUR_4090, LLAMA_3_8B, Workload(runtime="mlx", tensor_parallel=2))
    assert err.value.field == "tensor_parallel"


def test_plan_search_does_not_grow_with_the_accelerator_count():
    w = Workload(mode="training", context_tokens=4096)
    small = BuildSpec(
        "2 nodes",
        H200_SXM,
        2,
        16,
        IntraNodeLink("nvswitch", 450),
        InterNodeLink("infiniband", 3200),
    )
    huge = BuildSpec(
        "4096 nodes",
        H200_SXM,
        4096,
        16,
        IntraNodeLink("nvswitch", 450),
        InterNodeLink("infiniband", 3200),
    )
    assert estimate(huge, LLAMA_3_70B, w).plan.plans_evaluated <= (
        estimate(small, LLAMA_3_70B, w).plan.plans_evaluated + 8 * 18
    )
    assert estimate(huge, LLAMA_3_70B, w).plan.plans_evaluated <= 8 * 2 * 9 + 1
