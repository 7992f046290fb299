"""Translate ORM records into the engine's frozen dataclasses (the one place this happens)."""

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    InterNodeLink,
    IntraNodeLink,
    ModelSpec,
    model_spec_from_hf_config,
)
from app.models import Accelerator, Build, ModelProfile

# Catalog fields an inline accelerator may lack (the engine then assumes the default class).
_OPTIONAL_SPEC_FIELDS = ("vendor", "memory_type")
_ACCELERATOR_SPEC_FIELDS = tuple(
    f.name for f in fields(AcceleratorSpec) if f.name not in _OPTIONAL_SPEC_FIELDS
)


def accelerator_spec(source: Accelerator | Mapping[str, Any] | Any) -> AcceleratorSpec:
    """Engine view of an accelerator: an ORM row, an inline accelerator or a record dict."""
    values: dict[str, Any]
    if isinstance(source, Mapping):
        values = {name: source[name] for name in _ACCELERATOR_SPEC_FIELDS}
        values.update({name: source.get(name) for name in _OPTIONAL_SPEC_FIELDS})
    else:
        values = {name: getattr(source, name) for name in _ACCELERATOR_SPEC_FIELDS}
        values.update({name: getattr(source, name, None) for name in _OPTIONAL_SPEC_FIELDS})
    return AcceleratorSpec(**values)


def build_spec(build: Build, accelerator: Accelerator | None = None) -> BuildSpec:
    """Engine view of a build (its accelerator must be loaded or passed)."""
    acc = accelerator if accelerator is not None else build.accelerator
    return BuildSpec(
        name=build.name,
        accelerator=accelerator_spec(acc),
        nodes=build.nodes,
        accelerators_per_node=build.accelerators_per_node,
        intra_node_link=IntraNodeLink(
            kind=build.intra_node_link_kind,
            bandwidth_gbs=build.intra_node_bandwidth_gbs,
            latency_us=build.intra_node_latency_us,
        ),
        inter_node_link=InterNodeLink(
            kind=build.inter_node_link_kind,
            bandwidth_gbps=build.inter_node_bandwidth_gbps,
            latency_us=build.inter_node_latency_us,
        ),
        scale_up_domain_accelerators=build.scale_up_domain_accelerators,
        power_w=build.power_w,
        price_usd=build.price_usd,
    )


def model_spec(profile: ModelProfile) -> ModelSpec:
    """Engine view of a model profile, parsed from its stored config.json."""
    return model_spec_from_hf_config(
        profile.config,
        name=profile.name,
        params_total_published=profile.params_total,
        params_active_published=profile.params_active,
    )
