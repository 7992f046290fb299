"""Filtering and sorting of cached catalog rows (shared by the list services; paging is
`app.pagination`)."""

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

R = TypeVar("R")


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


def contains(haystack: str, needle: str | None) -> bool:
    """Case-insensitive substring test; a missing needle matches everything."""
    return needle is None or needle.strip().casefold() in haystack
