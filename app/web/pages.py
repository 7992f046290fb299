"""Page-only aggregation: the provenance every page's footer shows.

Everything else a page shows comes from the same services as its JSON twin; this module only
holds what a page needs and no API endpoint returns.
"""

from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.caching import snapshot
from app.config import Settings
from app.engine import PRECISIONS, CostAssumptions
from app.engine.cost import build_price_usd
from app.formatting import precision_label
from app.models import Accelerator, Build, ModelProfile
from app.schemas.compare import CompareOut
from app.schemas.model_profile import ModelListItem
from app.schemas.recommend import ModelFitOut
from app.services.build_rows import find_build, pooled_memory_gb
from app.services.estimates import cost_assumptions, model_fits_for_build
from app.web.page_inputs import build_digest, by_inputs, models_digest


@dataclass(frozen=True)
class Provenance:
    """Where the catalog's numbers come from and how fresh they are."""

    catalog_version: int
    latest_as_of: date | None
    builds: int
    accelerators: int
    models: int


def _latest(*dates: date | None) -> date | None:
    present = [d for d in dates if d is not None]
    return max(present) if present else None


def catalog_provenance(session: Session) -> Provenance:
    """Record counts and the latest as-of date in the catalog, cached per catalog version."""
    snap = snapshot(session)

    def load() -> Provenance:
        dates: list[date | None] = []
        counts: list[int] = []
        for orm in (Build, Accelerator, ModelProfile):
            count, latest = session.execute(select(func.count(orm.id), func.max(orm.as_of))).one()
            counts.append(int(count or 0))
            dates.append(latest)
        for column in (Build.price_as_of, Accelerator.price_as_of):
            dates.append(session.scalar(select(func.max(column))))
        return Provenance(
            catalog_version=snap.version,
            latest_as_of=_latest(*dates),
            builds=counts[0],
            accelerators=counts[1],
            models=counts[2],
        )

    return snap.memo(("pages", "provenance"), load)


@dataclass(frozen=True)
class FilterOptions:
    """Choices for the pages' filter forms, drawn from the catalog."""

    vendors: tuple[str, ...]
    builds: tuple[tuple[str, str], ...]  # (slug, name), by name
    models: tuple[tuple[str, str], ...]  # (slug, name), by name
    accelerators: tuple[tuple[str, str], ...]  # (slug, name), by name


def precision_options() -> list[tuple[str, str]]:
    """Weight precisions for select boxes, in the engine's order."""
    return [(name, precision_label(name)) for name in PRECISIONS]


def filter_options(session: Session) -> FilterOptions:
    """Vendors, builds, models and accelerators for select boxes (cached per catalog version)."""
    from app.services.accelerators import accelerator_rows
    from app.services.build_rows import build_rows
    from app.services.model_profiles import model_profile_rows

    snap = snapshot(session)

    def load() -> FilterOptions:
        builds = build_rows(snap).rows
        models = model_profile_rows(snap).values()
        accelerators = accelerator_rows(snap)
        return FilterOptions(
            vendors=tuple(sorted({r.vendor for r in builds}, key=str.casefold)),
            builds=tuple(
                sorted(((r.slug, r.list_item.name) for r in builds), key=lambda p: p[1].casefold())
            ),
            models=tuple(sorted(((r.slug, r.name) for r in models), key=lambda p: p[1].casefold())),
            accelerators=tuple(
                sorted(
                    ((r.slug, r.list_item.name) for r in accelerators.values()),
                    key=lambda p: p[1].casefold(),
                )
            ),
        )

    return snap.memo(("pages", "filter_options"), load)


# Precisions the build page tries for each model, best quality first: the first that fits on
# the cards is the one shown ("runs at BF16" / "needs FP8" / "only at INT4"); a model that fits
# on the cards at none of them is shown at the last, with weights in host RAM.
BUILD_PAGE_PRECISIONS = ("bf16", "fp8", "int4")
BUILD_PAGE_CONTEXT_TOKENS = 4096


@dataclass(frozen=True)
class ModelFit:
    """One catalog model on one build at the best precision that fits (or the last tried)."""

    model: ModelListItem
    precision: str
    figures: ModelFitOut


@dataclass(frozen=True)
class BuildModelFits:
    """What a build runs: each catalog model at its best fitting precision."""

    build_slug: str
    pooled_memory_gb: float
    usd_per_gb: float | None
    context_tokens: int
    precisions: tuple[str, ...]
    runtime: str | None  # None = the build's default runtime
    parallelism: str
    runs: tuple[ModelFit, ...]  # fits, largest model first
    does_not_run: tuple[ModelFit, ...]  # fits at no precision tried, largest first
    accelerator_name: str
    accelerator_price_usd: float | None
    # The engine prices an unpriced build as accelerators x unit price (engine.build_price_usd);
    # the page must say so wherever a cost figure rests on it. None when the build has a price.
    derived_price_usd: float | None


