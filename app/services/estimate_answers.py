"""Engine results as the API's typed answers (EstimateOut and its parts, FiguresOut).

The engine's frozen dataclasses are trusted values: they are read into the response models by
attribute (`from_attributes`, one pass in pydantic-core) instead of through intermediate dicts.
JSON has no NaN or infinity, so a part holding one is answered with that figure null, as before.
"""

from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.engine import BuildSpec, Estimate, FailoverCase, ModelSpec, Workload, derive_tier
from app.schemas.estimate_answer import (
    BuildSubjectOut,
    EstimateOut,
    FailoverOut,
    ModelSubjectOut,
    WorkloadOut,
)
from app.schemas.model_profile import ModelListItem
from app.schemas.recommend import FiguresOut, ModelFitOut
from app.services.build_rows import pooled_memory_gb

_ESTIMATE = TypeAdapter(EstimateOut)
_FAILOVER = TypeAdapter(list[FailoverOut])

# Field names per engine result class, in declaration order (a handful of classes).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _finite(parts: Sequence[Any]) -> bool:
    """True when no float field of these flat engine results is NaN or infinite.

    A result with a __dict__ is read from it: its stored fields, not the deferred ones
    (results.Deferred), which would be computed by the read (Throughput.packed_prefill_s is in
    no answer). Slotted results are read field by field."""
    for part in parts:
        if part is None:
            continue
        own = getattr(part, "__dict__", None)
        values = (
            own.values()
            if own is not None
            else [getattr(part, name) for name in _field_names(type(part))]
        )
        for value in values:
            # x - x is 0.0 for a finite float and NaN (truthy) for NaN or an infinity.
            if value.__class__ is float and value - value:
                return False
    return True


def _stored(part: Any) -> Any:
    """A flat engine result as the answer validates it: its __dict__ where it has one."""
    own = getattr(part, "__dict__", None)
    return part if own is None else own


def _nulled(part: Any) -> dict[str, Any] | None:
    """A flat engine result as a dict with its non-finite figures null (the rare slow path)."""
    if part is None:
        return None
    values = {name: getattr(part, name) for name in _field_names(type(part))}
    for name, value in values.items():
        if value.__class__ is float and value - value:
            values[name] = None
    return values


_NULL_THROUGHPUT = dict.fromkeys(
    (
        "decode_tokens_per_s",
        "aggregate_decode_tokens_per_s",
        "prefill_tokens_per_s",
        "time_to_first_token_s",
        "bottleneck",
        "decode_step_s",
        "decode_memory_s",
        "decode_compute_s",
        "decode_communication_s",
        "decode_fixed_s",
        "compute_bound_batch",
    )
)


def _build_subject_values(
    spec: BuildSpec, *, slug: str | None, tier: str | None = None
) -> dict[str, Any]:
    # The values BuildSubjectOut validates (an estimate validates them with its answer).
    return {
        "slug": slug,
        "name": spec.name,
        "tier": tier or derive_tier(spec),
        "accelerator_count": spec.accelerator_count,
        "total_memory_gb": spec.total_memory_gb,
        "pooled_memory_gb": pooled_memory_gb(spec),
        "price_usd": spec.price_usd,
    }


def build_subject(spec: BuildSpec, *, slug: str | None, tier: str | None = None) -> BuildSubjectOut:
    """The `build` part of an answer."""
    return BuildSubjectOut(**_build_subject_values(spec, slug=slug, tier=tier))


def _model_subject_values(spec: ModelSpec, *, slug: str | None) -> dict[str, Any]:
    # ModelSubjectOut's values: published counts when known, else computed.
    return {
        "slug": slug,
        "name": spec.name,
        "params_total": spec.params_total_published or spec.params_total,
        "params_active": spec.params_active_published or spec.params_active,
    }


def model_subject(spec: ModelSpec, *, slug: str | None) -> ModelSubjectOut:
    """The `model` part of an answer."""
    return ModelSubjectOut(**_model_subject_values(spec, slug=slug))


def _workload_values(workload: Workload, runtime: str | None) -> dict[str, Any]:
    return {
        "mode": workload.mode,
        "precision": workload.precision,
        "kv_cache_precision": workload.kv_cache_precision,
        "context_tokens": workload.context_tokens,
        "prompt_tokens": workload.prompt_tokens,
        "batch": workload.batch,
        "parallelism": workload.parallelism,
        "runtime": runtime or workload.runtime or "auto",
        "offload": workload.offload,
    }


def workload_out(workload: Workload, runtime: str | None = None) -> WorkloadOut:
    """The `workload` part of an answer (`runtime`: the one the engine used)."""
    return WorkloadOut(**_workload_values(workload, runtime))


