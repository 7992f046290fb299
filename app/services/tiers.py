"""The tier line: desktop -> dgx -> cluster, each build with the largest model it runs.

Contract (callers: the JSON API and the home page):
- `tier_line(session, *, precision="fp8", context_tokens=4096) -> TiersOut`: the three tiers
  in order (always all three, possibly empty), builds in each by price (unknown last, ties by
  slug), each with total and pooled memory, price and `largest_model`: the catalog model with
  the most published parameters that fits at that precision and context with one sequence (null
  when none fits), whether it needs host-RAM offload and its estimated decode speed there.
  Cached per catalog version.
"""

from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.engine import CostAssumptions
from app.models import TIERS
from app.schemas.tiers import LargestModel, TierBuild, TierGroup, TiersOut
from app.services.build_rows import BuildRow, build_rows
from app.services.engine_runs import catalog_estimate, simple_workload
from app.services.listing import sort_rows
from app.services.model_profiles import model_profile_rows

DEFAULT_TIER_PRECISION = "fp8"
# What a tier-line entry shows of the build's list item (the rest is `largest_model`).
_TIER_BUILD_FIELDS = set(TierBuild.model_fields) - {"largest_model"}


def largest_model(
    snap: Snapshot, row: BuildRow, *, precision: str, context_tokens: int
) -> LargestModel | None:
    """The biggest catalog model (published total parameters) that fits the build."""
    workload = simple_workload(precision=precision, context_tokens=context_tokens)
    costs = CostAssumptions()  # fit does not depend on costs
    models = sorted(model_profile_rows(snap).values(), key=lambda m: (-m.params_total, m.slug))
    for model in models:
        est = catalog_estimate(snap, build=row, model=model, workload=workload, costs=costs)
        if est.fits:
            return LargestModel(
                slug=model.slug,
                name=model.name,
                params_total=model.params_total,
                rule_of_thumb_gb=model.rule_of_thumb_gb(precision),
                verdict=est.verdict,
                offloaded=est.offloaded,
                decode_tokens_per_s=est.throughput.decode_tokens_per_s if est.throughput else None,
            )
    return None


def tier_line(
    session: Session, *, precision: str = DEFAULT_TIER_PRECISION, context_tokens: int = 4096
) -> TiersOut:
    """The three tiers in order with their builds."""
    snap = snapshot(session)

    def compute() -> TiersOut:
        by_tier: dict[str, list[BuildRow]] = {tier: [] for tier in TIERS}
        for row in build_rows(snap).rows:
            by_tier.setdefault(row.list_item.tier, []).append(row)
        tiers = []
        for tier in TIERS:
            ordered = sort_rows(
                by_tier[tier],
                lambda r: r.list_item.price_usd,
                descending=False,
                tiebreak=lambda r: r.slug,
            )
            builds = [
                TierBuild(
                    **row.list_item.model_dump(include=_TIER_BUILD_FIELDS),
                    largest_model=largest_model(
                        snap, row, precision=precision, context_tokens=context_tokens
                    ),
                )
                for row in ordered
            ]
            tiers.append(TierGroup.model_validate({"tier": tier, "builds": builds}))
        return TiersOut(precision=precision, context_tokens=context_tokens, tiers=tiers)

    return snap.memo(("tiers", precision, context_tokens), compute)
