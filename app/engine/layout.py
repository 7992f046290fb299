"""How the chosen split sits on the build: replicas, experts, nodes, in words."""

from __future__ import annotations

from .search import Choice
from .specs import BuildSpec, ModelSpec, Workload


def _plan_description(tp: int, pp: int, dp: int, ep: int, lps: int, build: BuildSpec) -> str:
    parts = []
    if tp > 1:
        parts.append(f"tensor parallel {tp}")
    if pp > 1:
        parts.append(f"pipeline {pp} stages of {lps} layers")
    if ep > 1:
        parts.append(f"experts spread over {ep}")
    if dp > 1:
        parts.append(f"{dp} data-parallel replicas")
    if not parts:
        return f"one {build.accelerator.name}"
    return ", ".join(parts)


def _node_usage(build: BuildSpec, group: int, replicas: int) -> tuple[int, str]:
    """(nodes used, how) for replicas of `group` accelerators each."""
    apn = build.accelerators_per_node
    if build.nodes == 1:
        return 1, "single node"
    nodes = min(build.nodes, -(-(group * replicas) // apn))
    if group > apn:
        return nodes, "spread over nodes"
    return nodes, "replicas per node"


def plan_description(
    tp: int, pp: int, active: int, ep: int, lps: int, nodes_used: int, node_usage: str,
    build: BuildSpec,
) -> str:  # fmt: skip
    """The plan in words (ParallelPlan.description), e.g. "tensor parallel 4"."""
    description = _plan_description(tp, pp, active, ep, lps, build)
    if node_usage == "spread over nodes":
        description += f", model spread over {nodes_used} nodes"
    elif node_usage == "replicas per node" and active > 1:
        description += f" on {nodes_used} nodes"
    return description


class Layout:
    """How the chosen split sits on the build: replicas, experts, nodes, in words."""

    __slots__ = ("dp", "lps", "ep", "group", "active", "nodes_used", "node_usage")

    def __init__(
        self, choice: Choice, model: ModelSpec, build: BuildSpec, workload: Workload, mode: str
    ) -> None:
        tp, pp = choice.tp, choice.pp
        self.dp = choice.dp if choice.fits else 1
        self.lps = -(-model.num_hidden_layers // pp)
        self.ep = tp if model.is_moe and tp > 1 else 1
        self.group = tp * pp
        # Replicas that hold sequences: at batch 1 one replica works and the others idle.
        self.active = min(self.dp, workload.batch) if mode == "inference" else self.dp
        self.nodes_used, self.node_usage = _node_usage(build, self.group, self.active)
