"""Builds: the catalog list (filters, sort, pages), CSV rows and the detail record.

Contract (callers: the JSON API and the HTML pages):
- `list_builds(session, *, query: BuildQuery) -> ListResult[BuildListItem]`: one page of build
  list items. `query.fits_model` keeps builds on which the engine
  says the model fits at `query.precision` / `query.context_tokens` (batch 1) with
  `query.runtime` (None = each build's default) and `query.parallelism`; an unknown
  `fits_model` raises NotFound naming the field.
- `matching_builds(session, *, query) -> list[BuildListItem]`: every matching item, sorted,
  unpaged (CSV).
- `get_build(session, *, slug) -> BuildRead`: the full record (what the admin PUT accepts
  back), raising NotFound.
- `build_parts(session, *, slug) -> list[BuildPart]`: one row per card group (the build page).
- `builds_fitting_model(snap, *, model_slug, ...)`: slugs of the builds on which a model fits
  (batch 1), memoised per catalog version; runtime None = each build's default.
The rows themselves (engine specs included) come from `app.services.build_rows`.
Everything derived is cached per catalog version (app.caching); the typed answers are built
once per row and returned as they are.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.engine import CostAssumptions
from app.engine.parts_text import short_card_name
from app.pagination import ListResult, page_of
from app.schemas.build import BuildListItem, BuildRead
from app.schemas.listing import BuildQuery
from app.services.build_rows import TIER_ORDER, BuildRow, build_rows, find_build
from app.services.engine_runs import catalog_estimate, simple_workload
from app.services.listing import contains, sort_rows
from app.services.model_profiles import find_model_profile


def _sort_value(field: str) -> Any:
    if field == "tier":
        # Within a tier, cheapest first and unpriced builds last (nulls last, as documented).
        return lambda r: (
            TIER_ORDER.get(r.list_item.tier, 99),
            r.list_item.price_usd is None,
            r.list_item.price_usd or 0.0,
        )
    if field in ("name", "slug"):
        return lambda r: getattr(r.list_item, field).casefold()
    return lambda r: getattr(r.list_item, field)


def _matching(snap: Snapshot, query: BuildQuery) -> list[BuildRow]:
    key = ("build_list", query.model_dump_json(exclude={"page", "per_page"}))
    return snap.memo(key, lambda: _filter_and_sort(snap, query))


def _filter_and_sort(snap: Snapshot, query: BuildQuery) -> list[BuildRow]:
    rows = list(build_rows(snap).rows)
    vendor = query.vendor.strip().casefold() if query.vendor else None
    fitting: frozenset[str] | None = None
    if query.fits_model is not None:
        fitting = builds_fitting_model(
            snap,
            model_slug=query.fits_model,
            precision=query.precision,
            context_tokens=query.context_tokens,
            field="fits_model",
            runtime=query.runtime,
            parallelism=query.parallelism,
        )
    out = []
    for r in rows:
        item = r.list_item
        if query.tier is not None and item.tier != query.tier:
            continue
        if vendor is not None and vendor not in r.vendors:
            continue
        if query.accelerator is not None and query.accelerator not in r.accelerator_slugs:
            continue
        if query.min_memory_gb is not None and item.total_memory_gb < query.min_memory_gb:
            continue
        if query.max_price_usd is not None and (
            item.price_usd is None or item.price_usd > query.max_price_usd
        ):
            continue
        if fitting is not None and r.slug not in fitting:
            continue
        if not contains(r.search_text, query.q):
            continue
        out.append(r)
    field, descending = query.sort_key
    return sort_rows(out, _sort_value(field), descending=descending, tiebreak=lambda r: r.slug)


def list_builds(session: Session, *, query: BuildQuery) -> ListResult[BuildListItem]:
    """One page of builds matching the query."""
    snap = snapshot(session)
    return list_builds_at(snap, query=query)


def list_builds_at(snap: Snapshot, *, query: BuildQuery) -> ListResult[BuildListItem]:
    """list_builds for an already-read snapshot."""
    rows = _matching(snap, query)
    return page_of(rows, page=query.page, per_page=query.per_page, item=lambda r: r.list_item)


def matching_builds(session: Session, *, query: BuildQuery) -> list[BuildListItem]:
    """Every build matching the query's filters, sorted, without paging (CSV export)."""
    return [r.list_item for r in _matching(snapshot(session), query)]


@dataclass(frozen=True)
class BuildPart:
    """One accelerator group of a build as the build page lists it."""

    count: int
    accelerator: str
    name: str
    memory_gb: float
    memory_bandwidth_gbs: float
    slot: str | None
    pcie_gbs: float | None


def pcie_slot_label(generation: int | None, lanes: int | None) -> str | None:
    """ "PCIe 4.0 x8", or None when the slot is not stated."""
    if generation is None or lanes is None:
        return None
    return f"PCIe {generation}.0 x{lanes}"


def build_parts(session: Session, *, slug: str) -> list[BuildPart]:
    """One row per accelerator group of a build: count per node, card, memory each, slot."""
    row = find_build(snapshot(session), slug)
    return [
        BuildPart(
            count=group.count,
            accelerator=group.accelerator,
            name=short_card_name(spec_group.accelerator.name),
            memory_gb=spec_group.accelerator.memory_gb,
            memory_bandwidth_gbs=spec_group.accelerator.memory_bandwidth_gbs,
            slot=pcie_slot_label(group.pcie_generation, group.pcie_lanes),
            pcie_gbs=spec_group.pcie_gbs,
        )
        for group, spec_group in zip(
            row.record.accelerators or [], row.spec.accelerator_groups, strict=True
        )
    ]


def get_build(session: Session, *, slug: str) -> BuildRead:
    """The full build record, or NotFound."""
    return find_build(snapshot(session), slug).record


def builds_fitting_model(
    snap: Snapshot,
    *,
    model_slug: str,
    precision: str,
    context_tokens: int,
    field: str = "model",
    runtime: str | None = None,
    parallelism: str = "auto",
) -> frozenset[str]:
    """Slugs of the catalog builds on which the model fits (batch 1), per catalog version."""
    model = find_model_profile(snap, model_slug, field=field)
    workload = simple_workload(
        precision=precision,
        context_tokens=context_tokens,
        runtime=runtime,
        parallelism=parallelism,
    )

    def compute() -> frozenset[str]:
        costs = CostAssumptions()  # fit does not depend on costs
        return frozenset(
            row.slug
            for row in build_rows(snap).rows
            if catalog_estimate(snap, build=row, model=model, workload=workload, costs=costs).fits
        )

    return snap.memo(("fitting", model.slug, workload), compute)
