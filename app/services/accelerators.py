"""Accelerators: the catalog list (filters, sort, pages), CSV rows and the detail record.

Contract (callers: the JSON API and the HTML pages):
- `list_accelerators(session, *, query: AcceleratorQuery) -> ListResult[AcceleratorListItem]`.
- `matching_accelerators(session, *, query) -> list[AcceleratorListItem]`: every match, sorted,
  unpaged (CSV).
- `get_accelerator(session, *, slug) -> AcceleratorRead`, raising NotFound.
Cached per catalog version; the typed answers are built once per row and returned as they are.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.errors import FieldError, NotFound
from app.models import Accelerator
from app.pagination import ListResult, page_of
from app.schemas.accelerator import AcceleratorRead
from app.schemas.listing import AcceleratorListItem, AcceleratorQuery
from app.services.listing import contains, sort_rows
from app.services.records import accelerator_document

ITEM_FIELDS = tuple(AcceleratorListItem.model_fields)


@dataclass(frozen=True)
class AcceleratorRow:
    """One accelerator, ready to filter, sort and serialise (read-only).

    `item` and `read` are the plain values the engine specs and filters read; `list_item` and
    `record` are the same values as the API's typed answers, validated once per catalog version.
    """

    slug: str
    item: dict[str, Any]
    read: dict[str, Any]
    list_item: AcceleratorListItem
    record: AcceleratorRead
    search_text: str
    version: int


def _row(acc: Accelerator) -> AcceleratorRow:
    read = accelerator_document(acc)
    read["version"] = acc.version
    search = " ".join([acc.slug, acc.name, acc.vendor, acc.memory_type or ""])
    item = {f: getattr(acc, f) for f in ITEM_FIELDS}
    return AcceleratorRow(
        slug=acc.slug,
        item=item,
        read=read,
        list_item=AcceleratorListItem.model_validate(item),
        record=AcceleratorRead.model_validate(read),
        search_text=search.casefold(),
        version=acc.version,
    )


def accelerator_rows(snap: Snapshot) -> dict[str, AcceleratorRow]:
    """Every accelerator by slug (insertion order = slug order), once per catalog version."""

    def load() -> dict[str, AcceleratorRow]:
        stmt = select(Accelerator).order_by(Accelerator.slug)
        return {a.slug: _row(a) for a in snap.session.scalars(stmt)}

    return snap.memo("accelerator_rows", load)


def _sort_value(field: str) -> Any:
    if field in ("name", "slug", "vendor"):
        return lambda r: r.item[field].casefold()
    return lambda r: r.item[field]


def _matching(snap: Snapshot, query: AcceleratorQuery) -> list[AcceleratorRow]:
    def compute() -> list[AcceleratorRow]:
        vendor = query.vendor.strip().casefold() if query.vendor else None
        out = []
        for r in accelerator_rows(snap).values():
            item = r.item
            if vendor is not None and item["vendor"].casefold() != vendor:
                continue
            if query.memory_kind is not None and item["memory_kind"] != query.memory_kind:
                continue
            if query.min_memory_gb is not None and item["memory_gb"] < query.min_memory_gb:
                continue
            if query.max_price_usd is not None and (
                item["price_usd"] is None or item["price_usd"] > query.max_price_usd
            ):
                continue
            if not contains(r.search_text, query.q):
                continue
            out.append(r)
        field, descending = query.sort_key
        return sort_rows(out, _sort_value(field), descending=descending, tiebreak=lambda r: r.slug)

    key = ("accelerator_list", query.model_dump_json(exclude={"page", "per_page"}))
    return snap.memo(key, compute)


def list_accelerators(
    session: Session, *, query: AcceleratorQuery
) -> ListResult[AcceleratorListItem]:
    """One page of accelerators matching the query."""
    snap = snapshot(session)
    rows = _matching(snap, query)
    return page_of(rows, page=query.page, per_page=query.per_page, item=lambda r: r.list_item)


def matching_accelerators(
    session: Session, *, query: AcceleratorQuery
) -> list[AcceleratorListItem]:
    """Every accelerator matching the query's filters, sorted, without paging (CSV export)."""
    return [r.list_item for r in _matching(snapshot(session), query)]


def find_accelerator(snap: Snapshot, slug: str, *, field: str = "slug") -> AcceleratorRow:
    """One accelerator row by slug, or NotFound naming `field`."""
    row = accelerator_rows(snap).get(slug)
    if row is None:
        shown = slug.replace("\x00", "\\x00")[:100]
        raise NotFound(
            f"no accelerator with slug '{shown}'",
            errors=[FieldError(field, f"unknown accelerator '{shown}'")],
        )
    return row


def get_accelerator(session: Session, *, slug: str) -> AcceleratorRead:
    """The full accelerator record, or NotFound."""
    return find_accelerator(snapshot(session), slug).record
