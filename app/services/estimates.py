"""Engine runs for the API and the pages: resolve builds and models, run, serialise.

Contract (callers: the JSON API, the HTML calculator, compare/recommend/tiers services):
- `cost_assumptions(settings, overrides=None) -> CostAssumptions`: the server's cost defaults
  (TIERLINE_AMORTIZATION_YEARS, _ELECTRICITY_USD_PER_KWH, _PUE) with optional overrides.
- `workload_spec(workload: WorkloadIn) -> Workload`: API workload -> engine workload.
- `run_estimate(session, *, request: EstimateRequest, costs) -> dict`: one engine run for a
  slug-or-inline build and model, answered in the `EstimateOut` shape. Unknown slugs raise
  NotFound naming `build` / `model`; engine input errors raise InvalidInput naming the field
  (`build.*`, `model.config.*`, `workload.*`).
- `run_batch(session, *, requests, costs) -> dict`: `BatchOut` shape; each entry is the answer
  or the problem that stopped it (one bad entry does not fail the others). The request has a
  cost budget (`REQUEST_PLAN_BUDGET` candidate plans, failover searches included); beyond it
  the whole request is a 413 (ContentTooLarge) and nothing is answered.
- Every answer carries the runtime the engine used (`workload.runtime`, `plan.runtime`), the
  plan's `launch_command` (catalog models named by their Hugging Face repository, from the
  model's source URL: `model_ref`) and `failover` (`failover_cases`: fit and speed after
  losing one accelerator / one node).
- `catalog_estimate(snap, *, build, model, workload, costs) -> Estimate`: memoised engine run
  for catalog rows, keyed by the spec values (so it survives catalog versions that leave the
  build and model unchanged); `estimate_answer(...)` serialises any Estimate.
- `builds_fitting_model(snap, *, model_slug, precision, context_tokens, field, runtime=None,
  parallelism="auto")`: slugs of the builds on which the model fits (batch 1), memoised per
  catalog version; runtime None = each build's default (GGUF or Apple: llama.cpp, else vLLM).
- `model_fits_for_build(session, *, slug, precision, context_tokens, batch, costs,
  runtime=None, parallelism="auto")`: every catalog model on one build, in the recommend-item
  shape (the build page's "what it runs").
"""

import json
import math
import re
from dataclasses import asdict, fields
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.config import Settings
from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    EngineInputError,
    Estimate,
    ModelSpec,
    Workload,
    derive_tier,
    estimate,
    failover,
    model_spec_from_hf_config,
)
from app.errors import ContentTooLarge, DomainError, FieldError, InvalidInput, field_errors, summary
from app.metrics import count_engine_evaluations
from app.schemas.estimate import (
    DEFAULT_PROMPT_TOKENS,
    FORM_TEXT,
    CostsIn,
    EstimateRequest,
    InlineBuild,
    InlineModel,
    WorkloadIn,
)
from app.services.accelerators import find_accelerator
from app.services.builds import BuildRow, build_rows, find_build, pooled_memory_gb
from app.services.cache import Snapshot, ValueCache, snapshot
from app.services.model_profiles import ModelProfileRow, find_model_profile, model_profile_rows
from app.services.specs import accelerator_spec, inline_build_spec_from

# Where an engine field lives in the request, so a 422 names the path the client sent.
_BUILD_FIELDS = {
    "nodes",
    "accelerators_per_node",
    "intra_node_link.kind",
    "inter_node_link.kind",
    "intra_node_link.bandwidth_gbs",
    "inter_node_link.bandwidth_gbps",
    "intra_node_link.latency_us",
    "inter_node_link.latency_us",
    "scale_up_domain_accelerators",
    "power_w",
    "price_usd",
}
_COST_FIELDS = {
    "amortization_years",
    "electricity_usd_per_kwh",
    "pue",
    "utilization",
    "host_power_fraction",
}


def cost_assumptions(
    settings: Settings | None, overrides: CostsIn | None = None
) -> CostAssumptions:
    """The cost assumptions the server quotes, with a request's overrides applied."""
    base = CostAssumptions()
    values = asdict(base)
    if settings is not None:
        values.update(
            amortization_years=settings.amortization_years,
            electricity_usd_per_kwh=settings.electricity_usd_per_kwh,
            pue=settings.pue,
        )
    if overrides is not None:
        values.update({k: v for k, v in overrides.model_dump().items() if v is not None})
    return CostAssumptions(**values)


