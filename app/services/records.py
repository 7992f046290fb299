"""Catalog records in their document shape (seed files, export, API detail, admin PUT).

One function per direction and kind: ORM → document dict, validated input → ORM columns.
Everything that reads or writes a whole record goes through here.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.engine import (
    AcceleratorGroup,
    BuildSpec,
    EngineInputError,
    InterNodeLink,
    IntraNodeLink,
    derive_tier,
    model_spec_from_hf_config,
)
from app.errors import FieldError
from app.errors import field_errors as errors_from
from app.models import Accelerator, Build, BuildAcceleratorGroup, Measurement, ModelProfile
from app.models._mixins import utcnow
from app.schemas.accelerator import AcceleratorIn
from app.schemas.build import AcceleratorGroupIn, BuildIn, HostIn, InterNodeLinkIn, IntraNodeLinkIn
from app.schemas.measurement import HardwareIn, MeasurementIn
from app.schemas.model_profile import ModelIn
from app.services.specs import accelerator_spec

Record = Accelerator | Build | ModelProfile | Measurement


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


def field_errors(exc: ValidationError) -> list[FieldError]:
    """Pydantic errors of a record as (dotted field path, reason) pairs."""
    return errors_from(exc.errors(include_url=False), fallback="(record)")


# ---- ORM → document ------------------------------------------------------------------------


def accelerator_document(acc: Accelerator) -> dict[str, Any]:
    """An accelerator in seed/export shape."""
    return _dump(AcceleratorIn, {f: getattr(acc, f) for f in AcceleratorIn.model_fields})


_HOST_COLUMNS = {
    "cpu": "host_cpu",
    "cpu_cores": "host_cpu_cores",
    "ram_channels": "host_ram_channels",
    "ram_speed_mts": "host_ram_speed_mts",
    "ram_bandwidth_gbs": "host_ram_bandwidth_gbs",
}
_BUILD_NESTED = frozenset(
    {"accelerator", "accelerators", "host", "intra_node_link", "inter_node_link"}
)


def build_document(build: Build) -> dict[str, Any]:
    """A build in seed/export shape (its groups and their accelerators must be loaded)."""
    values: dict[str, Any] = {
        f: getattr(build, f) for f in BuildIn.model_fields if f not in _BUILD_NESTED
    }
    values["accelerator"] = build.accelerator.slug
    values["accelerators"] = [
        AcceleratorGroupIn.model_construct(
            accelerator=g.accelerator.slug,
            count=g.count_per_node,
            pcie_generation=g.pcie_generation,
            pcie_lanes=g.pcie_lanes,
        )
        for g in build.groups
    ]
    host = {field: getattr(build, column) for field, column in _HOST_COLUMNS.items()}
    values["host"] = (
        None
        if all(v is None for v in host.values())
        else HostIn.model_construct(ram_gb=build.host_memory_gb, **host)
    )
    values["intra_node_link"] = IntraNodeLinkIn.model_construct(
        kind=build.intra_node_link_kind,
        bandwidth_gbs=build.intra_node_bandwidth_gbs,
        latency_us=build.intra_node_latency_us,
    )
    values["inter_node_link"] = InterNodeLinkIn.model_construct(
        kind=build.inter_node_link_kind,
        bandwidth_gbps=build.inter_node_bandwidth_gbps,
        latency_us=build.inter_node_latency_us,
    )
    return _dump(BuildIn, values)


def model_document(profile: ModelProfile) -> dict[str, Any]:
    """A model profile in seed/export shape."""
    return _dump(ModelIn, {f: getattr(profile, f) for f in ModelIn.model_fields})


def measurement_document(measurement: Measurement) -> dict[str, Any]:
    """A measurement in seed/export shape (the shape of /work/data/SCHEMA.md rows)."""
    values: dict[str, Any] = {
        f: getattr(measurement, f)
        for f in MeasurementIn.model_fields
        if f not in {"hardware", "model", "value"}
    }
    values["hardware"] = HardwareIn.model_validate(measurement.hardware)
    values["model"] = measurement.model_slug
    values["value"] = (
        measurement.value >= 0.5 if measurement.metric == "out_of_memory" else measurement.value
    )
    return _dump(MeasurementIn, values)


def _dump(schema: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    # model_construct skips re-validation of stored data; dumping normalises dates to ISO.
    return schema.model_construct(**values).model_dump(mode="json")


def record_document(record: Record) -> dict[str, Any]:
    """Any record in seed/export shape."""
    if isinstance(record, Accelerator):
        return accelerator_document(record)
    if isinstance(record, Build):
        return build_document(record)
    if isinstance(record, Measurement):
        return measurement_document(record)
    return model_document(record)


# ---- validated input → ORM -----------------------------------------------------------------


def validate_record(
    session: Session,
    kind: Kind,
    raw: Any,
    *,
    pending_accelerators: Mapping[str, AcceleratorIn] | None = None,
    pending_builds: Mapping[str, BuildIn] | None = None,
    pending_models: Mapping[str, ModelIn] | None = None,
) -> tuple[BaseModel | None, list[FieldError]]:
    """Validate one record: its schema, then what needs the catalog (accelerator, tier, config,
    a measurement's build, accelerator and model). `pending_*` are records of the same document
    that are not written yet."""
    if not isinstance(raw, Mapping):
        return None, [FieldError("(record)", "must be an object")]
    try:
        record = kind.schema.model_validate(strip_read_only(raw))
    except ValidationError as exc:
        return None, field_errors(exc)
    if isinstance(record, BuildIn):
        return record, _check_build(session, record, pending_accelerators or {})
    if isinstance(record, ModelIn):
        return record, _check_model(record)
    if isinstance(record, MeasurementIn):
        return record, _check_measurement(
            session,
            record,
            accelerators=pending_accelerators or {},
            builds=pending_builds or {},
            models=pending_models or {},
        )
    return record, []


def _check_build(
    session: Session, record: BuildIn, pending: Mapping[str, AcceleratorIn]
) -> list[FieldError]:
    accelerators: dict[str, Accelerator] = {}
    problems = []
    for index, group in enumerate(record.groups):
        slug = group.accelerator
        acc_in = pending.get(slug)
        found = (
            Accelerator(**acc_in.model_dump())
            if acc_in is not None
            else session.scalar(select(Accelerator).where(Accelerator.slug == slug))
        )
        if found is None:
            where = (
                "accelerator" if len(record.groups) == 1 else f"accelerators.{index}.accelerator"
            )
            problems.append(FieldError(where, f"unknown accelerator '{slug}'"))
        else:
            accelerators[slug] = found
    if problems:
        return problems
    implied = derive_tier(_spec_from_input(record, accelerators))
    if record.tier is not None and record.tier != implied:
        return [
            FieldError(
                "tier",
                f"'{record.tier}' contradicts the hardware, which makes this build '{implied}'"
                " (one node without a pooled NVLink/NVSwitch domain is desktop, one node with"
                " one is dgx, several nodes or a rack-scale domain is cluster)",
            )
        ]
    return []


def _check_model(record: ModelIn) -> list[FieldError]:
    try:
        model_spec_from_hf_config(record.config, name=record.name)
    except EngineInputError as exc:
        return [FieldError(f"config.{exc.field}", exc.reason)]
    return []


def _exists(session: Session, orm: type[Record], slug: str, pending: Mapping[str, Any]) -> bool:
    return slug in pending or session.scalar(select(orm.id).where(orm.slug == slug)) is not None


def _build_hardware(
    session: Session, slug: str, pending: Mapping[str, BuildIn]
) -> tuple[str, int] | None:
    """(accelerator slug, accelerator count) of a catalog or pending build, or None if unknown."""
    record = pending.get(slug)
    if record is not None:
        return record.groups[0].accelerator, record.nodes * sum(g.count for g in record.groups)
    found = session.scalar(select(Build).options(BUILD_LOAD).where(Build.slug == slug))
    if found is None:
        return None
    return found.accelerator.slug, found.accelerator_count


def _check_measurement(
    session: Session,
    record: MeasurementIn,
    *,
    accelerators: Mapping[str, AcceleratorIn],
    builds: Mapping[str, BuildIn],
    models: Mapping[str, ModelIn],
) -> list[FieldError]:
    problems = []
    if not _exists(session, ModelProfile, record.model, models):
        problems.append(FieldError("model", f"unknown model '{record.model}'"))
    hw = record.hardware
    if hw.build is not None:
        found = _build_hardware(session, hw.build, builds)
        if found is None:
            problems.append(FieldError("hardware.build", f"unknown build '{hw.build}'"))
        else:
            accelerator, count = found
            if hw.accelerator is not None and hw.accelerator != accelerator:
                problems.append(
                    FieldError(
                        "hardware.accelerator",
                        f"'{hw.accelerator}' contradicts build '{hw.build}', which uses"
                        f" '{accelerator}'",
                    )
                )
            if hw.count != count:
                problems.append(
                    FieldError(
                        "hardware.count",
                        f"build '{hw.build}' has {count} accelerators, not {hw.count}; name the"
                        " build only when the run used exactly that build",
                    )
                )
    elif (
        hw.accelerator is not None
        and hw.accelerator_spec is None
        and not hw.groups
        and not _exists(session, Accelerator, hw.accelerator, accelerators)
    ):
        problems.append(
            FieldError(
                "hardware.accelerator",
                f"unknown accelerator '{hw.accelerator}'; give its figures under"
                " hardware.accelerator_spec",
            )
        )
    for index, group in enumerate(hw.groups or []):
        if not _exists(session, Accelerator, group.accelerator, accelerators):
            problems.append(
                FieldError(
                    f"hardware.groups.{index}.accelerator",
                    f"unknown accelerator '{group.accelerator}'",
                )
            )
    return problems


def measurement_name(record: MeasurementIn) -> str:
    """A readable title: model, hardware, runtime and metric."""
    hw = record.hardware
    if hw.build is not None:
        where = hw.build
    elif hw.groups:
        where = " + ".join(f"{g.count}x {g.accelerator}" for g in hw.groups)
    else:
        label = hw.accelerator_spec.name if hw.accelerator_spec is not None else hw.accelerator
        where = f"{hw.count}x {label}" if hw.count > 1 else str(label)
    return f"{record.model} on {where}, {record.runtime} {record.metric}"[:160]


def _spec_from_input(record: BuildIn, accelerators: Mapping[str, Accelerator]) -> BuildSpec:
    # Straight from the validated record: transient ORM groups pointing at persistent
    # accelerators would be half-added to the session by the relationship's backref.
    groups = tuple(
        AcceleratorGroup(
            accelerator=accelerator_spec(accelerators[g.accelerator]),
            count_per_node=g.count,
            pcie_generation=g.pcie_generation,
            pcie_lanes=g.pcie_lanes,
        )
        for g in record.groups
    )
    return BuildSpec.of_groups(
        record.name,
        groups,
        nodes=record.nodes,
        intra_node_link=IntraNodeLink(
            record.intra_node_link.kind,
            record.intra_node_link.bandwidth_gbs,
            record.intra_node_link.latency_us,
        ),
        inter_node_link=InterNodeLink(
            record.inter_node_link.kind,
            record.inter_node_link.bandwidth_gbps,
            record.inter_node_link.latency_us,
        ),
        scale_up_domain_accelerators=record.scale_up_domain_accelerators,
        power_w=record.power_w,
        price_usd=record.price_usd,
    )


def _build_columns(record: BuildIn, accelerators: Mapping[str, Accelerator]) -> dict[str, Any]:
    values = record.model_dump(exclude=set(_BUILD_NESTED | {"accelerators_per_node"}))
    host = record.host
    for field, column in _HOST_COLUMNS.items():
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
        slugs = {g.accelerator for g in record.groups}
        stmt = select(Accelerator).where(Accelerator.slug.in_(slugs))
        found = {a.slug: a for a in session.scalars(stmt)}
        assert set(found) == slugs, "validate_record checks the accelerators exist"
        values = _build_columns(record, found)
        values["tier"] = derive_tier(_spec_from_input(record, found))
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
            if hw.accelerator is not None and _exists(session, Accelerator, hw.accelerator, {})
            else None
        )
        if hw.build is not None:
            build_hardware = _build_hardware(session, hw.build, {})
            assert build_hardware is not None, "validate_record checks the build exists"
            accelerator_slug = build_hardware[0]
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
    "accelerator_spec",
    "all_records",
    "columns_for",
    "field_errors",
    "get_record",
    "record_document",
    "strip_read_only",
    "validate_record",
]
