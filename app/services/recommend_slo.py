"""Recommend at a service level (issue 17): the listed builds at their best operating point
under the SLO (`services.serving.rank_at_slo`), cheapest per million output tokens first — at
the operating point, or with `concurrent_users` at that load (copies sized for it, their idle
slots paid for) — and for each listed build that meets it at no concurrency, which limit stops it.

Contract (caller: `services.recommend.recommend` when `query.has_slo`):
- `recommend_at_slo(snap, *, query, model, workload, rows, costs) -> RecommendAtSlo`; `rows`
  are the builds recommend lists (its other limits applied).
- `slo_summary(at_slo)`, `miss_reason(miss, at_slo)`: that answer in words (page and CLI).
"""

from collections.abc import Sequence

from app.caching import Snapshot
from app.engine import CostAssumptions, Workload
from app.engine.serving import ServiceLevel, ServingPoint
from app.formatting import int_commas, number, seconds
from app.schemas.recommend import RecommendAtSlo, RecommendQuery, SloMiss, SloRankItem
from app.schemas.serving import ServingIn, ServingPointOut
from app.services.build_rows import BuildRow
from app.services.model_profiles import ModelProfileRow
from app.services.serving import SloRanked, rank_at_slo, run_curve, serving_inputs
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


def _load_figures(item: SloRanked, users: int | None) -> tuple[float | None, float | None]:
    """A ranked build's price for its copies, and the cost per million output tokens at the
    load (None without one)."""
    price = item.build.price_usd
    copies = item.at.copies_needed or 1
    cost = item.at.point.usd_per_million_output_tokens
    at_load = None
    if users is not None and cost is not None:
        # The copies cost the same per hour however many slots are busy; with every user at the
        # operating point's speed the load yields users/slots of the output (an upper bound on
        # the cost: fewer requests in flight decode faster).
        at_load = cost * copies * item.at.point.concurrency / users
    return (price * copies if price is not None else None), at_load


def recommend_at_slo(
    snap: Snapshot,
    *,
    query: RecommendQuery,
    model: ModelProfileRow,
    workload: Workload,
    rows: Sequence[BuildRow],
    costs: CostAssumptions,
) -> RecommendAtSlo:
    """The listed builds ranked at the SLO, and the listed builds that cannot meet it."""
    serving, _ = serving_inputs(ServingIn(), workload, None)
    slo = service_level(query)
    listed = {row.slug for row in rows}
    ranked = [
        item
        for item in rank_at_slo(
            snap, model=model.spec, workload=workload, serving=serving, slo=slo, costs=costs
        )
        if item.build.slug in listed
    ]
    met = {item.build.slug for item in ranked}
    missed = []
    for row in rows:
        if row.slug in met:
            continue
        # The build alone with one request: the lowest latency it reaches.
        curve = run_curve(row.spec, model.spec, workload, serving, ServiceLevel(), costs)
        one = curve.curve[0] if curve.curve else None
        missed.append(
            SloMiss.model_construct(
                build=row.list_item,
                limits=limits_missed(one, slo) if one else [],
                one_request=point_out(one) if one else None,
            )
        )
    figures = [(item, *_load_figures(item, query.concurrent_users)) for item in ranked]
    if query.concurrent_users is not None:
        # A build sized far past the load idles most of its slots: rank by the cost the load
        # itself bears, not the cost at the build's full operating point.
        figures.sort(key=lambda f: (f[2] is None, f[2] or 0.0, f[0].build.slug))
    items = [
        SloRankItem.model_construct(
            **dict(point_out(item.at.point)),
            rank=rank,
            build=item.build,
            plan=item.plan,
            copies_needed=item.at.copies_needed,
            accelerators_needed=item.at.accelerators_needed,
            price_usd_for_copies=price,
            usd_per_million_output_tokens_at_load=at_load,
        )
        for rank, (item, price, at_load) in enumerate(figures, start=1)
    ]
    return RecommendAtSlo.model_construct(
        ttft_s_max=query.ttft_s_max,
        itl_ms_max=query.itl_ms_max,
        tokens_per_s_per_user_min=query.tokens_per_s_per_user_min,
        concurrent_users=query.concurrent_users,
        input_tokens=serving.input_tokens,
        output_tokens=serving.output_tokens,
        items=items,
        missed=missed,
    )


# ---- in words (the /recommend page and `tierline recommend`) ---------------------------


def _limit_texts(at_slo: RecommendAtSlo) -> dict[str, str]:
    """Each latency limit given, in words, by its query parameter."""
    texts = {}
    if at_slo.ttft_s_max is not None:
        texts["ttft_s_max"] = f"time to first token ≤ {seconds(at_slo.ttft_s_max)}"
    if at_slo.itl_ms_max is not None:
        texts["itl_ms_max"] = f"inter-token latency ≤ {number(at_slo.itl_ms_max)} ms"
    if at_slo.tokens_per_s_per_user_min is not None:
        texts["tokens_per_s_per_user_min"] = (
            f"≥ {number(at_slo.tokens_per_s_per_user_min)} tokens/s per user"
        )
    return texts


def slo_summary(at_slo: RecommendAtSlo) -> str:
    """The service level asked: "time to first token ≤ 2 s, ≥ 20 tokens/s per user, for 50
    concurrent users"."""
    parts = list(_limit_texts(at_slo).values())
    text = ", ".join(parts) if parts else "no latency limit"
    if at_slo.concurrent_users is not None:
        text += f", for {int_commas(at_slo.concurrent_users)} concurrent users"
    return text


def _measured(name: str, point: ServingPointOut) -> str:
    if name == "ttft_s_max":
        return f"its first token takes {seconds(point.ttft_s)}"
    if name == "itl_ms_max":
        return f"each token takes {number(point.itl_ms)} ms"
    return f"it generates {number(point.tokens_per_s_per_user)} tokens/s"


def miss_reason(miss: SloMiss, at_slo: RecommendAtSlo) -> str:
    """Why a build meets the service level at no concurrency, naming the limit."""
    point = miss.one_request
    if point is None:
        return (
            "holds no request of these lengths in accelerator memory (the engine draws no "
            "serving curve for a model partly in host RAM)"
        )
    texts = _limit_texts(at_slo)
    limits = miss.limits
    missed = " and ".join(texts[name] for name in limits)
    alone = [name for name in limits if not _met(name, point, at_slo)]
    if not alone:
        return f"meets each limit alone but not {missed} together"
    evidence = "; ".join(_measured(name, point) for name in alone)
    return f"misses {missed}: even with one request, {evidence}"


def _met(name: str, point: ServingPointOut, at_slo: RecommendAtSlo) -> bool:
    # Only called for a limit named in the miss, so that limit is set.
    if name == "ttft_s_max":
        return at_slo.ttft_s_max is not None and point.ttft_s <= at_slo.ttft_s_max
    if name == "itl_ms_max":
        return at_slo.itl_ms_max is not None and point.itl_ms <= at_slo.itl_ms_max
    limit = at_slo.tokens_per_s_per_user_min
    return limit is not None and point.tokens_per_s_per_user >= limit
