"""What each cache layer of the API and its services buys: the cost of a call on a hit vs with
that one layer bypassed (its compute runs every time; the layers below it stay on).

In-process on a fresh seeded SQLite catalog, CPU time, best of --runs. Prints both costs and the
ratio; a layer whose ratio is near 1 buys nothing and should go. docs/architecture.md "Caches"
quotes these figures.

    python benchmarks/cache_layers.py [--runs 20]
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from seeded_catalog import seeded_catalog  # noqa: E402

from app import caching  # noqa: E402
from app.api._common import model_body  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker  # noqa: E402
from app.schemas.compare import CompareQuery  # noqa: E402
from app.schemas.estimate import EstimateRequest  # noqa: E402
from app.schemas.estimate_answer import EstimateOut  # noqa: E402
from app.schemas.listing import BuildPage, BuildQuery  # noqa: E402
from app.schemas.recommend import RecommendQuery  # noqa: E402
from app.services import builds, engine_runs  # noqa: E402
from app.services.build_rows import build_rows  # noqa: E402
from app.services.compare import compare_builds  # noqa: E402
from app.services.estimates import cost_assumptions, run_estimate  # noqa: E402
from app.services.recommend import recommend  # noqa: E402
from app.services.tiers import tier_line  # noqa: E402
from app.web import page_inputs  # noqa: E402
from app.web.pages import build_model_fits  # noqa: E402
from app.web.serving_sections import build_page_section  # noqa: E402


@contextmanager
def memo_bypassed(name: str) -> Iterator[None]:
    """Snapshot.memo computes every time for keys named `name` (first element or the key)."""
    real = caching.CatalogCache.get

    def get(self: Any, database: Hashable, version: int, key: Hashable, compute: Any) -> Any:
        head = key[0] if isinstance(key, tuple) else key
        if head == name:
            return compute()
        return real(self, database, version, key, compute)

    caching.CatalogCache.get = get  # type: ignore[method-assign]
    try:
        yield
    finally:
        caching.CatalogCache.get = real  # type: ignore[method-assign]


@contextmanager
def value_cache_bypassed(cache: caching.ValueCache) -> Iterator[None]:
    """A ValueCache that computes every time."""
    cache.get = lambda key, compute: compute()  # type: ignore[method-assign]
    try:
        yield
    finally:
        del cache.get


def cost_us(call: Callable[[], Any], runs: int) -> float:
    """Best CPU microseconds of one `call()` over `runs` runs (after one warm-up call)."""
    call()
    best = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        call()
        best = min(best, time.process_time() - t0)
    return best * 1e6


def main() -> int:
    """Print each layer's cost per call with the layer on (a hit) and bypassed, and the ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tierline-caches-") as tmp:
        url = seeded_catalog(tmp)
        engine = make_engine(url)
        session = make_sessionmaker(engine)()
        settings = Settings(database_url=url)
        costs = cost_assumptions(settings)
        snap = caching.snapshot(session)
        slugs = [row.slug for row in build_rows(snap).rows]
        everything = BuildQuery()
        pair = CompareQuery.model_validate({"builds": f"{slugs[0]},{slugs[1]}",
                                            "model": "llama-3-1-70b"})
        rec = RecommendQuery.model_validate({"model": "llama-3-1-70b"})
        catalog_one = EstimateRequest.model_validate({"build": slugs[0], "model": "deepseek-v3"})
        page = builds.list_builds(session, query=everything)
        page_json = {"items": page.items, "total": page.total, "page": 1, "per_page": 50,
                     "next_url": None}
        answer = run_estimate(session, request=catalog_one, costs=costs)
        # A desktop build: most catalog models need the serving section's search for a curve.
        desktop = "4x-rtx-4090-workstation"
        fits = build_model_fits(session, build_slug=desktop, settings=settings)

        def layer_memo(name: str) -> Callable[[], Any]:
            return lambda: memo_bypassed(name)

        rows: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("http body memo (list page bytes): BuildPage body", layer_memo("http"),
             lambda: model_body(BuildPage, page_json)),
            ("http body memo (answer bytes): estimate body", layer_memo("http"),
             lambda: model_body(EstimateOut, answer)),
            ("build rows: build_rows(snap)", layer_memo("build_rows"),
             lambda: build_rows(snap)),
            ("build list: list_builds(all)", layer_memo("build_list"),
             lambda: builds.list_builds(session, query=everything)),
            # The build list memo above it is bypassed on both sides, or it would hide this one.
            ("fitting: builds_fitting_model (list memo off)", layer_memo("fitting"),
             lambda: builds.builds_fitting_model(
                 snap, model_slug="llama-3-1-70b", precision="fp8", context_tokens=4096)),
            ("compare answer: compare_builds(2 builds, model)", layer_memo("compare"),
             lambda: compare_builds(session, query=pair, costs=costs)),
            ("recommend answer: recommend(model)", layer_memo("recommend"),
             lambda: recommend(session, query=rec, costs=costs)),
            ("tiers answer: tier_line(fp8)", layer_memo("tiers"),
             lambda: tier_line(session, precision="fp8", context_tokens=4096)),
            ("estimate answer: run_estimate(catalog)", layer_memo("estimate_answer"),
             lambda: run_estimate(session, request=catalog_one, costs=costs)),
            ("engine results: run_estimate(catalog), answer memo off",
             lambda: _both(memo_bypassed("estimate_answer"),
                           value_cache_bypassed(engine_runs.ENGINE_RESULTS)),
             lambda: run_estimate(session, request=catalog_one, costs=costs)),
            # Below them the engine results stay on: "bypassed" is the cost after an admin edit.
            ("build page fits: build_model_fits (desktop)",
             lambda: value_cache_bypassed(page_inputs.PAGE_VALUES),
             lambda: build_model_fits(session, build_slug=desktop, settings=settings)),
            ("build page serving: build_page_section (desktop)",
             lambda: value_cache_bypassed(page_inputs.PAGE_VALUES),
             lambda: build_page_section(session, settings, {}, slug=desktop, fits=fits)),
        ]
        print(f"{'layer: what a hit saves':58} {'hit us':>9} {'bypassed us':>12} {'ratio':>7}")
        for name, bypass, call in rows:
            if name.startswith("http body memo"):
                key = ("http", name)
                hit = cost_us(
                    lambda key=key, call=call: caching.CACHE.get("bench", 1, key, call), args.runs
                )
                off = cost_us(call, args.runs)
            else:
                hit = cost_us(call, args.runs)
                with bypass():
                    off = cost_us(call, args.runs)
            print(f"{name:58} {hit:9,.0f} {off:12,.0f} {off / max(hit, 1e-3):6.0f}x")
        session.close()
        engine.dispose()
    return 0


@contextmanager
def _both(first: Any, second: Any) -> Iterator[None]:
    with first, second:
        yield


if __name__ == "__main__":
    raise SystemExit(main())
