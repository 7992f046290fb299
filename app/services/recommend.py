""" "What should I buy for this model": the builds that fit, ranked, with the Pareto front.

Contract (callers: the JSON API and the /recommend page):
- `recommend(session, *, query: RecommendQuery, costs) -> RecommendOut`.
  Unknown model -> NotFound naming `model`. Items are the builds on which the model fits at the
  query's precision, context and batch, after `min_decode_tokens_per_s` / `max_price_usd`,
  ranked by `sort` (unknown values last, ties by slug). `pareto` marks the cost/speed front over
  the listed items: price_usd (lower is better) against decode_tokens_per_s per sequence (higher
  is better); builds without a price are never on it. `runtime` (None = per build from the
  inputs) and `parallelism` are the engine's; each item says which runtime ran and how to
  launch it.
  `excluded` counts why the other considered builds are not listed (a build over both limits
  counts under each); `nearest_misses` names, from those, the cheapest build held back only by
  the speed limit, the fastest held back only by the price limit, and the highest precision below
  the query's at which more builds would pass (tried only when fewer than `SHORT_ANSWER` pass,
  so a full answer costs no extra engine runs).
  With any SLO parameter (`query.has_slo`), `at_slo` ranks the listed builds at their best
  operating point under the limits (`services.recommend_slo`); otherwise it is None.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.engine import PRECISIONS, CostAssumptions, Workload
from app.errors import DomainError
from app.schemas.recommend import (
    SHORT_ANSWER,
    FiguresOut,
    NearestMisses,
    PrecisionThatFits,
    RecommendExcluded,
    RecommendItem,
    RecommendMiss,
    RecommendModel,
    RecommendOut,
    RecommendQuery,
)
from app.services.build_rows import BuildRow, build_rows
from app.services.engine_runs import catalog_estimate, simple_workload
from app.services.estimate_answers import figures, workload_out
from app.services.listing import sort_rows
from app.services.model_profiles import ModelProfileRow, find_model_profile
from app.services.recommend_slo import recommend_at_slo

PARETO_AXES = ["price_usd (lower is better)", "decode_tokens_per_s (higher is better)"]


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


def _too_slow(query: RecommendQuery, f: FiguresOut) -> bool:
    return (
        query.min_decode_tokens_per_s is not None
        and (f.decode_tokens_per_s or 0.0) < query.min_decode_tokens_per_s
    )


def _unpriced(query: RecommendQuery, row: BuildRow) -> bool:
    return query.max_price_usd is not None and row.list_item.price_usd is None


def _over_price(query: RecommendQuery, row: BuildRow) -> bool:
    return (
        query.max_price_usd is not None
        and row.list_item.price_usd is not None
        and row.list_item.price_usd > query.max_price_usd
    )


def _passes(query: RecommendQuery, row: BuildRow, f: FiguresOut) -> bool:
    return not (_too_slow(query, f) or _unpriced(query, row) or _over_price(query, row))


def _fitting(
    snap: Snapshot,
    rows: Sequence[BuildRow],
    model: ModelProfileRow,
    workload: Workload,
    costs: CostAssumptions,
) -> list[tuple[BuildRow, FiguresOut]]:
    out = []
    for row in rows:
        est = catalog_estimate(snap, build=row, model=model, workload=workload, costs=costs)
        if est.fits:
            out.append((row, figures(est)))
    return out


def _miss(row: BuildRow, f: FiguresOut) -> RecommendMiss:
    return RecommendMiss.model_construct(build=row.list_item, **dict(f))


def lower_precisions(precision: str) -> list[str]:
    """Precisions with fewer bits per weight than `precision`, most bits first."""
    asked = PRECISIONS[precision]
    bits = asked.bits_per_weight
    # MLX's format is MLX's alone: a way out only for someone already using it.
    lower = [
        p
        for p in PRECISIONS.values()
        if p.bits_per_weight < bits and (p.family != "mlx" or asked.family == "mlx")
    ]
    return [p.name for p in sorted(lower, key=lambda p: -p.bits_per_weight)]


def recommend(session: Session, *, query: RecommendQuery, costs: CostAssumptions) -> RecommendOut:
    """The builds that run the model, ranked, with the cost/speed Pareto front marked."""
    snap = snapshot(session)
    model = find_model_profile(snap, query.model, field="model")
    workload = simple_workload(
        precision=query.precision,
        context_tokens=query.context_tokens,
        batch=query.batch,
        runtime=query.runtime,
        parallelism=query.parallelism,
        offload=query.offload,
    )

    def compute() -> RecommendOut:
        rows = build_rows(snap).rows
        fitting = _fitting(snap, rows, model, workload, costs)
        kept = [(row, f) for row, f in fitting if _passes(query, row, f)]
        field = query.sort.lstrip("-")
        descending = query.sort.startswith("-")

        def value(pair: tuple[BuildRow, FiguresOut]) -> Any:
            row, f = pair
            return row.list_item.price_usd if field == "price_usd" else getattr(f, field)

        ranked = sort_rows(kept, value, descending=descending, tiebreak=lambda p: p[0].slug)
        front = pareto_front([(r.list_item.price_usd, f.decode_tokens_per_s) for r, f in ranked])
        # Trusted values (catalog rows, engine figures): the models are built without
        # re-validation; the API serialises them as declared.
        items = [
            RecommendItem.model_construct(
                rank=i + 1, build=row.list_item, **dict(f), pareto=on_front
            )
            for i, ((row, f), on_front) in enumerate(zip(ranked, front, strict=True))
        ]
        return RecommendOut.model_construct(
            model=RecommendModel.model_construct(
                slug=model.slug,
                name=model.name,
                params_total=model.params_total,
                params_active=model.list_item.params_active,
                rule_of_thumb_gb=model.rule_of_thumb_gb(query.precision),
            ),
            workload=workload_out(workload).model_dump(),
            sort=query.sort,
            pareto_axes=list(PARETO_AXES),
            items=items,
            considered=len(rows),
            fitting=len(fitting),
            excluded=RecommendExcluded.model_construct(
                does_not_fit=len(rows) - len(fitting),
                too_slow=sum(_too_slow(query, f) for _row, f in fitting),
                over_max_price=sum(_over_price(query, row) for row, _f in fitting),
                unpriced=sum(_unpriced(query, row) for row, _f in fitting),
            ),
            nearest_misses=_nearest_misses(rows, fitting, len(kept)),
            at_slo=recommend_at_slo(
                snap,
                query=query,
                model=model,
                workload=workload,
                rows=[row for row, _f in ranked],
                costs=costs,
            )
            if query.has_slo
            else None,
        )

    def _nearest_misses(
        rows: Sequence[BuildRow], fitting: list[tuple[BuildRow, FiguresOut]], passing: int
    ) -> NearestMisses:
        only_slow = [
            (row, f)
            for row, f in fitting
            if _too_slow(query, f)
            and not _over_price(query, row)
            and not _unpriced(query, row)
            and row.list_item.price_usd is not None
        ]
        only_pricey = [
            (row, f) for row, f in fitting if _over_price(query, row) and not _too_slow(query, f)
        ]
        cheapest = min(only_slow, key=lambda p: (p[0].list_item.price_usd, p[0].slug), default=None)
        fastest = min(
            only_pricey,
            key=lambda p: (-(p[1].decode_tokens_per_s or 0.0), p[0].slug),
            default=None,
        )
        return NearestMisses.model_construct(
            cheapest_too_slow=_miss(*cheapest) if cheapest else None,
            fastest_too_expensive=_miss(*fastest) if fastest else None,
            precision_that_fits=(
                _precision_that_fits(rows, passing) if passing < SHORT_ANSWER else None
            ),
        )

    def _precision_that_fits(
        rows: Sequence[BuildRow], passing: int
    ) -> PrecisionThatFits | None:
        for precision in lower_precisions(query.precision):
            lower = simple_workload(
                precision=precision,
                context_tokens=query.context_tokens,
                batch=query.batch,
                runtime=query.runtime,
                parallelism=query.parallelism,
                offload=query.offload,
            )
            try:
                fitting = _fitting(snap, rows, model, lower, costs)
            except DomainError:
                continue  # a precision the chosen runtime cannot run is no way out
            builds = sum(_passes(query, row, f) for row, f in fitting)
            if builds > passing:
                return PrecisionThatFits.model_construct(
                    precision=precision, fitting=len(fitting), passing=builds
                )
        return None

    return snap.memo(("recommend", query.model_dump_json(), costs), compute)
