"""Paging, in one place: one page of a sequence, its numbers, and its RFC 8288 links.

Used by the catalog list services (`page_of`) and the JSON list routes (`page_links`); the admin
audit log pages the same way.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from starlette.datastructures import URL

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class ListResult(Generic[T]):
    """One page of a list: its items and the paging."""

    items: list[T]
    total: int
    page: int
    per_page: int

    @property
    def next_page(self) -> int | None:
        """The next page number, or None on the last page."""
        return self.page + 1 if self.page * self.per_page < self.total else None

    @property
    def pages(self) -> int:
        """Number of pages (at least 1)."""
        return max(1, -(-self.total // self.per_page))


def page_of(
    rows: Sequence[R], *, page: int, per_page: int, item: Callable[[R], T]
) -> ListResult[T]:
    """The 1-based `page` of `rows` (empty past the end), each row shown as `item(row)`."""
    start = (page - 1) * per_page
    return ListResult(
        items=[item(r) for r in rows[start : start + per_page]],
        total=len(rows),
        page=page,
        per_page=per_page,
    )


def page_links(url: "URL", result: ListResult[Any]) -> tuple[str | None, str]:
    """The next page's URL (None on the last page) and the `Link` header (next, prev, first)."""
    next_url = None
    links = []
    if result.next_page is not None:
        next_url = str(url.include_query_params(page=result.next_page))
        links.append(f'<{next_url}>; rel="next"')
    if result.page > 1:
        prev_page = min(result.page - 1, result.pages)
        links.append(f'<{url.include_query_params(page=prev_page)}>; rel="prev"')
    links.append(f'<{url.include_query_params(page=1)}>; rel="first"')
    return next_url, ", ".join(links)
