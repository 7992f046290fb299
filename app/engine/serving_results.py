"""Serving outputs: points of the curve, the operating point at an SLO, the whole curve."""

from __future__ import annotations

from dataclasses import dataclass

from .results import Finding, ParallelPlan


@dataclass(frozen=True, slots=True)
class ServingPoint:
    """One concurrency on the curve (all figures are estimates)."""

    concurrency: int  # requests in flight on the whole build
    tokens_per_s_per_user: float  # generated tokens/s each request sees while decoding
    tokens_per_s_total: float  # generated tokens/s over the whole build
    tokens_per_s_per_accelerator: float  # total / every accelerator of the build
    ttft_s: float  # time to first token, queueing for a slot included
    itl_ms: float  # inter-token latency (time per output token)
    usd_per_million_input_tokens: float | None
    usd_per_million_output_tokens: float | None
    requests_per_s: float  # completed requests per second
    input_tokens_per_s: float  # prompt tokens prefilled per second
    prefill_share: float  # share of GPU time spent on prefill chunks
    queue_wait_s: float  # part of ttft_s spent waiting for a slot
    tokens_per_step: float  # tokens each request gains per decode step (>1 with speculation)
    bottleneck: str
    # Request's time in the system, first prompt chunk (or waiting for a slot) to last token.
    e2e_latency_s: float = 0.0


@dataclass(frozen=True, slots=True)
class SloPoint:
    """The best operating point under a service level and the copies a target load needs."""

    point: ServingPoint
    copies_needed: int | None  # None when no load was given
    accelerators_needed: int | None
    utilization: float | None  # offered requests / capacity of the copies (requests_per_s load)


@dataclass(frozen=True, slots=True)
class ServingCurve:
    """A build serving a model: the curve, the operating point at the SLO, plan and notes."""

    fits: bool
    curve: tuple[ServingPoint, ...]
    at_slo: SloPoint | None
    plan: ParallelPlan
    max_concurrency: int  # the largest concurrency that fits (0 when the model does not fit)
    usd_per_hour: float | None  # one copy of the build: purchase amortised plus power
    findings: tuple[Finding, ...]
    assumptions: tuple[str, ...]
    estimated: bool = True
