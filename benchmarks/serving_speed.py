"""Serving speed: whole serving curves, and an SLO search over 1,000 builds.

Times are process CPU time (time.process_time), best of several runs; pin to one core with
`taskset -c 1` for steadier figures. The baseline, plain engine estimates of the same builds and
workloads, is timed in the same run: a curve costs about (points + 1) estimates, so the ratio
says whether the serving layer adds anything beyond them. Inputs vary from call to call (builds,
prompt and output lengths, precisions), so the figures time the engine, not its memo of inputs.

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
# What users vary between serving questions: prompt and output lengths and the number format.
CASES = (
    (WORKLOAD, SERVING),
    (Workload(precision="bf16"), ServingWorkload(input_tokens=4096, output_tokens=512)),
    (Workload(precision="int4", runtime="vllm"),
     ServingWorkload(input_tokens=512, output_tokens=256)),
    (Workload(precision="fp8", kv_cache_precision="fp8"),
     ServingWorkload(input_tokens=2048, output_tokens=2048)),
    (Workload(precision="nvfp4", runtime="trt-llm"),
     ServingWorkload(input_tokens=8192, output_tokens=1024)),
)


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
    # 8-GPU NVSwitch nodes (every 4th build from the second), each with a different card.
    nodes = builds[1::4][:40]
    # Coprime strides (40 nodes, 5 cases): no two consecutive calls share their inputs.
    cases = [(nodes[i % len(nodes)], *CASES[i % len(CASES)]) for i in range(200)]
    bases = [(b, serving_base_workload(w, s)) for b, w, s in cases]
    points = sum(len(serving_curve(b, MODEL, w, s).curve) for b, w, s in cases[:20]) / 20
    for b, w in bases[:50]:  # warm up
        estimate(b, MODEL, w)

    runs = 5
    t_estimate = best_of(runs, lambda: [estimate(b, MODEL, w) for b, w in bases]) / len(bases)
    some = cases[:40]
    t_curve = best_of(runs, lambda: [serving_curve(b, MODEL, w, s) for b, w, s in some]) / len(some)
    searches = [(b, *CASES[i % len(CASES)]) for i, b in enumerate(builds)]
    t_search = best_of(3, lambda: [best_at_slo(b, MODEL, w, s, SLO) for b, w, s in searches])
    found = sum(best_at_slo(b, MODEL, w, s, SLO) is not None for b, w, s in searches)

    print(f"baseline: one estimate of an 8-GPU node, {len(nodes)} nodes x {len(CASES)} "
          f"workloads (best of {runs}): {t_estimate * 1e6:,.0f} µs")
    print(f"one whole curve, {points:.0f} points on average, plan as the engine chose "
          f"(best of {runs}): {t_curve * 1e3:.2f} ms = {t_curve / t_estimate:.1f} estimates")
    print(f"1,000-build SLO search with plan search, {len(CASES)} workloads (best of 3): "
          f"{t_search:.2f} s ({found} builds meet the SLO) = "
          f"{t_search / t_estimate / 1000:.1f} estimates a build")
    print("targets: < 5 ms per curve and < 2 s per 1,000-build search on one core "
          "(at the engine's ~20-50 µs per estimate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
