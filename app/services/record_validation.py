"""Validating catalog records: the schema, then what needs the catalog (a build's accelerators
and tier, a model's config, a measurement's build, accelerator and model)."""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.engine import (
    AcceleratorGroup,
    BuildSpec,
    EngineInputError,
    InterNodeLink,
    IntraNodeLink,
    derive_tier,
    model_spec_from_hf_config,
)
from app.errors import FieldError, field_errors
from app.models import Accelerator, Build, ModelProfile
from app.schemas.accelerator import AcceleratorIn
from app.schemas.build import BuildIn
from app.schemas.measurement import MeasurementIn
from app.schemas.model_profile import ModelIn
from app.services.records import BUILD_LOAD, Kind, Record, strip_read_only
from app.services.specs import accelerator_spec


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
        return None, field_errors(exc.errors(include_url=False), fallback="(record)")
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
    implied = derive_tier(build_spec_from_input(record, accelerators))
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


def catalog_has(session: Session, orm: type[Record], slug: str, pending: Mapping[str, Any]) -> bool:
    return slug in pending or session.scalar(select(orm.id).where(orm.slug == slug)) is not None


def build_hardware(
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
    if not catalog_has(session, ModelProfile, record.model, models):
        problems.append(FieldError("model", f"unknown model '{record.model}'"))
    hw = record.hardware
    if hw.build is not None:
        found = build_hardware(session, hw.build, builds)
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
        and not catalog_has(session, Accelerator, hw.accelerator, accelerators)
    ):
        problems.append(
            FieldError(
                "hardware.accelerator",
                f"unknown accelerator '{hw.accelerator}'; give its figures under"
                " hardware.accelerator_spec",
            )
        )
    for index, group in enumerate(hw.groups or []):
        if not catalog_has(session, Accelerator, group.accelerator, accelerators):
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


def build_spec_from_input(
    record: BuildIn, accelerators: Mapping[str, Accelerator]
) -> BuildSpec:
    """The engine's spec of a validated build (its accelerators found in the catalog)."""
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


def catalog_accelerators(session: Session, record: BuildIn) -> dict[str, Accelerator]:
    slugs = {g.accelerator for g in record.groups}
    stmt = select(Accelerator).where(Accelerator.slug.in_(slugs))
    found = {a.slug: a for a in session.scalars(stmt)}
    assert set(found) == slugs, "validate_record checks the accelerators exist"
    return found


def derived_tier(session: Session, record: BuildIn) -> str:
    """The tier a validated build's hardware makes it (desktop, dgx or cluster)."""
    return derive_tier(build_spec_from_input(record, catalog_accelerators(session, record)))
