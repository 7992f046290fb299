"""Build records as seeded, exported, read and written."""

from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from app.engine import ram_bandwidth_gbs
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
PcieGeneration = Annotated[int, Field(strict=True, ge=1, le=7, description="PCIe generation")]
PcieLanes = Literal[1, 2, 4, 8, 16]
MAX_ACCELERATORS_PER_NODE = 1024
MAX_GROUPS = 16


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


class AcceleratorGroupIn(StrictModel):
    """One kind of card in a build: its catalog slug, how many sit in each node, and the PCIe
    slot each one has (None = not stated)."""

    accelerator: Slug = Field(description="slug of the accelerator")
    count: int = Field(
        strict=True, ge=1, le=MAX_ACCELERATORS_PER_NODE, description="cards of this kind per node"
    )
    pcie_generation: PcieGeneration | None = None
    pcie_lanes: PcieLanes | None = Field(default=None, description="electrical lanes per card")


def missing_ram_half(*, channels: bool, speed: bool, bandwidth: bool) -> str | None:
    """The host field still needed when only one of RAM channels and speed is given and no
    bandwidth ("ram_channels" or "ram_speed_mts"); None when the RAM speed is complete."""
    if bandwidth or channels == speed:
        return None
    return "ram_speed_mts" if channels else "ram_channels"


class HostIn(StrictModel):
    """The CPU side of each node. RAM bandwidth is a published figure, or channels x MT/s x 8
    bytes when only those are given."""

    cpu: ShortText | None = Field(default=None, description="CPU model")
    cpu_cores: int | None = Field(default=None, strict=True, ge=1, le=4096)
    ram_gb: NonNegativeMeasure | None = Field(
        default=None,
        description="system RAM, GB, over the whole build like host_memory_gb (one node: its RAM)",
    )
    ram_channels: int | None = Field(
        default=None, strict=True, ge=1, le=64, description="populated 64-bit DRAM channels"
    )
    ram_speed_mts: float | None = Field(
        default=None, strict=True, gt=0, le=20_000, allow_inf_nan=False, description="MT/s"
    )
    ram_bandwidth_gbs: PositiveMeasure | None = Field(
        default=None, description="peak RAM bandwidth per node, GB/s"
    )

    @model_validator(mode="after")
    def _bandwidth_from_channels(self) -> "HostIn":
        missing = missing_ram_half(
            channels=self.ram_channels is not None,
            speed=self.ram_speed_mts is not None,
            bandwidth=self.ram_bandwidth_gbs is not None,
        )
        if missing is not None:
            # Half of the pair was silently dropped before: the offload then ran at the
            # 51.2 GB/s default whatever speed was typed.
            given = "ram_speed_mts" if missing == "ram_channels" else "ram_channels"
            raise ValueError(
                f"{given} needs {missing} too (RAM bandwidth = channels x MT/s x 8 bytes), "
                "or give ram_bandwidth_gbs"
            )
        if (
            self.ram_bandwidth_gbs is None
            and self.ram_channels is not None
            and self.ram_speed_mts is not None
        ):
            self.ram_bandwidth_gbs = ram_bandwidth_gbs(self.ram_channels, self.ram_speed_mts)
        return self


def check_groups(
    *,
    accelerator: str | None,
    accelerators_per_node: int | None,
    groups: list[AcceleratorGroupIn] | None,
) -> list[AcceleratorGroupIn]:
    """The build's groups from either form: `accelerator` x `accelerators_per_node`, or
    `accelerators`; when both are given they must agree (the read shape carries both)."""
    if groups is None:
        if accelerator is None or accelerators_per_node is None:
            raise ValueError(
                "accelerators: give accelerator and accelerators_per_node, or accelerators"
            )
        return [AcceleratorGroupIn(accelerator=accelerator, count=accelerators_per_node)]
    if accelerator is not None and accelerator != groups[0].accelerator:
        raise ValueError("accelerator must be the first group's accelerator when both are given")
    total = sum(g.count for g in groups)
    if accelerators_per_node is not None and accelerators_per_node != total:
        raise ValueError(
            f"accelerators_per_node ({accelerators_per_node}) must equal the groups' total"
            f" ({total}) when both are given"
        )
    if total > MAX_ACCELERATORS_PER_NODE:
        raise ValueError(f"accelerators: more than {MAX_ACCELERATORS_PER_NODE} cards per node")
    return groups


