"""Recommend at a service level (issue 17): the listed builds ranked at their best operating
point under the SLO (`services.serving.rank_at_slo`, cheapest per million output tokens first),
and for each listed build that meets it at no concurrency, which limit stops it.

Contract (caller: `services.recommend.recommend` when `query.has_slo`):
- `recommend_at_slo(snap, *, query, model, workload, rows, costs) -> dict` in the
  `RecommendAtSlo` shape; `rows` are the builds recommend lists (its other limits applied).
"""

from collections.abc import Sequence
from typing import Any

from app.caching import Snapshot
from app.engine import CostAssumptions, Workload
from app.engine.serving import ServiceLevel, ServingPoint
from app.schemas.recommend import RecommendQuery
from app.schemas.serving import ServingIn
from app.services.build_rows import BuildRow
from app.services.model_profiles import ModelProfileRow
from app.services.serving import rank_at_slo, run_curve, serving_inputs
from app.services.serving_answers import point_out


def service_level(query: RecommendQuery) -> ServiceLevel:
    """The query's latency limits and load as the engine's service level."""
    return ServiceLevel(
        ttft_s_max=query.ttft_s_max,
        itl_ms_max=query.itl_ms_max,
        tokens_per_s_per_user_min=query.tokens_per_s_per_user_min,
        concurrent_users=query.concurrent_users,
    )


def limits_missed(point: ServingPoint, slo: ServiceLevel) -> list[str]:
    """The limits a point misses; every limit set when it misses none of them alone."""
    limits = {
        "ttft_s_max": slo.ttft_s_max is not None and point.ttft_s > slo.ttft_s_max,
        "itl_ms_max": slo.itl_ms_max is not None and point.itl_ms > slo.itl_ms_max,
        "tokens_per_s_per_user_min": slo.tokens_per_s_per_user_min is not None
        and point.tokens_per_s_per_user < slo.tokens_per_s_per_user_min,
    }
    missed = [name for name, miss in limits.items() if miss]
    if missed:
        return missed
    given = {
        "ttft_s_max": slo.ttft_s_max,
        "itl_ms_max": slo.itl_ms_max,
        "tokens_per_s_per_user_min": slo.tokens_per_s_per_user_min,
    }
    return [name for name, value in given.items() if value is not None]


def recommend_at_slo(
    snap: Snapshot,
    *,
    query: RecommendQuery,
    model: ModelProfileRow,
    workload: Workload,
    rows: Sequence[BuildRow],
    costs: CostAssumptions,
) -> dict[str, Any]:
    """The listed builds ranked at the SLO, and the listed builds that cannot meet it."""
    serving, _ = serving_inputs(ServingIn(), workload, None)
    slo = service_level(query)
    listed = {row.slug for row in rows}
    ranked = [
        item
        for item in rank_at_slo(
            snap, model=model.spec, workload=workload, serving=serving, slo=slo, costs=costs
        )
        if item["build"]["slug"] in listed
    ]
    met = {item["build"]["slug"] for item in ranked}
    missed = []
    for row in rows:
        if row.slug in met:
            continue
        # The build alone with one request: the lowest latency it reaches.
        curve = run_curve(row.spec, model.spec, workload, serving, ServiceLevel(), costs)
        one = curve.curve[0] if curve.curve else None
        missed.append(
            {
                "build": row.item,
                "limits": limits_missed(one, slo) if one else [],
                "one_request": point_out(one) if one else None,
            }
        )
    items = []
    for rank, item in enumerate(ranked, start=1):
        price = item["build"]["price_usd"]
        copies = item["copies_needed"] or 1
        items.append(
            {
                **item,
                "rank": rank,
                "price_usd_for_copies": price * copies if price is not None else None,
            }
        )
    return {
        "ttft_s_max": query.ttft_s_max,
        "itl_ms_max": query.itl_ms_max,
        "tokens_per_s_per_user_min": query.tokens_per_s_per_user_min,
        "concurrent_users": query.concurrent_users,
        "input_tokens": serving.input_tokens,
        "output_tokens": serving.output_tokens,
        "items": items,
        "missed": missed,
    }
