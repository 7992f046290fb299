""""What should I buy for this model": the builds that fit, ranked, with the Pareto front."""

import math
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.caching import snapshot
from app.deps import SessionDep, SettingsDep
from app.errors import DomainError
from app.schemas.recommend import RecommendOut, RecommendQuery
from app.services.estimates import cost_assumptions
from app.services.recommend import recommend
from app.services.recommend_slo import miss_reason, slo_summary
from app.web.charts import SVG_HEADERS, CostSpeedPoint, cached_chart, cost_speed_svg
from app.web.common import Notice, notices_from, parse_query, raw_query, render
from app.web.form_choices import PARALLELISM, RUNTIME_OPTIONS
from app.web.pages import filter_options, precision_options
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)

SORTS = (
    ("price_usd", "Price, cheapest first"),
    ("usd_per_million_tokens", "Cost per million tokens, lowest first"),
    ("-decode_tokens_per_s", "Decode speed, fastest first"),
)


def _evaluate(
    request: Request, session: Any, settings: Any
) -> tuple[RecommendOut | None, RecommendQuery | None, dict[str, str], list[Notice], int]:
    raw = raw_query(request)
    if "model" not in raw:
        return None, None, raw, [], 200
    parsed = parse_query(RecommendQuery, raw)
    notices = list(parsed.notices)
    if any(n.field == "model" for n in notices):
        return None, None, raw, notices, 422
    try:
        answer = recommend(session, query=parsed.query, costs=cost_assumptions(settings))
    except DomainError as error:
        return None, None, raw, notices + (notices_from(error.errors) or [Notice(error.detail)]), \
            error.status_code
    return answer, parsed.query, raw, notices, 200


def _state(query: RecommendQuery | None) -> dict[str, Any]:
    if query is None:
        return {}
    fields = RecommendQuery.model_fields
    return {
        k: v for k, v in query.model_dump().items() if k == "model" or v != fields[k].default
    }


def _miss_links(answer: RecommendOut | None, state: dict[str, Any]) -> dict[str, str]:
    """Recommend URLs that relax one limit just enough to admit each nearest miss."""
    if answer is None:
        return {}
    misses = answer.nearest_misses
    links = {}
    if slow := misses.cheapest_too_slow:
        # Floor to one decimal so the miss itself passes the relaxed limit.
        limit = math.floor((slow.decode_tokens_per_s or 0.0) * 10) / 10
        links["too_slow"] = with_query("/recommend", {**state, "min_decode_tokens_per_s": limit})
    if pricey := misses.fastest_too_expensive:
        price = pricey.build.price_usd
        links["too_expensive"] = with_query("/recommend", {**state, "max_price_usd": price})
    if fit := misses.precision_that_fits:
        links["precision"] = with_query("/recommend", {**state, "precision": fit.precision})
    return links


@router.get("/recommend", response_class=HTMLResponse)
def recommend_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """The builds that run a model, ranked, with a cost-against-speed chart and Pareto front."""
    answer, query, raw, notices, status = _evaluate(request, session, settings)
    state = _state(query)
    on_front = [i for i in answer.items if i.pareto] if answer else []
    at_slo = answer.at_slo if answer else None
    return render(
        request,
        session,
        "recommend/page.html",
        {
            "answer": answer,
            "query": query,
            "raw": raw,
            "options": filter_options(session),
            "precisions": precision_options(),
            "runtimes": RUNTIME_OPTIONS,
            "parallelism": PARALLELISM,
            "sorts": SORTS,
            "on_front": on_front,
            "miss_links": _miss_links(answer, state),
            "slo_text": slo_summary(at_slo) if at_slo else None,
            "miss_reasons": [miss_reason(m, at_slo) for m in at_slo.missed] if at_slo else [],
            "chart_url": with_query("/recommend/chart.svg", state) if answer else None,
            "phone_chart_url": with_query("/recommend/chart.svg", {**state, "size": "phone"})
            if answer
            else None,
            "notices": notices,
        },
        json_url=with_query("/api/v1/recommend", state) if answer else "/api/v1/models",
        canonical=with_query("/recommend", state),
        status_code=status,
    )


@router.get("/recommend/chart.svg")
def recommend_chart(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """Price against decode speed for the recommended builds, Pareto front joined, as SVG;
    ?size=phone draws the narrow variant phones are given."""
    answer, query, _raw, _notices, status = _evaluate(request, session, settings)
    phone = request.query_params.get("size") == "phone"
    if answer is None or query is None:
        return Response("no recommendation for this query", media_type="text/plain",
                        status_code=status if status >= 400 else 422)

    def draw() -> str:
        points = [
            CostSpeedPoint(
                name=item.build.name,
                tier=item.build.tier,
                price_usd=item.build.price_usd or 0.0,
                decode_tokens_per_s=item.decode_tokens_per_s or 0.0,
                pareto=item.pareto,
            )
            for item in answer.items
        ]
        return cost_speed_svg(points, phone=phone)

    svg = cached_chart(snapshot(session), ("recommend", query.model_dump_json(), phone), draw)
    return Response(svg, media_type="image/svg+xml", headers=SVG_HEADERS)
