"""Recommend at a service level (issue 17): the listed builds at their best operating point
under the SLO (`services.serving.rank_at_slo`), cheapest per million output tokens first — at
the operating point, or with `concurrent_users` at that load (copies sized for it, their idle
slots paid for) — and for each listed build that meets it at no concurrency, which limit stops it.

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


def _with_load_figures(item: dict[str, Any], users: int | None) -> dict[str, Any]:
    """A rank_at_slo item with the price of its copies and the cost per million output tokens
    at the load (None without one)."""
    price = item["build"]["price_usd"]
    copies = item["copies_needed"] or 1
    cost = item["usd_per_million_output_tokens"]
    at_load = None
    if users is not None and cost is not None:
        # The copies cost the same per hour however many slots are busy; with every user at the
        # operating point's speed the load yields users/slots of the output (an upper bound on
        # the cost: fewer requests in flight decode faster).
        at_load = cost * copies * item["concurrency"] / users
    return {
        **item,
        "price_usd_for_copies": price * copies if price is not None else None,
        "usd_per_million_output_tokens_at_load": at_load,
    }


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
    items = [_with_load_figures(item, query.concurrent_users) for item in ranked]
    if query.concurrent_users is not None:
        # A build sized far past the load idles most of its slots: rank by the cost the load
        # itself bears, not the cost at the build's full operating point.
        items.sort(
            key=lambda i: (
                i["usd_per_million_output_tokens_at_load"] is None,
                i["usd_per_million_output_tokens_at_load"] or 0.0,
                i["build"]["slug"],
            )
        )
    for rank, item in enumerate(items, start=1):
        item["rank"] = rank
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
