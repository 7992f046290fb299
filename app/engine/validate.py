"""Input validation: every field checked once, EngineInputError naming the first bad one."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import EngineInputError
from .precision import KV_BITS, PRECISIONS
from .runtime import RUNTIMES
from .specs import (
    INTER_LINK_KINDS,
    INTRA_LINK_KINDS,
    BuildSpec,
    CostAssumptions,
    ModelSpec,
    Workload,
)

MODES = ("inference", "training", "lora", "qlora")
PARALLELISMS = ("auto", "tensor", "pipeline")


def _positive(value: float | int | None, field: str, *, allow_none: bool = False) -> None:
    if value is None:
        if allow_none:
            return
        raise EngineInputError(field, "is required")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EngineInputError(field, f"must be a finite number, got {value!r}")
    if value <= 0:
        raise EngineInputError(field, f"must be positive, got {value}")


def _non_negative(value: float | int | None, field: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EngineInputError(field, f"must be a finite number, got {value!r}")
    if value < 0:
        raise EngineInputError(field, f"must not be negative, got {value}")


_NUM = (int, float)
_INF = float("inf")


# Inputs that passed the fast check, by identity: a catalogue sweep or a serving curve asks
# about the same frozen build, model, workload and costs objects many times. Holding the object
# keeps its id from being reused; bounded, cleared when full.
_PASSED: dict[int, object] = {}
_PASSED_MAX = 4096


def _passed(obj: object, check: Callable[[Any], bool]) -> bool:
    if _PASSED.get(id(obj)) is obj:
        return True
    if not check(obj):
        return False
    if len(_PASSED) >= _PASSED_MAX:
        _PASSED.clear()
    _PASSED[id(obj)] = obj
    return True


def _build_ok(build: BuildSpec) -> bool:
    acc = build.accelerator
    for v in (acc.memory_gb, acc.memory_bandwidth_gbs, acc.fp16_tflops):
        if type(v) not in _NUM or not 0 < v < _INF:
            return False
    for opt in (
        acc.fp8_tflops,
        acc.int8_tops,
        acc.fp4_tflops,
        acc.tdp_w,
        acc.price_usd,
        build.intra_node_link.bandwidth_gbs,
        build.inter_node_link.bandwidth_gbps,
        build.intra_node_link.latency_us,
        build.inter_node_link.latency_us,
        build.power_w,
        build.price_usd,
    ):
        if opt is not None and (type(opt) not in _NUM or not 0 <= opt < _INF):
            return False
    for v in (build.nodes, build.accelerators_per_node):
        if type(v) is not int or v < 1:
            return False
    return (
        acc.memory_kind in ("discrete", "unified")
        and build.intra_node_link.kind in INTRA_LINK_KINDS
        and build.inter_node_link.kind in INTER_LINK_KINDS
        and build.scale_up_domain_accelerators is None
    )


def _model_ok(model: ModelSpec) -> bool:
    for v in (
        model.num_hidden_layers,
        model.hidden_size,
        model.num_attention_heads,
        model.num_key_value_heads,
        model.head_dim,
        model.intermediate_size,
        model.vocab_size,
    ):
        if type(v) is not int or v < 1:
            return False
    return (
        model.num_attention_heads % model.num_key_value_heads == 0
        and (model.n_routed_experts == 0 or model.num_experts_per_tok <= model.n_routed_experts)
        and 0 <= model.sliding_window_layers <= model.num_hidden_layers
        and (not model.sliding_window_layers or bool(model.sliding_window))
    )


def _workload_ok(w: Workload) -> bool:
    for v in (w.context_tokens, w.prompt_tokens, w.batch):
        if type(v) is not int or v < 1:
            return False
    return (
        w.mode in MODES
        and w.precision in PRECISIONS
        and (w.kv_cache_precision is None or w.kv_cache_precision in KV_BITS)
        and w.parallelism in PARALLELISMS
        and (w.runtime is None or w.runtime in RUNTIMES)
        and w.tensor_parallel is None
        and w.pipeline_parallel is None
        and w.memory_utilization is None
        and w.zero_stage in (0, 1, 2, 3)
        and type(w.training_tokens) is int
        and w.training_tokens >= 0
        and (w.mode not in ("lora", "qlora") or (type(w.lora_rank) is int and w.lora_rank > 0))
        and w.model_flops_utilization is None
    )


def _costs_ok(costs: CostAssumptions) -> bool:
    return (
        type(costs.amortization_years) in _NUM
        and 0 < costs.amortization_years < _INF
        and type(costs.electricity_usd_per_kwh) in _NUM
        and 0 <= costs.electricity_usd_per_kwh < _INF
        and type(costs.pue) in _NUM
        and 1 <= costs.pue <= 3
        and type(costs.utilization) in _NUM
        and 0 < costs.utilization <= 1
        and type(costs.host_power_fraction) in _NUM
        and 0 <= costs.host_power_fraction < _INF
    )


def _fast_ok(
    build: BuildSpec, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> bool:
    """Cheap all-in-one check; the detailed checks run only when this fails."""
    seen = _PASSED.get
    if (
        seen(id(build)) is build
        and seen(id(model)) is model
        and seen(id(workload)) is workload
        and seen(id(costs)) is costs
    ):
        return True  # all four seen before: four lookups, no calls
    return (
        _passed(build, _build_ok)
        and _passed(model, _model_ok)
        and _passed(workload, _workload_ok)
        and _passed(costs, _costs_ok)
    )


def validate(
    build: BuildSpec, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> None:
    """Raise EngineInputError naming the first invalid field."""
    if _fast_ok(build, model, workload, costs):
        return  # the common case: every field valid; the slow path below names the culprit
    acc = build.accelerator
    _positive(acc.memory_gb, "accelerator.memory_gb")
    _positive(acc.memory_bandwidth_gbs, "accelerator.memory_bandwidth_gbs")
    _positive(acc.fp16_tflops, "accelerator.fp16_tflops")
    if acc.memory_kind not in ("discrete", "unified"):
        raise EngineInputError("accelerator.memory_kind", "must be 'discrete' or 'unified'")
    for name in ("fp8_tflops", "int8_tops", "fp4_tflops", "tdp_w", "price_usd"):
        _non_negative(getattr(acc, name), f"accelerator.{name}")
    for name in ("nodes", "accelerators_per_node"):
        value = getattr(build, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(name, f"must be a positive integer, got {value!r}")
    if build.intra_node_link.kind not in INTRA_LINK_KINDS:
        raise EngineInputError(
            "intra_node_link.kind", f"unknown link {build.intra_node_link.kind!r}"
        )
    if build.inter_node_link.kind not in INTER_LINK_KINDS:
        raise EngineInputError(
            "inter_node_link.kind", f"unknown link {build.inter_node_link.kind!r}"
        )
    _non_negative(build.intra_node_link.bandwidth_gbs, "intra_node_link.bandwidth_gbs")
    _non_negative(build.inter_node_link.bandwidth_gbps, "inter_node_link.bandwidth_gbps")
    _non_negative(build.intra_node_link.latency_us, "intra_node_link.latency_us")
    _non_negative(build.inter_node_link.latency_us, "inter_node_link.latency_us")
    if build.scale_up_domain_accelerators is not None:
        _positive(build.scale_up_domain_accelerators, "scale_up_domain_accelerators")
    _non_negative(build.power_w, "power_w")
    _non_negative(build.price_usd, "price_usd")

    for name in (
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "intermediate_size",
        "vocab_size",
    ):
        value = getattr(model, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(f"model.{name}", f"must be a positive integer, got {value!r}")
    if model.num_attention_heads % model.num_key_value_heads:
        raise EngineInputError("model.num_key_value_heads", "must divide num_attention_heads")
    if model.n_routed_experts and model.num_experts_per_tok > model.n_routed_experts:
        raise EngineInputError("model.num_experts_per_tok", "exceeds n_routed_experts")
    if model.sliding_window_layers > model.num_hidden_layers or model.sliding_window_layers < 0:
        raise EngineInputError("model.sliding_window_layers", "must be 0..num_hidden_layers")
    if model.sliding_window_layers and not model.sliding_window:
        raise EngineInputError("model.sliding_window", "required when sliding_window_layers > 0")

    if workload.mode not in MODES:
        raise EngineInputError("mode", f"must be one of {', '.join(MODES)}")
    if workload.precision not in PRECISIONS:
        raise EngineInputError(
            "precision", f"unknown precision {workload.precision!r}; known: {', '.join(PRECISIONS)}"
        )
    kv = workload.kv_cache_precision
    if kv is not None and kv not in KV_BITS:
        raise EngineInputError(
            "kv_cache_precision", f"unknown KV-cache precision {kv!r}; known: {', '.join(KV_BITS)}"
        )
    for name in ("context_tokens", "prompt_tokens", "batch"):
        value = getattr(workload, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(name, f"must be a positive integer, got {value!r}")
    if workload.parallelism not in PARALLELISMS:
        raise EngineInputError("parallelism", f"must be one of {', '.join(PARALLELISMS)}")
    if workload.runtime is not None and workload.runtime not in RUNTIMES:
        raise EngineInputError("runtime", f"unknown runtime; known: {', '.join(RUNTIMES)}")
    for name in ("tensor_parallel", "pipeline_parallel"):
        value = getattr(workload, name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise EngineInputError(name, f"must be a positive integer, got {value!r}")
    tp = workload.tensor_parallel or 1
    pp = workload.pipeline_parallel or 1
    if tp * pp > build.accelerator_count:
        raise EngineInputError(
            "tensor_parallel",
            f"{tp} x {pp} exceeds the build's {build.accelerator_count} accelerators",
        )
    if workload.memory_utilization is not None and not 0 < workload.memory_utilization <= 1:
        raise EngineInputError("memory_utilization", "must be in (0, 1]")
    if workload.zero_stage not in (0, 1, 2, 3):
        raise EngineInputError("zero_stage", "must be 0, 1, 2 or 3")
    _non_negative(workload.training_tokens, "training_tokens")
    if workload.mode in ("lora", "qlora"):
        _positive(workload.lora_rank, "lora_rank")
    mfu = workload.model_flops_utilization
    if mfu is not None and not 0 < mfu <= 1:
        raise EngineInputError("model_flops_utilization", "must be in (0, 1]")

    _positive(costs.amortization_years, "amortization_years")
    _non_negative(costs.electricity_usd_per_kwh, "electricity_usd_per_kwh")
    if not 1 <= costs.pue <= 3:
        raise EngineInputError("pue", "must be between 1 and 3")
    if not 0 < costs.utilization <= 1:
        raise EngineInputError("utilization", "must be in (0, 1]")
    _non_negative(costs.host_power_fraction, "host_power_fraction")
