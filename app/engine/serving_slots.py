"""Serving slots for builds of parts: mixed cards and host-RAM offload (llama-server --parallel).

The engine's estimate of such a build re-derives its placement for each batch and gives no
closed-form largest batch (`max_batch_that_fits` is None), so the serving curve finds the
largest number of slots that fits by probing estimates. docs/engine.md, "Serving curves and
SLOs", states the bounds and why.
"""

from __future__ import annotations

from .estimate import estimate
from .parts_split import OFFLOAD_MIN_BATCH
from .results import Estimate, Finding
from .serving_point import Context, Estimator, estimate_at
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload

# From this many slots on, llama.cpp's CUDA backend copies host-resident weights to the GPU for
# each batch (ggml_backend_cuda_device_offload_op, min_batch_size 32) instead of letting the CPU
# read them: the decode model of an offloaded build (CPU reads at RAM bandwidth) stops there.
OFFLOAD_MAX_SLOTS = OFFLOAD_MIN_BATCH - 1
# Mixed cards with every weight on the cards: a bound on the probing only.
PARTS_MAX_SLOTS = 256


class RememberingEstimator:
    """engine.estimate remembered for one curve: probing for the most slots visits the grid's
    own batches (2, 4, 8, 16 ...), and a re-placed estimate of parts is dear."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[tuple[BuildSpec, ModelSpec, Workload, CostAssumptions], Estimate] = {}

    def __call__(self, build: BuildSpec, model: ModelSpec, workload: Workload,
                 costs: CostAssumptions) -> Estimate:
        """The estimate, computed once per input."""
        key = (build, model, workload, costs)
        hit = self._seen.get(key)
        if hit is None:
            hit = self._seen[key] = estimate(build, model, workload, costs)
        return hit


def estimator_for(first: Estimate) -> Estimator:
    """The estimator a curve of this plan uses: remembered for builds of parts."""
    return RememberingEstimator() if first.placement is not None else estimate


def slots_cap(first: Estimate) -> int:
    """The most slots the curve of a build of parts may reach."""
    return OFFLOAD_MAX_SLOTS if first.offloaded else PARTS_MAX_SLOTS


def max_slots(ctx: Context, first: Estimate) -> int:
    """The largest concurrency the curve may reach: the estimate's closed form, or for a build
    of parts the most slots (up to the cap) whose estimate fits, by doubling then bisection."""
    if first.max_batch_that_fits is not None or first.placement is None:
        return first.max_batch_that_fits or 0
    if first.throughput is None:
        return 0
    cap = slots_cap(first)
    lo, hi = 1, 2
    while hi <= cap and estimate_at(ctx, hi).throughput is not None:
        lo, hi = hi, hi * 2
    if hi > cap:
        if estimate_at(ctx, cap).throughput is not None:
            return cap
        hi = cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if estimate_at(ctx, mid).throughput is not None:
            lo = mid
        else:
            hi = mid
    return lo


def slots_findings(ctx: Context, first: Estimate, top: int) -> list[Finding]:
    """How a build of parts serves several requests, and where its curve stops."""
    if first.placement is None or top < 1:
        return []
    out = []
    if first.offloaded:
        out.append(Finding(
            "info",
            f"Served by llama-server with up to {top} slots (--parallel N, one KV cache shared "
            "by the slots, -c N x context): each decode step reads the RAM-resident weights "
            "once for every slot at the host's RAM bandwidth, so total throughput grows slowly "
            "while each user's speed falls; CPU compute is not modelled (an estimate)",
        ))
        if top == OFFLOAD_MAX_SLOTS:
            out.append(Finding(
                "caution",
                f"The curve stops at {OFFLOAD_MAX_SLOTS} slots: from {OFFLOAD_MIN_BATCH} tokens "
                "per batch llama.cpp's CUDA backend copies the RAM-resident weights over PCIe "
                "for each step instead, which this estimate does not model",
            ))
    top_est = estimate_at(ctx, top)
    if top_est.placement is not None and top_est.placement.description != (
        first.placement.description
    ):
        out.append(Finding(
            "info",
            f"Each point places the layers for its number of slots (their KV cache takes card "
            f"memory): one slot has {first.placement.description}; {top} slots have "
            f"{top_est.placement.description}",
        ))
    return out
