"""Measurement records as seeded, exported, read and written (the /work/data/SCHEMA.md shape)."""

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, model_validator

from app.models.measurement import ARRIVALS, MEASUREMENT_RUNTIMES, METRIC_UNITS, METRICS
from app.schemas.common import (
    AsOf,
    Name,
    NonNegativeMeasure,
    Notes,
    Page,
    PositiveMeasure,
    ShortText,
    Slug,
    SmallCount,
    SourceUrl,
    StrictModel,
)
from app.schemas.listing import ListQuery, SearchText, SlugRef, sort_param

if TYPE_CHECKING:
    Metric = str
    MeasurementRuntime = str
    Arrival = str
else:  # built from the model's tuples: one list of each vocabulary (OpenAPI shows the enums)
    Metric = Literal[METRICS]
    MeasurementRuntime = Literal[MEASUREMENT_RUNTIMES]
    Arrival = Literal[ARRIVALS]

SpecMemoryKind = Literal["gddr", "hbm", "unified"]
MeasurementIntraLink = Literal["pcie", "nvlink", "nvswitch", "infinity_fabric", "unified"]
MeasurementInterLink = Literal["infiniband", "ethernet"]
Backend = Literal["cuda", "rocm", "vulkan", "metal", "sycl", "cpu"]
TokenCount = Field(default=None, strict=True, ge=0, le=100_000_000)
Count = Field(default=None, strict=True, ge=1, le=1_000_000)


class AcceleratorSpecIn(StrictModel):
    """An accelerator the catalog does not hold, described with its published figures."""

    name: Name
    vendor: ShortText = ""
    memory_gb: PositiveMeasure
    memory_bandwidth_gbs: PositiveMeasure
    fp16_tflops: PositiveMeasure = Field(description="dense FP16/BF16 tensor TFLOPS")
    fp8_tflops: PositiveMeasure | None = None
    int8_tops: PositiveMeasure | None = None
    fp4_tflops: PositiveMeasure | None = None
    tdp_w: PositiveMeasure | None = None
    memory_kind: SpecMemoryKind
    source_url: SourceUrl
    as_of: AsOf | None = Field(default=None, description="defaults to the measurement's as_of")
    notes: Notes = ""


class HostIn(StrictModel):
    """The host of a CPU-offload run."""

    cpu: ShortText | None = None
    ram_gb: PositiveMeasure | None = None
    ram_bandwidth_gbs: PositiveMeasure | None = None


class GroupIn(StrictModel):
    """One kind of accelerator in a mixed-GPU run."""

    accelerator: Slug
    count: SmallCount


class HardwareIn(StrictModel):
    """What ran it: a catalog build, or accelerators (catalog slug or inline spec) x count."""

    accelerator: ShortText | None = Field(
        default=None,
        description="catalog accelerator slug, or a descriptive name with accelerator_spec",
    )
    accelerator_spec: AcceleratorSpecIn | None = None
    count: SmallCount = Field(default=1, description="accelerators used (per node x nodes)")
    nodes: SmallCount = 1
    build: Slug | None = Field(
        default=None, description="a catalog build slug when the run is exactly that build"
    )
    intra_node_link: MeasurementIntraLink | None = None
    inter_node_link: MeasurementInterLink | None = None
    host: HostIn | None = None
    groups: list[GroupIn] | None = Field(default=None, max_length=16)

    @model_validator(mode="after")
    def _consistent(self) -> "HardwareIn":
        if self.build is None and self.accelerator is None and not self.groups:
            raise ValueError(
                "name a build, an accelerator (slug, or name with accelerator_spec) or groups"
            )
        if self.count % self.nodes:
            raise ValueError("count must be a multiple of nodes (accelerators per node x nodes)")
        if self.groups and sum(g.count for g in self.groups) != self.count:
            raise ValueError("groups: the counts must add up to count")
        return self

    @property
    def accelerators_per_node(self) -> int:
        """Accelerators in each node."""
        return self.count // self.nodes


