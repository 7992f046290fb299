"""Links between pages: query strings that echo what a person typed, and canonical URLs."""

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

from fastapi import Request


def query_string(params: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> str:
    """A query string from params, dropping empty values; "" when nothing is left."""
    items = params.items() if isinstance(params, Mapping) else params
    pairs = [(k, _plain(v)) for k, v in items if v is not None and v != ""]
    return urlencode(pairs, doseq=True)


def _plain(value: Any) -> Any:
    # 2000000.0 -> 2000000: the links echo what a person typed, not Python's float repr.
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def with_query(path: str, params: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> str:
    """`path?query` (or just the path when the query is empty)."""
    query = query_string(params)
    return f"{path}?{query}" if query else path


def query_url(path: str, params: dict[str, Any] | None = None, **changes: Any) -> str:
    """`path` with `params` updated by `changes` (None drops a key) as a query string."""
    merged: dict[str, Any] = dict(params or {})
    merged.update(changes)
    return with_query(path, merged)


def absolute(request: Request, path: str) -> str:
    """An absolute URL for a site path (used for rel=canonical)."""
    return str(request.base_url).rstrip("/") + path
