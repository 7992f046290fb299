"""Failover, computed: fit and speed after losing one accelerator and after losing one node."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .errors import EngineInputError
from .estimate import estimate
from .layout import Layout, plan_description
from .prepared import prepare
from .results import FailoverCase
from .search import search
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .validate import validate

_DEFAULT_COSTS = CostAssumptions()


def _failover_case(
    lost: str, build: BuildSpec | None, model: ModelSpec, workload: Workload, costs: CostAssumptions
) -> FailoverCase:
    if build is None:
        return FailoverCase(lost, 0, False, None, None, "nothing left to run on")
    try:
        validate(build, model, workload, costs)
        p = prepare(build, model, workload)
        choice = search(p, model, build, workload)
    except EngineInputError as exc:  # an explicit split the smaller build cannot hold
        return FailoverCase(lost, build.accelerator_count, False, None, None, exc.reason)
    if not choice.fits:
        # The verdict needs the whole memory breakdown: the full estimate says it.
        est = estimate(build, model, workload, costs)
        return FailoverCase(lost, build.accelerator_count, False, None, None, est.verdict)
    # A case reads only the fit, the decode rate and the plan's description, so it stops after
    # the plan search (which computed the decode step) instead of running the whole estimate:
    # the same figures as estimate()'s throughput (per sequence = 1 / step, aggregate = per
    # sequence x batch), without prefill, costs, findings and texts nobody reads.
    per_seq: float | None = None
    aggregate: float | None = None
    if p.mode == "inference" and choice.parts is not None:
        per_seq = 1.0 / choice.parts[0]
        aggregate = per_seq * workload.batch
    lay = Layout(choice, model, build, workload, p.mode)
    plan = plan_description(
        choice.tp, choice.pp, lay.active, lay.ep, lay.lps, lay.nodes_used, lay.node_usage, build
    )
    return FailoverCase(lost, build.accelerator_count, True, per_seq, aggregate, plan)


def failover(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions = _DEFAULT_COSTS,
) -> tuple[FailoverCase, ...]:
    """Fit and speed after losing one accelerator, and after losing one node (N-1).

    In a multi-node build a failed accelerator takes its node's share of the split with it
    (tensor-parallel groups do not re-form over a partial node), so both cases run on N-1
    nodes; in one node the runtime restarts on the remaining cards.
    """
    cases = []
    if build.nodes > 1:
        smaller: BuildSpec | None = replace(build, nodes=build.nodes - 1)
        # Both losses leave the same N-1 nodes: one search answers both (only `lost` differs).
        case = _failover_case("one accelerator", smaller, model, workload, costs)
        return case, replace(case, lost="one node")
    apn = build.accelerators_per_node
    smaller = None
    if apn > 1:
        changes: dict[str, Any] = {
            "accelerators_per_node": apn - 1,
            "scale_up_domain_accelerators": None
            if build.scale_up_domain_accelerators is None
            else min(build.scale_up_domain_accelerators, apn - 1),
        }
        if build.groups:
            # A mixed node loses one card of its last group (the groups must keep summing up).
            *rest, last = build.groups
            left = (*rest, replace(last, count_per_node=last.count_per_node - 1))
            left = tuple(g for g in left if g.count_per_node > 0)
            changes.update(groups=left, accelerator=left[0].accelerator)
        smaller = replace(build, **changes)  # one copy of the build, not two
    cases.append(_failover_case("one accelerator", smaller, model, workload, costs))
    return tuple(cases)
