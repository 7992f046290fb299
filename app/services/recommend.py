""" "What should I buy for this model": the builds that fit, ranked, with the Pareto front.

Contract (callers: the JSON API and the /recommend page):
- `recommend(session, *, query: RecommendQuery, costs) -> dict` in the `RecommendOut` shape.
  Unknown model -> NotFound naming `model`. Items are the builds on which the model fits at the
  query's precision, context and batch, after `min_decode_tokens_per_s` / `max_price_usd`,
  ranked by `sort` (unknown values last, ties by slug). `pareto` marks the cost/speed front over
  the listed items: price_usd (lower is better) against decode_tokens_per_s per sequence (higher
  is better); builds without a price are never on it. `runtime` (None = per build from the
  inputs) and `parallelism` are the engine's; each item says which runtime ran and how to
  launch it.
- `figures(est) -> dict`: the `FiguresOut` part for any Estimate (shared by other services).
"""

from typing import Any

from sqlalchemy.orm import Session

from app.engine import CostAssumptions, Estimate
from app.schemas.recommend import RecommendQuery
from app.services.builds import build_rows
from app.services.cache import snapshot
from app.services.estimates import catalog_estimate, simple_workload, workload_out
from app.services.listing import sort_rows
from app.services.models import find_model

PARETO_AXES = ["price_usd (lower is better)", "decode_tokens_per_s (higher is better)"]


def figures(est: Estimate) -> dict[str, Any]:
    """The headline figures of an estimate (speed and cost null when it does not fit)."""
    t = est.throughput
    return {
        "fits": est.fits,
        "verdict": est.verdict,
        "decode_tokens_per_s": t.decode_tokens_per_s if t else None,
        "aggregate_decode_tokens_per_s": t.aggregate_decode_tokens_per_s if t else None,
        "time_to_first_token_s": t.time_to_first_token_s if t else None,
        "bottleneck": t.bottleneck if t else None,
        "usd_per_million_tokens": est.cost.usd_per_million_tokens if t else None,
        "memory_total_gb": est.memory.total_gb,
        "memory_per_accelerator_gb": est.memory.per_accelerator_gb,
        "rule_of_thumb_gb": est.memory.rule_of_thumb_gb,
        "plan": est.plan.description,
        "max_context_tokens_that_fit": est.max_context_tokens_that_fit,
        "runtime": est.runtime,
        "launch_command": est.plan.launch_command,
        "objective": est.plan.objective,
    }


def pareto_front(points: list[tuple[float | None, float | None]]) -> list[bool]:
    """For (price, speed) points: True where no other point is cheaper-or-equal and
    faster-or-equal with one strictly better. Points with an unknown value are never on it."""
    out = []
    for i, (price, speed) in enumerate(points):
        if price is None or speed is None:
            out.append(False)
            continue
        dominated = any(
            j != i
            and p is not None
            and s is not None
            and p <= price
            and s >= speed
            and (p < price or s > speed)
            for j, (p, s) in enumerate(points)
        )
        out.append(not dominated)
    return out


def recommend(session: Session, *, query: RecommendQuery, costs: CostAssumptions) -> dict[str, Any]:
    """The builds that run the model, ranked, with the cost/speed Pareto front marked."""
    snap = snapshot(session)
    model = find_model(snap, query.model, field="model")
    workload = simple_workload(
        precision=query.precision,
        context_tokens=query.context_tokens,
        batch=query.batch,
        runtime=query.runtime,
        parallelism=query.parallelism,
    )

    def compute() -> dict[str, Any]:
        rows = build_rows(snap).rows
        fitting = []
        for row in rows:
            est = catalog_estimate(snap, build=row, model=model, workload=workload, costs=costs)
            if est.fits:
                fitting.append((row, figures(est)))
        kept = [
            (row, f)
            for row, f in fitting
            if (
                query.min_decode_tokens_per_s is None
                or (f["decode_tokens_per_s"] or 0.0) >= query.min_decode_tokens_per_s
            )
            and (
                query.max_price_usd is None
                or (
                    row.item["price_usd"] is not None
                    and row.item["price_usd"] <= query.max_price_usd
                )
            )
        ]
        field = query.sort.lstrip("-")
        descending = query.sort.startswith("-")

        def value(pair: tuple[Any, dict[str, Any]]) -> Any:
            row, f = pair
            return row.item["price_usd"] if field == "price_usd" else f[field]

        ranked = sort_rows(kept, value, descending=descending, tiebreak=lambda p: p[0].slug)
        front = pareto_front([(r.item["price_usd"], f["decode_tokens_per_s"]) for r, f in ranked])
        items = [
            {"rank": i + 1, "build": row.item, **f, "pareto": on_front}
            for i, ((row, f), on_front) in enumerate(zip(ranked, front, strict=True))
        ]
        return {
            "model": {
                "slug": model.slug,
                "name": model.name,
                "params_total": model.params_total,
                "params_active": model.item["params_active"],
                "rule_of_thumb_gb": model.rule_of_thumb_gb(query.precision),
            },
            "workload": workload_out(workload),
            "sort": query.sort,
            "pareto_axes": PARETO_AXES,
            "items": items,
            "considered": len(rows),
            "fitting": len(fitting),
        }

    return snap.memo(("recommend", query.model_dump_json(), costs), compute)
