"""Catalog record kinds and whole-record queries (a build with its groups and accelerators).

The record's other concerns live beside it: `record_documents` (ORM → document, re-exported
here), `record_validation` (input → validated record) and `record_writes` (the audited write).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.models import Accelerator, Build, BuildAcceleratorGroup, Measurement, ModelProfile
from app.schemas.accelerator import AcceleratorIn
from app.schemas.build import BuildIn
from app.schemas.measurement import MeasurementIn
from app.schemas.model_profile import ModelIn
from app.services.record_documents import (
    Record,
    accelerator_document,
    build_document,
    measurement_document,
    model_document,
    record_document,
)


@dataclass(frozen=True)
class Kind:
    """A resource kind: its singular name, document key, ORM class and input schema."""

    name: str
    key: str
    orm: type[Record]
    schema: type[BaseModel]


ACCELERATOR = Kind("accelerator", "accelerators", Accelerator, AcceleratorIn)
BUILD = Kind("build", "builds", Build, BuildIn)
MODEL = Kind("model", "models", ModelProfile, ModelIn)
MEASUREMENT = Kind("measurement", "measurements", Measurement, MeasurementIn)
# In dependency order: an import validates and writes each kind after the ones it refers to.
KINDS: tuple[Kind, ...] = (ACCELERATOR, BUILD, MODEL, MEASUREMENT)
KIND_BY_NAME = {k.name: k for k in KINDS}
KIND_BY_KEY = {k.key: k for k in KINDS}

# Fields of the read shape that a client may send back to PUT; they are derived, so ignored.
READ_ONLY_FIELDS = frozenset(
    {
        "version",
        "accelerator_count",
        "total_memory_gb",
        "memory_pooled",
        "accelerators_label",
        "mixed",
        "min_accelerator_memory_gb",
        "slowest_pcie_gbs",
        "architecture",
        "attention",
        "is_moe",
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "n_routed_experts",
        "num_experts_per_tok",
        "kv_lora_rank",
        "sliding_window",
        "params_total_computed",
        "params_active_computed",
        "kv_cache_bytes_per_token",
    }
)


def strip_read_only(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The writable part of a record read from the API (so GET output can be PUT back)."""
    return {k: v for k, v in raw.items() if k not in READ_ONLY_FIELDS}


# ---- queries -------------------------------------------------------------------------------

# What reading a whole build needs: its groups in order, each with its accelerator.
BUILD_LOAD = selectinload(Build.groups).selectinload(BuildAcceleratorGroup.accelerator)


def get_record(session: Session, kind: Kind, slug: str) -> Record | None:
    """One record by slug (a build comes with its accelerator loaded)."""
    stmt = select(kind.orm).where(kind.orm.slug == slug)
    if kind is BUILD:
        stmt = stmt.options(BUILD_LOAD)
    record = cast("Record | None", session.scalar(stmt))
    if isinstance(record, Build) and not record.groups:
        # Every build has a group; none means a concurrent delete committed between the build's
        # query and its groups' query: the build is gone.
        return None
    return record


def all_records(session: Session, kind: Kind) -> list[Record]:
    """Every record of a kind, by slug."""
    stmt = select(kind.orm).order_by(kind.orm.slug)
    if kind is BUILD:
        stmt = stmt.options(BUILD_LOAD)
    return list(session.scalars(stmt))


__all__ = [
    "ACCELERATOR",
    "BUILD",
    "BUILD_LOAD",
    "KINDS",
    "KIND_BY_KEY",
    "KIND_BY_NAME",
    "MEASUREMENT",
    "MODEL",
    "READ_ONLY_FIELDS",
    "Kind",
    "Record",
    "accelerator_document",
    "all_records",
    "build_document",
    "get_record",
    "measurement_document",
    "model_document",
    "record_document",
    "strip_read_only",
]
