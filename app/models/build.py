"""A build: nodes × accelerator groups, a host, the links between them, power, price, operations."""

from datetime import date

from sqlalchemy import CheckConstraint, Date, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models._mixins import SHORT_TEXT_LENGTH, URL_LENGTH, CatalogRecord
from app.models.accelerator import Accelerator

TIERS = ("desktop", "dgx", "cluster")
INTRA_NODE_LINK_KINDS = ("pcie", "nvlink", "nvswitch", "infinity_fabric", "unified", "none")
INTER_NODE_LINK_KINDS = ("infiniband", "ethernet", "none")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Build(CatalogRecord, Base):
    __tablename__ = "build"
    __table_args__ = (
        CheckConstraint("nodes >= 1", name="nodes_positive"),
        CheckConstraint(_in("tier", TIERS), name="tier"),
        CheckConstraint(_in("intra_node_link_kind", INTRA_NODE_LINK_KINDS), name="intra_kind"),
        CheckConstraint(_in("inter_node_link_kind", INTER_NODE_LINK_KINDS), name="inter_kind"),
        CheckConstraint(
            "intra_node_bandwidth_gbs IS NULL OR intra_node_bandwidth_gbs > 0",
            name="intra_bandwidth_positive",
        ),
        CheckConstraint(
            "inter_node_bandwidth_gbps IS NULL OR inter_node_bandwidth_gbps > 0",
            name="inter_bandwidth_positive",
        ),
        CheckConstraint("price_usd IS NULL OR price_usd >= 0", name="price_not_negative"),
        CheckConstraint("power_w IS NULL OR power_w > 0", name="power_positive"),
        CheckConstraint("host_memory_gb IS NULL OR host_memory_gb >= 0", name="host_memory"),
        CheckConstraint("host_cpu_cores IS NULL OR host_cpu_cores >= 1", name="host_cpu_cores"),
        CheckConstraint(
            "host_ram_bandwidth_gbs IS NULL OR host_ram_bandwidth_gbs > 0",
            name="host_ram_bandwidth_positive",
        ),
        CheckConstraint(
            "host_ram_channels IS NULL OR host_ram_channels >= 1", name="host_ram_channels"
        ),
        CheckConstraint(
            "host_ram_speed_mts IS NULL OR host_ram_speed_mts > 0", name="host_ram_speed"
        ),
    )

    tier: Mapped[str] = mapped_column(String(16), index=True)
    nodes: Mapped[int] = mapped_column(Integer, default=1)
    intra_node_link_kind: Mapped[str] = mapped_column(String(32))
    intra_node_bandwidth_gbs: Mapped[float | None] = mapped_column(Float)
    intra_node_latency_us: Mapped[float | None] = mapped_column(Float)
    inter_node_link_kind: Mapped[str] = mapped_column(String(32), default="none")
    inter_node_bandwidth_gbps: Mapped[float | None] = mapped_column(Float)
    inter_node_latency_us: Mapped[float | None] = mapped_column(Float)
    # Accelerators in one NVLink/NVSwitch domain when it spans nodes (GB200 NVL72: 72).
    scale_up_domain_accelerators: Mapped[int | None] = mapped_column(Integer)
    # The host: host_memory_gb is its RAM; bandwidth is channels x speed x 8 bytes or published.
    host_memory_gb: Mapped[float | None] = mapped_column(Float)
    host_cpu: Mapped[str | None] = mapped_column(String(SHORT_TEXT_LENGTH))
    host_cpu_cores: Mapped[int | None] = mapped_column(Integer)
    host_ram_channels: Mapped[int | None] = mapped_column(Integer)
    host_ram_speed_mts: Mapped[float | None] = mapped_column(Float)
    host_ram_bandwidth_gbs: Mapped[float | None] = mapped_column(Float)
    power_w: Mapped[float | None] = mapped_column(Float)
    price_usd: Mapped[float | None] = mapped_column(Float)
    price_source_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))
    price_as_of: Mapped[date | None] = mapped_column(Date)
    failover: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="none")
    scheduling: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="manual")

    groups: Mapped[list["BuildAcceleratorGroup"]] = relationship(
        back_populates="build",
        lazy="raise",
        cascade="all, delete-orphan",
        order_by="BuildAcceleratorGroup.position",
    )

    @property
    def accelerators_per_node(self) -> int:
        """Accelerators in one node over every group."""
        return sum(g.count_per_node for g in self.groups)

    @property
    def accelerator(self) -> Accelerator:
        """The first group's accelerator (the one a single-accelerator client reads)."""
        return self.groups[0].accelerator

    @property
    def accelerator_count(self) -> int:
        return self.nodes * self.accelerators_per_node


class BuildAcceleratorGroup(Base):
    """One kind of accelerator in a build: how many per node and how each one is attached."""

    __tablename__ = "build_accelerator_group"
    # No UNIQUE(build_id, position): replacing a build's groups inserts the new rows before the
    # unit of work deletes the old ones, which such a constraint would refuse mid-flush.
    __table_args__ = (
        CheckConstraint("count_per_node >= 1", name="count_per_node_positive"),
        CheckConstraint("position >= 0", name="position_not_negative"),
        CheckConstraint(
            "pcie_generation IS NULL OR pcie_generation BETWEEN 1 AND 7", name="pcie_generation"
        ),
        CheckConstraint(
            "pcie_lanes IS NULL OR pcie_lanes IN (1, 2, 4, 8, 16)", name="pcie_lanes"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    build_id: Mapped[int] = mapped_column(ForeignKey("build.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    accelerator_id: Mapped[int] = mapped_column(
        ForeignKey("accelerator.id", ondelete="RESTRICT"), index=True
    )
    count_per_node: Mapped[int] = mapped_column(Integer)
    # Per accelerator of the group: the slot it sits in (x8 on a consumer board's second slot).
    pcie_generation: Mapped[int | None] = mapped_column(Integer)
    pcie_lanes: Mapped[int | None] = mapped_column(Integer)

    build: Mapped[Build] = relationship(back_populates="groups", lazy="raise")
    accelerator: Mapped[Accelerator] = relationship(back_populates="groups", lazy="raise")
