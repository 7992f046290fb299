"""Failover, computed: fit and speed after losing an accelerator or a node (failover.py)."""

from __future__ import annotations

from dataclasses import astuple, replace

import pytest

from app.engine import EngineInputError, Workload, estimate, failover

from .shapes import FOUR_4090, LLAMA_3_8B, LLAMA_3_70B, TWO_DGX_H200


def test_cluster_plan_says_how_nodes_are_used_and_failover_is_computed():
    e = estimate(TWO_DGX_H200, LLAMA_3_70B, Workload(precision="fp8", batch=16))
    assert e.plan.node_usage == "replicas per node" and e.plan.nodes_used == 2
    cases = failover(TWO_DGX_H200, LLAMA_3_70B, Workload(precision="fp8", batch=16))
    assert [c.lost for c in cases] == ["one accelerator", "one node"]
    assert all(c.fits and c.accelerators_left == 8 for c in cases)
    single = failover(FOUR_4090, LLAMA_3_70B, Workload(precision="int4", runtime="vllm"))
    assert single[0].accelerators_left == 3 and single[0].fits


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


WORKLOADS = [
    Workload(precision="fp8", batch=16),
    Workload(precision="bf16", batch=1, context_tokens=32768),
    Workload(precision="int4", runtime="vllm", batch=3),
    Workload(precision="q4_k_m", batch=2),
    Workload(precision="fp8", tensor_parallel=4),
    Workload(precision="fp8", tensor_parallel=8),
    Workload(mode="training", zero_stage=3, precision="bf16"),
    Workload(mode="qlora", precision="bf16"),
]
BUILDS = [
    FOUR_4090,
    TWO_DGX_H200,
    replace(FOUR_4090, accelerators_per_node=1),
    replace(FOUR_4090, accelerators_per_node=2),
]


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("model", [LLAMA_3_8B, LLAMA_3_70B], ids=lambda m: m.name)
@pytest.mark.parametrize("build", BUILDS, ids=lambda b: f"{b.nodes}x{b.accelerators_per_node}")
def test_failover_cases_say_what_the_smaller_builds_whole_estimate_says(build, model, workload):
    """The failover path stops after the plan search; its figures must be the estimate's."""
    try:
        cases = failover(build, model, workload)
    except EngineInputError:
        # An explicit split the whole build cannot hold is refused by estimate() too.
        with pytest.raises(EngineInputError):
            estimate(build, model, workload)
        return
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
