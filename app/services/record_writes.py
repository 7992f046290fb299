"""The one audited write path: imports and single-record admin writes both go through here.

`stage_write` creates or updates one validated record and adds its audit event, whose "after"
is the record's canonical document (what export answers for it); `commit_catalog_change` raises
the catalog version and commits once. A lost race (a version another writer moved, a slug
another writer took) rolls everything back and becomes a 409/412 naming the record: nothing of
this transaction is written and nothing the other writer saved is touched.
"""

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.catalog_version import bump_catalog_version
from app.engine import derive_tier, model_spec_from_hf_config
from app.errors import Conflict, FieldError
from app.models import Accelerator, BuildAcceleratorGroup
from app.models._mixins import utcnow
from app.schemas.build import BuildIn
from app.schemas.measurement import MeasurementIn
from app.schemas.model_profile import ModelIn
from app.services.audit import record_change
from app.services.record_documents import BUILD_NESTED_FIELDS, HOST_COLUMNS
from app.services.record_validation import (
    build_hardware,
    build_spec_from_input,
    catalog_accelerators,
    catalog_has,
    derived_tier,
    measurement_name,
)
from app.services.records import BUILD, Kind, Record, record_document

# Slugs per lookup after a lost race: well inside every backend's bound-parameter limit.
_LOOKUP_CHUNK = 500


@dataclass(frozen=True)
class StagedWrite:
    """A record written in the open transaction: its kind, slug and the version it replaced
    (None for a create), so that a lost race can name it."""

    kind: Kind
    slug: str
    read_version: int | None


def canonical_document(session: Session, kind: Kind, record: BaseModel) -> dict[str, Any]:
    """A validated record as export will show it once written (a build's derived tier filled in)."""
    document = record.model_dump(mode="json")
    if kind is BUILD and document.get("tier") is None:
        assert isinstance(record, BuildIn)
        document["tier"] = derived_tier(session, record)
    return document


def stage_write(
    session: Session,
    kind: Kind,
    record: BaseModel,
    *,
    existing: Record | None,
    actor: str,
    action: str | None = None,
) -> StagedWrite | None:
    """Create (existing is None) or update a record and add its audit event to the open
    transaction; None when the record already reads exactly so (nothing to write). `action`
    defaults to create/update ("restore" for a restore)."""
    slug: str = record.slug  # type: ignore[attr-defined]
    after = canonical_document(session, kind, record)
    if existing is None:
        session.add(kind.orm(**columns_for(session, record)))
        record_change(session, actor=actor, action=action or "create", kind=kind.name,
                      slug=slug, before=None, after=after)
        return StagedWrite(kind, slug, None)
    before = record_document(existing)
    if before == after:
        return None
    read_version = existing.version
    for column, value in columns_for(session, record).items():
        setattr(existing, column, value)
    record_change(session, actor=actor, action=action or "update", kind=kind.name, slug=slug,
                  before=before, after=after)
    return StagedWrite(kind, slug, read_version)


# ---- validated input → ORM columns ----------------------------------------------------------


def _build_columns(record: BuildIn, accelerators: Mapping[str, Accelerator]) -> dict[str, Any]:
    values = record.model_dump(exclude=set(BUILD_NESTED_FIELDS | {"accelerators_per_node"}))
    host = record.host
    for field, column in HOST_COLUMNS.items():
        values[column] = getattr(host, field) if host is not None else None
    values["groups"] = [
        BuildAcceleratorGroup(
            position=position,
            accelerator_id=accelerators[g.accelerator].id,
            count_per_node=g.count,
            pcie_generation=g.pcie_generation,
            pcie_lanes=g.pcie_lanes,
        )
        for position, g in enumerate(record.groups)
    ]
    # Groups live in their own rows; a new updated_at makes a groups-only edit still UPDATE the
    # build row, so its version (the ETag) moves and a stale concurrent edit fails.
    values["updated_at"] = utcnow()
    values.update(
        intra_node_link_kind=record.intra_node_link.kind,
        intra_node_bandwidth_gbs=record.intra_node_link.bandwidth_gbs,
        intra_node_latency_us=record.intra_node_link.latency_us,
        inter_node_link_kind=record.inter_node_link.kind,
        inter_node_bandwidth_gbps=record.inter_node_link.bandwidth_gbps,
        inter_node_latency_us=record.inter_node_link.latency_us,
    )
    return values


