"""Engine runs: API inputs to engine specs, one guarded engine call, memoised catalog runs.

- `workload_spec(workload: WorkloadIn) -> Workload`, `simple_workload(...)`: engine workloads.
- `inline_build_spec(snap, build)`, `inline_model_spec(model)`: specs of inline objects; input
  errors raise InvalidInput naming the request field (`build.*`, `model.config.*`).
- `run_engine(build, model, workload, costs, *, ref, counted)`: engine.estimate with its input
  errors as 422s naming the field (`build.*`, `model.config.*`, `workload.*`, `costs.*`).
- `catalog_estimate(snap, *, build, model, workload, costs) -> Estimate`: memoised engine run
  for catalog rows, keyed by the spec values (so it survives catalog versions that leave the
  build and model unchanged).
- `failover_cases(...)`: fit and speed after losing one accelerator / one node.
- `model_ref(model)`: a catalog model's Hugging Face repository (from its source URL).
"""

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.caching import Snapshot, ValueCache
from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    EngineInputError,
    Estimate,
    ModelSpec,
    Workload,
    estimate,
    failover,
    model_spec_from_hf_config,
)
from app.errors import FieldError, InvalidInput, field_errors, summary
from app.metrics import count_engine_evaluations
from app.schemas.estimate import DEFAULT_PROMPT_TOKENS, WorkloadIn
from app.schemas.inline import FORM_TEXT, InlineBuild, InlineModel
from app.services.accelerators import find_accelerator
from app.services.build_rows import BuildRow
from app.services.model_profiles import ModelProfileRow
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


def workload_spec(workload: WorkloadIn) -> Workload:
    """The engine's Workload for an API workload (prompt defaults to min(2048, context))."""
    prompt = workload.prompt_tokens or min(DEFAULT_PROMPT_TOKENS, workload.context_tokens)
    # Every WorkloadIn field is a Workload field of the same name (tests/services/test_specs.py):
    # passed as pydantic stored them, not read one by one.
    return Workload(**{**workload.__dict__, "prompt_tokens": prompt})


def simple_workload(
    *,
    precision: str,
    context_tokens: int,
    batch: int = 1,
    runtime: str | None = None,
    parallelism: str = "auto",
    offload: str = "auto",
) -> Workload:
    """An inference workload at a precision, context, batch, runtime (None = from the inputs),
    parallelism and host-RAM offload choice (prompt = min(2048, context))."""
    return workload_spec(
        WorkloadIn.model_validate(
            {
                "precision": precision,
                "context_tokens": context_tokens,
                "batch": batch,
                "runtime": runtime,
                "parallelism": parallelism,
                "offload": offload,
            }
        )
    )


def _catalog_accelerator_spec(
    snap: Snapshot, slug: str, field: str = "build.accelerator"
) -> AcceleratorSpec:
    """The engine spec of a catalog accelerator (404 naming `field` if unknown)."""
    return accelerator_spec(find_accelerator(snap, slug, field=field).record)


def inline_build_spec(snap: Snapshot, build: InlineBuild) -> BuildSpec:
    """Engine spec of an inline build (its accelerators catalog slugs or inline)."""
    return inline_build_spec_from(
        build, lambda slug, field: _catalog_accelerator_spec(snap, slug, field)
    )


def inline_model_spec(model: InlineModel) -> ModelSpec:
    """Engine spec of a pasted config.json; unreadable fields raise InvalidInput naming them."""
    try:
        # Not memoised: benchmarks/cache_layers.py measured no gain (parsing a config costs
        # about what building a key from its canonical JSON did).
        return model_spec_from_hf_config(
            model.config,
            name=model.name,
            params_total_published=model.params_total,
            params_active_published=model.params_active,
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
    match = _HF_REPO.match(model.record.source_url)
    return match.group(1) if match else None


def run_engine(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    *,
    ref: str | None = None,
    counted: bool = True,
) -> Estimate:
    """engine.estimate with its input errors turned into 422s naming the request field
    (`counted=False`: the caller counts its runs itself, once for many)."""
    if counted:
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
) -> Sequence[Any]:
    """Fit and speed after losing one accelerator / one node, as `estimate_answer` takes them
    (validated with the rest of the answer, a non-finite speed answered null there)."""
    try:
        return failover(build, model, workload, costs)
    except (EngineInputError, ArithmeticError):
        return ()


FormModelT = TypeVar("FormModelT", bound=BaseModel)


def validate_form_text(model: type[FormModelT], raw: Any) -> FormModelT:
    """A page's form values validated as `model`, raising InvalidInput naming each field."""
    try:
        # Form values are text: parse numbers from it (the JSON API takes them strictly).
        return model.model_validate(raw, strict=False, context={FORM_TEXT: True})
    except ValidationError as exc:
        errors = field_errors(exc.errors(include_url=False))
        raise InvalidInput(summary(errors), errors=errors) from None