def workload_spec(workload: WorkloadIn) -> Workload:
    """The engine's Workload for an API workload (prompt defaults to min(2048, context))."""
    prompt = workload.prompt_tokens or min(DEFAULT_PROMPT_TOKENS, workload.context_tokens)
    return Workload(
        mode=workload.mode,
        precision=workload.precision,
        kv_cache_precision=workload.kv_cache_precision,
        context_tokens=workload.context_tokens,
        prompt_tokens=prompt,
        batch=workload.batch,
        parallelism=workload.parallelism,
        runtime=workload.runtime,
        tensor_parallel=workload.tensor_parallel,
        pipeline_parallel=workload.pipeline_parallel,
        memory_utilization=workload.memory_utilization,
        zero_stage=workload.zero_stage,
        activation_recomputation=workload.activation_recomputation,
        training_tokens=workload.training_tokens,
        lora_rank=workload.lora_rank,
        model_flops_utilization=workload.model_flops_utilization,
        offload=workload.offload,
    )


def simple_workload(
    *,
    precision: str,
    context_tokens: int,
    batch: int = 1,
    runtime: str | None = None,
    parallelism: str = "auto",
) -> Workload:
    """An inference workload at a precision, context, batch, runtime (None = from the inputs)
    and parallelism (prompt = min(2048, context))."""
    return workload_spec(
        WorkloadIn.model_validate(
            {
                "precision": precision,
                "context_tokens": context_tokens,
                "batch": batch,
                "runtime": runtime,
                "parallelism": parallelism,
            }
        )
    )


# ---- resolving slugs and inline objects -----------------------------------------------------


def _catalog_accelerator_spec(
    snap: Snapshot, slug: str, field: str = "build.accelerator"
) -> AcceleratorSpec:
    """The engine spec of a catalog accelerator (404 naming `field` if unknown)."""
    return accelerator_spec(find_accelerator(snap, slug, field=field).read)


def inline_build_spec(snap: Snapshot, build: InlineBuild) -> BuildSpec:
    """Engine spec of an inline build (its accelerators catalog slugs or inline)."""
    return inline_build_spec_from(
        build, lambda slug, field: _catalog_accelerator_spec(snap, slug, field)
    )


# Parsed pasted configs by value: a batch (or a sweep of requests) usually pastes the same
# config.json for many builds, and parsing one costs more than its canonical JSON. The key holds
# every input of model_spec_from_hf_config (the config as canonical JSON, the name and the
# published counts), so an entry is never stale; a ModelSpec is frozen, so sharing it is safe.
# ~1 kB per entry: 1,000 entries are ~1 MB per worker. Configs that fail to parse are not kept.
PARSED_CONFIGS = ValueCache(max_entries=1_000)


def inline_model_spec(model: InlineModel) -> ModelSpec:
    """Engine spec of a pasted config.json; unreadable fields raise InvalidInput naming them."""
    try:
        key = (
            json.dumps(model.config, sort_keys=True, separators=(",", ":")),
            model.name,
            model.params_total,
            model.params_active,
        )
        return PARSED_CONFIGS.get(
            key,
            lambda: model_spec_from_hf_config(
                model.config,
                name=model.name,
                params_total_published=model.params_total,
                params_active_published=model.params_active,
            ),
        )
    except EngineInputError as exc:
        raise _engine_error(exc, prefix="model.config") from None
    except (TypeError, ValueError, ArithmeticError) as exc:  # malformed values deep in a config
        raise InvalidInput(
            f"model.config: cannot read this config.json ({type(exc).__name__})",
            errors=[FieldError("model.config", "cannot be read as a Hugging Face config.json")],
        ) from None


def _engine_error(exc: EngineInputError, *, prefix: str | None = None) -> InvalidInput:
    field = exc.field
    if prefix is not None:
        field = f"{prefix}.{field}"
    elif field.startswith("model."):
        field = f"model.config.{field.removeprefix('model.')}"
    elif field.startswith("accelerator.") or field in _BUILD_FIELDS:
        field = f"build.{field}"
    elif field in _COST_FIELDS:
        field = f"costs.{field}"
    else:
        field = f"workload.{field}"
    return InvalidInput(f"{field}: {exc.reason}", errors=[FieldError(field, exc.reason)])


_HF_REPO = re.compile(r"^https://huggingface\.co/([\w.-]+/[\w.-]+)")


