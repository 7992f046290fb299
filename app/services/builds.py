"""Builds: the catalog list (filters, sort, pages), CSV rows and the detail record.

Contract (callers: the JSON API and the HTML pages):
- `list_builds(session, *, query: BuildQuery) -> ListResult[dict]`: one page of build list items
  (the `BuildListItem` shape, plain dicts). `query.fits_model` keeps builds on which the engine
  says the model fits at `query.precision` / `query.context_tokens` (batch 1); an unknown
  `fits_model` raises NotFound naming the field.
- `matching_builds(session, *, query) -> list[dict]`: every matching item, sorted, unpaged (CSV).
- `get_build(session, *, slug) -> dict`: the full record in the `BuildRead` shape (what the
  admin PUT accepts back), raising NotFound.
- `build_rows(snap) -> BuildRows`: the cached rows (engine specs included) other services use.
Everything derived is cached per catalog version (app.services.cache).
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.engine import BuildSpec
from app.errors import FieldError, NotFound
from app.models import TIERS, Build
from app.schemas.listing import BuildQuery
from app.services.cache import Snapshot, snapshot
from app.services.listing import ListResult, contains, page_of, sort_rows
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
    """One build, ready to filter, sort, serialise and hand to the engine (read-only)."""

    slug: str
    item: dict[str, Any]
    read: dict[str, Any]
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


# Brand words a card's catalog name starts with that a "2× RTX 3090" label leaves out.
_LABEL_PREFIXES = ("NVIDIA ", "GeForce ", "AMD ")


def short_card_name(name: str) -> str:
    """A card's name without its brand words: "NVIDIA GeForce RTX 3090" -> "RTX 3090"."""
    for prefix in _LABEL_PREFIXES:
        name = name.removeprefix(prefix)
    return name


def accelerators_label(spec: BuildSpec) -> str:
    """The cards of one node in words: "2× RTX 3090 + 1× RTX 4090" (same cards counted once)."""
    counts: dict[str, int] = {}
    for group in spec.accelerator_groups:
        name = short_card_name(group.accelerator.name)
        counts[name] = counts.get(name, 0) + group.count_per_node
    return " + ".join(f"{count}× {name}" for name, count in counts.items())


def mixed_build_fields(spec: BuildSpec) -> dict[str, Any]:
    """What a mixed or host-offloading build adds to its list item and record."""
    return {
        "accelerators_label": accelerators_label(spec),
        "mixed": spec.is_mixed,
        "min_accelerator_memory_gb": min(
            g.accelerator.memory_gb for g in spec.accelerator_groups
        ),
        "slowest_pcie_gbs": spec.slowest_pcie_gbs,
    }


def _row(build: Build) -> BuildRow:
    spec = build_spec(build)
    acc = build.accelerator
    parts = mixed_build_fields(spec)
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
        item=item,
        read=read,
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
    row = build_rows(snap).by_slug.get(slug)
    if row is None:
        raise NotFound(
            f"no build with slug '{_printable(slug)}'",
            errors=[FieldError(field, f"unknown build '{_printable(slug)}'")],
        )
    return row


def _printable(value: str) -> str:
    # Keep error messages readable (and single-line) whatever was sent.
    return value.replace("\x00", "\\x00")[:100]


def _sort_value(field: str) -> Any:
    if field == "tier":
        # Within a tier, cheapest first and unpriced builds last (nulls last, as documented).
        return lambda r: (
            TIER_ORDER.get(r.item["tier"], 99),
            r.item["price_usd"] is None,
            r.item["price_usd"] or 0.0,
        )
    if field in ("name", "slug"):
        return lambda r: r.item[field].casefold()
    return lambda r: r.item[field]


def _matching(snap: Snapshot, query: BuildQuery) -> list[BuildRow]:
    key = ("build_list", query.model_dump_json(exclude={"page", "per_page"}))
    return snap.memo(key, lambda: _filter_and_sort(snap, query))


def _filter_and_sort(snap: Snapshot, query: BuildQuery) -> list[BuildRow]:
    rows = list(build_rows(snap).rows)
    vendor = query.vendor.strip().casefold() if query.vendor else None
    fitting: frozenset[str] | None = None
    if query.fits_model is not None:
        from app.services.estimates import builds_fitting_model

        fitting = builds_fitting_model(
            snap,
            model_slug=query.fits_model,
            precision=query.precision,
            context_tokens=query.context_tokens,
            field="fits_model",
        )
    out = []
    for r in rows:
        item = r.item
        if query.tier is not None and item["tier"] != query.tier:
            continue
        if vendor is not None and vendor not in r.vendors:
            continue
        if query.accelerator is not None and query.accelerator not in r.accelerator_slugs:
            continue
        if query.min_memory_gb is not None and item["total_memory_gb"] < query.min_memory_gb:
            continue
        if query.max_price_usd is not None and (
            item["price_usd"] is None or item["price_usd"] > query.max_price_usd
        ):
            continue
        if fitting is not None and r.slug not in fitting:
            continue
        if not contains(r.search_text, query.q):
            continue
        out.append(r)
    field, descending = query.sort_key
    return sort_rows(out, _sort_value(field), descending=descending, tiebreak=lambda r: r.slug)


def list_builds(session: Session, *, query: BuildQuery) -> ListResult[dict[str, Any]]:
    """One page of builds matching the query."""
    snap = snapshot(session)
    return list_builds_at(snap, query=query)


def list_builds_at(snap: Snapshot, *, query: BuildQuery) -> ListResult[dict[str, Any]]:
    """list_builds for an already-read snapshot."""
    rows = _matching(snap, query)
    return page_of(rows, page=query.page, per_page=query.per_page, catalog_version=snap.version)


def matching_builds(session: Session, *, query: BuildQuery) -> list[dict[str, Any]]:
    """Every build matching the query's filters, sorted, without paging (CSV export)."""
    return [r.item for r in _matching(snapshot(session), query)]


def pcie_slot_label(generation: int | None, lanes: int | None) -> str | None:
    """ "PCIe 4.0 x8", or None when the slot is not stated."""
    if generation is None or lanes is None:
        return None
    return f"PCIe {generation}.0 x{lanes}"


def build_parts(session: Session, *, slug: str) -> list[dict[str, Any]]:
    """One row per accelerator group of a build: count per node, card, memory each, slot."""
    row = find_build(snapshot(session), slug)
    groups = row.read["accelerators"]
    return [
        {
            "count": doc["count"],
            "accelerator": doc["accelerator"],
            "name": short_card_name(spec_group.accelerator.name),
            "memory_gb": spec_group.accelerator.memory_gb,
            "memory_bandwidth_gbs": spec_group.accelerator.memory_bandwidth_gbs,
            "slot": pcie_slot_label(doc["pcie_generation"], doc["pcie_lanes"]),
            "pcie_gbs": spec_group.pcie_gbs,
        }
        for doc, spec_group in zip(groups, row.spec.accelerator_groups, strict=True)
    ]


def get_build(session: Session, *, slug: str) -> dict[str, Any]:
    """The full build record (BuildRead shape), or NotFound."""
    return find_build(snapshot(session), slug).read
