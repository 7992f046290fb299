"""Accelerator records as seeded, exported, read and written."""

from typing import Literal

from pydantic import Field, model_validator

from app.schemas.common import (
    AsOf,
    Name,
    NonNegativeMeasure,
    Notes,
    PositiveMeasure,
    ShortText,
    Slug,
    SourceUrl,
    StrictModel,
)

MemoryKind = Literal["discrete", "unified"]


class PricedRecord(StrictModel):
    """A price needs its own source and date (subclasses declare the three price fields, after
    the specs, so records read in a natural order)."""

    @model_validator(mode="after")
    def _price_has_source(self) -> "PricedRecord":
        price = getattr(self, "price_usd", None)
        if price is not None and (
            getattr(self, "price_source_url", None) is None
            or getattr(self, "price_as_of", None) is None
        ):
            raise ValueError("price_usd needs price_source_url and price_as_of")
        return self


def check_estimated_names(record: StrictModel, estimated: list[str]) -> None:
    """Each name is a field of the record, or a dotted path inside one (config.rope_theta)."""
    fields = type(record).model_fields
    unknown = sorted(name for name in set(estimated) if name.split(".", 1)[0] not in fields)
    if unknown:
        raise ValueError(f"estimated names unknown fields: {', '.join(unknown)}")


class AcceleratorIn(PricedRecord):
    """An accelerator as written in seed_data/accelerators.yaml and accepted by the admin API."""

    slug: Slug
    name: Name
    vendor: ShortText
    memory_gb: PositiveMeasure
    memory_kind: MemoryKind = "discrete"
    memory_type: ShortText | None = None
    memory_bandwidth_gbs: PositiveMeasure
    fp16_tflops: PositiveMeasure = Field(
        description="dense FP16/BF16 tensor TFLOPS (FP32 accumulate)"
    )
    bf16_tflops: PositiveMeasure | None = None
    fp8_tflops: PositiveMeasure | None = None
    int8_tops: PositiveMeasure | None = None
    fp4_tflops: PositiveMeasure | None = None
    tdp_w: PositiveMeasure | None = None
    price_usd: NonNegativeMeasure | None = None
    price_source_url: SourceUrl | None = None
    price_as_of: AsOf | None = None
    launch_year: int | None = Field(default=None, strict=True, ge=1990, le=2100)
    host_interface: ShortText | None = None
    estimated: list[ShortText] = Field(default_factory=list, max_length=40)
    notes: Notes = ""
    source_url: SourceUrl
    as_of: AsOf

    @model_validator(mode="after")
    def _estimated_fields_exist(self) -> "AcceleratorIn":
        check_estimated_names(self, self.estimated)
        return self


class AcceleratorRead(AcceleratorIn):
    """The full record with its version (also its ETag); PUT accepts it back unchanged."""

    version: int
