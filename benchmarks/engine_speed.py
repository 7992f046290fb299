"""Engine speed: estimates per second on one core and a 1,000-build catalogue sweep.

Times are process CPU time (time.process_time), best of several runs; pin to one core with
`taskset -c 1` for steadier figures. The baseline (a trivial frozen dataclass) is timed in the
same run, so the ratio is comparable across machines and load.

Run from the repository root:  python benchmarks/engine_speed.py
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine import (  # noqa: E402
    AcceleratorSpec,
    BuildSpec,
    InterNodeLink,
    IntraNodeLink,
    Workload,
    estimate,
    failover,
    model_spec_from_hf_config,
)
from app.engine.prepared import clear_prepared  # noqa: E402

MODEL = model_spec_from_hf_config(
    {
        "model_type": "llama",
        "num_hidden_layers": 80,
        "hidden_size": 8192,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "intermediate_size": 28672,
        "vocab_size": 128256,
    },
    name="Llama 3.1 70B",
)
WORKLOAD = Workload(precision="fp8", context_tokens=8192, batch=8)
# What users vary between requests: context, batch, precision and runtime. The per-estimate
# figure cycles through these over the catalogue's builds, so no two consecutive estimates
# have the same inputs (one build repeated would only time the engine's memo of its inputs).
WORKLOADS = (
    WORKLOAD,
    Workload(precision="fp8", context_tokens=4096, batch=1),
    Workload(precision="bf16", context_tokens=32768, batch=4),
    Workload(precision="int4", context_tokens=8192, batch=32, runtime="vllm"),
    Workload(precision="q4_k_m", context_tokens=4096, batch=1),
    Workload(precision="fp8", context_tokens=2048, batch=64, kv_cache_precision="fp8"),
    Workload(precision="nvfp4", context_tokens=16384, batch=16, runtime="trt-llm"),
)


@dataclass(frozen=True, slots=True)
class _Baseline:
    a: float
    b: float
    c: int


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def read_every_field(result: object) -> None:
    """Read every field of an engine result and of the results inside it (field names per
    class looked up once, as app/services/estimate_answers.py does)."""
    names = _FIELD_NAMES.get(type(result))
    if names is None:
        names = _FIELD_NAMES[type(result)] = tuple(f.name for f in fields(result))  # type: ignore[arg-type]
    for name in names:
        value = getattr(result, name)
        if is_dataclass(value):
            read_every_field(value)


def catalogue(n: int = 1000) -> list[BuildSpec]:
    """A synthetic catalogue: desktops, DGX-style nodes and clusters of varied accelerators."""
    builds = []
    for i in range(n):
        mem = (16, 24, 32, 48, 80, 96, 141, 192)[i % 8]
        acc = AcceleratorSpec(
            f"acc{i}",
            mem,
            500 + 37 * (i % 50),
            80 + 11 * (i % 90),
            fp8_tflops=400 + i % 300,
            tdp_w=300 + i % 500,
            price_usd=1000 + 13 * i,
        )
        shape = i % 4
        if shape == 0:
            builds.append(BuildSpec(f"b{i}", acc, 1, 1 + i % 4, IntraNodeLink("pcie", 32)))
        elif shape == 1:
            builds.append(BuildSpec(f"b{i}", acc, 1, 8, IntraNodeLink("nvswitch", 450)))
        elif shape == 2:
            builds.append(
                BuildSpec(
                    f"b{i}",
                    acc,
                    2 + i % 8,
                    8,
                    IntraNodeLink("nvswitch", 450),
                    InterNodeLink("infiniband", 3200),
                )
            )
        else:
            unified = AcceleratorSpec(
                f"soc{i}",
                64 + 64 * (i % 8),
                273 + i % 600,
                30,
                memory_kind="unified",
                price_usd=3999,
            )
            builds.append(BuildSpec(f"b{i}", unified))
    return builds


def main() -> int:
    """Print estimates per second, the baseline ratio and the sweep time."""
    builds = catalogue()
    for b in builds[:50]:  # warm up
        estimate(b, MODEL, WORKLOAD)

    # Best of several short runs: the machine is shared, and the minimum is the least disturbed.
    n, runs = 7000, 7
    # 7 workloads against 1,000 builds (coprime strides): every call differs from the last.
    cases = [(builds[i % len(builds)], WORKLOADS[i % len(WORKLOADS)]) for i in range(n)]
    best_one = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        for build, workload in cases:
            estimate(build, MODEL, workload)
        best_one = min(best_one, time.process_time() - t0)
    per_s = n / best_one

    # The same estimates with the engine's memos of per-call quantities (prepared.py: Prepared
    # and what the search and speed model keep on it) emptied before each run, so every run
    # pays for refilling them: the figure above repeats the runs and finds them filled.
    best_cold = float("inf")
    for _ in range(runs):
        clear_prepared()
        t0 = time.process_time()
        for build, workload in cases:
            estimate(build, MODEL, workload)
        best_cold = min(best_cold, time.process_time() - t0)
    cold_per_s = n / best_cold

    # The same estimates with every field read, as the API and the batch endpoint serialise
    # them: the words (verdict, findings, assumptions, plan text, launch command) are computed
    # when first read, so the figure above is what a sweep reading fit, speed and cost pays.
    best_read = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        for build, workload in cases:
            read_every_field(estimate(build, MODEL, workload))
        best_read = min(best_read, time.process_time() - t0)
    read_per_s = n / best_read

    best_base = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        for i in range(n):
            _Baseline(1.0, 2.0, i)
        best_base = min(best_base, time.process_time() - t0)
    base_per_s = n / best_base

    best = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        results = [estimate(b, MODEL, WORKLOAD) for b in builds]
        best = min(best, time.process_time() - t0)
    fits = sum(r.fits for r in results)

    print(
        f"estimates per second (one core, {len(WORKLOADS)} workloads x 1,000 builds, "
        f"best of {runs}): {per_s:,.0f}"
    )
    print(f"  with every field read, words included (as the API serialises): {read_per_s:,.0f}")
    print(f"  with the engine's memos emptied before each run: {cold_per_s:,.0f}")
    print(f"baseline: frozen slots dataclass constructions per second: {base_per_s:,.0f}")
    print(f"ratio: one estimate costs {base_per_s / per_s:,.0f} dataclass constructions")
    print(f"1,000-build sweep (best of {runs}): {best * 1000:.1f} ms ({fits} builds fit)")

    # Issue 13 item 3: the costliest batch the API accepts, 100 inline builds of 4,096 nodes x
    # 16 GPUs in training mode, each with its two failover estimates (as POST /estimate/batch).
    huge = BuildSpec(
        "4096 x 16 H100",
        AcceleratorSpec("H100", 80, 3350, 989, fp8_tflops=1979),
        4096,
        16,
        IntraNodeLink("nvswitch", 450),
        InterNodeLink("infiniband", 3200),
    )
    t0 = time.process_time()
    plans = 0
    for stage in range(100):
        w = Workload(mode="training", zero_stage=stage % 4, context_tokens=4096 + stage)
        plans += estimate(huge, MODEL, w).plan.plans_evaluated
        failover(huge, MODEL, w)
    worst = time.process_time() - t0
    print(
        f"worst-case batch (100 x 4,096 nodes x 16 GPUs, training, + failover): "
        f"{worst * 1000:.0f} ms, {plans:,} plans evaluated by the main searches"
    )
    print(
        "targets (issue 11/13): >= 50,000 estimates/s, < 20 ms per 1,000-build sweep, "
        "worst-case batch < 1 s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