def failover_values(cases: Sequence[FailoverCase]) -> Sequence[Any]:
    """Failover cases as FailoverOut validates them (from their attributes), non-finite
    speeds null."""
    if _finite(cases):
        return cases
    return [_nulled(c) for c in cases]


def failover_out(cases: Sequence[FailoverCase]) -> list[FailoverOut]:
    """Failover cases as FailoverOut (non-finite speeds null)."""
    return _FAILOVER.validate_python(failover_values(cases), from_attributes=True)


def estimate_answer(
    est: Estimate,
    *,
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    build_slug: str | None = None,
    build_tier: str | None = None,
    model_slug: str | None = None,
    failover: Sequence[Any] = (),
    model_out: ModelSubjectOut | None = None,
) -> EstimateOut:
    """An engine Estimate as the API's answer (EstimateOut), with its build and model parts
    (slugs null for inline ones; `model_out`: the model part already built, as answers of
    one model share it) and `failover` as FailoverCase items or `failover_values`: validated
    in one pass."""
    # The dataclasses that keep their fields in __dict__ (results.fill_*) are validated from
    # that mapping: pydantic reads a dict ~0.4 µs a part faster than by attribute, and the
    # stored fields are exactly what the attribute reads would return (the extra keys,
    # `_words` and fields no answer shows, are ignored like unread attributes).
    parts = (est.memory, est.throughput, est.cost, est.training)
    answer = {
        "build": _build_subject_values(build, slug=build_slug, tier=build_tier),
        "model": _model_subject_values(model, slug=model_slug) if model_out is None else model_out,
        "workload": _workload_values(workload, est.runtime),
        "fits": est.fits,
        "verdict": est.verdict,
        "tier": est.tier,
        "plan": est.plan,
        "max_context_tokens_that_fit": est.max_context_tokens_that_fit,
        "max_batch_that_fits": est.max_batch_that_fits,
        "findings": est.findings,
        "assumptions": est.assumptions,
        "failover": failover,
        "estimated": True,
        "placement": est.placement,
    }
    try:
        return _ESTIMATE.validate_python(_with_parts(answer, map(_stored, parts)),
                                         from_attributes=True)  # fmt: skip
    except ValidationError:
        # The figure parts refuse a NaN or an infinity (schemas.estimate_answer.FiguresPartOut):
        # answer those figures null, the rest as they are. Any other error fails again below.
        answer["placement"] = _placement_nulled(est)
        answer["failover"] = failover_values(failover)
        return _ESTIMATE.validate_python(_with_parts(answer, map(_nulled, parts)),
                                         from_attributes=True)  # fmt: skip


def _with_parts(answer: dict[str, Any], parts: Iterable[Any]) -> dict[str, Any]:
    """The answer's values with its memory, throughput, cost and training parts."""
    memory, throughput, cost, training = parts
    answer["memory"] = memory
    answer["throughput"] = _NULL_THROUGHPUT if throughput is None else throughput
    answer["cost"] = cost
    answer["training"] = training
    return answer


def _placement_nulled(est: Estimate) -> dict[str, Any] | None:
    """Where the weights live, non-finite figures null (None when the plan says it all)."""
    out = _nulled(est.placement)
    if out is not None and est.placement is not None:
        out["cards"] = [_nulled(card) for card in est.placement.cards]
    return out


def figures(est: Estimate) -> FiguresOut:
    """The headline figures of an estimate (speed and cost null when it does not fit)."""
    return FiguresOut(**_figure_values(est))


def model_fit(est: Estimate, model: ModelListItem) -> ModelFitOut:
    """A catalog model's figures on one build."""
    return ModelFitOut(model=model, offloaded=est.offloaded, **_figure_values(est))


def _figure_values(est: Estimate) -> dict[str, Any]:
    t = est.throughput
    return dict(
        fits=est.fits,
        verdict=est.verdict,
        decode_tokens_per_s=t.decode_tokens_per_s if t else None,
        aggregate_decode_tokens_per_s=t.aggregate_decode_tokens_per_s if t else None,
        time_to_first_token_s=t.time_to_first_token_s if t else None,
        bottleneck=t.bottleneck if t else None,
        usd_per_million_tokens=est.cost.usd_per_million_tokens if t else None,
        memory_total_gb=est.memory.total_gb,
        memory_per_accelerator_gb=est.memory.per_accelerator_gb,
        rule_of_thumb_gb=est.memory.rule_of_thumb_gb,
        plan=est.plan.description,
        max_context_tokens_that_fit=est.max_context_tokens_that_fit,
        runtime=est.runtime,
        launch_command=est.plan.launch_command,
        objective=est.plan.objective,
    )