def columns_for(session: Session, record: BaseModel) -> dict[str, Any]:
    """ORM column values for a validated record (derived columns filled in)."""
    if isinstance(record, BuildIn):
        found = catalog_accelerators(session, record)
        values = _build_columns(record, found)
        values["tier"] = derive_tier(build_spec_from_input(record, found))
        return values
    if isinstance(record, ModelIn):
        values = record.model_dump()
        spec = model_spec_from_hf_config(record.config, name=record.name)
        values.update(
            architecture=str(record.config.get("model_type", "")),
            attention=spec.attention_kind,
            is_moe=spec.is_moe,
            num_hidden_layers=spec.num_hidden_layers,
            hidden_size=spec.hidden_size,
            num_attention_heads=spec.num_attention_heads,
            num_key_value_heads=spec.num_key_value_heads,
            head_dim=spec.head_dim,
            vocab_size=spec.vocab_size,
            n_routed_experts=spec.n_routed_experts,
            num_experts_per_tok=spec.num_experts_per_tok,
            kv_lora_rank=spec.kv_lora_rank,
            sliding_window=spec.sliding_window,
        )
        return values
    if isinstance(record, MeasurementIn):
        values = record.model_dump(exclude={"hardware", "model", "value"})
        hw = record.hardware
        # The catalog accelerator when the name resolves to one (lists filter on it), even if
        # the row also carries the spec it was collected with.
        accelerator_slug = (
            hw.accelerator
            if hw.accelerator is not None and catalog_has(session, Accelerator, hw.accelerator, {})
            else None
        )
        if hw.build is not None:
            found_build = build_hardware(session, hw.build, {})
            assert found_build is not None, "validate_record checks the build exists"
            accelerator_slug = found_build[0]
        values.update(
            name=measurement_name(record),
            hardware=hw.model_dump(mode="json"),
            build_slug=hw.build,
            accelerator_slug=None if hw.groups else accelerator_slug,
            accelerator_count=hw.count,
            nodes=hw.nodes,
            model_slug=record.model,
            value=float(record.value),
        )
        return values
    return record.model_dump()


# ---- lost races --------------------------------------------------------------------------------


class LostRace(Conflict):
    """Another writer changed, deleted or created one of this transaction's records first."""

    def __init__(self, records: list[StagedWrite], *, stale: bool) -> None:
        named = ", ".join(f"{w.kind.name} '{w.slug}'" for w in records[:5])
        more = f" and {len(records) - 5} more" if len(records) > 5 else ""
        super().__init__(
            f"{named}{more} changed, appeared or disappeared while this write ran (someone"
            " else saved first); nothing was written: read it again and reapply the change",
            errors=[FieldError(f"{w.kind.key}.{w.slug}", "changed by someone else meanwhile")
                    for w in records],
        )
        self.records = records
        self.stale = stale  # an update lost to a newer version (else a create lost its slug)


@contextmanager
def racing_writers(session: Session, writes: Collection[StagedWrite]) -> Iterator[None]:
    """Turn a lost race inside the block (a stale version, a slug taken meanwhile) into
    LostRace, after rolling back; any other integrity error is re-raised as it was."""
    try:
        yield
    except (StaleDataError, IntegrityError) as exc:
        session.rollback()
        raced = lost_races(session, writes)
        stale = isinstance(exc, StaleDataError)
        if not raced and not stale:
            raise
        raise LostRace(raced or list(writes), stale=stale) from None


def commit_catalog_change(
    session: Session, writes: Collection[StagedWrite], *, dry_run: bool = False
) -> None:
    """Raise the catalog version and commit (roll back for a dry run), all or nothing."""
    with racing_writers(session, writes):
        # Raising the version flushes the pending INSERT/UPDATEs first, so a stale version or a
        # duplicate slug can surface here as well as at commit.
        bump_catalog_version(session)
        if dry_run:
            session.flush()
            session.rollback()
        else:
            session.commit()


def lost_races(session: Session, writes: Collection[StagedWrite]) -> list[StagedWrite]:
    """The staged writes another writer got to first (read after the rollback): an update whose
    record moved past the version read or is gone, a create whose slug exists now."""
    by_kind: dict[str, list[StagedWrite]] = {}
    for write in writes:
        by_kind.setdefault(write.kind.name, []).append(write)
    raced: list[StagedWrite] = []
    for staged in by_kind.values():
        orm = staged[0].kind.orm
        current: dict[str, int] = {}
        for start in range(0, len(staged), _LOOKUP_CHUNK):
            slugs = [w.slug for w in staged[start : start + _LOOKUP_CHUNK]]
            rows = session.execute(select(orm.slug, orm.version).where(orm.slug.in_(slugs)))
            current.update((slug, version) for slug, version in rows)
        raced.extend(w for w in staged if current.get(w.slug) != w.read_version)
    session.rollback()  # end the read transaction these lookups began
    return raced
