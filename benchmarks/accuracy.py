"""Compare the engine's predictions with the published measurements of seed_data/.

Run from the repository root:  python benchmarks/accuracy.py [--rows] [--seed-dir DIR]

Seeds a scratch SQLite catalog from seed_data/ (or DIR) through `tierline seed`'s import path,
then prints what the /accuracy page shows, from the same service (app/services/accuracy.py):
per metric x runtime x device class, the rows and the median / 90th-percentile absolute
relative error of the engine next to a naive roofline on the same rows, the pooled figures per
metric, fit-fact agreement and the worst misses. `--rows` prints every row as well.

These errors are in-sample for the rows benchmarks/calibrate.py fitted the constants on;
`--cross-validate` adds the leave-one-source-out table (constants refitted without each source,
evaluated on it; see docs/engine.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.caching import Snapshot, snapshot  # noqa: E402
from app.db import make_engine, make_sessionmaker  # noqa: E402
from app.migrate import upgrade_to_head  # noqa: E402
from app.services.accuracy import accuracy_report, measurement_cases  # noqa: E402
from app.services.catalog import import_document, load_seed_directory  # noqa: E402


def _pct(value: float | None) -> str:
    return "     -" if value is None else f"{value:6.1%}"


def print_table(title: str, groups: list[dict]) -> None:
    print(title)
    print(
        f"{'group':62} {'rows':>4}  {'engine median':>13} {'p90':>7}  "
        f"{'roofline median':>15} {'p90':>7}  better"
    )
    for g in groups:
        if g["fit_agreeing"] is not None:
            engine = f"{g['fit_agreeing']}/{g['rows']} agree"
            naive = f"{g['naive_roofline_fit_agreeing']}/{g['rows']} agree"
            figures = f"{engine:>21}  {naive:>23}"
        else:
            e, n = g["engine"], g["naive_roofline"]
            figures = (
                f"{_pct(e['median_error']):>13} {_pct(e['p90_error']):>7}  "
                f"{_pct(n['median_error']):>15} {_pct(n['p90_error']):>7}"
            )
        better = {True: "yes", False: "NO", None: "-"}[g["engine_better"]]
        print(f"{g['label'][:62]:62} {g['rows']:>4}  {figures}  {better}")
    print()


class SeedError(Exception):
    """The seed directory does not import (the first errors are in the message)."""


@contextmanager
def seeded_snapshot(seed_dir: Path) -> Iterator[Snapshot]:
    """A catalog snapshot of `seed_dir`, imported into a scratch SQLite database through
    `tierline seed`'s path (also used by benchmarks/calibrate.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'accuracy.db'}"
        upgrade_to_head(url)
        engine = make_engine(url)
        try:
            with make_sessionmaker(engine)() as session:
                result = import_document(
                    session, load_seed_directory(seed_dir), actor="benchmarks/accuracy.py"
                )
                if not result.ok:
                    raise SeedError("; ".join(str(e.as_dict()) for e in result.errors[:20]))
                yield snapshot(session)
        finally:
            engine.dispose()


def main() -> int:
    """Seed a scratch catalog, print the accuracy tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-dir", type=Path, default=ROOT / "seed_data")
    parser.add_argument("--rows", action="store_true", help="print every row too")
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="also print the leave-one-source-out table of benchmarks/calibrate.py (minutes)",
    )
    args = parser.parse_args()
    try:
        with seeded_snapshot(args.seed_dir) as snap:
            report = accuracy_report(snap)
            if args.cross_validate:
                from calibrate import cross_validated_summary

                cv_overall, cv_groups = cross_validated_summary(measurement_cases(snap).cases)
    except SeedError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(
        f"{report['measurements']} measurements from {report['sources']} sources; "
        f"{report['predicted']} predicted (from {report['predicted_sources']} sources)\n"
    )
    print_table("By metric (all runtimes and device classes)", report["overall"])
    print_table("By metric x runtime x device class", report["groups"])
    if args.cross_validate:
        print_table("Leave-one-source-out, by metric (fitted constants)", cv_overall)
        print_table("Leave-one-source-out, by metric x runtime x device class", cv_groups)
    print("Worst misses")
    for r in report["worst_misses"]:
        predicted = "none" if r["predicted"] is None else format(r["predicted"], ".4g")
        print(
            f"  {r['error']:7.1%}  {r['slug'][:60]:60} measured {r['measured']:.4g} "
            f"predicted {predicted}  {r['source_url']}"
        )
    if report["skipped"]:
        print(f"\nNot predicted: {len(report['skipped'])}")
        reasons: dict[str, int] = {}
        for s in report["skipped"]:
            reasons[s["reason"]] = reasons.get(s["reason"], 0) + 1
        for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print(f"  {count:4}  {reason}")
    if args.rows:
        print()
        for r in report["rows"]:
            shown = "-" if r["error"] is None else f"{r['error']:.1%}"
            print(
                f"{r['slug'][:60]:60} {r['metric']:26} measured {r['measured']!s:>10} "
                f"predicted {r['predicted']!s:>22} error {shown:>7} agrees {r['agrees']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