def model_ref(model: ModelProfileRow | None) -> str | None:
    """The Hugging Face repository id of a catalog model (from its source URL), if any."""
    if model is None:
        return None
    match = _HF_REPO.match(str(model.read.get("source_url") or ""))
    return match.group(1) if match else None


def run_engine(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    *,
    ref: str | None = None,
) -> Estimate:
    """engine.estimate with its input errors turned into 422s naming the request field."""
    count_engine_evaluations()
    try:
        return estimate(build, model, workload, costs, model_ref=ref)
    except EngineInputError as exc:
        raise _engine_error(exc) from None
    except ArithmeticError:
        # Inline values the schemas bound can still multiply past a float (or the engine's
        # own checks); that is the input's fault, so answer 422 rather than 500.
        raise InvalidInput(
            "the inline build or model is too large for the engine to evaluate",
            errors=[FieldError("model", "values too large to evaluate")],
        ) from None


# Engine results by input value: at most ~1,000 entries per (precision, context, batch) sweep of
# the catalog, ~2.2 kB each (10,000 entries: ~22 MB per worker at worst).
ENGINE_RESULTS = ValueCache(max_entries=10_000)


def catalog_estimate(
    snap: Snapshot,
    *,
    build: BuildRow,
    model: ModelProfileRow,
    workload: Workload,
    costs: CostAssumptions,
) -> Estimate:
    """Engine run for catalog rows, memoised by value: the engine is a pure function of the
    specs, workload and costs, so a result stays right whatever else the catalog changes."""
    key = (build.spec, model.spec, workload, costs)
    ref = model_ref(model)
    return ENGINE_RESULTS.get(
        key, lambda: run_engine(build.spec, model.spec, workload, costs, ref=ref)
    )


