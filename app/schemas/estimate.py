"""POST /api/v1/estimate: the request (slug or inline build/model, workload) and the answer."""

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.engine import KV_BITS, RUNTIMES
from app.errors import field_errors
from app.schemas.accelerator import MemoryKind
from app.schemas.build import (
    MAX_GROUPS,
    HostIn,
    InterNodeLinkIn,
    IntraNodeLinkIn,
    PcieGeneration,
    PcieLanes,
    check_build_shape,
)
from app.schemas.common import HfConfig, Name, NonNegativeMeasure, PositiveMeasure, StrictModel
from app.schemas.listing import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_PRECISION,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    PrecisionName,
)

if TYPE_CHECKING:
    KvPrecisionName = str
    RuntimeName = str
else:  # enums of the engine's names, so OpenAPI lists them and unknown ones are 422
    KvPrecisionName = Literal[tuple(KV_BITS)]
    RuntimeName = Literal[tuple(RUNTIMES)]
Mode = Literal["inference", "training", "lora", "qlora"]
Parallelism = Literal["auto", "tensor", "pipeline"]
Offload = Literal["auto", "none"]
RUNTIME_DESCRIPTION = (
    "inference runtime; null = from the inputs: GGUF precisions and Apple builds -> llama.cpp, "
    "otherwise vLLM (answers say which runtime ran)"
)
DEFAULT_PROMPT_TOKENS = 2048
MAX_BATCH_REQUESTS = 100
# Inline builds are bounded so one request cannot ask the engine to plan a million-GPU split.
MAX_NODES = 4096
MAX_ACCELERATORS_PER_NODE = 1024
MAX_INLINE_ACCELERATORS = 65_536
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,79}$"
# Validation context key: the request comes from form text (the HTML calculator), so numbers are
# parsed from strings; validate with strict=False and context={FORM_TEXT: True}. JSON is strict.
FORM_TEXT = "form_text"


class WorkloadIn(StrictModel):
    """What to run. Every field has a default; `{}` is a valid workload."""

    mode: Mode = "inference"
    precision: PrecisionName = Field(default=DEFAULT_PRECISION, description="weight precision")
    kv_cache_precision: KvPrecisionName | None = Field(
        default=None, description="KV-cache format; null = the weight precision's default"
    )
    context_tokens: int = Field(
        strict=True,
        default=DEFAULT_CONTEXT_TOKENS,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description="tokens each sequence holds in its KV cache (prompt plus generated); "
        "decode speed is quoted at this length",
    )
    prompt_tokens: int | None = Field(
        strict=True,
        default=None,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description=f"prompt length for prefill and time to first token; null = "
        f"min({DEFAULT_PROMPT_TOKENS}, context_tokens)",
    )
    batch: int = Field(
        strict=True, default=1, ge=1, le=MAX_BATCH, description="concurrent sequences"
    )
    parallelism: Parallelism = "auto"
    runtime: RuntimeName | None = Field(default=None, description=RUNTIME_DESCRIPTION)
    tensor_parallel: int | None = Field(
        strict=True,
        default=None,
        ge=1,
        le=1024,
        description="explicit tensor-parallel size; one the runtime would refuse (not dividing "
        "the attention heads, ...) is a 422",
    )
    pipeline_parallel: int | None = Field(strict=True, default=None, ge=1, le=1024)
    memory_utilization: float | None = Field(
        strict=True,
        default=None,
        gt=0,
        le=1,
        description="usable share of each accelerator's memory",
    )
    zero_stage: int = Field(
        strict=True, default=0, ge=0, le=3, description="training: ZeRO/FSDP stage"
    )
    activation_recomputation: bool | None = Field(
        default=None,
        strict=True,
        description="training: null = the mode's standard recipe (on for LoRA/QLoRA, off for "
        "full training)",
    )
    training_tokens: int = Field(strict=True, default=0, ge=0, le=10**15)
    lora_rank: int = Field(strict=True, default=16, ge=1, le=65_536)
    model_flops_utilization: float | None = Field(strict=True, default=None, gt=0, le=1)
    offload: Offload = Field(
        default="auto",
        description="auto: when the model does not fit in accelerator memory, keep layers or MoE "
        "experts in host RAM (llama.cpp -ngl / --n-cpu-moe) where the runtime can; none: never",
    )

    @model_validator(mode="after")
    def _prompt_within_context(self) -> "WorkloadIn":
        if self.prompt_tokens is not None and self.prompt_tokens > self.context_tokens:
            raise ValueError("prompt_tokens exceeds context_tokens (the context holds the prompt)")
        return self


