"""Build rows: every catalog build loaded once per catalog version, ready for the engine.

- `build_rows(snap) -> BuildRows`: the cached rows (typed list item and record, engine spec)
  the build, estimate, compare, recommend and tier services read.
- `find_build(snap, slug, *, field)`: one row, or NotFound naming `field`.
"""

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select

from app.caching import Snapshot
from app.engine import BuildSpec
from app.engine.parts_text import accelerators_label
from app.models import TIERS, Build
from app.schemas.build import BuildListItem, BuildRead
from app.services.listing import find_row
from app.services.records import BUILD_LOAD, build_document
from app.services.specs import build_spec

TIER_ORDER = {tier: index for index, tier in enumerate(TIERS)}

INTRA_LINK_LABELS = {
    "pcie": "PCIe",
    "nvlink": "NVLink",
    "nvswitch": "NVSwitch",
    "infinity_fabric": "Infinity Fabric",
    "unified": "unified memory",
    "none": "no GPU-to-GPU link",
}
INTER_LINK_LABELS = {"infiniband": "InfiniBand", "ethernet": "Ethernet", "none": "none"}


@dataclass(frozen=True)
class BuildRow:
    """One build, ready to filter, sort, serialise and hand to the engine (read-only).

    `list_item` and `record` are the API's typed answers, validated once per catalog version;
    the other services read their attributes.
    """

    slug: str
    list_item: BuildListItem
    record: BuildRead
    spec: BuildSpec
    search_text: str
    accelerator_slug: str
    accelerator_slugs: frozenset[str]
    vendor: str
    vendors: frozenset[str]
    version: int
    failover: str
    scheduling: str
    price_source_url: str | None


@dataclass(frozen=True)
class BuildRows:
    """Every build at one catalog version, by slug order, with an index."""

    rows: tuple[BuildRow, ...]
    by_slug: dict[str, BuildRow]


def pooled_memory_gb(spec: BuildSpec) -> float:
    """Memory one scale-up domain shares (8 x 141 GB for a DGX H200 node; one card if isolated)."""
    if spec.is_mixed:  # mixed cards never share a pool (TP needs identical cards): the smallest
        return min(g.accelerator.memory_gb for g in spec.accelerator_groups)
    return spec.accelerator.memory_gb * spec.pooled_domain_accelerators


@dataclass(frozen=True)
class MixedBuildFields:
    """What a mixed or host-offloading build adds to its list item and record."""

    accelerators_label: str
    mixed: bool
    min_accelerator_memory_gb: float
    slowest_pcie_gbs: float | None


def mixed_build_fields(spec: BuildSpec) -> MixedBuildFields:
    """The mixed-build fields of a build's spec."""
    return MixedBuildFields(
        accelerators_label=accelerators_label(spec),
        mixed=spec.is_mixed,
        min_accelerator_memory_gb=min(g.accelerator.memory_gb for g in spec.accelerator_groups),
        slowest_pcie_gbs=spec.slowest_pcie_gbs,
    )


def _row(build: Build) -> BuildRow:
    spec = build_spec(build)
    acc = build.accelerator
    parts = asdict(mixed_build_fields(spec))
    item: dict[str, Any] = {
        "slug": build.slug,
        "name": build.name,
        "tier": build.tier,
        "nodes": build.nodes,
        "accelerator": acc.slug,
        "accelerator_name": acc.name,
        "accelerators_per_node": build.accelerators_per_node,
        "accelerator_count": spec.accelerator_count,
        "total_memory_gb": spec.total_memory_gb,
        "memory_pooled": spec.memory_pooled,
        "intra_node_link_kind": build.intra_node_link_kind,
        "inter_node_link_kind": build.inter_node_link_kind,
        "price_usd": build.price_usd,
        "power_w": build.power_w,
        "vendor": acc.vendor,
        "accelerator_memory_gb": acc.memory_gb,
        "pooled_memory_gb": pooled_memory_gb(spec),
        "intra_node_bandwidth_gbs": build.intra_node_bandwidth_gbs,
        "inter_node_bandwidth_gbps": build.inter_node_bandwidth_gbps,
        **parts,
        "host_memory_gb": build.host_memory_gb,
        "host_ram_bandwidth_gbs": build.host_ram_bandwidth_gbs,
    }
    read = build_document(build)
    read.update(
        tier=build.tier,
        version=build.version,
        accelerator_count=spec.accelerator_count,
        total_memory_gb=spec.total_memory_gb,
        memory_pooled=spec.memory_pooled,
        **parts,
    )
    cards = [g.accelerator for g in build.groups]
    search = " ".join(
        [build.slug, build.name, build.tier]
        + [word for a in cards for word in (a.slug, a.name, a.vendor)]
    )
    return BuildRow(
        slug=build.slug,
        list_item=BuildListItem.model_validate(item),
        record=BuildRead.model_validate(read),
        spec=spec,
        search_text=search.casefold(),
        accelerator_slug=acc.slug,
        accelerator_slugs=frozenset(a.slug for a in cards),
        vendor=acc.vendor,
        vendors=frozenset(a.vendor.casefold() for a in cards),
        version=build.version,
        failover=build.failover,
        scheduling=build.scheduling,
        price_source_url=build.price_source_url,
    )


def build_rows(snap: Snapshot) -> BuildRows:
    """Every build with its accelerator, loaded once per catalog version."""

    def load() -> BuildRows:
        stmt = select(Build).options(BUILD_LOAD).order_by(Build.slug)
        # A build without groups is one a concurrent delete is removing (see records.get_record).
        rows = tuple(_row(b) for b in snap.session.scalars(stmt) if b.groups)
        return BuildRows(rows=rows, by_slug={r.slug: r for r in rows})

    return snap.memo("build_rows", load)


def find_build(snap: Snapshot, slug: str, *, field: str = "slug") -> BuildRow:
    """One build row by slug, or NotFound naming `field`."""
    return find_row(build_rows(snap).by_slug, slug, noun="build", field=field)

