"""Engine results in the API's answer shapes (EstimateOut and its parts, FiguresOut)."""

import math
from dataclasses import fields
from typing import Any

from app.engine import BuildSpec, Estimate, ModelSpec, Workload, derive_tier
from app.services.build_rows import pooled_memory_gb

# Field names per engine result class, in declaration order (a handful of classes).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _flat(result: Any) -> dict[str, Any]:
    """A flat engine result (scalar fields only) as a dict, like dataclasses.asdict without
    its recursive deepcopy: the values are numbers and strings, so copying them buys nothing
    and cost a third of a batch request's time."""
    return {name: getattr(result, name) for name in _field_names(type(result))}


def _null_non_finite(values: dict[str, Any]) -> dict[str, Any]:
    """NaN and infinities as null (JSON has neither), in place; returns `values`."""
    for name, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            values[name] = None
    return values


def clean_result(result: Any) -> dict[str, Any]:
    """A flat engine result as a JSON-ready dict."""
    return _null_non_finite(_flat(result))


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


def build_subject(spec: BuildSpec, *, slug: str | None, tier: str | None = None) -> dict[str, Any]:
    """The `build` part of an answer."""
    return {
        "slug": slug,
        "name": spec.name,
        "tier": tier or derive_tier(spec),
        "accelerator_count": spec.accelerator_count,
        "total_memory_gb": spec.total_memory_gb,
        "pooled_memory_gb": pooled_memory_gb(spec),
        "price_usd": spec.price_usd,
    }


def model_subject(spec: ModelSpec, *, slug: str | None) -> dict[str, Any]:
    """The `model` part of an answer (published counts when known, else computed)."""
    return {
        "slug": slug,
        "name": spec.name,
        "params_total": spec.params_total_published or spec.params_total,
        "params_active": spec.params_active_published or spec.params_active,
    }


def workload_out(workload: Workload, runtime: str | None = None) -> dict[str, Any]:
    """The `workload` part of an answer (`runtime`: the one the engine used)."""
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


def estimate_answer(
    est: Estimate,
    *,
    build: dict[str, Any],
    model: dict[str, Any],
    workload: Workload,
    failover: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An engine Estimate in the API's answer shape (EstimateOut)."""
    if est.throughput is not None:
        t = est.throughput
        throughput = _null_non_finite(
            {
                "decode_tokens_per_s": t.decode_tokens_per_s,
                "aggregate_decode_tokens_per_s": t.aggregate_decode_tokens_per_s,
                "prefill_tokens_per_s": t.prefill_tokens_per_s,
                "time_to_first_token_s": t.time_to_first_token_s,
                "bottleneck": t.bottleneck,
                "decode_step_s": t.decode_step_s,
                "decode_memory_s": t.decode_memory_s,
                "decode_compute_s": t.decode_compute_s,
                "decode_communication_s": t.decode_communication_s,
                "decode_fixed_s": t.decode_fixed_s,
                "compute_bound_batch": t.compute_bound_batch,
            }
        )
    else:
        throughput = dict(_NULL_THROUGHPUT)
    return {
        "build": build,
        "model": model,
        "workload": workload_out(workload, est.runtime),
        "fits": est.fits,
        "verdict": est.verdict,
        "tier": est.tier,
        "memory": clean_result(est.memory),
        "plan": _flat(est.plan),
        "throughput": throughput,
        "cost": clean_result(est.cost),
        "training": clean_result(est.training) if est.training is not None else None,
        "max_context_tokens_that_fit": est.max_context_tokens_that_fit,
        "max_batch_that_fits": est.max_batch_that_fits,
        "findings": [{"severity": f.severity, "message": f.message} for f in est.findings],
        "assumptions": list(est.assumptions),
        "failover": failover or [],
        "estimated": True,
        "placement": _placement_out(est),
    }


def _placement_out(est: Estimate) -> dict[str, Any] | None:
    """Where the weights live for mixed cards / offload (None when the plan says it all)."""
    placement = est.placement
    if placement is None:
        return None
    out = clean_result(placement)
    out["cards"] = [clean_result(card) for card in placement.cards]
    return out


def figures(est: Estimate) -> dict[str, Any]:
    """The headline figures of an estimate (speed and cost null when it does not fit)."""
    t = est.throughput
    return {
        "fits": est.fits,
        "verdict": est.verdict,
        "decode_tokens_per_s": t.decode_tokens_per_s if t else None,
        "aggregate_decode_tokens_per_s": t.aggregate_decode_tokens_per_s if t else None,
        "time_to_first_token_s": t.time_to_first_token_s if t else None,
        "bottleneck": t.bottleneck if t else None,
        "usd_per_million_tokens": est.cost.usd_per_million_tokens if t else None,
        "memory_total_gb": est.memory.total_gb,
        "memory_per_accelerator_gb": est.memory.per_accelerator_gb,
        "rule_of_thumb_gb": est.memory.rule_of_thumb_gb,
        "plan": est.plan.description,
        "max_context_tokens_that_fit": est.max_context_tokens_that_fit,
        "runtime": est.runtime,
        "launch_command": est.plan.launch_command,
        "objective": est.plan.objective,
    }
