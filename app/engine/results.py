"""Output dataclasses: the estimate and its parts.

The objects every estimate builds (Estimate, its MemoryBreakdown, ParallelPlan, Throughput
and CostFigures) are frozen dataclasses without __slots__, so that the engine can fill each
with one dict store per field (`fill_*`, see `_filler`) and leave its words (verdict,
findings, assumptions, plan text) to be computed on first read (`Deferred`): a catalogue
sweep that reads fit, speed and cost pays for neither a frozen setattr per field nor text
nobody reads. From outside they are ordinary frozen dataclasses: fields(), asdict(),
replace(), ==, hash, repr and pickle read every field, deferred or not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from .slot_init import slot_init

_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)
class Finding:
    """One remark about the estimate; severity is "blocker", "caution" or "info"."""

    severity: str
    message: str


@dataclass(frozen=True)
class MemoryBreakdown:
    """Memory needed versus available, in GB (1e9 bytes; capacities stated in GiB converted).

    The component fields (weights ... gradients) and `total_gb` describe one model replica
    summed over its accelerators: `total_gb` is *the* "memory needed" figure every page shows;
    `per_accelerator_gb` is the fullest accelerator. `spare_gb` is usable memory no running
    replica uses.
    """

    total_gb: float
    per_accelerator_gb: float
    available_per_accelerator_gb: float
    available_total_gb: float
    weights_gb: float
    kv_cache_gb: float
    activations_gb: float
    overhead_gb: float
    optimizer_gb: float
    gradients_gb: float
    rule_of_thumb_gb: float
    spare_gb: float
    build_memory_gb: float = 0.0  # raw accelerator memory of the whole build
    kv_cache_gb_per_token: float = 0.0  # per sequence, all layers, before window caps


@dataclass(frozen=True)
class ParallelPlan:
    """How the model is split: tensor x pipeline (x data) parallel, experts spread over TP."""

    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int
    expert_parallel: int
    accelerators_used: int
    layers_per_stage: int
    description: str
    runtime: str = "vllm"
    objective: str = ""  # what the automatic choice optimised, in words
    launch_command: str = ""
    replicas_active: int = 1  # replicas holding sequences (inference) / training replicas
    nodes_used: int = 1
    node_usage: str = "single node"  # "single node" | "replicas per node" | "spread over nodes"
    plans_evaluated: int = 1  # candidate splits whose memory the search computed


@dataclass(frozen=True)
class Throughput:
    """Decode and prefill speed; decode split into its per-token time components."""

    decode_tokens_per_s: float  # per sequence
    aggregate_decode_tokens_per_s: float  # all sequences, all data-parallel replicas
    prefill_tokens_per_s: float
    time_to_first_token_s: float
    bottleneck: str  # "memory bandwidth" | "compute" | "interconnect" | "capacity"
    decode_memory_s: float  # per decode step (one token for every sequence in the replica)
    decode_compute_s: float
    decode_communication_s: float
    decode_fixed_s: float
    decode_step_s: float
    compute_bound_batch: int | None  # smallest batch at which compute time exceeds memory time
    batch_per_replica: int = 1
    # Prefill seconds per prompt when a server packs several short prompts into one prefill
    # pass of the runtime's chunk (speed.prefill); None: as time_to_first_token_s (and at one
    # sequence per replica, where no other prompt shares the pass).
    packed_prefill_s: float | None = None


@dataclass(frozen=True)
class CostFigures:
    """Money and energy; None where the price or power is unknown."""

    price_usd: float | None
    power_w: float | None
    usd_per_hour: float | None
    joules_per_token: float | None
    usd_per_million_tokens: float | None
    usd_per_gb_memory: float | None
    amortization_years: float
    electricity_usd_per_kwh: float
    pue: float
    utilization: float
    capital_usd_per_hour: float | None = None
    energy_usd_per_hour: float | None = None
    # Generated tokens per second the $ and J per token are divided by: the batch's decode
    # rate with each request's prefill time included (see cost.billed_tokens_per_s).
    billed_tokens_per_s: float | None = None


@dataclass(frozen=True, slots=True)
class TrainingFigures:
    """Training / fine-tuning time and cost for Workload.training_tokens."""

    tokens_per_s: float
    time_to_train_hours: float | None
    cost_usd: float | None
    model_flops_utilization: float
    flops_per_token: float = 0.0
    trainable_params: int = 0
    communication_s_per_step: float = 0.0  # exposed gradient all-reduce / ZeRO-3 gathers
    recomputation: bool = False


@dataclass(frozen=True, slots=True)
class CardShare:
    """What one card of a layer split holds and how long its share of a token takes."""

    name: str
    layers: int
    memory_needed_gb: float
    memory_usable_gb: float
    decode_s: float


@dataclass(frozen=True, slots=True)
class Placement:
    """Where the weights live: the cards' layer split and what stays in host RAM."""

    description: str
    cards: tuple[CardShare, ...]
    offload: str  # "none" | "experts" | "layers" | "experts+layers"
    gpu_layers: int
    cpu_layers: int
    expert_layers_in_ram: int
    moe_layers: int
    ram_needed_gb: float
    ram_usable_gb: float | None
    ram_bandwidth_gbs: float | None
    decode_ram_s: float
    prefill_pcie_s: float
    launch_flags: str


