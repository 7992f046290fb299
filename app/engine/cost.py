"""Money and energy: amortised purchase, electricity, per-token figures."""

from __future__ import annotations

from .results import CostFigures, fill_cost
from .specs import BuildSpec, CostAssumptions

HOURS_PER_YEAR = 8766.0  # 365.25 days


def build_price_usd(build: BuildSpec) -> float | None:
    """The build's price, or accelerators x unit price when only that is known."""
    if build.price_usd is not None:
        return build.price_usd
    if build.accelerator.price_usd is not None:
        return build.accelerator.price_usd * build.accelerator_count
    return None


def build_power_w(build: BuildSpec, costs: CostAssumptions) -> float | None:
    """System power: the build's figure, else accelerator TDP x count plus a host share."""
    if build.power_w is not None:
        return build.power_w
    if build.accelerator.tdp_w is not None:
        return build.accelerator.tdp_w * build.accelerator_count * (1.0 + costs.host_power_fraction)
    return None


def billed_tokens_per_s(
    *, per_sequence: float, batch: int, batch_per_replica: int, ttft_s: float, generated: int
) -> float:
    """Generated tokens per second over whole requests, prefill included.

    Each replica serves `batch_per_replica` requests of `generated` new tokens; their prompts
    prefill one after another (prefill is compute-bound), then they decode together.
    """
    cycle = batch_per_replica * ttft_s + generated / per_sequence
    return batch * generated / cycle


def cost_figures(
    build: BuildSpec, costs: CostAssumptions, aggregate_tokens_per_s: float | None
) -> CostFigures:
    """Cost per hour, energy and money per token at the given rate (the whole build's power
    and price, idle accelerators included)."""
    price = build_price_usd(build)
    power = build_power_w(build, costs)
    capital = price / (costs.amortization_years * HOURS_PER_YEAR) if price is not None else None
    energy = (
        power / 1000.0 * costs.pue * costs.electricity_usd_per_kwh * costs.utilization
        if power is not None
        else None
    )
    per_hour = capital + energy if capital is not None and energy is not None else None
    joules = None
    per_million = None
    if aggregate_tokens_per_s and aggregate_tokens_per_s > 0:
        if power is not None:
            joules = power / aggregate_tokens_per_s
        if per_hour is not None:
            tokens_per_hour = aggregate_tokens_per_s * 3600.0 * costs.utilization
            per_million = per_hour / tokens_per_hour * 1e6
    total_mem = build.total_memory_gb
    return fill_cost(
        price_usd=price,
        power_w=power,
        usd_per_hour=per_hour,
        joules_per_token=joules,
        usd_per_million_tokens=per_million,
        usd_per_gb_memory=price / total_mem if price is not None and total_mem > 0 else None,
        amortization_years=costs.amortization_years,
        electricity_usd_per_kwh=costs.electricity_usd_per_kwh,
        pue=costs.pue,
        utilization=costs.utilization,
        capital_usd_per_hour=capital,
        energy_usd_per_hour=energy,
        billed_tokens_per_s=aggregate_tokens_per_s,
    )
