"""Serving curves as the API's typed answer (ServingOut), and the operating point in words.

The engine's frozen dataclasses are trusted values: they go into the response models with
`model_construct` (no re-validation), field by field in the models' declaration order.
"""

from typing import Any

from app.engine import BuildSpec, CostAssumptions, ModelSpec, Workload
from app.engine.serving import (
    DRAFT_TOKENS,
    MTP_DRAFT_TOKENS,
    ServiceLevel,
    ServingCurve,
    ServingPoint,
    ServingWorkload,
    SloPoint,
    Speculative,
    default_acceptance,
)
from app.schemas.estimate_answer import BuildSubjectOut, FindingOut, ModelSubjectOut, PlanOut
from app.schemas.serving import AtSloOut, ServingOut, ServingPointOut, ServingResolvedOut
from app.services.estimate_answers import workload_out

_POINT_FIELDS = tuple(ServingPointOut.model_fields)


def _point_values(point: ServingPoint) -> dict[str, Any]:
    # A curve point's API fields by name, for the models that extend ServingPointOut.
    return {name: getattr(point, name) for name in _POINT_FIELDS}


def point_out(point: ServingPoint) -> ServingPointOut:
    """One curve point in the API's shape."""
    return ServingPointOut.model_construct(**_point_values(point))


def operating_point_words(
    at: SloPoint, *, build_name: str, slo: ServiceLevel, usd_per_hour: float | None
) -> str:
    """The operating point as one sentence ("3 × DGX H200 serve 2,000 concurrent users …")."""
    p = at.point
    copies = at.copies_needed
    who = f"{copies:,} × {build_name}" if copies is not None else build_name
    verb = "serve" if copies is not None and copies > 1 else "serves"
    if slo.concurrent_users is not None:
        load = f"{slo.concurrent_users:,} concurrent users"
    elif slo.requests_per_s is not None:
        load = f"{slo.requests_per_s:,.4g} requests/s"
    else:
        load = f"{p.concurrency:,} concurrent requests"
    text = (
        f"{who} {verb} {load} at about {p.tokens_per_s_per_user:,.0f} tokens/s each "
        f"({p.itl_ms:,.1f} ms per token), time to first token {p.ttft_s:,.2f} s, running "
        f"{p.concurrency:,} requests per copy for {p.tokens_per_s_total:,.0f} tokens/s a copy"
    )
    if p.usd_per_million_output_tokens is not None:
        text += f", ${p.usd_per_million_output_tokens:,.2f} per million output tokens"
    if usd_per_hour is not None and copies is not None:
        text += f" (${usd_per_hour * copies:,.0f}/hour for all copies)"
    if at.utilization is not None:
        text += (
            f"; each copy runs at {at.utilization:.0%} of its capacity and a request waits "
            f"{p.queue_wait_s:,.2f} s for a slot on average"
        )
    return text + " — an estimate."


def serving_answer(
    curve: ServingCurve,
    *,
    build: BuildSpec,
    build_out: BuildSubjectOut,
    model: ModelSpec,
    model_out: ModelSubjectOut,
    workload: Workload,
    serving: ServingWorkload,
    slo: ServiceLevel,
    costs: CostAssumptions,
    draft_name: str | None,
) -> ServingOut:
    """A ServingCurve as the API's answer (ServingOut)."""
    at_out: AtSloOut | None = None
    if curve.at_slo is not None:
        at = curve.at_slo
        usd_per_hour = curve.usd_per_hour
        at_out = AtSloOut.model_construct(
            **_point_values(at.point),
            copies_needed=at.copies_needed,
            accelerators_needed=at.accelerators_needed,
            utilization=at.utilization,
            usd_per_hour_total=usd_per_hour * (at.copies_needed or 1)
            if usd_per_hour is not None
            else None,
            summary=operating_point_words(
                at, build_name=build.name, slo=slo, usd_per_hour=usd_per_hour
            ),
        )
    spec = serving.speculative
    rate = spec.acceptance_rate
    if spec.kind != "none" and rate is None:
        rate = default_acceptance(spec.kind, model.name)
    return ServingOut.model_construct(
        build=build_out,
        model=model_out,
        workload=workload_out(workload),
        serving=ServingResolvedOut.model_construct(
            input_tokens=serving.input_tokens,
            output_tokens=serving.output_tokens,
            ttft_s_max=slo.ttft_s_max,
            itl_ms_max=slo.itl_ms_max,
            tokens_per_s_per_user_min=slo.tokens_per_s_per_user_min,
            concurrent_users=slo.concurrent_users,
            requests_per_s=slo.requests_per_s,
            speculative_kind=spec.kind,
            acceptance_rate=rate,
            draft_tokens=curve_draft_tokens(spec),
            draft_model=draft_name,
        ),
        fits=curve.fits,
        max_concurrency=curve.max_concurrency,
        curve=[point_out(p) for p in curve.curve],
        at_slo=at_out,
        # The same plan object as the estimate answer (launch command, runtime and all).
        plan=PlanOut.model_validate(curve.plan, from_attributes=True),
        findings=[
            FindingOut.model_construct(severity=f.severity, message=f.message)
            for f in curve.findings
        ],
        assumptions=list(curve.assumptions),
        estimated=True,
    )


def curve_draft_tokens(spec: Speculative) -> int | None:
    """Drafted tokens per step the engine used (None without speculation)."""
    if spec.kind == "none":
        return None
    if spec.draft_tokens is not None:
        return spec.draft_tokens
    return MTP_DRAFT_TOKENS if spec.kind == "mtp" else DRAFT_TOKENS
