"""Build records as seeded, exported, read and written."""

from typing import Literal

from pydantic import Field, model_validator

from app.schemas.accelerator import PricedRecord, check_estimated_names
from app.schemas.common import (
    AsOf,
    Name,
    NonNegativeMeasure,
    Notes,
    PositiveMeasure,
    ShortText,
    Slug,
    SmallCount,
    SourceUrl,
    StrictModel,
)

Tier = Literal["desktop", "dgx", "cluster"]
IntraNodeKind = Literal["pcie", "nvlink", "nvswitch", "infinity_fabric", "unified", "none"]
InterNodeKind = Literal["infiniband", "ethernet", "none"]
Latency = Field(default=None, strict=True, ge=0, le=1e6, allow_inf_nan=False)


def check_build_shape(
    *,
    nodes: int,
    accelerators_per_node: int,
    scale_up_domain_accelerators: int | None,
    inter_node_kind: str | None,
) -> None:
    """Rules every build obeys, catalog or inline: a scale-up domain fits in the build, and
    several nodes need a network unless one NVLink domain spans them all."""
    count = nodes * accelerators_per_node
    if scale_up_domain_accelerators is not None and scale_up_domain_accelerators > count:
        raise ValueError("scale_up_domain_accelerators exceeds the build's accelerator count")
    spans_all = (scale_up_domain_accelerators or 0) >= count
    if nodes > 1 and inter_node_kind in (None, "none") and not spans_all:
        raise ValueError("inter_node_link: several nodes need an inter-node link")


class IntraNodeLinkIn(StrictModel):
    """The accelerator-to-accelerator link inside one node."""

    kind: IntraNodeKind
    bandwidth_gbs: PositiveMeasure | None = Field(
        default=None, description="GB/s per accelerator, per direction"
    )
    latency_us: float | None = Latency


class InterNodeLinkIn(StrictModel):
    """The network between nodes."""

    kind: InterNodeKind = "none"
    bandwidth_gbps: PositiveMeasure | None = Field(default=None, description="Gb/s per node")
    latency_us: float | None = Latency


class BuildIn(PricedRecord):
    """A build as written in seed_data/builds.yaml and accepted by the admin API."""

    slug: Slug
    name: Name
    tier: Tier | None = Field(
        default=None, description="optional; must agree with the tier the hardware implies"
    )
    nodes: SmallCount = 1
    accelerator: Slug = Field(description="slug of the accelerator")
    accelerators_per_node: int = Field(strict=True, ge=1, le=1024)
    intra_node_link: IntraNodeLinkIn
    inter_node_link: InterNodeLinkIn = Field(default_factory=InterNodeLinkIn)
    scale_up_domain_accelerators: int | None = Field(
        default=None, strict=True, ge=1, le=1_000_000
    )
    host_memory_gb: NonNegativeMeasure | None = None
    power_w: PositiveMeasure | None = None
    price_usd: NonNegativeMeasure | None = None
    price_source_url: SourceUrl | None = None
    price_as_of: AsOf | None = None
    failover: ShortText = "none"
    scheduling: ShortText = "manual"
    estimated: list[ShortText] = Field(default_factory=list, max_length=40)
    notes: Notes = ""
    source_url: SourceUrl
    as_of: AsOf

    @model_validator(mode="after")
    def _consistent(self) -> "BuildIn":
        check_estimated_names(self, self.estimated)
        check_build_shape(
            nodes=self.nodes,
            accelerators_per_node=self.accelerators_per_node,
            scale_up_domain_accelerators=self.scale_up_domain_accelerators,
            inter_node_kind=self.inter_node_link.kind,
        )
        return self


class BuildRead(BuildIn):
    """The full record; derived fields are ignored when it is sent back to PUT."""

    tier: Tier  # type: ignore[assignment]
    version: int
    accelerator_count: int
    total_memory_gb: float
    memory_pooled: bool


class BuildListItem(StrictModel):
    """A build in a list."""

    slug: str
    name: str
    tier: Tier
    nodes: int
    accelerator: str
    accelerator_name: str
    accelerators_per_node: int
    accelerator_count: int
    total_memory_gb: float
    memory_pooled: bool
    intra_node_link_kind: str
    inter_node_link_kind: str
    price_usd: float | None
    power_w: float | None
    vendor: str
    accelerator_memory_gb: float
    pooled_memory_gb: float = Field(
        description="memory one scale-up domain shares (one card when nothing is pooled)"
    )
    intra_node_bandwidth_gbs: float | None
    inter_node_bandwidth_gbps: float | None
