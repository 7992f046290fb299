"""An accelerator: one GPU, OAM module or unified-memory SoC."""

from datetime import date
from typing import TYPE_CHECKING

from sqlalchemy import CheckConstraint, Date, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models._mixins import SHORT_TEXT_LENGTH, URL_LENGTH, CatalogRecord

if TYPE_CHECKING:
    from app.models.build import BuildAcceleratorGroup

MEMORY_KINDS = ("discrete", "unified")


class Accelerator(CatalogRecord, Base):
    __tablename__ = "accelerator"
    __table_args__ = (
        CheckConstraint("memory_gb > 0", name="memory_gb_positive"),
        CheckConstraint("memory_bandwidth_gbs > 0", name="memory_bandwidth_positive"),
        CheckConstraint("fp16_tflops > 0", name="fp16_tflops_positive"),
        CheckConstraint("memory_kind IN ('discrete', 'unified')", name="memory_kind"),
        CheckConstraint("price_usd IS NULL OR price_usd >= 0", name="price_not_negative"),
        CheckConstraint("tdp_w IS NULL OR tdp_w > 0", name="tdp_positive"),
    )

    vendor: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), index=True)
    memory_gb: Mapped[float] = mapped_column(Float)
    memory_kind: Mapped[str] = mapped_column(String(16), default="discrete")
    memory_type: Mapped[str | None] = mapped_column(String(SHORT_TEXT_LENGTH))
    memory_bandwidth_gbs: Mapped[float] = mapped_column(Float)
    fp16_tflops: Mapped[float] = mapped_column(Float)
    bf16_tflops: Mapped[float | None] = mapped_column(Float)
    fp8_tflops: Mapped[float | None] = mapped_column(Float)
    int8_tops: Mapped[float | None] = mapped_column(Float)
    fp4_tflops: Mapped[float | None] = mapped_column(Float)
    tdp_w: Mapped[float | None] = mapped_column(Float)
    price_usd: Mapped[float | None] = mapped_column(Float)
    price_source_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))
    price_as_of: Mapped[date | None] = mapped_column(Date)
    launch_year: Mapped[int | None] = mapped_column(Integer)
    host_interface: Mapped[str | None] = mapped_column(String(SHORT_TEXT_LENGTH))

    groups: Mapped[list["BuildAcceleratorGroup"]] = relationship(
        back_populates="accelerator", lazy="raise"
    )
