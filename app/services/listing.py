"""The shared shape of the catalog list services: cached rows by slug, a memoised filtered and
sorted list per query, pages of it and one row by slug (paging itself is `app.pagination`).

A resource's row is a frozen dataclass with at least `slug` and `list_item` (the typed list
answer, whose attributes the filters and sort read); see `services/accelerators.py`.
`build_rows.py` and `builds.py` can use the same helpers: `rows_by_slug` with a row function
that returns None for a build without groups, `find_row(..., noun="build")`, `sorted_rows` with
`values={"tier": ...}`, and `list_memo` / `page_rows` over `_filter_and_sort`.
"""

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import Select

from app.caching import Snapshot
from app.errors import FieldError, NotFound
from app.pagination import ListResult, page_of
from app.schemas.listing import ListQuery

R = TypeVar("R")
RecordT = TypeVar("RecordT")
T_co = TypeVar("T_co", covariant=True)


class SluggedRow(Protocol):
    """What `rows_by_slug` reads of a row."""

    @property
    def slug(self) -> str: ...


class ListedRow(SluggedRow, Protocol):
    """What `sorted_rows` reads of a row: its typed list item's attributes."""

    @property
    def list_item(self) -> Any: ...


class PagedRow(Protocol[T_co]):
    """What `page_rows` reads of a row: its typed list item."""

    @property
    def list_item(self) -> T_co: ...


RowT = TypeVar("RowT", bound=ListedRow)
SlugT = TypeVar("SlugT", bound=SluggedRow)
ItemT = TypeVar("ItemT")


def sort_rows(
    rows: Iterable[R], value: Callable[[R], Any], *, descending: bool, tiebreak: Callable[[R], Any]
) -> list[R]:
    """Sort by value (nulls last in both directions), then by tiebreak ascending."""
    ordered = sorted(rows, key=tiebreak)
    present = [r for r in ordered if value(r) is not None]
    missing = [r for r in ordered if value(r) is None]
    # Python's sort is stable even with reverse=True, so ties keep the tiebreak order.
    present.sort(key=value, reverse=descending)
    return present + missing


def sorted_rows(
    rows: Iterable[RowT],
    sort_key: tuple[str, bool],
    *,
    text_fields: Collection[str] = (),
    values: Mapping[str, Callable[[RowT], Any]] | None = None,
) -> list[RowT]:
    """Rows sorted by one `list_item` field (`sort_key` = (field, descending), as `XQuery.sort_key`
    gives it), then by slug. Text fields sort case-insensitively; `values` gives fields that
    sort by something other than their list-item value (a build's tier order)."""
    field, descending = sort_key
    value = (values or {}).get(field)
    if value is None:
        if field in text_fields:
            value = lambda r: str(getattr(r.list_item, field)).casefold()  # noqa: E731
        else:
            value = lambda r: getattr(r.list_item, field)  # noqa: E731
    return sort_rows(rows, value, descending=descending, tiebreak=lambda r: r.slug)


def rows_by_slug(
    snap: Snapshot,
    key: str,
    stmt: Callable[[], Select[RecordT]],
    row: Callable[[RecordT], SlugT | None],
) -> dict[str, SlugT]:
    """The row memo: `row(record)` for every record `stmt()` selects (in its order, None left
    out), by slug, computed once per catalog version under `key`. `stmt` is called only on a
    miss: building a statement costs more than the memo lookup it would precede."""

    def load() -> dict[str, SlugT]:
        made = (row(record) for record in snap.session.scalars(stmt()))
        return {r.slug: r for r in made if r is not None}

    return snap.memo(key, load)


def find_row(rows: Mapping[str, R], slug: str, *, noun: str, field: str = "slug") -> R:
    """One row by slug, or NotFound naming `field` ("no build with slug 'x'")."""
    row = rows.get(slug)
    if row is None:
        # Keep the message readable (and on one line) whatever was sent.
        shown = slug.replace("\x00", "\\x00")[:100]
        hint = _did_you_mean(slug, rows)
        raise NotFound(
            f"no {noun} with slug '{shown}'{hint}",
            errors=[FieldError(field, f"unknown {noun} '{shown}'{hint}")],
        )
    return row


def _did_you_mean(slug: str, slugs: Iterable[str]) -> str:
    """'; did you mean ...?' naming up to three catalog slugs like `slug` (the ones that
    contain it first: '2x-dgx-h200' is the start of '2x-dgx-h200-cluster'), or ''."""
    wanted = slug.strip().lower()[:100]
    if len(wanted) < 3:
        return ""
    known = sorted(slugs)
    near = [s for s in known if wanted in s]
    near += [s for s in difflib.get_close_matches(wanted, known, n=3, cutoff=0.75) if s not in near]
    if not near:
        return ""
    return "; did you mean " + ", ".join(f"'{s}'" for s in near[:3]) + "?"


def list_memo(snap: Snapshot, name: str, query: ListQuery, compute: Callable[[], R]) -> R:
    """The list memo: `compute()` once per catalog version and query; every page shares it."""
    return snap.memo((name, query.model_dump_json(exclude={"page", "per_page"})), compute)


def page_rows(rows: Sequence[PagedRow[ItemT]], query: ListQuery) -> ListResult[ItemT]:
    """The query's page of `rows`, each as its typed list item."""
    return page_of(rows, page=query.page, per_page=query.per_page, item=lambda r: r.list_item)


def contains(haystack: str, needle: str | None) -> bool:
    """Case-insensitive substring test; a missing needle matches everything."""
    return needle is None or needle.strip().casefold() in haystack
