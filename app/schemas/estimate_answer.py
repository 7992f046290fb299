"""The answer of POST /api/v1/estimate (and its batch), and the parts other answers reuse."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class FiguresPartOut(BaseModel):
    """A part of an answer made of engine figures: a NaN or an infinity fails its validation
    (JSON has neither), and the service answers that figure null instead
    (services/estimate_answers.py) — the check runs inside the validation the answer needs
    anyway, not as a pass of its own over every figure."""

    model_config = ConfigDict(allow_inf_nan=False)


class SubjectOut(BaseModel):
    """The build or model an answer is about (slug is null for inline ones)."""

    slug: str | None
    name: str


class BuildSubjectOut(SubjectOut):
    """The build an answer is about."""

    tier: str
    accelerator_count: int
    total_memory_gb: float
    pooled_memory_gb: float
    price_usd: float | None


class ModelSubjectOut(SubjectOut):
    """The model an answer is about."""

    params_total: int
    params_active: int


class MemoryOut(FiguresPartOut):
    """Memory needed versus available, GB (1e9 bytes; vendor capacities are GiB, converted).

    `total_gb` is the one "memory needed" figure (one model replica, all its accelerators);
    `rule_of_thumb_gb` is the figure people quote; `spare_gb` is usable memory no running
    replica uses."""

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
    rule_of_thumb_gb: float = Field(description="parameters x bytes per parameter x 1.2")
    spare_gb: float
    build_memory_gb: float
    kv_cache_gb_per_token: float


class PlanOut(BaseModel):
    """How the model is split over the build."""

    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int
    expert_parallel: int
    accelerators_used: int
    layers_per_stage: int
    description: str
    runtime: str = Field(description="the runtime the plan is for")
    objective: str = Field(description="what the automatic plan choice optimised")
    launch_command: str = Field(description="how to run this plan with the runtime")
    replicas_active: int = Field(description="replicas holding sequences")
    nodes_used: int
    node_usage: str = Field(description="single node | replicas per node | spread over nodes")
    plans_evaluated: int = Field(description="candidate splits the search evaluated")


class FailoverOut(FiguresPartOut):
    """The model after losing part of the build (estimated)."""

    lost: str = Field(description="one accelerator | one node")
    accelerators_left: int
    fits: bool
    decode_tokens_per_s: float | None
    aggregate_decode_tokens_per_s: float | None
    plan: str


class ThroughputOut(FiguresPartOut):
    """Speed; every figure is null when the model does not fit (or in training modes)."""

    decode_tokens_per_s: float | None = Field(description="per sequence")
    aggregate_decode_tokens_per_s: float | None = Field(description="all sequences")
    prefill_tokens_per_s: float | None
    time_to_first_token_s: float | None
    bottleneck: str | None = Field(
        description="memory bandwidth | compute | interconnect | overheads (fixed per-layer / "
        "per-step costs) | capacity"
    )
    decode_step_s: float | None
    decode_memory_s: float | None
    decode_compute_s: float | None
    decode_communication_s: float | None
    decode_fixed_s: float | None
    compute_bound_batch: int | None


class CostOut(FiguresPartOut):
    """Money and energy; null where the price or power is unknown or nothing is generated."""

    price_usd: float | None
    power_w: float | None
    usd_per_hour: float | None
    capital_usd_per_hour: float | None
    energy_usd_per_hour: float | None
    joules_per_token: float | None
    usd_per_million_tokens: float | None
    usd_per_gb_memory: float | None
    amortization_years: float
    electricity_usd_per_kwh: float
    pue: float
    utilization: float
    billed_tokens_per_s: float | None = Field(
        description="generated tokens/s the per-token figures divide by (prefill included)"
    )


class TrainingOut(FiguresPartOut):
    """Training / fine-tuning time and cost for workload.training_tokens."""

    tokens_per_s: float
    time_to_train_hours: float | None
    cost_usd: float | None
    model_flops_utilization: float
    flops_per_token: float
    trainable_params: int
    communication_s_per_step: float = Field(
        description="gradient all-reduce / ZeRO-3 gather time not hidden under backward"
    )
    recomputation: bool


class FindingOut(BaseModel):
    """One remark: severity is blocker, caution or info."""

    severity: Literal["blocker", "caution", "info"]
    message: str


class WorkloadOut(BaseModel):
    """The workload the engine ran (defaults filled in)."""

    mode: str
    precision: str
    kv_cache_precision: str | None
    context_tokens: int
    prompt_tokens: int
    batch: int
    parallelism: str
    runtime: str
    offload: str = Field(default="auto", description="auto | none, as requested")


class CardShareOut(FiguresPartOut):
    """One card of a layer split: its whole layers, memory and share of a token's time."""

    name: str
    layers: int
    memory_needed_gb: float
    memory_usable_gb: float
    decode_s: float = Field(description="seconds of one decode step spent reading this card")


class PlacementOut(FiguresPartOut):
    """Where the weights live on a mixed or offloading build (all figures estimates)."""

    description: str = Field(
        description='e.g. "attention and shared weights on the GPU, 36 of 36 expert layers in RAM"'
    )
    cards: list[CardShareOut]
    offload: Literal["none", "experts", "layers", "experts+layers"]
    gpu_layers: int
    cpu_layers: int = Field(description="whole layers on the CPU (llama.cpp -ngl)")
    expert_layers_in_ram: int = Field(
        description="MoE layers whose experts stay in RAM (--n-cpu-moe)"
    )
    moe_layers: int
    ram_needed_gb: float = Field(description="weights (and KV of CPU layers) held in host RAM")
    ram_usable_gb: float | None
    ram_bandwidth_gbs: float | None
    decode_ram_s: float = Field(description="seconds per decode step reading host RAM")
    prefill_pcie_s: float = Field(
        description="seconds of prefill streaming RAM weights over PCIe"
    )
    launch_flags: str


class EstimateOut(BaseModel):
    """What the engine says about one build running one model under one workload."""

    build: BuildSubjectOut
    model: ModelSubjectOut
    workload: WorkloadOut
    fits: bool
    verdict: str
    tier: str
    memory: MemoryOut
    plan: PlanOut
    throughput: ThroughputOut
    cost: CostOut
    training: TrainingOut | None
    max_context_tokens_that_fit: int | None
    max_batch_that_fits: int | None
    findings: list[FindingOut]
    assumptions: list[str]
    failover: list[FailoverOut] = Field(
        description="fit and speed after losing one accelerator / one node (N-1); beside the "
        "catalog's failover text"
    )
    estimated: bool = Field(
        description="always true: these are model estimates, not measurements (docs/engine.md)"
    )
    placement: PlacementOut | None = Field(
        default=None,
        description="mixed cards or host-RAM offload: the layer split per card and what lives "
        "in RAM; null when every weight sits in accelerator memory of one card kind",
    )


class BatchItemOut(BaseModel):
    """One entry of a batch answer: the estimate, or the problem that stopped it."""

    index: int
    ok: bool
    result: EstimateOut | None = None
    error: dict[str, Any] | None = Field(default=None, description="RFC 9457 problem details")


class BatchOut(BaseModel):
    """Answers in request order."""

    results: list[BatchItemOut]
