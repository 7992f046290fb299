"""The plan search: evaluate the splits the runtime would use and keep the best that fits."""

from __future__ import annotations

from .memory import Need, need_per_accel
from .plan import Options, candidate_options, check_explicit_plan
from .prepared import Prepared
from .specs import BuildSpec, ModelSpec, Workload
from .speed import DecodeModel

# Plan search objectives, stated in every answer.
OBJECTIVE_LATENCY = "lowest latency per token for one sequence"
OBJECTIVE_AGGREGATE = "highest aggregate decode throughput for {batch} concurrent sequences"
OBJECTIVE_TRAINING = "most data-parallel replicas (fewest accelerators per replica)"


class Choice:
    """The plan the search settled on."""

    __slots__ = ("fits", "tp", "pp", "dp", "need", "dm", "parts", "evaluated")

    def __init__(
        self,
        fits: bool,
        tp: int,
        pp: int,
        dp: int,
        need: Need,
        dm: DecodeModel | None,
        evaluated: int,
    ) -> None:
        self.fits, self.tp, self.pp, self.dp, self.need = fits, tp, pp, dp, need
        self.dm, self.evaluated = dm, evaluated
        self.parts: tuple[float, float, float, float, float] | None = None


def search(p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload) -> Choice:
    """Evaluate the splits the runtime would use and keep the best that fits.

    Candidates are at most (tensor-parallel sizes <= 8) x (distinct pipeline stage sizes,
    about 2 sqrt(layers)), whatever the accelerator count, so the search is bounded.
    """
    split = p.runtime.split
    n = build.accelerator_count
    memo = p.memo
    explicit_tp = workload.tensor_parallel
    explicit_pp = workload.pipeline_parallel
    if explicit_tp is not None or explicit_pp is not None:
        check_explicit_plan(build, model, workload, split)
    evaluated = 0
    options = candidate_options(
        split,
        build.accelerator_count,
        build.accelerators_per_node,
        build.pooled_domain_accelerators,
        model.num_attention_heads,
        model.num_key_value_heads,
        bool(model.kv_lora_rank),
        model.num_hidden_layers,
        workload.parallelism,
        explicit_tp,
        explicit_pp,
    )

    def first_fit(tp: int, pps: tuple[int, ...], replicas: bool) -> tuple[int, int, Need] | None:
        nonlocal evaluated
        key = ("fit", tp, pps, replicas, n)
        known = memo.get(key)
        if known is None:
            known = memo[key] = _first_fit(p, model, build, workload, tp, pps, replicas)
        evaluated += known[1]
        return known[0]

    if p.mode != "inference":
        # Training: the fewest accelerators per replica that fit (most data parallelism).
        found: tuple[int, int, int, Need] | None = None
        for tp, pps, replicas in sorted(options, key=lambda o: o[0]):
            hit = first_fit(tp, pps, replicas)
            if hit is not None and (found is None or tp * hit[0] < found[0] * found[1]):
                found = (tp, hit[0], hit[1], hit[2])
        if found is not None:
            tp, pp, dp, need = found
            return Choice(True, tp, pp, dp, need, None, evaluated)
        return _no_fit(p, model, build, workload, options, evaluated)

    # Lower bound of a decode step for a tensor-parallel size: the non-expert weights read at
    # tp x bandwidth plus the fixed per-pass costs (both in every candidate's step), so
    # candidates that cannot beat the best so far are skipped without a speed model.
    bw1 = build.accelerator.memory_bandwidth_gbs * 1e9 * p.bandwidth_efficiency
    fixed = p.runtime.fixed_s_per_step + p.fixed_pass_s
    floor_bytes = p.nonexpert_body_bytes + p.head_bytes
    best: Choice | None = None
    best_step = float("inf")
    for tp, pps, replicas in options:
        if best is not None and floor_bytes / (bw1 * tp) + fixed >= best_step:
            continue
        hit = first_fit(tp, pps, replicas)
        if hit is None:
            continue
        pp, dp, need = hit
        dm = DecodeModel(p, model, build, workload, tp, pp)
        parts = dm.step(-(-workload.batch // dp))
        if parts[0] < best_step:
            best_step = parts[0]
            best = Choice(True, tp, pp, dp, need, dm, evaluated)
            best.parts = parts
    if best is not None:
        best.evaluated = evaluated
        return best
    return _no_fit(p, model, build, workload, options, evaluated)


def _first_fit(
    p: Prepared,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    tp: int,
    pps: tuple[int, ...],
    replicas: bool,
) -> tuple[tuple[int, int, Need] | None, int]:
    """(the first pipeline size in `pps` that fits at tensor-parallel size tp, with its data
    parallelism and memory, or None; splits evaluated): from p and the accelerator count alone,
    memoised on p (Prepared.memo)."""
    n = build.accelerator_count
    usable = p.usable_per_accel
    for evaluated, pp in enumerate(pps, 1):
        dp = max(1, n // (tp * pp)) if replicas else 1
        need = need_per_accel(p, model, build, workload, tp, pp, dp)
        if need.total <= usable:
            return (pp, dp, need), evaluated
    return None, len(pps)


def objective_for(mode: str, batch: int) -> str:
    """What the search optimises for this mode and batch, in words (ParallelPlan.objective)."""
    if mode != "inference":
        return OBJECTIVE_TRAINING
    return OBJECTIVE_LATENCY if batch == 1 else OBJECTIVE_AGGREGATE.format(batch=batch)


def _no_fit(
    p: Prepared,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    options: Options,
    evaluated: int,
) -> Choice:
    """Nothing fits: report the widest split (largest tp, most stages) the runtime allows."""
    tp, pps, _ = max(options, key=lambda o: o[0] * o[1][-1])
    pp = pps[-1]
    key = ("no fit", tp, pp)
    need = p.memo.get(key)
    if need is None:
        need = p.memo[key] = need_per_accel(p, model, build, workload, tp, pp, 1)
    return Choice(False, tp, pp, 1, need, None, evaluated + 1)
