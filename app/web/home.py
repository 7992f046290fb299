"""The home page: the tier line from desktop to DGX to cluster, with its story in numbers."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.api._common import catalog_session, settings_of
from app.caching import snapshot
from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.formatting import gb
from app.schemas.tiers import TiersQuery
from app.services.tiers import tier_line
from app.web.charts import SVG_HEADERS, TierPoint, cached_chart, tier_line_svg
from app.web.common import cached_page, parse_query, raw_query, render
from app.web.pages import precision_options, tier_story
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)


def _non_default(query: TiersQuery) -> dict[str, object]:
    fields = TiersQuery.model_fields
    return {
        k: v for k, v in query.model_dump().items() if v != fields[k].default
    }


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> Response:
    """The tier line: every catalog build placed on it, the chart and the story in numbers."""
    # The session and settings are not dependencies: a generator dependency costs two more
    # thread-pool hops per request, most of a cached page's time under load.
    with catalog_session(request) as session:
        return cached_page(
            request, session, lambda: _home_page(request, session, settings_of(request))
        )


def _home_page(request: Request, session: Session, settings: Settings) -> HTMLResponse:
    parsed = parse_query(TiersQuery, raw_query(request))
    query = parsed.query
    line = tier_line(session, precision=query.precision, context_tokens=query.context_tokens)
    story = tier_story(session, settings=settings)
    state = _non_default(query)
    return render(
        request,
        session,
        "tiers/home.html",
        {
            "line": line,
            "story": story,
            "query": query,
            "precisions": precision_options(),
            "chart_url": with_query("/tierline.svg", state),
            "phone_chart_url": with_query("/tierline.svg", {**state, "size": "phone"}),
            "notices": parsed.notices,
        },
        json_url=with_query("/api/v1/tiers", state),
        canonical=with_query("/", state),
    )


@router.get("/tierline.svg")
def tier_line_chart(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The tier-line chart (memory against price, log scales) as SVG, cached per catalog
    version and precision; ?size=phone draws the narrow variant phones are given."""
    query = parse_query(TiersQuery, raw_query(request)).query
    phone = request.query_params.get("size") == "phone"
    line = tier_line(session, precision=query.precision, context_tokens=query.context_tokens)
    story = tier_story(session, settings=settings)

    def draw() -> str:
        points = [
            TierPoint(
                name=b.name,
                tier=group.tier,
                price_usd=b.price_usd or 0.0,
                memory_gb=b.total_memory_gb,
                largest_model=b.largest_model.name if b.largest_model else None,
                largest_model_gb=b.largest_model.rule_of_thumb_gb if b.largest_model else None,
                largest_model_offloaded=bool(b.largest_model and b.largest_model.offloaded),
            )
            for group in line.tiers
            for b in group.builds
        ]
        need = story.model["rule_of_thumb_gb"] if story else None
        label = (
            f"{story.model['name']} at {story.model['precision'].upper()} needs ~{gb(need)}"
            if story
            else None
        )
        return tier_line_svg(points, story_need_gb=need, story_label=label, phone=phone)

    key = ("tierline", query.model_dump_json(), phone)
    svg = cached_chart(snapshot(session), key, draw)
    return Response(svg, media_type="image/svg+xml",
                    headers=SVG_HEADERS)


@router.get("/calculator")
def calculator_alias(request: Request) -> RedirectResponse:
    """People type /calculator (the navigation calls it that): send them to /estimate, query
    kept, with a permanent redirect."""
    query = request.url.query
    return RedirectResponse(f"/estimate?{query}" if query else "/estimate", status_code=308)