def build_model_fits(
    session: Session,
    *,
    build_slug: str,
    settings: Settings | None = None,
    context_tokens: int = BUILD_PAGE_CONTEXT_TOKENS,
    precisions: tuple[str, ...] = BUILD_PAGE_PRECISIONS,
    runtime: str | None = None,
    parallelism: str = "auto",
) -> BuildModelFits:
    """Every catalog model on one build at the best precision that fits (engine via the
    estimates service, so the figures are those of the API), raising NotFound for the build.

    Memoised by its inputs (app.web.page_inputs): an edit to another build keeps it."""
    snap = snapshot(session)
    costs = cost_assumptions(settings)
    key = ("build_model_fits", build_digest(snap, build_slug), models_digest(snap),
           context_tokens, precisions, runtime, parallelism, costs)
    return by_inputs(key, lambda: _build_model_fits(
        session, build_slug=build_slug, costs=costs, context_tokens=context_tokens,
        precisions=precisions, runtime=runtime, parallelism=parallelism))


def _build_model_fits(
    session: Session,
    *,
    build_slug: str,
    costs: CostAssumptions,
    context_tokens: int,
    precisions: tuple[str, ...],
    runtime: str | None,
    parallelism: str,
) -> BuildModelFits:
    row = find_build(snapshot(session), build_slug)
    per_precision = {
        p: model_fits_for_build(
            session,
            slug=build_slug,
            precision=p,
            context_tokens=context_tokens,
            costs=costs,
            runtime=runtime,
            parallelism=parallelism,
        )
        for p in precisions
    }
    runs: list[ModelFit] = []
    misses: list[ModelFit] = []
    for index, first in enumerate(per_precision[precisions[0]]):
        last = per_precision[precisions[-1]][index]
        on_cards = [p for p in precisions if per_precision[p][index].fits
                    and not per_precision[p][index].offloaded]
        if on_cards:
            chosen = per_precision[on_cards[0]][index]
            runs.append(ModelFit(model=chosen.model, precision=on_cards[0], figures=chosen))
        elif last.fits:
            # Nothing fits on the cards alone: what people run from host RAM is the smallest
            # format (the fewest bytes to read from RAM each token), not BF16 at a crawl.
            runs.append(ModelFit(model=last.model, precision=precisions[-1], figures=last))
        else:
            misses.append(ModelFit(model=first.model, precision=precisions[-1], figures=last))
    price = row.list_item.price_usd
    total = row.list_item.total_memory_gb
    return BuildModelFits(
        build_slug=build_slug,
        pooled_memory_gb=pooled_memory_gb(row.spec),
        usd_per_gb=price / total if price is not None and total else None,
        context_tokens=context_tokens,
        precisions=precisions,
        runtime=runtime,
        parallelism=parallelism,
        runs=tuple(runs),
        does_not_run=tuple(misses),
        accelerator_name=row.list_item.accelerator_name,
        accelerator_price_usd=row.spec.accelerator.price_usd,
        derived_price_usd=build_price_usd(row.spec) if price is None else None,
    )


# The tier-line story: one model too big for a desktop, the desktop that cannot hold it and the
# cluster that can (slugs only: every figure comes from the catalog and the engine).
STORY_MODEL = "deepseek-v3"
STORY_PRECISION = "fp8"
STORY_BUILDS = ("4x-rtx-4090-workstation", "dgx-h200", "2x-dgx-h200-cluster")


@dataclass(frozen=True)
class TierStory:
    """The home page's story in numbers, with the compare table of the story builds."""

    model: dict[str, Any]  # slug, name, params_total, rule_of_thumb_gb, precision
    desktop: dict[str, Any] | None  # build list item + verdict/fits
    cluster: dict[str, Any] | None
    comparison: CompareOut | None  # the story builds present


def tier_story(session: Session, *, settings: Settings | None = None) -> TierStory | None:
    """The story, computed from the catalog and the engine; None without a model to tell it."""
    from app.schemas.compare import CompareQuery
    from app.services.build_rows import build_rows
    from app.services.compare import compare_builds
    from app.services.model_profiles import model_profile_rows

    snap = snapshot(session)
    models = model_profile_rows(snap)
    if not models:
        return None
    model = models.get(STORY_MODEL) or max(models.values(), key=lambda m: (m.params_total, m.slug))
    present = [slug for slug in STORY_BUILDS if slug in build_rows(snap).by_slug]
    comparison = None
    verdicts: dict[str, tuple[bool, str]] = {}
    if len(present) >= 2:
        query = CompareQuery(builds=",".join(present), model=model.slug, precision=STORY_PRECISION)
        comparison = compare_builds(session, query=query, costs=cost_assumptions(settings))
        run = next(r for r in comparison.rows if r.key == "run_model")
        for index, slug in enumerate(present):
            verdicts[slug] = (bool(run.values[index]), run.display[index])

    def story_build(slug: str) -> dict[str, Any] | None:
        row = build_rows(snap).by_slug.get(slug)
        if row is None:
            return None
        fits, verdict = verdicts.get(slug, (None, None))
        return {
            **row.list_item.model_dump(),
            "accelerator_memory_gb": row.spec.accelerator.memory_gb,
            "nodes": row.spec.nodes,
            "fits": fits,
            "verdict": verdict,
        }

    return TierStory(
        model={
            "slug": model.slug,
            "name": model.name,
            "params_total": model.params_total,
            "precision": STORY_PRECISION,
            "rule_of_thumb_gb": model.rule_of_thumb_gb(STORY_PRECISION),
        },
        desktop=story_build(STORY_BUILDS[0]),
        cluster=story_build(STORY_BUILDS[-1]),
        comparison=comparison,
    )