class MeasurementIn(StrictModel):
    """A published figure, transcribed exactly from its source."""

    slug: Slug
    hardware: HardwareIn
    model: Slug = Field(description="catalog model slug")
    model_hf_id: ShortText | None = None
    runtime: MeasurementRuntime
    runtime_version: ShortText | None = None
    backend: Backend | None = None
    precision: str | None = Field(
        pattern=r"^[a-z0-9][a-z0-9_.-]{0,31}$",
        description="weight format as published (q4_0); null when the source does not say",
    )
    batch: int | None = Count
    concurrency: int | None = Count
    prompt_tokens: int | None = TokenCount
    output_tokens: int | None = TokenCount
    context_depth_tokens: int | None = TokenCount
    tensor_parallel: int | None = Count
    pipeline_parallel: int | None = Count
    expert_parallel: bool | None = Field(
        default=None,
        description="true when the run sharded a mixture-of-experts model's routed experts over"
        " its GPUs with data-parallel attention, as published (TensorRT-LLM --ep with"
        " enable_attention_dp, SGLang --enable-dp-attention --ep, vLLM --enable-expert-parallel"
        " with --data-parallel-size); tensor_parallel then is the runtime's --tp as published",
    )
    offload: dict[str, int | ShortText] | None = Field(
        default=None, description="as published: {ngl: N} or {n_cpu_moe: N}", max_length=4
    )
    arrival: Arrival | None = Field(
        default=None,
        description="how a serving benchmark sent its requests: burst (all at once, in waves of"
        " `concurrency` when capped; offline runs), steady (a closed loop keeping `concurrency`"
        " in flight, lengths varied so requests fall out of step), poisson (a request rate)",
    )
    requests: int | None = Field(
        default=None, strict=True, ge=1, le=100_000_000,
        description="requests the run sent in all (num_prompts)",
    )
    metric: Metric
    value: bool | NonNegativeMeasure = Field(
        description="a number in `unit`, or true/false for out_of_memory (true = it failed)"
    )
    unit: Literal["tokens/s", "s", "ms", "bool"]
    source_url: SourceUrl
    source_title: ShortText | None = None
    as_of: AsOf
    read_from_chart: bool = Field(
        default=False, description="the figure was read off a chart, not a table"
    )
    notes: Notes = ""

    @model_validator(mode="after")
    def _consistent(self) -> "MeasurementIn":
        expected = METRIC_UNITS[self.metric]
        if self.unit != expected:
            raise ValueError(f"unit: {self.metric} is measured in '{expected}', not '{self.unit}'")
        if self.metric == "out_of_memory":
            if not isinstance(self.value, bool):
                raise ValueError("value: out_of_memory takes true (it failed) or false (it ran)")
        elif isinstance(self.value, bool) or self.value <= 0:
            raise ValueError(f"value: {self.metric} takes a positive number")
        if self.offload is not None and any(
            isinstance(v, int) and v < 0 for v in self.offload.values()
        ):
            raise ValueError("offload: layer counts cannot be negative")
        return self


class MeasurementRead(MeasurementIn):
    """The full record; `version` is its ETag (ignored when the record is sent back to PUT)."""

    version: int


class MeasurementListItem(StrictModel):
    """A measurement in a list (flat: one CSV row)."""

    slug: str
    name: str
    build: str | None
    accelerator: str | None
    accelerator_name: str
    accelerator_count: int
    nodes: int
    model: str
    runtime: str
    runtime_version: str | None
    backend: str | None
    precision: str | None
    batch: int | None
    concurrency: int | None
    prompt_tokens: int | None
    output_tokens: int | None
    context_depth_tokens: int | None
    tensor_parallel: int | None
    metric: str
    value: float | bool
    unit: str
    source_url: str
    source_title: str | None
    as_of: str
    read_from_chart: bool


class MeasurementQuery(ListQuery):
    """Filters for measurements; `accelerator` also matches runs on a build of that accelerator."""

    SORT_FIELDS: ClassVar[tuple[str, ...]] = (
        "slug",
        "name",
        "model",
        "runtime",
        "metric",
        "value",
        "as_of",
        "accelerator_count",
        "batch",
        "concurrency",
        "prompt_tokens",
    )
    DEFAULT_SORT: ClassVar[str] = "slug"
    sort: str | None = sort_param(SORT_FIELDS)

    build: SlugRef | None = Field(default=None, description="build slug")
    accelerator: SlugRef | None = Field(default=None, description="accelerator slug")
    model: SlugRef | None = Field(default=None, description="model slug")
    runtime: MeasurementRuntime | None = None
    metric: Metric | None = None
    source: SearchText | None = Field(
        default=None, description="case-insensitive substring of the source URL or title"
    )


class MeasurementPage(Page[MeasurementListItem]):
    """One page of measurements."""
