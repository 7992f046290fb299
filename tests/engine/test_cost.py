"""Money and energy from the cost assumptions (cost.py)."""

from __future__ import annotations

import pytest

from app.engine import BuildSpec, CostAssumptions, Workload, estimate

from .shapes import FOUR_4090, LLAMA_3_8B, LLAMA_8B, RTX4090, spec


def test_cost_figures_use_assumptions():
    costs = CostAssumptions(amortization_years=3, electricity_usd_per_kwh=0.15, pue=1.3)
    e = estimate(
        BuildSpec("1x 4090", RTX4090),
        spec(LLAMA_8B),
        Workload(precision="q4_k_m", runtime="llama.cpp"),
        costs,
    )
    c = e.cost
    assert c.price_usd == 1599 and c.power_w == pytest.approx(450 * 1.25)
    assert c.usd_per_hour == pytest.approx(1599 / (3 * 8766) + 0.5625 * 1.3 * 0.15)
    assert c.usd_per_million_tokens > 0 and c.joules_per_token > 0
    assert c.usd_per_gb_memory == pytest.approx(1599 / 24)


def test_cost_per_token_includes_prefill_and_idle_power():
    e = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="bf16", tensor_parallel=1))
    t = e.throughput
    assert t is not None and e.cost.billed_tokens_per_s is not None
    assert e.cost.billed_tokens_per_s < t.aggregate_decode_tokens_per_s  # prefill time counted
    # Joules per token divide the whole build's power, idle cards included.
    assert e.cost.power_w is not None and e.cost.joules_per_token == pytest.approx(
        e.cost.power_w / e.cost.billed_tokens_per_s
    )
