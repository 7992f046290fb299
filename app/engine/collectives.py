"""The link a tensor-parallel all-reduce runs at (docs/engine.md section 5)."""

from __future__ import annotations

from .prep import link_for
from .specs import BuildSpec


def allreduce_link(build: BuildSpec, group: int) -> tuple[float, float, str]:
    """(bandwidth bytes/s, latency s, kind) a tensor-parallel ring all-reduce of `group`
    accelerators runs at: `link_for`'s, except across nodes.

    A ring moves 2(n - 1)/n of the message over each of its edges; across nodes only the edges
    between nodes use the network, and a node's share of the ring leaves it once through its
    NICs together (NCCL runs its ring channels over every NIC of the node), whichever GPU
    sends it. So the bound is the node's whole network, not one accelerator's share of it (the
    share an all-to-all, where every GPU sends its own tokens, gets), and at most the intra-node
    link the ring also crosses."""
    bw, lat, kind = link_for(build, group)
    if group <= build.accelerators_per_node or group <= build.pooled_domain_accelerators:
        return bw, lat, kind
    intra_bw = link_for(build, 1)[0]
    return min(bw * build.accelerators_per_node, intra_bw), lat, kind
