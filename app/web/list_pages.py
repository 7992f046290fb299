"""Catalog list pages (models, measurements): one way to read the query, list the rows and render
the shared list template with its JSON twin, CSV link and canonical URL."""

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.pagination import ListResult
from app.schemas.listing import ListQuery
from app.web.common import parse_query, raw_query, render
from app.web.urls import with_query

Q = TypeVar("Q", bound=ListQuery)


def list_state(query: ListQuery, **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state every link of a list keeps (filters, sort, `extra`, a page size other than the
    default) and the same with the page (None on page 1), for the JSON twin and canonical URL."""
    state: dict[str, Any] = {**query.filters(), "sort": query.sort, **extra}
    if query.per_page != type(query).model_fields["per_page"].default:
        state["per_page"] = query.per_page
    paged = {**state, "page": query.page if query.page > 1 else None}
    return state, paged


def render_list_page(
    request: Request,
    session: Session,
    *,
    schema: type[Q],
    list_rows: Callable[[Session, Q], ListResult[Any]],
    template: str,
    path: str,
    api_path: str,
    context: Mapping[str, Any],
) -> HTMLResponse:
    """Parse the page's query with the API's model (bad fields become notices), list one page with
    the service the JSON twin calls and render `template` with `context` added."""
    raw = raw_query(request)
    parsed = parse_query(schema, raw)
    query = parsed.query
    result = list_rows(session, query)
    state, paged = list_state(query)
    return render(
        request,
        session,
        template,
        {
            "result": result,
            "query": query,
            "raw": raw,
            "state": state,
            "sort": query.sort or schema.DEFAULT_SORT,
            **context,
            "csv_url": with_query(f"{api_path}.csv", state),
            "notices": parsed.notices,
        },
        json_url=with_query(api_path, paged),
        canonical=with_query(path, paged),
    )
