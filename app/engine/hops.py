"""The link a pipeline-parallel hop crosses: inside the node, the scale-up domain or the network."""

from __future__ import annotations

from .prep import link_for
from .runtime import LINK_DEFAULT_GBS, LINK_LATENCY_US
from .specs import BuildSpec


def pipeline_hop(build: BuildSpec, tp: int, pp: int) -> tuple[float, float]:
    """(bandwidth bytes/s, latency s) of one pipeline hop; hops cross nodes when stages do."""
    stage_accels = tp
    if pp > 1 and stage_accels * pp > build.accelerators_per_node:
        net = build.inter_node_link
        if stage_accels * pp <= build.pooled_domain_accelerators:
            bw, lat, _ = link_for(build, 1)
            return bw, lat
        bw_gbs = net.bandwidth_gbps / 8 if net.bandwidth_gbps else LINK_DEFAULT_GBS[net.kind]
        lat = net.latency_us if net.latency_us is not None else LINK_LATENCY_US[net.kind]
        return bw_gbs * 1e9, lat * 1e-6
    bw, lat, _ = link_for(build, 1)
    return bw, lat
