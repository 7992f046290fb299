"""Filtering, sorting and paging of cached catalog rows (shared by the list services)."""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

R = TypeVar("R")


@dataclass(frozen=True)
class ListResult(Generic[R]):
    """One page of a list: its items (plain dicts in the list-item shape) and the paging."""

    items: list[R]
    total: int
    page: int
    per_page: int
    catalog_version: int

    @property
    def next_page(self) -> int | None:
        """The next page number, or None on the last page."""
        return self.page + 1 if self.page * self.per_page < self.total else None

    @property
    def pages(self) -> int:
        """Number of pages (at least 1)."""
        return max(1, -(-self.total // self.per_page))


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


def paginate(rows: Sequence[R], *, page: int, per_page: int) -> list[R]:
    """The rows of one 1-based page (empty past the end)."""
    start = (page - 1) * per_page
    return list(rows[start : start + per_page])


def page_of(
    rows: Sequence[Any], *, page: int, per_page: int, catalog_version: int
) -> ListResult[dict[str, Any]]:
    """One page of catalog rows (anything with an `.item` list dict), with the paging."""
    return ListResult(
        items=[r.item for r in paginate(rows, page=page, per_page=per_page)],
        total=len(rows),
        page=page,
        per_page=per_page,
        catalog_version=catalog_version,
    )


def contains(haystack: str, needle: str | None) -> bool:
    """Case-insensitive substring test; a missing needle matches everything."""
    return needle is None or needle.strip().casefold() in haystack
