"""Translate ORM records into the engine's frozen dataclasses (the one place this happens)."""

from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from app.engine import (
    AcceleratorGroup,
    AcceleratorSpec,
    BuildSpec,
    HostSpec,
    InterNodeLink,
    IntraNodeLink,
    ModelSpec,
    model_spec_from_hf_config,
)
from app.models import Accelerator, Build, ModelProfile
from app.schemas.accelerator import AcceleratorRead
from app.schemas.inline import InlineAccelerator, InlineBuild

# Catalog fields an inline accelerator may lack (the engine then assumes the default class).
_OPTIONAL_SPEC_FIELDS = ("vendor", "memory_type")
_ACCELERATOR_SPEC_FIELDS = tuple(
    f.name for f in fields(AcceleratorSpec) if f.name not in _OPTIONAL_SPEC_FIELDS
)
# What an inline build without an inter-node link gets (most are one node): the specs are frozen,
# so every such build shares this one instead of building its own.
_NO_INTER_NODE_LINK = InterNodeLink("none", None)


def accelerator_spec(
    source: Accelerator | AcceleratorRead | InlineAccelerator,
) -> AcceleratorSpec:
    """Engine view of an accelerator: an ORM row, a typed catalog record or an inline one."""
    if isinstance(source, InlineAccelerator):
        # Its fields are the spec's but the optional ones, which it cannot state (their
        # defaults, None, apply): passed as pydantic stored them, not read one by one.
        return AcceleratorSpec(**source.__dict__)
    values: dict[str, Any] = {name: getattr(source, name) for name in _ACCELERATOR_SPEC_FIELDS}
    values.update({name: getattr(source, name, None) for name in _OPTIONAL_SPEC_FIELDS})
    return AcceleratorSpec(**values)


def build_spec(
    build: Build, accelerators: Mapping[int, Accelerator] | None = None
) -> BuildSpec:
    """Engine view of a build: its groups' accelerators must be loaded, or passed by id."""
    groups = tuple(
        AcceleratorGroup(
            accelerator=accelerator_spec(
                accelerators[g.accelerator_id] if accelerators is not None else g.accelerator
            ),
            count_per_node=g.count_per_node,
            pcie_generation=g.pcie_generation,
            pcie_lanes=g.pcie_lanes,
        )
        for g in build.groups
    )
    return BuildSpec.of_groups(
        build.name,
        groups,
        nodes=build.nodes,
        host=host_spec(build),
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


def inline_build_spec_from(
    build: InlineBuild, catalog_accelerator: Callable[[str, str], AcceleratorSpec]
) -> BuildSpec:
    """Engine view of an inline build; `catalog_accelerator(slug, field)` resolves a slug (and
    raises NotFound naming `field`, the request path of that slug)."""
    groups = []
    single = build.accelerators is None
    # (card, count, PCIe generation, lanes) of either form, without building a group model.
    parts = (
        [(build.accelerator, build.accelerators_per_node, None, None)]
        if single
        else [(g.accelerator, g.count, g.pcie_generation, g.pcie_lanes) for g in build.groups]
    )
    cards = []
    for index, (card, count, pcie_generation, pcie_lanes) in enumerate(parts):
        assert card is not None and count is not None  # the single form is complete
        if isinstance(card, str):
            field = "build.accelerator" if single else f"build.accelerators.{index}.accelerator"
            acc = catalog_accelerator(card, field)
        else:
            acc = accelerator_spec(card)
        cards.append(acc)
        if not single:  # the single form builds no group (below)
            groups.append(AcceleratorGroup(acc, count, pcie_generation, pcie_lanes))
    per_node = build.per_node
    intra = build.intra_node_link
    if intra is None:
        kind = "pcie" if per_node > 1 else "none"
        if cards[0].memory_kind == "unified" and per_node == 1:
            kind = "unified"
        intra_link = IntraNodeLink(kind, None)
    else:
        intra_link = IntraNodeLink(intra.kind, intra.bandwidth_gbs, intra.latency_us)
    inter = build.inter_node_link
    inter_link = (
        _NO_INTER_NODE_LINK
        if inter is None
        else InterNodeLink(inter.kind, inter.bandwidth_gbps, inter.latency_us)
    )
    host = build.host
    shape: dict[str, Any] = {
        "nodes": build.nodes,
        "intra_node_link": intra_link,
        "inter_node_link": inter_link,
        "scale_up_domain_accelerators": build.scale_up_domain_accelerators,
        "power_w": build.power_w,
        "price_usd": build.price_usd,
        "host": None
        if host is None
        else HostSpec(host.cpu, host.cpu_cores, host.ram_gb, host.ram_bandwidth_gbs),
    }
    if single:
        # One card kind and no stated slot: the single-kind form, which the engine reads as
        # accelerator x accelerators_per_node without building or summing groups.
        return BuildSpec(build.name, cards[0], accelerators_per_node=per_node, **shape)
    return BuildSpec.of_groups(build.name, tuple(groups), **shape)


def host_spec(build: Build) -> HostSpec | None:
    """The build's host, or None when nothing about it is known."""
    values = (
        build.host_cpu,
        build.host_cpu_cores,
        build.host_memory_gb,
        build.host_ram_bandwidth_gbs,
    )
    if all(v is None for v in values):
        return None
    return HostSpec(
        cpu=build.host_cpu,
        cpu_cores=build.host_cpu_cores,
        ram_gb=build.host_memory_gb,
        ram_bandwidth_gbs=build.host_ram_bandwidth_gbs,
    )


def model_spec(profile: ModelProfile) -> ModelSpec:
    """Engine view of a model profile, parsed from its stored config.json."""
    return model_spec_from_hf_config(
        profile.config,
        name=profile.name,
        params_total_published=profile.params_total,
        params_active_published=profile.params_active,
    )
