"""Serving speed: one whole serving curve for one build, and an SLO search over 1,000 builds.

Times are process CPU time (time.process_time), best of several runs; pin to one core with
`taskset -c 1` for steadier figures. The baseline, one plain engine estimate of the same build,
is timed in the same run: a curve costs about (points + 1) estimates, so the ratio says whether
the serving layer adds anything beyond them.

Run from the repository root:  python benchmarks/serving_speed.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_speed import MODEL, catalogue  # noqa: E402

from app.engine import Workload, estimate  # noqa: E402
from app.engine.serving import (  # noqa: E402
    ServiceLevel,
    ServingWorkload,
    best_at_slo,
    serving_base_workload,
    serving_curve,
)

WORKLOAD = Workload(precision="fp8")
SERVING = ServingWorkload(input_tokens=1024, output_tokens=1024)
SLO = ServiceLevel(ttft_s_max=1.0, tokens_per_s_per_user_min=30, concurrent_users=2000)


def best_of(runs: int, work: object) -> float:
    """The least disturbed of several timings of `work()` (seconds of process time)."""
    assert callable(work)
    best = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        work()
        best = min(best, time.process_time() - t0)
    return best


def main() -> int:
    """Print the time of one curve, its baseline, and the 1,000-build SLO search."""
    builds = catalogue()
    one = builds[1]  # an 8-GPU NVSwitch node
    base = serving_base_workload(WORKLOAD, SERVING)
    curve = serving_curve(one, MODEL, WORKLOAD, SERVING)
    for b in builds[:50]:  # warm up
        estimate(b, MODEL, base)

    n, runs = 200, 5
    t_estimate = best_of(runs, lambda: [estimate(one, MODEL, base) for _ in range(n)]) / n
    t_curve = best_of(runs, lambda: [serving_curve(one, MODEL, WORKLOAD, SERVING)
                                     for _ in range(n // 10)]) / (n // 10)
    t_search = best_of(3, lambda: [best_at_slo(b, MODEL, WORKLOAD, SERVING, SLO) for b in builds])
    found = sum(best_at_slo(b, MODEL, WORKLOAD, SERVING, SLO) is not None for b in builds)

    print(f"baseline: one estimate of the 8-GPU node (best of {runs}): "
          f"{t_estimate * 1e6:,.0f} µs")
    print(f"one whole curve, {len(curve.curve)} points, plan as the engine chose "
          f"(best of {runs}): {t_curve * 1e3:.2f} ms = {t_curve / t_estimate:.1f} estimates")
    print(f"1,000-build SLO search with plan search (best of 3): {t_search:.2f} s "
          f"({found} builds meet the SLO) = {t_search / t_estimate / 1000:.1f} estimates a build")
    print("targets: < 5 ms per curve and < 2 s per 1,000-build search on one core "
          "(at the engine's ~20-50 µs per estimate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