class CostsIn(StrictModel):
    """Overrides of the server's cost assumptions (see GET /docs for the defaults)."""

    amortization_years: float | None = Field(
        strict=True, default=None, gt=0, le=100, allow_inf_nan=False
    )
    electricity_usd_per_kwh: float | None = Field(
        strict=True, default=None, ge=0, le=100, allow_inf_nan=False
    )
    pue: float | None = Field(strict=True, default=None, ge=1, le=3, allow_inf_nan=False)
    utilization: float | None = Field(
        strict=True,
        default=None,
        gt=0,
        le=1,
        description="share of wall-clock hours the build is busy",
    )


class InlineAccelerator(StrictModel):
    """An accelerator described in the request instead of named by slug."""

    name: Name
    memory_gb: PositiveMeasure
    memory_bandwidth_gbs: PositiveMeasure
    fp16_tflops: PositiveMeasure = Field(description="dense FP16/BF16 tensor TFLOPS")
    fp8_tflops: PositiveMeasure | None = None
    int8_tops: PositiveMeasure | None = None
    fp4_tflops: PositiveMeasure | None = None
    tdp_w: PositiveMeasure | None = None
    price_usd: NonNegativeMeasure | None = None
    memory_kind: MemoryKind = "discrete"


def _slug_or(model: type[BaseModel], what: str) -> Any:
    """Before-validator: a slug string, or an object validated as `model` (errors keep paths)."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str):
            import re

            if not re.fullmatch(SLUG_PATTERN, value):
                raise ValueError(f"must be a catalog {what} slug or an inline {what} object")
            return value
        if isinstance(value, dict):
            # A ValidationError raised here keeps its nested field paths (build.accelerator...).
            # The caller's leniency for form text (FORM_TEXT) reaches this nested validation too.
            lax = bool(info.context and info.context.get(FORM_TEXT))
            return model.model_validate(value, strict=False if lax else None, context=info.context)
        if isinstance(value, model):
            return value
        raise ValueError(f"must be a catalog {what} slug or an inline {what} object")

    return BeforeValidator(check)


AcceleratorRef = Annotated[str | InlineAccelerator, _slug_or(InlineAccelerator, "accelerator")]


class InlineAcceleratorGroup(StrictModel):
    """One kind of card in an inline build: a catalog slug or an inline accelerator, x count."""

    accelerator: AcceleratorRef
    count: int = Field(
        strict=True, ge=1, le=MAX_ACCELERATORS_PER_NODE, description="cards of this kind per node"
    )
    pcie_generation: PcieGeneration | None = None
    pcie_lanes: PcieLanes | None = Field(default=None, description="electrical lanes per card")


class InlineBuild(StrictModel):
    """A build described in the request instead of named by slug: one accelerator x
    accelerators_per_node, or `accelerators` (groups), plus an optional host."""

    name: Name
    nodes: int = Field(strict=True, default=1, ge=1, le=MAX_NODES)
    accelerators: list[InlineAcceleratorGroup] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_GROUPS,
        description="accelerator groups (card x count per node), instead of accelerator and "
        "accelerators_per_node",
    )
    accelerators_per_node: int | None = Field(
        strict=True,
        default=None,
        ge=1,
        le=MAX_ACCELERATORS_PER_NODE,
        validate_default=True,
        description="required unless accelerators is given",
    )
    accelerator: AcceleratorRef | None = Field(
        default=None, validate_default=True, description="required unless accelerators is given"
    )
    host: HostIn | None = Field(
        default=None, description="CPU and RAM of each node (RAM that offloaded weights use)"
    )
    intra_node_link: IntraNodeLinkIn | None = Field(
        default=None, description="default: PCIe between several cards, none for one card"
    )
    inter_node_link: InterNodeLinkIn | None = Field(
        default=None, description="required with several nodes"
    )
    scale_up_domain_accelerators: int | None = Field(
        strict=True, default=None, ge=1, le=MAX_INLINE_ACCELERATORS
    )
    power_w: PositiveMeasure | None = None
    price_usd: NonNegativeMeasure | None = None

    @field_validator("accelerators_per_node", "accelerator")
    @classmethod
    def _single_form_complete(cls, value: object, info: ValidationInfo) -> object:
        # A key missing from info.data means accelerators itself failed (reported there).
        groups = info.data.get("accelerators")
        if value is None and "accelerators" in info.data and groups is None:
            raise ValueError("required unless accelerators lists the build's groups")
        if value is not None and groups is not None:
            raise ValueError("give either accelerators or accelerator/accelerators_per_node")
        return value

    @property
    def groups(self) -> list[InlineAcceleratorGroup]:
        """The build's groups from either form."""
        if self.accelerators is not None:
            return self.accelerators
        assert self.accelerator is not None and self.accelerators_per_node is not None
        return [InlineAcceleratorGroup(accelerator=self.accelerator,
                                       count=self.accelerators_per_node)]

    @property
    def per_node(self) -> int:
        """Cards in one node over every group."""
        return sum(g.count for g in self.groups)

    @model_validator(mode="after")
    def _consistent(self) -> "InlineBuild":
        if self.per_node > MAX_ACCELERATORS_PER_NODE:
            raise ValueError(f"accelerators: more than {MAX_ACCELERATORS_PER_NODE} cards per node")
        count = self.nodes * self.per_node
        if count > MAX_INLINE_ACCELERATORS:
            raise ValueError(f"nodes x accelerators_per_node exceeds {MAX_INLINE_ACCELERATORS:,}")
        check_build_shape(
            nodes=self.nodes,
            accelerators_per_node=self.per_node,
            scale_up_domain_accelerators=self.scale_up_domain_accelerators,
            inter_node_kind=None if self.inter_node_link is None else self.inter_node_link.kind,
        )
        return self


