"""Builds, accelerators and models described inline in a request (instead of named by slug)."""

import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    SkipValidation,
    ValidationInfo,
    field_validator,
    model_validator,
)

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

# Inline builds are bounded so one request cannot ask the engine to plan a million-GPU split.
MAX_NODES = 4096
MAX_ACCELERATORS_PER_NODE = 1024
MAX_INLINE_ACCELERATORS = 65_536
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,79}$"
# Validation context key: the request comes from form text (the HTML calculator), so numbers are
# parsed from strings; validate with strict=False and context={FORM_TEXT: True}. JSON is strict.
FORM_TEXT = "form_text"


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
    """Before-validator: a slug string, or an object validated as `model` (errors keep paths).

    Its result is final: the `str | model` annotation it sits on is marked SkipValidation (which
    keeps that annotation's JSON schema), because passing the validated instance through the
    union again re-ran the model's after-validators (~0.5 us of a batch entry's build)."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str):
            if not re.fullmatch(SLUG_PATTERN, value):
                raise ValueError(f"must be a catalog {what} slug or an inline {what} object")
            return value
        if isinstance(value, dict):
            # A ValidationError raised here keeps its nested field paths (build.accelerator...).
            # The caller's leniency for form text (FORM_TEXT) reaches this nested validation too.
            lax = bool(info.context and info.context.get(FORM_TEXT))
            # The model's validator itself: model_validate's Python wrapper was ~4K instructions
            # a call, three calls per batch entry (build, its card, model).
            return model.__pydantic_validator__.validate_python(
                value, strict=False if lax else None, context=info.context
            )
        if isinstance(value, model):
            return value
        raise ValueError(f"must be a catalog {what} slug or an inline {what} object")

    return BeforeValidator(check)


AcceleratorRef = Annotated[
    str | InlineAccelerator, SkipValidation, _slug_or(InlineAccelerator, "accelerator")
]


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
        # Both values are validated already: construct the group without validating again.
        return [InlineAcceleratorGroup.model_construct(accelerator=self.accelerator,
                                                       count=self.accelerators_per_node)]

    @property
    def per_node(self) -> int:
        """Cards in one node over every group."""
        if self.accelerators is not None:
            return sum(g.count for g in self.accelerators)
        assert self.accelerators_per_node is not None
        return self.accelerators_per_node

    @model_validator(mode="after")
    def _consistent(self) -> "InlineBuild":
        per_node = self.per_node
        if per_node > MAX_ACCELERATORS_PER_NODE:
            raise ValueError(f"accelerators: more than {MAX_ACCELERATORS_PER_NODE} cards per node")
        count = self.nodes * per_node
        if count > MAX_INLINE_ACCELERATORS:
            raise ValueError(f"nodes x accelerators_per_node exceeds {MAX_INLINE_ACCELERATORS:,}")
        check_build_shape(
            nodes=self.nodes,
            accelerators_per_node=per_node,
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


BuildRef = Annotated[str | InlineBuild, SkipValidation, _slug_or(InlineBuild, "build")]
ModelRef = Annotated[str | InlineModel, SkipValidation, _slug_or(InlineModel, "model")]