class BuildIn(PricedRecord):
    """A build as written in seed_data/builds.yaml and accepted by the admin API."""

    slug: Slug
    name: Name
    tier: Tier | None = Field(
        default=None, description="optional; must agree with the tier the hardware implies"
    )
    nodes: SmallCount = 1
    accelerators: list[AcceleratorGroupIn] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_GROUPS,
        description="accelerator groups (card x count per node); instead of accelerator and "
        "accelerators_per_node, or agreeing with them",
    )
    accelerator: Slug | None = Field(
        default=None,
        validate_default=True,
        description="slug of the accelerator of a single-kind build; on read, the first group's",
    )
    accelerators_per_node: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=MAX_ACCELERATORS_PER_NODE,
        validate_default=True,
        description="cards per node; on read, over every group",
    )
    intra_node_link: IntraNodeLinkIn
    inter_node_link: InterNodeLinkIn = Field(default_factory=InterNodeLinkIn)
    scale_up_domain_accelerators: int | None = Field(
        default=None, strict=True, ge=1, le=1_000_000
    )
    host_memory_gb: NonNegativeMeasure | None = Field(
        default=None,
        description="system RAM, GB, build total (the same figure as host.ram_gb)",
    )
    host: HostIn | None = None
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

    @field_validator("accelerator", "accelerators_per_node")
    @classmethod
    def _single_form_complete(cls, value: object, info: ValidationInfo) -> object:
        # Checked per field (accelerators is declared first) so the error names the field.
        # A key missing from info.data means accelerators itself failed (reported there).
        if value is None and "accelerators" in info.data and info.data["accelerators"] is None:
            raise ValueError("required unless accelerators lists the build's groups")
        return value

    @property
    def groups(self) -> list[AcceleratorGroupIn]:
        """The validated groups (both input forms end up here)."""
        assert self.accelerators is not None, "set by the model validator"
        return self.accelerators

    @model_validator(mode="after")
    def _consistent(self) -> "BuildIn":
        check_estimated_names(self, self.estimated)
        self.accelerators = check_groups(
            accelerator=self.accelerator,
            accelerators_per_node=self.accelerators_per_node,
            groups=self.accelerators,
        )
        self.accelerator = self.accelerators[0].accelerator
        self.accelerators_per_node = sum(g.count for g in self.accelerators)
        host = self.host
        if host is not None and host.ram_gb is not None:
            if self.host_memory_gb is not None and self.host_memory_gb != host.ram_gb:
                raise ValueError("host_memory_gb and host.ram_gb differ (they are the same RAM)")
            self.host_memory_gb = host.ram_gb
        elif host is not None and self.host_memory_gb is not None:
            host.ram_gb = self.host_memory_gb
        if host is not None and host.model_dump(exclude={"ram_gb"}) == HostIn().model_dump(
            exclude={"ram_gb"}
        ):
            # RAM alone is host_memory_gb; one stored form keeps re-imports unchanged.
            self.host = None
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
    accelerators_label: str = Field(description='e.g. "2× RTX 3090 + 1× RTX 4090" (per node)')
    mixed: bool = Field(description="true when a node holds more than one kind of card")
    min_accelerator_memory_gb: float = Field(description="memory of the smallest card")
    slowest_pcie_gbs: float | None = Field(
        description="narrowest card-to-host PCIe link, GB/s per direction (null: not stated)"
    )


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
    accelerators_label: str = Field(description='e.g. "2× RTX 3090 + 1× RTX 4090" (per node)')
    mixed: bool = Field(description="true when a node holds more than one kind of card")
    min_accelerator_memory_gb: float = Field(description="memory of the smallest card")
    slowest_pcie_gbs: float | None = Field(
        description="narrowest card-to-host PCIe link, GB/s per direction (null: not stated)"
    )
    host_memory_gb: float | None
    host_ram_bandwidth_gbs: float | None