class InlineModel(StrictModel):
    """A model described by its Hugging Face config.json."""

    name: Name
    config: HfConfig
    params_total: int | None = Field(
        strict=True,
        default=None,
        gt=0,
        le=10**14,
        description="published total parameters (optional)",
    )
    params_active: int | None = Field(strict=True, default=None, gt=0, le=10**14)


BuildRef = Annotated[str | InlineBuild, _slug_or(InlineBuild, "build")]
ModelRef = Annotated[str | InlineModel, _slug_or(InlineModel, "model")]


class EstimateRequest(StrictModel):
    """One engine run: a build and a model (each a catalog slug or inline) and a workload."""

    build: BuildRef = Field(description="a build slug, or an inline build object")
    model: ModelRef = Field(description="a model slug, or {name, config: <config.json>}")
    workload: WorkloadIn = Field(default_factory=WorkloadIn)
    costs: CostsIn | None = None

    model_config = {
        "extra": "forbid",
        "json_schema_extra": {
            "examples": [
                {
                    "build": "2x-dgx-h200-cluster",
                    "model": "deepseek-v3",
                    "workload": {"precision": "fp8", "context_tokens": 8192, "batch": 8},
                },
                {
                    "build": {
                        "name": "2x RTX 3090",
                        "accelerators_per_node": 2,
                        "accelerator": {
                            "name": "RTX 3090",
                            "memory_gb": 24,
                            "memory_bandwidth_gbs": 936,
                            "fp16_tflops": 71,
                        },
                        "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 25},
                        "price_usd": 2500,
                    },
                    "model": "llama-3-1-8b",
                    "workload": {"precision": "bf16"},
                },
            ]
        },
    }


def validation_locations(exc: ValidationError) -> list[tuple[str, str]]:
    """(dotted path, message) pairs of a ValidationError."""
    return [
        (e.field, e.message)
        for e in field_errors(exc.errors(include_url=False), fallback="(body)")
    ]


# ---- answer --------------------------------------------------------------------------------


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


class MemoryOut(BaseModel):
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


class FailoverOut(BaseModel):
    """The model after losing part of the build (estimated)."""

    lost: str = Field(description="one accelerator | one node")
    accelerators_left: int
    fits: bool
    decode_tokens_per_s: float | None
    aggregate_decode_tokens_per_s: float | None
    plan: str


class ThroughputOut(BaseModel):
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


class CostOut(BaseModel):
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


class TrainingOut(BaseModel):
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


class CardShareOut(BaseModel):
    """One card of a layer split: its whole layers, memory and share of a token's time."""

    name: str
    layers: int
    memory_needed_gb: float
    memory_usable_gb: float
    decode_s: float = Field(description="seconds of one decode step spent reading this card")


class PlacementOut(BaseModel):
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
