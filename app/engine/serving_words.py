"""The serving curve's findings and assumptions, in words."""

from __future__ import annotations

from .results import Estimate, Finding
from .serving_inputs import (
    ServiceLevel,
    ServingWorkload,
    expected_tokens_per_step,
    resolved_speculation,
)
from .serving_results import ServingPoint, SloPoint
from .specs import ModelSpec


def serving_findings(
    serving: ServingWorkload,
    slo: ServiceLevel,
    points: tuple[ServingPoint, ...],
    at: SloPoint | None,
    slower: list[int],
    model: ModelSpec,
    first: Estimate,
    plans_tried: int,
) -> list[Finding]:
    """Notes on the curve: unmet limits, speculation, the plan chosen, queueing."""
    out: list[Finding] = []
    if slo.has_limits and at is None and points:
        p = points[0]
        out.append(Finding(
            "caution",
            f"No concurrency meets the limits: even one request sees TTFT {p.ttft_s:.2f} s and "
            f"{p.itl_ms:.1f} ms per token ({p.tokens_per_s_per_user:.0f} tokens/s)",
        ))
    spec = serving.speculative
    if spec.kind != "none":
        rate, k = resolved_speculation(spec, model)
        gain = expected_tokens_per_step(rate, k)
        if spec.kind == "mtp":
            what = "MTP heads"
        else:
            what = f"draft model {spec.draft_model.name if spec.draft_model else ''}".strip()
        out.append(Finding(
            "info",
            f"Speculative decoding with {what}: acceptance {rate:.0%}, {k} drafted "
            f"token{'s' if k > 1 else ''} per step, {gain:.2f} tokens per verify step; their "
            "weights are not counted in the memory fit",
        ))
        if slower:
            out.append(Finding(
                "caution",
                f"From concurrency {slower[0]:,} the verify passes cost more compute than "
                "speculation saves: inter-token latency is longer than without it",
            ))
    if plans_tried > 1:
        out.append(Finding(
            "info",
            f"Plan chosen for the SLO among {plans_tried} candidates (tensor-parallel group "
            "sizes, and expert parallel for mixture-of-experts models where the runtime has "
            f"it): {first.plan.description}",
        ))
    if at is not None and at.utilization is not None:
        out.append(Finding(
            "info",
            f"At {slo.requests_per_s:g} requests/s each copy runs at {at.utilization:.0%} of "
            f"its capacity; waiting for a slot adds {at.point.queue_wait_s:.3f} s to TTFT",
        ))
    return out


def serving_assumptions(
    serving: ServingWorkload, model: ModelSpec, first: Estimate
) -> tuple[str, ...]:
    """The estimate's assumptions plus the serving model's."""
    rt = ("prefill chunk and pass = the workload's token budget (prefill_token_budget), else the "
          "runtime's prefill_chunk_tokens")
    return first.assumptions + (
        f"Serving: {serving.input_tokens:,} prompt and {serving.output_tokens:,} answer tokens "
        "per request; each slot reserves a whole request's memory, and decode is evaluated at "
        "the mean length over an answer (prompt + half the answer)",
        "Continuous batching with chunked prefill: at steady arrivals every decode step also "
        "prefills the prompts of the requests it finishes (batch x tokens per step / output "
        "of them, short prompts packed into one pass up to the runtime's token budget); that "
        "prefill compute adds to the step's compute and hides only under its weight reads "
        f"while those take longer; {rt}",
        "TTFT = half a decode step waiting for a running batch to take the prompt (when one is "
        "running), then the "
        "prompt's own chunks, each sharing a step with the batch; with a requests/s load, plus "
        "the mean M/M/c wait for a slot (Sakasegawa's approximation)",
        "$ per million tokens: the whole build's $/hour split between prompt and answer tokens "
        "by their share of GPU time, at the cost assumptions' utilisation",
        "Concurrent users are requests in flight (no think time); tokens/s per accelerator "
        "divides by every accelerator of the build",
        "Speculative decoding (when speculative.kind is not none, this replaces the estimate's "
        "'no speculative decoding / MTP'): tokens per verify step (1 - a^(k+1))/(1 - a) "
        "(Leviathan et al. 2023); a verify pass runs k+1 tokens per sequence; an MTP head costs "
        "one decoder layer per drafted token",
    )
