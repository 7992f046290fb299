"""Catalog records in their document shape: ORM record → the dict seed files, export, the API
detail and the audit log show (one function per kind)."""

from typing import Any

from pydantic import BaseModel

from app.models import Accelerator, Build, Measurement, ModelProfile
from app.schemas.accelerator import AcceleratorIn
from app.schemas.build import AcceleratorGroupIn, BuildIn, HostIn, InterNodeLinkIn, IntraNodeLinkIn
from app.schemas.measurement import HardwareIn, MeasurementIn
from app.schemas.model_profile import ModelIn

Record = Accelerator | Build | ModelProfile | Measurement


def accelerator_document(acc: Accelerator) -> dict[str, Any]:
    """An accelerator in seed/export shape."""
    return _dump(AcceleratorIn, {f: getattr(acc, f) for f in AcceleratorIn.model_fields})


HOST_COLUMNS = {
    "cpu": "host_cpu",
    "cpu_cores": "host_cpu_cores",
    "ram_channels": "host_ram_channels",
    "ram_speed_mts": "host_ram_speed_mts",
    "ram_bandwidth_gbs": "host_ram_bandwidth_gbs",
}
BUILD_NESTED_FIELDS = frozenset(
    {"accelerator", "accelerators", "host", "intra_node_link", "inter_node_link"}
)


def build_document(build: Build) -> dict[str, Any]:
    """A build in seed/export shape (its groups and their accelerators must be loaded)."""
    values: dict[str, Any] = {
        f: getattr(build, f) for f in BuildIn.model_fields if f not in BUILD_NESTED_FIELDS
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
    host = {field: getattr(build, column) for field, column in HOST_COLUMNS.items()}
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