@dataclass(frozen=True)
class Estimate:
    """Everything the engine says about one build running one model under one workload."""

    fits: bool
    verdict: str
    memory: MemoryBreakdown
    plan: ParallelPlan
    throughput: Throughput | None
    cost: CostFigures
    training: TrainingFigures | None
    findings: tuple[Finding, ...]
    assumptions: tuple[str, ...]
    max_context_tokens_that_fit: int | None
    max_batch_that_fits: int | None
    tier: str = "desktop"
    runtime: str = "vllm"
    # Set for mixed cards and host-RAM offload (engine/parts.py); None = the plan says it all.
    placement: Placement | None = None

    @property
    def offloaded(self) -> bool:
        """Some weights live in host RAM (CPU offload), not on the cards."""
        return self.placement is not None and self.placement.offload != "none"


@dataclass(frozen=True, slots=True)
class FailoverCase:
    """The model after losing part of the build (N-1)."""

    lost: str  # "one accelerator" | "one node"
    accelerators_left: int
    fits: bool
    decode_tokens_per_s: float | None
    aggregate_decode_tokens_per_s: float | None
    plan: str


class Deferred:
    """A result field computed on first read by the object's `_words`: an object whose
    `text(name, result)` computes the field (and keeps it: later reads come back here).

    A non-data descriptor: where the value sits in the instance's __dict__ (an ordinary
    __init__ call, as in replace() or a test) attribute lookup finds it there instead. The
    value is not written into the instance: a key added to one instance's dict after the
    others' would turn every such dict from a shared-key table into a ~460-byte copy."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__["_words"].text(self.name, obj)


# The words of an estimate: the findings and verdict alone were ~15 % of an estimate's time.
for _cls, _names in (
    (Estimate, ("verdict", "findings", "assumptions")),
    (ParallelPlan, ("description", "objective", "launch_command")),
    (Throughput, ("packed_prefill_s",)),  # read by the accuracy report only (plan_throughput.py)
):
    for _name in _names:
        setattr(_cls, _name, Deferred(_name))


def _filler(cls: type[_R]) -> Callable[..., _R]:
    """A function building `cls` from its fields' values as keyword arguments, all required
    (a missing or unknown field is a TypeError), plus `_words` where fields are Deferred.

    It stores each value straight into the new instance's dict, in field order: one dict
    store per field where a frozen dataclass __init__ makes an object.__setattr__ call (a
    third of an estimate's time), and the dict stays a split (key-sharing) table of ~8 bytes
    a field (dict.update(kwargs) or assigning __dict__ would make a ~460-byte copy). Generated
    from fields() as dataclasses generates __init__."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    stored = [n for n in names if not isinstance(cls.__dict__.get(n), Deferred)]
    if len(stored) < len(names):
        stored.append("_words")
    lines = [f"def fill(*, {', '.join(stored)}):", "    obj = new(cls)", "    own = obj.__dict__"]
    lines += [f"    own[{n!r}] = {n}" for n in stored]
    lines.append("    return obj")
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec("\n".join(lines), scope)  # field names of our own dataclasses only
    fill: Callable[..., _R] = scope["fill"]
    fill.__qualname__ = fill.__name__ = f"fill_{cls.__name__}"
    return fill


# What the engine builds its results with (see the module docstring).
fill_estimate = _filler(Estimate)
fill_plan = _filler(ParallelPlan)
fill_memory = _filler(MemoryBreakdown)
fill_throughput = _filler(Throughput)
fill_cost = _filler(CostFigures)
slot_init(Finding)  # built per estimate too (slot_init.py)
slot_init(FailoverCase)


def bottleneck_name(mem: float, comp: float, comm: float, fixed: float) -> str:
    """The largest part of a decode step: fixed per-layer/per-step costs are "overheads"."""
    roofline = max(mem, comp)
    if fixed > roofline and fixed > comm:
        return "overheads"
    if comm > roofline:
        return "interconnect"
    return "compute" if comp > mem else "memory bandwidth"