def failover_cases(
    build: BuildSpec, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> list[dict[str, Any]]:
    """Fit and speed after losing one accelerator / one node, in the FailoverOut shape."""
    try:
        cases = failover(build, model, workload, costs)
    except (EngineInputError, ArithmeticError):
        return []
    return [_clean(c) for c in cases]


# ---- serialising -----------------------------------------------------------------------------


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


def _clean(result: Any) -> dict[str, Any]:
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
        "memory": _clean(est.memory),
        "plan": _flat(est.plan),
        "throughput": throughput,
        "cost": _clean(est.cost),
        "training": _clean(est.training) if est.training is not None else None,
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
    out = _clean(placement)
    out["cards"] = [_clean(card) for card in placement.cards]
    return out


# ---- use cases ------------------------------------------------------------------------------


def _estimate_at(
    snap: Snapshot, request: EstimateRequest, costs: CostAssumptions
) -> dict[str, Any]:
    workload = workload_spec(request.workload)
    build_row: BuildRow | None = None
    model_row: ModelProfileRow | None = None
    if isinstance(request.build, str):
        build_row = find_build(snap, request.build, field="build")
        build_spec_ = build_row.spec
        build = build_subject(build_spec_, slug=build_row.slug, tier=build_row.item["tier"])
    else:
        build_spec_ = inline_build_spec(snap, request.build)
        build = build_subject(build_spec_, slug=None)
    if isinstance(request.model, str):
        model_row = find_model_profile(snap, request.model, field="model")
        model_spec_ = model_row.spec
        model = model_subject(model_spec_, slug=model_row.slug)
    else:
        model_spec_ = inline_model_spec(request.model)
        model = model_subject(model_spec_, slug=None)
    if build_row is not None and model_row is not None:
        # Catalog runs are memoised whole: serialising an Estimate costs more than a cache hit.
        row_b, row_m = build_row, model_row
        return snap.memo(
            ("estimate_answer", row_b.slug, row_m.slug, workload, costs),
            lambda: estimate_answer(
                catalog_estimate(snap, build=row_b, model=row_m, workload=workload, costs=costs),
                build=build,
                model=model,
                workload=workload,
                failover=failover_cases(row_b.spec, row_m.spec, workload, costs),
            ),
        )
    est = run_engine(build_spec_, model_spec_, workload, costs, ref=model_ref(model_row))
    return estimate_answer(
        est,
        build=build,
        model=model,
        workload=workload,
        failover=failover_cases(build_spec_, model_spec_, workload, costs),
    )


def run_estimate(
    session: Session, *, request: EstimateRequest, costs: CostAssumptions
) -> dict[str, Any]:
    """One engine run (EstimateOut shape)."""
    return _estimate_at(snapshot(session), request, _request_costs(costs, request))


def _request_costs(costs: CostAssumptions, request: EstimateRequest) -> CostAssumptions:
    if request.costs is None:
        return costs
    values = asdict(costs)
    values.update({k: v for k, v in request.costs.model_dump().items() if v is not None})
    return CostAssumptions(**values)


# Cost budget of one request, in candidate plans the engine evaluates (each ~3 µs). The plan
# search is bounded per estimate (<= 8 tensor-parallel sizes x ~2 sqrt(layers) stage counts,
# whatever the accelerator count), so a full batch of 100 stays well inside it; the budget is
# the backstop that turns a costlier request into a 413 instead of minutes of CPU.
REQUEST_PLAN_BUDGET = 100_000


def plans_in(answer: dict[str, Any]) -> int:
    """Candidate plans an answer cost: its own search and its failover searches."""
    return int(answer["plan"]["plans_evaluated"]) * (1 + len(answer.get("failover") or []))


def run_batch(
    session: Session, *, requests: list[EstimateRequest], costs: CostAssumptions
) -> dict[str, Any]:
    """Several engine runs (BatchOut shape); a failing entry carries its problem instead.

    Raises ContentTooLarge (413) when the entries together exceed REQUEST_PLAN_BUDGET."""
    snap = snapshot(session)
    results = []
    spent = 0
    for index, request in enumerate(requests):
        try:
            answer = _estimate_at(snap, request, _request_costs(costs, request))
            spent += plans_in(answer)
            if spent > REQUEST_PLAN_BUDGET:
                raise ContentTooLarge(
                    f"the batch needs more than {REQUEST_PLAN_BUDGET:,} candidate plans "
                    f"(entry {index} crossed it); send fewer or smaller entries",
                    errors=[FieldError(str(index), "exceeds the request's plan budget")],
                )
        except ContentTooLarge:
            raise
        except DomainError as exc:
            problem = exc.problem()
            for err in problem.get("errors", []):
                err["field"] = f"{index}.{err['field']}"
            results.append({"index": index, "ok": False, "result": None, "error": problem})
        else:
            results.append({"index": index, "ok": True, "result": answer, "error": None})
    return {"results": results}


def parse_estimate_request(raw: Any) -> EstimateRequest:
    """Validate a raw estimate request (for the HTML calculator), raising InvalidInput."""
    try:
        # Form values are text: parse numbers from it (the JSON API takes them strictly).
        return EstimateRequest.model_validate(raw, strict=False, context={FORM_TEXT: True})
    except ValidationError as exc:
        errors = field_errors(exc.errors(include_url=False))
        raise InvalidInput(summary(errors), errors=errors) from None


def builds_fitting_model(
    snap: Snapshot,
    *,
    model_slug: str,
    precision: str,
    context_tokens: int,
    field: str = "model",
    runtime: str | None = None,
    parallelism: str = "auto",
) -> frozenset[str]:
    """Slugs of the catalog builds on which the model fits (batch 1), per catalog version."""
    model = find_model_profile(snap, model_slug, field=field)
    workload = simple_workload(
        precision=precision,
        context_tokens=context_tokens,
        runtime=runtime,
        parallelism=parallelism,
    )

    def compute() -> frozenset[str]:
        costs = CostAssumptions()  # fit does not depend on costs
        return frozenset(
            row.slug
            for row in build_rows(snap).rows
            if catalog_estimate(snap, build=row, model=model, workload=workload, costs=costs).fits
        )

    return snap.memo(("fitting", model.slug, workload), compute)


def model_fits_for_build(
    session: Session,
    *,
    slug: str,
    precision: str,
    context_tokens: int,
    batch: int = 1,
    costs: CostAssumptions,
    runtime: str | None = None,
    parallelism: str = "auto",
) -> list[dict[str, Any]]:
    """Every catalog model on one build: fit, verdict, speed and cost, largest model first."""
    from app.services.recommend import figures

    snap = snapshot(session)
    build = find_build(snap, slug)
    workload = simple_workload(
        precision=precision,
        context_tokens=context_tokens,
        batch=batch,
        runtime=runtime,
        parallelism=parallelism,
    )
    out = []
    for model in sorted(model_profile_rows(snap).values(), key=lambda m: (-m.params_total, m.slug)):
        est = catalog_estimate(snap, build=build, model=model, workload=workload, costs=costs)
        out.append({"model": model.item, **figures(est)})
    return out
