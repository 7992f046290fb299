"""A build: nodes × accelerators, the links between them, power, price and operations."""

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
        CheckConstraint("accelerators_per_node >= 1", name="accelerators_per_node_positive"),
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
    )

    tier: Mapped[str] = mapped_column(String(16), index=True)
    nodes: Mapped[int] = mapped_column(Integer, default=1)
    accelerator_id: Mapped[int] = mapped_column(
        ForeignKey("accelerator.id", ondelete="RESTRICT"), index=True
    )
    accelerators_per_node: Mapped[int] = mapped_column(Integer)
    intra_node_link_kind: Mapped[str] = mapped_column(String(32))
    intra_node_bandwidth_gbs: Mapped[float | None] = mapped_column(Float)
    intra_node_latency_us: Mapped[float | None] = mapped_column(Float)
    inter_node_link_kind: Mapped[str] = mapped_column(String(32), default="none")
    inter_node_bandwidth_gbps: Mapped[float | None] = mapped_column(Float)
    inter_node_latency_us: Mapped[float | None] = mapped_column(Float)
    # Accelerators in one NVLink/NVSwitch domain when it spans nodes (GB200 NVL72: 72).
    scale_up_domain_accelerators: Mapped[int | None] = mapped_column(Integer)
    host_memory_gb: Mapped[float | None] = mapped_column(Float)
    power_w: Mapped[float | None] = mapped_column(Float)
    price_usd: Mapped[float | None] = mapped_column(Float)
    price_source_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))
    price_as_of: Mapped[date | None] = mapped_column(Date)
    failover: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="none")
    scheduling: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="manual")

    accelerator: Mapped[Accelerator] = relationship(back_populates="builds", lazy="raise")

    @property
    def accelerator_count(self) -> int:
        return self.nodes * self.accelerators_per_node
